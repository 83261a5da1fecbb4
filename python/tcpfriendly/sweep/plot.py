"""Summaries and plots of a sweep's tidy table: mean and 95% confidence interval over seeds.

    from tcpfriendly.sweep.plot import summarize, plot
    summarize(table, ["flows[1].params.beta", "group"], "share")   # mean, ci95, std, n
    plot("out/beta", x="flows[1].params.beta", y="share", hue="group", out="share.png")

The interval is Student's t: mean +- t(0.975, n-1) * std / sqrt(n), over the seeds of each
cell (n = 1 gives no interval).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, List, Optional, Sequence

from ..errors import ScenarioError
from ..metrics.groups import t975

__all__ = ["summarize", "plot", "t975"]

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


def _load(source) -> "tuple[Any, List[str]]":
    """(table, axis paths) from a sweep directory or a DataFrame."""
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
    from .store import load_results

    directory = os.fspath(source)
    table = load_results(directory)
    axes: List[str] = []
    spec = os.path.join(directory, "sweep.json")
    if os.path.exists(spec):
        with open(spec, encoding="utf-8") as f:
            axes = list(json.load(f).get("axes", []))
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


def plot(source, x: str, y: str, hue: Optional[str] = None, kind: str = "line",
         where: Optional[Dict[str, str]] = None, group: Optional[int] = None,
         out: "Optional[os.PathLike[str] | str]" = None, logx: bool = False, logy: bool = False):
    """Plot metric ``y`` against axis ``x`` (a line per ``hue`` value, or a heatmap of ``x``
    by ``hue``) as the mean over seeds with 95% CI error bars. ``source`` is a sweep
    directory (the ``out`` of a sweep) or its table. ``where`` fixes other axes
    (``{"bottleneck.rate": "15Mbps"}``); ``group`` picks one flow group. Every axis that varies
    must be on ``x``/``hue`` or fixed by ``where``. Writes ``out`` (PNG, SVG, PDF) when given;
    returns the matplotlib Figure.

    A bad argument raises :class:`~tcpfriendly.errors.ScenarioError` whose ``field`` is the
    parameter's name (``x``, ``y``, ``hue``, ``kind``, ``where``, ``group``)."""
    import matplotlib

    if out is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

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
    for col, value in (where or {}).items():
        if col not in columns:
            raise ScenarioError.at("where", f"{col!r} is not a column of this sweep")
        table = table[_match(table[col], value)]
        if table.empty:
            raise ScenarioError.at("where", f"no rows with {col} = {value}")
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
    # An axis is loose if it still varies once x and hue are fixed (zipped axes do not).
    cells = [c for c in (x, hue) if c is not None]
    loose = [a for a in axes if a not in cells
             and table.groupby(cells, sort=False, dropna=False)[a].nunique().max() > 1]
    if loose:
        values = ", ".join(f"{a} ({', '.join(map(str, _order(table[a])))})" for a in loose)
        raise ScenarioError.at("where", f"these axes vary and are neither x nor hue: {values}; "
                               "fix each to one value (AXIS=VALUE)")
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
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        if hue is not None:
            ax.legend(fontsize="small")
        ax.grid(True, alpha=0.3)
    else:
        fig, ax = _heatmap(plt, table, stats, x, y, hue, xs, show)
    what = f"group {group}, " if group is not None and not y.startswith("link.") else ""
    fixed_text = ", ".join(f"{k}={v}" for k, v in (where or {}).items())
    ax.set_title(f"{y}: mean and 95% CI over {seeds} seed{'s' if seeds != 1 else ''}"
                 + (f"\n{what}{fixed_text}".rstrip(", ") if what or fixed_text else ""),
                 fontsize="medium")
    fig.tight_layout()
    if out is not None:
        directory = os.path.dirname(os.fspath(out))
        if directory:
            os.makedirs(directory, exist_ok=True)
        fig.savefig(os.fspath(out), dpi=120)
        plt.close(fig)
    return fig


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
