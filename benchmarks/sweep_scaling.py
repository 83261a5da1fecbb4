#!/usr/bin/env python3
"""Sweep scaling: wall time of the same sweep with 1 worker and with N workers.

    .venv/bin/python benchmarks/sweep_scaling.py                 # short and long runs, 1 vs 2 workers
    .venv/bin/python benchmarks/sweep_scaling.py --json
    .venv/bin/python benchmarks/sweep_scaling.py --executor threads    # threads at every count
    .venv/bin/python benchmarks/sweep_scaling.py --executor processes  # local processes at every count
    .venv/bin/python benchmarks/sweep_scaling.py --executor dask # LocalCluster with 1, then 2 workers
    .venv/bin/python benchmarks/sweep_scaling.py --scenario examples/jin2001-red-32.toml --runs 80

Workloads (by default both, each reported with runs/s per worker count and the speed-up):
- short runs: 200 seeds of examples/quickstart.toml cut to 5 simulated s (measured over 1-5 s),
  where the per-run overhead outside the engine dominates;
- long runs: 40 seeds of examples/jin2001-red-32.toml (the foundation's 15 Mbps / 50 ms RED
  dumbbell with 16 + 16 TCP SACK flows, 120 simulated s).
With ``--scenario`` (and ``--runs``, default 40) only that sweep is timed.
Every configuration runs the whole sweep into a fresh output directory (nothing cached), so
each time covers the runs, their Parquet files and the results table. The plan (validating
and hashing every run) is made once before timing; Dask cluster start-up is not timed.
The default executor is what ``tcpf sweep`` uses (``auto``: threads with 1 worker; with more,
the first runs on threads, timed, then threads for runs long enough to scale there and the
process executor's warm pool for short ones); the pools are started, like a Dask cluster,
before timing (their cold start-up is measured once and printed), and each count's line names
what ran its runs. The speed-up is time(first worker count)
/ time(each other count); the configurations alternate for ``--rounds`` rounds (default 3)
and the median time of each is used, so a burst of other work on the machine hits both (the
ratio of each round is printed too). Also printed (threads and processes): CPU seconds of
the process and its worker processes per wall second, about 1 per busy worker when the cores
are free, and the CPU per run in this process and in the workers.

The machine's own ceiling is measured beside it (not with ``--executor dask``): the engine
alone (no Python per run, no files) runs a slice of the same runs in one forked process, then
the same slice in each of N forked processes at once; N x time(one) / time(N at once) is the
speed-up the cores give to independent work. On a virtual machine whose two cores share a
physical core or a busy host it is below N, and a sweep's speed-up cannot exceed it.
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
    p.add_argument("--scenario", default=None,
                   help="time only this scenario's sweep (default: the short and the long workload)")
    p.add_argument("--runs", type=int, default=None,
                   help="seeds, i.e. runs, of --scenario (default 40); with the default workloads "
                        "it replaces both counts")
    p.add_argument("--workload", choices=["both", "short", "long"], default="both",
                   help="the default workloads to time (default both)")
    p.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    p.add_argument("--executor", choices=["auto", "threads", "processes", "dask"], default="auto",
                   help="auto (default: what tcpf sweep picks), threads, processes or dask")
    p.add_argument("--rounds", type=int, default=3,
                   help="alternating repetitions; the median time of each count is used (default 3)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    try:
        args.workers = [int(w) for w in args.workers.split(",")]
    except ValueError:
        p.error(f"--workers: expected comma-separated integers, got {args.workers!r}")
    if (args.runs is not None and args.runs < 1) or args.rounds < 1 or any(w < 1 for w in args.workers):
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


SHORT = {"name": "short runs", "scenario": os.path.join(ROOT, "examples", "quickstart.toml"),
         "runs": 200, "set": {"duration": 5, "measure.from": 1, "measure.to": 5}}
LONG = {"name": "long runs", "scenario": os.path.join(ROOT, "examples", "jin2001-red-32.toml"),
        "runs": 40, "set": None}


def _cpu_of(pids) -> float:
    """CPU seconds (user + system) of the processes ``pids`` so far (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def _start_pools(args, runs: int, workload, base_seed: int) -> dict:
    """Start the warm process pool of every worker count the executor runs on processes
    (before timing, as a Dask cluster's start-up), and page the engine in on its workers with
    a small sweep; returns {workers: start-up seconds}."""
    from concurrent.futures import wait

    from tcpfriendly.sweep import Sweep, executors, run_sweep
    from tcpfriendly.sweep.runner import local_executor

    started = {}
    for w in args.workers:
        kind = args.executor if args.executor != "auto" else \
            ("processes" if w >= 2 else "threads")
        if kind != "processes" or executors.pool_is_warm(w):
            continue
        t0 = time.perf_counter()
        pool = executors.process_pool(w, start=False)
        wait([pool.submit(executors._warm) for _ in range(w)])
        started[w] = time.perf_counter() - t0
        assert local_executor(args.executor, w, runs) == "processes"
        warm = Sweep(workload["scenario"], seeds=2 * w, base_seed=base_seed, set=workload["set"])
        run_sweep(warm, workers=w, quiet=True, executor="processes")
    return started


def _engine_slice(runs, budget_s: float = 1.0):
    """The first runs of the sweep that take about ``budget_s`` of engine time in this process."""
    from tcpfriendly.scenario import _call_engine, native

    chosen, spent = [], 0.0
    for r in runs:
        t = time.perf_counter()
        _call_engine(native().run, r.scenario_json, int(r.seed), None)
        spent += time.perf_counter() - t
        chosen.append(r)
        if spent >= budget_s:
            break
    return chosen


def _forked_wall(runs, processes: int) -> float:
    """Wall time of ``processes`` forked children each running ``runs`` with the engine alone."""
    from tcpfriendly.scenario import _call_engine, native

    start = time.perf_counter()
    pids = []
    for _ in range(processes):
        pid = os.fork()
        if pid == 0:  # the child: the engine only, then leave without Python's shutdown
            code = 0
            try:
                for r in runs:
                    _call_engine(native().run, r.scenario_json, int(r.seed), None)
            except BaseException:
                code = 1
            os._exit(code)
        pids.append(pid)
    failed = [pid for pid in pids if os.waitpid(pid, 0)[1] != 0]
    if failed:
        raise SystemExit(f"sweep_scaling: {len(failed)} engine-only child process(es) failed")
    return time.perf_counter() - start


def machine_ceiling(runs, workers, rounds: int) -> dict:
    """N x time(one process) / time(N processes at once) for each worker count N > 1, the
    engine alone on the same slice of runs, alternating for ``rounds`` rounds (medians)."""
    chosen = _engine_slice(runs)
    counts = sorted(set([1] + [w for w in workers if w > 1]))
    times = {n: [] for n in counts}
    for _ in range(rounds):
        for n in counts:
            times[n].append(_forked_wall(chosen, n))
    one = statistics.median(times[1])
    return {"runs_per_process": len(chosen),
            "speedup": {str(n): n * one / statistics.median(times[n]) for n in counts if n > 1}}


def measure(args, workload) -> dict:
    """Time one sweep with each worker count, alternating for ``args.rounds`` rounds."""
    from tcpfriendly.sweep import Sweep, run_sweep
    from tcpfriendly.sweep import executors

    sweep = Sweep(workload["scenario"], seeds=workload["runs"], set=workload["set"])
    t0 = time.perf_counter()
    points, runs = sweep.plan()
    plan_s = time.perf_counter() - t0
    # Before any thread or pool exists (the children are forked from this process).
    ceiling = machine_ceiling(runs, args.workers, args.rounds) \
        if args.executor != "dask" and hasattr(os, "fork") else None
    scratch = tempfile.mkdtemp(prefix="tcpf-sweep-scaling-")
    # Warm up (page in the engine, pyarrow with its Parquet writer, pandas) and start the
    # process pools outside the timed region.
    warm = Sweep(workload["scenario"], seeds=1, base_seed=sweep.seeds[0], set=workload["set"])
    run_sweep(warm, os.path.join(scratch, "warm"), workers=1, quiet=True, executor="threads")
    pool_start = _start_pools(args, len(runs), workload, sweep.seeds[0]) \
        if args.executor != "dask" else {}
    kinds = {w: set() for w in args.workers}  # what ran each count's runs (SweepResult.executor)

    times = {w: [] for w in args.workers}
    cpu = {w: [] for w in args.workers}
    parent_ms = {w: [] for w in args.workers}
    worker_ms = {w: [] for w in args.workers}
    try:
        for r in range(args.rounds):
            for w in args.workers:
                out = os.path.join(scratch, f"w{w}-r{r}")
                cluster = client = None
                if args.executor == "dask":  # one cluster at a time; start-up not timed
                    cluster, client = _start_cluster(w)
                    kwargs = {"dask": client}
                else:
                    kwargs = {"workers": w, "executor": args.executor}
                pids = executors.pool_pids()
                try:
                    c0, p0 = os.times(), _cpu_of(pids)
                    start = time.perf_counter()
                    result = run_sweep(sweep, out, quiet=True, **kwargs)
                    wall = time.perf_counter() - start
                    c1, p1 = os.times(), _cpu_of(pids)
                finally:
                    if client is not None:
                        client.close()
                        cluster.close()
                times[w].append(wall)
                kinds[w].add(result.executor)
                own = c1.user - c0.user + c1.system - c0.system
                # the warm pool's workers, and any reaped child processes
                others = p1 - p0 + c1.children_user - c0.children_user + \
                    c1.children_system - c0.children_system
                cpu[w].append((own + others) / wall)
                parent_ms[w].append(1e3 * own / len(runs))
                worker_ms[w].append(1e3 * others / len(runs))
                if result.ran != len(runs) or result.failures:
                    raise SystemExit(f"sweep_scaling: {w} workers ran {result.ran} of {len(runs)} "
                                     f"runs ({len(result.failures)} failed)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    base = args.workers[0]
    median = {w: statistics.median(ts) for w, ts in times.items()}
    return {
        "name": workload["name"],
        "scenario": os.path.relpath(workload["scenario"], ROOT),
        "set": workload["set"],
        "runs": len(runs),
        "plan_s": plan_s,
        "executor": {str(w): "/".join(sorted(kinds[w])) for w in args.workers},
        "pool_start_s": {str(w): v for w, v in pool_start.items()},
        "wall_s": {str(w): median[w] for w in args.workers},
        "all_wall_s": {str(w): times[w] for w in args.workers},
        "runs_per_s": {str(w): len(runs) / median[w] for w in args.workers},
        "cpu_per_wall": {str(w): statistics.median(cpu[w]) for w in args.workers},
        "cpu_ms_per_run": {str(w): {"this process": statistics.median(parent_ms[w]),
                                    "workers": statistics.median(worker_ms[w])}
                           for w in args.workers},
        "speedup": {str(w): median[base] / median[w] for w in args.workers if w != base},
        "round_speedups": {str(w): [a / b for a, b in zip(times[base], times[w])]
                           for w in args.workers if w != base},
        "machine_ceiling": ceiling,
    }


def main(argv=None) -> int:
    args = _parse(argv)
    from tcpfriendly import __version__

    if args.scenario is not None:
        workloads = [{"name": "sweep", "scenario": args.scenario, "runs": args.runs or 40, "set": None}]
    else:
        chosen = {"both": (SHORT, LONG), "short": (SHORT,), "long": (LONG,)}[args.workload]
        workloads = [dict(w, runs=args.runs or w["runs"]) for w in chosen]
    report = {"tcpfriendly": __version__, "executor": args.executor, "cores": os.cpu_count(),
              "rounds": args.rounds, "workloads": [measure(args, w) for w in workloads]}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    base = args.workers[0]
    rounds = f", median of {args.rounds} alternating rounds" if args.rounds > 1 else ""
    print(f"sweep scaling ({args.executor}, {report['cores']} cores, tcpfriendly {__version__}{rounds}; "
          f"planning not timed)")
    for r in report["workloads"]:
        sets = f" with {r['set']}" if r["set"] else ""
        print(f"  {r['name']}: {r['runs']} runs of {r['scenario']}{sets}")
        for w in args.workers:
            k = str(w)
            extra = "" if w == base else \
                (f"   speed-up {r['speedup'][k]:.2f}x (rounds: "
                 f"{', '.join(f'{x:.2f}' for x in r['round_speedups'][k])})")
            load = ""
            if args.executor != "dask":
                c = r["cpu_ms_per_run"][k]
                load = (f"  CPU/wall {r['cpu_per_wall'][k]:.2f}  CPU/run {c['this process']:.2f} "
                        f"+ {c['workers']:.2f} ms (this process + workers)")
            print(f"    {w} worker{'s' if w != 1 else ' '} ({r['executor'][k]}): "
                  f"{r['wall_s'][k]:6.2f} s  {r['runs_per_s'][k]:6.1f} runs/s{load}{extra}")
        for k, v in r["pool_start_s"].items():
            print(f"    (start-up of the {k}-process pool, not timed above: {v:.2f} s)")
        c = r["machine_ceiling"]
        if c and c["speedup"]:
            ups = ", ".join(f"{n} at once {x:.2f}x" for n, x in c["speedup"].items())
            print(f"    machine ceiling (the engine alone, {c['runs_per_process']} runs per forked "
                  f"process, no Python per run): {ups}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
