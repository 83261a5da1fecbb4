"""Time-series yardsticks of the five papers: smoothness, fairness over time, aggressiveness,
responsiveness, convergence, sastry2005's trough test and tsao2007's measures.

Every function here is pure: it takes numpy arrays or pandas DataFrames cut from a
:class:`tcpfriendly.Result` and returns numbers (or small dicts / DataFrames); nothing runs a
simulation. The inputs are:

- ``Result.timeseries("flows")``: columns ``time, flow, cwnd, ssthresh, rate_bps, srtt_s``.
  ``rate_bps`` is the *delivered* rate over the sampling interval ending at ``time``; ``cwnd``
  and ``ssthresh`` are NaN for rate-based and UDP flows, ``ssthresh`` also before a window
  flow's first decrease (no threshold yet).
- ``Result.timeseries("links")``: ``time, link, queue_pkts, utilization, drops, marks`` (utilisation,
  drops and ECN marks over the interval ending at ``time``).
- ``Result.raw["loss_events"]`` (when the scenario sets ``loss_log = true``): columns ``time,
  flow, kind, window_before, window_after`` -- every window reduction of a window-based flow
  (``kind`` is ``"fast_retransmit"``, ``"ecn"`` or ``"timeout"``) and every loss event a
  rate-based flow's receiver detects (``"rate_loss_event"``, no window: NaN). :func:`loss_log`
  turns it into a DataFrame.

RTT counting: the time series' ``srtt_s`` is the RTO-clock estimator (coarse: it is rounded to
the ``tcp.tick`` granularity and biased up), so every function below that counts round-trip
times takes the RTT as an argument; pass the flow's ``mean_rtt_s`` from ``Result.flows`` (the
mean of its true RTT samples, queueing included) until the engine records a fine-grained RTT
in the time series.

Part of the metrics layer (:mod:`tcpfriendly.metrics`): the plain statistics shared with the
group aggregates (``cov``, ``jain``) are the ones of :mod:`.groups`.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from . import groups as _groups
from .transients import (_first_time, convergence_t1_delta_t2, convergence_time,  # noqa: F401 (re-exported)
                         cwnd_settle_s)

__all__ = [
    "cov", "binned", "smoothness_cov", "smoothness_cov_geometric",
    "jain", "jain_over_time", "max_ratio", "mean_ci95",
    "flow_series", "loss_log", "loss_events_between",
    "aggressiveness", "responsiveness", "steady_cov", "convergence_t1_delta_t2", "rtt_from_queue",
    "trough_metrics", "convergence_time", "normalised", "fair_share_ratio",
    "shortest_rtt_flow", "cwnd_settle_s",
]


# ----- basic statistics ------------------------------------------------------------------------
# cov (population σ/μ) and jain ((Σx)²/(n·Σx²)) have one definition, in .groups; NaN and
# None values are left out, NaN when nothing is left (or the mean / every value is 0).
cov = _groups.cov
jain = _groups.jain


def mean_ci95(samples: Iterable[float]) -> Dict[str, float]:
    """Mean and the 95% confidence interval of the mean, ``x̄ ± t_{0.975, n−1}·s/√n``
    (Student t, sample standard deviation ``s``), as jin2001 Table 5 reports its measures.

    Returns ``{"mean", "lo", "hi", "n"}``; with one sample ``lo = hi = mean``; NaN when empty.
    """
    a = np.asarray([v for v in samples if v is not None and math.isfinite(v)], dtype=float)
    n = int(a.size)
    if n == 0:
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0}
    m = float(a.mean())
    if n == 1:
        return {"mean": m, "lo": m, "hi": m, "n": 1}
    half = _groups.t975(n - 1) * float(a.std(ddof=1)) / math.sqrt(n)
    return {"mean": m, "lo": m - half, "hi": m + half, "n": n}


def max_ratio(x1: float, x2: float) -> float:
    """jin2001's fairness measure ``max(x1/x2, x2/x1)`` (1 = equal, larger = less fair);
    ``inf`` when exactly one is 0, NaN when both are."""
    x1, x2 = float(x1), float(x2)
    if x1 == 0 and x2 == 0:
        return float("nan")
    if x1 == 0 or x2 == 0:
        return float("inf")
    return max(x1 / x2, x2 / x1)


def normalised(x: float, reference: float) -> float:
    """``x / reference`` (NaN when the reference is not positive). tsao2007's three
    normalisations are this ratio with different references: TCP's throughput in the same
    run (TCP-equal share, S2), TCP's throughput under the identical loss process (a paired
    run with the same seed and loss model: TCP-equivalence, S1/S3), or the fair share
    (:func:`fair_share_ratio`)."""
    x, reference = float(x), float(reference)
    return x / reference if reference > 0 and math.isfinite(reference) else float("nan")


def fair_share_ratio(x_bps: float, capacity_bps: float, n_flows: int) -> float:
    """Throughput normalised by the fair share: ``x / (C / n)`` (yang2000 Figs. 13-20,
    tsao2007 S2: 1 = the flow gets exactly its share of the bottleneck)."""
    if n_flows <= 0:
        return float("nan")
    return normalised(x_bps, capacity_bps / n_flows)


# ----- series helpers --------------------------------------------------------------------------
def flow_series(ts: pd.DataFrame, flow: int, t0: Optional[float] = None,
                t1: Optional[float] = None) -> pd.DataFrame:
    """Rows of one flow from ``Result.timeseries("flows")``, optionally cut to ``t0 < time ≤ t1``,
    sorted by time."""
    d = ts[ts["flow"] == flow]
    if t0 is not None:
        d = d[d["time"] > t0]
    if t1 is not None:
        d = d[d["time"] <= t1]
    return d.sort_values("time").reset_index(drop=True)


def binned(times: Sequence[float], values: Sequence[float], bin_s: float,
           t0: Optional[float] = None, t1: Optional[float] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Average ``values`` (samples at the end of equal sampling intervals) into bins of width
    ``bin_s`` over ``(t0, t1]`` (``t0`` default 0): bin j is ``(t0 + j·bin_s, t0 + (j+1)·bin_s]``. Returns (bin end times, bin means); empty bins are dropped.

    A rate sampled every ``Δ`` seconds averaged over a bin of width ``bin_s`` (a multiple of
    ``Δ``) is the rate over that bin, as jin2001 (0.2 s) and yang2000 (150 ms) measure it.
    """
    if bin_s <= 0:
        raise ValueError(f"bin_s: must be > 0, got {bin_s}")
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.size == 0:
        return np.array([]), np.array([])
    lo = min(0.0, float(t.min())) if t0 is None else float(t0)
    hi = float(t.max()) if t1 is None else float(t1)
    keep = (t > lo + 1e-9) & (t <= hi + 1e-9) & np.isfinite(v)
    t, v = t[keep], v[keep]
    if t.size == 0:
        return np.array([]), np.array([])
    # a sample at the end of (a, a + bin_s] belongs to that bin
    idx = np.maximum(np.ceil((t - lo) / bin_s - 1e-9).astype(int) - 1, 0)
    n = int(idx.max()) + 1
    sums = np.bincount(idx, weights=v, minlength=n)
    counts = np.bincount(idx, minlength=n)
    ok = counts > 0
    ends = lo + (np.arange(n) + 1) * bin_s
    return ends[ok], sums[ok] / counts[ok]


def smoothness_cov(ts: pd.DataFrame, flow: int, bin_s: float = 0.2,
                   t0: Optional[float] = None, t1: Optional[float] = None,
                   column: str = "rate_bps") -> float:
    """Smoothness as the coefficient of variation of a flow's sending rate at time scale
    ``bin_s``: ``CoV = σ(x_b) / mean(x_b)`` over the bins ``x_b`` of width ``bin_s`` in
    ``[t0, t1)``.

    jin2001 §6.2.3 (Figs. 14-17) bins the throughput in 0.2 s over 250-270 s; yang2000 Fig. 21
    uses 150 ms. ``column="cwnd"`` gives the window's CoV (jin2001 Table 3 uses the window
    over one congestion epoch). The bin width must be a multiple of the time-series interval.
    """
    d = flow_series(ts, flow)
    _, means = binned(d["time"].to_numpy(), d[column].to_numpy(), bin_s, t0, t1)
    return cov(means)


def smoothness_cov_geometric(ts: pd.DataFrame, flow: int, split: float, bin_s: float = 0.2,
                             t0: Optional[float] = None, t1: Optional[float] = None,
                             column: str = "rate_bps") -> float:
    """The geometric-mean CoV jin2001 uses for IIAD (Figs. 5-6 captions): IIAD's CoV depends on
    the average window, so compute it before and after a change of the available bandwidth
    at ``split`` and take ``√(CoV_before · CoV_after)``.
    """
    before = smoothness_cov(ts, flow, bin_s, t0, split, column)
    after = smoothness_cov(ts, flow, bin_s, split, t1, column)
    return float(math.sqrt(before * after)) if before >= 0 and after >= 0 else float("nan")


def jain_over_time(ts: pd.DataFrame, bin_s: float = 1.0, flows: Optional[Sequence[int]] = None,
                   t0: Optional[float] = None, t1: Optional[float] = None,
                   column: str = "rate_bps") -> pd.DataFrame:
    """Jain's index over the flows in each time bin: ``F(t_b) = (Σ_i x_i,b)² / (n · Σ_i x_i,b²)``
    with ``x_i,b`` flow i's mean ``column`` in bin b (sastry2005 Fig. 3 plots it for two LOG
    flows with the windows; ``column="cwnd"`` does the same here). Returns columns
    ``time`` (bin end) and ``jain``."""
    if flows is None:
        flows = sorted(ts["flow"].unique())
    per_flow = []
    for f in flows:
        d = flow_series(ts, f)
        ends, means = binned(d["time"].to_numpy(), d[column].to_numpy(), bin_s, t0, t1)
        per_flow.append(pd.Series(means, index=np.round(ends, 9)))
    if not per_flow:
        return pd.DataFrame({"time": [], "jain": []})
    table = pd.concat(per_flow, axis=1).dropna()
    values = [jain(row) for row in table.to_numpy()]
    return pd.DataFrame({"time": table.index.to_numpy(dtype=float), "jain": values})


def loss_log(raw: Mapping[str, Any]) -> pd.DataFrame:
    """The loss log of a run (``Result.raw``, recorded with ``loss_log = true``) as a DataFrame
    with columns ``time, flow, kind, window_before, window_after``; empty when absent."""
    log = raw.get("loss_events") if isinstance(raw, Mapping) else None
    cols = ["time", "flow", "kind", "window_before", "window_after"]
    if not isinstance(log, Mapping):
        return pd.DataFrame({c: [] for c in cols})
    return pd.DataFrame({c: log.get(c, []) for c in cols})


def loss_events_between(log: pd.DataFrame, flow: int, t0: float, t1: float,
                        kinds: Sequence[str] = ("loss", "ecn", "timeout")) -> int:
    """Window reductions of ``flow`` in ``t0 < time ≤ t1`` (tsao2007 Fig. 4(c): loss events met
    during convergence). A timeout counts as one event."""
    d = log[(log["flow"] == flow) & (log["time"] > t0) & (log["time"] <= t1)]
    return int(d["kind"].isin(list(kinds)).sum())


# ----- aggressiveness and responsiveness (jin2001 §5, Table 5) -----------------------------------
def _tail(t: np.ndarray, w: np.ndarray, start: float, end: float, tail: float) -> np.ndarray:
    """The window samples of the last ``tail`` fraction of ``[start, end)`` (the phase's steady
    state: :func:`aggressiveness` and :func:`responsiveness` take their target from them)."""
    a = end - tail * (end - start)
    return w[(t > a) & (t < end) & np.isfinite(w)]


def _steady_window(t: np.ndarray, w: np.ndarray, start: float, end: float, tail: float) -> float:
    """Mean window over the last ``tail`` fraction of ``[start, end)``."""
    v = _tail(t, w, start, end, tail)
    return float(v.mean()) if v.size else float("nan")


def steady_cov(t: Sequence[float], cwnd: Sequence[float], changes: Sequence[float],
               period_s: float, tail: float = 1 / 3) -> list:
    """Smoothness after reaching steady state, per phase (jin2001 §6.2.4, Fig. 19: "after
    reaching steady state, AIAD is as smooth as IIAD"): for each change of the available
    bandwidth at ``c`` (a rise or a fall of :func:`aggressiveness` / :func:`responsiveness`),
    the coefficient of variation (:func:`cov`) of the window samples over the last ``tail`` of
    ``[c, c + period_s)`` -- the samples whose mean is those functions' ``W_target``. The
    window's oscillation around its new level, without the transition to it; jin2001 §5's
    smoothness (Table 3: the window's CoV over a congestion epoch) measured at a time scale of
    the sampling interval. A phase that ends after the last sample, or has no samples in its
    tail, is left out."""
    tt = np.asarray(t, dtype=float)
    ww = np.asarray(cwnd, dtype=float)
    out: list = []
    if not tt.size:
        return out
    for c in sorted(float(x) for x in changes):
        if c + period_s > tt.max() + 1e-9:
            continue
        v = _tail(tt, ww, c, c + period_s, tail)
        if v.size:
            out.append(cov(v.tolist()))
    return out


def rtt_from_queue(queue_pkts: Sequence[float], base_rtt_s: float, rate_bps: float,
                   wire_bytes: float) -> np.ndarray:
    """A flow's round-trip time at each sample of its bottleneck's queue, when that FIFO queue
    is the only one it meets: ``RTT(t) = base_rtt_s + (queue_pkts(t) + 1) · 8 · wire_bytes / rate_bps``
    (the wait behind the queued packets plus its own transmission). ``base_rtt_s``: the
    propagation round trip, twice the one-way delays of the path."""
    q = np.asarray(queue_pkts, dtype=float)
    return float(base_rtt_s) + (np.maximum(q, 0.0) + 1.0) * 8.0 * float(wire_bytes) / float(rate_bps)


def _rounds(tt: np.ndarray, rtt: Any, a: float, b: float) -> float:
    """Round trips elapsed in ``(a, b]``: ``(b − a) / rtt`` for a constant RTT, else
    ``Σ Δt_i / RTT_i`` over the samples in ``(a, b]`` (each sample covers the interval ending at it)."""
    if np.ndim(rtt) == 0:
        return (b - a) / float(rtt)
    r = np.asarray(rtt, dtype=float)
    dt = np.diff(tt, prepend=tt[0] - (tt[1] - tt[0] if tt.size > 1 else 0.0))
    sel = (tt > a + 1e-9) & (tt <= b + 1e-9) & np.isfinite(r) & (r > 0)
    return float(np.sum(dt[sel] / r[sel]))


def aggressiveness(t: Sequence[float], cwnd: Sequence[float], rises: Sequence[float],
                   rtt_s: Any, eps: float = 1.0, tail: float = 1 / 3,
                   period_s: Optional[float] = None) -> Dict[str, Any]:
    """1/aggressiveness in RTTs, per bandwidth rise, with a 95% CI over the rises (jin2001 §5
    and §6.2.4, Table 5).

    jin2001 defines aggressiveness as the inverse of the time a flow needs to grow its window
    after a step increase of the available bandwidth, and measures it in Fig. 19's impulse
    response with a steady-state error of one packet. For each rise at ``r`` (bandwidth
    appears: the CBR switches off) with the next change at ``r + P`` (``period_s``, default the
    distance to the next rise halved, i.e. a square wave with equal on/off):

        W_target = mean cwnd over the last ``tail`` of [r, r + P)    (the new steady window)
        T_r      = min{ t ≥ r : cwnd(t) ≥ W_target − ε } − r
        1/aggr_r = round trips in [r, r + T_r]

    ``rtt_s``: either the flow's round-trip time (a number, e.g. ``Result.flows.mean_rtt_s``:
    then ``1/aggr_r = T_r / rtt_s``) or its RTT at every sample of ``t`` (an array, e.g.
    :func:`rtt_from_queue`: then the round trips are counted, ``Σ Δt_i / RTT_i``). jin2001
    counts RTTs; the RTT is not constant during a rise (the queue empties when the CBR stops
    and refills as the window grows), so dividing the seconds by the run's mean RTT
    under-counts the round trips of a fast rise (TCP's). The time series' ``srtt_s`` is the
    coarse RTO estimator (see the module docstring), not a per-sample RTT. A rise whose target
    is never reached within P is reported as NaN and left out of the CI.

    Returns ``{"samples": [...RTTs], "seconds": [...], "targets": [...], "w_before": [...],
    "mean", "lo", "hi", "n"}``.
    """
    tt = np.asarray(t, dtype=float)
    ww = np.asarray(cwnd, dtype=float)
    rises = sorted(float(r) for r in rises)
    out = {"samples": [], "seconds": [], "targets": [], "w_before": []}
    for i, r in enumerate(rises):
        p = period_s if period_s is not None else (
            (rises[i + 1] - r) / 2 if i + 1 < len(rises) else (rises[i] - rises[i - 1]) / 2 if i else None)
        if p is None or r + p > tt.max() + 1e-9:
            continue
        target = _steady_window(tt, ww, r, r + p, tail)
        before = _steady_window(tt, ww, r - p, r, tail) if r - p >= tt.min() - 1e-9 else float("nan")
        sel = (tt >= r) & (tt < r + p)
        reach = _first_time(tt[sel], ww[sel] >= target - eps)
        secs = reach - r if math.isfinite(reach) else float("nan")
        out["samples"].append(_rounds(tt, rtt_s, r, reach) if math.isfinite(secs) else float("nan"))
        out["seconds"].append(secs)
        out["targets"].append(target)
        out["w_before"].append(before)
    out.update(mean_ci95(out["samples"]))
    return out


def responsiveness(t: Sequence[float], cwnd: Sequence[float], falls: Sequence[float],
                   loss_times: Sequence[float], eps: float = 1.0, tail: float = 1 / 3,
                   period_s: Optional[float] = None) -> Dict[str, Any]:
    """1/responsiveness in loss events (and in seconds), per bandwidth fall, with 95% CIs over
    the falls (jin2001 §5 and §6.2.4, Table 5).

    jin2001 defines responsiveness as the inverse of the number of loss events a flow needs to
    reduce its window substantially after a step increase of congestion. For each fall at
    ``f`` (bandwidth disappears: the CBR switches on) with the next change at ``f + P``:

        W_target = mean cwnd over the last ``tail`` of [f, f + P)   (the new steady window)
        τ_f      = min{ t ≥ f : cwnd(t) ≤ W_target + ε }
        1/resp_f = #{ window reductions of the flow in (f, τ_f] }  (``loss_times``)

    ``loss_times``: times of the flow's window reductions (the loss log; timeouts count).
    A fall whose target is never reached within P is NaN and left out.

    Returns ``{"samples": [...loss events], "seconds": [...], "targets": [...],
    "mean", "lo", "hi", "n", "seconds_ci": {...}}``.
    """
    tt = np.asarray(t, dtype=float)
    ww = np.asarray(cwnd, dtype=float)
    lt = np.sort(np.asarray(loss_times, dtype=float))
    falls = sorted(float(f) for f in falls)
    out = {"samples": [], "seconds": [], "targets": []}
    for i, f in enumerate(falls):
        p = period_s if period_s is not None else (
            (falls[i + 1] - f) / 2 if i + 1 < len(falls) else (falls[i] - falls[i - 1]) / 2 if i else None)
        if p is None or f + p > tt.max() + 1e-9:
            continue
        target = _steady_window(tt, ww, f, f + p, tail)
        sel = (tt >= f) & (tt < f + p)
        reach = _first_time(tt[sel], ww[sel] <= target + eps)
        if not math.isfinite(reach):
            out["samples"].append(float("nan"))
            out["seconds"].append(float("nan"))
        else:
            n = int(((lt > f) & (lt <= reach + 1e-9)).sum())
            out["samples"].append(float(n))
            out["seconds"].append(reach - f)
        out["targets"].append(target)
    out.update(mean_ci95(out["samples"]))
    out["seconds_ci"] = mean_ci95(out["seconds"])
    return out


# ----- sastry2005 trough test (§VI-B, Table I) ----------------------------------------------------
def trough_metrics(time: Sequence[float], utilization: Sequence[float], drops: Sequence[float],
                   link_rate_bps: float, interval_s: float, wire_bytes: float,
                   t1: float = 50.0, t2: float = 80.0, steady: Tuple[float, float] = (20.0, 30.0),
                   bin_s: float = 0.1, util_recover: float = 0.95,
                   drop_recover: float = 1.5, drop_window: float = 1.0,
                   peak_bin_s: float = 1.0) -> Dict[str, float]:
    """sastry2005's trough-test metrics (§VI-B, Table I), all in percent.

    A CBR at half the bottleneck stops at ``t1`` and restarts at ``t2``; "steady state" is
    ``steady`` (20-30 s). From the bottleneck's time series, binned to ``bin_s``:

    - utilisation ``U_b`` (the link's ``utilization``); drop rate
      ``D_b = drops_b / (drops_b + departures_b)`` with departures from the utilisation,
      ``U_b · C · interval / (8 · wire_bytes)`` per sample;
    - steady utilisation ``U_ss`` and drop rate ``D_ss``: ``Σ``-based over ``steady``;
    - **utilisation metric** = (``U_ss − min U_b`` over ``[t1, t1 + T_U]``) × ``T_U``, where
      ``T_U`` = seconds after ``t1`` until ``U_b ≥ util_recover · U_ss`` (0.95) again, counted
      from the first bin after ``t1`` that is below it (the queue drains first): "the product of
      the drop in utilization at t1 (from the utilization at steady state) and the amount of
      time it takes to get back to 95% of the steady-state utilization";
    - **drop metric** = (``D(t2) − D_ss``) × ``T_D``: "the product of the additional drop rate
      (as compared to the steady-state drop rate) and the time required to get back to 1.5
      times the steady-state drop rate", using "the difference in the drop rates at t2 and at
      steady state". ``D(t2)`` is the largest binned drop rate in ``(t2, t2 + drop_window]``
      (the restarted CBR refills the queue within a fraction of a second, so the burst of
      drops it causes is there); ``T_D`` = seconds from ``t2`` until the first bin after that
      peak with ``D_b ≤ drop_recover · D_ss`` (1.5). The peak is looked for only in that
      window: searched over the rest of the run it would pick up a steady-state fluctuation
      of the 0.1-s drop rate long after the CBR's restart (a scheme that absorbs the restart
      quickly, such as TCP, then got a "recovery" of 25 s).

    - the rise of the drop rate at ``t2`` ("an increased drop rate (up to 10-15 times the
      steady-state drop rate!) at t2"), as multiples of ``D_ss``: ``drop_t2_ratio`` =
      ``D(t2) / D_ss`` (the drop metric's ``D(t2)``, bins of ``bin_s``) and
      ``drop_peak_ratio`` = the largest drop rate over bins of ``peak_bin_s`` ending in
      ``(t2, t2 + max(drop_window, peak_bin_s)]``, divided by ``D_ss``; the same drop rate
      ``D_b`` binned coarser (the paper does not say over which interval it saw the rise).

    The paper does not state the bin width or the time unit of the products: seconds and
    ``bin_s`` are assumptions (named in the experiment). Products of a fraction and seconds are
    reported ×100 ("all numbers are percentage values"), like ``U_ss`` and ``D_ss``; the
    ratios are plain numbers (NaN when ``D_ss`` is 0).
    Returns ``{"utilization_metric", "drop_metric", "steady_utilization", "steady_drop_rate",
    "t_util_recover_s", "t_drop_recover_s", "util_dip", "drop_peak", "drop_t2_ratio",
    "drop_peak_ratio"}``.
    """
    tt = np.asarray(time, dtype=float)
    u = np.asarray(utilization, dtype=float)
    d = np.asarray(drops, dtype=float)
    dep = u * link_rate_bps * interval_s / (8.0 * wire_bytes)
    ends, ub = binned(tt, u, bin_s)

    def drop_rate(width: float) -> Tuple[np.ndarray, np.ndarray]:
        # D_b = drops_b / (drops_b + departures_b) in bins of ``width`` (bin ends, rates)
        e, db_sum = binned(tt, d, width)
        _, dep_sum = binned(tt, dep, width)
        # binned() averages; the ratio of averages is the ratio of sums in each bin
        with np.errstate(invalid="ignore", divide="ignore"):
            return e, np.where(db_sum + dep_sum > 0, db_sum / (db_sum + dep_sum), 0.0)

    _, dr = drop_rate(bin_s)
    ss = (tt > steady[0]) & (tt <= steady[1])
    u_ss = float(u[ss].mean()) if ss.any() else float("nan")
    tot = d[ss].sum() + dep[ss].sum()
    d_ss = float(d[ss].sum() / tot) if tot > 0 else float("nan")

    after1 = (ends > t1) & (ends <= t2)
    e1, u1 = ends[after1], ub[after1]
    # the queue drains for a while after t1, so the utilisation may stay high at first: the
    # recovery is the first bin back at util_recover x U_ss AFTER the utilisation has fallen
    # below it (0 when it never falls)
    below = np.nonzero(u1 < util_recover * u_ss)[0]
    if below.size:
        k = int(below[0])
        back = _first_time(e1[k:], u1[k:] >= util_recover * u_ss)
        t_u = back - t1 if math.isfinite(back) else (t2 - t1)
    else:
        t_u = 0.0
    dip = float(u_ss - u1[e1 <= t1 + max(t_u, bin_s) + 1e-9].min()) if u1.size else float("nan")

    after2 = ends > t2
    e2, d2 = ends[after2], dr[after2]
    near = e2 <= t2 + max(drop_window, bin_s) + 1e-9
    if near.any():
        ipk = int(np.argmax(np.where(near, d2, -np.inf)))
        peak = float(d2[ipk])
        rec = _first_time(e2[ipk:], d2[ipk:] <= drop_recover * d_ss)
        t_d = (rec - t2) if math.isfinite(rec) else float(e2[-1] - t2)
    else:
        peak, t_d = float("nan"), float("nan")
    ec, drc = drop_rate(peak_bin_s)
    near_c = (ec > t2) & (ec <= t2 + max(drop_window, peak_bin_s) + 1e-9)
    peak_c = float(drc[near_c].max()) if near_c.any() else float("nan")

    def ratio(x: float) -> float:
        return x / d_ss if d_ss > 0 else float("nan")
    return {
        "utilization_metric": 100.0 * max(dip, 0.0) * t_u,
        "drop_metric": 100.0 * max(peak - d_ss, 0.0) * t_d,
        "steady_utilization": 100.0 * u_ss,
        "steady_drop_rate": 100.0 * d_ss,
        "t_util_recover_s": float(t_u),
        "t_drop_recover_s": float(t_d),
        "util_dip": dip,
        "drop_peak": peak,
        "drop_t2_ratio": ratio(peak),
        "drop_peak_ratio": ratio(peak_c),
    }


# ----- tsao2007 measures ------------------------------------------------------------------------
def shortest_rtt_flow(flows: pd.DataFrame, group: int) -> pd.Series:
    """The row of ``Result.flows`` with the shortest mean RTT in flow group ``group``
    (tsao2007 S2, Fig. 2(c): throughput and loss rate of the shortest-RTT flow of each group;
    ties broken by the lower flow id)."""
    g = flows[flows["group"] == group]
    if g.empty:
        raise ValueError(f"group: no flows in group {group}")
    return g.sort_values(["mean_rtt_s", "id"]).iloc[0]
