#!/usr/bin/env python3
"""How many of tsao2007 Table 4's 56 grades could ANY thresholds match, given our numbers?

Reads the ``evaluation-<scheme>.json`` files that ``tcpf evaluate --all --out DIR`` writes and,
for the eight schemes of Table 4, searches every pair of thresholds (O bound, Δ bound) for
the one that matches the most of the paper's grades, with the constraint that `tcpf evaluate`
itself keeps: the same thresholds for every scheme -- one pair for the throughput columns
(S1, S2 hom, S2 het: |ln r|) and one for the transient columns (S3/S4 up/down: X's time /
TCP's). The result is an upper bound on what re-choosing the thresholds could achieve; the
gap to the paper is then in the measured numbers (their order across schemes), not in where
the bands are drawn. Diagnostic only: it never changes the thresholds in
experiments/tsao2007/thresholds.toml, which were fixed before any scheme was evaluated.

    python3 scripts/table4_bound.py /tmp/eval-full
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import List, Tuple

from tcpfriendly.evaluate.grades import COLUMNS, PAPER_TABLE4, grade_transient

THROUGHPUT = ["S1", "S2 hom", "S2 het"]
TRANSIENT = ["S3 up", "S4 up", "S3 down", "S4 down"]


def _value(numbers: dict) -> float:
    """The number a grade is drawn from: |ln r| for a throughput ratio, the time ratio for a
    transient (never converged: +inf, which only X admits)."""
    if "time_ratio" in numbers:
        v = numbers["time_ratio"]
    else:
        r = numbers.get("equivalence", numbers.get("equal_share"))
        v = abs(math.log(r)) if r and r > 0 else math.inf
    return math.inf if v is None or v != v else float(v)


def best(points: List[Tuple[float, str]]) -> Tuple[int, Tuple[float, float]]:
    """Most points graded as the paper by one (a, b): O if v <= a, Δ if v <= b, else X."""
    cuts = sorted({0.0, *(v for v, _ in points if math.isfinite(v))}) + [math.inf]
    top, arg = -1, (0.0, 0.0)
    for i, a in enumerate(cuts):
        for b in cuts[i:]:
            # the project's band rule (O if v <= a, Δ if v <= b, else X; not finite: X), applied
            # to |ln r| for the throughput columns
            bands = {"transient": {"o_max": a, "delta_max": b}}
            n = sum(grade_transient(v, bands) == g for v, g in points)
            if n > top:
                top, arg = n, (a, b)
    return top, arg


def main(out: str) -> int:
    evs = {}
    for scheme in PAPER_TABLE4:
        path = os.path.join(out, f"evaluation-{scheme}.json")
        if os.path.exists(path):
            with open(path) as f:
                evs[scheme] = json.load(f)
    if not evs:
        print(f"error: no evaluation-<scheme>.json in {out}", file=sys.stderr)
        return 2
    total_now = total_best = 0
    for name, cols in (("throughput", THROUGHPUT), ("transient", TRANSIENT)):
        pts, now = [], 0
        for col in cols:
            i = COLUMNS.index(col)
            for scheme, ev in evs.items():
                paper = PAPER_TABLE4[scheme][i][0]
                pts.append((_value(ev["numbers"][col]), paper))
                now += ev["grades"].get(col, "?")[:1] == paper
        n, (a, b) = best(pts)
        total_now += now
        total_best += n
        print(f"{name:10s} columns {', '.join(cols)}: {now} of {len(pts)} match today; "
              f"at most {n} with any shared thresholds (best: O <= {a:.3g}, Δ <= {b:.3g})")
    print(f"Table 4: {total_now} of {7 * len(evs)} today; upper bound over all thresholds: {total_best}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
