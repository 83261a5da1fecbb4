"""Report source for one run: a result JSON (``tcpf run --json``) or a ``tcpf run --out`` directory."""

from __future__ import annotations

import json
import os
import shlex
from typing import Any, Dict, List

from ..errors import ScenarioError
from . import html as H
from .core import Page, Section
from .toml_text import dumps

NAME = "run"
#: Per-flow rows shown before the table is cut (the CSV has them all).
MAX_FLOW_ROWS = 200


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
    from ..results import Result

    p = _json_path(path)
    try:
        with open(p, encoding="utf-8") as f:
            text = f.read()
        result = Result(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError.at("PATH", f"{p}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except UnicodeDecodeError:
        raise ScenarioError.at("PATH", f"{p}: not a UTF-8 text file") from None
    if not isinstance(result.raw, dict) or not isinstance(result.raw.get("flows"), list):
        raise ScenarioError.at("PATH", f"{p}: not a run result (no \"flows\" list)")
    return result


def group_table(result) -> str:
    from ..results import _fixed, _int

    groups = result.group_summary()
    if groups.empty:
        return "<p class=\"note\">no flows</p>"
    rows = []
    for _, r in groups.iterrows():
        rows.append([r["group"], r["algorithm"], r["params"], r["direction"], int(r["n_flows"]),
                     _fixed(r["goodput_bps_mean"] / 1e6, 3),
                     f"{_fixed(r['goodput_bps_min'] / 1e6, 3)}..{_fixed(r['goodput_bps_max'] / 1e6, 3)}",
                     _fixed(r["share"], 3), _fixed(r.get("jain"), 3), _fixed(r["loss_event_rate"], 5),
                     _fixed(r["mean_rtt_s"] * 1e3, 1), _fixed(r["mean_cwnd"], 1),
                     _int(r["retransmissions"]), _int(r["timeouts"])])
    return H.table(["group", "algorithm", "params (β = fraction removed)", "direction", "flows",
                    "goodput Mb/s (mean)", "min..max Mb/s", "share", "Jain", "loss-event rate",
                    "RTT ms", "cwnd pkts", "rtx", "RTOs"], rows, numeric_from=4,
                   caption="per flow group; share = group mean goodput / mean flow goodput in the same "
                           "direction (1 = fair); loss-event rate = loss events / packets sent (pooled)")


def link_table(result) -> str:
    from ..results import _fixed, _int, _percent

    links = result.links
    if links.empty:
        return ""
    rows = [[r.get("name"), _percent(r.get("utilization")), _int(r.get("drops")), _int(r.get("marks")),
             _fixed(r.get("mean_queue_pkts"), 1)] for _, r in links.iterrows()]
    return H.table(["link", "utilization", "drops", "marks", "mean queue pkts"], rows, caption="links")


def flow_table(result) -> str:
    flows = result.flows
    cols = [c for c in ("id", "group", "algorithm", "goodput_bps", "packets_sent", "retransmissions",
                        "loss_events", "timeouts", "loss_event_rate", "mean_rtt_s", "mean_cwnd")
            if c in flows.columns]
    rows = flows[cols].head(MAX_FLOW_ROWS).itertuples(index=False)
    note = (f"<p class=\"note\">first {MAX_FLOW_ROWS} of {len(flows)} flows (flows.csv has them all)</p>"
            if len(flows) > MAX_FLOW_ROWS else "")
    return H.details(f"every flow ({len(flows)})", H.table(cols, rows, numeric_from=3) + note)


def figures(result, kinds=None) -> str:
    from .. import plot

    out = []
    captions = {
        "goodput": "Per-flow goodput over the measurement window; dashed: each group's mean; Jain's index per group and over all flows.",
        "cwnd": "Congestion window vs time; markers: window reductions from the loss log (loss_log = true).",
        "rate": f"Delivered rate (goodput) averaged in {plot.DEFAULT_BIN_S:g} s bins (jin2001's time scale); dotted: the fair share.",
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
    from ..results import _link_label, _num

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
    commands = ["# save the scenario above as scenario.toml, then:",
                f"tcpf run scenario.toml --out {q(run_dir)}",
                f"tcpf report {q(run_dir)} -o report.html"]
    return Page(title="tcpf run: " + (os.path.basename(os.path.abspath(run_dir)) or "result"),
                subtitle=", ".join(sub), sections=sections, commands=commands, kind=NAME)
