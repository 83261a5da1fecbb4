"""Command line of ``tcpf evaluate`` (argparse). ``add_arguments(parser)`` defines the options
so that wiring into ``tcpf`` is one line; ``evaluate_command(argv)`` runs it and returns the
exit code (2 on bad input, with one line naming the field)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ScenarioError, one_line

__all__ = ["add_arguments", "build_parser", "evaluate_command", "run_args", "all_schemes", "EXTRA_SCHEMES"]

#: ``--all``'s schemes after tsao2007's eight: the project's extras, with their defaults.
EXTRA_SCHEMES = ["tcp", "illinois", "log", "sigmoid", "cubic"]


def all_schemes() -> List[Tuple[str, Dict[str, Any]]]:
    """``--all``: tsao2007 Table 2's eight schemes with its parameters, read from their one
    transcription (``experiments/tsao2007/table4/experiment.toml``, ``[evaluate.schemes]``),
    then :data:`EXTRA_SCHEMES`. A missing or malformed file raises :class:`ScenarioError`
    naming it."""
    import os
    from .scenarios import _read, experiments_dir
    path = os.path.join(experiments_dir(), "tsao2007", "table4", "experiment.toml")
    schemes = (_read(path).get("evaluate") or {}).get("schemes")
    if not isinstance(schemes, dict) or not schemes:
        raise ScenarioError(f"{path}: [evaluate.schemes]: expected tsao2007 Table 2's schemes "
                            f"and parameters", field="evaluate.schemes")
    return [(name, dict(params)) for name, params in schemes.items()] + [(n, {}) for n in EXTRA_SCHEMES]


def _value(text: str) -> Any:
    try:
        v = float(text)
    except ValueError:
        return text
    if not math.isfinite(v):
        raise ValueError(text)
    return int(v) if text.strip().lstrip("+-").isdigit() else v


def parse_params(items: Optional[List[str]], algorithm: Optional[str] = None) -> Dict[str, Any]:
    """``--params K=V[,K=V...]`` (repeatable) -> ``{K: V}``, typed as ``algorithm``'s registry
    entry gives them (the engine's ``registry::coerce_untyped``, shared with ``tcpf model
    --param``): a formula parameter's value stays text (``increase=0.2`` is the formula "0.2"),
    a number parameter's is a number. A comma inside parentheses belongs to its value
    (``decrease=min(0.5*w,10)``). Anything else -- an empty item (``",,"``, a trailing comma),
    a missing ``=``, key or value, a key given twice, a non-finite number, unbalanced
    parentheses -- raises :class:`ScenarioError` naming ``--params``."""
    out: Dict[str, Any] = {}
    for item in items or []:
        for part in _split_items(item):
            if not part.strip():
                raise ScenarioError(f"--params: expected KEY=VALUE[,KEY=VALUE...], got {item!r} (an empty item)")
            k, sep, v = part.partition("=")
            if not sep or not k.strip() or not v.strip():
                raise ScenarioError(f"--params: expected KEY=VALUE, got {part!r}")
            k = k.strip()
            if k in out:
                raise ScenarioError(f"--params: {k} given twice")
            try:
                out[k] = _value(v.strip())
            except ValueError:
                raise ScenarioError(f"--params: {k}: must be a finite number or a name, got {v!r}") from None
    if not out or not algorithm:
        return out
    from ..scenario import _call_engine, native
    return json.loads(_call_engine(native().coerce_params, algorithm, json.dumps(out)))


def _split_items(item: str) -> List[str]:
    """``item`` split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(item):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                break
        elif ch == "," and depth == 0:
            parts.append(item[start:i])
            start = i + 1
    if depth != 0:
        raise ScenarioError(f"--params: unbalanced parentheses in {item!r}")
    return parts + [item[start:]]


def parse_controllers(items: Optional[List[str]]) -> Dict[str, type]:
    """``--controller NAME=FILE:CLASS`` -> ``{NAME: class}`` (the one loader,
    :func:`tcpfriendly.controller.load_controllers`, shared with ``tcpf run``)."""
    from ..controller import load_controllers
    return load_controllers(items)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("algorithm", nargs="?", help="algorithm name (tcpf algorithms), 'formula', or a --controller name")
    p.add_argument("--params", action="append", metavar="K=V", help="algorithm parameters (repeatable or comma-separated; a formula "
                   "parameter's value stays text, commas inside parentheses included: "
                   "increase='max(1,w/8)')")
    p.add_argument("--controller", action="append", metavar="NAME=FILE:CLASS", help="a Python controller class")
    p.add_argument("--quick", action="store_true", help="fewer seeds, shorter runs (< 2 min per algorithm on one core)")
    p.add_argument("--seeds", type=int, metavar="N", help="runs per point (default: per experiment)")
    p.add_argument("--workers", type=int, metavar="N", help="simulations at once (default: all cores; with --dask local: its workers)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on Dask: 'local' (a LocalCluster) or a scheduler address (tcp://host:8786)")
    p.add_argument("--out", metavar="DIR", help="write tables, figures and the run cache here")
    p.add_argument("--json", action="store_true", help="print the evaluation as JSON")
    p.add_argument("--thresholds", metavar="FILE", help="O/Δ/X thresholds TOML (default experiments/tsao2007/thresholds.toml)")
    p.add_argument("--only", action="append", metavar="EXP", help="only these experiments (s1, s2, s3, s4, jin2001, sastry2005)")
    p.add_argument("--all", action="store_true", help="tsao2007 Table 4 for its eight schemes (+ TCP, Illinois, LOG, SIGMOID, CUBIC); "
                        "with an algorithm, it is one more row (with --out, a rerun into the same "
                        "directory runs only its simulations)")
    p.add_argument("--simulator", choices=("tcpf", "ns2"), default="tcpf",
                   help="what runs the simulations: tcpf (tcpfriendly's engine, the default) or ns2: the "
                        "same runs in ns-2 2.35, the papers' simulator (local threads; no --dask, no "
                        "--controller). An experiment ns-2 cannot express is not run, with the reason: "
                        "schemes without an ns-2 agent (SIMD, AIAD/H, TFRCP, TEAR, formulas), S1's "
                        "general-exponential losses, S3's loss schedule. Use another --out than tcpf's")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tcpf evaluate", description=(
        "Grade a congestion control after tsao2007 (S1-S4, Table 4) and measure jin2001's "
        "impulse response (Table 5) and sastry2005's trough test (Table I), against TCP SACK."))
    add_arguments(p)
    return p


class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (by the caller)
        raise _ArgError(message)


def evaluate_command(argv: Optional[List[str]] = None) -> int:
    """``python -m tcpfriendly.evaluate``: parse ``argv``, run, return the exit code (bad input:
    one line on stderr, 2). ``tcpf evaluate`` calls :func:`run_args` under the CLI's error
    policy instead."""
    p = _Parser(prog="tcpf evaluate")
    add_arguments(p)
    try:
        return run_args(p.parse_args(argv))
    except _ArgError as exc:
        print(f"tcpf evaluate: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except ScenarioError as exc:
        print(f"tcpf evaluate: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"tcpf evaluate: {one_line(exc) or 'interrupted'}", file=sys.stderr)
        return 130


def run_args(a: argparse.Namespace) -> int:
    """Run the evaluation the parsed options of :func:`add_arguments` ask for, print it and
    return 0. Bad input raises :class:`ScenarioError` naming the option or field."""
    from ..sweep.core import check_workers
    from .core import evaluate_many
    from .report import table4_markdown, table4_text, text_report, write_outputs
    if a.seeds is not None and a.seeds < 1:
        raise ScenarioError(f"--seeds: must be a positive integer, got {a.seeds}")
    check_workers(a.workers, "--workers")
    if not a.all and not a.algorithm:
        raise ScenarioError("algorithm: give an algorithm name or --all")
    table = all_schemes() if a.all else []
    if a.all and a.params and not a.algorithm:
        raise ScenarioError("--all: evaluates tsao2007's schemes with their own parameters; "
                            "--params applies to an algorithm given beside them", field="--all")
    if a.all and a.algorithm in {name for name, _ in table}:
        # a second row of a scheme the table holds would be graded against the paper's row
        raise ScenarioError(f"--all: {a.algorithm} is a row of Table 4 already, with tsao2007's "
                            f"parameters; grade other parameters of it without --all", field="--all")
    params = parse_params(a.params, a.algorithm)
    controllers = parse_controllers(a.controller)
    if a.dask is not None and not a.dask.strip():
        raise ScenarioError("--dask: expected 'local' or a scheduler address, got ''")
    # --all with an algorithm: the table's schemes, then it as one more row
    schemes = table + ([(a.algorithm, params)] if a.algorithm else [])
    # Ctrl-C raises EvaluationInterrupted (a KeyboardInterrupt) saying what is cached
    evs = evaluate_many([(alg, prm or None) for alg, prm in schemes],
                        controllers=controllers or None, quick=a.quick, seeds=a.seeds,
                        out=a.out, workers=a.workers, thresholds=a.thresholds, only=a.only,
                        dask=a.dask, label="evaluate --all" if a.all else f"evaluate {a.algorithm}",
                        simulator=a.simulator)
    for ev in evs:
        if a.out:
            write_outputs(ev, a.out)
        if not a.json:
            print(text_report(ev))
            print()
    if a.json:
        doc = [e.to_json() for e in evs]
        print(json.dumps(doc if a.all else doc[0], indent=1, default=str, allow_nan=False))
    elif a.all:
        print(table4_text(evs))
    if a.all and a.out:
        from ..outfiles import atomic_text

        atomic_text(os.path.join(a.out, "table4.txt"), table4_text(evs) + "\n", field="out")
        atomic_text(os.path.join(a.out, "table4.md"), table4_markdown(evs) + "\n", field="out")
    return 0
