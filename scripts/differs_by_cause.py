#!/usr/bin/env python3
"""Why the claims of a `tcpf reproduce all --out DIR` run that differ from the papers differ,
counted by cause (docs/reproductions/README.md, "The differing claims by cause").

    python3 scripts/differs_by_cause.py DIR [--ns2 docs/reproductions/ns2/comparison.md] [--list]

Every differing claim falls in the first class that fits, in this order:
1. the paper is inconsistent: the claim's own record says so (`inconsistent` in
   published.toml, shown as "differs: the paper is inconsistent"); no simulator can match it;
2. a grade under thresholds the paper does not give: tsao2007 Table 4's O / Δ / X cells, graded
   with experiments/tsao2007/thresholds.toml (ours, written before comparing);
3. ns-2 misses it too: judged by ns-2 2.35 on the same setup and seeds in the committed
   cross-check (`scripts/compare_reproductions.py --all` output, DIR of the --ns2 option), with
   the same verdict;
4. ns-2 matches it and tcpfriendly does not (a lead on the engine);
5. undecided: censored convergence times leave the comparison open;
6. the rest: a setup or metric detail the paper leaves out, with the hypothesis recorded in the
   claim's reason (not run in ns-2, mostly because ns-2 lacks the scheme or the setup).
With --list every differing claim is printed with its class.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from typing import Dict, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_reproductions import load  # noqa: E402  (one reader of results.json)

CLASSES = [
    "the paper is inconsistent",
    "a grade under thresholds the paper does not give (tsao2007 Table 4)",
    "ns-2 on the same setup misses it too",
    "ns-2 matches it, tcpfriendly does not",
    "undecided (censored times)",
    "a setup or metric detail the paper leaves out (hypothesis recorded)",
]


def ns2_verdicts(path: str) -> Dict[Tuple[str, str], str]:
    """(experiment, claim) -> ns-2's verdict, from compare_reproductions.py --all's tables."""
    out: Dict[Tuple[str, str], str] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith("| ") or line.startswith("| experiment"):
                continue
            cells = [c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]
            if len(cells) == 7:
                out[(cells[0], cells[1])] = cells[6]
    return out


def cause(exp: str, c: dict, ns2: Dict[Tuple[str, str], str]) -> int:
    v = c.get("verdict", "")
    if "the paper is inconsistent" in v:
        return 0
    if "thresholds are ours" in v:
        return 1
    if (exp, c["claim"]) in ns2:
        return 2 if ns2[(exp, c["claim"])] != "matched" else 3
    if v.startswith("differs: undecided"):
        return 4
    return 5


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", metavar="DIR")
    ap.add_argument("--ns2", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs",
                                                  "reproductions", "ns2", "comparison.md"))
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    runs = load(a.dir)
    if not runs:
        print(f"error: no <paper>/results.json under {a.dir}", file=sys.stderr)
        return 2
    ns2 = ns2_verdicts(a.ns2)
    counts = collections.Counter()
    per = collections.defaultdict(collections.Counter)
    total = matched = 0
    listed = []
    for paper, claims in runs.items():
        for (exp, claim), c in claims.items():
            if c.get("unavailable") is not None:
                continue
            total += 1
            if c.get("matched"):
                matched += 1
                continue
            k = cause(exp, c, ns2)
            counts[k] += 1
            per[k][paper] += 1
            listed.append((k, paper, exp, claim))
    print(f"{matched} of {total} claims matched; {total - matched} differ:\n")
    print("| cause | claims | by paper |")
    print("|---|---|---|")
    for k, name in enumerate(CLASSES):
        if counts[k]:
            papers = ", ".join(f"{p} {n}" for p, n in sorted(per[k].items()))
            print(f"| {name} | {counts[k]} | {papers} |")
    excl = counts[0] + counts[1]
    print(f"\nWithout the classes no simulation can settle (1 and 2): {matched} of {total - excl} "
          f"({100.0 * matched / (total - excl):.1f} %).")
    if a.list:
        print()
        for k, paper, exp, claim in sorted(listed):
            print(f"{k + 1}  {paper}  {exp}  {claim}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
