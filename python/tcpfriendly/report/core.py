"""The report hook: a *source* recognises one kind of output and turns it into a :class:`Page`.

``tcpf report PATH`` asks each registered source in turn (:data:`SOURCES`, in order) whether
it recognises PATH (``detect``) and renders the first that does (``build``). A new kind of
output (a new evaluate layout, another tool's directory) plugs in with one call::

    from tcpfriendly import report
    from tcpfriendly.report import Page, Section

    def detect(path: str) -> bool:           # cheap: look at file names, not contents
        return os.path.isfile(os.path.join(path, "mytool.json"))

    def build(path: str) -> Page:
        data = json.load(open(os.path.join(path, "mytool.json")))
        return Page(title="mytool ...", subtitle="...",
                    sections=[Section("verdicts", "Verdicts", report.html.table(...))],
                    commands=["mytool ... --out DIR", f"tcpf report {path}"])

    report.register("mytool", detect, build, first=True)

Sections hold HTML built with :mod:`.html` (tables, inline SVG figures via
``report.html.figure(plot.svg_text(fig))``); :func:`render` adds the page frame, the
navigation and the "regenerate" commands.
"""

from __future__ import annotations

import os
from typing import Callable, List, Optional

from ..errors import ScenarioError, ScenarioFileError
from ..outfiles import atomic_write
from . import html as H
from .page import Page, Section, Source  # noqa: F401 - Section: re-exported for sources

__all__ = ["Page", "Section", "Source", "SOURCES", "register", "build", "render", "write"]


#: The registered sources, asked in order.
SOURCES: List[Source] = []


def register(name: str, detect: Callable[[str], bool], build: Callable[[str], Page],
             first: bool = False) -> None:
    """Add (or replace, by ``name``) a source; ``first`` asks it before the others."""
    SOURCES[:] = [s for s in SOURCES if s.name != name]
    src = Source(name, detect, build)
    if first:
        SOURCES.insert(0, src)
    else:
        SOURCES.append(src)


def _builtin() -> None:
    if SOURCES:
        return
    from . import evaluate, reproduce, run, sweep

    # reproduce first: its results.json must not be taken for a run's result JSON
    for mod in (reproduce, run, sweep, evaluate):
        register(mod.NAME, mod.detect, mod.build)


def build(path: "os.PathLike[str] | str") -> Page:
    """The :class:`Page` of ``path`` from the first source that recognises it."""
    _builtin()
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ScenarioFileError.at("PATH", f"{path}: no such file or directory")
    for src in SOURCES:
        if src.detect(path):
            return src.build(path)
    kinds = ", ".join(s.name for s in SOURCES)
    raise ScenarioError.at("PATH", f"{path} is not an output tcpf report knows ({kinds}): expected a run's "
                           "result JSON or `tcpf run --out` directory (result.json), a `tcpf sweep --out` "
                           "directory (sweep.json + results.parquet), a `tcpf evaluate --out` directory "
                           "(evaluation-*.json) or a `tcpf reproduce --out` directory (<paper>/results.json "
                           "+ REPRODUCTION.md)")


def render(path: "os.PathLike[str] | str", out: Optional[str] = None) -> str:
    """The report of ``path`` as one self-contained HTML document (a string)."""
    H.reset_ids()
    page = build(path)
    sections = [(s.anchor, s.heading, s.body) for s in page.sections]
    if page.commands:
        sections.append(("regenerate", "Regenerate",
                         "<p>These commands regenerate what this page shows and the page itself:</p>"
                         + H.pre("\n".join(page.commands), "cmd")))
    from ..version import __version__

    footer = f"tcpfriendly {__version__} · tcpf report ({page.kind or 'output'}) · self-contained: no scripts, no network"
    return H.page(page.title, page.subtitle, sections, footer)


def write(path: "os.PathLike[str] | str", out: Optional["os.PathLike[str] | str"] = None) -> str:
    """Write the report of ``path`` to ``out`` (default: ``report.html`` inside the directory,
    or beside the JSON file) and return the path written."""
    path = os.fspath(path)
    if out is None:
        base = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        out = os.path.join(base, "report.html")
    out = os.fspath(out)
    if os.path.isdir(out):
        raise ScenarioError.at("-o", f"{out} is a directory; give a file name such as {os.path.join(out, 'report.html')}")
    text = render(path)
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise ScenarioFileError.at("-o", f"{parent}: no such directory")
    # the one atomic writer: a temporary renamed over ``out``; a device, FIFO, socket or
    # symbolic link at ``out`` is refused, never replaced
    atomic_write(out, lambda f: f.write(text.encode("utf-8")), field="-o")
    return out
