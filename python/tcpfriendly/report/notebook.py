"""Rich display in Jupyter (``_repr_html_``): the same tables and figures as the HTML report,
as one HTML fragment (scoped CSS, inline SVG, no script)."""

from __future__ import annotations

import uuid
from typing import Any

from . import html as H

__all__ = ["result_html", "evaluation_html", "experiment_html", "reproduction_html"]

_CSS = ("<style>.tcpf-nb table{border-collapse:collapse;font-size:12px;margin:4px 0 8px}"
        ".tcpf-nb th,.tcpf-nb td{border:1px solid #ccc;padding:2px 6px}"
        ".tcpf-nb td.num{text-align:right}.tcpf-nb caption{text-align:left;color:#555}"
        ".tcpf-nb svg{max-width:720px;width:100%;height:auto}"
        ".tcpf-nb td.verdict{white-space:nowrap}.tcpf-nb tr.differs td.verdict{color:#b71c1c;font-weight:600}"
        ".tcpf-nb tr.matched td.verdict{color:#1b5e20}.tcpf-nb .differs{outline:2px solid #c62828}"
        ".tcpf-nb tr.differs{outline:none}.tcpf-nb .grade-O{background:#d9f2dc}"
        ".tcpf-nb .grade-Δ{background:#fdf1c7}.tcpf-nb .grade-X{background:#f8d3d0}</style>")


def result_html(result: Any) -> str:
    """A run's group table, link table and key figure (cwnd with a time series, else the
    per-flow goodput bars)."""
    from .. import plot
    from ..errors import ScenarioError
    from .tables import group_table, link_table

    parts = [_CSS, '<div class="tcpf-nb">', f"<b>{H.esc(repr(result))}</b>",
             group_table(result), link_table(result)]
    kinds = ["cwnd", "goodput"] if result.has_timeseries() else ["goodput"]
    for kind in kinds:
        try:
            fig = plot.figure(result, kind)
        except ScenarioError:
            continue  # e.g. no window-based flow for cwnd: try the next
        parts.append(_figure(fig))
        break
    parts.append("</div>")
    return "".join(parts)


def _figure(fig) -> str:
    from .. import plot

    # ids unique across every output of a notebook, whatever else it displayed
    return H.figure(plot.svg_text(fig), prefix=f"nb{uuid.uuid4().hex[:10]}-")


def evaluation_html(ev: Any) -> str:
    """An evaluation (:class:`tcpfriendly.evaluate.Evaluation`): the verdict row with the number
    behind each grade and tsao2007's row beside it (as in the report), the thresholds, and the
    first figure (S1's throughput ratio when S1 ran)."""
    from ..evaluate.report import figures
    from .evaluate import _thresholds, _verdicts

    d = ev.to_json()
    params = ", ".join(f"{k}={v}" for k, v in (d.get("params") or {}).items()) or "defaults"
    head = (f"<b>tcpf evaluate {H.esc(d.get('algorithm'))}</b> ({H.esc(params)}; β = fraction removed)"
            + (" — <b>quick</b>: fewer seeds, shorter runs; indicative only" if d.get("quick") else "")
            + f"; wall time {H.esc(d.get('wall_s'))} s")
    parts = [_CSS, '<div class="tcpf-nb">', head, _verdicts(d), H.details("thresholds", _thresholds(d))]
    first = next(iter(figures(ev)), None)
    if first is not None:
        parts.append(_figure(first[1]))
    parts.append("</div>")
    return "".join(parts)


def _experiment(r: Any, heading: str) -> str:
    from ..reproduce.report import experiment_figure
    from .reproduce import experiment_html

    fig = experiment_figure(r)
    return experiment_html(r.to_json(), _figure(fig) if fig is not None else "", heading=heading, anchor=False)


def experiment_html(r: Any) -> str:
    """One reproduced experiment (:class:`tcpfriendly.reproduce.ExperimentResult`): the
    paper-vs-ours table (✓ matched / ✗ differs, with the hypothesis for each difference) and
    the experiment's figure, as in ``tcpf report`` of a ``tcpf reproduce --out`` directory."""
    return "".join([_CSS, '<div class="tcpf-nb">', _experiment(r, "h4"), "</div>"])


def reproduction_html(results: Any) -> str:
    """What :func:`tcpfriendly.reproduce.reproduce` returns: per paper, claims matched / total and
    a row per experiment, then each experiment as :func:`experiment_html`."""
    from .reproduce import summary_html

    by_paper: dict = {}
    for r in results:
        by_paper.setdefault(r.experiment.paper, []).append(r)
    parts = [_CSS, '<div class="tcpf-nb">']
    if not by_paper:
        parts.append("<p>no experiment ran</p>")
    for paper, rs in by_paper.items():
        parts.append(f"<h3>{H.esc(paper)}</h3>" + summary_html([r.to_json() for r in rs], link=False))
        parts += [_experiment(r, "h4") for r in rs]
    parts.append("</div>")
    return "".join(parts)
