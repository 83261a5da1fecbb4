#!/usr/bin/env python3
"""Sweep scaling: wall time of the same sweep with 1 worker and with N workers.

    .venv/bin/python benchmarks/sweep_scaling.py                 # 40 seeds of jin2001-red-32, 1 vs 2 threads
    .venv/bin/python benchmarks/sweep_scaling.py --json
    .venv/bin/python benchmarks/sweep_scaling.py --executor dask # LocalCluster with 1, then 2 workers
    .venv/bin/python benchmarks/sweep_scaling.py --runs 80 --workers 1,2 --rounds 3

Workload: ``--runs`` seeds of ``--scenario`` (default: examples/jin2001-red-32.toml, the
foundation's 15 Mbps / 50 ms RED dumbbell with 16 + 16 TCP SACK flows, 120 simulated s).
Every configuration runs the whole sweep into a fresh output directory (nothing cached), so
each time covers the runs, their Parquet files and the results table. The plan (validating
and hashing every run) is made once before timing; Dask cluster start-up is not timed.
The speed-up is time(first worker count) / time(each other count); the configurations
alternate for ``--rounds`` rounds (default 3) and the median time of each is used, so a burst
of other work on the machine hits both. Also printed: process CPU seconds per wall second
(threads executor), about 1 per busy worker when the cores are free.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _parse(argv):
    p = argparse.ArgumentParser(prog="sweep_scaling.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--scenario", default=os.path.join(ROOT, "examples", "jin2001-red-32.toml"))
    p.add_argument("--runs", type=int, default=40, help="seeds, i.e. runs (default 40)")
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    p.add_argument("--executor", choices=["threads", "dask"], default="threads")
    p.add_argument("--rounds", type=int, default=3,
                   help="alternating repetitions; the median time of each count is used (default 3)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    try:
        args.workers = [int(w) for w in args.workers.split(",")]
    except ValueError:
        p.error(f"--workers: expected comma-separated integers, got {args.workers!r}")
    if args.runs < 1 or args.rounds < 1 or any(w < 1 for w in args.workers):
        p.error("--runs, --rounds and --workers must be positive")
    return args


def _start_cluster(workers: int):
    """A LocalCluster of ``workers`` single-threaded processes, tcpfriendly imported on each."""
    import logging

    from distributed import Client, LocalCluster

    for name in ("distributed", "distributed.scheduler", "distributed.core", "distributed.nanny"):
        logging.getLogger(name).setLevel(logging.ERROR)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    client = Client(cluster)
    client.run(lambda: __import__("tcpfriendly.sweep"))
    return cluster, client


def main(argv=None) -> int:
    args = _parse(argv)
    from tcpfriendly import __version__
    from tcpfriendly.sweep import Sweep, run_sweep

    sweep = Sweep(args.scenario, seeds=args.runs)
    t0 = time.perf_counter()
    points, runs = sweep.plan()
    plan_s = time.perf_counter() - t0
    # Warm up (page in the engine, pyarrow, pandas) outside the timed region.
    warm = Sweep(args.scenario, seeds=1, base_seed=sweep.seeds[0])
    run_sweep(warm, workers=1, quiet=True)

    times = {w: [] for w in args.workers}
    cpu = {w: [] for w in args.workers}
    scratch = tempfile.mkdtemp(prefix="tcpf-sweep-scaling-")
    try:
        for r in range(args.rounds):
            for w in args.workers:
                out = os.path.join(scratch, f"w{w}-r{r}")
                cluster = client = None
                if args.executor == "dask":  # one cluster at a time; start-up not timed
                    cluster, client = _start_cluster(w)
                    kwargs = {"dask": client}
                else:
                    kwargs = {"workers": w}
                try:
                    c0 = os.times()
                    start = time.perf_counter()
                    result = run_sweep(sweep, out, quiet=True, **kwargs)
                    wall = time.perf_counter() - start
                    c1 = os.times()
                finally:
                    if client is not None:
                        client.close()
                        cluster.close()
                times[w].append(wall)
                cpu[w].append((c1.user - c0.user + c1.system - c0.system) / wall)
                if result.ran != len(runs) or result.failures:
                    raise SystemExit(f"sweep_scaling: {w} workers ran {result.ran} of {len(runs)} "
                                     f"runs ({len(result.failures)} failed)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    base = args.workers[0]
    median = {w: statistics.median(ts) for w, ts in times.items()}
    report = {
        "tcpfriendly": __version__,
        "scenario": os.path.relpath(args.scenario, ROOT),
        "runs": len(runs),
        "executor": args.executor,
        "cores": os.cpu_count(),
        "plan_s": plan_s,
        "wall_s": {str(w): median[w] for w in args.workers},
        "all_wall_s": {str(w): times[w] for w in args.workers},
        "runs_per_s": {str(w): len(runs) / median[w] for w in args.workers},
        "cpu_per_wall": {str(w): statistics.median(cpu[w]) for w in args.workers},
        "speedup": {str(w): median[base] / median[w] for w in args.workers if w != base},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"sweep scaling: {len(runs)} runs of {report['scenario']} ({args.executor}, "
          f"{report['cores']} cores, tcpfriendly {__version__}; plan {plan_s:.2f} s, not timed)")
    for w in args.workers:
        extra = "" if w == base else f"   speed-up {median[base] / median[w]:.2f}x"
        rounds = f" (median of {args.rounds})" if args.rounds > 1 else ""
        load = f"  CPU/wall {statistics.median(cpu[w]):.2f}" if args.executor == "threads" else ""
        print(f"  {w} worker{'s' if w != 1 else ' '}: {median[w]:6.2f} s{rounds}  "
              f"{len(runs) / median[w]:6.1f} runs/s{load}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
