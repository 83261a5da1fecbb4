"""Figures of one run: :func:`figure` draws one kind, :func:`write` saves several (PNG, SVG).

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot state, no GUI
backend), so they are safe in scripts, servers and notebooks alike; Jupyter shows a returned
Figure inline.
"""

from __future__ import annotations

import io
import math
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from .. import metrics
from ..errors import ScenarioError
from ..metrics import dynamics
from ..outfiles import atomic_write, claim_shared

__all__ = ["KINDS", "SERIES_KINDS", "DEFAULT_BIN_S", "NoTimeSeries", "available_kinds", "default_bin", "figure", "fit",
           "save", "svg_text", "write"]

#: Every kind of figure, in the order :func:`write` draws them.
KINDS = ("cwnd", "rate", "rtt", "queue", "goodput")
#: The kinds drawn from the run's time series.
SERIES_KINDS = ("cwnd", "rate", "rtt", "queue")
#: Bin width for the rate figure: jin2001 §6.2.3 (Figs. 14-17) bins throughput in 0.2 s.
DEFAULT_BIN_S = 0.2
#: Above this many flows, ``by="group"`` is the default (one line per group, not per flow).
MAX_FLOW_LINES = 8
#: Links drawn by the queue figure unless ``links=`` names them (the most active ones).
MAX_LINKS = 4

_GROUP_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"]
_LOSS_MARKERS = {"fast_retransmit": ("v", "loss event (fast retransmit)"),
                 "loss": ("v", "loss event"),
                 "ecn": ("o", "ECN echo"),
                 "timeout": ("x", "timeout")}
_RECORD_HINT = ("record one with `timeseries = 0.1` (seconds) at the top of the scenario file, "
                "`tcpf run FILE --timeseries 0.1` (or --plot DIR, which records one), or "
                "run(..., timeseries=0.1)")


class NoTimeSeries(ScenarioError):
    """The figure needs the run's time series, which the run did not record."""


# ----- inputs -----------------------------------------------------------------------------------
def _raw(result: Any) -> Dict[str, Any]:
    if isinstance(result, Mapping):
        return dict(result)
    raw = getattr(result, "raw", None)
    if isinstance(raw, Mapping):
        return dict(raw)
    raise ScenarioError.at("result", f"must be a tcpfriendly.Result or its JSON as a dict, got {type(result).__name__}")


def available_kinds(result: Any) -> List[str]:
    """The kinds this result can draw: with a time series all of :data:`KINDS` but ``cwnd``
    without a window-based flow and ``rtt`` without RTT samples (a run of UDP sources only);
    without one, ``goodput``."""
    raw = _raw(result)
    ts = raw.get("timeseries")
    if not isinstance(ts, Mapping):
        return ["goodput"]
    series = ts.get("flows") if isinstance(ts.get("flows"), Mapping) else {}

    def any_sample(column: str, positive: bool = False) -> bool:
        v = np.asarray([np.nan if x is None else x for x in series.get(column) or []], dtype=float)
        ok = np.isfinite(v) & (v > 0) if positive else np.isfinite(v)
        return bool(ok.any())

    drop = {"cwnd"} if not any_sample("cwnd") else set()
    if not any_sample("srtt_s", positive=True):
        drop.add("rtt")
    return [k for k in KINDS if k not in drop]


def _series(raw: Mapping[str, Any], which: str, kind: str) -> pd.DataFrame:
    ts = raw.get("timeseries")
    if not isinstance(ts, Mapping):
        raise NoTimeSeries.at("kind", f"{kind!r} needs the run's time series, which this run did not "
                              f"record: {_RECORD_HINT}; kind 'goodput' needs none")
    df = pd.DataFrame(ts.get(which) or {})
    if df.empty:
        raise NoTimeSeries.at("kind", f"{kind!r}: the run's time series has no {which} samples "
                              "(the run ended before the first sampling interval?)")
    return df


def _flow_table(raw: Mapping[str, Any]) -> pd.DataFrame:
    flows = pd.DataFrame(raw.get("flows") or [])
    if flows.empty:
        raise ScenarioError.at("result", "has no flows")
    return flows.sort_values("id").reset_index(drop=True)


def _group_label(raw: Mapping[str, Any], group: int) -> str:
    from ..formatting import _algorithm_label, _params_label

    for f in raw.get("flows") or []:
        if f.get("group") == group:
            params = _params_label(f.get("params"))
            return f"group {group}: {_algorithm_label(f)}" + ("" if params == "-" else f" {params}")
    return f"group {group}"


def _flow_label(raw: Mapping[str, Any], flow: int, group: int) -> str:
    """A flow's legend entry: its id, its group and the group's algorithm (``flow 4 (group 1:
    tcp/sack)``); the parameters are in the group lines and the report's tables."""
    from ..formatting import _algorithm_label

    for f in raw.get("flows") or []:
        if f.get("group") == group:
            return f"flow {flow} (group {group}: {_algorithm_label(f)})"
    return f"flow {flow} (group {group})"


def _per_link(sc: Mapping[str, Any], key: str) -> Dict[str, Any]:
    """``{reported link name: its queue setting `key`}`` of a normalized scenario: the
    dumbbell's bottleneck and its reverse direction (the same queue settings), a general
    topology's links and the reverse directions of the duplex ones; links without it are left
    out."""
    out: Dict[str, Any] = {}
    b = sc.get("bottleneck")
    if isinstance(b, Mapping) and b.get(key) is not None:
        out["bottleneck"] = out["bottleneck_reverse"] = b[key]
    for link in sc.get("links") or []:
        if isinstance(link, Mapping) and isinstance(link.get("name"), str) and link.get(key) is not None:
            out[link["name"]] = link[key]
            if link.get("duplex"):
                out[f"{link['name']}_reverse"] = link[key]
    return out


def _queue_limits(sc: Mapping[str, Any]) -> Dict[str, float]:
    """``{reported link name: buffer limit (packets)}`` (:func:`_per_link`'s ``limit``)."""
    return {k: float(v) for k, v in _per_link(sc, "limit").items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _scenario_label(raw: Mapping[str, Any]) -> str:
    from ..formatting import _link_label

    sc = raw.get("scenario") or {}
    parts = [f"{len(raw.get('flows') or [])} flows"]
    if isinstance(sc.get("bottleneck"), Mapping):
        parts.append(_link_label(sc["bottleneck"]))
    if "seed" in sc:
        parts.append(f"seed {sc['seed']}")
    return ", ".join(parts)


def _by(by: Optional[str], n_flows: int) -> str:
    if by is None:
        return "flow" if n_flows <= MAX_FLOW_LINES else "group"
    if by not in ("flow", "group"):
        raise ScenarioError.at("by", f"must be flow or group, got {by!r}")
    return by


def _pick_flows(flows: pd.DataFrame, chosen: Optional[Iterable[int]]) -> pd.DataFrame:
    if chosen is None:
        return flows
    ids = []
    for f in chosen:
        if isinstance(f, bool) or not isinstance(f, (int, np.integer)):
            raise ScenarioError.at("flows", f"must be flow ids (integers), got {f!r}")
        ids.append(int(f))
    unknown = sorted(set(ids) - set(int(i) for i in flows["id"]))
    if unknown:
        raise ScenarioError.at("flows", f"no flow {unknown[0]} in this run (ids 0..{len(flows) - 1})")
    return flows[flows["id"].isin(ids)]


def _cut(df: pd.DataFrame, t0: Optional[float], t1: Optional[float]) -> pd.DataFrame:
    if t0 is not None:
        df = df[df["time"] >= t0]
    if t1 is not None:
        df = df[df["time"] <= t1]
    return df


def _check_window(t0: Optional[float], t1: Optional[float]) -> None:
    for name, v in (("t0", t0), ("t1", t1)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0):
            raise ScenarioError.at(name, f"must be a time in seconds >= 0, got {v!r}")
    if t0 is not None and t1 is not None and t1 <= t0:
        raise ScenarioError.at("t1", f"must be after t0 ({t0:g} s), got {t1:g}")


def _flow_color(group: int, k: int, n: int) -> Any:
    """Flows of one group share its hue, from dark to light."""
    from matplotlib.colors import to_rgb

    base = np.array(to_rgb(_GROUP_COLORS[group % len(_GROUP_COLORS)]))
    mix = 0.0 if n <= 1 else 0.55 * k / (n - 1)
    return tuple(base * (1 - mix) + mix)


def _new(rows: int = 1, height: float = 3.4, width: float = 7.5):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, 0.6 + height * rows))
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    for ax in axes:
        ax.grid(True, lw=0.4, alpha=0.5)
    return fig, list(axes)


def _legend(ax, n: int) -> None:
    if n:
        ax.legend(fontsize=7, ncol=2 if n > 4 else 1, loc="best", framealpha=0.8)


# ----- the kinds ---------------------------------------------------------------------------------
def _cwnd(raw, by, flows, t0, t1, **_):
    ts = _cut(_series(raw, "flows", "cwnd"), t0, t1)
    table = _pick_flows(_flow_table(raw), flows)
    windowed = set(ts.loc[np.isfinite(ts["cwnd"].astype(float)), "flow"].unique())
    table = table[table["id"].isin(windowed)]
    if table.empty:
        raise ScenarioError.at("kind", "'cwnd': no window-based flow among those chosen (rate-based "
                               "and UDP flows have no congestion window); try kind 'rate'")
    log = _cut(dynamics.loss_log(raw), t0, t1)
    has_log = isinstance(raw.get("loss_events"), Mapping)
    fig, (ax,) = _new()
    by = _by(by, len(table))
    shown_kinds = set()

    def mark(events, color, small=False):
        for kind, ev in events.groupby("kind", sort=True):
            marker, label = _LOSS_MARKERS.get(kind, ("v", str(kind)))
            edge = color if small or marker == "x" else "black"
            ax.plot(ev["time"], ev["window_before"], ls="none", marker=marker, ms=2.5 if small else 4,
                    color=color, alpha=0.4 if small else 1.0, mec=edge, mew=0.4, zorder=1.5,
                    label=None if kind in shown_kinds else label)
            shown_kinds.add(kind)

    n_lines = 0
    ssthresh_shown = False
    for g, members in table.groupby("group", sort=True):
        ids = list(members["id"])
        if by == "flow":
            for k, f in enumerate(ids):
                color = _flow_color(int(g), k, len(ids))
                d = dynamics.flow_series(ts, f)
                ax.plot(d["time"], d["cwnd"], lw=0.9, color=color, label=_flow_label(raw, f, g))
                if "ssthresh" in d and d["ssthresh"].notna().any():
                    # one legend entry for every flow's threshold (a gap: none yet)
                    ax.plot(d["time"], d["ssthresh"], lw=0.7, ls="--", color=color, zorder=1,
                            label=None if ssthresh_shown else "ssthresh (dashed, the flow's colour)")
                    ssthresh_shown = True
                mark(log[log["flow"] == f], color)
                n_lines += 1
        else:
            color = _GROUP_COLORS[int(g) % len(_GROUP_COLORS)]
            agg = ts[ts["flow"].isin(ids)].groupby("time")["cwnd"].agg(["mean", "min", "max"])
            ax.fill_between(agg.index, agg["min"], agg["max"], color=color, alpha=0.12, lw=0, zorder=1)
            ax.plot(agg.index, agg["mean"], lw=1.4, color=color, zorder=3,
                    label=f"{_group_label(raw, int(g))} (mean of {len(ids)}; band min..max)")
            mark(log[log["flow"].isin(ids)], color, small=True)
            n_lines += 1
    ax.set_xlabel("time (s)")
    ax.set_ylabel("congestion window (packets)")
    title = "congestion window" + (" per flow" if by == "flow" else " per group")
    if not has_log:
        title += "\n(loss events not recorded: set loss_log = true in the scenario)"
    ax.set_title(title + ("" if not has_log else "; markers: window reductions") + "\n" + _scenario_label(raw),
                 fontsize=9)
    ax.set_ylim(bottom=0)
    _legend(ax, n_lines + len(shown_kinds) + ssthresh_shown)
    return fig


def _interval(raw: Mapping[str, Any], ts: pd.DataFrame) -> float:
    v = (raw.get("scenario") or {}).get("timeseries")
    if isinstance(v, (int, float)) and v > 0:
        return float(v)
    times = np.unique(ts["time"].to_numpy(dtype=float))
    return float(np.min(np.diff(times))) if times.size > 1 else float("nan")


def _binned_flows(ts: pd.DataFrame, ids: Sequence[int], bin_s: float, t0, t1) -> pd.DataFrame:
    """Each flow's delivered rate binned by :func:`metrics.dynamics.binned` (columns = flows)."""
    cols = {}
    for f in ids:
        d = dynamics.flow_series(ts, f)
        ends, means = dynamics.binned(d["time"].to_numpy(), d["rate_bps"].to_numpy(), bin_s, t0, t1)
        cols[f] = pd.Series(means, index=np.round(ends, 9))
    return pd.DataFrame(cols)


def default_bin(interval: float) -> float:
    """The rate figure's bin when none is given: jin2001's 0.2 s, or, when the time series is
    sampled at an interval that does not divide it, the smallest multiple of that interval
    above 0.2 s (a series sampled every 0.5 s is binned by 0.5 s, one every 0.15 s by 0.3 s)."""
    if not math.isfinite(interval) or interval <= 0:
        return DEFAULT_BIN_S
    k = math.ceil(DEFAULT_BIN_S / interval - 1e-9)
    return DEFAULT_BIN_S if abs(k * interval - DEFAULT_BIN_S) < 1e-9 else k * interval


def rate_bin(raw: Mapping[str, Any], ts: Any = None) -> float:
    """The bin the rate figure of this run's result uses when none is given: `default_bin` of
    its sampling interval (the scenario's, or the series' own spacing for a result that does
    not state it); jin2001's 0.2 s without a time series. ``ts``: the flows' series, if the
    caller has built it already."""
    if ts is None:
        try:
            ts = _series(raw, "flows", "rate")
        except NoTimeSeries:
            return DEFAULT_BIN_S
    return default_bin(_interval(raw, ts))


def _rate(raw, by, flows, t0, t1, bin_s=None, **_):
    ts = _series(raw, "flows", "rate")
    if bin_s is None:
        bin_s = rate_bin(raw, ts)
    if isinstance(bin_s, bool) or not isinstance(bin_s, (int, float)) or not math.isfinite(bin_s) or bin_s <= 0:
        raise ScenarioError.at("bin_s", f"must be a positive number of seconds, got {bin_s!r}")
    duration = (raw.get("scenario") or {}).get("duration")
    if isinstance(duration, (int, float)) and duration > 0 and bin_s > duration:
        # one bin covers the whole run already; a wider one overflowed numpy (a warning on stderr)
        raise ScenarioError.at("bin_s", f"must be at most the run's duration ({duration:g} s), "
                               f"got {bin_s:g}")
    interval = _interval(raw, ts)
    if math.isfinite(interval) and bin_s < interval * (1 - 1e-9):
        raise ScenarioError.at("bin_s", f"must be at least the time series' sampling interval "
                               f"({interval:g} s), got {bin_s:g}")
    table = _pick_flows(_flow_table(raw), flows)
    by = _by(by, len(table))
    fig, (ax,) = _new()
    n_lines = 0
    for g, members in table.groupby("group", sort=True):
        ids = list(members["id"])
        binned = _binned_flows(ts, ids, bin_s, t0, t1)
        if by == "flow":
            for k, f in enumerate(ids):
                s = binned[f].dropna()
                ax.step(s.index, s.to_numpy() / 1e6, where="pre", lw=0.9,
                        color=_flow_color(int(g), k, len(ids)), label=_flow_label(raw, f, g))
                n_lines += 1
        else:
            mean = binned.mean(axis=1)
            ax.step(mean.index, mean.to_numpy() / 1e6, where="pre", lw=1.1,
                    color=_GROUP_COLORS[int(g) % len(_GROUP_COLORS)],
                    label=f"{_group_label(raw, int(g))} (mean per flow of {len(ids)})")
            n_lines += 1
    sc = raw.get("scenario") or {}
    link = sc.get("bottleneck") if isinstance(sc.get("bottleneck"), Mapping) else {}
    flows_by_dir: Dict[str, int] = {}
    for f in raw.get("flows") or []:
        flows_by_dir[metrics.direction(f)] = flows_by_dir.get(metrics.direction(f), 0) + 1
    shown = {metrics.direction(f) for f in raw.get("flows") or [] if f.get("id") in set(table["id"])}
    if isinstance(link.get("rate"), (int, float)):
        # the dumbbell's fair share C/n in each direction drawn (n: that direction's flows)
        for d, style in (("forward", ":"), ("reverse", "-.")):
            if d in shown and flows_by_dir.get(d):
                fair = link["rate"] / flows_by_dir[d] / 1e6
                where = f" ({d}, n = {flows_by_dir[d]})" if len(shown) > 1 else ""
                ax.axhline(fair, color="black", lw=0.8, ls=style,
                           label=f"fair share C/n = {fair:.3g} Mb/s{where}")
                n_lines += 1
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"goodput (Mb/s, mean over {bin_s:g} s bins)")
    ax.set_title(f"delivered rate in {bin_s:g} s bins" + (" per flow" if by == "flow" else " per group")
                 + "\n" + _scenario_label(raw), fontsize=9)
    ax.set_ylim(bottom=0)
    _legend(ax, n_lines)
    return fig


def _rtt(raw, by, flows, t0, t1, **_):
    ts = _cut(_series(raw, "flows", "rtt"), t0, t1).copy()
    ts["rtt_ms"] = ts["srtt_s"].astype(float).where(ts["srtt_s"] > 0) * 1e3
    table = _pick_flows(_flow_table(raw), flows)
    # UDP sources have no RTT: they are left out rather than listed without a line
    timed = set(ts.loc[np.isfinite(ts["rtt_ms"].astype(float)), "flow"].unique())
    table = table[table["id"].isin(timed)]
    if table.empty:
        raise ScenarioError.at("kind", "'rtt': no flow with RTT samples among those chosen (UDP "
                               "sources have none); try kind 'rate'")
    by = _by(by, len(table))
    fig, (ax,) = _new()
    n_lines = 0
    for g, members in table.groupby("group", sort=True):
        ids = list(members["id"])
        if by == "flow":
            for k, f in enumerate(ids):
                d = dynamics.flow_series(ts, f)
                ax.plot(d["time"], d["rtt_ms"], lw=0.8, marker=".", ms=2,
                        color=_flow_color(int(g), k, len(ids)), label=_flow_label(raw, f, g))
                n_lines += 1
        else:
            mean = ts[ts["flow"].isin(ids)].groupby("time")["rtt_ms"].mean()
            ax.plot(mean.index, mean.to_numpy(), lw=1.0, color=_GROUP_COLORS[int(g) % len(_GROUP_COLORS)],
                    label=f"{_group_label(raw, int(g))} (mean of {len(ids)})")
            n_lines += 1
    ax.set_xlabel("time (s)")
    ax.set_ylabel("smoothed RTT (ms)")
    ax.set_title("RTT samples: the sender's smoothed RTT (RTO estimator, tcp.tick granularity)"
                 + ("" if by == "flow" else " per group") + "\n" + _scenario_label(raw), fontsize=9)
    _legend(ax, n_lines)
    return fig


def _queue(raw, t0, t1, links=None, **_):
    ts = _cut(_series(raw, "links", "queue"), t0, t1)
    names = list(dict.fromkeys(ts["link"]))
    if links is not None:
        links = [links] if isinstance(links, str) else list(links)
        for name in links:
            if name not in names:
                raise ScenarioError.at("links", f"no link {name!r} in the time series (links: {', '.join(names)})")
        chosen = links
    else:
        activity = ts.groupby("link").agg(q=("queue_pkts", "mean"), d=("drops", "sum"))
        active = [n for n in names if activity.loc[n, "q"] > 0 or activity.loc[n, "d"] > 0]
        active.sort(key=lambda n: (names.index(n) != 0, -activity.loc[n, "q"]))
        chosen = (active or names[:1])[:MAX_LINKS]
    interval = _interval(raw, ts)
    fig, axes = _new(rows=2 * len(chosen), height=1.9)
    limits = _queue_limits(raw.get("scenario") or {})
    ecn = _per_link(raw.get("scenario") or {}, "ecn")
    for i, name in enumerate(chosen):
        d = ts[ts["link"] == name].sort_values("time")
        qa, da = axes[2 * i], axes[2 * i + 1]
        qa.plot(d["time"], d["queue_pkts"], lw=0.8, color=_GROUP_COLORS[0], label="queue length")
        limit = limits.get(name)
        if limit is not None:
            qa.axhline(limit, color="black", lw=0.8, ls=":", label=f"buffer limit {limit:g} pkts")
        qa.set_ylabel("queue (packets)")
        qa.set_title(f"link {name}", fontsize=9, loc="left")
        qa.set_ylim(bottom=0)
        _legend(qa, 1 + (limit is not None))
        width = interval if math.isfinite(interval) else 0.1
        # one stepped path per series (a bar per interval is thousands of patches: slow, large SVG)
        t = d["time"].to_numpy(dtype=float)
        edges = np.concatenate([[t[0] - width], t]) if t.size else np.array([0.0])
        drops = d["drops"].to_numpy(dtype=float)
        da.stairs(drops, edges, fill=True, color=_GROUP_COLORS[3], label=f"drops per {width:g} s")
        n = 1
        # ECN marks: on a link that marks (or marked: a result without its settings), not as
        # an empty entry on every drop-only link
        if "marks" in d and (ecn.get(name) is True or d["marks"].sum() > 0):
            marks = d["marks"].to_numpy(dtype=float)
            da.stairs(drops + marks, edges, baseline=drops, fill=True, color=_GROUP_COLORS[1],
                      label=f"ECN marks per {width:g} s")
            n += 1
        da.set_ylim(bottom=0)
        da.set_ylabel("packets")
        _legend(da, n)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("queue length and drops per link"
                 + ("" if "marks" in ts else " (ECN marks per interval are not in the time series)")
                 + "\n" + _scenario_label(raw), fontsize=9)
    return fig


def _goodput(raw, flows=None, **_):
    table = _pick_flows(_flow_table(raw), flows)
    records = [r for r in raw.get("flows") or [] if r.get("id") in set(table["id"])]
    per_group = metrics.group_metrics(records, ["goodput_bps_mean", "jain"])
    overall = metrics.jain(metrics.goodputs(records))
    fig, (ax,) = _new(width=max(7.5, min(14.0, 0.18 * len(table) + 3)))
    x = np.arange(len(table))
    good = table["goodput_bps"].astype(float).to_numpy() / 1e6
    colors = [_GROUP_COLORS[int(g) % len(_GROUP_COLORS)] for g in table["group"]]
    ax.bar(x, good, color=colors, width=0.8)
    for g, members in table.groupby("group", sort=True):
        pos = np.nonzero(table["group"].to_numpy() == g)[0]
        m = per_group[int(g)]
        mean = float(m["goodput_bps_mean"]) / 1e6
        ax.hlines(mean, pos.min() - 0.45, pos.max() + 0.45, colors="black", lw=1.2, ls="--")
        ax.plot([], [], color=_GROUP_COLORS[int(g) % len(_GROUP_COLORS)], lw=6,
                label=f"{_group_label(raw, int(g))}: mean {mean:.3g} Mb/s, Jain {float(m['jain']):.3f}")
    ax.plot([], [], color="black", ls="--", lw=1.2, label="group mean")
    if len(table) <= 40:
        ax.set_xticks(x, [str(i) for i in table["id"]], fontsize=7)
    ax.set_xlabel("flow id")
    ax.set_ylabel("goodput (Mb/s)")
    sc = raw.get("scenario") or {}
    measure = sc.get("measure") if isinstance(sc.get("measure"), Mapping) else {}
    window = (f"measured {measure['from']:g}..{measure['to']:g} s"
              if isinstance(measure.get("from"), (int, float)) and isinstance(measure.get("to"), (int, float)) else "")
    ax.set_title(f"per-flow goodput{', ' + window if window else ''}; Jain's index over these flows "
                 f"{overall:.3f}\n{_scenario_label(raw)}", fontsize=9)
    ax.set_ylim(bottom=0, top=max(good.max() if good.size else 1.0, 1e-9) * 1.3)
    _legend(ax, len(per_group) + 1)
    return fig


_DRAW = {"cwnd": _cwnd, "rate": _rate, "rtt": _rtt, "queue": _queue, "goodput": _goodput}


# ----- public API --------------------------------------------------------------------------------
def figure(result: Any, kind: str = "cwnd", *, by: Optional[str] = None,
           flows: Optional[Iterable[int]] = None, bin_s: Optional[float] = None,
           links: Optional[Sequence[str]] = None, t0: Optional[float] = None,
           t1: Optional[float] = None):
    """One figure of ``result`` (a :class:`tcpfriendly.Result` or its JSON as a dict) as a
    :class:`matplotlib.figure.Figure`.

    Args:
        kind: one of :data:`KINDS` (``cwnd``, ``rate``, ``rtt``, ``queue``, ``goodput``).
        by: ``"flow"`` (a line per flow) or ``"group"`` (the group mean); default ``flow`` up to
            8 flows, else ``group``.
        flows: flow ids to draw (default: all).
        bin_s: the rate figure's bin width in seconds, at least the time series' sampling
            interval (default: 0.2 s, as jin2001, or the smallest multiple of a coarser or
            non-dividing sampling interval above it: :func:`default_bin`).
        links: link names for the queue figure (default: the bottleneck and the most active
            links, up to 4).
        t0, t1: the time window to draw, in seconds (default: the whole run).

    Raises:
        NoTimeSeries: ``kind`` needs the run's time series and the run recorded none (the
            message says which scenario option records it).
        ScenarioError: a bad argument (the message names it).
    """
    raw = _raw(result)
    if kind not in _DRAW:
        raise ScenarioError.at("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    _check_window(t0, t1)
    fig = _DRAW[kind](raw, by=by, flows=flows, bin_s=bin_s, links=links, t0=t0, t1=t1)
    fit(fig)
    return fig


def fit(fig, title_lines: int = 2) -> None:
    """Fixed margins in inches (room for tick labels, the y label and a two-line title): no
    layout engine, which would measure every text on every save (PNG, then SVG) -- the
    figures of a 32-flow run are drawn in about half the time."""
    w, h = fig.get_size_inches()
    axes = fig.get_axes()
    top = 0.22 + 0.17 * title_lines + (0.25 if fig._suptitle is not None else 0.0)
    fig.subplots_adjust(left=0.8 / w, right=1 - 0.2 / w, bottom=0.55 / h, top=1 - top / h,
                        hspace=0.45 * len(axes) / max(h - 1.0, 1.0))


def _savefig(fig, target, fmt: str) -> None:
    import matplotlib

    # a fixed hash salt and no date: the same figure gives the same SVG bytes
    with matplotlib.rc_context({"svg.hashsalt": "tcpfriendly", "svg.fonttype": "none"}):
        meta = {"Date": None} if fmt == "svg" else {"Software": None}
        fig.savefig(target, format=fmt, dpi=100, metadata=meta)


def _check_format(fmt: Any) -> None:
    if fmt not in ("png", "svg", "pdf"):
        raise ScenarioError.at("formats", f"must be png, svg or pdf, got {fmt!r}")


def save(fig, base: "os.PathLike[str] | str", formats: Sequence[str] = ("png", "svg")) -> List[str]:
    """Write ``fig`` as ``base.png``, ``base.svg`` (any of png, svg, pdf); returns the paths.
    Each file is written atomically, never through a symbolic link
    (:func:`tcpfriendly.outfiles.atomic_write`)."""
    written = []
    for fmt in formats:
        _check_format(fmt)
        path = f"{os.fspath(base)}.{fmt}"
        atomic_write(path, lambda f, fmt=fmt: _savefig(fig, f, fmt), field="directory")
        written.append(path)
    return written


#: What :func:`write` records in its directory's manifest (:mod:`tcpfriendly.outfiles`): a
#: directory of figures may be drawn again (the same or another run's), but not one holding
#: another command's output (`tcpf run --out`, a sweep) or files we did not write.
COMMAND = "plot"


def claim_directory(directory: "os.PathLike[str] | str", kinds: Sequence[str] = KINDS,
                    formats: Sequence[str] = ("png", "svg"), field: Optional[str] = "directory"):
    """Check that figures may be written into ``directory`` (:func:`tcpfriendly.outfiles.claim`:
    new, empty or a figure directory; not a file, not another command's output, no symbolic link
    at a figure's name; a directory holding only our figures' names, written before manifests
    existed, is one); writes nothing. Returns the claimed :class:`~tcpfriendly.outfiles.OutDir`."""
    return claim_shared(directory, COMMAND, field=field, legacy=_legacy,
                        files=[f"{kind}.{fmt}" for kind in kinds for fmt in formats])


def _legacy(directory: str) -> Optional[str]:
    """A figure directory written before manifests existed: only our figures' names in it."""
    names = {f"{kind}.{fmt}" for kind in KINDS for fmt in ("png", "svg", "pdf")}
    try:
        entries = os.listdir(directory)
    except OSError:
        return None
    return COMMAND if entries and all(e in names and os.path.isfile(os.path.join(directory, e))
                                      and not os.path.islink(os.path.join(directory, e))
                                      for e in entries) else None


def svg_text(fig) -> str:
    """``fig`` as SVG text (for inlining into HTML)."""
    buf = io.StringIO()
    _savefig(fig, buf, "svg")
    return buf.getvalue()


def write(result: Any, directory: "os.PathLike[str] | str", kinds: Optional[Sequence[str]] = None,
          formats: Sequence[str] = ("png", "svg"), **options: Any) -> List[str]:
    """Draw each of ``kinds`` (default: every kind the result supports, :func:`available_kinds`)
    and write ``DIRECTORY/<kind>.<format>``, creating the directory. Every figure is drawn
    before anything is written, so a bad argument writes nothing. The directory follows the
    output rules of :mod:`tcpfriendly.outfiles` (:func:`claim_directory`: atomic files, no
    symbolic link followed, a manifest; another command's output or a non-empty directory of
    other files is refused). Returns the paths written."""
    formats = list(formats)
    if not formats:
        raise ScenarioError.at("formats", "give at least one of png, svg, pdf")
    for fmt in formats:  # before the directory is made: a bad --format leaves nothing behind
        _check_format(fmt)
    kinds = list(kinds) if kinds is not None else available_kinds(result)
    # before anything is drawn: a file, another command's output or a symbolic link is refused
    out = claim_directory(directory, kinds, formats)
    figs = [(kind, figure(result, kind, **options)) for kind in kinds]
    written: List[str] = []
    for kind, fig in figs:
        for fmt in formats:
            written.append(out.write_with(f"{kind}.{fmt}", lambda f, fig=fig, fmt=fmt: _savefig(fig, f, fmt)))
    kept = []  # figures of an earlier draw that this one did not redraw stay (and stay listed)
    if out.previous is not None and out.previous.get("command") == COMMAND:
        kept = [n for n in out.previous.get("files") or [] if isinstance(n, str) and n not in out.written
                and os.sep not in n and os.path.isfile(out.file(n)) and not os.path.islink(out.file(n))]
    out.commit(extra=kept, remove_stale=False)
    return written
