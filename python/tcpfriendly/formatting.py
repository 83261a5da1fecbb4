"""Text formatting of results: numbers, link and algorithm labels, aligned tables.

One home for the labels that ``Result.summary()`` (tcpf run), the figures (:mod:`tcpfriendly.plot`)
and the HTML reports (:mod:`tcpfriendly.report`) print, so that a group reads the same everywhere.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List


def _percent(v) -> str:
    text = _fixed(v, 3)
    return text if text == "-" else f"{float(v) * 100:.1f}%"


def _fixed(v, digits: int) -> str:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "-"
    return f"{v:.{digits}f}" if math.isfinite(v) else "-"


def _int(v) -> str:
    try:
        return str(int(v))
    except (TypeError, ValueError):
        return "-"


def _num(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _link_label(link: Dict[str, Any]) -> str:
    """'5 Mb/s, 20 ms, red, limit 72 pkts' from a normalized bottleneck (bps, s, packets)."""
    parts = []
    rate, delay = link.get("rate"), link.get("delay")
    if isinstance(rate, (int, float)):
        parts.append(f"{rate / 1e6:g} Mb/s")
    if isinstance(delay, (int, float)):
        parts.append(f"{delay * 1e3:g} ms")
    if link.get("queue"):
        parts.append(str(link["queue"]) + (" + ECN" if link.get("ecn") else ""))
    if isinstance(link.get("limit"), (int, float)):
        parts.append(f"limit {_num(link['limit'])} pkts")
    loss = link.get("loss")
    if isinstance(loss, dict) and loss:
        parts.append("loss " + " ".join(f"{k}={v}" for k, v in loss.items()))
    return ", ".join(parts)


def _algorithm_label(row) -> str:
    name = str(row.get("algorithm"))
    recovery = row.get("recovery") if hasattr(row, "get") else None
    if isinstance(recovery, str) and recovery:
        name += f"/{recovery}"
    return name


def _params_label(params) -> str:
    if not isinstance(params, dict) or not params:
        return "-"
    return " ".join(f"{k}={_num(v) if not isinstance(v, float) else f'{v:g}'}" for k, v in params.items())


def _table(headers: List[str], rows: List[List[str]], left: int) -> List[str]:
    """Align columns; the first ``left`` columns are left-aligned, the rest right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def fmt(cells):
        out = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(out).rstrip()

    return ["  " + fmt(headers)] + ["  " + fmt(r) for r in rows]
