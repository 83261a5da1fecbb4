"""`tcpf ns2 ...`: cross-checks against ns-2 2.35, the simulator the papers used.

    tcpf ns2 export FILE.toml [--seed N] > out.tcl
    tcpf ns2 compare FILE.toml [--seeds N] [--json]
    tcpf ns2 compare --bank [--ci] [--report validation/ns2/REPORT.md]

Exit codes follow the `tcpf` policy (cli/errors.py): 2 for bad input, including a scenario element
ns-2 cannot express (the message names it); 1 when a compared metric is out of tolerance or a
run fails; 0 otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from typing import List, Optional

import typer

from ..errors import ScenarioError
from .errors import as_flags

app = typer.Typer(
    short_help="ns-2 cross-checks: export a scenario to ns-2, compare both simulators.",
    help=(
        "Cross-check tcpfriendly against ns-2 2.35 (the simulator the papers used).\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf ns2 export examples/quickstart.toml > q.tcl && ns q.tcl\n"
        "  tcpf ns2 compare validation/ns2/gaimd-vs-sack.toml --seeds 3\n"
        "  tcpf ns2 compare --bank --ci                 the quick CI subset\n"
        "  tcpf ns2 compare --bank                      everything; writes validation/ns2/REPORT.md"
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@contextlib.contextmanager
def _ns2_algorithms():
    """An unknown algorithm in a scenario for ns-2 says what a Python controller's name there
    means: such a law runs in tcpfriendly's engine only."""
    try:
        yield
    except ScenarioError as exc:
        if re.fullmatch(r"flows\[\d+\]\.algorithm", exc.field or "") and "unknown algorithm" in str(exc):
            raise ScenarioError(f"{exc}; a Python controller (tcpf run --controller) runs in "
                                "tcpfriendly's engine only: ns-2 runs its own agents and the laws "
                                "`tcpf algorithms` maps to them", field=exc.field) from None
        raise


@app.command(
    "export",
    help=(
        "Print an ns-2 Tcl script equivalent to FILE.toml: the dumbbell or a general topology "
        "(routers, links with their rates, delays and per-direction DropTail/RED queues, static "
        "routes), Bernoulli and periodic loss, every flow with its start time, access delays, "
        "direction or path, and its controller (TCP variants and Linux modules through "
        "Agent/TCP/Linux, TFRC, CBR on/off and Pareto ON/OFF sources). Per-flow delays and start "
        "times are resolved with the seed. Run it with `ns out.tcl`: it prints one FLOW line per "
        "flow, one LINK line per router link direction that carries data and a TOTAL line "
        "(key=value pairs, parsed by `tcpfriendly.ns2.parse_output`); with TFRC flows it also "
        "writes their drops to drops.tr.\n\n"
        "Exits 2, naming the element, if the scenario uses something ns-2 cannot express "
        "(e.g. algorithm = \"simd\").\n\n"
        "\b\n"
        "Example:\n"
        "  tcpf ns2 export examples/quickstart.toml --seed 1 > q.tcl"
    ),
)
def export_command(
    file: str = typer.Argument(..., metavar="FILE.toml", help="Scenario file (TOML)."),
    seed: Optional[int] = typer.Option(
        None, "--seed", metavar="N", help="Random seed; overrides the file's `seed`."),
    out: Optional[str] = typer.Option(
        None, "--out", "-o", metavar="PATH", help="Write the script to PATH instead of stdout."),
    sample: Optional[float] = typer.Option(
        0.5, "--sample", metavar="SECONDS",
        help="Period of the Tcl sampler behind mean_cwnd/mean_srtt (0 turns it off)."),
) -> None:
    from .. import ns2
    from ..outfiles import atomic_text, check_file
    from ..scenario import Scenario, check_seed

    check_seed(seed, "--seed")
    if sample is not None and sample < 0:
        raise ScenarioError(f"--sample: must be >= 0 seconds, got {sample:g}")
    if out is not None:
        check_file(out, "--out", example="scenario.tcl")
    with _ns2_algorithms():
        expanded = Scenario.from_toml(file).expand(seed)
    script = ns2.export_tcl(expanded, sample_interval_s=sample or None)
    if out is None:
        sys.stdout.write(script)
    else:
        atomic_text(out, script, field="--out")  # whole or not at all, never through a link


@app.command(
    "compare",
    help=(
        "Run FILE.toml in tcpfriendly and in ns-2 for several seeds and print, per flow group "
        "and bottleneck link, both simulators' means side by side: mean per-flow goodput, the "
        "group's fraction of its direction's goodput, loss event rate, timeouts, utilisation, queue drops and ECN marks, with the "
        "difference and pass/fail against the tolerances stated in the validation bank "
        "(validation/ns2/bank.toml). A difference the bank records as expected, with its reason, "
        "shows as xfail. A loss event rate from fewer loss events than the bank's min_events "
        "(16) in either simulator is compared as Poisson counts instead (exact test, two-sided "
        "alpha 0.05): FAIL when the counts differ beyond that noise, else 'too few' (too few "
        "events to compare: neither pass nor fail).\n\n"
        "With --bank, run every bank scenario (--ci: the quick CI subset) and write the Markdown "
        "report (validation/ns2/REPORT.md by default for the full bank).\n\n"
        "Exit status: 0 when every metric is within tolerance (or an expected failure, or too "
        "few events to compare), 1 when "
        "any is out of tolerance, 2 for bad input (including scenario elements ns-2 lacks).\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf ns2 compare validation/ns2/bernoulli-1pct.toml --seeds 3\n"
        "  tcpf ns2 compare my.toml --json > cmp.json\n"
        "  tcpf ns2 compare --bank --ci\n"
        "  tcpf ns2 compare --bank                     regenerates validation/ns2/REPORT.md"
    ),
)
def compare_command(
    file: Optional[str] = typer.Argument(None, metavar="[FILE.toml]", help="Scenario file (TOML)."),
    seeds: Optional[int] = typer.Option(
        None, "--seeds", metavar="N",
        help="Runs per simulator (seeds s, s+1, ..., s = the file's seed); default: the bank's "
             "setting for the scenario (3)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    bank_mode: bool = typer.Option(False, "--bank", help="Run the validation bank instead of FILE."),
    ci: bool = typer.Option(False, "--ci", help="With --bank: only the quick CI subset."),
    only: Optional[List[str]] = typer.Option(
        None, "--only", metavar="NAME", help="With --bank: only this scenario (repeatable)."),
    bank_file: Optional[str] = typer.Option(
        None, "--bank-file", metavar="PATH",
        help="The bank (tolerances, scenarios, expected failures); default validation/ns2/bank.toml."),
    report: Optional[str] = typer.Option(
        None, "--report", metavar="PATH",
        help="With --bank: write the Markdown report here (default validation/ns2/REPORT.md when the "
             "whole bank runs; '-' for none)."),
    jobs: int = typer.Option(2, "--jobs", "-j", metavar="N", help="Simulations run in parallel."),
    ns_binary: str = typer.Option("ns", "--ns", metavar="PATH", help="The ns-2 binary."),
) -> None:
    from ..ns2 import compare as cmp

    if jobs < 1:
        raise ScenarioError(f"--jobs: must be at least 1, got {jobs}")
    if seeds is not None:
        with as_flags({"seeds": "--seeds"}):
            cmp.check_seeds(seeds, "seeds")
    if bank_mode and file is not None:
        raise ScenarioError("FILE.toml: give either a scenario file or --bank, not both")
    if not bank_mode and file is None:
        raise ScenarioError("FILE.toml: missing (or use --bank)")
    if not bank_mode and (ci or only or report):
        raise ScenarioError("--ci/--only/--report: only with --bank")

    if not bank_mode:
        bank_path = bank_file or cmp.default_bank_path()
        bank = cmp.load_bank(bank_path) if (bank_file or os.path.exists(bank_path)) else None
        with _ns2_algorithms():
            res = cmp.compare_scenario(file, seeds=seeds, bank=bank, workers=jobs, ns_binary=ns_binary)
        if as_json:
            typer.echo(json.dumps(cmp.json_safe(res), indent=2, allow_nan=False))
        else:
            typer.echo(cmp.format_comparison(res))
        raise typer.Exit(0 if res["passed"] else 1)

    from ..outfiles import atomic_text, check_file

    bank = cmp.load_bank(bank_file)
    if not bank.scenarios:
        raise ScenarioError.at("--bank-file", f"{bank.path} lists no [[scenarios]] to compare")
    if report is None and not ci and not only and seeds is None:
        report = os.path.join(os.path.dirname(os.path.abspath(bank.path)), "REPORT.md")
    if report and report != "-":
        check_file(report, "--report")  # now, not after the bank's minutes of simulation
    progress = None if as_json else (lambda msg: typer.echo(msg, err=True))
    result = cmp.run_bank(bank, ci_only=ci, seeds=seeds, workers=jobs, ns_binary=ns_binary,
                          only=only, progress=progress)
    if report and report != "-":
        command = "tcpf ns2 compare --bank" + (f" --bank-file {bank_file}" if bank_file else "") + \
            (" --ci" if ci else "") + "".join(f" --only {o}" for o in (only or [])) + \
            (f" --seeds {seeds}" if seeds else "")
        atomic_text(report, cmp.bank_markdown(result, command=command) + "\n", field="--report")
    if as_json:
        typer.echo(json.dumps(cmp.json_safe(result), indent=2, allow_nan=False))
    else:
        for res in result["scenarios"]:
            typer.echo(cmp.format_comparison(res))
            typer.echo("")
        n_ok = sum(1 for r in result["scenarios"] if r["passed"])
        typer.echo(f"{n_ok} of {len(result['scenarios'])} scenarios pass "
                   f"(wall {result['wall_s']:.0f} s)" + (f"; report: {report}" if report and report != "-" else ""))
    raise typer.Exit(0 if result["passed"] else 1)

