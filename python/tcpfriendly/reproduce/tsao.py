"""tsao2007 through ``tcpf evaluate``: each scheme of Table 2 is evaluated
(:func:`tcpfriendly.evaluate.evaluate`, its public API) and its Table-4 row of grades is set
beside the paper's (transcribed once, in ``tcpfriendly.evaluate.grades.PAPER_TABLE4``)."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ..errors import ScenarioError
from .spec import Claim, Experiment

__all__ = ["run_evaluations"]


def run_evaluations(ex: Experiment, opts) -> Tuple[Dict[str, Any], Dict[str, Any], Any]:
    """Evaluate every scheme of ``[evaluate.schemes]``; add one claim per Table-4 cell to
    ``ex.claims`` (ours = our grade, rule: the same symbol). Returns (names, extra, seeds)."""
    import os

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
                      out=os.path.join(opts.out, "runs", "tsao2007", "evaluate") if opts.out else None,
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
