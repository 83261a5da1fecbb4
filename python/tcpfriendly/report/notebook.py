"""Rich display in Jupyter (``_repr_html_``): the same tables and figures as the HTML report,
as one HTML fragment (scoped CSS, inline SVG, no script)."""

from __future__ import annotations

import uuid
from typing import Any

from . import html as H

__all__ = ["result_html"]

_CSS = ("<style>.tcpf-nb table{border-collapse:collapse;font-size:12px;margin:4px 0 8px}"
        ".tcpf-nb th,.tcpf-nb td{border:1px solid #ccc;padding:2px 6px}"
        ".tcpf-nb td.num{text-align:right}.tcpf-nb caption{text-align:left;color:#555}"
        ".tcpf-nb svg{max-width:720px;width:100%;height:auto}</style>")


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
        # ids unique across every output of a notebook, whatever else it displayed
        parts.append(H.figure(plot.svg_text(fig), prefix=f"nb{uuid.uuid4().hex[:10]}-"))
        break
    parts.append("</div>")
    return "".join(parts)
