#!/usr/bin/env python3
"""Claim by claim, two `tcpf reproduce --out` directories side by side: typically tcpfriendly's
run and the same papers run in ns-2 (`tcpf reproduce PAPER --simulator ns2 --out DIR`).

    python3 scripts/compare_reproductions.py OURS_DIR NS2_DIR [--labels tcpfriendly ns-2]
        [--all] > comparison.md

Reads each paper's results.json in both directories and prints Markdown: per paper, the
claims judged in both (not "not run" in either), how many got the same verdict, and every claim
whose verdict differs between the two (paper value, both values, both verdicts); --all lists
the claims with the same verdict too. A claim matched by one simulator and not by the other
points at the simulators; a claim both miss points at the setup or the paper.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any, Dict, List, Tuple


def load(directory: str) -> Dict[str, Dict[Tuple[str, str], Dict[str, Any]]]:
    """{paper: {(experiment, claim): claim object}} from DIRECTORY/<paper>/results.json."""
    out: Dict[str, Dict[Tuple[str, str], Dict[str, Any]]] = {}
    for paper in sorted(os.listdir(directory)):
        path = os.path.join(directory, paper, "results.json")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            results = json.load(fh)
        out[paper] = {(r["experiment"], c["claim"]): c for r in results for c in r.get("claims") or []}
    return out


def value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return "n/a" if not math.isfinite(v) else f"{v:.4g}"
    if v is None:
        return "n/a"
    return str(v)


def status(c: Dict[str, Any]) -> str:
    if c.get("unavailable") is not None:
        return "not run"
    return "matched" if c.get("matched") else "differs"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", metavar="OURS_DIR")
    ap.add_argument("b", metavar="NS2_DIR")
    ap.add_argument("--labels", nargs=2, default=["tcpfriendly", "ns-2"], metavar=("A", "B"))
    ap.add_argument("--all", action="store_true", help="also list the claims with the same verdict")
    args = ap.parse_args(argv)
    la, lb = args.labels
    a, b = load(args.a), load(args.b)
    papers = [p for p in a if p in b]
    if not papers:
        sys.stderr.write("no paper has a results.json in both directories\n")
        return 2
    total = {"both": 0, "same": 0, "a_only": 0, "b_only": 0, "neither": 0, "not_run": 0}
    print(f"# Claims: {la} ({args.a}) against {lb} ({args.b})\n")
    body: List[str] = []
    for paper in papers:
        rows, n = [], {"both": 0, "same": 0, "a_only": 0, "b_only": 0, "neither": 0, "not_run": 0}
        for key, cb in b[paper].items():
            ca = a[paper].get(key)
            if ca is None:
                continue
            sa, sb = status(ca), status(cb)
            if "not run" in (sa, sb):
                n["not_run"] += 1
                continue
            n["both"] += 1
            same = sa == sb
            n["same"] += same
            n["neither"] += sa == sb == "differs"
            n["a_only"] += sa == "matched" and sb == "differs"
            n["b_only"] += sb == "matched" and sa == "differs"
            if not same or args.all:
                rows.append(f"| {key[0]} | {cell(key[1])} | {cell(value(ca.get('paper_value')))} | "
                            f"{value(ca.get('our_value'))} | {value(cb.get('our_value'))} | {sa} | {sb} |")
        for k in total:
            total[k] += n[k]
        body += [f"## {paper}", "",
                 f"{n['both']} claims judged in both ({n['not_run']} not run in one of them): "
                 f"{n['same']} with the same verdict ({n['both'] - n['neither'] - n['a_only'] - n['b_only']} "
                 f"matched by both, {n['neither']} by neither); matched by {la} only: {n['a_only']}; "
                 f"by {lb} only: {n['b_only']}.", ""]
        if rows:
            body += [f"| experiment | claim | paper | {la} | {lb} | {la} verdict | {lb} verdict |",
                     "|---|---|---|---|---|---|---|", *rows, ""]
    print(f"All papers: {total['both']} claims judged in both ({total['not_run']} not run in one of "
          f"them): {total['same']} with the same verdict ({total['neither']} matched by neither); "
          f"matched by {la} only: {total['a_only']}; by {lb} only: {total['b_only']}.\n")
    print("\n".join(body))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
