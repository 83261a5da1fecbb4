"""`export_tcl`: an expanded scenario as a self-contained ns-2 2.35 Tcl script. The Tcl
measurement procedures it appends are `procs.tcl` (a package resource)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from typing import Any, Dict, List, Optional, Tuple

from .agents import RECOVERY, Ns2Unsupported, Setting, _agent_for, _rate_agent_for
from .check import _check, _group_label, _udp_packet_size
from .network import _DLink, _Net, _network, _prop_rtt, _queue_lines, _Route, _tfrc_min_rto
from .tcl import _num, _rng_seed, tcl_quote

# ns-2's one-way TCP adds a 40-byte TCP/IP header to every data packet
# (Agent/TCP tcpip_base_hdr_size_); the SYN is a bare 40-byte header.
TCP_HEADER_BYTES = 40


def engine_limits() -> Dict[str, int]:
    """The engine's resource limits and defaults (``tcpfriendly._core.limits()``, from
    ``config::Limits``): the window cap of a scenario without ``max_window`` and the default
    ``limits.access_queue``, which the exported script mirrors (one definition, in Rust)."""
    import json

    from ..scenario import native
    return json.loads(native().limits())
# Period of the Tcl sampler behind mean_cwnd, mean_rtt_s and mean_rto_s.  Sampling from
# Tcl is expensive in ns-2 (about 15 us per flow and sample), so keep it coarse;
# None switches it off (those fields are then null).
DEFAULT_SAMPLE_INTERVAL_S = 0.5


# Drops of rate-based flows' data are written here (ns-2's TFRC receiver does not expose its
# loss-event count; the exporter counts loss events from these drops, see _rate_loss_events).
DROP_TRACE_FILE = "drops.tr"


def _on_intervals(start: float, end: float, on: float, off: float, phase: float) -> List[Tuple[float, float]]:
    """The on periods of a square wave (on `on` s, off `off` s, `phase` s into the cycle at
    `start`) inside [start, end)."""
    period = on + off
    pos = phase % period if period > 0 else 0.0
    c = start - pos
    out = []
    while c < end:
        a, b = max(c, start), min(c + on, end)
        if b > a:
            out.append((a, b))
        c += period
    return out


def _engine_ns(s: float) -> int:
    """Seconds as the engine's clock holds them: integer nanoseconds, rounded to the nearest
    (``sim::secs``)."""
    return int(float(s) * 1e9 + 0.5)


def _step_times(start: float, end: float, steps: List[Any],
                repeat: Optional[float]) -> List[Tuple[int, float]]:
    """The instants (integer nanoseconds, as the engine computes them) at which a CBR with
    rate `steps` (``[seconds since the flow's start, bits/s]``, the first at 0) enters a step,
    up to and including `end`, each with the step's rate; with `repeat` the list starts over
    every `repeat` seconds."""
    t0, t_end = _engine_ns(start), _engine_ns(end)
    offsets = [(_engine_ns(t), float(r)) for t, r in steps]
    period = max(_engine_ns(repeat), 1) if repeat is not None else None
    out: List[Tuple[int, float]] = []
    base = t0
    while True:
        for off, rate in offsets:
            if base + off > t_end:
                return out
            out.append((base + off, rate))
        if period is None:
            return out
        base += period


def _step_rate(rate: float, size: int) -> float:
    """The `rate_` whose packet interval, ``size * 8 / rate_``, is the engine's: the
    interval at `rate` rounded to whole nanoseconds (at most half a nanosecond off the nominal
    rate's, e.g. 6 Mb/s with 1000-byte packets: 1333333 ns, rate_ 6000001.5)."""
    gap_ns = max(_engine_ns(size * 8.0 / rate), 1)
    return size * 8.0 * 1e9 / gap_ns


def _step_lines(fid: int, size: int, start: float, end: float, steps: List[Any],
                repeat: Optional[float]) -> List[str]:
    """Start, stop and rate_ events of a CBR with rate steps, as the engine runs it."""
    app = f"$app({fid})"
    shape = ", ".join(f"[{_num(t)}, {_num(r)}]" for t, r in steps)
    L = [f"# CBR rate steps {shape} (s since the flow's start, b/s)"
         + (f", repeated every {_num(repeat)} s" if repeat is not None else "") + ".",
         "# The engine sends a step's first packet at the step; the packet the previous rate had",
         "# due after it never goes. Application/Traffic/CBR reads rate_ only when it schedules",
         "# its next packet, so every step restarts it: stop half a nanosecond before the step",
         "# (which also cancels a packet ns-2's floating-point clock puts an instant before a",
         "# step the engine has it at), then set rate_ and start at the step (start sends at",
         "# once). A rate of 0 only stops. rate_ gives the engine's packet interval, which is",
         "# rounded to whole nanoseconds."]
    t_end = _engine_ns(end)
    prev = 0.0
    for t_ns, rate in _step_times(start, end, steps, repeat):
        t = t_ns / 1e9
        if prev > 0:
            before = (t_ns - 0.5) / 1e9
            if not before < t:
                before = math.nextafter(t, 0.0)
            L.append(f'$ns at {_num(before)} "{app} stop"')
        if rate > 0 and t_ns < t_end:
            L.append(f'$ns at {_num(t)} "{app} set rate_ {_num(_step_rate(rate, size))}; {app} start"')
        prev = rate
    return L


def _procs() -> str:
    """The Tcl measurement procedures (procs.tcl, shipped with the package)."""
    return resources.files(__package__).joinpath("procs.tcl").read_text(encoding="utf-8")


@dataclass
class _Ctx:
    """What every section of the script needs."""
    seed: int
    duration: float
    pkt: int
    hdr: int
    ack: int
    wnd: int
    access_queue: int
    max_window: Optional[float]
    tcpd: Dict[str, Any]
    net: _Net
    by_key: Dict[str, _DLink]
    has_rate: bool


def export_tcl(expanded: Dict[str, Any],
               sample_interval_s: Optional[float] = DEFAULT_SAMPLE_INTERVAL_S,
               series_interval_s: Optional[float] = None) -> str:
    """Return a complete ns-2 Tcl script for an expanded scenario.

    The script prints, at the end of the measurement window, one
    ``FLOW key=value ...`` line per flow, one ``LINK ...`` line per router link
    that carries data and one ``TOTAL delivered_pkts=...`` line.  With
    ``series_interval_s`` (the engine's ``timeseries``) it also prints, every that
    many seconds within the measurement window, one ``SERIES t=... id=... dlv=...
    cwnd=... ssthresh=...`` line per window-based or rate-based flow: the packets delivered
    (in order) over the interval ending at t, the usable window at t and ssthresh (``null``
    for a rate-based flow, and ssthresh before the flow's first window reduction), and one ``LSERIES t=... key=... bytes=... drops=... marks=... q=...`` line per monitored
    link (`run_ns2` turns them into the engine's time series).  With rate-based
    (TFRC) flows it also writes their drops to ``drops.tr`` in the working
    directory (see `run_ns2`).  Every string taken from the scenario goes through
    `tcl_quote`.
    """
    _check(expanded)
    duration = float(expanded["duration_s"])
    meas = expanded.get("measure") or {}
    m_from = float(meas.get("from_s", 0.0))
    m_to = float(meas.get("to_s", duration))
    if not 0.0 <= m_from < m_to <= duration:
        raise Ns2Unsupported(f"measure: window [{m_from}, {m_to}] is not inside [0, {duration}]")
    tcpd = expanded.get("tcp") or {}
    max_window = expanded.get("max_window")
    limits = engine_limits()
    given = (expanded.get("scenario") or {}).get("limits") or {}
    net = _network(expanded)
    flows = expanded["flows"]
    ctx = _Ctx(seed=int(expanded.get("seed", 1)), duration=duration, pkt=int(expanded["packet_size"]),
               hdr=int(tcpd.get("header_size", TCP_HEADER_BYTES)),
               ack=int(tcpd.get("ack_size", TCP_HEADER_BYTES)),
               wnd=int(max_window) if max_window is not None else int(limits["window"]),
               access_queue=int(given.get("access_queue", limits["access_queue"])),
               max_window=max_window, tcpd=tcpd, net=net, by_key={d.key: d for d in net.dlinks},
               has_rate=any(f.get("kind") == "rate" for f in flows))
    L = _header_lines(ctx, m_from, m_to, sample_interval_s, series_interval_s) + _network_lines(ctx)
    subject: Dict[str, List[int]] = {d.key: [] for d in net.dlinks}  # fids under each loss model
    for i, f in enumerate(flows):
        L += _flow_lines(ctx, f, i, subject)
    L += _loss_lines(ctx, subject) + _rate_trace_lines(ctx, flows)
    L += ["\n" + _procs(),
          '$ns at 0.0 "accumulate"',
          f'$ns at {_num(m_from)} "measure_start"',
          *([f'$ns at {_num(series_interval_s)} "series 1"'] if series_interval_s else []),
          f'$ns at {_num(m_to)} "measure_end"',
          f'$ns at {_num(duration)} "{"series_finish; " if series_interval_s else ""}exit 0"',
          "$ns run"]
    return "\n".join(L) + "\n"


def _header_lines(ctx: _Ctx, m_from: float, m_to: float, sample_interval_s: Optional[float],
                  series_interval_s: Optional[float] = None) -> List[str]:
    # No SYN exchange: the engine starts sending data at the flow's start time with
    # cwnd = initial_window, which is ns-2's behaviour with syn_ false (SYNHDR 0).
    drop_trace = "[open " + DROP_TRACE_FILE + " w]" if ctx.has_rate else '""'
    return [
        "# Generated by tcpfriendly.ns2.export_tcl for ns-2 2.35 -- do not edit.",
        f"# seed={ctx.seed} duration={ctx.duration} measure=[{m_from}, {m_to}]",
        "set ns [new Simulator]",
        "global defaultRNG",
        f"$defaultRNG seed {_rng_seed(ctx.seed, 0)}",
        f"set PKT {ctx.pkt}",
        f"set HDR {ctx.hdr}",
        "set SYNHDR 0",
        f"set SAMPLE_DT {_num(sample_interval_s) if sample_interval_s else 0}",
        f"set MEASURE_FROM {_num(m_from)}",
        f"set MEASURE_TO {_num(m_to)}",
        f"set SERIES_DT {_num(series_interval_s) if series_interval_s else 0}",
        "set SERIES_NEXT 0",
        "set FLOWS {}",
        "set TCPFLOWS {}",
        "set RATEFLOWS {}",
        f"set DROPTRACE {drop_trace}",
        "",
    ]


def _network_lines(ctx: _Ctx) -> List[str]:
    """Routers, router links, their queues and the queue monitors."""
    net = ctx.net
    L = net.node_lines + net.link_lines
    for d in net.dlinks:
        L += _queue_lines(d, ctx.pkt)
    # monitors before the loss models, so the loss models sit in front of them
    L.append("set LINKS {}")
    for key in net.monitored:
        d = ctx.by_key[key]
        L += [f'set qmon({key}) [$ns monitor-queue {d.a} {d.b} ""]',
              f"set LINKRATE({key}) {_num(d.rate)}",
              f"set LACC({key},bytes) 0; set LACC({key},lastbytes) 0",
              f"set LSER({key},bytes) 0; set LSER({key},drops) 0; set LSER({key},marks) 0",
              f"lappend LINKS {key}"]
    L.append("")
    return L


def _flow_lines(ctx: _Ctx, f: Dict[str, Any], i: int, subject: Dict[str, List[int]]) -> List[str]:
    """One flow: its access links, agents and start/stop events; records in ``subject`` the
    loss models its packets pass."""
    L: List[str] = []
    a = L.append
    by_key, net = ctx.by_key, ctx.net
    fid = int(f["id"])
    where = _group_label(f, i)
    kind = f.get("kind", "tcp")
    fwd = f.get("direction", "forward") == "forward"
    route = net.routes[fid]
    near, far = route.first, route.last
    ref_rate = by_key[route.data[0]].rate
    acc_rate = _num(f.get("access_rate_bps") or 10 * float(ref_rate))
    start = float(f.get("start_s") or 0.0)
    stop = f.get("stop_s")
    for key, q in ((k, by_key[k].q) for k in by_key):
        loss = q.get("loss")
        if not loss:
            continue
        groups = loss.get("groups")
        if groups is not None and int(f.get("group", 0)) not in [int(g) for g in groups]:
            continue
        if key in route.data or (loss.get("include_acks") and key in route.acks):
            subject[key].append(fid + 1)
    a(f"# flow {fid} ({tcl_quote(where)}, {tcl_quote(f.get('algorithm', kind))}, "
      f"{'forward' if fwd else 'reverse'})")
    a(f"lappend FLOWS {fid}")
    a(f"set KIND({fid}) {kind}")
    a(f"set GROUP({fid}) {int(f.get('group', 0))}")
    a(f"set START({fid}) {_num(start)}")
    a(f"set STOP({fid}) {_num(stop) if stop is not None else -1}")
    a(f"set S({fid}) [$ns node]")
    a(f"set D({fid}) [$ns node]")
    a(f"$ns duplex-link $S({fid}) {near} {acc_rate} {_num(f.get('access_delay_s', 0.0))} DropTail")
    a(f"$ns duplex-link $D({fid}) {far} {acc_rate} {_num(f.get('receiver_delay_s', 0.0))} DropTail")
    for x, y in (("$S", near), ("$D", far)):
        a(f"$ns queue-limit {x}({fid}) {y} {ctx.access_queue}")
        a(f"$ns queue-limit {y} {x}({fid}) {ctx.access_queue}")
    if kind == "tcp":
        L += _tcp_lines(ctx, f, fid, where, start, stop)
    elif kind == "rate":
        L += _rate_lines(ctx, f, fid, where, route, start, stop)
    else:
        L += _udp_lines(ctx, f, fid, kind, where, start, stop)
    a("")
    return L


def _tcp_lines(ctx: _Ctx, f: Dict[str, Any], fid: int, where: str, start: float,
               stop: Optional[float]) -> List[str]:
    L: List[str] = []
    a = L.append
    pkt, hdr, ack, wnd, tcpd = ctx.pkt, ctx.hdr, ctx.ack, ctx.wnd, ctx.tcpd
    agent = _agent_for(f, where)
    sender, sink, delsink = RECOVERY[f.get("recovery", "sack")]
    sender = agent.sender or sender
    sink = agent.sink or sink
    delsink = agent.delack_sink or delsink
    a(f"set tcp({fid}) [new {sender}]")
    tv = f"$tcp({fid})"
    settings: List[Setting] = [
        ("fid_", fid + 1),
        ("packetSize_", pkt),
        ("window_", wnd),
        ("windowInit_", int(tcpd.get("initial_window", 2))),
        ("tcpTick_", tcpd.get("tick_s", 0.01)),
        ("minrto_", tcpd.get("min_rto_s", 0.2)),
        ("rtxcur_init_", tcpd.get("initial_rto_s", 3.0)),
        ("maxrto_", tcpd.get("max_rto_s", 60.0)),
        ("ecn_", 1 if f.get("ecn") else 0),
        ("numdupacks_", int(tcpd.get("dupthresh", 3))),
        ("tcpip_base_hdr_size_", hdr),
        ("singledup_", 1 if tcpd.get("limited_transmit", True) else 0),
        # the engine has no handshake: data from the start, cwnd = windowInit_
        ("syn_", "false"),
    ]
    # the engine never lets cwnd grow past max_window (or its default window cap, 2^20);
    # ns-2 does unless maxcwnd_ is set (it only uses min(cwnd_, window_) to send)
    settings.append(("maxcwnd_", wnd))
    if sender == "Agent/TCP/Newreno":
        # recovery "newreno" restarts the retransmission timer on every partial ACK (RFC
        # 6582's "slow but steady" variant, newreno_changes1_ 0); "newreno-impatient" on the
        # first only, as ns-2's default (newreno_changes1_ 1, "impatient")
        impatient = f.get("recovery") == "newreno-impatient"
        settings.append(("newreno_changes1_", 1 if impatient else 0))
    settings += agent.settings
    if tcpd.get("precise_reduce") is False:
        # ns-2 before 2006: the window is truncated to whole packets in a decrease (after the
        # agent's own settings, some of which set it true)
        settings.append(("precisionReduce_", "false"))
    for var, val in settings:
        a(f"{tv} set {var} {val if isinstance(val, str) else _num(val)}")
    if tcpd.get("delayed_ack"):
        a(f"set sink({fid}) [new {delsink}]")
        a(f"$sink({fid}) set interval_ {_num(tcpd.get('delack_timeout_s', 0.1))}")
    else:
        a(f"set sink({fid}) [new {sink}]")
    a(f"$sink({fid}) set packetSize_ {ack}")
    a(f"$ns attach-agent $S({fid}) {tv}")
    a(f"$ns attach-agent $D({fid}) $sink({fid})")
    a(f"$ns connect {tv} $sink({fid})")
    for cmd in agent.at_start:
        a(f'$ns at 0 "{tv} {cmd}"')
    a(f"lappend TCPFLOWS {fid}")
    a(f"set LOSSCTR({fid}) {agent.loss_counter}")
    a(f"set WND({fid}) {wnd}")
    a(f"set CWS({fid}) 0.0; set CWN({fid}) 0; set RTS({fid}) 0.0; set RTN({fid}) 0; set ROS({fid}) 0.0")
    a(f"foreach k {{sentbytes rexmitbytes sinkbytes}} {{ set ACC({fid},$k) 0; set ACC({fid},last$k) 0 }}")
    a(f"set SER({fid},pkts) 0")
    a(f"set app({fid}) [new Application/FTP]")
    a(f"$app({fid}) attach-agent {tv}")
    a(f'$ns at {_num(start)} "$app({fid}) start"')
    if stop is not None:
        a(f'$ns at {_num(stop)} "$app({fid}) stop"')
    return L


def _rate_lines(ctx: _Ctx, f: Dict[str, Any], fid: int, where: str, route: _Route, start: float,
                stop: Optional[float]) -> List[str]:
    L: List[str] = []
    a = L.append
    pkt, hdr, ack, tcpd, net = ctx.pkt, ctx.hdr, ctx.ack, ctx.tcpd, ctx.net
    agent = _rate_agent_for(f, where)
    tv = f"$tfrc({fid})"
    a(f"set tfrc({fid}) [new {agent.sender}]")
    prop = _prop_rtt(f, route, net, pkt, hdr, ack)
    settings = [
        ("fid_", fid + 1),
        ("packetSize_", pkt),
        # data packets are packetSize_ + headersize_ on the wire (useHeaders_)
        ("headersize_", hdr),
        # ticks of the TCP-style RTO estimate used as t_RTO in the equation
        ("tcp_tick_", tcpd.get("tick_s", 0.01)),
        ("minrto_", _tfrc_min_rto(prop, agent)),
        ("ecn_", 1 if f.get("ecn") else 0),
    ] + agent.settings
    for var, val in settings:
        a(f"{tv} set {var} {val if isinstance(val, str) else _num(val)}")
    a(f"set sink({fid}) [new {agent.sink}]")
    for var, val in [("packetSize_", ack)] + agent.sink_settings:
        a(f"$sink({fid}) set {var} {val if isinstance(val, str) else _num(val)}")
    a(f"$ns attach-agent $S({fid}) {tv}")
    a(f"$ns attach-agent $D({fid}) $sink({fid})")
    a(f"$ns connect {tv} $sink({fid})")
    a(f"lappend RATEFLOWS {fid}")
    a(f"set ACC({fid},sinkbytes) 0; set ACC({fid},lastsinkbytes) 0")
    a(f"set SER({fid},pkts) 0")
    a(f'$ns at {_num(start)} "{tv} start"')
    if stop is not None:
        a(f'$ns at {_num(stop)} "{tv} stop"')
    return L


def _udp_lines(ctx: _Ctx, f: Dict[str, Any], fid: int, kind: str, where: str, start: float,
               stop: Optional[float]) -> List[str]:
    L: List[str] = []
    a = L.append
    seed, duration = ctx.seed, ctx.duration
    pkt = _udp_packet_size(f, ctx.pkt)
    a(f"set udp({fid}) [new Agent/UDP]")
    a(f"$udp({fid}) set fid_ {fid + 1}")
    a(f"$udp({fid}) set packetSize_ {pkt}")
    a(f"set sink({fid}) [new Agent/LossMonitor]")
    a(f"$ns attach-agent $S({fid}) $udp({fid})")
    a(f"$ns attach-agent $D({fid}) $sink({fid})")
    a(f"$ns connect $udp({fid}) $sink({fid})")
    end = float(stop) if stop is not None else duration
    if kind == "pareto":
        pa = f["pareto"]
        # Application/Traffic/Pareto: bursts of int(Pareto(burst_time_/interval) + .5)
        # packets at rate_, idle times Pareto with mean idle_time_ (tools/pareto.cc);
        # its own random stream
        a(f"set app({fid}) [new Application/Traffic/Pareto]")
        a(f"$app({fid}) attach-agent $udp({fid})")
        a(f"$app({fid}) set packetSize_ {pkt}")
        a(f"$app({fid}) set rate_ {_num(pa['rate_bps'])}")
        a(f"$app({fid}) set burst_time_ {_num(pa['mean_on_s'])}")
        a(f"$app({fid}) set idle_time_ {_num(pa['mean_off_s'])}")
        a(f"$app({fid}) set shape_ {_num(pa['shape'])}")
        a(f"set prng({fid}) [new RNG]")
        a(f"$prng({fid}) seed {_rng_seed(seed, 1000 + fid)}")
        a(f"$app({fid}) use-rng $prng({fid})")
        a(f'$ns at {_num(start)} "$app({fid}) start"')
        if stop is not None:
            a(f'$ns at {_num(end)} "$app({fid}) stop"')
    else:
        cbr = f.get("cbr") or {}
        a(f"set app({fid}) [new Application/Traffic/CBR]")
        a(f"$app({fid}) attach-agent $udp({fid})")
        a(f"$app({fid}) set packetSize_ {pkt}")
        if cbr.get("steps") is None:
            a(f"$app({fid}) set rate_ {_num(cbr['rate_bps'])}")
        a(f"$app({fid}) set random_ 0")
        on, off = cbr.get("on_s"), cbr.get("off_s")
        if cbr.get("steps") is not None:
            L += _step_lines(fid, pkt, start, end, cbr["steps"], cbr.get("repeat_s"))
            if stop is not None:
                a(f'$ns at {_num(end)} "$app({fid}) stop"')
        elif on is None or off is None:
            a(f'$ns at {_num(start)} "$app({fid}) start"')
            if stop is not None:
                a(f'$ns at {_num(end)} "$app({fid}) stop"')
        else:
            on, off = float(on), float(off)
            if on <= 0 or off < 0 or on + off <= 0:
                raise Ns2Unsupported(f"{where}.cbr: on/off periods must be positive")
            for t0, t1 in _on_intervals(start, end, on, off, float(cbr.get("phase_s") or 0.0)):
                a(f'$ns at {_num(t0)} "$app({fid}) start"')
                a(f'$ns at {_num(t1)} "$app({fid}) stop"')
    return L


def _loss_lines(ctx: _Ctx, subject: Dict[str, List[int]]) -> List[str]:
    """The loss models in front of router queues, reached only by the flows they apply to."""
    L: List[str] = []
    a = L.append
    seed, has_rate = ctx.seed, ctx.has_rate
    # ---- loss models in front of router queues ----
    first = True
    for n, d in enumerate(ctx.net.dlinks):
        loss = d.q.get("loss")
        if not loss or not subject[d.key]:
            continue
        model = loss.get("model")
        if model == "bernoulli" and float(loss.get("p", 0.0)) <= 0.0:
            continue
        sfx = "" if first else f"_{d.key}"
        em, emod, rv, rng = f"em{sfx}", f"emod{sfx}", f"lossrv{sfx}", f"lossrng{sfx}"
        if model == "bernoulli":
            a(f"# Bernoulli loss: an ErrorModel in front of the {tcl_quote(d.name)} queue, reached only by")
            a("# the packets of the flows it applies to (classified by flow id), so the other")
            a("# flows' packets that share this link (e.g. reverse flows' ACKs) pass.")
            a(f"set {rng} [new RNG]")
            a(f"${rng} seed {_rng_seed(seed, 1 + n)}")
            a(f"set {rv} [new RandomVariable/Uniform]")
            a(f"${rv} set min_ 0.0")
            a(f"${rv} set max_ 1.0")
            a(f"${rv} use-rng ${rng}")
            a(f"set {em} [new ErrorModel]")
            a(f"${em} unit pkt")
            a(f"${em} set rate_ {_num(loss['p'])}")
            a(f"${em} ranvar ${rv}")
        elif loss.get("packets") is not None:
            npk = int(loss["packets"])
            a(f"# periodic loss: every {npk}th packet of the flows it applies to, in front of the")
            a(f"# {tcl_quote(d.name)} queue (ErrorModel/Periodic, packet mode: drops at counts N, 2N, ...)")
            a(f"set {em} [new ErrorModel/Periodic]")
            a(f"${em} unit pkt")
            a(f"${em} set period_ {npk}")
            a(f"${em} set offset_ {npk}")
            a(f"${em} set burstlen_ 0")
        else:
            iv = float(loss["interval"])
            a(f"# periodic loss: one packet every {iv:g} s, in front of the {tcl_quote(d.name)} queue")
            a("# (ErrorModel/Periodic, time mode: the first packet at or after offset_, then the")
            a("# first one more than period_ after the previous drop)")
            a(f"set {em} [new ErrorModel/Periodic]")
            a(f"${em} unit time")
            a(f"${em} set period_ {_num(iv)}")
            a(f"${em} set offset_ {_num(iv)}")
            a(f"${em} set burstlen_ 0")
        a(f"set {emod} [new ErrorModule Fid]")
        a(f"${emod} insert ${em}")
        for fidv in subject[d.key]:
            a(f"${emod} bind ${em} {fidv}")
        a(f"${emod} default pass")
        a(f"$ns lossmodel ${emod} {d.a} {d.b}")
        a("# random losses go to their own sink, not the queue monitor's drop count")
        if has_rate:
            a(f"set lt [$ns create-trace Drop $DROPTRACE {d.a} {d.b}]")
            a("$lt target [new Agent/Null]")
            a(f"${emod} drop-target $lt")
        else:
            a(f"${emod} drop-target [new Agent/Null]")
        a("")
        first = False
    return L


def _rate_trace_lines(ctx: _Ctx, flows: List[Dict[str, Any]]) -> List[str]:
    L: List[str] = []
    a = L.append
    net, by_key = ctx.net, ctx.by_key
    if ctx.has_rate:
        a("# queue drops on every router link rate-based flows cross, for their loss events")
        rate_links = sorted({k for f in flows if f.get("kind") == "rate" for k in net.routes[int(f["id"])].data},
                            key=lambda k: [d.key for d in net.dlinks].index(k))
        for k in rate_links:
            d = by_key[k]
            a(f"set dh [[$ns link {d.a} {d.b}] set drophead_]")
            a(f"set dt [$ns create-trace Drop $DROPTRACE {d.a} {d.b}]")
            a("$dt target [$dh target]")
            a("$dh target $dt")
        a("")
    return L
