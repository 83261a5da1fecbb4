"""Self-contained HTML reports: ``tcpf report PATH`` / :func:`write`.

One HTML file per report: inline CSS, figures as inline SVG, no script and nothing fetched from
a network, so it opens from disk anywhere. Built-in sources (:data:`SOURCES`):

- ``run``: a result JSON (``tcpf run --json``) or a ``tcpf run --out`` directory;
- ``sweep``: a ``tcpf sweep --out`` directory (aggregated: mean and 95% CI per point);
- ``evaluate``: a ``tcpf evaluate --out`` directory (grades, the numbers behind them, the
  paper's row, the figures it wrote);
- ``reproduce``: a ``tcpf reproduce --out`` directory, one paper's directory in it or its
  ``results.json`` (per paper: claims matched, per experiment the paper-vs-ours table with the
  hypothesis for each difference, the figure).

Other outputs plug in through :func:`register` (see :mod:`.core` and docs/see-it.md).
"""

from . import html
from .core import SOURCES, build, register, render, write
from .page import Page, Section, Source

__all__ = ["SOURCES", "Page", "Section", "Source", "build", "register", "render", "write", "html"]
