"""Running an exported script with the installed `ns` binary and reading its output back into
the engine's result schema."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

from .export import DEFAULT_SAMPLE_INTERVAL_S, DROP_TRACE_FILE, TCP_HEADER_BYTES, export_tcl
from .check import _udp_packet_size
from .network import _network, _prop_rtt

def ns2_available(ns_binary: str = "ns") -> bool:
    """True when an ns-2 binary is on PATH (or at the given path)."""
    return shutil.which(ns_binary) is not None


# The sources that decide what an ns-2 run of a scenario simulates and reports: the exporter
# (script, agents, network, procedures) and the reading of ns-2's output.
_NS2_SOURCES = ("agents.py", "check.py", "export.py", "network.py", "procs.tcl", "run.py", "tcl.py")


@functools.lru_cache(maxsize=None)
def ns2_engine_id(ns_binary: str = "ns") -> str:
    """The identity of "ns-2 as this package drives it", for run caches (the counterpart of
    :func:`tcpfriendly.version.engine_id`): ``"ns2:<hex>"``, a hash of the ``ns`` binary's
    contents and of the exporter's sources. Another ns-2 build or another exporter is another
    id, so a cached ns-2 run is never reused across them. Raises FileNotFoundError when
    ``ns_binary`` is not found."""
    path = shutil.which(ns_binary)
    if path is None:
        raise FileNotFoundError(ns_binary)
    h = hashlib.sha256()
    with open(os.path.realpath(path), "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    here = os.path.dirname(os.path.abspath(__file__))
    for name in _NS2_SOURCES:
        with open(os.path.join(here, name), "rb") as fh:
            h.update(name.encode() + b"\0" + fh.read())
    return "ns2:" + h.hexdigest()[:16]


_KV = re.compile(r"(\w+)=(\S+)")


def _parse_value(v: str) -> Any:
    if v == "null":
        return None
    try:
        return int(v)
    except ValueError:
        return float(v)


def parse_output(stdout: str) -> Dict[str, Any]:
    """Parse the FLOW/LINK/TOTAL (and SERIES, LSERIES) lines printed by an exported script."""
    out: Dict[str, Any] = {"flows": [], "links": [], "total": {}, "series": [], "lseries": []}
    for line in stdout.splitlines():
        tag, _, rest = line.partition(" ")
        if tag not in ("FLOW", "LINK", "TOTAL", "SERIES", "LSERIES"):
            continue
        kv = {k: (v if k in ("kind", "name", "key") else _parse_value(v)) for k, v in _KV.findall(rest)}
        if tag == "SERIES":
            out["series"].append(kv)
        elif tag == "LSERIES":
            out["lseries"].append(kv)
        elif tag == "FLOW":
            out["flows"].append(kv)
        elif tag == "LINK":
            out["links"].append(kv)
        else:
            out["total"] = kv
    return out


def parse_drop_trace(text: str) -> Dict[int, List[Tuple[float, int]]]:
    """Drops per flow id from an ns-2 drop trace: fid - 1 -> [(time, size)]."""
    out: Dict[int, List[Tuple[float, int]]] = {}
    for line in text.splitlines():
        p = line.split()
        if len(p) < 8 or p[0] != "d":
            continue
        out.setdefault(int(p[7]) - 1, []).append((float(p[1]), int(p[5])))
    return out


def count_loss_events(times: List[float], rtt: float) -> int:
    """Loss events as RFC 5348 section 5.2 groups losses: a loss starts a new event when it is
    more than one RTT after the first loss of the current event."""
    n = 0
    first = None
    for t in sorted(times):
        if first is None or t - first > rtt:
            n += 1
            first = t
    return n


def path_rtts(expanded: Dict[str, Any], parsed: Dict[str, Any]) -> Dict[int, float]:
    """Flow id -> the flow's mean round-trip time in an ns-2 run: propagation and transmission
    along its route plus the mean wait in the queue of each monitored link on it, by Little's
    law the time-average number of waiting packets over the packets departing per second (a
    FIFO packet waits for the packets ahead of it, whatever their sizes). ns-2's own RTT
    samples are not readable from Tcl: srtt_ is smoothed and counted in TCP ticks (with a 0.1-s
    tick it reads 0.19 s where the packets take 0.12 s). On the engine's runs the same estimate
    is within 1 % of its per-ACK mean RTT (dumbbells with RED, DropTail, UDP cross traffic)."""
    net = _network(expanded)
    by_key = {d.key: d for d in net.dlinks}
    tcpd = expanded.get("tcp") or {}
    pkt = int(expanded["packet_size"])
    hdr = int(tcpd.get("header_size", TCP_HEADER_BYTES))
    ack = int(tcpd.get("ack_size", TCP_HEADER_BYTES))
    wait = {}
    for key in net.monitored:
        lk = next((x for x in parsed["links"] if x.get("name") == by_key[key].name), None)
        if lk is not None and lk.get("pkts"):
            # Little's law: (qint / window) waiting on average, pkts / window leaving per second
            wait[key] = lk["qint"] / lk["pkts"]
    rtts = {}
    for f in expanded["flows"]:
        route = net.routes[int(f["id"])]
        rtts[int(f["id"])] = (_prop_rtt(f, route, net, pkt, hdr, ack)
                              + sum(wait.get(k, 0.0) for k in route.data + route.acks))
    return rtts


def _rate_loss_events(expanded: Dict[str, Any], parsed: Dict[str, Any],
                      drops: Dict[int, List[Tuple[float, int]]], rtts: Dict[int, float]) -> Dict[int, Tuple[int, float]]:
    """ns-2's TFRC receiver does not expose its loss-event count, so count loss events from the
    drops of each rate-based flow's data packets inside the measurement window, grouped by the
    flow's mean RTT (:func:`path_rtts`). Returns flow id -> (loss events, the RTT used)."""
    meas = expanded.get("measure") or {}
    t0 = float(meas.get("from_s", 0.0))
    t1 = float(meas.get("to_s", expanded["duration_s"]))
    ack = int((expanded.get("tcp") or {}).get("ack_size", TCP_HEADER_BYTES))
    out = {}
    for f in expanded["flows"]:
        if f.get("kind") != "rate":
            continue
        fid = int(f["id"])
        times = [t for t, size in drops.get(fid, []) if size > ack and t0 <= t < t1]
        out[fid] = (count_loss_events(times, rtts[fid]), rtts[fid])
    return out


def _name_links(expanded: Dict[str, Any], parsed: Dict[str, Any]) -> None:
    """Give each parsed LINK line the engine's link name. The script prints the link's Tcl
    key (``fwd``, ``l0``, ...), never the scenario's name, so that no name reaches Tcl as
    anything but a comment; outputs of older scripts carry ``name=`` and are kept."""
    names = {d.key: d.name for d in _network(expanded).dlinks}
    for lk in parsed["links"]:
        if "name" not in lk and lk.get("key") in names:
            lk["name"] = names[lk["key"]]


def _results(expanded: Dict[str, Any], parsed: Dict[str, Any], wall_s: float,
             drops: Optional[Dict[int, List[Tuple[float, int]]]] = None) -> Dict[str, Any]:
    pkt = int(expanded["packet_size"])
    duration = float(expanded["duration_s"])
    meas = expanded.get("measure") or {}
    window = float(meas.get("to_s", duration)) - float(meas.get("from_s", 0.0))
    by_id = {int(f["id"]): f for f in expanded["flows"]}
    _name_links(expanded, parsed)
    rtts = path_rtts(expanded, parsed)
    rate_events = _rate_loss_events(expanded, parsed, drops or {}, rtts) \
        if any(r.get("kind") == "rate" for r in parsed["flows"]) else {}
    flows = []
    for r in parsed["flows"]:
        spec = by_id[int(r["id"])]
        sent, dlv = r["sent"], r["delivered"]
        size = _udp_packet_size(spec, pkt) if r["kind"] not in ("tcp", "rate") else pkt
        base = {
            "id": int(r["id"]), "group": int(r["group"]),
            "algorithm": spec.get("algorithm"), "params": spec.get("params") or {},
            # the TCP loss recovery, as the engine's result records it (None for others)
            "recovery": spec.get("recovery") if r["kind"] == "tcp" else None,
            "direction": spec.get("direction", "forward"), "start_s": spec.get("start_s"),
            "throughput_bps": sent * size * 8.0 / window,
            "goodput_bps": dlv * size * 8.0 / window,
            "packets_sent": sent, "packets_delivered": dlv,
        }
        if r["kind"] == "tcp":
            # `lossev` is the agent's own reduction counter (ncwndcuts1_, or ncwndcuts_
            # for TCP/Linux); older outputs only have ncwndcuts1
            loss_events = r.get("lossev", r.get("ncwndcuts1"))
            base.update({
                "retransmissions": r["rexmit"],
                "loss_events": loss_events, "timeouts": r["ntimeouts"],
                # ECN-echo responses (necnresponses_), the engine's ecn_reactions
                "ecn_reactions": r.get("necn"),
                "loss_event_rate": (loss_events / sent) if sent else None,
                # the packets' mean RTT (path_rtts; the engine's: the mean of its RTT samples) and
                # ns-2's own srtt_, sampled (tick-quantised, smoothed)
                "mean_rtt_s": rtts.get(int(r["id"])), "mean_srtt_s": r.get("mean_srtt"),
                "mean_cwnd": r.get("mean_cwnd"),
                # the RTO before backoff, sampled as mean_rtt_s (the engine's: the RTO in force
                # at each ACK, where a backoff has almost always ended)
                "mean_rto_s": r.get("mean_rto"),
            })
        elif r["kind"] == "rate":
            events, rtt = rate_events.get(int(r["id"]), (None, None))
            base.update({
                "retransmissions": 0, "loss_events": events,
                # the no-feedback timer's expirations are not visible from Tcl
                "timeouts": None,
                "loss_event_rate": (events / sent) if (sent and events is not None) else None,
                "mean_rtt_s": rtts.get(int(r["id"])), "mean_cwnd": None,
                "loss_event_rtt_s": rtt,
            })
        else:
            base["algorithm"] = spec.get("algorithm", "cbr")
            # a UDP source never retransmits nor times out (0, as the engine records it) and
            # has no loss events (None, as the engine records it)
            base.update({"retransmissions": 0, "loss_events": None, "timeouts": 0,
                         "loss_event_rate": None, "mean_rtt_s": None, "mean_cwnd": None})
        flows.append(base)
    links = []
    default_rate = float((expanded.get("bottleneck") or {}).get("rate_bps") or 0.0)
    for lk in parsed["links"]:
        rate = float(lk.get("rate") or default_rate)
        links.append({
            "name": lk["name"],
            "utilization": lk["bytes"] * 8.0 / (rate * window),
            "drops": lk["drops"], "marks": lk["marks"],
            "mean_queue_pkts": lk["qint"] / window,
            # packets that reached the link's queue and left it (QueueMonitor parrivals_,
            # pdepartures_; a loss model's drops happen before the queue, outside both, as
            # outside `drops`), and drops per arrival as the engine's drop_rate
            "arrivals": lk.get("arrivals"), "departures": lk.get("pkts"),
            "drop_rate": (lk["drops"] / lk["arrivals"]) if lk.get("arrivals") else None,
        })
    out = {"flows": flows, "links": links, "wall_s": wall_s,
           "ns2": {"delivered_packets": parsed["total"].get("delivered_pkts")}}
    step = (expanded.get("scenario") or {}).get("timeseries")
    if parsed.get("series") and step:
        # the engine's time-series shape (tcpfriendly.metrics.window_samples): the rate delivered
        # over each interval, from the in-order packets, and the window at its end
        rows = parsed["series"]
        out["timeseries"] = {"flows": {
            "time": [float(r["t"]) for r in rows], "flow": [int(r["id"]) for r in rows],
            "rate_bps": [r["dlv"] * pkt * 8.0 / float(step) for r in rows],
            "cwnd": [float("nan") if r["cwnd"] is None else float(r["cwnd"]) for r in rows],
            # (older outputs have no ssthresh: NaN, as before the first reduction)
            "ssthresh": [float("nan") if r.get("ssthresh") is None else float(r["ssthresh"]) for r in rows]}}
        # the links' series as the engine's (tcpfriendly.metrics: time, link, queue, utilisation,
        # drops, ECN marks): bytes that started on the wire per interval over the link's rate, the queue's
        # drops (ns-2's loss models sit in front of the monitor: their drops are not in them)
        names = {d.key: (d.name, float(d.rate)) for d in _network(expanded).dlinks}
        lrows = [r for r in parsed.get("lseries") or [] if r.get("key") in names]
        out["timeseries"]["links"] = {
            "time": [float(r["t"]) for r in lrows], "link": [names[r["key"]][0] for r in lrows],
            "queue_pkts": [float(r["q"]) for r in lrows],
            "utilization": [r["bytes"] * 8.0 / (names[r["key"]][1] * float(step)) for r in lrows],
            "drops": [int(r["drops"]) for r in lrows], "marks": [int(r["marks"]) for r in lrows]}
        out["scenario"] = expanded["scenario"]
    return out


def run_ns2(expanded: Dict[str, Any], ns_binary: str = "ns", workdir: Optional[str] = None,
            sample_interval_s: Optional[float] = DEFAULT_SAMPLE_INTERVAL_S,
            timeout_s: Optional[float] = None,
            series_interval_s: Optional[float] = None) -> Dict[str, Any]:
    """Export `expanded`, run it with ns-2 and return results in the engine's schema.

    `wall_s` is the wall time of the `ns` process alone.  Fields ns-2 cannot
    give are None.  With ``series_interval_s`` (the scenario's ``timeseries``) the result
    also has the engine's ``timeseries`` of the window- and rate-based flows (delivered rate, and window
    per interval in the measurement window) and ``scenario`` (the normalized scenario), so that
    the time-resolved metrics (rate and window CoVs) are computed as for the engine's runs.
    The script (and, with rate-based flows, its drop trace) is kept
    in `workdir` when one is given.
    """
    script = export_tcl(expanded, sample_interval_s=sample_interval_s,
                        series_interval_s=series_interval_s)
    tmp = None
    if workdir is None:
        tmp = tempfile.mkdtemp(prefix="tcpf-ns2-")
        workdir = tmp
    else:
        os.makedirs(workdir, exist_ok=True)
    try:
        path = os.path.join(workdir, "scenario.tcl")
        with open(path, "w") as fh:
            fh.write(script)
        t0 = time.perf_counter()
        proc = subprocess.run([ns_binary, path], cwd=workdir, capture_output=True, text=True,
                              timeout=timeout_s)
        wall = time.perf_counter() - t0
        parsed = parse_output(proc.stdout)
        if proc.returncode != 0 or not parsed["links"]:
            raise RuntimeError(f"ns-2 failed (exit {proc.returncode}) on {path}:\n"
                               f"{proc.stderr.strip()[-2000:]}")
        drops = None
        trace = os.path.join(workdir, DROP_TRACE_FILE)
        if os.path.exists(trace) and any(f.get("kind") == "rate" for f in expanded["flows"]):
            with open(trace) as fh:
                drops = parse_drop_trace(fh.read())
        return _results(expanded, parsed, wall, drops)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
