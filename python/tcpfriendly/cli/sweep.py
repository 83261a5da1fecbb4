"""`tcpf sweep ...`: parameter grids x seeds, on every local core or on a Dask cluster.

    tcpf sweep FILE.toml [--workers N] [--dask ADDRESS | --dask local] [--out DIR]
    tcpf sweep plot DIR --x AXIS --y METRIC [--hue AXIS] [--kind line|heatmap] --out FILE.png
    tcpf sweep FILE.toml --per-flow; tcpf sweep plot DIR --per-flow --x AXIS --y METRIC --out FILE.png

``tcpf sweep FILE.toml`` is short for ``tcpf sweep run FILE.toml``. Exit codes follow the
`tcpf` policy (cli/errors.py): 2 for a bad spec (before any run starts: a bad axis or point, a
grid over ``MAX_RUNS`` runs, an ``--out`` holding another output without ``--force``) or an
output file that cannot be written; 1 when any run failed (the others complete, the table and
the summary list the failed ones); 130 when interrupted (finished runs are kept: rerun to
finish).
"""

from __future__ import annotations

import os
from typing import List, Optional

import typer
from typer.core import TyperGroup

from ..errors import ScenarioError
from .errors import EXIT_INTERRUPTED, as_flags, fail


class _DefaultRunGroup(TyperGroup):
    """``tcpf sweep FILE.toml ...`` runs ``tcpf sweep run FILE.toml ...``."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run"] + list(args)
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_DefaultRunGroup,
    subcommand_metavar="FILE.toml [OPTIONS] | COMMAND [ARGS]...",
    short_help="Parameter sweeps (grids x seeds) on all cores or Dask; plots.",
    help=(
        "Run a parameter sweep: a base scenario, axes of values and seeds, on every local core "
        "or on a Dask cluster; finished runs are cached, so an interrupted sweep resumes.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml                  all cores, out/sweep-gaimd-beta\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --workers 1 --out out/b\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --dask local     a LocalCluster\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --dask tcp://scheduler:8786\n"
        "  tcpf sweep plot out/sweep-gaimd-beta --x flows[1].params.beta --y share --out share.png"
    ),
    add_completion=False,
    rich_markup_mode=None,
)


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:  # bare `tcpf sweep`: the help, exit 0
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


@app.command(
    "run",
    help=(
        "Run the sweep in FILE.toml (`tcpf sweep FILE.toml` for short).\n\n"
        "The spec names a base scenario and the axes to vary:\n\n"
        "\b\n"
        "  scenario = \"jin2001-red-32.toml\"   # relative to FILE.toml, or an inline [scenario]\n"
        "  seeds = 10                         # base_seed .. base_seed+9, or a list\n"
        "  metrics = [\"share\", \"link.utilization\"]   # default: all\n"
        "  per_flow = true                    # also DIR/flows.parquet, .csv (or --per-flow)\n"
        "  simulator = \"ns2\"                  # run every point in ns-2 instead (or --simulator)\n"
        "  [set]                              # fixed overrides\n"
        "  \"flows[1].algorithm\" = \"gaimd\"\n"
        "  [axes]                             # every combination\n"
        "  \"flows[1].params.beta\" = [0.0625, 0.125, 0.25]\n"
        "  \"bottleneck.rate\" = [\"1.5Mbps\", \"15Mbps\"]\n"
        "  [[zip]]                            # paths whose values advance together\n"
        "  \"flows[1].params.alpha\" = [0.1, 0.2]\n"
        "  \"flows[1].params.beta\" = [0.0625, 0.125]\n\n"
        "Every run is validated before any starts. Each finished run is stored under "
        "DIR/runs/ (batch files of runs, each run found by the hash of the normalized scenario, "
        "seed, tcpfriendly version and metrics version) and never recomputed; DIR/results.parquet and DIR/results.csv hold the "
        "tidy table (one row per run x flow group: axis values, seed, metrics) and "
        "DIR/sweep.json the spec, and the summary table (mean ± 95% CI over seeds per grid "
        "point and flow group) is printed; with per_flow (--per-flow) DIR/flows.parquet and "
        "DIR/flows.csv hold one row per run x flow (throughput, goodput, share, packets, loss "
        "events and rate, RTT, window; runs stored without per-flow rows are redone). Ctrl-C stops cleanly (finished runs are kept); rerunning "
        "runs only what is missing. A run that fails fails alone: its row has status=failed "
        "and the message in `error`, the summary lists it and the exit code is 1. A sweep has "
        "at most 100000 runs (points x seeds). DIR must be new, empty or this same study's "
        "(same base scenario, [set] and axis paths; more seeds or values may be added) unless "
        "--force.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --out out/beta\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --dask local --workers 2\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --processes --workers 2\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --per-flow --out out/beta\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --simulator ns2 --out out/beta-ns2\n"
        "  tcpf sweep my-law.toml --controller mine=my_cc.py:MyCC   # groups with algorithm = \"mine\"\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --dry-run"
    ),
)
def run_command(
    file: str = typer.Argument(..., metavar="FILE.toml", help="Sweep spec (TOML)."),
    workers: Optional[int] = typer.Option(
        None, "--workers", "-j", metavar="N",
        help="Parallel runs: local threads or processes (default: every core), or "
             "LocalCluster workers with --dask local."),
    processes: bool = typer.Option(
        False, "--processes",
        help="Run on local processes (a pool of warm workers, runs sent in chunks): faster for "
             "sweeps of short runs (a few ms each), whose Python work per run holds the GIL; "
             "the same results. Default: with 2 workers or more and 1000 runs to do, one run "
             "per worker on threads, timed, then threads if the runs are long enough to scale "
             "there, else processes; threads otherwise."),
    threads: bool = typer.Option(
        False, "--threads",
        help="Run on local threads (the engine releases the GIL), whatever the sweep's size."),
    dask: Optional[str] = typer.Option(
        None, "--dask", metavar="ADDRESS|local",
        help="Run on Dask: a scheduler address (tcp://host:8786) or `local` to start a "
             "LocalCluster. Needs dask.distributed."),
    out: Optional[str] = typer.Option(
        None, "--out", metavar="DIR",
        help="Output directory (default: out/<FILE's name>). Runs already stored there are "
             "not recomputed. It must be new, empty or this same spec's output unless --force."),
    force: bool = typer.Option(
        False, "--force",
        help="Use an --out DIR that holds another spec's sweep (its table is replaced; stored "
             "runs are shared, being keyed by content) or files tcpfriendly did not write."),
    per_flow: bool = typer.Option(
        False, "--per-flow",
        help="Also write DIR/flows.parquet and DIR/flows.csv, one row per run x flow (as "
             "per_flow = true in the spec)."),
    simulator: Optional[str] = typer.Option(
        None, "--simulator", metavar="tcpf|ns2",
        help="What runs the simulations: tcpf (tcpfriendly's engine, the default) or ns2: each "
             "run exported to an ns-2 2.35 script (as `tcpf ns2 export`) and run by `ns`, the "
             "simulator the papers used, into the same table (metrics ns-2 does not report are "
             "empty; a point ns-2 cannot express fails alone, naming the element). ns-2 runs on "
             "local threads, not on Dask. Overrides the spec's simulator."),
    controller: Optional[List[str]] = typer.Option(
        None, "--controller", metavar="NAME=MODULE:CLASS",
        help="A window controller written in Python (a tcpfriendly.Controller subclass) that "
             "flow groups name as their algorithm, as in `tcpf run`; MODULE is an importable "
             "module or a .py file. Repeat for several. Its runs go on local processes, one "
             "per core (--workers), each loading the class again (not with --processes, "
             "--threads or --dask, nor in ns-2), and editing the class reruns them. Example: "
             "--controller mine=my_cc.py:MyCC"),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Validate the spec and print what would run; run nothing."),
    progress: Optional[bool] = typer.Option(
        None, "--progress/--no-progress",
        help="Progress bar on stderr (default: when stderr is a terminal)."),
) -> None:
    from ..sweep import Sweep, SweepError, SweepInterrupted, run_sweep
    from ..sweep.core import check_simulator, check_workers

    check_workers(workers, "--workers", SweepError)
    if dask is not None and dask != "local" and workers is not None:
        raise SweepError("--workers: a Dask scheduler decides its workers; use --workers only "
                         "with --dask local or without --dask", field="--workers")
    if dask is not None and not dask.strip():
        raise SweepError("--dask: expected a scheduler address or `local`", field="--dask")
    for flag, given in (("--processes", processes), ("--threads", threads)):
        if dask is not None and given:
            raise SweepError(f"{flag}: Dask runs on its own workers; use {flag} without "
                             "--dask", field=flag)
    if processes and threads:
        raise SweepError("--threads: choose --processes or --threads, not both",
                         field="--threads")
    sweep = Sweep.from_toml(file)
    if per_flow:
        sweep.per_flow = True
    if controller:
        from ..controller import load_controllers
        sweep.controllers = load_controllers(controller)
        if dask is not None or processes or threads:
            flag = "--dask" if dask is not None else "--processes" if processes else "--threads"
            raise SweepError(f"{flag}: a sweep with Python controllers (--controller) chooses "
                             "its own executor: local processes that load the class again, one "
                             "per core", field=flag)
    with as_flags({"simulator": "--simulator", "dask": "--dask", "processes": "--processes"}):
        if simulator is not None:
            sweep.simulator = simulator
        check_simulator(sweep.simulator, dask, processes)
    if out is None:
        out = os.path.join("out", os.path.splitext(os.path.basename(file))[0])
    if dry_run:
        from ..sweep.runner import _claim
        from ..sweep.store import RunStore

        with as_flags({"out": "--out"}):
            _claim(sweep, out, force)  # the refusal a real run would meet; writes nothing
        points, runs = sweep.plan()
        keys = {r.key for r in runs}
        store = RunStore(out, create=False)
        done = sum(1 for k in keys if store.has(k))
        typer.echo(f"sweep: {len(keys)} runs ({len(points)} points x {len(sweep.seeds)} seeds): "
                   f"{done} already done, {len(keys) - done} to run (dry run: nothing run)")
        for i, point in enumerate(points):
            label = ", ".join(f"{p}={v!r}" for p, v in point.items()) or "the base scenario"
            typer.echo(f"  point {i}: {label}")
        return
    try:
        with as_flags({"workers": "--workers", "dask": "--dask", "out": "--out"}):
            result = run_sweep(sweep, out, workers=workers, dask=dask, progress=progress,
                               force=force, executor="processes" if processes else
                               "threads" if threads else "auto")
    except SweepInterrupted as stop:
        result = stop.result
        _summary(result)
        fail(EXIT_INTERRUPTED,
             f"interrupted: {result.cached + result.ran} of {result.total} runs done and "
             f"kept in {result.out}; rerun to finish the {result.missing} missing")
    _summary(result, table=True)
    if result.failures:
        n = len(result.failures)
        raise RuntimeError(f"{n} of {result.total} run{'s' if result.total != 1 else ''} failed "
                           f"(first: {result.failure_label(0)}); the others completed and are "
                           "stored, the failed ones have status=failed in the table: fix and "
                           "rerun to retry them")


_LISTED_FAILURES = 20


def _summary(result, table: bool = False) -> None:
    """The sweep's closing lines: what ran, where the files are, the failures; with ``table``
    the summary table of the runs that succeeded (report.sweep_summary.sweep_text)."""
    done = result.cached + result.ran
    text = (f"sweep: {done}/{result.total} runs done ({result.ran} run now, {result.cached} "
            f"cached{f', {len(result.failures)} failed' if result.failures else ''}) in "
            f"{result.elapsed:.1f} s; {len(result.table)} rows"
            f"{f' (and {len(result.flows)} flow rows)' if result.flows is not None else ''}")
    files = [p for p in result.paths if not p.endswith("sweep.json")]
    if files:
        text += f" in {', '.join(files)}"
    typer.echo(text)
    for i in range(min(len(result.failures), _LISTED_FAILURES)):
        run = result.failures[i][0]
        typer.echo(f"  failed: point {run.point}: {result.failure_label(i)}")
    if len(result.failures) > _LISTED_FAILURES:
        typer.echo(f"  ... and {len(result.failures) - _LISTED_FAILURES} more failed runs "
                   "(status=failed in the table)")
    if table:
        from ..report.sweep_summary import sweep_text

        text = sweep_text(result)
        if text:
            typer.echo(text)


@app.command(
    "plot",
    help=(
        "Plot a sweep's METRIC against an axis: mean over seeds with 95% confidence-interval "
        "error bars (Student's t), one line per --hue value, or a heatmap of --x by --hue.\n\n"
        "Every axis that varies must be --x, --hue or fixed with --where AXIS=VALUE. With "
        "several flow groups, a group metric gets one line per group (or pick one with "
        "--group N); link metrics (link.<name>.<metric>) are per run.\n\n"
        "Ratios are taken per run, before the mean and CI over seeds: --ratio A/B divides group "
        "A's metric by group B's in the same run (the scheme under test over TCP); --paired "
        "AXIS=A/B divides the runs at AXIS = A by those at AXIS = B with the same seed and other "
        "axes (tsao2007's TCP-equivalence: the scheme and TCP under the identical loss process).\n\n"
        "--per-flow plots the per-flow table of a sweep run with per_flow (--per-flow): each "
        "flow of each run is a point (METRIC a per-flow metric: throughput_bps, goodput_bps, "
        "share, loss_event_rate, ...), coloured by its group, over a line through each group's "
        "mean (jin2001 Figs. 8-13); --hue, --kind, --ratio and --paired do not apply.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf sweep plot out/beta --x flows[1].params.beta --y share --out share.png\n"
        "  tcpf sweep plot out/beta --x flows[1].params.beta --y share --group 1 \\\n"
        "      --hue bottleneck.rate --out share-by-rate.png\n"
        "  tcpf sweep plot out/beta --kind heatmap --x flows[1].params.beta \\\n"
        "      --hue bottleneck.rate --y link.bottleneck.utilization --out util.png\n"
        "  tcpf sweep plot out/beta --x flows[1].params.beta --y goodput_bps_mean --ratio 1/0 \\\n"
        "      --hue bottleneck.rate --out gaimd-over-tcp.png\n"
        "  tcpf sweep examples/sweep-tsao2007-s1.toml --out out/s1\n"
        "  tcpf sweep plot out/s1 --x bottleneck.loss.cv --y goodput_bps_mean \\\n"
        "      --paired flows[0].algorithm=gaimd/tcp --out s1.png\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --per-flow --out out/beta\n"
        "  tcpf sweep examples/sweep-gaimd-beta.toml --simulator ns2 --out out/beta-ns2\n"
        "  tcpf sweep my-law.toml --controller mine=my_cc.py:MyCC   # groups with algorithm = \"mine\"\n"
        "  tcpf sweep plot out/beta --per-flow --x flows[1].params.beta --y share \\\n"
        "      --where bottleneck.rate=15Mbps --out flows.png"
    ),
)
def plot_command(
    directory: str = typer.Argument(..., metavar="DIR", help="A sweep's output directory."),
    x: str = typer.Option(..., "--x", metavar="AXIS", help="Axis on the x axis."),
    y: str = typer.Option(..., "--y", metavar="METRIC", help="Metric column to plot."),
    hue: Optional[str] = typer.Option(
        None, "--hue", metavar="AXIS", help="One line per value (heatmap: the rows)."),
    kind: str = typer.Option("line", "--kind", metavar="line|heatmap", help="Plot kind."),
    where: Optional[List[str]] = typer.Option(
        None, "--where", metavar="AXIS=VALUE", help="Fix another axis (repeatable)."),
    group: Optional[int] = typer.Option(None, "--group", metavar="N", help="One flow group."),
    out: str = typer.Option(..., "--out", metavar="FILE.png", help="Image file to write."),
    logx: bool = typer.Option(False, "--logx", help="Logarithmic x axis (line plots)."),
    logy: bool = typer.Option(False, "--logy", help="Logarithmic y axis (line plots)."),
    ratio: Optional[str] = typer.Option(
        None, "--ratio", metavar="A/B", help="Group A's metric over group B's, per run."),
    paired: Optional[str] = typer.Option(
        None, "--paired", metavar="AXIS=A/B", help="Runs at AXIS=A over those at AXIS=B, paired by seed."),
    per_flow: bool = typer.Option(
        False, "--per-flow", help="Each flow as a point (the sweep's per-flow table), over each group's mean."),
) -> None:
    from ..outfiles import figure_file
    from ..sweep.plot import plot

    fixed = {}
    for item in where or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ScenarioError(f"--where: expected AXIS=VALUE, got {item!r}", field="--where")
        fixed[name] = value
    if not os.path.isdir(directory):
        raise ScenarioError(f"DIR: {directory} is not a directory (a sweep's --out)", field="DIR")
    figure_file(out, "--out", make_dirs=True)  # before the table is read: a name matplotlib would change or refuse
    names = ("x", "y", "hue", "kind", "where", "group", "out", "ratio", "paired")
    with as_flags({**{name: f"--{name}" for name in names}, "per_flow": "--per-flow"}):
        plot(directory, x=x, y=y, hue=hue, kind=kind, where=fixed, group=group, out=out,
             logx=logx, logy=logy, ratio=ratio, paired=paired, per_flow=per_flow)
    typer.echo(f"wrote {out}")
