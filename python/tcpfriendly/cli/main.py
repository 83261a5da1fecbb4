"""The `tcpf` root command: ``app`` with ``tcpf run`` and ``tcpf algorithms``; the sub-apps
``tcpf model`` (:mod:`.model`), ``tcpf sweep`` (:mod:`.sweep`), ``tcpf ns2`` (:mod:`.ns2`) and,
in a source tree, ``tcpf bench`` are attached below. The error policy (exit codes, one-line
errors) is :mod:`.errors`, applied by :func:`main`.
"""

import importlib.util
import json
import os
import sys
from typing import Any, Dict, List, Optional

import typer

from ..errors import ScenarioError, one_line
from . import evaluate as evaluate_cli
from . import model as model_cli
from . import ns2 as ns2_cli
from . import plot as plot_cli
from . import report as report_cli
from . import reproduce as reproduce_cli
from . import sweep as sweep_cli
from .errors import run_app

app = typer.Typer(
    name="tcpf",
    help=(
        "Simulate TCP-friendly congestion control on any topology (a [bottleneck] dumbbell, or "
        "[[links]] and [[nodes]] for a parking lot or any graph), evaluate a scheme, reproduce "
        "the papers and report on the results.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf run examples/quickstart.toml                 summary table per flow group\n"
        "  tcpf run examples/quickstart.toml --json          the full result as JSON\n"
        "  tcpf run examples/quickstart.toml --seed 2 --out results/\n"
        "  tcpf algorithms                                   every algorithm and its parameters\n"
        "  tcpf algorithms gaimd                             one algorithm in detail\n\n"
        "Scenario files are TOML; see examples/*.toml and README.md. beta is always the "
        "fraction of the window REMOVED on a loss event; keep = 1 - beta is accepted too."
    ),
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
) -> None:
    if version:
        from ..version import __version__

        typer.echo(f"tcpf {__version__}")
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


# ----- tcpf run ---------------------------------------------------------------------------------
@app.command(
    "run",
    short_help="Run a scenario file; print a summary, JSON, or write CSVs.",
    help=(
        "Run the scenario in FILE.toml and print a summary (or the JSON result).\n\n"
        "The summary has one row per [[flows]] group (mean/min/max goodput, share of the "
        "fair share, loss-event rate, RTT, cwnd, retransmissions, timeouts) and one row per "
        "link. --json prints the engine's JSON unchanged: the same scenario and seed give "
        "byte-identical output on any machine.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf run examples/quickstart.toml\n"
        "  tcpf run examples/jin2001-red-32.toml --seed 3 --json > r.json\n"
        "  tcpf run examples/quickstart.toml --out out/q --timeseries 0.5\n"
        "      writes out/q/result.json, flows.csv, links.csv,\n"
        "      timeseries_flows.csv and timeseries_links.csv"
    ),
)
def run_command(
    file: str = typer.Argument(..., metavar="FILE.toml", help="Scenario file (TOML)."),
    seed: Optional[int] = typer.Option(
        None, "--seed", metavar="N", help="Random seed; overrides the file's `seed`."),
    as_json: bool = typer.Option(
        False, "--json", help="Print the result as one JSON object instead of tables."),
    out: Optional[str] = typer.Option(
        None, "--out", metavar="DIR",
        help="Also write result.json, flows.csv and links.csv (and time-series CSVs) into "
             "DIR, creating it. Nothing is written if the run fails. Each file is written to a "
             "temporary name and renamed; DIR must be new, empty or this same run's (same "
             "scenario and seed) unless --force."),
    force: bool = typer.Option(
        False, "--force",
        help="Write into an --out DIR that holds other files or another run's output "
             "(replacing our files there; a symbolic link is replaced, never followed)."),
    timeseries: Optional[float] = typer.Option(
        None, "--timeseries", metavar="SECONDS",
        help="Record per-flow cwnd/rate/RTT and per-link queue samples every SECONDS "
             "(included in --json and written as CSV with --out)."),
    controller: Optional[List[str]] = typer.Option(
        None, "--controller", metavar="NAME=MODULE:CLASS",
        help="A window controller written in Python (a tcpfriendly.Controller subclass) that "
             "flow groups use as `algorithm = \"NAME\"`; MODULE is an importable module or a "
             ".py file. Repeat for several. Example: --controller halving=mylaws.py:Halving"),
    plot: Optional[str] = typer.Option(
        None, "--plot", metavar="DIR",
        help="Also draw the run's figures (cwnd, rate, RTT, queue, goodput; PNG + SVG) into DIR; "
             "records a time series (every 0.1 s unless --timeseries or the file sets one) and the "
             "loss log. DIR follows `tcpf plot -o DIR` and is not the --out directory. See "
             "`tcpf plot --help`."),
    trace: Optional[str] = typer.Option(
        None, "--trace", metavar="FILE",
        help="Also write a packet trace to FILE: pcap (tshark, Wireshark, tcptrace) if FILE ends "
             "in .pcap, else ns-2 trace lines (+ - r d); the scenario's [trace] table, if any, "
             "gives the format, flows, links and max_bytes. See docs/see-it.md."),
) -> None:
    from ..results import run
    from ..scenario import Scenario, check_seed

    check_seed(seed, "--seed")
    if timeseries is not None and not timeseries > 0:
        raise ScenarioError(f"--timeseries: must be a positive number of seconds, got {timeseries:g}")
    if out is not None and os.path.lexists(out) and not os.path.isdir(out):
        raise ScenarioError(f"--out: {out} exists and is not a directory", field="--out")
    scenario = Scenario.from_toml(file)
    if plot is not None:
        from .plot import for_run

        scenario, timeseries = for_run(scenario, timeseries, plot, out)
    if trace is not None:
        scenario = _with_trace(scenario, trace)
    controllers = _load_controllers(controller or [])
    claimed = None
    if out is not None:  # refuse a directory holding another output before running
        claimed = _claim_out(out, scenario, seed, timeseries, list(controllers), force)
    result = run(scenario, seed=seed, timeseries=timeseries, controllers=controllers)
    for warning in result.raw.get("warnings", []):
        sys.stderr.write(f"warning: {one_line(warning)}\n")
    written: List[str] = result.write_claimed(claimed) if claimed is not None else []
    if result.trace is not None and result.scenario.get("trace", {}).get("file"):
        written.append(result.scenario["trace"]["file"])
    if plot is not None:
        from .. import plot as plots
        from .errors import as_flags

        with as_flags({"directory": "--plot"}):
            written += plots.write(result, plot)
    if as_json:
        sys.stdout.write(result.to_json() + "\n")
        return
    typer.echo(result.summary())
    if written:
        typer.echo("")
        typer.echo(f"wrote {', '.join(written)}")


def _with_trace(scenario, file: str):
    """`tcpf run --trace FILE`: the scenario with its [trace] table writing to FILE (the table's
    other fields kept; without a `format` the file name picks it)."""
    from ..scenario import Scenario

    if not file or os.path.isdir(file):
        raise ScenarioError.at("--trace", f"{file!r} is not a file name")
    data = scenario.to_dict()
    table = data.get("trace")
    table = dict(table) if isinstance(table, dict) else {}
    table["file"] = file
    data["trace"] = table
    return Scenario(data)


def _claim_out(out: str, scenario, seed: Optional[int], timeseries: Optional[float],
               controller_names: List[str], force: bool):
    """Check --out before the run (the identity of a run is its normalized scenario with the
    seed, as result.json records it)."""
    from ..results import claim_run_dir
    from ..scenario import _call_engine, native

    data = scenario.to_dict()
    if seed is not None:
        data["seed"] = seed
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    args = (text, controller_names) if controller_names else (text,)
    normalized = json.loads(_call_engine(native().normalize, *args))
    files = ["result.json", "flows.csv", "links.csv"]
    if timeseries is not None:
        files += ["timeseries_flows.csv", "timeseries_links.csv"]
    return claim_run_dir(out, normalized, force=force, field="--out", files=files)


def _load_controllers(specs: List[str]) -> Dict[str, type]:
    """--controller NAME=MODULE:CLASS -> {NAME: class} (the one loader, shared with
    ``tcpf evaluate``: :func:`tcpfriendly.controller.load_controllers`)."""
    from ..controller import load_controllers

    return load_controllers(specs)


# ----- tcpf algorithms --------------------------------------------------------------------------
def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _param_line(p: Dict[str, Any], detail: bool) -> str:
    unit = p.get("unit")
    text = f"    {p.get('name')} = {_fmt(p.get('default'))}"
    if unit:
        text += f" {unit}"
    if detail:
        bounds = [f"{k} {_fmt(p[k])}" for k in ("min", "max") if p.get(k) is not None]
        if bounds:
            text += f"  ({', '.join(bounds)})"
    if detail and p.get("doc"):
        text += f"  -- {p['doc']}"
    return text


def _describe(algo: Dict[str, Any], detail: bool) -> List[str]:
    head = f"{algo.get('name')}"
    if algo.get("family"):
        head += f"  ({algo['family']})"
    if algo.get("summary"):
        head += f"  {algo['summary']}"
    lines = [head]
    if algo.get("source"):
        lines.append(f"  source: {algo['source']}")
    taxonomy = algo.get("taxonomy")
    if detail and isinstance(taxonomy, dict) and taxonomy:
        lines.append("  taxonomy: " + ", ".join(f"{k}={_fmt(v)}" for k, v in taxonomy.items()))
    params = algo.get("params") or []
    keys = algo.get("keys") or []
    if params:
        lines.append("  params (name = default unit" + ("  (bounds)  -- meaning)" if detail else ")"))
        lines.extend(_param_line(p, detail) for p in params)
    elif keys and detail:
        lines.append("  params: none; the flow group's own keys set the source (name = default unit  -- meaning):")
        lines.extend(_param_line(k, detail) for k in keys)
    elif keys:
        lines.append("  params: none; keys of the flow group: " + ", ".join(str(k.get("name")) for k in keys))
    else:
        lines.append("  params: none")
    return lines


@app.command(
    "algorithms",
    short_help="List the algorithms a flow group can run: parameters, sources, ns-2 mapping.",
    help=(
        "List every algorithm a flow group can run -- window controllers, rate-based senders "
        "(TFRC, TFRCP, TEAR), UDP sources (CBR, Pareto) and aliases such as aimd and aiad -- "
        "with its family, parameters, defaults, units and source paper; with NAME, show one in "
        "detail (ranges, meaning, taxonomy).\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf algorithms\n"
        "  tcpf algorithms gaimd\n"
        "  tcpf algorithms --json"
    ),
)
def algorithms_command(
    name: Optional[str] = typer.Argument(None, metavar="NAME", help="One algorithm to describe."),
    as_json: bool = typer.Option(False, "--json", help="Print the registry as JSON."),
) -> None:
    from ..scenario import algorithms

    registry = algorithms()
    if name is not None:
        found = [a for a in registry if a.get("name") == name]
        if not found:
            known = ", ".join(str(a.get("name")) for a in registry)
            raise ScenarioError(f"NAME: unknown algorithm {name!r} (known: {known})")
        registry = found
    if as_json:
        typer.echo(json.dumps(registry[0] if name is not None else registry, indent=2))
        return
    blocks = ["\n".join(_describe(a, detail=name is not None)) for a in registry]
    typer.echo("\n\n".join(blocks))


# ----- sub-apps ---------------------------------------------------------------------------------
def _add_bench(root: typer.Typer) -> None:
    """``tcpf bench`` runs benchmarks/vs_ns2.py of the source tree (absent when installed)."""
    bench_script = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                os.pardir, "benchmarks", "vs_ns2.py")
    if not os.path.isfile(bench_script):
        return  # installed without the source tree

    @root.command(
        "bench",
        short_help="Time tcpfriendly against ns-2 and ns-3 (benchmarks/vs_ns2.py).",
        help="Run benchmarks/vs_ns2.py with the given options (see `tcpf bench --help`).",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                          "help_option_names": []},
    )
    def bench(ctx: typer.Context) -> None:
        spec = importlib.util.spec_from_file_location("tcpfriendly_bench_vs_ns2", bench_script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.argv[0] = "tcpf bench"  # argparse's prog name in usage and errors
        raise typer.Exit(module.main(list(ctx.args)) or 0)


app.add_typer(ns2_cli.app, name="ns2")  # tcpf ns2 export | compare
_add_bench(app)
app.add_typer(model_cli.app, name="model", short_help="Analytic models from the papers: rates, TCP-friendly curves, spectrum, CYRF, Illinois, Markov, Chiu-Jain.")
app.add_typer(sweep_cli.app, name="sweep")
evaluate_cli.register(app)  # tcpf evaluate ALG ...
plot_cli.register(app)  # tcpf plot RESULT
report_cli.register(app)  # tcpf report PATH
reproduce_cli.register(app)  # tcpf reproduce PAPER ...


# ----- entry point ------------------------------------------------------------------------------
def main(argv: Optional[List[str]] = None) -> None:
    """Console-script entry point (`tcpf`), with the error policy of :mod:`.errors`."""
    run_app(app, argv, "tcpf")


if __name__ == "__main__":
    main()
