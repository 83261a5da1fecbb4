#!/usr/bin/env python3
"""Wall time of tcpfriendly against ns-2 2.35 on the reference workload.

Reference workload (jin2001 Figs. 14-17 setting): dumbbell 60 Mbps / 50 ms, RED with jin2001's
Table 4 settings (limit 2.5 x BDP, min_th 0.15 limit, max_th 0.5 limit, q_weight 0.002,
max_p 0.1, gentle, wait), 16 + 16 SACK flows (two groups of standard TCP) with access delays
spread over 1-10 ms and starts in the first second, 1000-byte packets, max window 128,
500 simulated seconds.

Both simulators run in this invocation on the same expanded scenario
(`tcpfriendly.expand` -> `tcpfriendly.ns2.export_tcl`). Reported per side: wall time of the run
alone (tcpfriendly: the `run` call, import time reported separately; ns-2: the `ns` process),
delivered packets, and delivered packets per wall second; then the ratio ns-2 / tcpfriendly.

    .venv/bin/python benchmarks/vs_ns2.py                  # the reference workload
    .venv/bin/python benchmarks/vs_ns2.py --duration 100 --flows 8 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from typing import Any, Dict, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(HERE, "..", "python"))  # fallback when not installed

RATE_BPS = 60e6
DELAY_S = 0.05
PACKET = 1000


def scenario_dict(duration: float, flows: int, seed: int) -> Dict[str, Any]:
    """The reference workload as a scenario dict (TOML structure)."""
    half = flows // 2
    groups = [half, flows - half]
    return {
        "duration": duration,
        "seed": seed,
        "packet_size": PACKET,
        "max_window": 128,
        "bottleneck": {
            "rate": "60Mbps", "delay": "50ms", "queue": "red", "limit": "2.5bdp",
            # min_th / max_th default to 0.15 / 0.5 of the limit (jin2001 Table 4)
            "red": {"q_weight": 0.002, "max_p": 0.1, "gentle": True, "wait": True},
        },
        "flows": [
            {"count": n, "algorithm": "tcp", "recovery": "sack",
             "access_delay": "1ms..10ms", "start": "0..1"}
            for n in groups if n > 0
        ],
    }


def fallback_expanded(duration: float, flows: int, seed: int) -> Dict[str, Any]:
    """Expanded scenario written out by hand, for when the compiled engine is not available.
    Mirrors the engine's expansion: access delays evenly spread per group, starts uniform in
    [0, 1), limit 2.5 x BDP with BDP from the mean two-way propagation delay."""
    rng = random.Random(seed)
    half = flows // 2
    out, delays = [], []
    fid = 0
    for g, n in enumerate([half, flows - half]):
        for k in range(n):
            d = 0.001 + 0.009 * (k / (n - 1) if n > 1 else 0.5)
            delays.append(d)
            out.append({"id": fid, "group": g, "kind": "tcp", "algorithm": "tcp", "params": {},
                        "recovery": "sack", "direction": "forward", "access_delay_s": d,
                        "receiver_delay_s": 0.0, "access_rate_bps": 10 * RATE_BPS,
                        "start_s": rng.random(), "stop_s": None, "ecn": False})
            fid += 1
    rtt = sum(2 * (d + DELAY_S) for d in delays) / len(delays)
    limit = round(2.5 * RATE_BPS * rtt / (8 * PACKET))
    return {
        "seed": seed, "duration_s": duration, "measure": {"from_s": 0.0, "to_s": duration},
        "packet_size": PACKET, "max_window": 128,
        "tcp": {"initial_window": 2, "tick_s": 0.01, "min_rto_s": 0.2, "initial_rto_s": 3.0,
                "max_rto_s": 60.0, "delayed_ack": False, "delack_timeout_s": 0.1, "ack_size": 40},
        "bottleneck": {"rate_bps": RATE_BPS, "delay_s": DELAY_S, "queue": "red", "limit_pkts": limit,
                       "ecn": False, "loss": None,
                       "red": {"min_th_pkts": 0.15 * limit, "max_th_pkts": 0.5 * limit,
                               "q_weight": 0.002, "max_p": 0.1, "gentle": True, "wait": True,
                               "mean_pkt_size": PACKET}},
        "flows": out, "scenario": {},
    }


def run_engine(scenario: Dict[str, Any], seed: int) -> Dict[str, Any]:
    t0 = time.perf_counter()
    import tcpfriendly  # noqa: F401  (import time is reported, not counted)
    from tcpfriendly import _core  # noqa: F401
    import_s = time.perf_counter() - t0
    from tcpfriendly import Scenario, run
    sc = Scenario(scenario)
    t0 = time.perf_counter()
    res = run(sc, seed=seed)
    wall = time.perf_counter() - t0
    delivered = int(sum(f["packets_delivered"] for f in res.raw["flows"]))
    return {"wall_s": wall, "import_s": import_s, "delivered_packets": delivered,
            "delivered_per_wall_s": delivered / wall if wall > 0 else None}


def run_ns(expanded: Dict[str, Any], ns_binary: str) -> Dict[str, Any]:
    from tcpfriendly import ns2
    # no Tcl-side cwnd/RTT sampling: time ns-2's simulation, not our instrumentation
    res = ns2.run_ns2(expanded, ns_binary=ns_binary, sample_interval_s=None)
    delivered = int(res["ns2"]["delivered_packets"])
    wall = res["wall_s"]
    return {"wall_s": wall, "delivered_packets": delivered,
            "delivered_per_wall_s": delivered / wall if wall > 0 else None,
            "loss_events": sum(f["loss_events"] for f in res["flows"]),
            "utilization": res["links"][0]["utilization"]}


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=500.0, help="simulated seconds (500)")
    ap.add_argument("--flows", type=int, default=32, help="SACK flows in all, split into two groups (32)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ns", default="ns", help="ns-2 binary (ns)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if args.flows < 1 or args.duration <= 0:
        ap.error("--flows must be >= 1 and --duration > 0")

    scenario = scenario_dict(args.duration, args.flows, args.seed)
    report: Dict[str, Any] = {"workload": {"rate": "60Mbps", "delay": "50ms", "queue": "red (jin2001 Table 4)",
                                           "flows": args.flows, "duration_s": args.duration, "seed": args.seed}}

    # ---- tcpfriendly ----
    engine_error = None
    try:
        report["tcpfriendly"] = run_engine(scenario, args.seed)
        from tcpfriendly import expand
        expanded = expand(scenario, seed=args.seed)
        report["expanded_by"] = "tcpfriendly.expand"
    except ImportError as exc:  # the compiled engine is not built
        engine_error = str(exc).splitlines()[0]
        report["tcpfriendly"] = {"error": engine_error}
        expanded = fallback_expanded(args.duration, args.flows, args.seed)
        report["expanded_by"] = "benchmarks/vs_ns2.py fallback (engine not built)"

    # ---- ns-2 ----
    from tcpfriendly import ns2
    if ns2.ns2_available(args.ns):
        report["ns2"] = run_ns(expanded, args.ns)
    else:
        report["ns2"] = {"error": f"ns-2 binary {args.ns!r} not found (apt-get install ns2)"}

    tf, ns = report["tcpfriendly"], report["ns2"]
    if "wall_s" in tf and "wall_s" in ns and tf["wall_s"] > 0:
        report["speedup_ns2_over_tcpfriendly"] = ns["wall_s"] / tf["wall_s"]

    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    w = report["workload"]
    print(f"workload: {w['flows']} SACK flows, 60 Mbps / 50 ms RED (jin2001 Table 4), "
          f"{w['duration_s']:g} s simulated, seed {w['seed']}  [expanded by {report['expanded_by']}]")
    for name, side in (("tcpfriendly", tf), ("ns-2", ns)):
        if "error" in side:
            print(f"  {name:12s} not run: {side['error']}")
            continue
        extra = f"  (import {side['import_s']:.3f} s, not counted)" if "import_s" in side else ""
        print(f"  {name:12s} wall {side['wall_s']:8.3f} s   delivered {side['delivered_packets']:>10,d} pkts"
              f"   {side['delivered_per_wall_s'] / 1e6:7.3f} M delivered pkts / wall s{extra}")
    if "speedup_ns2_over_tcpfriendly" in report:
        print(f"  ratio ns-2 / tcpfriendly wall time: {report['speedup_ns2_over_tcpfriendly']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
