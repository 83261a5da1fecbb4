"""Experiments run through ``tcpf evaluate`` (:func:`tcpfriendly.evaluate.evaluate`, its public
API), two ways:

- ``[evaluate.schemes]`` (tsao2007 Table 4): each scheme is evaluated and its row of grades is
  set beside the paper's (transcribed once, in ``tcpfriendly.evaluate.grades.PAPER_TABLE4``);
- ``[evaluate] values_from = "../impulse-response/published.toml"`` (jin2001 Table 5,
  sastry2005 Table I): the published values of an experiment ``tcpf evaluate`` runs, read
  from its own ``published.toml`` (one transcription), each compared with the metric
  ``tcpf evaluate`` measures for that algorithm."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ..errors import ScenarioError
from .spec import Claim, Experiment

__all__ = ["run_evaluations"]


def run_evaluations(ex: Experiment, opts) -> Tuple[Dict[str, Any], Dict[str, Any], Any]:
    """Run the evaluations and add their claims to ``ex.claims``. Returns (names, extra, seeds)."""
    if ex.evaluate.get("values_from"):
        return _published_values(ex, opts)
    return _table4(ex, opts)


def _cache(opts):
    import os
    return os.path.join(opts.out, "runs", "evaluate") if opts.out else None


def _table4(ex: Experiment, opts) -> Tuple[Dict[str, Any], Dict[str, Any], Any]:
    """One claim per Table-4 cell (ours = our grade, rule: the same symbol)."""
    from ..evaluate import evaluate
    from ..evaluate.grades import COLUMNS, PAPER_TABLE4

    schemes = ex.evaluate.get("schemes") or {}
    if not schemes:
        raise ScenarioError(f"{ex.name}: evaluate.schemes: needs at least one scheme")
    only = ex.evaluate.get("only")
    names: Dict[str, Any] = {}
    rows: List[str] = ["| scheme | " + " | ".join(COLUMNS) + " |", "|---|" + "---|" * len(COLUMNS)]
    claims: List[Claim] = []
    seeds = None
    for alg, params in schemes.items():
        ev = evaluate(alg, dict(params or {}), quick=opts.quick, seeds=opts.seeds,
                      out=_cache(opts),
                      workers=opts.workers, only=only, progress=opts.progress)
        seeds = seeds or (max(ev.seeds.values()) if ev.seeds else None)
        names[alg] = dict(ev.grades)
        paper = PAPER_TABLE4.get(alg, [])
        cells = []
        for i, col in enumerate(COLUMNS):
            ours = ev.grades.get(col, "-")
            cells.append(f"{ours} ({paper[i] if i < len(paper) else '?'})")
            if i < len(paper) and col in ev.grades:
                claims.append(Claim(
                    claim=f"{alg} {col}", where="Table 4 (004:195-214)", quote="", value=paper[i],
                    ours=f"{alg}[{col!r}]", rule={"same": True},
                    reason=ex.evaluate.get("reason", "see docs/evaluate.md: the thresholds are ours, "
                                                      "the paper gives none")))
        rows.append(f"| {alg} | " + " | ".join(cells) + " |")
    ex.claims = claims + ex.claims
    md = "Table 4, ours (paper):\n\n" + "\n".join(rows)
    return names, {"markdown": [md]}, seeds


def _label(alg: str, params: Dict[str, Any]) -> str:
    return alg + ("(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else "")


def _published_values(ex: Experiment, opts) -> Tuple[Dict[str, Any], Dict[str, Any], Any]:
    import json
    import math
    import os

    from ..evaluate import evaluate
    from .rules import check_rule
    from .spec import _read

    path = os.path.normpath(os.path.join(ex.path, ex.evaluate["values_from"]))
    pub = _read(path)
    key = ex.evaluate.get("key")
    only = ex.evaluate.get("only")
    if not key or not only:
        raise ScenarioError(f"{ex.name}: evaluate.key and evaluate.only are needed with values_from")
    tol = pub.get("tolerances") or {}
    runs: Dict[str, Any] = {}
    seeds = None

    def measured(alg: str, params: Dict[str, Any]) -> Dict[str, Any]:
        nonlocal seeds
        k = json.dumps([alg, params], sort_keys=True)
        if k not in runs:
            ev = evaluate(alg, dict(params), quick=opts.quick, seeds=opts.seeds, out=_cache(opts),
                          workers=opts.workers, only=only, progress=opts.progress)
            seeds = seeds or (max(ev.seeds.values()) if ev.seeds else None)
            runs[k] = ev.metrics.get(key) or {}
        return runs[k]

    def number(v: Any) -> float:
        if isinstance(v, dict):
            v = v.get("mean")
        return float(v) if isinstance(v, (int, float)) else float("nan")

    names: Dict[str, Any] = {}
    claims: List[Claim] = []
    by_alg: Dict[str, Dict[str, float]] = {}
    for i, v in enumerate(pub.get("values") or []):
        alg = str(v["algorithm"])
        params = dict(v.get("params") or {})
        label = str(v.get("label") or _label(alg, params))
        got = measured(alg, params)
        items = [(v["metric"], v)] if "metric" in v else [(m, {"value": x}) for m, x in (v.get("metrics") or {}).items()]
        for metric, item in items:
            rule = dict(item.get("rule") or v.get("rule") or tol.get(metric) or {})
            shown = None
            if "interval" in item:
                lo, hi = item["interval"]
                value = (lo + hi) / 2
                shown = f"95 % CI ({lo:g}, {hi:g}), midpoint"
            else:
                value = item["value"]
            rule.pop("of", None)
            name = f"v{i}_{metric}"
            names[name] = number(got.get(metric))
            by_alg.setdefault(metric, {})[alg] = names[name]
            claims.append(Claim(claim=f"{label}: {metric}" + (f" ({shown})" if shown else ""),
                                where=f"{v.get('where', '')} ({os.path.relpath(path, ex.path)})",
                                quote=str(v.get("quote", "")), value=value, ours=name,
                                rule=check_rule(rule, f"{path}: values[{i}].rule"),
                                reason=ex.evaluate.get("reason", "")))
    for j, o in enumerate(pub.get("orders") or []):
        metric = o["metric"]
        vals = by_alg.get(metric, {})
        groups = [[vals.get(a, float("nan")) for a in str(g).split("|")] for g in o["order"]]
        ok = all(not math.isnan(x) for g in groups for x in g) and all(
            max(a) < min(b) for a, b in zip(groups, groups[1:]))
        name = f"order{j}"
        names[name] = ok
        claims.append(Claim(claim=str(o["claim"]), where=str(o.get("where", "")), quote="",
                            value=True, ours=name, rule={"equals": True},
                            reason=ex.evaluate.get("reason", "")))
    ex.claims = claims + [c for c in ex.claims]
    return names, {}, seeds
