"""`tcpf report PATH [-o report.html]`: one self-contained HTML page (:mod:`tcpfriendly.report`)."""

from __future__ import annotations

import os
from typing import Optional

import typer

HELP = (
    "Write one self-contained HTML page (inline CSS and SVG figures, no scripts, nothing "
    "fetched from a network: it opens from disk) for PATH:\n\n"
    "\b\n"
    "  a run's result JSON or `tcpf run --out` dir  summary tables, figures, normalised scenario\n"
    "  a `tcpf sweep --out` dir                    mean and 95% CI per point, one figure per metric\n"
    "  a `tcpf evaluate --out` dir                 grades with the numbers behind them, paper row\n"
    "  a `tcpf reproduce --out` dir (or a paper's) claims matched, paper vs ours, figures\n\n"
    "Each page ends with the commands that regenerate it.\n\n"
    "\b\n"
    "Examples:\n"
    "  tcpf run examples/quickstart.toml --plot out/q/plots --out out/q && tcpf report out/q\n"
    "  tcpf sweep examples/sweep-gaimd-beta.toml --out out/b && tcpf report out/b -o beta.html\n"
    "  tcpf reproduce yang2000 --quick --out out/r && tcpf report out/r"
)


def register(app: typer.Typer) -> None:
    @app.command("report", short_help="One self-contained HTML page for a run, sweep, evaluation or reproduction.",
                 help=HELP)
    def report_command(
        path: str = typer.Argument(..., metavar="PATH", help="Result JSON, or a run/sweep/evaluate/reproduce --out directory."),
        out: Optional[str] = typer.Option(
            None, "--out", "-o", metavar="FILE.html",
            help="Where to write the page (default: report.html in PATH, or beside the JSON file)."),
    ) -> None:
        from .. import report

        written = report.write(path, out)
        typer.echo(f"wrote {written} ({os.path.getsize(written) / 1024:.0f} KiB)")
