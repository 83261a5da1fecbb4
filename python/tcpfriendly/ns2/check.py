"""What the exporter understands: every set field of the expanded scenario must be mapped,
or it is refused by name (`Ns2Unsupported`) rather than silently dropped."""

from __future__ import annotations

import math
from typing import Any, Dict

from .agents import Ns2Unsupported, _agent_for, _rate_agent_for

def _group_label(flow: Dict[str, Any], index: int) -> str:
    return f"flows[{flow.get('group', index)}]"


def _udp_packet_size(flow: Dict[str, Any], default: int) -> int:
    """Bytes per datagram of a UDP flow of the expanded scenario: its group's own
    ``packet_size`` (under ``cbr`` / ``pareto``), else the scenario's (`default`)."""
    own = (flow.get(flow.get("kind")) or {}).get("packet_size")
    return int(own) if own is not None else default


# Fields of the expanded scenario this exporter understands.  Anything else that is set
# (not null/false/zero/empty) is refused by name rather than silently dropped: a new engine
# feature must be mapped here before a cross-check can claim to simulate it.
_QUEUE_KEYS = {"rate_bps", "delay_s", "queue", "limit_pkts", "bdp_pkts", "ecn", "red", "loss"}
_KNOWN = {
    "": {"seed", "duration_s", "measure", "packet_size", "max_window", "tcp", "bottleneck",
         "flows", "scenario", "name", "description", "nodes", "links"},
    "measure": {"from_s", "to_s"},
    "tcp": {"initial_window", "tick_s", "min_rto_s", "initial_rto_s", "max_rto_s", "max_backoff",
            "delayed_ack", "delack_timeout_s", "ack_size", "header_size", "dupthresh",
            "limited_transmit", "ns2_agent"},
    "bottleneck": _QUEUE_KEYS,
    "link": _QUEUE_KEYS | {"name", "from", "to", "reverse"},
    "bottleneck.red": {"min_th_pkts", "max_th_pkts", "q_weight", "max_p", "gentle", "wait",
                       "mark_p", "mean_pkt_size"},
    "bottleneck.loss": {"model", "p", "packets", "interval", "groups", "include_acks"},
    "flow": {"id", "group", "kind", "algorithm", "params", "recovery", "cbr", "pareto",
             "direction", "path", "access_delay_s", "receiver_delay_s", "access_rate_bps",
             "start_s", "stop_s", "ecn", "rtt_noise_s"},
    "flow.cbr": {"rate_bps", "on_s", "off_s", "phase_s", "steps", "repeat_s", "packet_size"},
    "flow.pareto": {"rate_bps", "mean_on_s", "mean_off_s", "shape", "packet_size"},
}

# Loss models of the engine that ns-2 cannot express here, with the reason.
UNSUPPORTED_LOSS_MODELS: Dict[str, str] = {
    "general_exponential": "ns-2 2.35 has no error model that drops one packet at instants with "
                           "general-exponential (shifted exponential / hyperexponential) gaps",
    "gilbert_elliott": "ns-2 2.35's two-state error models (ErrorModel/TwoStateMarkov, MultiState) "
                       "change state after drawn sojourn times, not with per-packet transition "
                       "probabilities as a Gilbert-Elliott chain does",
    "schedule": "ns-2 2.35 has no error model whose law changes at given times (a schedule of "
                "loss models)",
}


def _refuse_unknown(d: Any, known: str, where: str) -> None:
    if not isinstance(d, dict):
        return
    for k, v in d.items():
        if k in _KNOWN[known] or v is None or v is False or v == 0 or v == {} or v == []:
            continue
        path = f"{where}.{k}" if where else k
        raise Ns2Unsupported(f"{path}: {v!r} cannot be expressed by the ns-2 exporter "
                             "(tcpfriendly.ns2 has no mapping for it)")


def _check_queue(q: Dict[str, Any], where: str) -> None:
    _refuse_unknown(q.get("red"), "bottleneck.red", where + ".red")
    kind = q.get("queue")
    if kind not in ("droptail", "red"):
        raise Ns2Unsupported(f"{where}.queue: {kind!r} has no ns-2 equivalent here")
    if kind == "red" and not q.get("red"):
        raise Ns2Unsupported(f"{where}.red: missing RED parameters")
    loss = q.get("loss")
    if loss:
        model = loss.get("model")
        if model in UNSUPPORTED_LOSS_MODELS:
            raise Ns2Unsupported(f"{where}.loss.model: {model!r} has no ns-2 equivalent: "
                                 f"{UNSUPPORTED_LOSS_MODELS[model]}")
        if model not in ("bernoulli", "periodic"):
            raise Ns2Unsupported(f"{where}.loss.model: {model!r} has no ns-2 equivalent in this exporter "
                                 "(Bernoulli maps to ErrorModel, periodic to ErrorModel/Periodic)")
        _refuse_unknown(loss, "bottleneck.loss", where + ".loss")
        if model == "periodic" and (loss.get("packets") is None) == (loss.get("interval") is None):
            raise Ns2Unsupported(f"{where}.loss: periodic loss needs exactly one of packets or interval")


def _check_cbr(cbr: Dict[str, Any], where: str) -> None:
    """A CBR is a constant rate (with an optional square wave) or a list of rate steps (with
    an optional period), as the engine's validation leaves it."""
    steps, repeat = cbr.get("steps"), cbr.get("repeat_s")
    if steps is None:
        if repeat is not None:
            raise Ns2Unsupported(f"{where}.repeat: applies to steps only")
        if cbr.get("rate_bps") is None:
            raise Ns2Unsupported(f"{where}.rate: missing")
        return
    for k in ("rate_bps", "on_s", "off_s", "phase_s"):
        if cbr.get(k) is not None:
            raise Ns2Unsupported(f"{where}.steps: a CBR has either steps or a rate ({k} is set too)")
    ok = isinstance(steps, list) and len(steps) > 0
    last = None
    for s in steps if ok else []:
        if not (isinstance(s, (list, tuple)) and len(s) == 2
                and all(isinstance(x, (int, float)) and math.isfinite(x) for x in s)
                and s[1] >= 0 and (s[0] == 0 if last is None else s[0] > last)):
            ok = False
            break
        last = s[0]
    if not ok:
        raise Ns2Unsupported(f"{where}.steps: {steps!r} is not a list of [time, rate] pairs with "
                             "increasing times from 0 and rates >= 0")
    if repeat is not None and not (isinstance(repeat, (int, float)) and repeat > last):
        raise Ns2Unsupported(f"{where}.repeat: {repeat!r} must be longer than the last step's time ({last} s)")


def _check(expanded: Dict[str, Any]) -> None:
    _refuse_unknown(expanded, "", "")
    _refuse_unknown(expanded.get("measure"), "measure", "measure")
    _refuse_unknown(expanded.get("tcp"), "tcp", "tcp")
    graph = bool(expanded.get("links"))
    if graph:
        if expanded.get("bottleneck"):
            raise Ns2Unsupported("bottleneck: a scenario has either [bottleneck] or [[links]], not both")
        for i, lk in enumerate(expanded["links"]):
            _refuse_unknown(lk, "link", f"links[{i}]")
            _check_queue(lk, f"links[{i}]")
            if lk.get("reverse"):
                _refuse_unknown(lk["reverse"], "bottleneck", f"links[{i}].reverse")
                _check_queue(lk["reverse"], f"links[{i}].reverse")
    else:
        bn = expanded.get("bottleneck")
        if not bn:
            raise Ns2Unsupported("bottleneck: missing (the exporter needs [bottleneck] or [[links]])")
        _refuse_unknown(bn, "bottleneck", "bottleneck")
        _check_queue(bn, "bottleneck")
    mb = (expanded.get("tcp") or {}).get("max_backoff")
    if mb is not None and int(mb) != 64:
        raise Ns2Unsupported(f"tcp.max_backoff: {mb} cannot be set in ns-2 (fixed at 64, "
                             "and with rfc2988_ only the max_rto cap applies)")
    for i, f in enumerate(expanded["flows"]):
        where = _group_label(f, i)
        kind = f.get("kind", "tcp")
        if kind not in ("tcp", "rate", "cbr", "pareto"):
            raise Ns2Unsupported(f"{where}.algorithm: {f.get('algorithm', kind)!r} sources are not mapped "
                                 "to ns-2 by this exporter")
        if f.get("rtt_noise_s"):
            raise Ns2Unsupported(f"{where}.rtt_noise: {f['rtt_noise_s']!r} has no ns-2 equivalent (ns-2's "
                                 "agents cannot add noise to the RTT samples their controller sees)")
        if kind == "cbr":
            _check_cbr(f.get("cbr") or {}, where)
        _refuse_unknown(f, "flow", where)
        _refuse_unknown(f.get("cbr"), "flow.cbr", where + ".cbr")
        _refuse_unknown(f.get("pareto"), "flow.pareto", where + ".pareto")
        if kind == "tcp":
            _agent_for(f, where)  # raises Ns2Unsupported naming the element
        elif kind == "rate":
            _rate_agent_for(f, where)
        elif kind == "pareto":
            pa = f.get("pareto") or {}
            for k in ("rate_bps", "mean_on_s", "mean_off_s", "shape"):
                if pa.get(k) is None:
                    raise Ns2Unsupported(f"{where}.pareto.{k}: missing")
        if f.get("direction", "forward") not in ("forward", "reverse"):
            raise Ns2Unsupported(f"{where}.direction: {f.get('direction')!r} has no ns-2 equivalent")
        if graph and not f.get("path"):
            raise Ns2Unsupported(f"{where}.path: a flow in a general topology needs its resolved path")
        if not graph and f.get("path"):
            raise Ns2Unsupported(f"{where}.path: only with a general topology ([[links]])")
