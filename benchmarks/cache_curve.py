#!/usr/bin/env python3
"""How much last-level cache a workload needs: cachegrind's misses per delivered packet with the last level modelled at each size, and (--host) this machine's load latency at the same sizes.

vs_ns2.py's 3 200-flow figure depends on the host's mood (its cost per packet moved 1.46-1.82x
the 32-flow one across invocations of one binary). This script gives the two deterministic
facts behind it: how many of a packet's memory reads miss a last-level cache of each size
(cachegrind simulates the caches, so the counts are the same on every machine and every run),
and, with --host, how long this machine takes to fetch a line from a working set of that size
(a pointer chase in C, benchmarks/cache_probe.c). Where the workload's misses fall off (its
working set) lies beyond the sizes this host serves quickly, the run waits on memory.

Workloads: vs_ns2.py's (dumbbell 50 ms, RED of jin2001 Table 4, SACK flows in two groups,
rate 60 Mbps x flows / 32), one per --flows count. Each is run twice under
`valgrind --tool=cachegrind --cache-sim=yes` (L1 32 KiB 8-way as this EPYC's; the last level
at each --sizes value, 16-way), for --duration and for twice that, and the difference is
divided by the difference in delivered packets: start-up (building the network), the result's
serialisation and the teardown cancel out, what is left is the steady state's cost per packet.
Printed per workload and size: last-level read misses (LLr), L1 data read misses (D1r) and
instructions (Ir) per delivered packet.

    .venv/bin/python benchmarks/cache_curve.py                        # 32 and 3 200 flows (~4 min)
    .venv/bin/python benchmarks/cache_curve.py --host                 # and this host's latency
    .venv/bin/python benchmarks/cache_curve.py --flows 1000 --sizes 4,8,16 --json

Needs valgrind (apt-get install valgrind); --host needs a C compiler (cc). The engine is the
plain release build of the run_json example (built first; cache misses do not depend on the
profile-guided build's code layout, instructions do a little).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
# one home for the workload, the engine binary and the argument types
from vs_ns2 import (RATE_BPS, REF_FLOWS, RUN_JSON, Parser, build_run_json, count, delivered_packets,  # noqa: E402
                    flow_counts, scenario_dict)

MIB = 1 << 20
SIZES_MIB = [1, 2, 4, 8, 16, 32]
MAX_SIZE_MIB = 1024
PROBE_C = os.path.join(HERE, "cache_probe.c")
# cachegrind's summary lines, e.g. "==12== LL misses:   4,527,119  (  3,079,882 rd   +   1,447,237 wr)"
SUMMARY = re.compile(r"==\d+== (I|D1 |LL) *(refs|misses): *([\d,]+)(?: *\( *([\d,]+) rd)?")


def sizes_mib(text: str) -> List[int]:
    """--sizes: comma-separated powers of two of MiB in [1, MAX_SIZE_MIB]."""
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        out = []
    if not out or any(s < 1 or s > MAX_SIZE_MIB or s & (s - 1) for s in out):
        raise argparse.ArgumentTypeError(f"must be comma-separated powers of two in [1, {MAX_SIZE_MIB}] "
                                         f"(MiB; cachegrind needs a power-of-two number of sets); got {text!r}")
    return sorted(set(out))


def parse_counts(log: str) -> Dict[str, int]:
    """Instructions, L1 data read misses and last-level read misses from cachegrind's summary."""
    def num(text: str) -> int:
        return int(text.replace(",", ""))

    found: Dict[str, int] = {}
    for m in SUMMARY.finditer(log):
        level, what, total, rd = m.group(1).strip(), m.group(2), m.group(3), m.group(4)
        if level == "I" and what == "refs":
            found["Ir"] = num(total)
        elif level == "D1" and what == "misses" and rd:
            found["D1r"] = num(rd)
        elif level == "LL" and what == "misses" and rd:
            found["LLr"] = num(rd)
    missing = {"Ir", "D1r", "LLr"} - set(found)
    if missing:
        raise ValueError(f"cachegrind's summary lacks {sorted(missing)}")
    return found


def cachegrind(binary: str, scenario: Dict[str, Any], size_mib: int) -> Dict[str, int]:
    """One run of the engine under cachegrind: its counts and its delivered packets."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--D1=32768,8,64", "--I1=32768,8,64",
                f"--LL={size_mib * MIB},16,64", f"--cachegrind-out-file={os.path.join(tmp, 'cg.out')}", binary]
        p = subprocess.run(argv, input=json.dumps(scenario), capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"cache_curve: the engine failed under cachegrind (exit {p.returncode}):\n{p.stderr[-2000:]}")
    counts = parse_counts(p.stderr)
    counts["packets"] = delivered_packets(json.loads(p.stdout))
    return counts


def per_packet(short: Dict[str, int], long: Dict[str, int]) -> Dict[str, float]:
    """The steady state's counts per delivered packet: the longer run minus the shorter."""
    pkts = long["packets"] - short["packets"]
    if pkts <= 0:
        raise SystemExit("cache_curve: the longer run delivered no more packets than the shorter; "
                         "raise --duration")
    return {k: (long[k] - short[k]) / pkts for k in ("LLr", "D1r", "Ir")}


def durations(flows: int, duration: int) -> Tuple[int, int]:
    """The simulated seconds of a workload's two runs: workloads of at most 32 flows deliver few
    packets a second, so theirs are 10 times as long."""
    short = duration * (10 if flows <= REF_FLOWS else 1)
    return short, 2 * short


def probe_binary() -> Tuple[Optional[str], str]:
    """benchmarks/cache_probe.c built with cc into target/ (keyed by its source and flags; its
    largest size is MAX_SIZE_MIB): (path, error)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None, "--host needs a C compiler (cc)"
    flags = ["-O2", f"-DMAX_MIB={MAX_SIZE_MIB}"]
    src = open(PROBE_C, "rb").read() + " ".join(flags).encode()
    out = os.path.join(ROOT, "target", f"cache_probe-{hashlib.sha256(src).hexdigest()[:12]}")
    if not os.path.exists(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        p = subprocess.run([cc, *flags, "-o", out + ".tmp", PROBE_C], capture_output=True, text=True)
        if p.returncode != 0:
            return None, f"cc failed on {PROBE_C}: {p.stderr[-500:]}"
        os.replace(out + ".tmp", out)
    return out, ""


def host_latency(sizes: List[int], rounds: int) -> List[List[float]]:
    """ns per dependent load over a random cycle of each size, `rounds` times (each round: every
    size in turn); the host's share of a shared cache moves with its neighbours' work."""
    binary, err = probe_binary()
    if binary is None:
        raise SystemExit(f"cache_curve: {err}")
    each = []
    for _ in range(rounds):
        p = subprocess.run([binary] + [str(s) for s in sizes], capture_output=True, text=True, check=True)
        each.append([float(x) for x in p.stdout.split()])
    return [list(col) for col in zip(*each)]


def main(argv: Optional[list] = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=flow_counts, default=[REF_FLOWS, 3200],
                    help=f"comma-separated flow counts, rate 60 Mbps x flows / 32 ('{REF_FLOWS},3200')")
    ap.add_argument("--duration", type=count(1, 1000, "a whole number of simulated seconds"), default=2,
                    help="simulated seconds of the shorter run of each pair, the longer has twice as many, "
                         "in [1, 1000] (2; workloads of 32 flows or fewer get 10 times as many: their packets are few)")
    ap.add_argument("--sizes", type=sizes_mib, default=SIZES_MIB,
                    help="last-level sizes to model, MiB, comma-separated powers of two ('1,2,4,8,16,32')")
    ap.add_argument("--jobs", type=count(1, 64), default=min(2, os.cpu_count() or 1),
                    help="cachegrind runs at once (the number of cores, at most 2)")
    ap.add_argument("--host", action="store_true",
                    help="also measure this host's load latency at each size (benchmarks/cache_probe.c)")
    ap.add_argument("--host-rounds", type=count(1, 100), default=5,
                    help="rounds of the host's latency probe; the median and the range are printed (5)")
    ap.add_argument("--run-json", default=None, help="run_json binary (default: built with cargo first)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if not args.flows:
        ap.error("--flows: give at least one flow count")
    if args.run_json is not None and not os.path.exists(args.run_json):
        ap.error(f"--run-json: {args.run_json} does not exist")
    if shutil.which("valgrind") is None:
        raise SystemExit("cache_curve: valgrind is not installed (apt-get install valgrind)")
    if args.run_json is None:
        build_run_json()
        args.run_json = RUN_JSON

    flow_list = list(dict.fromkeys(args.flows))  # each workload once, in the order given
    jobs = [(flows, size, d) for flows in flow_list for size in args.sizes for d in durations(flows, args.duration)]
    print(f"cache_curve: {len(jobs)} runs under cachegrind, {args.jobs} at a time", file=sys.stderr)
    got: Dict[Tuple[int, int, int], Dict[str, int]] = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        running = {pool.submit(cachegrind, args.run_json, scenario_dict(d, flows, 1, RATE_BPS * flows / REF_FLOWS), size):
                   (flows, size, d) for flows, size, d in jobs}
        for done, fut in enumerate(concurrent.futures.as_completed(running), 1):
            got[running[fut]] = fut.result()
            flows, size, d = running[fut]
            print(f"cache_curve: [{done}/{len(jobs)}] {flows} flows, {d} s, last level {size} MiB", file=sys.stderr)
    report: Dict[str, Any] = {"sizes_mib": args.sizes, "workloads": []}
    for flows in flow_list:
        short, long = durations(flows, args.duration)
        rows = [per_packet(got[(flows, s, short)], got[(flows, s, long)]) for s in args.sizes]
        report["workloads"].append({"flows": flows, "durations_s": [short, long], "per_packet": rows})
    if args.host:
        lat = host_latency(args.sizes, args.host_rounds)
        report["host_ns_per_load"] = lat

    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    head = "".join(f"{f'{s} MiB':>9}" for s in args.sizes)
    print(f"last level modelled at {head}")
    for w in report["workloads"]:
        print(f"  {w['flows']} flows, {w['durations_s'][0]:g} -> {w['durations_s'][1]:g} s simulated, per delivered packet:")
        for key, what, fmt in (("LLr", "last-level read misses", "{:9.2f}"), ("D1r", "L1 data read misses", "{:9.1f}"),
                               ("Ir", "instructions", "{:9.0f}")):
            # a difference of two counts can come out a hair below zero where nothing misses
            print(f"    {what:<24}" + "".join(fmt.format(max(r[key], 0.0)) for r in w["per_packet"]))
    if args.host:
        med = [statistics.median(c) for c in report["host_ns_per_load"]]
        print(f"  this host, ns per dependent load over that many bytes (median of {args.host_rounds}):")
        print(f"    {'median':<24}" + "".join(f"{m:9.1f}" for m in med))
        print(f"    {'range':<24}" + "".join(f"{f'{min(c):.0f}-{max(c):.0f}':>9}" for c in report["host_ns_per_load"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
