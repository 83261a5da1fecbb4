"""Running the evaluation's simulations and reducing each run to the numbers it needs.

Execution goes through ONE adapter, :func:`execute`: today a plain ``concurrent.futures``
process pool over :func:`tcpfriendly.run` (the sweep engine reduces every run to per-group
rows and keeps no time series or loss log, which the yardsticks need; when it can return
per-run reductions, :func:`execute` is the only place to change). Each run is reduced in the
worker (:data:`REDUCERS`) to a small JSON-able dict; with ``out`` the reductions are cached in
``out/runs/<key>.json`` (key = SHA-256 of the scenario, seed, reducer and version), so an
interrupted evaluation resumes and the TCP reference runs are shared between algorithms.
Python controllers run in-process (their classes need not be importable by workers).
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import math
import os
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional

import numpy as np
import pandas as pd

from ..metrics import dynamics as dyn

__all__ = ["Job", "execute", "REDUCERS"]


class Job:
    """One simulation: a filled scenario, a seed, a time-series interval and a reducer."""

    def __init__(self, scenario: Dict[str, Any], seed: int, reducer: str,
                 ctx: Optional[Dict[str, Any]] = None, timeseries: Optional[float] = None):
        self.scenario = scenario
        self.seed = int(seed)
        self.reducer = reducer
        self.ctx = ctx or {}
        self.timeseries = timeseries

    def key(self, version: str) -> str:
        blob = json.dumps([self.scenario, self.seed, self.reducer, self.ctx, self.timeseries, version],
                          sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:24]


# ----- reducers: Result -> small dict --------------------------------------------------------------
def _group_goodput(res, group: int) -> float:
    f = res.flows
    return float(f[f["group"] == group]["goodput_bps"].mean())


def reduce_single_flow(res, ctx) -> Dict[str, Any]:
    f = res.flows.iloc[0]
    return {"goodput_bps": float(f["goodput_bps"]), "loss_events": int(f["loss_events"]),
            "mean_rtt_s": float(f["mean_rtt_s"]), "packets_sent": int(f["packets_sent"])}


def reduce_s2(res, ctx) -> Dict[str, Any]:
    f = res.flows
    xg = int(ctx.get("x_group", 0))
    out = {"x_goodput_bps": _group_goodput(res, xg), "tcp_goodput_bps": _group_goodput(res, 1 - xg)}
    for g, name in ((xg, "x"), (1 - xg, "tcp")):
        row = dyn.shortest_rtt_flow(f, g)
        out[f"{name}_short_goodput_bps"] = float(row["goodput_bps"])
        out[f"{name}_short_loss_event_rate"] = float(row["loss_event_rate"])
    out["utilization"] = float(res.links.iloc[0]["utilization"])
    return out


def _rate_1s(ts, flow: int, bin_s: float = 1.0):
    d = dyn.flow_series(ts, flow)
    ends, means = dyn.binned(d["time"].to_numpy(), d["rate_bps"].to_numpy(), bin_s, 0.0, None)
    return ends, means


def reduce_series(res, ctx) -> Dict[str, Any]:
    """Flow 0's delivered rate binned to ``bin_s`` and its window reductions (the loss log):
    tsao2007 S3/S4 measure the throughput of the one flow under test against time (Figs. 3-4);
    the convergence times are computed from this in the aggregation, against targets from the
    reference runs (:func:`reduce_steady_level`)."""
    ts = res.timeseries("flows")
    t, x = _rate_1s(ts, 0, float(ctx["bin_s"]))
    log = dyn.loss_log(res.raw)
    lt = log[log["flow"] == 0]["time"].to_numpy(dtype=float)
    return {"time": t.round(6).tolist(), "rate_bps": x.round(1).tolist(),
            "loss_times": lt.round(6).tolist(),
            "goodput_bps": float(res.flows.iloc[0]["goodput_bps"]),
            "mean_rtt_s": float(res.flows.iloc[0]["mean_rtt_s"])}


def reduce_steady_level(res, ctx) -> Dict[str, Any]:
    """The steady throughput of flow 0 in a stationary reference run (one regime held for the
    whole run): its mean delivered rate over the last ``reference_tail`` seconds."""
    ts = res.timeseries("flows")
    t, x = _rate_1s(ts, 0, float(ctx["bin_s"]))
    end = float(ctx["duration"])
    sel = t > end - float(ctx["reference_tail"]) + 1e-9
    return {"level_bps": float(np.mean(x[sel])) if sel.any() else float("nan"),
            "mean_rtt_s": float(res.flows.iloc[0]["mean_rtt_s"])}


def reduce_impulse(res, ctx) -> Dict[str, Any]:
    ts = res.timeseries("flows")
    d = dyn.flow_series(ts, 0)
    t = d["time"].to_numpy(dtype=float)
    w = pd.to_numeric(d["cwnd"], errors="coerce").to_numpy(dtype=float)
    rtt = float(res.flows.iloc[0]["mean_rtt_s"])
    if not np.isfinite(w).any():
        # a rate-based flow has no window: use its delivered rate times its mean RTT, in
        # packets, as the equivalent window (binned to 1 RTT-ish by the 0.1 s sampling)
        pkt_bits = 8.0 * float(res.scenario.get("packet_size", 1000))
        w = d["rate_bps"].to_numpy(dtype=float) * rtt / pkt_bits
    on, off, dur = ctx["t_on"], ctx["t_off"], ctx["duration"]
    period = on + off
    # CBR is on during [k P, k P + on), off during [k P + on, (k+1) P); skip the first cycle
    rises = [k * period + on for k in range(1, int(dur // period)) if k * period + period <= dur]
    falls = [k * period for k in range(1, int(dur // period)) if k * period + on <= dur]
    log = dyn.loss_log(res.raw)
    lt = log[log["flow"] == 0]["time"].to_numpy()
    rounds = rtt
    if ctx.get("rtt_count") == "queue":
        # round trips counted from the flow's RTT at every sample (its propagation round
        # trip plus the bottleneck queue then): assumption rtt_count of the experiment
        sc, lts = res.scenario, res.timeseries("links")
        f0, bn = sc["flows"][0], sc["bottleneck"]
        q = lts[lts["link"] == "bottleneck"].sort_values("time")
        rounds = dyn.rtt_from_queue(
            np.interp(t, q["time"].to_numpy(dtype=float), q["queue_pkts"].to_numpy(dtype=float)),
            2 * (bn["delay"] + f0["access_delay"] + f0["receiver_delay"]), bn["rate"],
            sc["packet_size"] + sc["tcp"]["header_size"])
    agg = dyn.aggressiveness(t, w, rises, rounds, eps=ctx["eps"], period_s=off)
    rsp = dyn.responsiveness(t, w, falls, lt, eps=ctx["eps"], period_s=on)
    sel = (t >= 80) & (t <= 200)
    return {
        "rtt_s": rtt,
        "aggr_samples": agg["samples"], "w_high": agg["targets"],
        "resp_samples": rsp["samples"], "resp_seconds": rsp["seconds"], "w_low": rsp["targets"],
        "series": {"time": t[sel][::5].round(3).tolist(), "cwnd": w[sel][::5].round(3).tolist()},
    }


def reduce_trough(res, ctx) -> Dict[str, Any]:
    lts = res.timeseries("links")
    b = lts[lts["link"] == res.links.iloc[0]["name"]].sort_values("time")
    sc = res.scenario
    wire = float(sc.get("packet_size", 1000)) + float(sc.get("tcp", {}).get("header_size", 40))
    m = dyn.trough_metrics(b["time"].to_numpy(), b["utilization"].to_numpy(), b["drops"].to_numpy(),
                           float(sc["bottleneck"]["rate"]), ctx["sample_s"], wire,
                           t1=ctx["t1"], t2=ctx["t2"], bin_s=ctx["bin_s"],
                           steady=(ctx["steady_from"], ctx["steady_to"]),
                           util_recover=ctx["util_recover"], drop_recover=ctx["drop_recover"],
                           drop_window=ctx["drop_window"])
    ends, u = dyn.binned(b["time"].to_numpy(), b["utilization"].to_numpy(), ctx["bin_s"])
    m["series"] = {"time": ends.round(3).tolist(), "utilization": u.round(4).tolist()}
    return m


REDUCERS: Dict[str, Callable] = {
    "single_flow": reduce_single_flow,
    "s2": reduce_s2,
    "series": reduce_series,
    "steady_level": reduce_steady_level,
    "impulse": reduce_impulse,
    "trough": reduce_trough,
}


def _run_one(job: Job, controllers: Optional[Dict[str, type]] = None) -> Dict[str, Any]:
    from ..results import run
    res = run(job.scenario, seed=job.seed, timeseries=job.timeseries, controllers=controllers)
    return REDUCERS[job.reducer](res, job.ctx)


def _run_one_pickled(args) -> Dict[str, Any]:
    return _run_one(*args)


class _Progress:
    """``[####....] 12/40`` on stderr, only on a terminal."""

    def __init__(self, total: int, label: str, enabled: Optional[bool] = None):
        self.total, self.done, self.label = total, 0, label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.t0 = time.monotonic()

    def step(self) -> None:
        self.done += 1
        if self.enabled:
            n = 30 * self.done // max(self.total, 1)
            sys.stderr.write(f"\r{self.label} [{'#' * n}{'.' * (30 - n)}] {self.done}/{self.total} "
                             f"{time.monotonic() - self.t0:.0f}s")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def execute(jobs: List[Job], workers: Optional[int] = None, out: Optional[str] = None,
            controllers: Optional[Dict[str, type]] = None, label: str = "evaluate",
            progress: Optional[bool] = None, memo: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
    """Run ``jobs`` and return their reductions in order (the single execution adapter)."""
    from .. import __version__
    keys = [j.key(__version__) for j in jobs]
    results: List[Optional[Dict[str, Any]]] = [None] * len(jobs)
    cache_dir = os.path.join(out, "runs") if out else None
    todo = []
    for i, k in enumerate(keys):
        if memo is not None and k in memo:
            results[i] = memo[k]
            continue
        if cache_dir and os.path.exists(os.path.join(cache_dir, k + ".json")):
            with open(os.path.join(cache_dir, k + ".json"), encoding="utf-8") as f:
                results[i] = json.load(f)
            continue
        todo.append(i)
    # identical jobs (e.g. the TCP reference of the same point) run once
    first: Dict[str, int] = {}
    unique = []
    for i in todo:
        if keys[i] not in first:
            first[keys[i]] = i
            unique.append(i)
    bar = _Progress(len(unique), label, progress)

    def store(i: int, value: Dict[str, Any]) -> None:
        results[i] = value
        if memo is not None:
            memo[keys[i]] = value
        if cache_dir:
            os.makedirs(cache_dir, exist_ok=True)
            tmp = os.path.join(cache_dir, f".{keys[i]}.{os.getpid()}.tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(value, f)
            os.replace(tmp, os.path.join(cache_dir, keys[i] + ".json"))
        bar.step()

    workers = workers or os.cpu_count() or 1
    try:
        if controllers or workers <= 1 or len(unique) <= 1:
            for i in unique:
                store(i, _run_one(jobs[i], controllers))
        else:
            with cf.ProcessPoolExecutor(max_workers=workers) as pool:
                futs = {pool.submit(_run_one_pickled, (jobs[i], None)): i for i in unique}
                for fut in cf.as_completed(futs):
                    store(futs[fut], fut.result())
    finally:
        bar.close()
    for i in todo:
        if results[i] is None:
            results[i] = results[first[keys[i]]]
    return results  # type: ignore[return-value]
