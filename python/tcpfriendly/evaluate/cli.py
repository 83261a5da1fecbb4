"""Command line of ``tcpf evaluate`` (argparse). ``add_arguments(parser)`` defines the options
so that wiring into ``tcpf`` is one line; ``evaluate_command(argv)`` runs it and returns the
exit code (2 on bad input, with one line naming the field)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Dict, List, Optional

from ..errors import ScenarioError, one_line

__all__ = ["add_arguments", "build_parser", "evaluate_command", "run_args", "ALL_SCHEMES"]

#: ``--all``: tsao2007 Table 2's eight schemes with its parameters, then the project's extras.
ALL_SCHEMES = [
    ("gaimd", {"alpha": 0.2, "beta": 0.125}),
    ("iiad", {"alpha": 1.0, "beta": 0.67}),
    ("sqrt", {"alpha": 1.0, "beta": 0.67}),
    ("simd", {"beta": 0.0625}),
    ("aiad_h", {"beta": 0.25}),
    ("tfrcp", {"interval": 5.0}),
    ("tfrc", {"history": 8}),
    ("tear", {"history": 8}),
    ("tcp", {}),
    ("illinois", {}),
    ("log", {}),
    ("sigmoid", {}),
    ("cubic", {}),
]


def _value(text: str) -> Any:
    try:
        v = float(text)
    except ValueError:
        return text
    if not math.isfinite(v):
        raise ValueError(text)
    return int(v) if text.strip().lstrip("+-").isdigit() else v


def parse_params(items: Optional[List[str]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for item in items or []:
        for part in item.split(","):
            if not part.strip():
                continue
            k, sep, v = part.partition("=")
            if not sep or not k.strip() or not v.strip():
                raise ScenarioError(f"--params: expected KEY=VALUE, got {part!r}")
            try:
                out[k.strip()] = _value(v.strip())
            except ValueError:
                raise ScenarioError(f"--params: {k.strip()}: must be a finite number or a name, got {v!r}") from None
    return out


def parse_controllers(items: Optional[List[str]]) -> Dict[str, type]:
    out: Dict[str, type] = {}
    for item in items or []:
        name, sep, rest = item.partition("=")
        path, sep2, cls = rest.rpartition(":")
        if not sep or not sep2 or not name or not path or not cls:
            raise ScenarioError(f"--controller: expected NAME=FILE:CLASS, got {item!r}")
        import importlib.util
        try:
            spec = importlib.util.spec_from_file_location(f"tcpf_user_{name}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)  # the user's own file, by request
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of the user's file
            # (even sys.exit) is bad input: exit 2 with one line
            raise ScenarioError(f"--controller: cannot load {path}: {type(exc).__name__}: {one_line(exc)}") from None
        if not hasattr(mod, cls):
            raise ScenarioError(f"--controller: {path} has no class {cls!r}")
        out[name] = getattr(mod, cls)
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("algorithm", nargs="?", help="algorithm name (tcpf algorithms), 'formula', or a --controller name")
    p.add_argument("--params", action="append", metavar="K=V", help="algorithm parameters (repeatable or comma-separated)")
    p.add_argument("--controller", action="append", metavar="NAME=FILE:CLASS", help="a Python controller class")
    p.add_argument("--quick", action="store_true", help="fewer seeds, shorter runs (< 2 min per algorithm on one core)")
    p.add_argument("--seeds", type=int, metavar="N", help="runs per point (default: per experiment)")
    p.add_argument("--workers", type=int, metavar="N", help="processes (default: all cores)")
    p.add_argument("--out", metavar="DIR", help="write tables, figures and the run cache here")
    p.add_argument("--json", action="store_true", help="print the evaluation as JSON")
    p.add_argument("--thresholds", metavar="FILE", help="O/Δ/X thresholds TOML (default experiments/tsao2007/thresholds.toml)")
    p.add_argument("--only", action="append", metavar="EXP", help="only these experiments (s1, s2, s3, s4, jin2001, sastry2005)")
    p.add_argument("--all", action="store_true", help="tsao2007 Table 4 for its eight schemes (+ TCP, Illinois, LOG, SIGMOID, CUBIC)")


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
    except KeyboardInterrupt:
        print("tcpf evaluate: interrupted", file=sys.stderr)
        return 130


def run_args(a: argparse.Namespace) -> int:
    """Run the evaluation the parsed options of :func:`add_arguments` ask for, print it and
    return 0. Bad input raises :class:`ScenarioError` naming the option or field."""
    from .core import evaluate
    from .report import table4_text, text_report, write_outputs
    if a.seeds is not None and a.seeds < 1:
        raise ScenarioError(f"--seeds: must be a positive integer, got {a.seeds}")
    if a.workers is not None and a.workers < 1:
        raise ScenarioError(f"--workers: must be a positive integer, got {a.workers}")
    if not a.all and not a.algorithm:
        raise ScenarioError("algorithm: give an algorithm name or --all")
    params = parse_params(a.params)
    controllers = parse_controllers(a.controller)
    schemes = ALL_SCHEMES if a.all else [(a.algorithm, params)]
    memo: Dict[str, Any] = {}
    evs = []
    for alg, prm in schemes:
        ev = evaluate(alg, prm or None, controllers=controllers or None, quick=a.quick, seeds=a.seeds,
                      out=a.out, workers=a.workers, thresholds=a.thresholds, only=a.only, memo=memo)
        evs.append(ev)
        if a.out:
            write_outputs(ev, a.out)
        if not a.json:
            print(text_report(ev))
            print()
    if a.json:
        doc = [e.to_json() for e in evs]
        print(json.dumps(doc if a.all else doc[0], indent=1, default=str))
    elif a.all:
        print(table4_text(evs))
    if a.all and a.out:
        with open(f"{a.out}/table4.txt", "w", encoding="utf-8") as f:
            f.write(table4_text(evs) + "\n")
    return 0
