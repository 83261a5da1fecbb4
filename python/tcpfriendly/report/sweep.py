"""Report source for a ``tcpf sweep --out`` directory: aggregated over seeds (mean and 95% CI per
grid point and flow group, :func:`tcpfriendly.sweep.plot.summarize`), a handful of figures and a
capped table, so a sweep of thousands of runs gives a page of the same size as a small one."""

from __future__ import annotations

import math
import os
import shlex
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ..errors import ScenarioError
from . import html as H
from .page import Page, Section
from ..toml_text import dumps

NAME = "sweep"
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


def detect(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "sweep.json")) \
        and os.path.isfile(os.path.join(path, "results.parquet"))


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


def _summary(table, axes: Sequence[str], seeds: List[Any], max_rows: int, max_figures: int):
    """The summary of a sweep's table, shared by its report page and its notebook display:
    (HTML table of mean ± 95% CI per grid point and flow group for the key metrics, at most
    ``max_rows`` rows; [(figure, caption)] of the first ``max_figures`` metrics against the
    first varying axis; that axis)."""
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
            rows.append(row)
    headers = id_cols + (["algorithm"] if algos is not None else []) + ["seeds"] + metrics
    note = (f"<p class=\"note\">first {max_rows} of {len(first)} rows; the results table has every run</p>"
            if first is not None and len(first) > max_rows else "")
    html = (H.table(headers, rows, numeric_from=len(id_cols) + (1 if algos is not None else 0),
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


def sweep_html(result: Any) -> str:
    """A sweep's result (:class:`tcpfriendly.sweep.SweepResult`) as a notebook fragment: its
    status, the summary table of the report (mean ± 95% CI per grid point and flow group, first
    50 rows) and the first key metric against the first varying axis."""
    from .notebook import CSS, figure_html

    table = result.table
    parts = [CSS, '<div class="tcpf-nb">', f"<b>{H.esc(repr(result))}</b>"]
    if result.failures:
        parts.append(f"<p>{len(result.failures)} failed; first: {H.esc(result.failure_label(0))}</p>")
    ok = table[table["status"] == "ok"] if "status" in table else table
    if not ok.empty:
        axes = [a for a in (result.points[0] if result.points else {}) if a in ok.columns]
        seeds = sorted(ok["seed"].unique().tolist()) if "seed" in ok else []
        html, figures, _ = _summary(ok, axes, seeds, 50, 1)
        parts.append(html)
        parts.extend(figure_html(fig) for fig, _ in figures)
    parts.append("</div>")
    return "".join(parts)


def build(path: str) -> Page:
    from .. import plot
    from ..sweep.store import load_results

    from ..sweep.store import read_record

    record = read_record(path, "PATH")
    table = load_results(path)
    if table.empty:
        raise ScenarioError.at("PATH", f"{path}: the sweep's results table is empty (no finished run)")
    spec: Dict[str, Any] = record.get("spec") or {}
    axes = [a for a in record.get("axes") or [] if a in table.columns]
    n_runs = len(record.get("runs") or [])
    n_points = len(record.get("points") or [])
    seeds = sorted(table["seed"].unique().tolist()) if "seed" in table else []
    summary_html, figures, x = _summary(table, axes, seeds, MAX_ROWS, MAX_FIGURES)
    summary_html = (f"<p>{n_runs} runs: {n_points} grid points × {len(seeds)} seeds "
                    f"({', '.join(map(str, seeds[:20]))}{' ...' if len(seeds) > 20 else ''}); "
                    f"{len(table)} rows (run × flow group) in results.parquet / results.csv.</p>"
                    + summary_html)
    figs = [H.figure(plot.svg_text(fig), cap) for fig, cap in figures]

    sections = [Section("summary", "Summary", summary_html), Section("figures", "Figures", "".join(figs))]
    flows_html = _per_flow(path, axes, x)
    if flows_html:
        sections.append(Section("flows", "Per flow", flows_html))
    axes_rows = [[a, ", ".join(str(v) for v in vals)] for a, vals in (spec.get("axes") or {}).items()]
    for z in spec.get("zip") or []:
        for a, vals in z.items():
            axes_rows.append([f"{a} (zip)", ", ".join(str(v) for v in vals)])
    spec_html = H.table(["axis", "values"], axes_rows, numeric_from=9) if axes_rows else ""
    base = _normalised_base(spec, record)
    if base is not None:
        spec_html += ("<h3>Base scenario at the first grid point (normalised; β = fraction removed)</h3>"
                      + H.pre(dumps(base)))
    spec_html += "<h3>Sweep spec (sweep.json)</h3>" + H.pre(dumps(spec))
    origins = record.get("controllers") or {}  # Python controllers: NAME -> FILE:CLASS (or None)
    if origins:
        spec_html += "<h3>Python controllers</h3>" + H.table(
            ["algorithm", "class"], [[n, o or "(typed at a prompt: not reloadable)"] for n, o in origins.items()],
            numeric_from=9)
    sections.append(Section("spec", "Spec and scenario", spec_html))
    q = shlex.quote
    ctl = "".join(f" --controller {q(f'{n}={o}')}" for n, o in origins.items() if o)
    commands = ["# save the sweep spec above as sweep.toml, then:",
                f"tcpf sweep sweep.toml{ctl} --out {q(path)}",
                f"tcpf report {q(path)} -o report.html"]
    title = f"tcpf sweep: {spec.get('name') or os.path.basename(os.path.abspath(path))}"
    return Page(title=title, subtitle=f"{n_points} points × {len(seeds)} seeds, axes: {', '.join(axes) or 'none'}; "
                f"tcpfriendly {record.get('tcpfriendly', '?')}", sections=sections, commands=commands, kind=NAME)


#: The per-flow metric drawn and tabulated (normalised throughput: the papers' scatter plots).
FLOW_METRIC = "share"
#: Panels of the per-flow figure: one per value of the other varying axes, at most this many.
MAX_FLOW_PANELS = 4
#: Above this many points a panel, its points are drawn as an image inside the SVG.
MAX_VECTOR_POINTS = 2000


def _per_flow(path: str, axes: Sequence[str], x: Optional[str]) -> str:
    """The per-flow section of a sweep run with ``per_flow`` (flows.parquet): each flow's
    normalised throughput against the x axis (one panel per value of the other varying axes,
    :func:`tcpfriendly.sweep.plot.draw_flows`), and per point and group the spread over the
    flows (min, median, max, over every seed's flows); empty without a per-flow table."""
    if not os.path.isfile(os.path.join(path, "flows.parquet")):
        return ""
    from matplotlib.figure import Figure

    from .. import plot
    from ..plot import fit
    from ..sweep.plot import draw_flows
    from ..sweep.store import load_flows

    flows = load_flows(path)
    if flows.empty or FLOW_METRIC not in flows.columns:
        return ""
    axes = [a for a in axes if a in flows.columns]
    id_cols = axes + ["group"]
    stats = flows.groupby(id_cols, sort=False, dropna=False)[FLOW_METRIC].agg(["count", "min", "median", "max"])
    runs = flows.groupby(id_cols, sort=False, dropna=False)["run"].nunique()
    rows = [[*(k if isinstance(k, tuple) else (k,)), int(runs.loc[k]), int(r["count"]),
             H.fmt(r["min"], 3), H.fmt(r["median"], 3), H.fmt(r["max"], 3)]
            for k, r in list(stats.iterrows())[:MAX_ROWS]]
    html = (f"<p>{len(flows)} flow rows (run × flow) in flows.parquet / flows.csv. "
            f"{FLOW_METRIC}: a flow's goodput over the mean goodput per flow of its run (1 = its fair share).</p>"
            + H.table(id_cols + ["runs", "flows", "min", "median", "max"], rows, numeric_from=len(id_cols),
                      caption=f"{FLOW_METRIC} of every flow of every seed, per grid point and flow group")
            + (f"<p class=\"note\">first {MAX_ROWS} of {len(stats)} rows; flows.csv has every flow</p>"
               if len(stats) > MAX_ROWS else ""))
    if x is None:
        return html
    # the axes that still vary once x is fixed (an axis zipped with x does not)
    others = [a for a in axes if a != x and flows.groupby(x, sort=False, dropna=False)[a].nunique().max() > 1]
    panels = list(flows.groupby(others, sort=False, dropna=False)) if others else [((), flows)]
    figs = []
    for keys, rows_ in panels[:MAX_FLOW_PANELS]:
        keys = keys if isinstance(keys, tuple) else (keys,)
        fig = Figure(figsize=(7.0, 3.6))
        ax = fig.add_subplot()
        ax.grid(True, lw=0.4, alpha=0.5)
        draw_flows(ax, rows_, x, FLOW_METRIC)
        if len(rows_) > MAX_VECTOR_POINTS:  # the points as one embedded image: the page stays small
            for points in ax.collections:
                points.set_rasterized(True)
        ax.set_xlabel(x)
        ax.set_ylabel("share of a flow (its goodput / mean flow goodput; 1 = fair)", fontsize=8)
        fixed = ", ".join(f"{k}={v}" for k, v in zip(others, keys))
        ax.set_title(f"{FLOW_METRIC} of each flow ({rows_['seed'].nunique()} seeds): points; line: group mean"
                     + (f"; {fixed}" if fixed else ""), fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
        fit(fig)
        figs.append(H.figure(plot.svg_text(fig), f"each flow's {FLOW_METRIC} against {x}" + (f" at {fixed}" if fixed else "")))
    if len(panels) > MAX_FLOW_PANELS:
        figs.append(f"<p class=\"note\">first {MAX_FLOW_PANELS} of {len(panels)} panels "
                    f"({', '.join(others)}); <code>tcpf sweep plot {H.esc(shlex.quote(path))} --per-flow --x "
                    f"{H.esc(shlex.quote(x))} --y {FLOW_METRIC} --where AXIS=VALUE</code> draws any</p>")
    return html + "".join(figs)


def _normalised_base(spec: Dict[str, Any], record: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The scenario of the first grid point, normalised (every default, canonical β); None when
    the spec cannot be rebuilt (e.g. written by another version)."""
    try:
        from ..scenario import normalize
        from ..sweep import Sweep

        sw = Sweep.from_dict(spec)
        points = record.get("points") or sw.points()
        return normalize(sw.scenario_at(points[0]) if points else spec.get("scenario"),
                         controllers=list(record.get("controllers") or {}))
    except Exception:  # noqa: BLE001 - the page still shows the spec itself
        return None
