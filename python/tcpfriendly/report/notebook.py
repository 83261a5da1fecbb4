"""Rich display in Jupyter (``_repr_html_``): the same tables and figures as the HTML report,
as one HTML fragment (scoped CSS, inline SVG, no script).

A run's display is here; an evaluation's and a reproduction's are beside their report sources
(:func:`.evaluate.evaluation_html`, :func:`.reproduce.experiment_display`), on this module's
:data:`CSS` and :func:`figure_html`. This module imports nothing of the simulation, evaluate or
reproduce packages, so the objects they define can display through it without an import cycle."""

from __future__ import annotations

import uuid
from typing import Any

from . import html as H

__all__ = ["result_html", "figure_html", "CSS"]

CSS = ("<style>.tcpf-nb table{border-collapse:collapse;font-size:12px;margin:4px 0 8px}"
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

    parts = [CSS, '<div class="tcpf-nb">', f"<b>{H.esc(repr(result))}</b>",
             group_table(result), link_table(result)]
    kinds = ["cwnd", "goodput"] if result.has_timeseries() else ["goodput"]
    for kind in kinds:
        try:
            fig = plot.figure(result, kind)
        except ScenarioError:
            continue  # e.g. no window-based flow for cwnd: try the next
        parts.append(figure_html(fig))
        break
    parts.append("</div>")
    return "".join(parts)


def figure_html(fig) -> str:
    """A matplotlib figure as inline SVG HTML, its ids unique in the notebook."""
    from .. import plot

    # ids unique across every output of a notebook, whatever else it displayed
    return H.figure(plot.svg_text(fig), prefix=f"nb{uuid.uuid4().hex[:10]}-")

