"""Settling times: when a series comes back within a band of its new level after a change.

:func:`convergence_time` is the one definition (tsao2007's convergence time, jin2001's
settling after a step); :mod:`.dynamics` re-exports it for the evaluation yardsticks, and
:func:`cwnd_settle_s` makes it a group metric of the sweep table (``groups.GROUP_METRICS``,
which imports this module when the metric is computed). This module imports nothing else of
the metrics layer, so both can build on it without an import cycle.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

__all__ = ["convergence_time", "cwnd_settle_s"]


def _first_time(times: np.ndarray, cond: np.ndarray) -> float:
    hit = np.nonzero(cond)[0]
    return float(times[hit[0]]) if hit.size else float("nan")


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
    tt = np.asarray(t, dtype=float)
    xx = np.asarray(x, dtype=float)
    o = np.argsort(tt)
    tt, xx = tt[o], xx[o]
    if target is None:
        sel = (tt > steady[0]) & (tt <= steady[1])
        target = float(xx[sel].mean()) if sel.any() else float("nan")
    target = float(target)
    dt = float(np.median(np.diff(tt))) if tt.size > 1 else 1.0
    k = max(1, int(round(average_s / dt)))
    avg = pd.Series(xx).rolling(k, center=True, min_periods=1).mean().to_numpy()
    pre = (tt > change - average_s) & (tt <= change)
    start_level = float(xx[pre].mean()) if pre.any() else float("nan")
    win = (tt >= change + average_s / 2 - 1e-9) & (tt <= steady[1])
    hit = _first_time(tt[win], np.abs(avg[win] - target) <= tol * abs(target))
    secs = hit - change if math.isfinite(hit) else float("nan")
    return {"seconds": secs, "target": target, "start_level": start_level}


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
