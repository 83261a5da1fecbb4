"""HTML building blocks of a report: escaping, tables, inline SVG figures and the page itself.

A page is one file: the CSS is inline, figures are inline SVG (their ids prefixed so that
several figures on one page never collide), and there is no script and no URL to fetch, so it
opens from disk, offline, in any browser.
"""

from __future__ import annotations

import html
import itertools
import math
import re
from typing import Any, Iterable, List, Optional, Sequence

__all__ = ["reset_ids", "esc", "table", "inline_svg", "figure", "pre", "details", "page", "fmt"]

_counter = itertools.count(1)


def reset_ids() -> None:
    """Restart figure id prefixes (each page numbers its figures from 1: same input, same bytes)."""
    global _counter
    _counter = itertools.count(1)


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def fmt(v: Any, digits: int = 3) -> str:
    """A table cell: floats to ``digits`` significant digits, NaN/None as '-'."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        return f"{v:.{digits}g}" if abs(v) < 1e6 else f"{v:.4g}"
    try:
        import numpy as np

        if isinstance(v, np.floating):
            return fmt(float(v), digits)
        if isinstance(v, np.integer):
            return str(int(v))
    except ImportError:  # pragma: no cover
        pass
    return str(v)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], numeric_from: int = 1,
          caption: Optional[str] = None, classes: str = "") -> str:
    """An HTML table; cells are escaped (pass already formatted strings or numbers)."""
    out = ['<div class="tw">', f'<table class="{esc(classes)}">' if classes else "<table>"]
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead><tbody>")
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            cls = ' class="num"' if i >= numeric_from else ""
            cells.append(f"<td{cls}>{esc(fmt(c))}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


_XML_HEAD = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')
_ID = re.compile(r'\bid="([^"]+)"')


def inline_svg(svg: str, prefix: Optional[str] = None) -> str:
    """SVG text (a matplotlib file or string) made fit to inline into HTML: no XML prologue,
    DOCTYPE, metadata or namespace declarations (HTML parses inline SVG without them; they are
    the only URLs in matplotlib's output), and every id prefixed uniquely for this page."""
    svg = _XML_HEAD.sub("", svg)
    svg = _METADATA.sub("", svg)
    svg = _XMLNS.sub("", svg)
    prefix = prefix or f"f{next(_counter)}-"
    ids = set(_ID.findall(svg))
    if ids:
        svg = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
        svg = re.sub(r"#([\w.:-]+)", lambda m: f"#{prefix}{m.group(1)}" if m.group(1) in ids else m.group(0), svg)
    # scale with the page, never beyond the figure's own size: keep the viewBox, turn the fixed
    # width into a maximum
    svg = re.sub(r'<svg([^>]*?)\swidth="([^"]*)"\s+height="[^"]*"', r'<svg\1 style="max-width:\2"', svg, count=1)
    return svg.strip()


def figure(svg: str, caption: str = "", prefix: Optional[str] = None) -> str:
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure class="fig">{inline_svg(svg, prefix)}{cap}</figure>'


def pre(text: str, classes: str = "") -> str:
    cls = f' class="{esc(classes)}"' if classes else ""
    return f"<pre{cls}>{esc(text)}</pre>"


def details(summary: str, body: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{esc(summary)}</summary>{body}</details>"


CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       margin: 0 auto; max-width: 1100px; padding: 1.2em 1.6em 3em; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.5em; margin: 0.2em 0; }
h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin-top: 1.2em; }
.sub { color: #555; margin: 0 0 1em; }
nav { font-size: 0.9em; margin: 0.6em 0 1em; }
nav a { margin-right: 1em; color: #0b5cad; text-decoration: none; }
table { border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.9em; }
caption { text-align: left; color: #555; padding-bottom: 0.3em; caption-side: top; }
th, td { border: 1px solid #d5d5d5; padding: 0.25em 0.6em; vertical-align: top; }
th { background: #f3f4f6; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.tw { overflow-x: auto; }
tbody tr:nth-child(even) { background: #fafafa; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: 0.7em 0.9em; overflow-x: auto;
      font-size: 0.85em; line-height: 1.35; }
pre.cmd { background: #10151c; color: #e6edf3; border-color: #10151c; }
figure.fig { margin: 1em 0 1.6em; }
figure.fig svg { width: 100%; height: auto; max-width: 900px; display: block; }
figcaption { color: #555; font-size: 0.88em; margin-top: 0.3em; }
.grade-O { background: #d9f2dc; } .grade-Δ { background: #fdf1c7; } .grade-X { background: #f8d3d0; }
.differs { outline: 2px solid #c62828; }
tr.differs { outline: none; } td.verdict { white-space: nowrap; }
tr.differs td.verdict { color: #b71c1c; font-weight: 600; } tr.matched td.verdict { color: #1b5e20; }
tr.not-run td.verdict { color: #616161; }
.note { color: #555; font-size: 0.9em; }
.warn { background: #fff4e5; border-left: 4px solid #f0a020; padding: 0.4em 0.8em; }
details { margin: 0.6em 0; } summary { cursor: pointer; color: #0b5cad; }
footer { margin-top: 3em; color: #777; font-size: 0.85em; }
"""


def page(title: str, subtitle: str, sections: List["tuple[str, str, str]"], footer: str = "") -> str:
    """The whole document. ``sections`` are ``(anchor, heading, body_html)``."""
    nav = "".join(f'<a href="#{esc(a)}">{esc(h)}</a>' for a, h, _ in sections)
    body = "".join(f'<section id="{esc(a)}"><h2>{esc(h)}</h2>{b}</section>' for a, h, b in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{esc(title)}</h1><p class=\"sub\">{esc(subtitle)}</p><nav>{nav}</nav>{body}"
            f"<footer>{esc(footer)}</footer></body></html>\n")
