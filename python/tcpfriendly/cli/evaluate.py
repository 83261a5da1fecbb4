"""`tcpf evaluate ALG ...`: grade a congestion control after tsao2007 and measure jin2001's and
sastry2005's yardsticks (the options are the evaluate package's own, `add_arguments`; this
module only runs them under the CLI error policy of cli/errors.py)."""

from __future__ import annotations

import argparse
import textwrap
from typing import NoReturn

import typer

from ..errors import ScenarioError

SHORT_HELP = "Grade an algorithm after tsao2007 (S1-S4), jin2001 and sastry2005, against TCP SACK."

DESCRIPTION = textwrap.fill(
    "Run tsao2007's four scenarios (S1 non-periodic losses, S2 low multiplexing, S3 two-state "
    "losses, S4 bursty CBR), jin2001's impulse response (Table 5) and sastry2005's trough test "
    "(Table I) for the algorithm, with TCP SACK as the reference in the same runs, and print a "
    "Table-4-style row of grades (O / Δ / X) with the number behind each grade. The thresholds "
    "are data (experiments/tsao2007/thresholds.toml; --thresholds FILE for your own) and are "
    "printed with the table. See docs/evaluate.md for the definitions and assumptions.",
    width=90)

EXAMPLES = """\
examples:
  tcpf evaluate tcp --quick                                  the reference against itself
  tcpf evaluate gaimd --params alpha=0.2,beta=0.125 --quick  tsao2007's GAIMD, < 2 min on one core
  tcpf evaluate tfrc --params history=8 --only s3 --only s4 --json --out /tmp/ev
  tcpf evaluate formula --params increase=0.2,decrease=0.125*w --quick
  tcpf evaluate mine --controller mine=my_cc.py:MyCC --quick  a Python controller class
  tcpf evaluate --all --out /tmp/table4                      tsao2007 Table 4, paper grades beside ours
  tcpf evaluate --all --out /tmp/table4 --dask tcp://host:8786   the same on a Dask cluster
  tcpf evaluate mine --controller mine=my_cc.py:MyCC --all --out /tmp/table4
                                                             your law as one more row of Table 4
  tcpf evaluate gaimd --params alpha=0.31,beta=0.125 --only s2 --simulator ns2
                                                             S2's runs in ns-2 2.35 instead

Simulations run on all cores (--workers N for fewer) or on Dask (--dask local|ADDRESS), each
reduced where it ran. With --out an interrupted evaluation resumes: a rerun of the same
command runs only the missing simulations (TCP reference runs are shared between schemes).

beta is always the fraction of the window REMOVED on a loss event. With --out DIR the tables
(CSV, JSON), a figure per scenario (PNG, SVG) and the run cache go to DIR.
"""


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are bad input for the CLI error policy (exit 2, one line)."""

    def error(self, message: str) -> NoReturn:
        raise ScenarioError(message)


def parser() -> argparse.ArgumentParser:
    from ..evaluate.cli import add_arguments

    p = _Parser(prog="tcpf evaluate", description=DESCRIPTION, epilog=EXAMPLES,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return p


def register(app: typer.Typer) -> None:
    """Add `evaluate` to the `tcpf` app. Its arguments go to the evaluate package's own
    (argparse) options unparsed; `-h`/`--help` prints them with examples."""

    @app.command(
        "evaluate",
        short_help=SHORT_HELP,
        help=SHORT_HELP + " See 'tcpf evaluate --help'.",
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                          "help_option_names": []},
    )
    def evaluate_command(ctx: typer.Context) -> None:
        from ..evaluate.cli import run_args
        from ..evaluate.runner import EvaluationInterrupted
        from .errors import EXIT_INTERRUPTED, as_flags, fail

        args = parser().parse_args(ctx.args)  # --help prints and exits 0
        try:
            with as_flags({"seeds": "--seeds", "only": "--only", "out": "--out", "dask": "--dask",
                           "simulator": "--simulator", "controllers": "--controller"}):
                code = run_args(args)
        except EvaluationInterrupted as exc:  # say what is cached and how to resume
            fail(EXIT_INTERRUPTED, str(exc))
        raise typer.Exit(code)
