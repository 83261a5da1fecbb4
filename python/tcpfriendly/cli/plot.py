"""`tcpf plot RESULT.json|DIR`: the standard figures of one run (:mod:`tcpfriendly.plot`)."""

from __future__ import annotations

import os
from typing import List, Optional

import typer

from ..errors import ScenarioError
from .errors import as_flags

HELP = (
    "Draw the standard figures of one run from its result JSON (`tcpf run --json > r.json`) or "
    "a `tcpf run --out` directory: cwnd vs time with loss events marked, goodput in bins, RTT "
    "samples, queue length and drops per link, per-flow goodput bars with group means and "
    "Jain's index. Each is written as DIR/<kind>.png and .svg.\n\n"
    "Every kind but goodput needs the run's time series: run with `timeseries = 0.1` in the "
    "scenario (loss markers also need `loss_log = true`), or `tcpf run FILE --plot DIR`, which "
    "records both and draws the figures in one go.\n\n"
    "\b\n"
    "Examples:\n"
    "  tcpf run examples/quickstart.toml --timeseries 0.1 --json > r.json\n"
    "  tcpf plot r.json -o plots/                       every kind, PNG + SVG\n"
    "  tcpf plot out/q --kind cwnd --kind rate --bin 0.5 --by flow --format svg\n"
    "  tcpf plot out/q --kind queue --link b1-b2 --link b2-b3"
)


def register(app: typer.Typer) -> None:
    @app.command("plot", short_help="Figures of one run: cwnd, rate, RTT, queue, goodput bars (PNG, SVG).",
                 help=HELP)
    def plot_command(
        result: str = typer.Argument(..., metavar="RESULT.json|DIR",
                                     help="A run's result JSON, or a `tcpf run --out` directory."),
        kind: Optional[List[str]] = typer.Option(
            None, "--kind", "-k", metavar="KIND",
            help="cwnd, rate, rtt, queue or goodput; repeat for several (default: all the run supports)."),
        out: Optional[str] = typer.Option(
            None, "--out", "-o", metavar="DIR",
            help="Directory for the figures (default: plots/ beside the result): new, empty or one "
                 "`tcpf plot` wrote; a file, another command's output or a directory of other files "
                 "is refused. Each figure is written to a temporary name and renamed."),
        fmt: str = typer.Option("png,svg", "--format", metavar="LIST", help="Comma-separated: png, svg, pdf."),
        bin_s: Optional[float] = typer.Option(
            None, "--bin", metavar="SECONDS",
            help="Bin width of the rate figure, at least the sampling interval (default: jin2001's "
                 "0.2 s, or the smallest multiple of the sampling interval above it)."),
        by: Optional[str] = typer.Option(None, "--by", metavar="flow|group",
                                         help="A line per flow or per group (default: per flow up to 8 flows)."),
        flows: Optional[List[int]] = typer.Option(None, "--flow", metavar="ID", help="Only this flow id; repeat."),
        links: Optional[List[str]] = typer.Option(
            None, "--link", metavar="NAME",
            help="The queue figure's links (default: the bottleneck and the busiest, up to 4); repeat."),
        t0: Optional[float] = typer.Option(None, "--from", metavar="SECONDS", help="Start of the time window."),
        t1: Optional[float] = typer.Option(None, "--to", metavar="SECONDS", help="End of the time window."),
    ) -> None:
        from .. import plot

        result_obj = load_result(result)
        directory = out if out is not None else os.path.join(
            result if os.path.isdir(result) else os.path.dirname(os.path.abspath(result)), "plots")
        if not kind and not result_obj.has_timeseries():
            from ..plot.core import _RECORD_HINT

            raise plot.NoTimeSeries.at("RESULT", f"{result}: this run recorded no time series, so only "
                                       f"--kind goodput can be drawn; {_RECORD_HINT}")
        formats = [f.strip() for f in fmt.split(",") if f.strip()]
        flags = {"kind": "--kind", "bin_s": "--bin", "by": "--by", "flows": "--flow", "links": "--link", "t0": "--from",
                 "t1": "--to", "formats": "--format", "directory": "--out"}
        with as_flags(flags):
            written = plot.write(result_obj, directory, kinds=kind or None, formats=formats, bin_s=bin_s,
                                 by=by, flows=flows or None, links=links or None, t0=t0, t1=t1)
        typer.echo(f"wrote {', '.join(written)}")

    def load_result(path: str):
        from ..report.run import load

        if not os.path.exists(path):
            raise ScenarioError.at("RESULT", f"{path}: no such file or directory")
        if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "result.json")):
            raise ScenarioError.at("RESULT", f"{path}: no result.json here (not a `tcpf run --out` directory)")
        try:
            return load(path)
        except ScenarioError as exc:
            raise ScenarioError.at("RESULT", exc.message) from None


#: The sampling interval `tcpf run --plot` records when neither --timeseries nor the file sets
#: one: it divides jin2001's 0.2 s bins.
PLOT_TIMESERIES_S = 0.1


def for_run(scenario, timeseries: Optional[float], directory: str, out: Optional[str] = None):
    """`tcpf run --plot DIR`: the scenario with the loss log on and the time-series interval to
    record (the option's, else the file's, else 0.1 s); checks DIR before the run starts (the
    rules of `tcpf plot -o DIR`: :func:`tcpfriendly.plot.core.claim_directory`), and that it is
    not the run's --out directory (one directory, one output)."""
    from ..plot.core import claim_directory
    from ..scenario import Scenario

    if out is not None and os.path.abspath(directory) == os.path.abspath(out):
        raise ScenarioError.at("--plot", f"{directory} is the --out directory; give the figures their "
                                         f"own, such as {os.path.join(out, 'plots')}")
    claim_directory(directory, field="--plot")  # writes nothing
    data = scenario.to_dict()
    data["loss_log"] = True
    if timeseries is None and data.get("timeseries") is None:
        timeseries = PLOT_TIMESERIES_S
    return Scenario(data), timeseries
