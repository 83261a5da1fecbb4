"""A sweep's summary (mean ± 95% CI over seeds per grid point and flow group, and the key
metrics against the first varying axis), shared by its report page (:mod:`.sweep`) and its
notebook display (:func:`sweep_html`, ``SweepResult._repr_html_``). Like :mod:`.notebook`, it
imports nothing of :mod:`tcpfriendly.sweep` but its table helpers, so the sweep's result can
display through it without an import cycle."""

from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence

import numpy as np

from . import html as H

__all__ = ["sweep_html", "sweep_text"]

#: Metrics drawn and tabulated, in this order, when the sweep recorded them.
KEY_METRICS = ["share", "goodput_bps_mean", "jain", "loss_event_rate", "timeouts", "mean_rtt_s",
               "mean_cwnd"]
KEY_LINK_METRICS = ["utilization", "mean_queue_pkts", "drops"]
MAX_FIGURES = 6
MAX_SERIES = 12
MAX_ROWS = 300
#: Above this many x values, the CI is a shaded band instead of error bars.
MAX_ERRORBARS = 30
_LABELS = {"share": "share (group mean goodput / mean flow goodput; 1 = fair)",
           "goodput_bps_mean": "goodput per flow (b/s)", "jain": "Jain's index within the group",
           "loss_event_rate": "loss-event rate (events / packets sent)", "timeouts": "timeouts",
           "mean_rtt_s": "mean RTT (s)", "mean_cwnd": "mean cwnd (packets)",
           "utilization": "utilisation", "mean_queue_pkts": "mean queue (packets)", "drops": "drops"}


def _metrics(columns: Sequence[str]) -> List[str]:
    chosen = [m for m in KEY_METRICS if m in columns]
    links = [c for c in columns if c.startswith("link.")]
    if links:
        first = links[0].split(".")[1]
        chosen += [f"link.{first}.{m}" for m in KEY_LINK_METRICS if f"link.{first}.{m}" in columns]
    return chosen


def _label(metric: str) -> str:
    if metric.startswith("link."):
        _, link, m = metric.split(".", 2)
        return f"{_LABELS.get(m, m)} of link {link}"
    return _LABELS.get(metric, metric)


def _x_axis(table, axes: Sequence[str]) -> Optional[str]:
    import pandas as pd

    varying = [a for a in axes if a in table.columns and table[a].nunique(dropna=False) > 1]
    for a in varying:
        if pd.api.types.is_numeric_dtype(table[a]):
            return a
    return varying[0] if varying else None


def _figure(summary, metric: str, x: Optional[str], series_keys: List[str], title: str):
    from matplotlib.figure import Figure

    from ..plot import fit
    from ..sweep.plot import _order

    fig = Figure(figsize=(7.0, 3.6))
    ax = fig.add_subplot()
    ax.grid(True, lw=0.4, alpha=0.5)
    groups = list(summary.groupby(series_keys, sort=False, dropna=False)) if series_keys else [((), summary)]
    shown = 0
    for keys, g in groups:
        if shown >= MAX_SERIES:
            break
        keys = keys if isinstance(keys, tuple) else (keys,)
        label = ", ".join(f"{k}={v}" for k, v in zip(series_keys, keys)) or metric
        if x is None:
            xs, labels = [0], ["all"]
        else:
            order = _order(summary[x])
            g = g.set_index(x).reindex(order).reset_index()
            numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in order)
            xs = list(g[x]) if numeric else list(range(len(order)))
            labels = [str(v) for v in order]
        ci = np.array([0 if (c is None or not math.isfinite(c)) else c for c in g["ci95"]], dtype=float)
        mean = g["mean"].to_numpy(dtype=float)
        if len(xs) <= MAX_ERRORBARS:
            ax.errorbar(xs, mean, yerr=ci, marker="o", ms=4, lw=1.1, capsize=3, label=label)
        else:  # many x values: a line and a shaded 95% band (one path each, not 3 per point)
            line, = ax.plot(xs, mean, lw=1.1, label=label)
            ax.fill_between(xs, mean - ci, mean + ci, color=line.get_color(), alpha=0.2, lw=0)
        shown += 1
    if x is None or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in _order(summary[x])):
        ax.set_xticks(xs, labels)
    ax.set_xlabel(x or "")
    ax.set_ylabel(_label(metric), fontsize=8)
    ax.set_title(title, fontsize=9)
    if shown > 1 or series_keys:
        ax.legend(fontsize=7, ncol=2 if shown > 4 else 1)
    fit(fig)
    return fig, len(groups)


def _rows(table, axes: Sequence[str], max_rows: int):
    """The summary table of a sweep's table, one home for its report page, its notebook
    display and the terminal (:func:`sweep_text`): (headers, rows of text cells: the axis
    values, flow group and algorithm, seeds, then ``mean ± 95% CI half-width`` of each key
    metric; at most ``max_rows`` rows), the number of rows in all, the index of the first
    numeric column, the key metrics and their summaries."""
    from ..sweep.plot import summarize

    metrics = _metrics(list(table.columns))
    id_cols = list(axes) + (["group"] if "group" in table.columns else [])
    summaries = {m: summarize(table, id_cols, m) for m in metrics}
    rows = []
    first = summaries[metrics[0]] if metrics else None
    algos = table.drop_duplicates(id_cols).set_index(id_cols)["algorithm"] if id_cols and "algorithm" in table else None
    if first is not None:
        for i in range(min(len(first), max_rows)):
            key = [first.iloc[i][c] for c in id_cols]
            row: List[Any] = key[:]
            if algos is not None:
                try:
                    row.append(algos.loc[tuple(key) if len(key) > 1 else key[0]])
                except KeyError:
                    row.append("-")
            row.append(int(first.iloc[i]["n"]))
            for m in metrics:
                s = summaries[m].iloc[i]
                ci = s["ci95"]
                row.append(f"{H.fmt(s['mean'], 4)} ± {H.fmt(ci, 2)}" if math.isfinite(ci) else H.fmt(s["mean"], 4))
            rows.append([H.fmt(c) if not isinstance(c, str) else c for c in row])
    headers = id_cols + (["algorithm"] if algos is not None else []) + ["seeds"] + metrics
    numeric_from = len(id_cols) + (1 if algos is not None else 0)
    return headers, rows, (len(first) if first is not None else 0), numeric_from, metrics, summaries


def _summary(table, axes: Sequence[str], seeds: List[Any], max_rows: int, max_figures: int):
    """The summary of a sweep's table, shared by its report page and its notebook display:
    (HTML table of mean ± 95% CI per grid point and flow group for the key metrics, at most
    ``max_rows`` rows; [(figure, caption)] of the first ``max_figures`` metrics against the
    first varying axis; that axis)."""
    headers, rows, n_rows, numeric_from, metrics, summaries = _rows(table, axes, max_rows)
    note = (f"<p class=\"note\">first {max_rows} of {n_rows} rows; the results table has every run</p>"
            if n_rows > max_rows else "")
    html = (H.table(headers, rows, numeric_from=numeric_from,
                    caption="mean ± 95% confidence half-width over seeds (Student t), per grid point and flow group")
            + note)
    # figures: metric vs the first varying (numeric) axis; a line per other axis value x group
    x = _x_axis(table, axes)
    series_keys = [a for a in axes if a != x and table[a].nunique(dropna=False) > 1] + (["group"] if "group" in table else [])
    figures = []
    for m in metrics[:max_figures]:
        fig, n_series = _figure(summaries[m], m, x, series_keys, f"{m}: mean and 95% CI over {len(seeds)} seeds")
        cap = f"{_label(m)} against {x or 'nothing (one point)'}"
        if n_series > MAX_SERIES:
            cap += f"; first {MAX_SERIES} of {n_series} lines (the results table has all)"
        figures.append((fig, cap))
    return html, figures, x


def _ok_table(result: Any):
    """(the runs that succeeded, the axes, the seeds) of a sweep's result."""
    table = result.table
    ok = table[table["status"] == "ok"] if "status" in table else table
    axes = [a for a in (result.points[0] if result.points else {}) if a in ok.columns]
    seeds = sorted(ok["seed"].unique().tolist()) if "seed" in ok else []
    return ok, axes, seeds


def sweep_text(result: Any, max_rows: int = 24) -> str:
    """A sweep's summary table for the terminal (``tcpf sweep`` prints it when the sweep ends):
    mean ± 95% CI half-width over seeds per grid point and flow group for the key metrics, the
    first ``max_rows`` rows; empty when no run succeeded."""
    from ..formatting import _table

    ok, axes, seeds = _ok_table(result)
    if ok.empty:
        return ""
    headers, rows, n_rows, numeric_from, _, _ = _rows(ok, axes, max_rows)
    if not rows:
        return ""
    lines = [f"mean ± 95% CI half-width over {len(seeds)} seed{'s' if len(seeds) != 1 else ''}, "
             "per grid point and flow group:"]
    lines += _table(headers, rows, left=numeric_from)
    if n_rows > max_rows:
        out = getattr(result, "out", None) or "DIR"
        lines.append(f"  ... first {max_rows} of {n_rows} rows: every run is in the results table "
                     f"(`tcpf report {out}` for the page with figures)")
    same = _seedless_points(ok, axes)
    if same:
        lines.append(f"note: at {same[0]} of {same[1]} points every seed gave the same numbers (a 95% CI "
                     "of 0): what a seed draws (RED's early drops, random losses and sources, the ranges "
                     "of start, access_delay and the like, TCP's timer phase) did not change those "
                     "runs; give the flows ranges such as start = \"0..1\" to sample")
    return "\n".join(lines)


def _seedless_points(ok, axes: Sequence[str]):
    """(points whose seeds all gave the same metrics, points with more than one seed), or None
    when there are none such."""
    import pandas as pd

    if "seed" not in ok or ok["seed"].nunique() < 2:
        return None
    metrics = [c for c in _metrics(list(ok.columns)) if pd.api.types.is_numeric_dtype(ok[c])]
    keys = [a for a in axes if a in ok.columns]
    if not metrics:
        return None
    same = total = 0
    for _, g in (ok.groupby(keys, sort=False, dropna=False) if keys else [((), ok)]):
        if g["seed"].nunique() < 2:
            continue
        total += 1
        by = ["group"] if "group" in g else []
        spread = g.groupby(by, dropna=False)[metrics].nunique(dropna=False) if by else g[metrics].nunique(dropna=False)
        same += bool((spread.to_numpy() <= 1).all())
    return (same, total) if same else None


def sweep_html(result: Any) -> str:
    """A sweep's result (:class:`tcpfriendly.sweep.SweepResult`) as a notebook fragment: its
    status, the summary table of the report (mean ± 95% CI per grid point and flow group, first
    50 rows) and the first key metric against the first varying axis."""
    from .notebook import CSS, figure_html

    parts = [CSS, '<div class="tcpf-nb">', f"<b>{H.esc(repr(result))}</b>"]
    if result.failures:
        parts.append(f"<p>{len(result.failures)} failed; first: {H.esc(result.failure_label(0))}</p>")
    ok, axes, seeds = _ok_table(result)
    if not ok.empty:
        html, figures, _ = _summary(ok, axes, seeds, 50, 1)
        parts.append(html)
        parts.extend(figure_html(fig) for fig, _ in figures)
    parts.append("</div>")
    return "".join(parts)


