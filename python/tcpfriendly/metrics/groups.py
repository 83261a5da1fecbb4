"""Group aggregates of a run's per-flow results: the one definition of every group metric
(part of the metrics layer, :mod:`tcpfriendly.metrics`, which re-exports these names).

The engine (``crates/tcpf-core/src/metrics``) measures each flow and link once; this module
turns the per-flow rows of a result (the engine's JSON, or ns-2's results in the same schema)
into per-group values.  ``Result.group_summary()`` / ``tcpf run``, sweeps (``tcpf sweep``),
``tcpf ns2 compare`` and every later consumer call it, so one name always means one number.

Every metric below is a function of the group's flows (and, for the two relative measures,
of all flows of the run).  Missing per-flow values (``None``/NaN, e.g. the loss events of a
UDP source) are handled as each docstring says; a value that cannot be defined is NaN.

    flows = result.raw["flows"]
    metrics.group_metrics(flows)[0]["loss_event_rate"]    # group 0, pooled
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

__all__ = [
    "FLOW_METRICS", "GROUP_METRICS", "INT_METRICS", "LINK_METRICS", "VERSION", "by_group", "flow_metrics",
    "group_metrics", "goodputs", "link_metrics", "RunFlows", "run_flows",
    "mean", "jain", "cov", "share", "fraction", "loss_event_rate", "total", "t975",
    "window_samples", "rate_cov", "cwnd_cov", "cwnd_jain_samples",
    "aimd_law", "formula_rate_pps", "formula_ratio_cov", "window_epochs", "concave_fraction",
    "cwnd_concave_frac", "reduction_indices", "cwnd_sync_frac", "epoch_spans", "cwnd_epochs",
    "cwnd_epoch_r2",
    "cwnd_epoch_rounds", "cwnd_epoch_peak", "cwnd_epoch_packets", "cwnd_p10",
]

# Bumped whenever a definition below changes, so that results computed with an older
# definition (a sweep's cached run files) are not mixed with new ones.
VERSION = 9

Flow = Mapping[str, Any]
NAN = float("nan")


# ----- plain statistics -------------------------------------------------------------------------
def _known(xs: Iterable[Any]) -> List[float]:
    out = []
    for x in xs:
        if x is None:
            continue
        x = float(x)
        if not math.isnan(x):
            out.append(x)
    return out


def mean(xs: Iterable[Any]) -> float:
    """Arithmetic mean of the known values (None and NaN left out), ``math.fsum`` / n; NaN
    when none is known."""
    v = _known(xs)
    return math.fsum(v) / len(v) if v else NAN


def total(xs: Iterable[Any]) -> Optional[int]:
    """Sum of a per-flow counter over the flows that report it; None when none does."""
    v = [int(x) for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(v) if v else None


def jain(xs: Sequence[float]) -> float:
    """Jain's fairness index F = ``(Σ x)² / (n · Σ x²)`` (the Chiu–Jain analysis, jin2001 §4;
    sastry2005 Fig. 3), 1 when all are equal, 1/n when one has everything; NaN when every
    value is 0 or there are none."""
    v = _known(xs)
    squares = math.fsum(x * x for x in v)
    return math.fsum(v) ** 2 / (len(v) * squares) if squares > 0 else NAN


def cov(xs: Sequence[float]) -> float:
    """Coefficient of variation: population standard deviation / mean (jin2001 Figs. 14–17 and
    yang2000 Fig. 21 measure smoothness by the CoV of a rate over time; as a group metric it is
    taken across the group's flows); NaN for no values or a zero mean."""
    v = _known(xs)
    if not v:
        return NAN
    m = math.fsum(v) / len(v)
    if m == 0:
        return NAN
    return math.sqrt(math.fsum((x - m) ** 2 for x in v) / len(v)) / m


# ----- flows -> groups ---------------------------------------------------------------------------
def by_group(flows: Iterable[Flow]) -> Dict[int, List[Flow]]:
    """The flows of each group, groups in ascending order, flows in result order."""
    groups: Dict[int, List[Flow]] = {}
    for f in flows:
        groups.setdefault(int(f.get("group", 0)), []).append(f)
    return {g: groups[g] for g in sorted(groups)}


def direction(flow: Flow) -> str:
    return str(flow.get("direction") or "forward")


def goodputs(flows: Iterable[Flow]) -> List[float]:
    """Per-flow goodput in b/s (a missing value counts as NaN)."""
    return [NAN if f.get("goodput_bps") is None else float(f["goodput_bps"]) for f in flows]


class RunFlows(list):
    """Every flow of a run (a list, in result order) with the lookups that relate one group
    or flow to the rest of the run made once: the goodputs of each direction (:func:`share`,
    :func:`fraction`) and the flows of each group (the pair metrics take the next group's
    first flow). :func:`group_metrics` and the sweeps' per-flow rows pass the run's flows as
    one, so each such metric costs its group's size, not the run's: scanning the run for every
    group took 11 minutes for 5 000 groups of 20 flows. Not to be changed once looked up."""

    def __init__(self, flows: Iterable[Flow] = ()) -> None:
        super().__init__(flows)
        self._goodputs: Dict[str, Tuple[float, float]] = {}
        self._groups: Optional[Dict[int, List[Flow]]] = None
        self._reductions: Optional[Tuple[List[Flow], Dict[int, Set[int]], Counter]] = None

    def direction_goodput(self, d: str) -> Tuple[float, float]:
        """The mean (:func:`mean`) and the sum (``math.fsum`` of the known values) of the
        goodputs (:func:`goodputs`) of the flows in direction ``d``."""
        if d not in self._goodputs:
            v = goodputs(f for f in self if direction(f) == d)
            self._goodputs[d] = (mean(v), math.fsum(_known(v)))
        return self._goodputs[d]

    def cwnd_reductions(self) -> Tuple[List[Flow], Dict[int, Set[int]], Counter]:
        """The flows with window samples, the sample indices where each starts a reduction
        (:func:`reduction_indices`, by ``id`` of the flow), and how many of them start one at
        each index (:func:`cwnd_sync_frac`)."""
        if self._reductions is None:
            flows = [f for f in self if _samples(f, "cwnd")]
            red = {id(f): set(reduction_indices(_samples(f, "cwnd"))) for f in flows}
            count: Counter = Counter()
            for r in red.values():  # once per flow, even if listed twice
                count.update(r)
            self._reductions = (flows, red, count)
        return self._reductions

    def group(self, g: int) -> List[Flow]:
        """The flows whose ``group`` is ``g``, in result order."""
        if self._groups is None:
            self._groups = {}
            for f in self:
                if f.get("group") is not None:
                    self._groups.setdefault(int(f["group"]), []).append(f)
        return self._groups.get(g, [])


def run_flows(flows: Iterable[Flow]) -> RunFlows:
    """``flows`` as a :class:`RunFlows` (itself if it is one)."""
    return flows if isinstance(flows, RunFlows) else RunFlows(flows)


def share(group: Sequence[Flow], all_flows: Sequence[Flow]) -> float:
    """Normalised goodput of a group: the group's mean per-flow goodput divided by the mean
    per-flow goodput of all flows in the same direction (yang2000 Figs. 13–20 normalise rates
    "so the fair share is 1"; >1 is more than a fair share).  Depends on the
    group's size only through its flows' goodputs, unlike :func:`fraction`."""
    base = run_flows(all_flows).direction_goodput(direction(group[0]))[0]
    return mean(goodputs(group)) / base if base > 0 else NAN


def fraction(group: Sequence[Flow], all_flows: Sequence[Flow]) -> float:
    """The group's fraction of its direction's goodput: Σ goodput of the group / Σ goodput of
    all flows in the same direction (between 0 and 1; two equal-sized fair groups get 0.5
    each).  ``fraction = share · n_group / n_direction``."""
    base = run_flows(all_flows).direction_goodput(direction(group[0]))[1]
    return math.fsum(_known(goodputs(group))) / base if base > 0 else NAN


def loss_event_rate(group: Sequence[Flow]) -> float:
    """Pooled loss event rate of a group: Σ loss events / Σ packets sent over its flows — the
    loss event rate p of the TCP throughput equation as yang2000 (window reductions / packets
    sent) and RFC 5348 (§5) define it, taken over the aggregate (not the mean of the flows' rates, which weights a flow that sent little
    as much as one that sent much).  NaN when a flow has no loss-event count (UDP sources;
    ns-2 TFRC flows without a drop trace) or the group sent nothing."""
    if any(f.get("loss_events") is None for f in group):
        return NAN
    sent = sum(int(f.get("packets_sent") or 0) for f in group)
    return sum(int(f["loss_events"]) for f in group) / sent if sent > 0 else NAN


# ----- the throughput formula against the measurement (yang2000 §2.4) ---------------------------
def aimd_law(flow: Flow) -> Optional[Tuple[float, float]]:
    """(α, keep) of a flow's AIMD law, or None when it has none: standard TCP is (1, 1/2);
    GAIMD its ``alpha`` and ``keep`` (or 1 − ``beta``, the fraction removed)."""
    alg = str(flow.get("algorithm") or "")
    if alg == "tcp":
        return 1.0, 0.5
    if alg == "gaimd":
        p = flow.get("params") or {}
        if isinstance(p, str):
            import json

            p = json.loads(p)
        if "alpha" not in p or ("keep" not in p and "beta" not in p):
            return None
        keep = float(p["keep"]) if "keep" in p else 1.0 - float(p["beta"])
        return float(p["alpha"]), keep
    return None


def _eq2_pps(alpha: float, keep: float, p: float, rtt: float, t0: float) -> float:
    if not (p > 0 and p < 1 and rtt > 0 and t0 >= 0) or any(map(math.isnan, (p, rtt, t0))):
        return NAN
    if not (alpha > 0 and 0 < keep < 1) or any(map(math.isnan, (alpha, keep))):
        return NAN
    from .. import _core  # eq. 2 itself (the `rate` model's rate_eq2), without its curves

    return float(_core.gaimd_rate(alpha, keep, p, rtt, t0, 1.0))


def formula_rate_pps(group: Sequence[Flow]) -> float:
    """yang2000 §2.4.2 (Figs. 2-5), the *predicted* sending rate of a group in packets/s:
    eq. 2, T_{α,β}(p, RTT, T0, b), at the averages over the group's flows of the loss rate
    (each flow's window reductions / packets sent: ``loss_event_rate``), the round-trip time
    (``mean_rtt_s``) and the timeout (``mean_rto_s``), with the group's (α, β) (:func:`aimd_law`)
    and b = 1 (no delayed ACKs). The paper's "predication/measurement" ratio is this divided
    by the group's mean sending rate in packets/s, ``throughput_bps_mean / (8 · packet_size)``
    (the packet size is the scenario's, not a flow's: the ratio is formed by the consumer).
    NaN when the flows have no AIMD law (UDP, other controllers), or no loss."""
    laws = {aimd_law(f) for f in group}
    if len(laws) != 1 or None in laws:
        return NAN
    (alpha, keep), = laws
    return _eq2_pps(alpha, keep, mean(f.get("loss_event_rate") for f in group),
                    mean(f.get("mean_rtt_s") for f in group), mean(f.get("mean_rto_s") for f in group))


def formula_ratio_cov(group: Sequence[Flow]) -> float:
    """yang2000 §2.4.3 (Figs. 6-7: the prediction accuracy of each of the 16 GAIMD flows), the
    spread of the per-flow accuracy: the coefficient of variation (:func:`cov`) over the group's
    flows of eq. 2 at the flow's own loss rate, RTT and timeout (as :func:`formula_rate_pps`)
    divided by the flow's own sending rate (``throughput_bps``). A CoV does not depend on the
    unit of the rate, so no packet size is needed. NaN as :func:`formula_rate_pps`."""
    ratios = []
    for f in group:
        law = aimd_law(f)
        x = f.get("throughput_bps")
        if law is None or x is None or not float(x) > 0:
            return NAN
        ratios.append(_eq2_pps(law[0], law[1], _num(f.get("loss_event_rate")),
                               _num(f.get("mean_rtt_s")), _num(f.get("mean_rto_s"))) / float(x))
    return cov(ratios) if ratios and not any(math.isnan(r) for r in ratios) else NAN


def _num(x: Any) -> float:
    return NAN if x is None else float(x)


# ----- time-resolved measures (from the run's time series) --------------------------------------
SERIES_COLUMNS = ("rate_bps", "cwnd")


def window_samples(raw: Mapping[str, Any]) -> Dict[int, Dict[str, List[float]]]:
    """Per flow id, its time-series samples (``time`` and the :data:`SERIES_COLUMNS`: the rate
    delivered over each sampling interval, docs/see-it.md, and the window at the sample) whose
    whole interval lies in the measurement window ``scenario.measure``; ``{}`` when the run
    recorded no time series.  The sampling interval (the scenario's ``timeseries``) is the
    time scale of :func:`rate_cov`, :func:`cwnd_cov` and :func:`cwnd_jain_samples`."""
    ts = (raw.get("timeseries") or {}).get("flows") or {}
    sc = raw.get("scenario") or {}
    step = sc.get("timeseries")
    if not ts or not step:
        return {}
    m = sc.get("measure") or {}
    lo = float(m.get("from") or 0.0)
    hi = float(m.get("to") if m.get("to") is not None else sc.get("duration", float("inf")))
    cols = [c for c in SERIES_COLUMNS if c in ts]
    out: Dict[int, Dict[str, List[float]]] = {}
    for i, (t, flow) in enumerate(zip(ts["time"], ts["flow"])):
        if t - float(step) >= lo - 1e-9 and t <= hi + 1e-9:
            d = out.setdefault(int(flow), {"time": [], **{c: [] for c in cols},
                                           "window": (lo, hi, float(step))})
            d["time"].append(float(t))
            for c in cols:
                v = ts[c][i]
                d[c].append(NAN if v is None else float(v))
    return out


def _samples(flow: Flow, column: str) -> List[float]:
    s = flow.get("samples") or {}
    return list(s.get(column) or [])


def rate_cov(group: Sequence[Flow]) -> float:
    """Smoothness of a group: the mean over its flows of the coefficient of variation
    (:func:`cov`) of each flow's rate samples at the time series' interval over the
    measurement window (jin2001 §6.2.1, Figs. 14-17: 0.2-s bins; yang2000 Fig. 21: 150 ms).
    The samples are attached by :func:`group_metrics` (``series=``); NaN without them.
    The same measure on a data frame at any bin width: :func:`.dynamics.smoothness_cov`."""
    return mean(cov(_samples(f, "rate_bps")) if _samples(f, "rate_bps") else NAN for f in group)


def cwnd_cov(group: Sequence[Flow]) -> float:
    """As :func:`rate_cov` for the congestion window sampled at the time series' interval
    (jin2001 §6.2.2, Fig. 18: the smoothness of the window after a step); NaN without
    samples (and for rate-based flows, whose window is not sampled)."""
    return mean(cov(_samples(f, "cwnd")) if _samples(f, "cwnd") else NAN for f in group)


def cwnd_jain_samples(group: Sequence[Flow]) -> List[float]:
    """Jain's index (:func:`jain`) of the group's windows at each sampling instant of the
    measurement window where every flow of the group has a sample (sastry2005 Fig. 3: the
    Jain-Chiu-Hawe index of two LOG flows' cwnd over time); [] without samples.  The same
    on a data frame at any bin width: :func:`.dynamics.jain_over_time` (``column="cwnd"``)."""
    per_flow = []
    for f in group:
        s = f.get("samples") or {}
        if not s.get("cwnd"):
            return []
        per_flow.append({round(t, 9): w for t, w in zip(s["time"], s["cwnd"])})
    common = sorted(set.intersection(*(set(d) for d in per_flow))) if per_flow else []
    return [jain([d[t] for d in per_flow]) for t in common]


def _p10(xs: Iterable[Any]) -> float:
    """The 10th percentile of the known values, linear between order statistics (the values
    are at least this 90 % of the time); NaN when none is known."""
    v = sorted(_known(xs))
    if not v:
        return NAN
    pos = 0.1 * (len(v) - 1)
    i = int(math.floor(pos))
    return v[i] + (v[min(i + 1, len(v) - 1)] - v[i]) * (pos - i)


def _cwnd_jain_p10(group: Sequence[Flow]) -> float:
    return _p10(cwnd_jain_samples(group))


def cwnd_p10(group: Sequence[Flow]) -> float:
    """How low a window goes: the 10th percentile of each flow's window samples over the
    measurement window (the window is at least this 90 % of the time), mean over the group's
    flows (sastry2005 §VI-C: SIGMOID's decrease "leaves the window size virtually unchanged"
    below its knee, so "a minimum throughput is guaranteed"); NaN without samples."""
    return mean(_p10(_samples(f, "cwnd")) for f in group)


def epoch_spans(w: Sequence[float]) -> List[Tuple[int, int, bool, str]]:
    """The congestion epochs of a sampled window, the one definition behind
    :func:`window_epochs` and :func:`cwnd_epochs`: the maximal runs of samples over which the
    window does not fall (a fall, w[i] < w[i−1], is a loss reaction; the window only grows
    otherwise). Each is ``(i, j, after_fall, end)``: the samples ``w[i:j]``, whether the run
    starts right after a fall, and how it ends: ``"fall"``, ``"nan"`` (a missing sample, which
    starts no epoch) or ``"data"`` (the end of the samples)."""
    out: List[Tuple[int, int, bool, str]] = []
    i, after = None, False
    for k, x in enumerate(w):
        if math.isnan(x):
            if i is not None:
                out.append((i, k, after, "nan"))
            i, after = None, False
        elif i is not None and x < w[k - 1]:
            out.append((i, k, after, "fall"))
            i, after = k, True
        elif i is None:
            i = k
    if i is not None:
        out.append((i, len(w), after, "data"))
    return out


def window_epochs(w: Sequence[float], min_len: int = 5) -> List[List[float]]:
    """The congestion epochs of a sampled window (:func:`epoch_spans`) of at least ``min_len``
    samples (shorter runs are fragments of a recovery), without those cut by a missing sample."""
    return [list(w[i:j]) for i, j, _, end in epoch_spans(w) if end != "nan" and j - i >= min_len]


def concave_fraction(w: Sequence[float], min_len: int = 5) -> float:
    """The shape of a window curve (liu2008 §5, §6.1, Fig. 8: Illinois's curve is concave
    over each congestion epoch, BIC's concave-convex, HS-TCP's and C-TCP's not concave): over
    the epochs of :func:`window_epochs`, the fraction of the interior samples that lie on or
    above the epoch's chord (the straight line from its first to its last sample). A concave
    curve lies above its chord everywhere (1), a convex one below (0), a concave-convex one
    part of the way; NaN without an epoch."""
    above = n = 0
    for e in window_epochs(w, min_len):
        k = len(e) - 1
        for j in range(1, k):
            chord = e[0] + (e[k] - e[0]) * j / k
            above += e[j] >= chord
            n += 1
    return above / n if n else NAN


def cwnd_concave_frac(group: Sequence[Flow]) -> float:
    """:func:`concave_fraction` of each flow's window samples (the time series' interval over
    the measurement window), mean over the group's flows; NaN without samples."""
    return mean(concave_fraction(_samples(f, "cwnd")) if _samples(f, "cwnd") else NAN for f in group)


def reduction_indices(w: Sequence[float]) -> List[int]:
    """The sample indices where a window reduction starts: w[i] < w[i−1] after a sample that
    was not itself a decrease (a reduction spread over several samples, as a rate-halving
    recovery, counts once)."""
    return [i for i in range(1, len(w))
            if w[i] < w[i - 1] and (i < 2 or not w[i - 1] < w[i - 2])]


def cwnd_sync_frac(group: Sequence[Flow], all_flows: Sequence[Flow]) -> float:
    """Synchronisation of window reductions (liu2008 §6.2, Fig. 12: Illinois "avoids
    synchronization", HS-TCP "generates synchronization frequently"): the fraction of the
    group's window reductions (:func:`reduction_indices` of each flow's window samples) for
    which at least one *other* flow of the run (any group) starts a reduction within one
    sampling interval (the same, the previous or the next sample): choose the time series'
    interval near one RTT. NaN without samples or without a reduction."""
    flows, red, count = run_flows(all_flows).cwnd_reductions()
    if not flows or not all(_samples(f, "cwnd") for f in group):
        return NAN
    hit = n = 0
    for f in group:
        own = red.get(id(f))  # None when f is not one of all_flows
        mine = own if own is not None else set(reduction_indices(_samples(f, "cwnd")))
        for i in mine:
            n += 1
            # another flow starts a reduction at j if more flows do than f itself
            hit += len(flows) > 1 and any(count[j] > (own is not None and j in own) for j in (i - 1, i, i + 1))
    return hit / n if n else NAN
def _r2(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Coefficient of determination of the least-squares line y = a + b·x (1 − SS_res/SS_tot);
    NaN when y is constant or x has no spread."""
    n = len(xs)
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    syy = math.fsum((y - my) ** 2 for y in ys)
    if sxx <= 0 or syy <= 0:
        return NAN
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return sxy * sxy / (sxx * syy)


EPOCH_MIN_SAMPLES = 10


def cwnd_epochs(flow: Flow) -> List[Dict[str, Any]]:
    """A flow's congestion epochs (:func:`epoch_spans`) in its window samples over the
    measurement window. Each is ``{"time", "cwnd", "complete"}``; ``complete`` is True when the
    epoch both starts after a fall and ends with one (the first and the last run are cut by
    the window). [] without samples."""
    s = flow.get("samples") or {}
    t, w = s.get("time") or [], s.get("cwnd") or []
    return [{"time": t[i:j], "cwnd": w[i:j], "complete": after and end == "fall"}
            for i, j, after, end in epoch_spans(w)]


def cwnd_epoch_r2(group: Sequence[Flow]) -> float:
    """Linearity of the window's growth within congestion epochs (sastry2005 Lemma 1, Fig. 4:
    "the successive window sizes after each application of a smooth increase policy during a
    congestion epoch can be approximated by an arithmetic series", shown by a linear best fit
    of cwnd).  In each epoch (:func:`cwnd_epochs`) with at least :data:`EPOCH_MIN_SAMPLES`
    samples (with samples about one RTT apart, each sample is one application of the increase
    policy) the R² of a least-squares line of the window against time is taken.  Mean over
    the epochs, then over the group's flows; NaN without samples or without an epoch long
    enough."""
    per_flow = []
    for f in group:
        r2s = [r for e in cwnd_epochs(f) if len(e["cwnd"]) >= EPOCH_MIN_SAMPLES
               for r in [_r2(e["time"], e["cwnd"])] if not math.isnan(r)]
        if r2s:
            per_flow.append(math.fsum(r2s) / len(r2s))
    return mean(per_flow)


def _per_complete_epoch(group: Sequence[Flow], value: Callable[[Dict[str, Any], float, float], float]) -> float:
    """``value(epoch, step, rtt)`` over each flow's complete epochs (:func:`cwnd_epochs`; step
    the sampling interval, rtt the flow's ``mean_rtt_s``), mean over a flow's epochs, then over
    the group's flows; flows without samples or a positive RTT are left out; NaN without a
    complete epoch."""
    per_flow = []
    for f in group:
        s = f.get("samples") or {}
        rtt = f.get("mean_rtt_s")
        if not s.get("window") or rtt is None or not float(rtt) > 0:
            continue
        step = float(s["window"][2])
        v = [value(e, step, float(rtt)) for e in cwnd_epochs(f) if e["complete"]]
        if v:
            per_flow.append(math.fsum(v) / len(v))
    return mean(per_flow)


def cwnd_epoch_rounds(group: Sequence[Flow]) -> float:
    """Round trips per congestion epoch: the mean over a flow's complete epochs
    (:func:`cwnd_epochs`) of the time from the sample after one fall of the window to the
    sample before the next, plus one sampling interval, divided by the flow's ``mean_rtt_s``
    (sastry2005 eq. 19: an epoch has n ≈ f(X)g(X) applications of the increase policy, one per
    RTT).  Mean over the group's flows; NaN without a complete epoch."""
    return _per_complete_epoch(group, lambda e, step, rtt: (e["time"][-1] - e["time"][0] + step) / rtt)


def cwnd_epoch_packets(group: Sequence[Flow]) -> float:
    """Packets per congestion epoch as the sum of the window over the epoch's round trips:
    Σ w_i · Δ / RTT over the samples of a complete epoch (:func:`cwnd_epochs`; Δ the sampling
    interval, RTT the flow's ``mean_rtt_s``), i.e. the sum of the terms of sastry2005's
    arithmetic series, S_n (eq. 20).  Mean over complete epochs, then over the group's flows;
    NaN without one."""
    return _per_complete_epoch(group, lambda e, step, rtt: step / rtt * math.fsum(e["cwnd"]))


def cwnd_epoch_peak(group: Sequence[Flow]) -> float:
    """The window just before each fall (X, the largest window of the epoch in sastry2005
    §V-A), mean over a flow's complete epochs (:func:`cwnd_epochs`), then over the group's
    flows; NaN without a complete epoch."""
    return mean(mean(e["cwnd"][-1] for e in cwnd_epochs(f) if e["complete"]) for f in group)


# ----- the table of per-flow metrics -------------------------------------------------------------
def _flow_count(key: str) -> Callable[[Flow, Sequence[Flow]], Optional[int]]:
    return lambda f, a: total([f.get(key)])


#: Per-flow metrics of a run: ``name: (function of (flow, all flows of the run), definition)``.
#: The one definition of each per-flow value that a group metric averages or sums
#: (:data:`GROUP_METRICS` takes its means from here), and the columns of a sweep's per-flow
#: table (``per_flow = true``: jin2001 Figs. 8-13 and liu2008 plot each flow as a point).
FLOW_METRICS: Dict[str, Tuple[Callable[[Flow, Sequence[Flow]], Any], str]] = {
    "throughput_bps": (lambda f, a: _num(f.get("throughput_bps")),
                       "send rate over the measurement window (b/s); its group mean is throughput_bps_mean"),
    "goodput_bps": (lambda f, a: goodputs([f])[0],
                    "delivered rate over the measurement window (b/s); its group mean is goodput_bps_mean"),
    "share": (lambda f, a: share([f], a),
              "the flow's goodput / mean flow goodput of all flows of the run in its direction (1 = fair); "
              "its group mean is the group's share"),
    "packets_sent": (_flow_count("packets_sent"), "packets sent over the measurement window (retransmissions included)"),
    "packets_delivered": (_flow_count("packets_delivered"), "packets delivered over the measurement window (some sent before it)"),
    "loss_events": (_flow_count("loss_events"), "window reductions over the measurement window (None for UDP)"),
    "loss_event_rate": (lambda f, a: loss_event_rate([f]),
                        "loss events / packets sent (the group's pooled rate over this one flow)"),
    "retransmissions": (_flow_count("retransmissions"), "packets retransmitted"),
    "timeouts": (_flow_count("timeouts"), "retransmission timeouts"),
    "mean_rtt_s": (lambda f, a: _num(f.get("mean_rtt_s")), "mean round-trip time (s)"),
    "mean_cwnd": (lambda f, a: _num(f.get("mean_cwnd")), "time-average window (packets)"),
    "mean_rto_s": (lambda f, a: _num(f.get("mean_rto_s")), "mean retransmission timeout (s)"),
}


def flow_metrics(flow: Flow, all_flows: Sequence[Flow] = (), names: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``{metric: value}`` of one flow (all of :data:`FLOW_METRICS`, or ``names``); ``all_flows``:
    every flow of its run, for ``share`` (default: the flow alone)."""
    every = run_flows(all_flows) or RunFlows([flow])
    return {m: FLOW_METRICS[m][0](flow, every) for m in (names if names is not None else FLOW_METRICS)}


def _per_flow(name: str) -> Callable[[Sequence[Flow], Sequence[Flow]], float]:
    """The group mean of the per-flow metric ``name`` (:data:`FLOW_METRICS`)."""
    fn = FLOW_METRICS[name][0]
    return lambda g, a: mean(fn(f, a) for f in g)


def _per_flow_total(name: str) -> Callable[[Sequence[Flow], Sequence[Flow]], Optional[int]]:
    """The group sum of the per-flow counter ``name`` (:data:`FLOW_METRICS`)."""
    fn = FLOW_METRICS[name][0]
    return lambda g, a: total(fn(f, a) for f in g)


# ----- the table of group metrics ----------------------------------------------------------------
def _good(g: Sequence[Flow], _all: Sequence[Flow]) -> List[float]:
    return goodputs(g)


def _cwnd_settle_s(g: Sequence[Flow], _all: Sequence[Flow]) -> float:
    # a settling time (transients.cwnd_settle_s, on transients.convergence_time): it needs
    # numpy, so it is imported when the metric is computed
    from .transients import cwnd_settle_s

    return cwnd_settle_s(g)


def _pair(key: str) -> Callable[[Sequence[Flow], Sequence[Flow]], float]:
    # jin2001's T1, Δ, T2 of two flows (transients.pair_convergence, on
    # transients.convergence_t1_delta_t2); imported when computed (numpy)
    def fn(g: Sequence[Flow], a: Sequence[Flow]) -> float:
        from .transients import pair_convergence

        # its second flow is the next group's first: only that group's flows are handed
        # over (looked up once per run), which pair_convergence picks it from as from all
        g0 = g[0].get("group") if g else None
        return float(pair_convergence(g, run_flows(a).group(int(g0) + 1) if g0 is not None else [])[key])
    return fn


# name -> (definition, one line for docs and --help).  Declarative table.
GROUP_METRICS: Dict[str, Any] = {
    "n_flows": (lambda g, a: len(g), "flows in the group"),
    "goodput_bps_mean": (_per_flow("goodput_bps"), "mean per-flow goodput (b/s)"),
    "goodput_bps_sum": (lambda g, a: math.fsum(_known(goodputs(g))), "aggregate goodput of the group (b/s)"),
    "goodput_bps_min": (lambda g, a: min(goodputs(g)), "lowest per-flow goodput (b/s)"),
    "goodput_bps_max": (lambda g, a: max(goodputs(g)), "highest per-flow goodput (b/s)"),
    "throughput_bps_mean": (_per_flow("throughput_bps"), "mean per-flow send rate (b/s)"),
    "share": (share, "group mean goodput / mean flow goodput in the same direction (1 = fair)"),
    "fraction": (fraction, "group goodput / total goodput of its direction"),
    "jain": (lambda g, a: jain(goodputs(g)), "Jain's fairness index of goodput within the group"),
    "cov": (lambda g, a: cov(goodputs(g)), "coefficient of variation of goodput within the group"),
    "loss_event_rate": (lambda g, a: loss_event_rate(g), "pooled: loss events / packets sent"),
    "loss_events": (_per_flow_total("loss_events"), "sum over the group"),
    "retransmissions": (_per_flow_total("retransmissions"), "sum over the group"),
    "timeouts": (_per_flow_total("timeouts"), "sum over the group"),
    "mean_rtt_s": (_per_flow("mean_rtt_s"), "mean over the group's flows (s)"),
    "mean_cwnd": (_per_flow("mean_cwnd"), "mean over the group's flows (packets)"),
    "mean_rto_s": (_per_flow("mean_rto_s"), "mean over the group's flows of the mean RTO (s)"),
    "formula_rate_pps": (lambda g, a: formula_rate_pps(g),
                         "yang2000 eq. 2 at the group's mean loss rate, RTT and RTO, with its (alpha, beta) (packets/s; NaN without an AIMD law)"),
    "formula_ratio_cov": (lambda g, a: formula_ratio_cov(g),
                          "CoV over the group's flows of eq. 2 at the flow's own loss rate, RTT and RTO / its sending rate (yang2000 Figs. 6-7)"),
    "rate_cov": (lambda g, a: rate_cov(g),
                 "mean over the group's flows of the CoV of the rate at the time-series interval (NaN without a time series)"),
    "cwnd_cov": (lambda g, a: cwnd_cov(g),
                 "mean over the group's flows of the CoV of the window at the time-series interval (NaN without a time series)"),
    "cwnd_jain_mean": (lambda g, a: mean(cwnd_jain_samples(g)),
                       "Jain's index of the group's windows at each time-series sample, mean over the samples"),
    "cwnd_jain_p10": (lambda g, a: _cwnd_jain_p10(g),
                      "Jain's index of the group's windows at each time-series sample, 10th percentile (exceeded 90 % of the time)"),
    "cwnd_p10": (lambda g, a: cwnd_p10(g),
                 "10th percentile of each flow's window samples (the window is at least this 90 % of the time), mean over the group's flows (NaN without a time series)"),
    "cwnd_concave_frac": (lambda g, a: cwnd_concave_frac(g),
                          "fraction of the window samples inside congestion epochs on or above the epoch's chord, mean over the group's flows (1 = concave; NaN without a time series)"),
    "cwnd_sync_frac": (cwnd_sync_frac,
                       "fraction of the group's window reductions with another flow of the run reducing within one sample (NaN without a time series)"),
    "cwnd_settle_s": (_cwnd_settle_s,
                      "seconds after the measurement window's start until the 10-sample moving-average window is within 10 % of its second-half mean"),
    "cwnd_epoch_r2": (lambda g, a: cwnd_epoch_r2(g),
                      "R² of a line fitted to the window within each congestion epoch (>= 10 samples), mean over epochs and flows"),
    "cwnd_epoch_rounds": (lambda g, a: cwnd_epoch_rounds(g),
                          "RTTs per complete congestion epoch (between two falls of the window), mean over epochs and flows"),
    "cwnd_epoch_peak": (lambda g, a: cwnd_epoch_peak(g),
                        "the window just before each fall, mean over complete epochs and flows (packets)"),
    "cwnd_epoch_packets": (lambda g, a: cwnd_epoch_packets(g),
                           "packets per complete congestion epoch, the window summed over its round trips, mean over epochs and flows"),
    "pair_t1_rtt": (_pair("T1"),
                    "jin2001 T1: RTTs from the measurement window's start to the first window decrease (after 2 RTTs) of this group's first flow or the next group's"),
    "pair_delta": (_pair("delta"),
                   "jin2001 Δ: |w1 − w2| (packets) of this group's first flow and the next group's at T1"),
    "pair_t2_rtt": (_pair("T2"),
                    "jin2001 T2: RTTs from the window's start until the two windows' 10-sample averages first differ by less than 10 packets"),
}
# Integer-valued metrics and columns (sums of counters; a flow's counters and id; links' drops,
# marks and arrivals).
INT_METRICS = {"n_flows", "loss_events", "retransmissions", "timeouts", "drops", "marks", "arrivals",
               "packets_sent", "packets_delivered", "flow"}


def _per_arrival(link: Mapping[str, Any], count: str) -> float:
    arrivals = link.get("arrivals")
    n = link.get(count)
    if arrivals is None or n is None or not arrivals:
        return NAN
    return float(n) / float(arrivals)


#: Per-link metrics of a run: ``name: (function of the engine's link record, definition)``.
#: The engine measures each link once (``crates/tcpf-core/src/metrics``); the rates are derived
#: here so that every consumer (sweeps, reports) divides the same way.
LINK_METRICS: Dict[str, Tuple[Callable[[Mapping[str, Any]], Any], str]] = {
    "utilization": (lambda l: l.get("utilization"), "fraction of the link's capacity used over the measurement window"),
    "drops": (lambda l: l.get("drops"), "packets dropped at the link (queue overflow, RED, loss model)"),
    "marks": (lambda l: l.get("marks"), "packets ECN-marked at the link"),
    "mean_queue_pkts": (lambda l: l.get("mean_queue_pkts"), "time-average queue length (packets)"),
    "arrivals": (lambda l: l.get("arrivals"), "packets that arrived at the link"),
    "drop_rate": (lambda l: _per_arrival(l, "drops"), "drops / arrivals (jin2001 Fig. 16's congestion level counts drops and marks per packet)"),
    "mark_rate": (lambda l: _per_arrival(l, "marks"), "ECN marks / arrivals"),
}


def link_metrics(link: Mapping[str, Any], names: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """``{metric: value}`` of one link record of a run (all of :data:`LINK_METRICS`, or ``names``);
    a value the record does not have is None."""
    return {m: LINK_METRICS[m][0](link) for m in (names if names is not None else LINK_METRICS)}


def group_metrics(flows: Sequence[Flow], names: Optional[Sequence[str]] = None,
                  series: Optional[Mapping[int, Sequence[float]]] = None) -> Dict[int, Dict[str, Any]]:
    """``{group: {metric: value}}`` for every group of a run's flows (all metrics of
    :data:`GROUP_METRICS`, or ``names``).  ``series``: :func:`window_samples` of the run, for
    the time-resolved metrics (``rate_cov``, ``cwnd_cov``, ``cwnd_jain_*``; NaN without it)."""
    flows = RunFlows(flows)
    if series:
        flows = RunFlows(dict(f, samples=series.get(int(f.get("id", -1)))) for f in flows)
    names = list(GROUP_METRICS) if names is None else list(names)
    fns: List[Callable[[Sequence[Flow], Sequence[Flow]], Any]] = [GROUP_METRICS[n][0] for n in names]
    return {g: {n: fn(fs, flows) for n, fn in zip(names, fns)} for g, fs in by_group(flows).items()}


# Two-sided 95% quantiles of Student's t, t(0.975, df), for df = 1..30.
_T975 = [12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
         2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
         2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
         2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272]
_Z975 = 1.959963984540054


def t975(df: int) -> float:
    """t(0.975, df), the two-sided 95% quantile of Student's t used by every confidence interval
    of the package (sweep plots, jin2001 Table 5's intervals): the table for df <= 30, the
    Cornish-Fisher expansion above (error < 1e-5)."""
    if df < 1:
        return float("nan")
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = _Z975, float(df)
    return (z + (z ** 3 + z) / (4 * v) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * v ** 3))
