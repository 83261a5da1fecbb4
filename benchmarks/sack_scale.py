#!/usr/bin/env python3
"""SACK scale: CPU cost per delivered packet at 240 Mb/s and at 9.6 Gb/s (issue 17).

    python3 benchmarks/sack_scale.py                  # builds run_json (release), SACK + linux
    python3 benchmarks/sack_scale.py --json
    python3 benchmarks/sack_scale.py --binary target/compare/<rev>/target/release/examples/run_json
    python3 benchmarks/sack_scale.py --duration 2 --rates 240Mbps,9.6Gbps --recovery sack

Workload: a dumbbell with ``--flows`` (default 8) TCP flows, 20 ms one-way bottleneck delay,
DropTail limited to 1 BDP, access delays 1-5 ms, starts in the first 0.2 s, a receiver window
large enough (2^24 packets) that the windows grow to the bottleneck's BDP, ``--duration``
(default 3) simulated seconds, for each bottleneck rate and each recovery mode. With recovery
that scans the whole scoreboard on every ACK, the cost per packet grows with the window (hence
with the rate); with a linear-time scoreboard it stays about flat.

What is timed: the CPU time (user + system, from ``os.wait4``) of one ``run_json`` process
(scenario JSON on stdin, the engine's result JSON on stdout), divided by the packets delivered
(the sum of the flows' ``packets_delivered``). The simulator's ``events`` are printed too.
Each configuration runs ``--rounds`` times (default 1) and the minimum is kept. The goal
(issue 17): SACK's cost per packet at 9.6 Gb/s within 1.5x of that at 240 Mb/s.

Stdlib only; the binary is built with ``cargo build --release -p tcpf-core --example run_json``
(the command is ``scripts/pgo.py``'s) unless ``--binary`` is given.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOAL = 1.5


def _parse(argv):
    p = argparse.ArgumentParser(prog="sack_scale.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", help="a run_json binary (default: build this tree's)")
    p.add_argument("--rates", default="240Mbps,9.6Gbps", help="bottleneck rates (default 240Mbps,9.6Gbps)")
    p.add_argument("--recovery", default="sack,linux", help="recovery modes (default sack,linux)")
    p.add_argument("--flows", type=int, default=8)
    p.add_argument("--duration", type=float, default=3.0, help="simulated seconds (default 3)")
    p.add_argument("--rounds", type=int, default=1, help="runs per configuration, minimum kept")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)
    if a.flows < 1 or a.duration <= 0 or a.rounds < 1:
        p.error("--flows and --rounds must be >= 1 and --duration > 0")
    return a


def build():
    if HERE not in sys.path:  # (run as a script it is there already; as vs_ns2.pgo_script does)
        sys.path.insert(0, HERE)
    from vs_ns2 import pgo_script  # scripts/pgo.py: the cargo command of each product, one home

    r = subprocess.run(pgo_script().BUILDS["run_json"], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"sack_scale: cargo build failed:\n{r.stderr}")
    return os.path.join(ROOT, "target", "release", "examples", "run_json")


def scenario(rate, recovery, flows, duration, seed):
    return {
        "duration": duration,
        "seed": seed,
        "packet_size": 1000,
        "max_window": 1 << 24,
        "bottleneck": {"rate": rate, "delay": "20ms", "queue": "droptail", "limit": "1bdp"},
        "flows": [{"count": flows, "algorithm": "tcp", "recovery": recovery,
                   "access_delay": "1ms..5ms", "start": "0..0.2"}],
    }


def run_once(binary, scen):
    """(CPU seconds, delivered packets, events) of one run."""
    r_fd, w_fd = os.pipe()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: stdin from the pipe, stdout to the other pipe
        os.dup2(r_fd, 0)
        os.dup2(out_w, 1)
        for fd in (r_fd, w_fd, out_r, out_w):
            os.close(fd)
        try:
            os.execv(binary, [binary])
        finally:
            os._exit(127)
    os.close(r_fd)
    os.close(out_w)
    with os.fdopen(w_fd, "w") as f:
        f.write(json.dumps(scen))
    with os.fdopen(out_r) as f:
        text = f.read()
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"sack_scale: {binary} failed (status {status})")
    result = json.loads(text)
    delivered = sum(fl["packets_delivered"] for fl in result["flows"])
    return usage.ru_utime + usage.ru_stime, delivered, result.get("events")


def main(argv=None):
    a = _parse(argv)
    binary = a.binary or build()
    rates = [r.strip() for r in a.rates.split(",") if r.strip()]
    modes = [m.strip() for m in a.recovery.split(",") if m.strip()]
    rows = []
    for mode in modes:
        for rate in rates:
            scen = scenario(rate, mode, a.flows, a.duration, a.seed)
            best = None
            for _ in range(a.rounds):
                cpu, delivered, events = run_once(binary, scen)
                if best is None or cpu < best[0]:
                    best = (cpu, delivered, events)
            cpu, delivered, events = best
            rows.append({"recovery": mode, "rate": rate, "cpu_s": round(cpu, 3), "delivered": delivered,
                         "events": events, "ns_per_packet": round(1e9 * cpu / max(delivered, 1), 1)})
            if not a.json:
                r = rows[-1]
                print(f"{mode:7s} {rate:>9s}: {r['cpu_s']:8.3f} s CPU, {delivered:>10d} packets delivered, "
                      f"{events} events, {r['ns_per_packet']:9.1f} ns/packet", flush=True)
    ratios = {}
    for mode in modes:
        per = [r["ns_per_packet"] for r in rows if r["recovery"] == mode]
        if len(per) >= 2 and per[0] > 0:
            ratios[mode] = round(per[-1] / per[0], 2)
    if a.json:
        print(json.dumps({"binary": binary, "duration": a.duration, "flows": a.flows, "rows": rows,
                          "ratio_last_over_first": ratios, "goal": GOAL}))
    else:
        for mode, ratio in ratios.items():
            verdict = "within" if ratio <= GOAL else "NOT within"
            print(f"{mode}: cost per packet {rates[-1]} / {rates[0]} = {ratio:.2f} ({verdict} {GOAL}x)")


if __name__ == "__main__":
    main()
