"""`tcpf reproduce PAPER ...`: rerun a paper's experiments from experiments/ and print our
numbers beside the published ones (tcpfriendly.reproduce; argparse options run under the CLI
error policy of cli/errors.py)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import textwrap
import time
from typing import List, NoReturn, Optional

import typer

from ..errors import ScenarioError

SHORT_HELP = "Rerun a paper's experiments and print our numbers beside the published ones."

DESCRIPTION = textwrap.fill(
    "Run every experiment of a paper (jin2001, yang2000, sastry2005, liu2008, tsao2007, or all) "
    "from experiments/<paper>/<experiment>/: analytic rows through the models, simulations on "
    "the sweep engine (cached in OUT/runs, resumable, progress bar on a terminal), tsao2007 "
    "through tcpf evaluate. Each experiment prints 'claim | paper | ours | difference | rule | "
    "verdict', then the status of every row of the papers' inventory (matched, differs, not run, "
    "not expressible: experiments/<paper>/inventory.toml); OUT/<paper>/ gets a figure per "
    "experiment (PNG, SVG), REPRODUCTION.md, results.json and inventory.json. --quick uses "
    "fewer seeds and shorter runs (and says so). "
    "See docs/reproduce.md.", width=90)

EXAMPLES = """\
examples:
  tcpf reproduce jin2001 --quick                       every jin2001 experiment, quick mode
  tcpf reproduce liu2008 --only markov-figs2-7         one experiment
  tcpf reproduce all --quick --json > claims.json      machine-readable claims of every paper
  tcpf reproduce jin2001 --out docs/reproductions/jin2001-run --workers 2
  tcpf reproduce yang2000 --simulator ns2 --out ns2-run    the same sweeps in ns-2 2.35
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ScenarioError(message)


def _positive(flag: str):
    def conv(text: str) -> int:
        # argparse replaces a ValueError's message (ScenarioError is one) by "invalid conv
        # value"; ArgumentTypeError's is kept: "argument --seeds: must be a positive integer"
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"must be a positive integer, got {v}")
        return v
    return conv


def parser() -> argparse.ArgumentParser:
    from ..reproduce import PAPERS

    p = _Parser(prog="tcpf reproduce", description=DESCRIPTION, epilog=EXAMPLES,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paper", metavar="PAPER", help=f"one of {', '.join(PAPERS)}, all")
    p.add_argument("--only", action="append", metavar="EXP", default=[],
                   help="run only this experiment (a directory name; repeatable)")
    p.add_argument("--quick", action="store_true",
                   help="fewer seeds, shorter runs, fewer points (not the published setup)")
    p.add_argument("--seeds", type=_positive("--seeds"), metavar="N",
                   help="runs per point (default: each experiment's)")
    p.add_argument("--out", metavar="DIR", default="reproduction",
                   help="figures, REPRODUCTION.md, results.json and the run cache (default: reproduction)")
    p.add_argument("--json", action="store_true", help="print the claims as JSON")
    p.add_argument("--workers", type=_positive("--workers"), metavar="N",
                   help="local simulation threads (default: every core)")
    p.add_argument("--dask", metavar="ADDRESS", help="run the simulations on Dask ('local' or tcp://host:8786)")
    p.add_argument("--simulator", choices=("tcpf", "ns2"), default="tcpf",
                   help="what runs the simulations: tcpf (tcpfriendly's engine, the default) or "
                        "ns2: the sweep and evaluate experiments in ns-2 2.35, the papers' "
                        "simulator, on the scripts `tcpf ns2 export` would write (same setup, same "
                        "seeds); claims whose runs ns-2 cannot express are not run, and analytic "
                        "experiments are left out. Use another --out than tcpfriendly's")
    return p


def run_args(args: argparse.Namespace, argv: Optional[List[str]] = None) -> int:
    from ..reproduce import (PAPERS, inventory_rows, inventory_summary, plan, reproduce,
                             results_json, write_outputs)
    from ..outfiles import claim_shared
    from .errors import as_flags
    from ..reproduce.inventory import row_counts
    from ..reproduce.report import table_text
    from ..sweep.runner import dask_session

    if args.paper not in PAPERS and args.paper != "all":
        raise ScenarioError(f"PAPER: must be one of {', '.join(PAPERS)}, all; got {args.paper!r}")
    plan(args.paper, args.only)  # bad --only: exit 2 before anything runs
    from ..sweep.core import check_simulator
    with as_flags({"dask": "--dask"}):
        check_simulator(args.simulator, args.dask)  # before a Dask address is reached
    # and a bad --out: a file, or another command's output (`tcpf run`, `tcpf sweep`); one
    # written before manifests existed is accepted. Nothing is written here.
    claim_shared(args.out, "reproduce", field="--out")
    command = "tcpf reproduce " + " ".join(shlex.quote(a) for a in (argv or []))
    wall = {}

    def on_result(r) -> None:
        if not args.json:
            sys.stdout.write(table_text(r) + "\n\n")
            sys.stdout.flush()

    results = []
    papers = PAPERS if args.paper == "all" else [args.paper]
    todo = plan(args.paper, args.only)
    if args.simulator == "ns2":
        from ..reproduce import ns2_skipped
        skipped = [x.name for xs in ns2_skipped(args.paper, args.only).values() for x in xs]
        if skipped:
            sys.stderr.write(f"--simulator ns2: not run (analytic: nothing to simulate): "
                             f"{', '.join(skipped)}\n")
    flags = {"workers": "--workers", "seeds": "--seeds", "dask": "--dask", "simulator": "--simulator"}
    # a Dask scheduler address is reached once, now: a bad one is refused before anything runs
    with as_flags(flags), dask_session(args.dask, args.workers) as dask:
        for paper in papers:
            if paper not in todo:
                continue
            t0 = time.monotonic()
            results += reproduce(paper, [x.id for x in todo[paper]], quick=args.quick,
                                 seeds=args.seeds, out=args.out, workers=args.workers,
                                 dask=dask, quiet=args.json, on_result=on_result,
                                 simulator=args.simulator)
            wall[paper] = time.monotonic() - t0
    write_outputs(results, args.out, command, wall, field="--out")
    rows = inventory_rows(results)
    if args.json:
        sys.stdout.write(json.dumps(results_json(results, rows), indent=1, ensure_ascii=False,
                                    allow_nan=False) + "\n")
    else:
        if rows:
            sys.stdout.write(inventory_summary(rows) + "\n\n")
        n = sum(r.judged for r in results)
        m = sum(r.matched for r in results)
        mode = " (quick mode: fewer seeds and shorter runs than the papers)" if args.quick else ""
        u = sum(len(r.claims) - r.judged for r in results)
        if args.simulator == "ns2":
            mode += (f" in ns-2 ({u} more claims not run: runs ns-2 cannot express or metrics "
                     "it does not report)")
        c = row_counts([s for st in rows.values() for s in st])
        sys.stdout.write(f"{m}/{n} claims matched, {c['matched']}/{c['judged']} checkable "
                         f"inventory rows matched{mode}; " + ", ".join(
            f"{p} {w:.1f} s" for p, w in wall.items()) + f"; reports in {args.out}/\n")
    return 0


def register(app: typer.Typer) -> None:
    """Add `reproduce` to the `tcpf` app (arguments parsed by argparse, as `tcpf evaluate`)."""

    @app.command(
        "reproduce", short_help=SHORT_HELP, help=SHORT_HELP + " See 'tcpf reproduce --help'.",
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                          "help_option_names": []},
    )
    def reproduce_command(ctx: typer.Context) -> None:
        args = parser().parse_args(ctx.args)
        raise typer.Exit(run_args(args, list(ctx.args)))
