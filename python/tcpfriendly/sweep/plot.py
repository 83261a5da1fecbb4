"""Summaries and plots of a sweep's tidy table: mean and 95% confidence interval over seeds.

    from tcpfriendly.sweep.plot import summarize, plot
    summarize(table, ["flows[1].params.beta", "group"], "share")   # mean, ci95, std, n
    plot("out/beta", x="flows[1].params.beta", y="share", hue="group", out="share.png")
    plot("out/beta", x="flows[1].params.beta", y="share", per_flow=True, out="flows.png")  # per_flow sweeps

The interval is Student's t: mean +- t(0.975, n-1) * std / sqrt(n), over the seeds of each
cell (n = 1 gives no interval).
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, List, Optional, Sequence

from ..errors import ScenarioError
from ..metrics.groups import t975

__all__ = ["summarize", "plot", "plot_flows", "draw_flows", "decorate", "t975", "group_ratio", "paired_ratio"]

def summarize(table, by: Sequence[str], metric: str):
    """Mean, 95% CI half-width, standard deviation and count of ``metric`` per ``by`` cell
    (in first-appearance order); rows of failed runs (``status`` "failed") are left out."""
    import pandas as pd

    if "status" in table.columns:
        table = table[table["status"] == "ok"]
    rows = []
    for keys, g in table.groupby(list(by), sort=False, dropna=False):
        values = [float(v) for v in g[metric] if v is not None and not pd.isna(v)]
        n = len(values)
        mean = math.fsum(values) / n if n else float("nan")
        std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else float("nan")
        ci = t975(n - 1) * std / math.sqrt(n) if n > 1 else float("nan")
        keys = keys if isinstance(keys, tuple) else (keys,)
        rows.append({**dict(zip(by, keys)), "mean": mean, "ci95": ci, "std": std, "n": n})
    return pd.DataFrame(rows)


def _load(source, flows: bool = False) -> "tuple[Any, List[str]]":
    """(table, axis paths) from a sweep directory or a DataFrame; ``flows``: the per-flow
    table (:func:`~.store.load_flows`) of the directory."""
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        ident = {"point", "seed", "group", "algorithm", "recovery", "params", "direction", "run"}
        axes = []
        for c in source.columns:
            if c == "seed":
                break
            if c not in ident:
                axes.append(c)
        return source, axes
    from .store import load_flows, load_results

    directory = os.fspath(source)
    table = load_flows(directory) if flows else load_results(directory)
    axes: List[str] = []
    spec = os.path.join(directory, "sweep.json")
    if os.path.exists(spec):
        from .store import read_record
        axes = read_record(directory, "DIR").get("axes", [])  # (checked there: a list of names)
    return table, axes


def _match(series, text: str):
    """Rows of ``series`` equal to ``text`` (numerically when both are numbers)."""
    import pandas as pd

    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None and pd.api.types.is_numeric_dtype(series):
        return (series.astype(float) - number).abs() <= 1e-12 * max(1.0, abs(number))
    return series.astype(str) == text


def _order(values) -> List[Any]:
    """Distinct values: numbers sorted, anything else in first-appearance order."""
    import pandas as pd

    distinct = list(pd.unique(values))
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in distinct):
        return sorted(distinct)
    return distinct


def _two(spec: str, field: str, what: str) -> "tuple[str, str]":
    a, sep, b = spec.partition("/")
    if not sep or not a.strip() or not b.strip() or "/" in b:
        raise ScenarioError.at(field, f"expected {what}, got {spec!r}")
    return a.strip(), b.strip()


def group_ratio(table, y: str, spec: str):
    """One row per run whose ``y`` is group A's over group B's in that same run (``spec`` is
    "A/B", e.g. "1/0": the algorithm under test over TCP, as jin2001 Figs. 8-13 and yang2000
    Figs. 13-20 plot it). The row keeps group A's identity columns; a zero denominator gives NaN."""
    import numpy as np

    a, b = _two(spec, "ratio", "GROUP/GROUP, e.g. 1/0")
    try:
        ga, gb = int(a), int(b)
    except ValueError:
        raise ScenarioError.at("ratio", f"groups are numbers (GROUP/GROUP, e.g. 1/0), got {spec!r}") from None
    if y.startswith("link."):
        raise ScenarioError.at("ratio", f"{y} is a link metric (one value per run): a group ratio needs a group metric")
    have = set(int(g) for g in table["group"].dropna().unique())
    for g in (ga, gb):
        if g not in have:
            raise ScenarioError.at("ratio", f"no flow group {g} in this sweep (groups: {', '.join(map(str, sorted(have)))})")
    key = ["point", "run"]
    num = table[table["group"] == ga].drop_duplicates(key)
    den = table[table["group"] == gb].drop_duplicates(key).set_index(key)[y].astype(float)
    out = num.copy()
    ratio = num.set_index(key)[y].astype(float) / den.reindex(num.set_index(key).index)
    out[y] = ratio.replace([np.inf, -np.inf], np.nan).to_numpy()
    return out


def paired_ratio(table, axes: Sequence[str], y: str, spec: str):
    """``y`` of the runs at AXIS = A over the runs at AXIS = B with the same seed, flow group and
    other axes (``spec`` is "AXIS=A/B"): a paired ratio, as tsao2007's "TCP-equivalent" (the
    scheme under test and TCP under the identical loss process of the same seed, Fig. 1).
    Axes zipped with AXIS (taking other values at A than at B) are not matched on; the rows
    keep A's values. Returns (table, the axes without AXIS)."""
    import numpy as np

    axis, sep, values = spec.partition("=")
    axis = axis.strip()
    if not sep or not axis:
        raise ScenarioError.at("paired", f"expected AXIS=A/B, got {spec!r}")
    a, b = _two(values, "paired", "AXIS=A/B")
    if axis not in axes:
        raise ScenarioError.at("paired", f"{axis!r} is not an axis of this sweep (axes: {', '.join(axes) or 'none'})")
    rows_a, rows_b = table[_match(table[axis], a)], table[_match(table[axis], b)]
    for v, rows in ((a, rows_a), (b, rows_b)):
        if rows.empty:
            raise ScenarioError.at("paired", f"no runs with {axis} = {v} (values: {', '.join(map(str, _order(table[axis])))})")
    if y.startswith("link."):  # one value per run
        rows_a, rows_b = rows_a.drop_duplicates(["point", "run"]), rows_b.drop_duplicates(["point", "run"])
    others = [c for c in axes if c != axis
              and set(map(str, rows_a[c].unique())) == set(map(str, rows_b[c].unique()))]
    key = others + ["seed"] + ([] if y.startswith("link.") else ["group"])
    den = rows_b.drop_duplicates(key)[key + [y]].rename(columns={y: "__den"})
    out = rows_a.merge(den, on=key, how="inner")
    if out.empty:
        raise ScenarioError.at("paired", f"no run at {axis} = {a} has a partner at {axis} = {b} with the same seed")
    out[y] = (out[y].astype(float) / out["__den"].astype(float)).replace([np.inf, -np.inf], np.nan)
    return out.drop(columns="__den"), [c for c in axes if c != axis]


def _ratios(table, axes, x, y, hue, group, ratio, paired):
    """``plot``'s --paired and --ratio: (table, axes, y label, what the ratios divide)."""
    label, how = y, []
    if paired is not None:
        table, axes = paired_ratio(table, axes, y, paired)
        axis, _, values = paired.partition("=")
        label += f", {values.strip()}"
        how.append(f"{axis.strip()} = {values.strip()}, paired by seed")
        for name, param in ((x, "x"), (hue, "hue")):
            if name == axis.strip():
                raise ScenarioError.at(param, f"{name!r} is the paired axis: it is divided out")
    if ratio is not None:
        if group is not None:
            raise ScenarioError.at("group", "give either --group or --ratio")
        table = group_ratio(table, y, ratio)
        label += f", group {ratio.strip()}"
        how.append(f"group {ratio.strip()} in each run")
    return table, axes, label, how


def plot(source, x: str, y: str, hue: Optional[str] = None, kind: str = "line",
         where: Optional[Dict[str, str]] = None, group: Optional[int] = None,
         out: "Optional[os.PathLike[str] | str]" = None, logx: bool = False, logy: bool = False,
         ratio: Optional[str] = None, paired: Optional[str] = None, per_flow: bool = False):
    """Plot metric ``y`` against axis ``x`` (a line per ``hue`` value, or a heatmap of ``x``
    by ``hue``) as the mean over seeds with 95% CI error bars. ``source`` is a sweep
    directory (the ``out`` of a sweep) or its table. ``where`` fixes other axes
    (``{"bottleneck.rate": "15Mbps"}``); ``group`` picks one flow group. Every axis that varies
    must be on ``x``/``hue`` or fixed by ``where``. Writes ``out`` (PNG, SVG, PDF) when given;
    returns the matplotlib Figure.

    Ratios, per run before the mean and CI: ``ratio="A/B"``, group A's ``y`` over group B's in
    the same run (:func:`group_ratio`); ``paired="AXIS=A/B"``, runs at AXIS = A over their
    partners at AXIS = B with the same seed (:func:`paired_ratio`; AXIS is divided out).
    ``per_flow``: each flow as a point (:func:`plot_flows`).

    A bad argument raises :class:`~tcpfriendly.errors.ScenarioError` whose ``field`` is the
    parameter's name (``x``, ``y``, ``hue``, ``kind``, ``where``, ``group``, ``ratio``,
    ``paired``, ``per_flow``)."""
    if per_flow:
        for name, value, default in (("hue", hue, None), ("kind", kind, "line"), ("ratio", ratio, None),
                                     ("paired", paired, None)):
            if value != default:
                raise ScenarioError.at(name, "not with a per-flow plot (each flow a point, "
                                             "coloured by its group)")
        return plot_flows(source, x, y, where=where, group=group, out=out, logx=logx, logy=logy)
    plt, pd = _pyplot(out)
    table, axes = _load(source)
    if "status" in table.columns:  # failed runs have a row but no metrics
        table = table[table["status"] == "ok"]
    if kind not in ("line", "heatmap"):
        raise ScenarioError.at("kind", f"must be line or heatmap, got {kind!r}")
    columns = list(table.columns)
    id_cols = [c for c in columns if c in axes or c in ("group", "algorithm", "direction", "params")]
    for name, param in ((x, "x"), (hue, "hue")):
        if name is not None and name not in id_cols:
            raise ScenarioError.at(param, f"{name!r} is not an axis of this sweep (axes: "
                                   f"{', '.join(axes) or 'none'}; or group, algorithm)")
    metric_cols = [c for c in columns if c not in id_cols and c not in ("point", "seed", "run", "recovery")
                   and pd.api.types.is_numeric_dtype(table[c])]
    if y not in metric_cols:
        raise ScenarioError.at("y", f"{y!r} is not a metric of this sweep (metrics: "
                               f"{', '.join(metric_cols)})")
    if kind == "heatmap" and hue is None:
        raise ScenarioError.at("hue", "a heatmap needs a second axis (hue, the rows)")
    if hue is not None and hue == x:
        raise ScenarioError.at("hue", "must differ from x")
    table = _fix(table, where)
    table, axes, label, how = _ratios(table, axes, x, y, hue, group, ratio, paired)
    if y.startswith("link."):
        table = table.drop_duplicates(subset=["point", "run"])  # one row per run
    elif group is not None:
        table = table[table["group"] == group]
        if table.empty:
            raise ScenarioError.at("group", f"no flow group {group} in this sweep")
    elif table["group"].nunique() > 1 and "group" not in (x, hue):
        if hue is None and kind == "line":
            hue = "group"
        else:
            raise ScenarioError.at("group", "the sweep has several flow groups: pick one (or put "
                                   "group on x or hue)")
    _check_loose(table, axes, [c for c in (x, hue) if c is not None])
    by = [x] + ([hue] if hue is not None else [])
    stats = summarize(table, by, y)
    seeds = table["seed"].nunique()
    labels = _group_labels(table) if "group" in by else {}

    def show(col: str, v: Any) -> str:
        return labels.get(v, f"group {v}") if col == "group" else str(v)

    xs = _order(table[x])
    numeric_x = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in xs)
    if kind == "line":
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        hues = _order(table[hue]) if hue is not None else [None]
        for h in hues:
            s = stats if h is None else stats[stats[hue] == h]
            s = s.set_index(x).reindex(xs).dropna(subset=["mean"])
            pos = list(s.index) if numeric_x else [xs.index(v) for v in s.index]
            yerr = s["ci95"].fillna(0.0).tolist()
            ax.errorbar(pos, s["mean"].tolist(), yerr=yerr, marker="o", capsize=3,
                        label=None if h is None else f"{hue} = {show(hue, h)}" if hue != "group" else show(hue, h))
        if not numeric_x:
            ax.set_xticks(range(len(xs)))
            ax.set_xticklabels([show(x, v) for v in xs])
        reference = "ratio 1 (equal)" if how else _reference(y)
        decorate(ax, x, label, logx=logx, logy=logy, legend=hue is not None, reference=reference)
    else:
        fig, ax = _heatmap(plt, table, stats, x, label, hue, xs, show)
    what = ""
    if group is not None and not y.startswith("link."):
        # the group by its algorithm too (a ratio's table may have none left: by number)
        named = _group_labels(table) if "algorithm" in table.columns else {}
        what = f"{named.get(group, f'group {group}')}, "
    fixed_text = ", ".join(f"{k}={v}" for k, v in (where or {}).items())
    ax.set_title(f"{y}: mean and 95% CI over {seeds} seed{'s' if seeds != 1 else ''}"
                 + (f"\nratio of {'; '.join(how)}" if how else "")
                 + (f"\n{what}{fixed_text}".rstrip(", ") if what or fixed_text else ""),
                 fontsize="medium")
    return _save(plt, fig, out)


def _reference(y: str) -> Optional[str]:
    """The label of the line at 1 that a metric's plot draws: the fair share for ``share``."""
    return "share 1 (fair)" if y == "share" else None


def decorate(ax, xlabel: str, ylabel: str, logx: bool = False, logy: bool = False,
             legend: bool = True, reference: Optional[str] = None) -> None:
    """The axis decoration of :func:`plot`'s lines and :func:`plot_flows`' points: log scales
    when asked, the axis labels (``x``'s name; the metric, with what a ratio divides or
    "(per flow)"), a dotted line at 1 labelled ``reference`` (a ratio's equality, the fair
    share), a small legend and a light grid. One place, so that the two kinds of figure of a
    sweep, and ``tcpf reproduce``'s per-flow panels, look alike."""
    if reference is not None:
        ax.axhline(1.0, color="black", lw=0.8, ls=":", label=reference)
        legend = True
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend:
        ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)


def _pyplot(out):
    """(pyplot, pandas); a file-only backend when the figure goes to ``out``."""
    import matplotlib

    if out is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    return plt, pd


def _save(plt, fig, out):
    """Write ``fig`` to ``out`` (if given) whole or not at all (an ``OutputError`` naming
    ``out`` and the file otherwise), creating its directory."""
    from ..outfiles import atomic_figure, make_dir

    fig.tight_layout()
    if out is not None:
        directory = os.path.dirname(os.fspath(out))
        try:
            if directory:
                make_dir(directory, "out")
            atomic_figure(fig, out, field="out", dpi=120)
        finally:
            plt.close(fig)
    return fig


def _fix(table, where: Optional[Dict[str, str]]):
    """The rows of ``table`` with each column of ``where`` at its value."""
    for col, value in (where or {}).items():
        if col not in table.columns:
            raise ScenarioError.at("where", f"{col!r} is not a column of this sweep")
        table = table[_match(table[col], value)]
        if table.empty:
            raise ScenarioError.at("where", f"no rows with {col} = {value}")
    return table


def _check_loose(table, axes: Sequence[str], cells: List[str]) -> None:
    """Refuse an axis that still varies once the ``cells`` columns are fixed (zipped axes do
    not): its values would be mixed in one point of the plot."""
    loose = [a for a in axes if a not in cells
             and table.groupby(cells, sort=False, dropna=False)[a].nunique().max() > 1]
    if loose:
        values = ", ".join(f"{a} ({', '.join(map(str, _order(table[a])))})" for a in loose)
        raise ScenarioError.at("where", f"these axes vary and are neither x nor hue: {values}; "
                               "fix each to one value (AXIS=VALUE)")


def plot_flows(source, x: str, y: str, where: Optional[Dict[str, str]] = None,
               group: Optional[int] = None, out: "Optional[os.PathLike[str] | str]" = None,
               logx: bool = False, logy: bool = False):
    """Each flow of each run as a point: per-flow metric ``y`` (a column of the per-flow table
    of a sweep with ``per_flow``, :data:`tcpfriendly.metrics.FLOW_METRICS`) against axis ``x``,
    coloured by flow group, over a line per group through the mean of its points (over its
    flows and seeds) at each ``x`` (jin2001 Figs. 8-13, liu2008: every flow's normalised
    throughput). ``source``: a sweep directory or its per-flow table (``SweepResult.flows``);
    ``where`` and ``group`` as in :func:`plot`. Writes ``out`` when given; returns the Figure."""
    from .core import FLOW_METRICS

    plt, pd = _pyplot(out)
    if source is None:
        from .store import NO_FLOWS

        raise ScenarioError.at("per_flow", NO_FLOWS)
    table, axes = _load(source, flows=True)
    if x not in axes:
        raise ScenarioError.at("x", f"{x!r} is not an axis of this sweep (axes: {', '.join(axes) or 'none'})")
    if y not in FLOW_METRICS or y not in table.columns:
        raise ScenarioError.at("y", f"{y!r} is not a per-flow metric (per-flow metrics: {', '.join(FLOW_METRICS)})")
    table = _fix(table, where)
    if group is not None:
        table = table[table["group"] == group]
        if table.empty:
            raise ScenarioError.at("group", f"no flow group {group} in this sweep")
    _check_loose(table, axes, [x])
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    groups = draw_flows(ax, table, x, y, logx=logx)
    decorate(ax, x, f"{y} (per flow)", logx=logx, logy=logy, legend=True, reference=_reference(y))
    seeds, fixed = table["seed"].nunique(), ", ".join(f"{k}={v}" for k, v in (where or {}).items())
    ax.set_title(f"{y} of each flow ({seeds} seed{'s' if seeds != 1 else ''}): points; "
                 "line: mean per group" + (" (groups drawn apart)" if groups > 1 and not logx else "")
                 + (f"\n{fixed}" if fixed else ""), fontsize="medium")
    return _save(plt, fig, out)


def draw_flows(ax, table, x: str, y: str, logx: bool = False, labels: Optional[Dict[Any, str]] = None,
               linestyle: str = "-") -> int:
    """Draw per-flow rows ``table`` on ``ax``: each row's ``y`` as a point at its ``x``,
    coloured by flow group, and a line (``linestyle``) per group through the mean of its
    points at each ``x``; ``labels``: the legend label of each group (default "group G
    (algorithm)"). The groups are drawn a little apart on a linear axis. Returns the number
    of groups. :func:`plot_flows` and ``tcpf reproduce``'s scatter panels draw with it."""
    xs = _order(table[x])
    numeric_x = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in xs)
    labels = {**_group_labels(table), **(labels or {})}
    groups = list(table.groupby("group", sort=True))
    # each group's points a little apart (a tenth of the closest two x values; none on a log
    # axis), so that the groups do not hide each other
    gap = min((b - a for a, b in zip(xs, xs[1:])), default=1.0) if numeric_x else 1.0
    for i, (g, rows) in enumerate(groups):
        color = f"C{i % 10}"
        shift = 0.0 if logx else 0.1 * gap * (i - (len(groups) - 1) / 2)

        def at(values):
            return [v + shift for v in values] if numeric_x else [xs.index(v) + shift for v in values]
        ax.scatter(at(rows[x]), rows[y].astype(float).tolist(), s=14, alpha=0.6, color=color,
                   edgecolors="none", label=labels[g])
        means = rows.groupby(x, sort=False)[y].mean().reindex(xs).dropna()
        ax.plot(at(means.index), means.tolist(), color=color, linewidth=1.5, linestyle=linestyle)
    if not numeric_x:
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels([str(v) for v in xs])
    return len(groups)


def _heatmap(plt, table, stats, x: str, y: str, hue: str, xs: List[Any], show):
    """``y`` (mean, ±CI95 in each cell) by ``x`` (columns) and ``hue`` (rows)."""
    rows = _order(table[hue])
    grid = [[float("nan")] * len(xs) for _ in rows]
    half = [[float("nan")] * len(xs) for _ in rows]
    for _, r in stats.iterrows():
        i, j = rows.index(r[hue]), xs.index(r[x])
        grid[i][j], half[i][j] = r["mean"], r["ci95"]
    fig, ax = plt.subplots(figsize=(1.2 * len(xs) + 2.8, 0.7 * len(rows) + 2.0))
    image = ax.imshow(grid, aspect="auto", cmap="viridis", origin="lower")
    fig.colorbar(image, ax=ax, label=y)
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([show(x, v) for v in xs])
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([show(hue, v) for v in rows])
    ax.set_xlabel(x)
    ax.set_ylabel(hue)
    finite = [v for row in grid for v in row if math.isfinite(v)]
    mid = (min(finite) + max(finite)) / 2 if finite else 0.0
    for i in range(len(rows)):
        for j in range(len(xs)):
            if math.isfinite(grid[i][j]):
                text = f"{grid[i][j]:.3g}"
                if math.isfinite(half[i][j]):
                    text += f"\n±{half[i][j]:.2g}"
                ax.text(j, i, text, ha="center", va="center", fontsize="small",
                        color="black" if grid[i][j] > mid else "white")
    return fig, ax


def _group_labels(table) -> Dict[Any, str]:
    labels = {}
    for g, rows in table.groupby("group", sort=True):
        algos = sorted({str(a) for a in rows["algorithm"]})
        labels[g] = f"group {g} ({'/'.join(algos)})"
    return labels
