"""Report source for a ``tcpf evaluate --out`` directory (``evaluation-<alg>.json``, the figures
it wrote): per algorithm, the verdict row with the number behind each grade and tsao2007's
published row beside it (matched / differs), the thresholds, the other yardsticks, the figures
and the assumptions. Reads the files as ``evaluate/report.py`` writes them today; every field is
optional, so a newer layout degrades to fewer sections rather than an error (a richer layout can
replace this source with :func:`tcpfriendly.report.register`).

:func:`evaluation_html` is the notebook display of an :class:`~tcpfriendly.evaluate.Evaluation`
(its ``_repr_html_``): the same verdict table and thresholds, and its first figure."""

from __future__ import annotations

import glob
import json
import os
import shlex
from types import SimpleNamespace
from typing import Any, Dict, List, Mapping, Tuple

from ..errors import ScenarioError, json_brief
from ..results import MAX_RESULT_BYTES
from ..scenario import read_bounded, read_json_object
from . import html as H
from .page import Page, Section

NAME = "evaluate"
#: SVG figures larger than this are linked by name instead of inlined.
MAX_SVG_BYTES = 2_000_000
MAX_TABLE4_BYTES = 1024 * 1024  # table4.txt beside the evaluations (a few kB as written)
#: --only names of the experiment keys (evaluate/cli.py)
_ONLY = {"tsao2007/s1-nonperiodic": "s1", "tsao2007/s2-low-multiplexing": "s2", "tsao2007/s3-two-state": "s3",
         "tsao2007/s4-bursty": "s4", "jin2001/impulse-response": "jin2001", "sastry2005/trough": "sastry2005"}


def _files(path: str) -> List[str]:
    if os.path.isfile(path):
        return [path] if os.path.basename(path).startswith("evaluation-") and path.endswith(".json") else []
    return sorted(glob.glob(os.path.join(glob.escape(path), "evaluation-*.json")))


def detect(path: str) -> bool:
    return bool(_files(path))


def _grade_class(grade: str) -> str:
    return f"grade-{grade[:1]}" if grade and grade[:1] in "OΔX" else ""


def _verdicts(ev: Dict[str, Any]) -> str:
    from ..evaluate import grades as G
    from ..evaluate.report import _cell_number

    grades = ev.get("grades") or {}
    numbers = ev.get("numbers") or {}
    shim = SimpleNamespace(numbers=numbers)
    paper = G.PAPER_TABLE4.get(ev.get("algorithm"))
    head = "".join(f"<th>{H.esc(c)}</th>" for c in G.COLUMNS)
    ours = number = ref = match = ""
    n_match = n_total = 0
    for i, c in enumerate(G.COLUMNS):
        g = grades.get(c, "-")
        differs = paper is not None and c in grades and g != paper[i]
        ours += f'<td class="{_grade_class(g)}{" differs" if differs else ""}">{H.esc(g)}</td>'
        n = numbers.get(c) or {}
        extra = f" (compat. {H.fmt(n['compatibility'], 3)})" if isinstance(n.get("compatibility"), (int, float)) else ""
        number += f'<td class="num">{H.esc(_cell_number(shim, c))}{H.esc(extra)}</td>'
        if paper is not None:
            ref += f'<td class="{_grade_class(paper[i])}">{H.esc(paper[i])}</td>'
            if c in grades:
                n_total += 1
                n_match += g == paper[i]
                match += f"<td>{'matched' if g == paper[i] else 'differs'}</td>"
            else:
                match += "<td>-</td>"
    rows = [f"<tr><th>ours</th>{ours}</tr>", f"<tr><th>number</th>{number}</tr>"]
    if paper is not None:
        rows += [f"<tr><th>tsao2007 Table 4</th>{ref}</tr>", f"<tr><th>paper vs ours</th>{match}</tr>"]
    html = (f'<table class="verdicts"><caption>verdicts (O satisfactory, Δ acceptable, X unacceptable; '
            f'parentheses: TCP-compatibility). Number: X/TCP throughput ratio for S1-S2, X/TCP '
            f'convergence-time ratio for S3-S4.</caption><thead><tr><th></th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")
    if paper is not None:
        html += f"<p>Matching grades: <b>{n_match} of {n_total}</b> graded columns.</p>"
    rules = [[c, (numbers.get(c) or {}).get("rule", "")] for c in G.COLUMNS if (numbers.get(c) or {}).get("rule")]
    if rules:
        html += H.table(["column", "the number behind the grade"], rules, numeric_from=9)
    return html


def _thresholds(ev: Dict[str, Any]) -> str:
    from ..evaluate.report import thresholds_text

    th = ev.get("thresholds")
    try:
        return H.pre("\n".join(thresholds_text(th)))
    except (KeyError, TypeError):
        return H.pre(json.dumps(th, indent=1)) if th else ""


def _trim(v: Any, depth: int = 0) -> Any:
    """Metrics for display: long lists cut (the CSVs beside the JSON have them whole)."""
    if isinstance(v, dict):
        return {k: _trim(x, depth + 1) for k, x in v.items()}
    if isinstance(v, list):
        if len(v) > 12:
            return [_trim(x, depth + 1) for x in v[:12]] + [f"... {len(v) - 12} more"]
        return [_trim(x, depth + 1) for x in v]
    if isinstance(v, float):
        return float(f"{v:.6g}")
    return v


def _measures(ev: Dict[str, Any]) -> str:
    out = []
    for key, m in (ev.get("metrics") or {}).items():
        points = m.get("points") if isinstance(m, dict) else None
        if isinstance(points, list) and points and isinstance(points[0], dict):
            cols = list(points[0])
            out.append(f"<h3>{H.esc(key)}</h3>" + H.table(cols, [[p.get(c) for c in cols] for p in points[:100]],
                                                            numeric_from=0))
            rest = {k: v for k, v in m.items() if k != "points"}
        else:
            out.append(f"<h3>{H.esc(key)}</h3>")
            rest = m
        if rest:
            out.append(H.details("all numbers", H.pre(json.dumps(_trim(rest), indent=1, ensure_ascii=False))))
    return "".join(out)


def _figures(path: str, alg: str) -> str:
    directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    out = []
    for svg in sorted(glob.glob(os.path.join(glob.escape(directory), f"*-{glob.escape(alg)}.svg"))):
        name = os.path.basename(svg)
        if os.path.getsize(svg) > MAX_SVG_BYTES:
            out.append(f"<p class=\"note\">{H.esc(name)}: too large to inline, open it beside this page</p>")
            continue
        with open(svg, encoding="utf-8") as f:
            out.append(H.figure(f.read(), name))
    return "".join(out) or "<p class=\"note\">no figures in this directory</p>"


def _assumptions(ev: Dict[str, Any]) -> str:
    rows = []
    for exp, items in (ev.get("assumptions") or {}).items():
        if not isinstance(items, dict):
            continue
        for name, a in items.items():
            if isinstance(a, dict):
                rows.append([exp, name, json.dumps(a.get("value")), a.get("source", ""), a.get("doc", "")])
    if not rows:
        return ""
    return H.details(f"assumptions the papers leave out ({len(rows)})",
                     H.table(["experiment", "name", "value", "source", "meaning"], rows, numeric_from=9))


def _command(ev: Dict[str, Any], path: str) -> str:
    q = shlex.quote
    parts = ["tcpf", "evaluate", q(str(ev.get("algorithm")))]
    params = ev.get("params") or {}
    if params:
        parts += ["--params", q(",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()))]
    if ev.get("controller"):
        parts += ["--controller", q(ev["controller"])]
    if ev.get("quick"):
        parts.append("--quick")
    if ev.get("simulator") == "ns2":
        parts += ["--simulator", "ns2"]
    # the experiments asked for: those that ran and those the simulator could not run
    keys = list((ev.get("metrics") or {})) + [k for k in (ev.get("not_run") or {}) if k not in (ev.get("metrics") or {})]
    if keys and set(_ONLY) - set(keys):
        for k in keys:
            if k in _ONLY:
                parts += ["--only", _ONLY[k]]
    parts += ["--out", q(path if os.path.isdir(path) else os.path.dirname(path) or ".")]
    return " ".join(parts)


def _simulator_html(ev: Mapping[str, Any]) -> Tuple[str, str]:
    """What an ns-2 evaluation adds to its heading, and the list of the experiments ns-2 could
    not run with the reason of each ("" and "" for tcpfriendly's engine)."""
    if ev.get("simulator") != "ns2":
        return "", ""
    not_run = ev.get("not_run") or {}
    gone = ("<p>not run in ns-2 (no grades, numbers or figures):</p><ul>"
            + "".join(f"<li>{H.esc(k)}: {H.esc(why)}</li>" for k, why in not_run.items()) + "</ul>"
            if not_run else "")
    return " — simulated in <b>ns-2 2.35</b>", gone


def check_shape(ev: Mapping[str, Any], where: str) -> None:
    """Refuse an evaluation result (``evaluation-<alg>.json``) whose parts are not what ``tcpf
    evaluate`` writes, in one line naming the file and the entry (a hand-edited file otherwise
    fails inside the page's code): ``algorithm`` a string, ``params``, ``grades``, ``numbers``,
    ``metrics``, ``seeds``, ``assumptions`` and ``not_run`` objects (or absent), each grade a
    string, each entry of ``numbers`` an object, ``controller`` a string."""
    def bad(what: str) -> ScenarioError:
        return ScenarioError.at("PATH", f"{where}: {what}")

    if not isinstance(ev.get("algorithm"), str):
        raise bad(f"algorithm must be a string, got {json_brief(ev.get('algorithm'))}")
    for key in ("params", "grades", "numbers", "metrics", "seeds", "assumptions", "not_run"):
        if ev.get(key) is not None and not isinstance(ev[key], dict):
            raise bad(f"{key} must be an object, got {json_brief(ev[key])}")
    for col, grade in (ev.get("grades") or {}).items():
        if not isinstance(grade, str):
            raise bad(f"grades.{col} must be a string, got {json_brief(grade)}")
    for col, number in (ev.get("numbers") or {}).items():
        if number is not None and not isinstance(number, dict):
            raise bad(f"numbers.{col} must be an object, got {json_brief(number)}")
    if ev.get("controller") is not None and not isinstance(ev["controller"], str):
        raise bad(f"controller must be a string, got {json_brief(ev['controller'])}")


def build(path: str) -> Page:
    evs = []
    for p in _files(path):
        ev = read_json_object(p, "tcpf evaluate result", "PATH", MAX_RESULT_BYTES)
        check_shape(ev, p)
        evs.append(ev)
    sections = []
    commands = []
    for ev in evs:
        alg = str(ev.get("algorithm"))
        params = ", ".join(f"{k}={v}" for k, v in (ev.get("params") or {}).items()) or "defaults"
        where, gone = _simulator_html(ev)
        body = (f"<p>{H.esc(alg)} ({H.esc(params)}; β = fraction removed)" + where
                + (" — <b>--quick</b>: fewer seeds, shorter runs; indicative only" if ev.get("quick") else "")
                + f". Seeds per point: {H.esc(', '.join(f'{k} {v}' for k, v in (ev.get('seeds') or {}).items()))}; "
                f"wall time {H.esc(ev.get('wall_s', '-'))} s.</p>" + gone)
        body += _verdicts(ev) + "<h3>Thresholds</h3>" + _thresholds(ev)
        body += "<h3>Figures</h3>" + _figures(path, alg)
        body += "<h3>Measures</h3>" + _measures(ev) + _assumptions(ev)
        sections.append(Section(f"ev-{alg}", f"{alg}", body))
        commands.append(_command(ev, path))
    table4 = os.path.join(path, "table4.txt") if os.path.isdir(path) else ""
    if table4 and os.path.isfile(table4):
        # through the one bounded reader: `tcpf evaluate --all` writes a few kB
        text = read_bounded(table4, "Table 4 text", "PATH", MAX_TABLE4_BYTES).decode("utf-8", "replace")
        sections.insert(0, Section("table4", "Table 4 (ours / paper)", H.pre(text)))
    commands.append(f"tcpf report {shlex.quote(path)} -o report.html")
    title = "tcpf evaluate: " + ", ".join(str(e.get("algorithm")) for e in evs[:6]) + (" ..." if len(evs) > 6 else "")
    return Page(title=title, subtitle=f"{len(evs)} evaluation(s); tsao2007 verdicts, jin2001 and sastry2005 yardsticks",
                sections=sections, commands=commands, kind=NAME)


def evaluation_html(ev: Any) -> str:
    """An evaluation (:class:`tcpfriendly.evaluate.Evaluation`) as a notebook fragment: the
    verdict row with the number behind each grade and tsao2007's row beside it (as in the
    report), the thresholds, and the first figure (S1's throughput ratio when S1 ran)."""
    from ..evaluate.report import figures
    from .notebook import CSS, figure_html

    d = ev.to_json()
    params = ", ".join(f"{k}={v}" for k, v in (d.get("params") or {}).items()) or "defaults"
    head = (f"<b>tcpf evaluate {H.esc(d.get('algorithm'))}</b> ({H.esc(params)}; β = fraction removed)"
            + (" — <b>quick</b>: fewer seeds, shorter runs; indicative only" if d.get("quick") else "")
            + f"; wall time {H.esc(d.get('wall_s'))} s")
    where, gone = _simulator_html(d)
    head += where
    parts = [CSS, '<div class="tcpf-nb">', head, gone, _verdicts(d), H.details("thresholds", _thresholds(d))]
    first = next(iter(figures(ev)), None)
    if first is not None:
        parts.append(figure_html(first[1]))
    parts.append("</div>")
    return "".join(parts)
