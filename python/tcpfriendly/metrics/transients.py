"""Settling times: when a series comes back within a band of its new level after a change,
and when two flows' windows converge to each other.

:func:`convergence_time` is the one definition of a settling time (tsao2007's convergence
time, jin2001's settling after a step), :func:`convergence_t1_delta_t2` the one definition of
jin2001's convergence to efficiency and fairness (T1, Δ, T2); :mod:`.dynamics` re-exports both
for the evaluation yardsticks, and :func:`cwnd_settle_s` and :func:`pair_convergence` make them
group metrics of the sweep table (``groups.GROUP_METRICS``, which imports this module when the
metric is computed). This module imports nothing else of
the metrics layer, so both can build on it without an import cycle.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

__all__ = ["convergence_time", "moving_average", "cwnd_settle_s", "convergence_t1_delta_t2", "pair_convergence",
           "LowerBound", "censored_mean", "censored_time", "compare_censored"]


def _first_time(times: np.ndarray, cond: np.ndarray) -> float:
    hit = np.nonzero(cond)[0]
    return float(times[hit[0]]) if hit.size else float("nan")


def moving_average(t: Sequence[float], x: Sequence[float],
                   average_s: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t, x, x_avg): the series sorted by time and its centred moving average over
    ``average_s`` seconds (a whole number of the series' median steps, at least one; shorter at
    the ends): the average :func:`convergence_time` tests, and the figures draw."""
    tt = np.asarray(t, dtype=float)
    xx = np.asarray(x, dtype=float)
    o = np.argsort(tt)
    tt, xx = tt[o], xx[o]
    dt = float(np.median(np.diff(tt))) if tt.size > 1 else 1.0
    k = max(1, int(round(average_s / dt)))
    avg = pd.Series(xx).rolling(k, center=True, min_periods=1).mean().to_numpy()
    return tt, xx, avg


def convergence_time(t: Sequence[float], x: Sequence[float], change: float, steady: Tuple[float, float],
                     tol: float = 0.1, average_s: float = 10.0,
                     target: Optional[float] = None) -> Dict[str, float]:
    """Seconds a flow needs to reach its new steady throughput after the loss rate (or the
    available bandwidth) changes at ``change`` (tsao2007 S3 Fig. 3 and S4 Fig. 4: the time to
    reach the new steady throughput, up after the loss rate falls, down after it rises).

        x̄_new  = mean of ``x`` over ``steady`` (a window late in the new regime)
        x_avg(t) = centred moving average of ``x`` over ``average_s`` seconds
        T = min{ t ≥ change + average_s/2 : |x_avg(t) − x̄_new| ≤ tol · x̄_new } − change

    (the first half-window is skipped so that no average mixes in the old regime). The
    direction follows from the data: from below after the available bandwidth grows, from
    above after it shrinks.

    ``target``: the new steady level when it is known independently of this series (tsao2007's
    "new steady throughput": e.g. the flow's mean throughput in a stationary run with the new
    regime held, as ``tcpf evaluate`` measures it). A target taken from the tail of the same
    phase is wrong for a flow that is still climbing at the end of the phase (IIAD in S3); with
    ``target`` given, ``steady`` only bounds the search (``steady[1]``). Returns ``{"seconds", "target", "start_level"}`` (``start_level``:
    mean of ``x`` over the ``average_s`` before ``change``); ``seconds`` is NaN if the band is
    not reached before ``steady[1]``. tsao2007 gives no tolerance or averaging: ``tol`` and
    ``average_s`` are the evaluation's assumptions.
    """
    tt, xx, avg = moving_average(t, x, average_s)
    if target is None:
        sel = (tt > steady[0]) & (tt <= steady[1])
        target = float(xx[sel].mean()) if sel.any() else float("nan")
    target = float(target)
    pre = (tt > change - average_s) & (tt <= change)
    start_level = float(xx[pre].mean()) if pre.any() else float("nan")
    win = (tt >= change + average_s / 2 - 1e-9) & (tt <= steady[1])
    hit = _first_time(tt[win], np.abs(avg[win] - target) <= tol * abs(target))
    secs = hit - change if math.isfinite(hit) else float("nan")
    return {"seconds": secs, "target": target, "start_level": start_level}


# ----- a time not reached before the phase ended: a right-censored observation ------------------
class LowerBound(float):
    """A right-censored time: the true value is greater than this number. A flow that has not
    reached its new level by the end of the phase (``convergence_time`` is NaN) needed more
    than ``phase end − change``; a mean over runs where some did not reach it, taken with that
    bound for them, is again a lower bound (:func:`censored_mean`). ``note`` says why (``1 of
    5 seeds did not reach the new level before the phase ended``).

    The one rule for comparing such a value (:func:`compare_censored`, used by ``tcpf
    reproduce``'s expressions and rules): ``> b`` / ``≥ b`` hold when the bound is at least
    ``b``; ``< b``, ``≤ b`` and ``≈ b`` never hold once the bound reaches ``b``; anything the
    unknown excess could still change (two censored times, or a bound below the other
    number) is undecided."""

    note: str

    def __new__(cls, bound: float, note: str = "") -> "LowerBound":
        self = float.__new__(cls, bound)
        self.note = str(note)
        return self

    def __reduce__(self):
        return (LowerBound, (float(self), self.note))

    def text(self, digits: int = 4) -> str:
        """``> 700 (1 of 5 seeds did not reach ...)``"""
        return f"> {float(self):.{digits}g}" + (f" ({self.note})" if self.note else "")

    def __repr__(self) -> str:
        return f"LowerBound({float(self)!r}, {self.note!r})"

    __str__ = text


def censored_mean(times: Sequence[float], bounds: Sequence[float]) -> Tuple[float, int]:
    """(mean, censored): the mean of ``times`` with each NaN (a run that did not reach the
    level before its phase ended) replaced by its ``bounds`` entry (``phase end − change``),
    and how many were replaced. With ``censored`` > 0 the mean is a lower bound of the true
    mean; NaN without any time."""
    vals = [float(b) if not math.isfinite(float(t)) else float(t) for t, b in zip(times, bounds)]
    if not vals:
        return float("nan"), 0
    return float(np.mean(vals)), sum(1 for t in times if not math.isfinite(float(t)))


def censored_time(bound: float, censored: int, runs: int, what: str = "seeds", label: str = "") -> float:
    """The mean time as a value: the plain number when no run was censored, a
    :class:`LowerBound` (``> bound (label: k of n seeds did not reach ...)``) when some were."""
    if not censored or not math.isfinite(bound):
        return float(bound)
    return LowerBound(bound, (f"{label}: " if label else "") + f"{censored} of {runs} {what} did not "
                             f"reach the new level before the phase ended")


#: The comparisons :func:`compare_censored` knows, by their operator.
COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
               "==": operator.eq, "!=": operator.ne}


def compare_censored(op: str, a: Any, b: Any) -> Optional[bool]:
    """``a op b`` (``op`` one of ``< <= > >= == !=``) when either side may be a
    :class:`LowerBound`: True or False when it holds or fails whatever the censored values
    are, None when undecided. A NaN side gives False (True for ``!=``), as for floats."""
    la, lb = isinstance(a, LowerBound), isinstance(b, LowerBound)
    if not (la or lb):
        return COMPARISONS[op](a, b)
    if math.isnan(float(a)) or math.isnan(float(b)):
        return op == "!="
    if la and lb:
        return None
    if la:   # a in (α, ∞), b exact
        if float(a) < float(b):
            return None
        return op in (">", ">=", "!=")
    if float(a) > float(b):   # b in (β, ∞), a exact
        return None
    return op in ("<", "<=", "!=")


# ----- a transient as a group metric of the sweep table --------------------------------------------
def cwnd_settle_s(group: Sequence[Mapping[str, Any]]) -> float:
    """Seconds after the start of the measurement window (a step: flows join or leave there)
    until a flow's window, as a centred moving average over 10 time-series samples, first
    comes within 10 % of its mean over the second half of the window: ``dynamics.
    convergence_time(t, cwnd, change=from, steady=(midpoint, to), tol=0.1, average_s=10·interval)``
    (jin2001 §6.2.2-6.2.3, Fig. 18: responsiveness and aggressiveness of a tagged flow; with a
    time-series interval of about one RTT the average spans 10 RTTs).  Mean over the group's
    flows; NaN without samples or when a flow never comes within the band."""
    vals = []
    for f in group:
        s = f.get("samples") or {}
        if not s.get("cwnd"):
            return float("nan")
        lo, hi, step = s["window"]
        r = convergence_time(s["time"], s["cwnd"], lo, (lo + (hi - lo) / 2, hi), tol=0.1,
                             average_s=10 * step)
        vals.append(r["seconds"])
    return float("nan") if not vals or any(math.isnan(v) for v in vals) else math.fsum(vals) / len(vals)


# ----- convergence to fairness (jin2001 §4.2, App. C, Table 6) ------------------------------------
def convergence_t1_delta_t2(t: Sequence[float], w1: Sequence[float], w2: Sequence[float],
                            start: float, rtt_s: float, eps: float = 1.0,
                            decrease_times: Sequence[float] = (),
                            smooth_s: float = 0.0, t2: str = "stays",
                            grace_s: float = 0.0) -> Dict[str, float]:
    """jin2001's convergence times measured from two flows' windows (§4.2, App. C, Table 6).

    From ``start`` (the instant the two flows find free bandwidth, e.g. background flows stop):

    - ``T1``: RTTs until the pair reaches the efficiency line ``w1 + w2 = W``, taken as the
      first window decrease of either flow (the first loss once the link is full):
      ``T1 = (t_dec − start) / RTT`` with ``t_dec = min{decrease_times > start}``;
    - ``Δ``: ``|w1 − w2|`` at T1, the last sample at or before ``t_dec`` (jin2001: "the
      difference between the two user windows after T1"; Table 2's Δ = W2 − W1 for TCP and
      AIMD, whose equal increments keep the difference up to the efficiency line, is the
      difference *before* the decrease);
    - ``T2``: RTTs until the difference is within ε. ``t2="stays"`` (the paper's words, "the
      time until the difference between the two user windows stays within a certain bound"):
      ``T2 = (sup{t > start : |w1(t) − w2(t)| ≥ ε} − start) / RTT``, 0 if it never leaves, NaN
      if it is still outside ε at the end of the series. ``t2="enters"``: the first time the
      difference is below ε, ``T2 = (min{t ≥ start : |w1(t) − w2(t)| < ε} − start) / RTT``
      (NaN if never): packet-level windows of unsynchronised flows keep differing by more
      than ε now and then for ever (TCP's saw-teeth), so "stays" has no finite value there.

    ``decrease_times``: the window reductions of the two flows (loss log). When empty, a fall
    of either window between consecutive samples is taken as the decrease (windows only fall
    on a loss: an IIAD decrease is 2/3 of a packet). ``smooth_s`` > 0 applies a centred moving
    average of that width to both windows before T2 (packet-level windows jitter by a packet
    or two). ``grace_s``: decreases in ``(start, start + grace_s]`` are skipped for T1 and Δ
    (reactions to losses of the old regime, detected about one RTT after the drop, not the
    pair reaching the efficiency line). ``rtt_s``: the flows' mean true RTT (``Result.flows.mean_rtt_s``), not the time
    series' coarse ``srtt_s``. jin2001 Table 6 uses ε = 10 for T2 in Exp. 1.
    """
    if t2 not in ("stays", "enters"):
        raise ValueError(f"t2: must be 'stays' or 'enters'; got {t2!r}")
    tt = np.asarray(t, dtype=float)
    a = np.asarray(w1, dtype=float)
    b = np.asarray(w2, dtype=float)
    sel = tt >= start
    tt, a, b = tt[sel], a[sel], b[sel]
    res = {"T1": float("nan"), "delta": float("nan"), "T2": float("nan")}
    if tt.size < 2:
        return res
    dts = np.asarray(sorted(x for x in decrease_times if x > start + grace_s), dtype=float)
    if dts.size:
        t_dec = float(dts[0])
    else:
        drops = ((np.diff(a) < 0) | (np.diff(b) < 0)) & (tt[1:] > start + grace_s)
        t_dec = float(tt[1:][drops][0]) if drops.any() else float("nan")
    if math.isfinite(t_dec):
        res["T1"] = (t_dec - start) / rtt_s
        # the last sample before the decrease shows (a sample at t_dec already shows it)
        before = np.nonzero(tt < t_dec)[0] if not dts.size else np.nonzero(tt <= t_dec)[0]
        if before.size:
            j = before[-1]
            res["delta"] = float(abs(a[j] - b[j]))
    if smooth_s > 0 and tt.size > 2:
        dt = float(np.median(np.diff(tt)))
        k = max(1, int(round(smooth_s / dt)))
        a = pd.Series(a).rolling(k, center=True, min_periods=1).mean().to_numpy()
        b = pd.Series(b).rolling(k, center=True, min_periods=1).mean().to_numpy()
    diff = np.abs(a - b)
    if t2 == "enters":
        inside = np.nonzero(diff < eps)[0]
        res["T2"] = (float(tt[inside[0]]) - start) / rtt_s if inside.size else float("nan")
        return res
    outside = np.nonzero(diff >= eps)[0]
    if outside.size == 0:
        res["T2"] = 0.0
    elif outside[-1] == tt.size - 1:
        res["T2"] = float("nan")
    else:
        res["T2"] = (float(tt[outside[-1] + 1]) - start) / rtt_s
    return res


# jin2001 Table 6: ε = 10 packets; the windows are averaged over 10 samples (10 RTTs with a
# time series at about one RTT, as cwnd_settle_s) before T2's first entry into ε; decreases in
# the first 2 RTTs after the step answer losses of the old regime (three duplicate ACKs come
# about one RTT after a drop) and are skipped for T1.
PAIR_EPS = 10.0
PAIR_SMOOTH_SAMPLES = 10
PAIR_GRACE_RTTS = 2.0


def pair_convergence(group: Sequence[Mapping[str, Any]],
                     all_flows: Sequence[Mapping[str, Any]]) -> Dict[str, float]:
    """jin2001 §6.3 (Figs. 20-22, Table 6) as a group metric: :func:`convergence_t1_delta_t2`
    of the group's first flow and the first flow of the *next* group (group g + 1: the two
    tagged flows of the chain are consecutive groups, since each has its own path), from the
    start of the measurement window (put the step there: the background flows stop), on the
    windows sampled by the time series; RTT = the two flows' mean ``mean_rtt_s``; T2 with
    ε = 10 packets (Table 6), ``t2="enters"`` on the windows' 10-sample centred moving averages;
    decreases in the first 2 RTTs are skipped (``grace_s``).
    ``{"T1", "delta", "T2"}``; all NaN for the last group or without samples."""
    nan = {"T1": float("nan"), "delta": float("nan"), "T2": float("nan")}
    if not group:
        return nan
    g = group[0].get("group")
    nxt = [f for f in all_flows if f.get("group") is not None and g is not None
           and int(f["group"]) == int(g) + 1]
    if not nxt:
        return nan
    f1, f2 = group[0], nxt[0]
    s1, s2 = f1.get("samples") or {}, f2.get("samples") or {}
    if not s1.get("cwnd") or not s2.get("cwnd"):
        return nan
    w2_at = {round(t, 9): w for t, w in zip(s2["time"], s2["cwnd"])}
    common = [(t, w, w2_at[round(t, 9)]) for t, w in zip(s1["time"], s1["cwnd"]) if round(t, 9) in w2_at]
    if len(common) < 2:
        return nan
    tt, a, b = (np.asarray(c, dtype=float) for c in zip(*common))
    rtts = [float(f.get("mean_rtt_s")) for f in (f1, f2) if f.get("mean_rtt_s") is not None]
    rtt = math.fsum(rtts) / len(rtts) if rtts else float("nan")
    if not (math.isfinite(rtt) and rtt > 0):
        return nan
    lo, _hi, step = s1["window"]
    return convergence_t1_delta_t2(tt, a, b, start=lo, rtt_s=rtt, eps=PAIR_EPS,
                                   smooth_s=PAIR_SMOOTH_SAMPLES * step, t2="enters",
                                   grace_s=PAIR_GRACE_RTTS * rtt)
