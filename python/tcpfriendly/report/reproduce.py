"""Report source for a ``tcpf reproduce --out`` directory: ``DIR/<paper>/results.json`` (one
entry per experiment, :meth:`tcpfriendly.reproduce.ExperimentResult.to_json`),
``REPRODUCTION.md`` (the command and the paper's wall time) and ``<paper>-<experiment>.svg``.
PATH may be the ``--out`` directory (every paper in it, as ``tcpf reproduce all`` writes), one
paper's directory, or its ``results.json``.

Per paper: claims matched / total, the mode and wall time, a table of the experiments; per
experiment: the paper-vs-ours table (claim, where, paper, ours, difference, rule, ✓ matched /
✗ differs and the hypothesis for each difference), the figure inlined, the assumptions and the
paper's words. The notebook display of reproduction results (:func:`experiment_display`,
:func:`reproduction_display`: the ``_repr_html_`` of an ``ExperimentResult`` and of what
``tcpfriendly.reproduce.reproduce`` returns) uses the same builders on the same JSON."""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import ScenarioError, json_brief
from . import html as H
from .page import Page, Section

NAME = "reproduce"
#: SVG figures larger than this are linked by name instead of inlined.
MAX_SVG_BYTES = 2_000_000
#: The verdict cells: a symbol and the word (the word is what ``tcpf reproduce`` prints).
MATCHED = "✓ matched"
DIFFERS = "✗ differs"
NOT_RUN = "○ not run"   # in ns-2: a claim built on runs or metrics it cannot give


def _ns2(exps: Sequence[Dict[str, Any]]) -> bool:
    return any(e.get("simulator") == "ns2" for e in exps)


# ----- finding the files ------------------------------------------------------------------------
def _is_paper_dir(d: str) -> bool:
    return os.path.isfile(os.path.join(d, "results.json")) and os.path.isfile(os.path.join(d, "REPRODUCTION.md"))


def paper_dirs(path: str) -> List[str]:
    """The paper directories PATH holds: itself (a paper's directory, or its results.json), or
    its subdirectories (an ``--out`` directory)."""
    if os.path.isfile(path):
        d = os.path.dirname(os.path.abspath(path))
        return [d] if os.path.basename(path) == "results.json" and _is_paper_dir(d) else []
    if not os.path.isdir(path):
        return []
    if _is_paper_dir(path):
        return [path]
    from ..reproduce.spec import PAPERS

    found = [d for d in sorted(glob.glob(os.path.join(glob.escape(path), "*", ""))) if _is_paper_dir(d)]
    rank = {p: i for i, p in enumerate(PAPERS)}
    found.sort(key=lambda d: (rank.get(os.path.basename(os.path.normpath(d)), len(rank)), d))
    return [os.path.normpath(d) for d in found]


def detect(path: str) -> bool:
    return bool(paper_dirs(path))


def _load(d: str) -> List[Dict[str, Any]]:
    """``d/results.json`` through the one bounded reader of input files, checked to be what
    ``tcpf reproduce --out`` writes (a hand-edited file fails here, in one line naming the
    file and the entry, not inside the page's code): a list of experiments, each with a
    ``paper`` and ``experiment`` name (no path separator: they name the figure beside it), a
    list of claim objects, and ``runs`` and ``assumptions`` objects (or none)."""
    from ..results import MAX_RESULT_BYTES
    from ..scenario import read_bounded

    p = os.path.join(d, "results.json")
    try:
        data = json.loads(read_bounded(p, "reproduction results.json", "PATH", MAX_RESULT_BYTES).decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ScenarioError.at("PATH", f"{p}: not a readable reproduction results.json ({exc})") from None
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise ScenarioError.at("PATH", f"{p}: expected a list of experiments (tcpf reproduce --out writes one)")
    for i, exp in enumerate(data):
        def bad(what: str) -> ScenarioError:
            return ScenarioError.at("PATH", f"{p}: [{i}].{what}")

        for key in ("paper", "experiment"):
            v = exp.get(key)
            if not isinstance(v, str) or not v or "/" in v or "\\" in v or v in (".", ".."):
                raise bad(f"{key} must be a name, got {json_brief(v)}")
        claims = exp.get("claims", [])
        if not isinstance(claims, list) or not all(isinstance(c, dict) for c in claims):
            raise bad("claims must be a list of objects")
        for key in ("runs", "assumptions"):
            if exp.get(key) is not None and not isinstance(exp[key], dict):
                raise bad(f"{key} must be an object, got {json_brief(exp[key])}")
    return data


_COMMAND = re.compile(r"^Command: `(.+)`\s*$", re.M)
_WALL = re.compile(r"wall time ([0-9.]+) s on this machine")


def _recorded(d: str) -> Tuple[Optional[str], Optional[float]]:
    """The command and the paper's wall time REPRODUCTION.md records (None when it does not)."""
    try:
        with open(os.path.join(d, "REPRODUCTION.md"), encoding="utf-8") as f:
            head = f.read(20_000)
    except (OSError, UnicodeDecodeError):
        return None, None
    cmd = _COMMAND.search(head)
    wall = _WALL.search(head)
    return (cmd.group(1) if cmd else None), (float(wall.group(1)) if wall else None)


# ----- the HTML, shared with the notebook display -----------------------------------------------
def _value(v: Any, unit: str = "") -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v is None:
        return "n/a"
    if isinstance(v, float):
        text = f"{v:.4g}"
    elif isinstance(v, dict):
        if not v:
            return "curve (empty)"
        keys = list(v)
        return f"curve, {len(v)} points ({keys[0]} … {keys[-1]})" if len(v) > 1 else f"curve ({keys[0]}: {v[keys[0]]})"
    elif isinstance(v, list):
        text = "[" + ", ".join(_value(x) for x in v[:8]) + (", …" if len(v) > 8 else "") + "]"
    else:
        text = str(v)
    return f"{text} {unit}" if unit else text


def _reason(c: Dict[str, Any]) -> str:
    """The hypothesis of a difference: the verdict's text after ``differs:``."""
    if c.get("matched"):
        return ""
    if c.get("unavailable") is not None:
        return str(c["unavailable"])
    verdict = str(c.get("verdict") or "")
    if not verdict.startswith("differs:") and verdict.startswith("differs"):
        return ""   # "differs in ns-2": the recorded hypotheses are about tcpfriendly's runs
    return verdict.split(":", 1)[1].strip() if ":" in verdict else verdict


def claims_table(exp: Dict[str, Any]) -> str:
    """The paper-vs-ours table of one experiment (its JSON)."""
    head = ["claim", "where", "paper", "ours", "difference", "rule", "verdict", "why it differs (hypothesis)"]
    rows = []
    for c in exp.get("claims") or []:
        ok = bool(c.get("matched"))
        off = c.get("unavailable") is not None
        unit = str(c.get("unit") or "")
        cells = [c.get("claim", ""), c.get("where", ""), _value(c.get("paper_value"), unit),
                 _value(c.get("our_value")), c.get("difference") or "", c.get("rule_text", "")]
        tds = "".join((f'<td class="num">{H.esc(x)}</td>' if 2 <= i <= 4 else f"<td>{H.esc(x)}</td>")
                      for i, x in enumerate(cells))
        tds += (f'<td class="verdict">{MATCHED if ok else NOT_RUN if off else DIFFERS}</td>'
                f'<td>{H.esc(_reason(c))}</td>')
        rows.append(f'<tr class="{"matched" if ok else "not-run" if off else "differs"}">{tds}</tr>')
    n, m = len(exp.get("claims") or []), sum(1 for c in exp.get("claims") or [] if c.get("matched"))
    cap = f"paper vs ours: {m} of {n} claims matched (rules written before comparing, never widened)"
    return ('<div class="tw"><table class="claims">'
            f"<caption>{H.esc(cap)}</caption><thead><tr>"
            + "".join(f"<th>{H.esc(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")


def _about(exp: Dict[str, Any]) -> str:
    bits = [f"Source: {exp.get('source', '?')}", f"kind: {exp.get('kind', '?')}"]
    if exp.get("simulator") == "ns2":
        bits.append("simulated in ns-2 2.35 (--simulator ns2): \"ours\" is ns-2's value")
    if exp.get("seeds"):
        bits.append(f"{exp['seeds']} seed{'s' if exp['seeds'] != 1 else ''} per point")
    runs = exp.get("runs") or {}
    if runs:
        bits.append(f"runs: {runs.get('total', 0)} ({runs.get('cached', 0)} cached)")
    if exp.get("wall_s") is not None:
        bits.append(f"wall time {exp['wall_s']} s")
    if exp.get("quick"):
        bits.append("--quick: fewer seeds, shorter runs; indicative only")
    return "<p>" + H.esc("; ".join(bits)) + ".</p>"


def _quotes(exp: Dict[str, Any]) -> str:
    seen, items = set(), []
    for c in exp.get("claims") or []:
        key = (c.get("where"), c.get("quote"))
        if c.get("quote") and key not in seen:
            seen.add(key)
            items.append(f"<li>{H.esc(c.get('where', ''))}: “{H.esc(c['quote'])}”</li>")
    return H.details(f"where the paper says it ({len(items)})", f"<ul>{''.join(items)}</ul>") if items else ""


def _assumptions(exp: Dict[str, Any]) -> str:
    rows = [[k, json.dumps(a.get("value"), ensure_ascii=False), a.get("source", ""), a.get("doc", "")]
            for k, a in (exp.get("assumptions") or {}).items() if isinstance(a, dict)]
    if not rows:
        return ""
    return H.details(f"assumptions the paper leaves out ({len(rows)})",
                     H.table(["name", "value", "source", "meaning"], rows, numeric_from=9))


def experiment_html(exp: Dict[str, Any], figure: str = "", heading: str = "h3", anchor: bool = True) -> str:
    """One experiment (its JSON): what it is, the paper-vs-ours table, ``figure`` (HTML, e.g.
    :func:`tcpfriendly.report.html.figure`), the paper's words, the assumptions. ``anchor``:
    give the heading the id :func:`summary_html` links to (one per page)."""
    ident = f' id="{H.esc(exp.get("paper", ""))}-{H.esc(exp.get("experiment", ""))}"' if anchor else ""
    out = [f'<{heading}{ident}>{H.esc(exp.get("paper", ""))} {H.esc(exp.get("experiment", "?"))}: '
           f'{H.esc(exp.get("title", ""))}</{heading}>',
           _about(exp), claims_table(exp), figure, _quotes(exp), _assumptions(exp)]
    for block in exp.get("markdown") or []:
        out.append(H.details("the paper's table beside ours (Markdown)", H.pre(str(block))))
    return "".join(out)


def summary_html(exps: Sequence[Dict[str, Any]], wall_s: Optional[float] = None,
                 link: bool = True) -> str:
    """A paper's summary: claims matched / total, mode, wall time and one row per experiment."""
    n = sum(len(e.get("claims") or []) for e in exps)
    m = sum(1 for e in exps for c in e.get("claims") or [] if c.get("matched"))
    off = sum(1 for e in exps for c in e.get("claims") or [] if c.get("unavailable") is not None)
    quick = any(e.get("quick") for e in exps)
    if wall_s is None:
        walls = [e.get("wall_s") for e in exps if isinstance(e.get("wall_s"), (int, float))]
        wall = f"{sum(walls):.1f} s (sum of the experiments)" if walls else "not recorded"
    else:
        wall = f"{wall_s:.1f} s"
    text = (f"<p>Claims matched: <b>{m} of {n - off}</b>" + (f" ({off} not run)" if off else "")
            + f" in {len(exps)} experiment{'s' if len(exps) != 1 else ''}"
            + (" <b>run in ns-2 2.35</b> (their sweeps; a claim ns-2 cannot give is not run)" if _ns2(exps) else "")
            + "; "
            f"mode: {'<b>quick</b> (fewer seeds, shorter runs: not the published setup)' if quick else 'full'}; "
            f"wall time {H.esc(wall)}.</p>")
    rows = []
    for e in exps:
        k = sum(1 for c in e.get("claims") or [] if c.get("unavailable") is None)   # judged
        j = sum(1 for c in e.get("claims") or [] if c.get("matched"))
        verdict = NOT_RUN if k == 0 and e.get("claims") else MATCHED if j == k else DIFFERS
        name = H.esc(e.get("experiment", "?"))
        if link:
            name = f'<a href="#{H.esc(e.get("paper", ""))}-{name}">{name}</a>'
        rows.append(f"<tr><td>{name}</td><td>{H.esc(e.get('source', ''))}</td><td>{H.esc(e.get('kind', ''))}</td>"
                    f'<td class="num">{j} / {k}</td><td class="num">{H.esc(H.fmt(e.get("wall_s")))} s</td>'
                    f'<td class="verdict">{verdict}</td></tr>')
    table = ('<div class="tw"><table class="experiments"><thead><tr><th>experiment</th><th>source</th>'
             "<th>kind</th><th>claims matched</th><th>wall time</th><th>all matched?</th></tr></thead><tbody>"
             + "".join(rows) + "</tbody></table></div>")
    return text + table


def _figure(d: str, exp: Dict[str, Any]) -> str:
    name = f"{exp.get('paper')}-{exp.get('experiment')}.svg"
    p = os.path.join(d, name)
    if not os.path.isfile(p):
        return ""
    if os.path.getsize(p) > MAX_SVG_BYTES:
        return f'<p class="note">{H.esc(name)}: too large to inline, open it beside this page</p>'
    with open(p, encoding="utf-8") as f:
        return H.figure(f.read(), f"{name}: {exp.get('title', '')}")


def _command(paper: str, exps: Sequence[Dict[str, Any]], out: str) -> str:
    """The command when REPRODUCTION.md does not record it."""
    q = shlex.quote
    parts = ["tcpf", "reproduce", q(paper)]
    for e in exps:
        parts += ["--only", q(str(e.get("experiment")))]
    if any(e.get("quick") for e in exps):
        parts.append("--quick")
    if any(e.get("simulator") == "ns2" for e in exps):
        parts += ["--simulator", "ns2"]
    return " ".join(parts + ["--out", q(out)])


def build(path: str) -> Page:
    dirs = paper_dirs(path)
    sections: List[Section] = []
    commands: List[str] = []
    papers = []
    total_n = total_m = 0
    ns2 = False
    for d in dirs:
        exps = _load(d)
        ns2 = ns2 or _ns2(exps)
        paper = str(exps[0].get("paper")) if exps else os.path.basename(os.path.normpath(d))
        papers.append(paper)
        command, wall = _recorded(d)
        total_n += sum(len(e.get("claims") or []) for e in exps)
        total_m += sum(1 for e in exps for c in e.get("claims") or [] if c.get("matched"))
        body = [summary_html(exps, wall)]
        body += [experiment_html(e, _figure(d, e)) for e in exps]
        sections.append(Section(f"paper-{paper}", paper, "".join(body)))
        command = command or _command(paper, exps, os.path.dirname(os.path.normpath(d)) or ".")
        if command not in commands:
            commands.append(command)
    commands.append(f"tcpf report {shlex.quote(path)} -o report.html")
    title = "tcpf reproduce" + (" in ns-2" if ns2 else "") + ": " + ", ".join(papers)
    return Page(title=title, subtitle=f"{total_m} of {total_n} published claims matched; each experiment's "
                f"paper-vs-ours table, figure and assumptions", sections=sections, commands=commands, kind=NAME)


# ----- notebook display ---------------------------------------------------------------------------
def _display(r: Any, heading: str) -> str:
    from ..reproduce.report import experiment_figure
    from .notebook import figure_html

    fig = experiment_figure(r)
    return experiment_html(r.to_json(), figure_html(fig) if fig is not None else "", heading=heading, anchor=False)


def experiment_display(r: Any) -> str:
    """One reproduced experiment (:class:`tcpfriendly.reproduce.ExperimentResult`) as a notebook
    fragment: the paper-vs-ours table (✓ matched / ✗ differs, with the hypothesis for each
    difference) and the experiment's figure, as the report shows it."""
    from .notebook import CSS

    return "".join([CSS, '<div class="tcpf-nb">', _display(r, "h4"), "</div>"])


def reproduction_display(results: Sequence[Any]) -> str:
    """What :func:`tcpfriendly.reproduce.reproduce` returns, as a notebook fragment: per paper,
    claims matched / total and a row per experiment, then each experiment."""
    from .notebook import CSS

    by_paper: Dict[str, List[Any]] = {}
    for r in results:
        by_paper.setdefault(r.experiment.paper, []).append(r)
    parts = [CSS, '<div class="tcpf-nb">']
    if not by_paper:
        parts.append("<p>no experiment ran</p>")
    for paper, rs in by_paper.items():
        parts.append(f"<h3>{H.esc(paper)}</h3>" + summary_html([r.to_json() for r in rs], link=False))
        parts += [_display(r, "h4") for r in rs]
    parts.append("</div>")
    return "".join(parts)
