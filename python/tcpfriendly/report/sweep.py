"""Report source for a ``tcpf sweep --out`` directory: aggregated over seeds (mean and 95% CI per
grid point and flow group, :func:`tcpfriendly.sweep.plot.summarize`), a handful of figures and a
capped table, so a sweep of thousands of runs gives a page of the same size as a small one."""

from __future__ import annotations

import os
import shlex
from typing import Any, Dict, Optional, Sequence

from ..errors import ScenarioError
from . import html as H
from .page import Page, Section
from ..toml_text import dumps
from .sweep_summary import MAX_FIGURES, MAX_ROWS, _summary

__all__ = ["NAME", "detect", "build"]

NAME = "sweep"


def detect(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "sweep.json")) \
        and os.path.isfile(os.path.join(path, "results.parquet"))


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
    ns2 = spec.get("simulator") == "ns2"
    where = " in <b>ns-2 2.35</b> (the spec's simulator = \"ns2\")" if ns2 else ""
    summary_html = (f"<p>{n_runs} runs{where}: {n_points} grid points × {len(seeds)} seeds "
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
    simulated = "; simulated in ns-2 2.35" if ns2 else ""
    return Page(title=title, subtitle=f"{n_points} points × {len(seeds)} seeds, axes: {', '.join(axes) or 'none'}; "
                f"tcpfriendly {record.get('tcpfriendly', '?')}{simulated}", sections=sections, commands=commands, kind=NAME)


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
