#!/usr/bin/env python3
"""sastry2005 Table I per seed: the trough test's metrics of TCP, LOG, SQRT and IIAD over many
seeds, with 95% CIs of the means, the differences paired by seed and the orders of 10-run
blocks (docs/evaluate-tsao2007.md, "sastry2005 Table I", is written from its output).

    .venv/bin/python scripts/trough_seeds.py --seeds 200 --workers 2    # ~4 min on 2 cores

The runs are `tcpf evaluate`'s own jobs for the experiment (experiments/sastry2005/trough/,
seeds 1..N, full mode), reduced by its own reducer, so the means are those of
`tcpf reproduce sastry2005 --only table1-trough --seeds N`.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

from tcpfriendly.evaluate import core, runner  # noqa: E402
from tcpfriendly.metrics import dynamics as dyn  # noqa: E402

SCHEMES = ("tcp", "log", "sqrt", "iiad")
KEYS = ("utilization_metric", "drop_metric", "steady_utilization", "steady_drop_rate", "t_util_recover_s", "util_dip")


def per_seed(alg: str, seeds: int, workers: int):
    """{seed: the trough metrics} for `alg`: `tcpf evaluate`'s own plan of the experiment
    (full mode, seeds 1..N) run by its executor (threads; the engine releases the GIL)."""
    plan = core._plan(alg, None, None, False, seeds, None, None, ["sastry2005"], 1)
    results = runner.execute(plan.jobs, workers=workers, label=alg)
    return {job.seed: {k: r[k] for k in KEYS} for job, r in zip(plan.jobs, results)}


def ci(xs) -> str:
    c = dyn.mean_ci95(list(xs))
    return f"{c['mean']:.2f} [{c['lo']:.2f}, {c['hi']:.2f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    if not 10 <= a.seeds <= 2000:
        sys.exit("--seeds: must be in [10, 2000]")
    by = {alg: per_seed(alg, a.seeds, max(1, a.workers)) for alg in SCHEMES}
    seeds = sorted(by["tcp"])
    first10 = seeds[:10]
    print("| scheme | UM, 10 runs | UM, all | DM, 10 runs | DM, all | steady util. | steady drop | T_U (s) | dip range |")
    print("|---|---|---|---|---|---|---|---|---|")
    for alg in SCHEMES:
        d = by[alg]
        col = lambda k, ss: ci(d[s][k] for s in ss)  # noqa: E731
        dips = [d[s]["util_dip"] for s in seeds]
        print(f"| {alg} | {col('utilization_metric', first10)} | {col('utilization_metric', seeds)} | "
              f"{col('drop_metric', first10)} | {col('drop_metric', seeds)} | {col('steady_utilization', seeds)} | "
              f"{col('steady_drop_rate', seeds)} | {col('t_util_recover_s', seeds)} | {min(dips):.2f}-{max(dips):.2f} |")
    print(f"\npaired by seed ({len(seeds)} seeds), utilisation metric:")
    for x, y in (("iiad", "tcp"), ("sqrt", "iiad"), ("log", "tcp"), ("log", "sqrt"), ("sqrt", "tcp")):
        print(f"  {x} - {y} = {ci(by[x][s]['utilization_metric'] - by[y][s]['utilization_metric'] for s in seeds)}")
    blocks = [seeds[i:i + 10] for i in range(0, len(seeds) - 9, 10)]
    orders = collections.Counter(
        tuple(sorted(SCHEMES, key=lambda g: sum(by[g][s]["utilization_metric"] for s in b))) for b in blocks)
    print(f"\n{len(blocks)} disjoint 10-run blocks: {len(orders)} orders of the four means; the paper's "
          f"(tcp < log < sqrt < iiad) in {orders.get(('tcp', 'log', 'sqrt', 'iiad'), 0)}, "
          f"TCP lowest in {sum(n for o, n in orders.items() if o[0] == 'tcp')}, "
          f"IIAD highest in {sum(n for o, n in orders.items() if o[-1] == 'iiad')}")


if __name__ == "__main__":
    main()
