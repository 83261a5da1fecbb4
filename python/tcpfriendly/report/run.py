"""Report source for one run: a result JSON (``tcpf run --json``) or a ``tcpf run --out`` directory."""

from __future__ import annotations

import os
import shlex
from typing import List

from ..errors import ScenarioError
from . import html as H
from .page import Page, Section
from .tables import flow_table, group_table, link_table
from ..toml_text import dumps

NAME = "run"


def _json_path(path: str) -> str:
    return os.path.join(path, "result.json") if os.path.isdir(path) else path


def detect(path: str) -> bool:
    p = _json_path(path)
    if not (os.path.isfile(p) and p.endswith(".json")):
        return False
    if os.path.isdir(path):
        return True
    with open(p, "rb") as f:
        head = f.read(4096)
    return b'"flows"' in head or b'"scenario"' in head or b'"version"' in head


def load(path: str):
    from ..results import MAX_RESULT_BYTES, Result, check_result_shape
    from ..scenario import read_json_text

    p = _json_path(path)
    text, raw = read_json_text(p, "run result", "PATH", MAX_RESULT_BYTES)
    check_result_shape(raw, p, "PATH")  # (read_json_text returns an object)
    return Result(text, raw=raw)


def figures(result, kinds=None) -> str:
    from .. import plot

    out = []
    rate_bin = plot.rate_bin(getattr(result, "raw", None) or {})
    captions = {
        "goodput": "Per-flow goodput over the measurement window; dashed: each group's mean; Jain's index per group and over all flows.",
        "cwnd": "Congestion window vs time; markers: window reductions from the loss log (loss_log = true).",
        "rate": f"Delivered rate (goodput) averaged in {rate_bin:g} s bins (jin2001's time scale: 0.2 s, or a multiple of a coarser sampling interval); dotted: the fair share.",
        "queue": "Queue length and drops per sampling interval for the bottleneck and the busiest links.",
        "rtt": "The senders' smoothed RTT (the RTO estimator; tcp.tick granularity).",
    }
    for kind in kinds or ["goodput", *[k for k in plot.available_kinds(result) if k != "goodput"]]:
        try:
            fig = plot.figure(result, kind)
        except ScenarioError as exc:
            out.append(f"<p class=\"note\">{H.esc(kind)}: {H.esc(exc.message)}</p>")
            continue
        out.append(H.figure(plot.svg_text(fig), captions.get(kind, "")))
    if not result.has_timeseries():
        out.append("<p class=\"note\">This run recorded no time series, so only the goodput figure is "
                   "shown: set <code>timeseries = 0.1</code> (and <code>loss_log = true</code>) in the "
                   "scenario, or run with <code>tcpf run FILE --plot DIR</code>, to see cwnd, rate, RTT "
                   "and queue over time.</p>")
    return "".join(out)


def scenario_text(result) -> str:
    return dumps(result.scenario)


def build(path: str) -> Page:
    from ..formatting import _link_label, _num

    result = load(path)
    sc = result.scenario
    sub: List[str] = []
    if "duration" in sc:
        sub.append(f"duration {_num(sc['duration'])} s")
    if "seed" in sc:
        sub.append(f"seed {sc['seed']}")
    m = sc.get("measure")
    if isinstance(m, dict) and "from" in m and "to" in m:
        sub.append(f"measured {_num(m['from'])}..{_num(m['to'])} s")
    if isinstance(sc.get("bottleneck"), dict):
        sub.append(f"bottleneck {_link_label(sc['bottleneck'])}")
    sub.append(f"{len(result.raw.get('flows', []))} flows")
    if result.version:
        sub.append(f"tcpfriendly {result.version}")
    sections = []
    warnings = result.raw.get("warnings") or []
    summary = "".join(f"<p class=\"warn\">warning: {H.esc(w)}</p>" for w in warnings)
    summary += group_table(result) + link_table(result) + flow_table(result)
    sections.append(Section("summary", "Summary", summary))
    sections.append(Section("figures", "Figures", figures(result)))
    sections.append(Section("scenario", "Scenario (normalised)",
                            "<p class=\"note\">Every default filled in; β is always the fraction of the window "
                            "<em>removed</em> on a loss event (a <code>keep</code> given in the file appears "
                            "here as <code>beta = 1 - keep</code>).</p>" + H.pre(scenario_text(result))))
    q = shlex.quote
    run_dir = path if os.path.isdir(path) else os.path.splitext(path)[0]
    classes = {n: (c or {}).get("class") for n, c in (result.raw.get("controllers") or {}).items()
               if isinstance(n, str)}
    ctl = "".join(f" --controller {q(f'{n}={c}')}" for n, c in classes.items() if isinstance(c, str))
    commands = ["# save the scenario above as scenario.toml, then:",
                f"tcpf run scenario.toml{ctl} --out {q(run_dir)}",
                f"tcpf report {q(run_dir)} -o report.html"]
    return Page(title="tcpf run: " + (os.path.basename(os.path.abspath(run_dir)) or "result"),
                subtitle=", ".join(sub), sections=sections, commands=commands, kind=NAME)
