"""The network of an exported scenario: routers, directed router links with their queues,
and each flow's route (ns-2's static routing must follow the engine's path)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from .agents import Ns2RateAgent, Ns2Unsupported
from .check import _group_label
from .tcl import _bool, _num, tcl_quote

@dataclass
class _DLink:
    """One direction of a router link."""
    key: str          # Tcl array key
    name: str         # the engine's link name (results are matched by it)
    a: str            # Tcl node expressions
    b: str
    rate: float
    delay: float
    q: Dict[str, Any]  # queue, limit_pkts, red, ecn, loss
    where: str         # the scenario path, for messages


@dataclass
class _Route:
    first: str                 # Tcl node of the first router (the sender's side)
    last: str                  # the last router (the receiver's side)
    data: List[str]            # keys of the directed links the data cross
    acks: List[str]            # keys of those the ACKs/feedback cross (empty for UDP)


@dataclass
class _Net:
    node_lines: List[str]
    link_lines: List[str]      # links created (duplex or simplex)
    dlinks: List[_DLink]
    routes: Dict[int, _Route]  # by flow id
    monitored: List[str]       # keys of links reported in LINK lines


def _unique_shortest(adj: Dict[int, List[int]], a: int, b: int) -> Tuple[Optional[List[int]], int]:
    """The fewest-hop path a -> b and how many fewest-hop paths there are."""
    dist = {a: 0}
    count = {a: 1}
    prev: Dict[int, int] = {}
    frontier = [a]
    while frontier:
        nxt = []
        for u in frontier:
            for v in adj.get(u, []):
                if v not in dist:
                    dist[v] = dist[u] + 1
                    count[v] = count[u]
                    prev[v] = u
                    nxt.append(v)
                elif dist[v] == dist[u] + 1:
                    count[v] += count[u]
        frontier = nxt
    if b not in dist:
        return None, 0
    path = [b]
    while path[-1] != a:
        path.append(prev[path[-1]])
    return path[::-1], count[b]


def _network(expanded: Dict[str, Any]) -> _Net:
    flows = expanded["flows"]
    if not expanded.get("links"):
        bn = expanded["bottleneck"]
        qtype = "RED" if bn["queue"] == "red" else "DropTail"
        rev_q = dict(bn)
        rev_q["loss"] = None  # the engine's dumbbell has its loss model on the forward link only
        dl = [_DLink("fwd", "bottleneck", "$R1", "$R2", bn["rate_bps"], bn["delay_s"], bn, "bottleneck"),
              _DLink("rev", "bottleneck_reverse", "$R2", "$R1", bn["rate_bps"], bn["delay_s"], rev_q,
                     "bottleneck")]
        routes = {}
        for f in flows:
            fwd = f.get("direction", "forward") == "forward"
            udp = f.get("kind", "tcp") in ("cbr", "pareto")
            if fwd:
                routes[int(f["id"])] = _Route("$R1", "$R2", ["fwd"], [] if udp else ["rev"])
            else:
                routes[int(f["id"])] = _Route("$R2", "$R1", ["rev"], [] if udp else ["fwd"])
        monitored = ["fwd"]
        if any(f.get("direction", "forward") == "reverse" for f in flows):
            monitored.append("rev")
        return _Net(["set R1 [$ns node]", "set R2 [$ns node]"],
                    [f"$ns duplex-link $R1 $R2 {_num(bn['rate_bps'])} {_num(bn['delay_s'])} {qtype}"],
                    dl, routes, monitored)

    # a general topology: routers N(i), one or two directed links per [[links]] entry
    names = [n if isinstance(n, str) else n.get("name") for n in expanded.get("nodes") or []]
    for lk in expanded["links"]:
        for end in (lk["from"], lk["to"]):
            if end not in names:
                names.append(end)
    idx = {n: i for i, n in enumerate(names)}
    node_lines = [f"set N({i}) [$ns node] ;# {tcl_quote(n)}" for i, n in enumerate(names)]
    link_lines: List[str] = []
    dlinks: List[_DLink] = []
    edge: Dict[Tuple[int, int], str] = {}
    for i, lk in enumerate(expanded["links"]):
        a, b = idx[lk["from"]], idx[lk["to"]]
        rate, delay = lk["rate_bps"], lk["delay_s"]
        rv = lk.get("reverse")
        kind = "RED" if lk["queue"] == "red" else "DropTail"
        if rv and rv["queue"] == lk["queue"]:
            link_lines.append(f"$ns duplex-link $N({a}) $N({b}) {_num(rate)} {_num(delay)} {kind} ;# {tcl_quote(lk['name'])}")
        else:
            link_lines.append(f"$ns simplex-link $N({a}) $N({b}) {_num(rate)} {_num(delay)} {kind} ;# {tcl_quote(lk['name'])}")
            if rv:
                rkind = "RED" if rv["queue"] == "red" else "DropTail"
                link_lines.append(f"$ns simplex-link $N({b}) $N({a}) {_num(rate)} {_num(delay)} {rkind} "
                                  f";# {tcl_quote(lk['name'] + '_reverse')}")
        dlinks.append(_DLink(f"l{i}", lk["name"], f"$N({a})", f"$N({b})", rate, delay, lk, f"links[{i}]"))
        edge[(a, b)] = f"l{i}"
        if rv:
            dlinks.append(_DLink(f"l{i}r", f"{lk['name']}_reverse", f"$N({b})", f"$N({a})", rate, delay, rv,
                                 f"links[{i}].reverse"))
            edge[(b, a)] = f"l{i}r"
    adj: Dict[int, List[int]] = {}
    for (a, b) in edge:
        adj.setdefault(a, []).append(b)
    routes = {}
    for i, f in enumerate(flows):
        where = _group_label(f, i)
        path = [idx.get(n, -1) for n in f["path"]]
        if -1 in path:
            raise Ns2Unsupported(f"{where}.path: {f['path']!r} names an unknown router")
        udp = f.get("kind", "tcp") in ("cbr", "pareto")
        hops = []
        for label, p in (("data", path), ("ACK", path[::-1])):
            if label == "ACK" and udp:
                break
            keys = []
            for u, v in zip(p, p[1:]):
                if (u, v) not in edge:
                    raise Ns2Unsupported(f"{where}.path: no link from {names[u]!r} to {names[v]!r} for the "
                                         f"{label} packets")
                keys.append(edge[(u, v)])
            # ns-2's static routing sends packets along fewest-hop paths; the flow's path must be
            # the only one, or ns-2 might route it elsewhere
            best, n = _unique_shortest(adj, p[0], p[-1])
            if best != p or n != 1:
                raise Ns2Unsupported(
                    f"{where}.path: {' -> '.join(names[x] for x in p)} is not the only fewest-hop route "
                    f"for the {label} packets, so ns-2's static routing cannot be relied on to follow it")
            hops.append(keys)
        routes[int(f["id"])] = _Route(f"$N({path[0]})", f"$N({path[-1]})", hops[0], hops[1] if len(hops) > 1 else [])
    used = {k for r in routes.values() for k in r.data}
    monitored = [d.key for d in dlinks if d.key in used]
    return _Net(node_lines, link_lines, dlinks, routes, monitored)


def _queue_lines(d: _DLink, pkt: int) -> List[str]:
    q = d.q
    out = [f"$ns queue-limit {d.a} {d.b} {int(q['limit_pkts'])}"]
    if q["queue"] == "red":
        red = q["red"]
        max_p = float(red["max_p"])
        mean_pkt = int(red.get("mean_pkt_size") or pkt)
        out += [
            f"set q [[$ns link {d.a} {d.b}] queue] ;# {tcl_quote(d.name)}",
            "$q set bytes_ false",
            "$q set queue_in_bytes_ false",
            f"$q set mean_pktsize_ {mean_pkt}",
            f"$q set thresh_ {_num(red['min_th_pkts'])}",
            f"$q set maxthresh_ {_num(red['max_th_pkts'])}",
            f"$q set q_weight_ {_num(red['q_weight'])}",
            f"$q set linterm_ {_num(1.0 / max_p)}",
            f"$q set gentle_ {_bool(red.get('gentle', True))}",
            f"$q set wait_ {_bool(red.get('wait', True))}",
            f"$q set setbit_ {_bool(q.get('ecn', False))}",
            # ECN: mark an ECT packet only while RED's base probability is below mark_p_,
            # drop it otherwise (ns-2 default mark_p_ is 0.1)
            "$q set use_mark_p_ true",
        ]
        if red.get("mark_p") is not None:
            out.append(f"$q set mark_p_ {_num(red['mark_p'])}")
        out.append("$q set adaptive_ 0")
    return out


def _tfrc_min_rto(route_prop_rtt: float, agent: Ns2RateAgent) -> float:
    """Agent/TFRC puts a TCP-style RTO (srtt + 4 rttvar, at least minrto_) into the throughput
    equation where the engine (RFC 5348) puts t_rto_rtts x R. ns-2 cannot express a multiple of
    the RTT; a floor of t_rto_rtts x the flow's propagation RTT is the closest it gets (exact
    when queueing delay is negligible, and below the engine's value otherwise)."""
    return agent.t_rto_rtts * route_prop_rtt


def _prop_rtt(f: Dict[str, Any], route: _Route, net: _Net, pkt: int, hdr: int, ack: int) -> float:
    """Round-trip propagation plus transmission time of a flow, without queueing."""
    by_key = {d.key: d for d in net.dlinks}
    rtt = 2.0 * (float(f.get("access_delay_s") or 0.0) + float(f.get("receiver_delay_s") or 0.0))
    for k in route.data:
        rtt += by_key[k].delay + (pkt + hdr) * 8.0 / by_key[k].rate
    for k in route.acks:
        rtt += by_key[k].delay + ack * 8.0 / by_key[k].rate
    return rtt
