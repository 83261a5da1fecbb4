"""Output of ``tcpf reproduce``: the claim table (text and Markdown), the figure of each
experiment (PNG and SVG, in the paper's axes and series), ``REPRODUCTION.md`` per paper (with
the status of every inventory row: :mod:`tcpfriendly.reproduce.inventory`)."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import ScenarioError
from .expr import Series, Undecided, evaluate_expr
from .inventory import RowStatus, counts_text, row_counts, rows_markdown
from .rules import difference, rule_text
from ..metrics.transients import LowerBound

if TYPE_CHECKING:  # annotations only: run.py's displays draw with experiment_figure
    from .run import ExperimentResult

__all__ = ["fmt", "claim_rows", "table_text", "paper_markdown", "experiment_figure", "write_figure"]


def fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, LowerBound):
        return v.text()
    if isinstance(v, Undecided):
        return "undecided"
    if isinstance(v, float):
        if math.isnan(v):
            return "n/a"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.4g}"
        return f"{v:.4g}"
    if isinstance(v, Series):
        return "curve"
    return str(v)


def claim_rows(r: ExperimentResult) -> List[List[str]]:
    rows = []
    for c in r.claims:
        paper = fmt(c.claim.value)
        if c.claim.unit:
            paper += f" {c.claim.unit}"
        rows.append([c.claim.claim, paper, fmt(c.ours), difference(c.claim.value, c.ours) or "",
                     rule_text(c.claim.rule), c.verdict])
    return rows


HEAD = ["claim", "paper", "ours", "difference", "rule", "verdict"]


def _width_table(head: Sequence[str], rows: List[List[str]], width: int = 90) -> str:
    def clip(s: str) -> str:
        return s if len(s) <= width else s[: width - 1] + "…"
    rows = [[clip(x) for x in r] for r in rows]
    w = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w[i]) for i, c in enumerate(cells)).rstrip()  # noqa: E731
    return "\n".join([line(head), line(["-" * x for x in w]), *[line(r) for r in rows]])


def table_text(r: ExperimentResult) -> str:
    ex = r.experiment
    mode = "quick" if r.quick else "full"
    seeds = f", {r.seeds} seed{'s' if r.seeds != 1 else ''}" if r.seeds else ""
    head = f"{ex.name}: {ex.title} ({ex.source}) [{mode}{seeds}, {r.wall_s:.1f} s]"
    return head + "\n" + _width_table(HEAD, claim_rows(r)) + \
        f"\n{r.tally()} matched"


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _md_table(head: Sequence[str], rows: List[List[str]]) -> List[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    return out


def paper_markdown(paper: str, results: List[ExperimentResult], wall_s: float, quick: bool,
                   command: str, figures: Dict[str, List[str]],
                   rows: Optional[List[RowStatus]] = None) -> str:
    """The paper's ``REPRODUCTION.md``; with ``rows`` (its inventory rows' statuses) the row
    count next to the claim count and the per-row table at the end."""
    from ..version import __version__, engine_id

    n = sum(len(r.claims) for r in results)
    m = sum(r.matched for r in results)
    ns2 = any(r.simulator == "ns2" for r in results)
    u = sum(1 for r in results for c in r.claims if c.unavailable is not None)
    if ns2:
        from ..ns2 import ns2_engine_id
        build = [f"Simulator: **ns-2 2.35** (`ns`), running the scripts `tcpfriendly.ns2` exports for "
                 f"each run (`--simulator ns2`; identity {ns2_engine_id()}), not tcpfriendly's "
                 "engine: the sweep and evaluate experiments (no analytic ones), and a claim whose "
                 f"runs ns-2 cannot express is not run ({u} here). \"ours\" below is ns-2's value.  "]
    else:
        build = [f"Build: tcpfriendly {__version__}, engine build {engine_id()} "
                 "(`tcpfriendly.version.engine_id()`).  "]
    lines = [f"# Reproduction of {paper}" + (" in ns-2" if ns2 else ""), "",
             f"Command: `{command}`  ",
             *build,
             f"Mode: {'quick (fewer seeds, shorter runs: not the published setup)' if quick else 'full'}; "
             f"wall time {wall_s:.1f} s on this machine.  ",
             f"Claims matched: **{m} of {n - u}**" + (f" ({u} not run)" if u else "") + "."
             + ("  " if rows else ""),
             *([f"[Inventory rows](#inventory-rows): **{counts_text(row_counts(rows))}**."] if rows else []),
             "",
             "Every published value is transcribed in `experiments/" + paper +
             "/<experiment>/published.toml` with the place it is printed; every value the paper "
             "leaves out is a named assumption in `experiment.toml`. The rules were written "
             "before comparing and are never widened.", "",
             "| experiment | source | kind | matched | wall time |", "|---|---|---|---|---|"]
    for r in results:
        ex = r.experiment
        lines.append(f"| [{ex.id}](#{ex.id}) | {_md_cell(ex.source)} | {ex.kind} | "
                     f"{r.tally()} | {r.wall_s:.1f} s |")
    lines.append("")
    for r in results:
        ex = r.experiment
        lines += [f'<a id="{ex.id}"></a>', "", f"## {ex.id}: {ex.title}", "", f"Source: {ex.source}.  ",
                  f"Kind: {ex.kind}"
                  + (f"; {r.seeds} seed{'s' if r.seeds != 1 else ''} per point" if r.seeds else "")
                  + (f"; runs: {r.runs.get('total', 0)} ({r.runs.get('cached', 0)} cached)" if r.runs else "")
                  + f"; {r.wall_s:.1f} s.", ""]
        if ex.metric.get("doc"):
            lines += [f"Metric: {ex.metric['doc']}", ""]
        lines += _md_table(HEAD, claim_rows(r)) + [""]
        quotes = [(c.claim.where, c.claim.quote) for c in r.claims if c.claim.quote]
        if quotes:
            lines += ["Where the paper says it:", ""]
            seen = set()
            for w, q in quotes:
                if (w, q) in seen:
                    continue
                seen.add((w, q))
                lines.append(f"- {w}: “{q}”")
            lines.append("")
        if ex.assumptions:
            lines += ["Assumptions:", ""]
            for k, a in ex.assumptions.items():
                v = a.get("quick", a.get("value")) if r.quick else a.get("value")
                unit = f" {a['unit']}" if a.get("unit") else ""
                lines.append(f"- `{k}` = {v}{unit} ({a.get('source', '?')}): {a.get('doc', '')}")
            lines.append("")
        for fig in figures.get(ex.id, []):
            if fig.endswith(".png"):
                lines += [f"![{ex.id}]({os.path.basename(fig)})", ""]
        for block in r.extra.get("markdown", []):
            lines += [block, ""]
    if rows:
        lines += ['<a id="inventory-rows"></a>', ""] + rows_markdown(paper, rows) + [""]
    return "\n".join(lines).rstrip() + "\n"


def experiment_figure(r: ExperimentResult):
    """The experiment's figure in the paper's axes and series (a matplotlib Figure, outside
    pyplot: nothing to close, no backend switched under a notebook), or None without
    matplotlib or when there is nothing to draw."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None
    ex = r.experiment
    spec = ex.figure
    fspec = spec.get("flows") or {}
    panels = list(fspec.get("panels") or []) if r.flows is not None else []
    cols = 2 if panels else 1
    nrows = -(-(1 + len(panels)) // cols)
    fig = Figure(figsize=(6.4 * cols, 4.4 * nrows))
    ax = fig.add_subplot(nrows, cols, 1)
    for i, panel in enumerate(panels):
        _flow_panel(fig.add_subplot(nrows, cols, i + 2), r, fspec, panel, f"{ex.name}: figure.flows.panels[{i}]")
    if spec.get("kind") == "bar" and spec.get("series"):
        curves = [(label, evaluate_expr(str(text), r.names, f"{ex.name}: figure.series.{label}"))
                  for label, text in spec["series"].items()]
        labels = list(spec.get("labels") or [])
        width = 0.8 / max(1, len(curves))
        if not panels and not any(isinstance(s, Series) and s for _, s in curves):
            return None  # every curve is not run (ns-2) or empty
        for i, (label, s) in enumerate(curves):
            if isinstance(s, Series) and s:
                xs = s.xs()
                ax.bar([j + i * width for j in range(len(xs))], s.ys(), width, label=label)
                if not labels:
                    labels = [fmt(x) for x in xs]
        ax.set_xticks([j + width * (len(curves) - 1) / 2 for j in range(len(labels))])
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_xlabel(spec.get("x", ""))
        ax.set_ylabel(spec.get("y", ""))
        _legend(ax)
    elif spec.get("series"):
        markers = "os^vD<>p*h"
        drawn: List[Tuple[float, float]] = []
        for i, (label, text) in enumerate(spec["series"].items()):
            s = evaluate_expr(str(text), r.names, f"{ex.name}: figure.series.{label}")
            if not isinstance(s, Series) or not s:
                continue
            drawn += [(float(a), float(b)) for a, b in zip(s.xs(), s.ys())
                      if isinstance(a, (int, float)) and isinstance(b, (int, float))]
            ax.plot(s.xs(), s.ys(), marker=markers[i % len(markers)] if spec.get("markers", True) else None,
                    ms=4, label=label, ls="none" if spec.get("kind") == "scatter" else "-")
        for p in spec.get("points") or []:
            ax.plot([p["x"]], [p["y"]], "k*", ms=10)
            ax.annotate(str(p.get("label", "paper")), (p["x"], p["y"]), textcoords="offset points",
                        xytext=(5, 5), fontsize=8)
        for h in spec.get("hlines") or []:
            ax.axhline(h["y"], color="grey", ls="--", lw=0.8)
            if h.get("label"):
                ax.annotate(str(h["label"]), (0.01, h["y"]), xycoords=("axes fraction", "data"),
                            fontsize=8, color="grey", xytext=(0, 2), textcoords="offset points")
        ax.set_xlabel(spec.get("x", ""))
        ax.set_ylabel(spec.get("y", ""))
        # a log axis needs a positive value on it (a run whose metric is missing, e.g. one ns-2
        # cannot express, leaves only NaN)
        for axis, k in (("xscale", 0), ("yscale", 1)):
            if spec.get(axis) and (spec[axis] != "log" or any(
                    math.isfinite(p[k]) and p[k] > 0 for p in drawn)):
                getattr(ax, f"set_{axis}")(spec[axis])
        if spec.get("ylim"):
            ax.set_ylim(*spec["ylim"])
        if not drawn and not panels:
            return None  # every series is not run (ns-2) or empty: nothing to draw
        _legend(ax)
    else:  # a table: the paper's values beside ours, one column per numeric claim
        pts = [(i, c) for i, c in enumerate(r.claims)
               if isinstance(c.claim.value, (int, float)) and not isinstance(c.claim.value, bool)
               and isinstance(c.ours, float) and math.isfinite(c.ours)]
        if not pts:
            return None
        xs = list(range(len(pts)))
        ax.plot(xs, [c.claim.value for _, c in pts], "ks", mfc="none", ms=8, label="paper")
        ax.plot(xs, [c.ours for _, c in pts], "r.", ms=8, label="ours")
        vals = [abs(v) for _, c in pts for v in (c.claim.value, c.ours) if v != 0]
        if vals and max(vals) / min(vals) > 100 and all(v > 0 for _, c in pts for v in (c.claim.value, c.ours)):
            ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels([(c.claim.claim[:28] + "…") if len(c.claim.claim) > 28 else c.claim.claim
                            for _, c in pts], rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("value")
        ax.legend(fontsize=8)
    ax.set_title(spec.get("title") or f"{ex.paper} {ex.title}", fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _legend(ax) -> None:
    """A legend, when something labelled was drawn (matplotlib warns on an empty one)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


def _flow_panel(ax, r: ExperimentResult, fspec: Mapping[str, Any], panel: Mapping[str, Any],
                where: str) -> None:
    """One scatter panel of the experiment's per-flow table (``[figure.flows]``, the sweep's
    ``per_flow = true``): each flow of each run that matches the panel's ``where`` (and
    ``groups``) a point of ``y`` against ``x``, coloured by group, the groups' means dashed
    (jin2001 Figs. 8-13). The x values are drawn evenly spaced, in order (n = 1, 2, 4, ...)."""
    from ..sweep.plot import decorate, draw_flows
    from .tables import select_rows

    x, y = str(fspec.get("x", "")), str(fspec.get("y", ""))
    rows = select_rows(r.flows, panel.get("where") or {}, where, "flows")
    if fspec.get("groups") is not None:
        rows = rows[rows["group"].isin([int(g) for g in fspec["groups"]])]
    for col in (x, y):
        if col not in rows.columns:
            raise ScenarioError(f"{where}: no column {col!r} in the sweep's flows table", field=where)
    if rows.empty:
        ax.set_axis_off()
        return
    rows = rows.sort_values(x, kind="stable")
    rows = rows.assign(**{x: [fmt(v) for v in rows[x]]})   # evenly spaced, groups drawn apart
    labels = {int(k): str(v) for k, v in (fspec.get("labels") or {}).items()}
    draw_flows(ax, rows, x, y, labels=labels, linestyle="--")
    for h in fspec.get("hlines") or []:
        ax.axhline(float(h), color="grey", ls=":", lw=0.8)
    decorate(ax, fspec.get("xlabel", x), fspec.get("ylabel", y))
    ax.set_title(str(panel.get("title", "")), fontsize=10)


def write_figure(r: ExperimentResult, out_dir: str, field: Optional[str] = "out") -> List[str]:
    """The experiment's figure as PNG and SVG in ``out_dir`` (which exists), each file whole
    or not at all (:func:`tcpfriendly.outfiles.atomic_figure`); [] without matplotlib or a
    figure."""
    from ..outfiles import atomic_figure

    fig = experiment_figure(r)
    if fig is None:
        return []
    ex = r.experiment
    return [atomic_figure(fig, os.path.join(out_dir, f"{ex.paper}-{ex.id}.{ext}"), field=field,
                          dpi=110, metadata={"Date": None} if ext == "svg" else None)
            for ext in ("png", "svg")]
