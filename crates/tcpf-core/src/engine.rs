//! The simulation: links, endpoints and the event loop that joins them.

use crate::cc;
use crate::error::{show_bytes, FieldError, RunError};
pub use crate::config::{FlowKind, FlowSpec, SimConfig};
use crate::metrics::{FlowResult, LinkResult, LossLog, RunResult, TimeSeries};
use crate::net::topology::LinkSpec;
use crate::net::{Ext, Link, LinkStats, LossModel, Packet, PacketKind, Pipes, Wire, MAX_ROUTE_LINKS};
use crate::sim::{to_secs, EventQueue, Rng, Time};
use crate::transport::tcp::TcpStats;
use crate::registry;
use crate::transport::rate::{Feedback, RateReceiver, RateSender};
use crate::transport::tcp::{LossKind, LossRecord};
use std::collections::VecDeque;
use crate::transport::{Recovery, TcpSender, TcpSink, UdpSource};
use crate::trace::{FlowInfo, LinkInfo, TraceSpec, Tracer};

/// Builds controllers the registry does not know (e.g. Python classes).
pub trait ControllerFactory {
    /// The controller of flow `flow`, running algorithm `name` with the parameters as given.
    fn build(&self, name: &str, params: &serde_json::Value, flow: u32, initial_window: f64, max_window: f64) -> Result<Box<dyn cc::Controller>, String>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    /// The packet in pipe entry `entry` (as `Link::pipe_push` numbers them) reaches the end of
    /// link `link`.
    LinkArrival { link: u32, entry: u32 },
    Rto(u32),
    DelAck(u32),
    Start(u32),
    Stop(u32),
    Udp(u32),
    /// Rate-based flows: a packet is due, the sender's timer, the receiver's timer.
    Pace(u32),
    RateSnd(u32),
    RateRcv(u32),
    Sample,
    /// Snapshot the counters: 0 at the start of the measurement window, 1 at its end.
    Measure(u32),
}

/// The most links a topology may have: an event names a link in [`LINK_BITS`] bits.
const LINK_BITS: u32 = 28;
const MAX_LINKS: usize = 1 << LINK_BITS;

/// An [`Ev`] as the event queue keeps it, in one 64-bit word (an entry is then 24 bytes): the
/// kind in the top four bits, a link (bits 32 to 59) and a number (bits 0 to 31: an entry, a
/// flow, a measurement). A link arrival names its pipe entry as well as its link, so the
/// engine reads the entry without waiting for the link's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Packed(u64);

impl Ev {
    #[inline(always)]
    fn pack(self) -> Packed {
        let (kind, link, n) = match self {
            Ev::LinkArrival { link, entry } => (0, link, entry),
            Ev::Rto(f) => (1, 0, f),
            Ev::DelAck(f) => (2, 0, f),
            Ev::Start(f) => (3, 0, f),
            Ev::Stop(f) => (4, 0, f),
            Ev::Udp(f) => (5, 0, f),
            Ev::Pace(f) => (6, 0, f),
            Ev::RateSnd(f) => (7, 0, f),
            Ev::RateRcv(f) => (8, 0, f),
            Ev::Sample => (9, 0, 0),
            Ev::Measure(i) => (10, 0, i),
        };
        debug_assert!((link as usize) < MAX_LINKS);
        Packed((kind << 60) | (link as u64) << 32 | n as u64)
    }
}

impl Packed {
    /// (link, entry) if a link arrival: the run loop's test, without decoding the other kinds.
    #[inline(always)]
    fn link_arrival(self) -> Option<(u32, u32)> {
        // (kind 0: the bits above the link are zero)
        (self.0 >> 60 == 0).then_some(((self.0 >> 32) as u32, self.0 as u32))
    }

    #[inline(always)]
    fn get(self) -> Ev {
        if let Some((link, entry)) = self.link_arrival() {
            return Ev::LinkArrival { link, entry };
        }
        let n = self.0 as u32;
        match self.0 >> 60 {
            1 => Ev::Rto(n),
            2 => Ev::DelAck(n),
            3 => Ev::Start(n),
            4 => Ev::Stop(n),
            5 => Ev::Udp(n),
            6 => Ev::Pace(n),
            7 => Ev::RateSnd(n),
            8 => Ev::RateRcv(n),
            9 => Ev::Sample,
            _ => Ev::Measure(n),
        }
    }
}

/// Counters of every flow and link at one instant.
#[derive(Clone, Debug, Default)]
struct Snapshot {
    flows: Vec<FlowCounters>,
    links: Vec<LinkStats>,
}

#[derive(Clone, Debug, Default)]
struct FlowCounters {
    tcp: TcpStats,
    sent: u64,
    delivered: u64,
}

impl FlowCounters {
    fn minus(&self, e: &FlowCounters) -> FlowCounters {
        FlowCounters { tcp: self.tcp.minus(&e.tcp), sent: self.sent - e.sent, delivered: self.delivered - e.delivered }
    }
}

/// A TCP flow's sender and receiver sit in the flow's state itself, not behind boxes: the
/// state's address follows from the flow's number, so the processor fetches the sender's or
/// receiver's lines while it waits for the line that says which kind of flow this is, instead
/// of after it (a box's address is in that line). With thousands of flows both are usually
/// cold when a packet arrives (measured, profile-guided, CPU, this / boxed: 3 200 flows
/// × 6 s 0.947, × 20 s 0.955, the 32-flow reference 0.959; aligning the state to cache lines
/// then 0.977 at 3 200 flows × 6 s and 1.008 on the reference).
#[allow(clippy::large_enum_variant)]
enum Endpoint {
    Tcp { snd: TcpSender, rcv: TcpSink },
    Udp { src: UdpSource, sent: u64, received: u64 },
    /// `log`: the receiver's loss events (the scenario's `loss_log`), in time order.
    Rate { snd: Box<dyn RateSender>, rcv: Box<dyn RateReceiver>, sent: u64, feedback: VecDeque<(u32, Feedback)>, next_fb: u32, rtt_sum: f64, rtt_n: u64, log: Vec<LossRecord> },
}

impl Endpoint {
    /// The TCP sender, if a TCP flow.
    #[inline]
    fn tcp(&mut self) -> Option<&mut TcpSender> {
        match self {
            Endpoint::Tcp { snd, .. } => Some(snd),
            _ => None,
        }
    }

    /// The TCP receiver, if a TCP flow.
    #[inline]
    fn sink(&mut self) -> Option<&mut TcpSink> {
        match self {
            Endpoint::Tcp { rcv, .. } => Some(rcv),
            _ => None,
        }
    }

    /// The application stops sending.
    fn stop(&mut self, now: Time) {
        match self {
            Endpoint::Tcp { snd, .. } => snd.stop(now),
            Endpoint::Udp { src, .. } => src.stop(),
            Endpoint::Rate { snd, .. } => snd.stop(),
        }
    }

    /// (window, slow-start threshold, smoothed RTT, packets delivered) for the time series;
    /// NaN where not defined (infinite ssthresh before the first decrease: null in the JSON).
    fn sample(&self) -> (f64, f64, f64, u64) {
        match self {
            Endpoint::Tcp { snd, rcv } => (snd.cwnd(), snd.ssthresh(), snd.srtt(), rcv.delivered),
            Endpoint::Udp { received, .. } => (f64::NAN, f64::NAN, f64::NAN, *received),
            Endpoint::Rate { snd, rcv, .. } => (f64::NAN, f64::NAN, snd.rtt(), rcv.delivered()),
        }
    }

    /// The counters as of `now`.
    fn counters(&mut self, now: Time) -> FlowCounters {
        match self {
            Endpoint::Tcp { snd, rcv } => FlowCounters { tcp: snd.snapshot(now), sent: 0, delivered: rcv.delivered },
            Endpoint::Udp { sent, received, .. } => FlowCounters { tcp: TcpStats::default(), sent: *sent, delivered: *received },
            Endpoint::Rate { snd, rcv, sent, rtt_sum, rtt_n, .. } => {
                let tcp = TcpStats { sent: *sent, loss_events: rcv.loss_events(), timeouts: snd.timeouts(), rtt_sum: *rtt_sum, rtt_samples: *rtt_n, rtt_seen_sum: *rtt_sum, ..TcpStats::default() };
                FlowCounters { tcp, sent: *sent, delivered: rcv.delivered() }
            }
        }
    }
}

/// Aligned to cache lines (960 bytes, 15 lines, with a TCP endpoint inline), so that each
/// field falls on the same line of every flow's state and none straddles two.
#[repr(align(64))]
struct FlowState {
    ep: Endpoint,
    rto: Armed,
    delack: Armed,
    /// Rate-based flows: pacing, sender timer, receiver timer.
    rate: [Armed; 3],
    ts_delivered: u64,
}

/// The queue entry that stands for a deadline which moves often (RTO, delayed ACK, pacing):
/// a new entry is pushed only when the deadline moves earlier than the one pending, and an
/// entry that fires at another time than the pending one is stale. Cancelling is free.
#[derive(Clone, Copy, Debug, Default)]
struct Armed(Option<Time>);

impl Armed {
    /// The time to schedule a new entry at for deadline `want`, if one is needed.
    #[inline]
    fn arm(&mut self, want: Option<Time>) -> Option<Time> {
        let d = want?;
        if self.0.is_none_or(|a| a > d) {
            self.0 = Some(d);
            Some(d)
        } else {
            None
        }
    }

    /// Whether the entry firing at `now` is the pending one (it is then consumed).
    #[inline]
    fn fire(&mut self, now: Time) -> bool {
        if self.0 == Some(now) {
            self.0 = None;
            true
        } else {
            false
        }
    }
}

/// Which links can be entered without an event: every path through them comes from the same
/// upstream link, none starts at them, and they are not reported. A folded link admits a
/// packet when the upstream one does, ahead of the packet's arrival, so its counters at an
/// instant would include packets still to arrive: a reported link (whose counters are read at
/// the measurement window's ends and at every sample) is entered through events.
fn foldable(links: &[LinkSpec], flows: &[FlowSpec]) -> Vec<bool> {
    let nlinks = links.len();
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let mut feeder = vec![NONE; nlinks];
    for f in flows {
        for path in [&f.route.fwd, &f.route.rev] {
            for (i, &l) in path.iter().enumerate() {
                let prev = if i == 0 { MANY } else { path[i - 1] };
                let slot = &mut feeder[l as usize];
                *slot = if *slot == NONE || *slot == prev { prev } else { MANY };
            }
        }
    }
    feeder.iter().zip(links).map(|(&p, l)| p != NONE && p != MANY && !l.report).collect()
}

/// The tracer of a run: its links and flows as a trace shows them.
fn tracer(cfg: &SimConfig, spec: &TraceSpec) -> Tracer {
    let links = cfg.topology.links.iter().map(|s| LinkInfo { from: s.from, to: s.to, delay: s.delay, ns_per_byte: 8e9 / s.rate_bps }).collect();
    let flows = cfg
        .flows
        .iter()
        .map(|f| {
            let ends = |r: &[crate::net::LinkId]| (cfg.topology.links[r[0] as usize].from, cfg.topology.links[r[r.len() - 1] as usize].to);
            let (src, dst) = ends(&f.route.fwd);
            let payload = match &f.kind {
                FlowKind::Tcp { tcp, .. } => tcp.packet_size,
                FlowKind::Rate { payload, .. } => *payload,
                FlowKind::Udp { size, .. } => *size,
            };
            FlowInfo { src, dst, payload, fwd_len: f.route.fwd.len() as u16, rev_len: f.route.rev.len() as u16 }
        })
        .collect();
    Tracer::new(spec, links, flows, cfg.duration)
}

/// `forward_wire`'s `from` for a packet that leaves its endpoint (not a link).
const FROM_ENDPOINT: u32 = u32::MAX;

/// The out-of-line part of `wire`, which waits where the packet comes `from` (see
/// `Simulation::forward_wire`): `links[from]`'s FIFO, or `staged` for `FROM_ENDPOINT`.
#[inline(always)]
fn take_ext(links: &mut [Link], staged: &mut Option<Ext>, wire: &Wire, from: u32) -> Option<Ext> {
    if !wire.has_ext() {
        None
    } else if from == FROM_ENDPOINT {
        staged.take()
    } else {
        links[from as usize].take_ext()
    }
}

/// A hop for the packet trace (out of line: the packet path stays as small as without one).
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn trace_hop(t: &mut Tracer, links: &[Link], staged: Option<Ext>, l: u32, hop: usize, at: Time, wire: &Wire, from: u32, admitted: Option<Time>) {
    let ext = match (wire.has_ext(), from) {
        (false, _) => None,
        (true, FROM_ENDPOINT) => staged,
        (true, f) => links[f as usize].peek_ext(),
    };
    t.hop(l, hop, at, &wire.join(ext), admitted);
}

/// Every flow's forward and reverse route (link indices) in one array, the reverse right after
/// the forward, with a small index: a packet's next link is found in a few dense kilobytes
/// instead of through a pointer held in the flow's state (with thousands of flows, two
/// dependent cache misses per hop: the state's line, then the route's allocation).
#[derive(Default)]
struct Routes {
    hops: Vec<u32>,
    /// Flow i: its forward route starts at `at[i].0` and has `at[i].1` links, its reverse
    /// route follows with `at[i].2`.
    at: Vec<(u32, u16, u16)>,
}

impl Routes {
    fn push(&mut self, fwd: &[u32], rev: &[u32]) -> Result<(), String> {
        let long = |r: &[u32]| r.len() > MAX_ROUTE_LINKS;
        if long(fwd) || long(rev) {
            return Err(format!("a route has at most {MAX_ROUTE_LINKS} links; got {}", fwd.len().max(rev.len())));
        }
        let start = u32::try_from(self.hops.len()).map_err(|_| "the routes have more than 2^32 links in all".to_string())?;
        self.at.push((start, fwd.len() as u16, rev.len() as u16));
        self.hops.extend_from_slice(fwd);
        self.hops.extend_from_slice(rev);
        Ok(())
    }

    /// Flow `flow`'s reverse route if `ack`, else its forward route.
    #[inline(always)]
    fn get(&self, flow: u32, ack: bool) -> &[u32] {
        let (start, nf, nr) = self.at[flow as usize];
        let (from, n) = if ack { (start as usize + nf as usize, nr) } else { (start as usize, nf) };
        &self.hops[from..from + n as usize]
    }
}

/// Links from which the run loop prefetches pipe heads: with fewer, the pipes' chunks and
/// the links stay in the cache and the hints only cost instructions.
const PREFETCH_LINKS: usize = 512;

/// A run in progress.
pub struct Simulation {
    cfg: SimConfig,
    q: EventQueue<Packed>,
    links: Vec<Link>,
    /// The packets in the links' propagation pipes.
    pipes: Pipes,
    flows: Vec<FlowState>,
    /// Every flow's two routes (link indices), packed.
    routes: Routes,
    /// Links entered only from one other link (and never first on a path): a packet admitted
    /// upstream is admitted here at once, at its arrival time, without an event in between.
    fold: Vec<bool>,
    out: Vec<Packet>,
    /// The out-of-line part of the packet being forwarded from its endpoint, if any.
    ext: Option<Ext>,
    ts: Option<TimeSeries>,
    ts_link_bytes: Vec<u64>,
    ts_link_drops: Vec<u64>,
    ts_link_marks: Vec<u64>,
    snaps: [Option<Snapshot>; 2],
    /// Set when a controller reports a fault: the run stops with this message.
    failed: Option<String>,
    /// Events until the run loop next checks the memory guard and `failed`.
    guard: u32,
    /// The end of the events the run loop is handling (`run_loop`'s `end`).
    loop_end: Time,
    /// The packet trace, when the scenario asks for one.
    trace: Option<Box<Tracer>>,
    /// Whether to prefetch pipe heads (worth it only with many links).
    prefetch: bool,
}

impl Simulation {
    /// A simulation whose external controllers come from `factory`.
    pub fn with_factory(cfg: SimConfig, factory: Option<&dyn ControllerFactory>) -> Result<Self, String> {
        let meas = cfg.measure;
        if cfg.topology.links.len() > MAX_LINKS {
            return Err(format!("topology.links: {} links, at most {MAX_LINKS}", cfg.topology.links.len()));
        }
        let mut links: Vec<Link> = cfg
            .topology
            .links
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut l = Link::new(s.name.clone(), s.from, s.to, s.rate_bps, s.delay, &s.queue, Rng::stream(cfg.seed, "queue", i as u64));
                l.cap_backlog(cfg.limits.access_queue);
                if let Some(a) = &s.loss {
                    let mut m = LossModel::new(a.spec.clone(), Rng::stream(cfg.seed, "loss", i as u64));
                    m.data_only = !a.include_acks;
                    m.flows = a.flows.clone();
                    l.loss = Some(m);
                }
                if !s.report {
                    l.unreported();
                }
                l
            })
            .collect();
        links.shrink_to_fit();
        let mut q = EventQueue::new();
        let mut flows = Vec::with_capacity(cfg.flows.len());
        let mut routes = Routes::default();
        // The start-up events, in the order they are numbered (ties in time fire in it).
        let mut initial = Vec::with_capacity(cfg.flows.len() + 3);
        for (i, f) in cfg.flows.iter().enumerate() {
            let id = i as u32;
            let ep = match &f.kind {
                FlowKind::Tcp { params, external, recovery, tcp, ack_size, delayed_ack, delack_timeout } => {
                    let mut ctl = match (external, factory) {
                        (None, _) => registry::build_window(params, tcp.initial_window, tcp.max_window).map_err(|e| format!("flow {id}: {e}"))?,
                        (Some(p), Some(fac)) => fac.build(&params.algorithm, p, id, tcp.initial_window, tcp.max_window)?,
                        (Some(_), None) => return Err(format!("flow {id}: no factory for controller '{}'", params.algorithm)),
                    };
                    // slowdown()'s arithmetic (cc::Window::ns2) is that of ns-2's own agents
                    // (Agent/TCP and its window options), not TCP-Linux's nor the papers' code
                    if tcp.ns2_agent && *recovery != Recovery::Linux && external.is_none() && matches!(registry::lookup(&params.algorithm).map(|e| &e.ns2), Some(registry::Ns2::Agent(_))) {
                        ctl.ns2_window_rules();
                    }
                    Endpoint::Tcp {
                        snd: TcpSender::new(id, tcp.clone(), *recovery, ctl, Rng::stream(cfg.seed, "rtt_noise", i as u64)),
                        rcv: TcpSink::new(id, *ack_size, recovery.uses_sack(), *delayed_ack, *delack_timeout),
                    }
                }
                FlowKind::Rate { params, size, .. } => {
                    let (snd, rcv) = registry::build_rate(params, *size).map_err(|e| format!("flow {id}: {e}"))?;
                    Endpoint::Rate { snd, rcv, sent: 0, feedback: VecDeque::new(), next_fb: 0, rtt_sum: 0.0, rtt_n: 0, log: vec![] }
                }
                FlowKind::Udp { size, pattern } => {
                    Endpoint::Udp { src: UdpSource::new(id, *size, pattern.clone(), Rng::stream(cfg.seed, "udp", i as u64)), sent: 0, received: 0 }
                }
            };
            routes.push(&f.route.fwd, &f.route.rev).map_err(|e| format!("flow {id}: {e}"))?;
            flows.push(FlowState {
                ep,
                rto: Armed::default(),
                delack: Armed::default(),
                rate: [Armed::default(); 3],
                ts_delivered: 0,
            });
            initial.push((f.start, Ev::Start(id).pack()));
            if let Some(stop) = f.stop {
                initial.push((stop, Ev::Stop(id).pack()));
            }
        }
        if meas.from > 0 {
            initial.push((meas.from, Ev::Measure(0).pack()));
        }
        if meas.to < cfg.duration {
            initial.push((meas.to, Ev::Measure(1).pack()));
        }
        let ts = cfg.timeseries.map(|iv| {
            initial.push((iv, Ev::Sample.pack()));
            TimeSeries::default()
        });
        q.schedule_all(initial);
        let nl = links.len();
        let fold = foldable(&cfg.topology.links, &cfg.flows);
        let trace = cfg.trace.as_ref().map(|spec| Box::new(tracer(&cfg, spec)));
        Ok(Simulation { cfg, q, links, pipes: Pipes::new(), flows, routes, fold, out: Vec::with_capacity(64), ext: None, ts, ts_link_bytes: vec![0; nl], ts_link_drops: vec![0; nl], ts_link_marks: vec![0; nl], snaps: [None, None], failed: None, guard: 0, loop_end: 0, trace, prefetch: nl >= PREFETCH_LINKS })
    }

    /// Run to the end and collect the results; a controller fault stops the run with an error
    /// naming the flow, outgrowing `limits.memory` with an error naming that setting.
    pub fn run(mut self) -> Result<RunResult, RunError> {
        let end = self.cfg.duration;
        if self.prefetch {
            self.run_loop::<true>(end)?;
        } else {
            self.run_loop::<false>(end)?;
        }
        if let Some(e) = self.failed.take() {
            return Err(RunError::Runtime(e));
        }
        self.q.advance_to(end);
        let trace = match self.trace.take() {
            Some(t) => {
                t.check()?;
                Some(t.finish())
            }
            None => None,
        };
        let mut r = self.collect(end);
        r.trace = trace;
        Ok(r)
    }

    /// Handle the events up to `end` (or until a controller fault); `PREFETCH`: fetch the next
    /// packet's pipe head while an event is handled (only with many links: a few hundred stay
    /// in the cache).
    fn run_loop<const PREFETCH: bool>(&mut self, end: Time) -> Result<(), RunError> {
        // The memory guard looks every `every` events (its cost is one pass over links and
        // flows); a controller fault sets `guard` to 1, so the run stops before the next event.
        let every = (1u32 << 16).max(16 * (self.links.len() + self.flows.len()) as u32);
        self.guard = every;
        self.loop_end = end;
        while let Some(s) = self.q.peek_until(end) {
            self.guard -= 1;
            if self.guard == 0 {
                if self.failed.is_some() {
                    break;
                }
                self.guard = every;
                self.check_memory()?;
                if let Some(t) = &self.trace {
                    t.check()?;
                }
            }
            let now = s.time;
            // The next packet's pipe entry and its link's hot line are likely cold (many
            // links): fetch both while this event is handled (the event names the entry, so
            // nothing is loaded first).
            if PREFETCH {
                if let Some((link, entry)) = self.q.peek_ahead(1).and_then(|e| e.link_arrival()) {
                    self.pipes.prefetch_entry(entry);
                    self.links[link as usize].prefetch_hot();
                }
            }
            if let Some((l, entry)) = s.event.link_arrival() {
                // The link's next packet usually takes this entry's place.
                let (wire, next) = self.links[l as usize].pop_arrival::<PREFETCH>(&mut self.pipes, entry);
                match next {
                    Some((t, entry)) => self.q.replace_top(t, Ev::LinkArrival { link: l, entry }.pack()),
                    None => self.q.pop(),
                }
                self.forward_wire::<false>(now, wire, l);
                continue;
            }
            self.q.pop();
            match s.event.get() {
                Ev::LinkArrival { .. } => unreachable!(),
                Ev::Rto(f) => self.rto_fired(now, f),
                Ev::DelAck(f) => self.delack_fired(now, f),
                Ev::Start(f) => self.start_flow(now, f),
                Ev::Stop(f) => self.flows[f as usize].ep.stop(now),
                Ev::Pace(f) => self.rate_timer(now, f, 0),
                Ev::RateSnd(f) => self.rate_timer(now, f, 1),
                Ev::RateRcv(f) => self.rate_timer(now, f, 2),
                Ev::Udp(f) => self.udp_fire(now, f),
                Ev::Sample => self.sample(now),
                Ev::Measure(i) => self.snaps[i as usize] = Some(self.snapshot(now)),
            }
        }
        Ok(())
    }

    /// The memory guard: an error naming `limits.memory` and what grew if the run holds more
    /// than that in packets (queued and in flight), senders' per-packet state and samples.
    fn check_memory(&self) -> Result<(), FieldError> {
        let packets = self.pipes.held_bytes() + self.links.iter().map(|l| l.held_bytes()).sum::<u64>();
        let senders: u64 = self.flows.iter().map(|f| match &f.ep {
            Endpoint::Tcp { snd, .. } => snd.held_bytes(),
            Endpoint::Rate { log, .. } => (log.capacity() * std::mem::size_of::<LossRecord>()) as u64,
            _ => 0,
        }).sum();
        let samples = self.ts.as_ref().map_or(0, |t| t.held_bytes()) + self.trace.as_ref().map_or(0, |t| t.held_bytes());
        let held = packets + senders + samples;
        let limit = self.cfg.limits.memory;
        if held <= limit {
            return Ok(());
        }
        let what = if packets >= senders.max(samples) {
            "packets queued and in flight"
        } else if senders >= samples {
            "the TCP senders' per-packet state"
        } else if self.trace.is_some() {
            "time-series samples and the packet trace"
        } else {
            "time-series samples"
        };
        Err(FieldError::new(
            "limits.memory",
            format!(
                "the run outgrew its memory limit of {} at t = {} s: {} held, most of it {what} ({}); raise limits.memory (at most {}), set max_window or limits.access_queue, or make the senders respond to loss",
                show_bytes(limit),
                to_secs(self.q.now()),
                show_bytes(held),
                show_bytes(packets.max(senders).max(samples)),
                show_bytes(crate::config::Limits::MAX_MEMORY)
            ),
        ))
    }

    /// Stop the run if flow `f`'s controller reported a fault.
    #[inline]
    fn check_controller(&mut self, f: u32) {
        if let Some(snd) = self.flows[f as usize].ep.tcp() {
            if let Some(e) = snd.controller_error() {
                self.controller_failed(f, e);
            }
        }
    }

    /// Flow `f`'s controller reported fault `e`: the run stops before the next event.
    #[cold]
    #[inline(never)]
    fn controller_failed(&mut self, f: u32, e: String) {
        let alg = &self.cfg.flows[f as usize].algorithm;
        self.failed = Some(format!("flow {f} ({alg}): {e}"));
        self.guard = 1;
    }

    /// Send a packet from its origin (hop 0) or onward from a node.
    #[inline]
    fn forward(&mut self, now: Time, pkt: Packet) {
        self.forward_as::<false>(now, pkt);
    }

    /// `forward`; `LAST`: as the last thing the current event does (see `forward_wire`).
    #[inline]
    fn forward_as<const LAST: bool>(&mut self, now: Time, pkt: Packet) {
        let (wire, ext) = pkt.split();
        if ext.is_some() {
            self.ext = ext;
        }
        self.forward_wire::<LAST>(now, wire, FROM_ENDPOINT);
    }

    /// `forward` on the packet's compact form: from link to link a packet stays in that form,
    /// and is made whole only for its endpoint (or a trace). Its out-of-line part, if it has
    /// one, waits where the packet comes `from` (a link's FIFO, or `self.ext` when
    /// `FROM_ENDPOINT`) until it goes into the next pipe, is dropped or delivered.
    ///
    /// `LAST`: forwarding is the last thing the current event does (it schedules nothing
    /// after). Then, when the packet's arrival at the end of link `l` would be the next event
    /// (every pending one is due strictly later), within the run's end and before the memory
    /// guard's next look, that event is handled at once, as if `l` were folded: nothing could
    /// run between the two, so the results are those of the event. It is counted as one, and
    /// taken only when skipping `l`'s pipe leaves the allocations as entering and leaving it
    /// would (`Link::can_pass`). A TCP receiver's ACK on its short, fast uplink is the usual
    /// case: the third of the four events a packet takes.
    #[inline]
    fn forward_wire<const LAST: bool>(&mut self, now: Time, mut wire: Wire, from: u32) {
        let route = self.routes.get(wire.flow(), wire.is_ack());
        let mut hop = wire.hop() as usize;
        if hop == route.len() {
            let ext = take_ext(&mut self.links, &mut self.ext, &wire, from);
            self.deliver(now, wire.join(ext));
            return;
        }
        let mut at = now;
        loop {
            let l = route[hop];
            wire.next_hop();
            let admitted = self.links[l as usize].admit(at, &mut wire);
            if let Some(t) = self.trace.as_deref_mut() {
                trace_hop(t, &self.links, self.ext, l, hop, at, &wire, from, admitted);
            }
            let Some(arrival) = admitted else {
                take_ext(&mut self.links, &mut self.ext, &wire, from);
                return;
            };
            hop += 1;
            if let Some(&next) = route.get(hop) {
                if self.fold[next as usize] {
                    at = arrival;
                    continue;
                }
                if LAST
                    && self.q.is_next(arrival)
                    && arrival <= self.loop_end
                    && self.guard > 1
                    && self.links[l as usize].can_pass(&self.pipes, wire.has_ext())
                {
                    // `Ev::LinkArrival` at `l`, handled now (see above)
                    self.guard -= 1;
                    self.q.pass(arrival);
                    at = arrival;
                    continue;
                }
            }
            let ext = take_ext(&mut self.links, &mut self.ext, &wire, from);
            if let Some(entry) = self.links[l as usize].pipe_push(&mut self.pipes, arrival, wire, ext) {
                self.q.schedule(arrival, Ev::LinkArrival { link: l, entry }.pack());
            }
            return;
        }
    }

    /// Forward the packets the endpoints queued in `out`, in order. (Forwarding from an
    /// endpoint enters the first link of a route, never delivers, so adds nothing to `out`.)
    #[inline]
    fn flush(&mut self, now: Time) {
        let mut i = 0;
        while let Some(&p) = self.out.get(i) {
            self.forward(now, p);
            i += 1;
        }
        self.out.clear();
    }

    /// A packet reaches its endpoint. The flow's endpoint is looked up once: a timer's new
    /// deadline is read (and its entry armed) before the packets this arrival sends are
    /// forwarded, which change neither, and scheduled after them, in the same order as
    /// `sync_delack` / `sync_rto` called after them would.
    fn deliver(&mut self, now: Time, pkt: Packet) {
        let f = pkt.flow;
        if self.prefetch {
            // The link this arrival's answer enters first (a data packet's ACK, an ACK's new
            // data): with thousands of links its hot line is cold, and it is read only after
            // the endpoint's work (measured, profile-guided, CPU: 3 200 flows × 6 s 0.978,
            // × 20 s 0.981; not done with few links, where it would only cost instructions).
            if let Some(&l) = self.routes.get(f, pkt.kind == PacketKind::Data).first() {
                self.links[l as usize].prefetch_hot();
            }
        }
        let fs = &mut self.flows[f as usize];
        match &mut fs.ep {
            Endpoint::Tcp { snd, rcv } => match pkt.kind {
                PacketKind::Data => {
                    let ack = rcv.on_data(now, &pkt);
                    let delack = fs.delack.arm(rcv.delack_deadline);
                    if let Some(a) = ack {
                        if delack.is_none() {
                            // the last thing this arrival does
                            self.forward_as::<true>(now, a);
                        } else {
                            self.forward(now, a);
                        }
                    }
                    if let Some(d) = delack {
                        self.q.schedule(d, Ev::DelAck(f).pack());
                    }
                }
                PacketKind::Ack => {
                    snd.on_ack(now, &pkt, &mut self.out);
                    if let Some(e) = snd.controller_error() {
                        self.controller_failed(f, e);
                    }
                    let snd = match &mut self.flows[f as usize].ep {
                        Endpoint::Tcp { snd, .. } => snd,
                        _ => unreachable!(),
                    };
                    let rto = snd.rto_deadline();
                    let rto = self.flows[f as usize].rto.arm(rto);
                    self.flush(now);
                    if let Some(d) = rto {
                        self.q.schedule(d, Ev::Rto(f).pack());
                    }
                }
                PacketKind::Datagram => {}
            },
            Endpoint::Rate { .. } => self.rate_deliver(now, pkt),
            Endpoint::Udp { received, .. } => {
                if pkt.kind == PacketKind::Datagram {
                    *received += 1;
                }
            }
        }
    }

    fn start_flow(&mut self, now: Time, f: u32) {
        match &mut self.flows[f as usize].ep {
            Endpoint::Tcp { snd, .. } => {
                snd.start(now, &mut self.out);
                self.flush(now);
                self.sync_rto(f);
            }
            Endpoint::Udp { src, .. } => {
                let first = src.start(now);
                self.q.schedule(first, Ev::Udp(f).pack());
            }
            Endpoint::Rate { snd, .. } => {
                snd.start(now);
                self.sync_rate(f);
            }
        }
    }

    /// Re-arm a rate-based flow's three timers (lazily, like the RTO).
    fn sync_rate(&mut self, f: u32) {
        let fs = &mut self.flows[f as usize];
        let Endpoint::Rate { snd, rcv, .. } = &fs.ep else { return };
        let want = [snd.next_send(), snd.timer(), rcv.timer()];
        let now = self.q.now();
        for (slot, w) in want.into_iter().enumerate() {
            if let Some(d) = fs.rate[slot].arm(w.map(|d| d.max(now))) {
                self.q.schedule(d, [Ev::Pace(f), Ev::RateSnd(f), Ev::RateRcv(f)][slot].pack());
            }
        }
    }

    fn rate_timer(&mut self, now: Time, f: u32, slot: usize) {
        let fi = f as usize;
        if !self.flows[fi].rate[slot].fire(now) {
            return; // stale entry
        }
        let FlowKind::Rate { size, ack_size, .. } = self.cfg.flows[fi].kind else { return };
        let mut out = None;
        if let Endpoint::Rate { snd, rcv, sent, feedback, next_fb, .. } = &mut self.flows[fi].ep {
            match slot {
                0 => {
                    if snd.next_send().is_some_and(|t| t <= now) {
                        let seq = snd.send(now);
                        *sent += 1;
                        let mut p = Packet::data(f, seq, size, now, 0);
                        p.aux = (snd.rtt() * 1e6).min(u32::MAX as f64) as u32;
                        out = Some(p);
                    }
                }
                1 => {
                    if snd.timer().is_some_and(|t| t <= now) {
                        snd.on_timer(now);
                    }
                }
                _ => {
                    if rcv.timer().is_some_and(|t| t <= now) {
                        if let Some(fb) = rcv.on_timer(now) {
                            out = Some(Self::feedback_packet(f, ack_size, fb, feedback, next_fb));
                        }
                    }
                }
            }
        }
        if let Some(p) = out {
            self.forward(now, p);
        }
        self.sync_rate(f);
    }

    fn feedback_packet(f: u32, ack_size: u32, fb: Feedback, queue: &mut VecDeque<(u32, Feedback)>, next: &mut u32) -> Packet {
        let id = *next;
        *next = next.wrapping_add(1);
        queue.push_back((id, fb));
        Packet::ack(f, id, ack_size, fb.stamp)
    }

    fn rate_deliver(&mut self, now: Time, pkt: Packet) {
        let f = pkt.flow;
        let FlowKind::Rate { ack_size, .. } = self.cfg.flows[f as usize].kind else { return };
        let mut out = None;
        let log_losses = self.cfg.loss_log;
        if let Endpoint::Rate { snd, rcv, feedback, next_fb, rtt_sum, rtt_n, log, .. } = &mut self.flows[f as usize].ep {
            if pkt.kind == PacketKind::Ack {
                // Feedback arrives in order; reports lost on the way are skipped.
                while let Some((id, fb)) = feedback.pop_front() {
                    if id == pkt.seq {
                        snd.on_feedback(now, &fb);
                        if snd.rtt() > 0.0 {
                            *rtt_sum += snd.rtt();
                            *rtt_n += 1;
                        }
                        break;
                    }
                }
            } else {
                // the receiver's count before this arrival, read only when the log is kept
                let before = log_losses.then(|| rcv.loss_events());
                if let Some(fb) = rcv.on_data(now, &pkt, pkt.aux as f64 * 1e-6) {
                    out = Some(Self::feedback_packet(f, ack_size, fb, feedback, next_fb));
                }
                // the loss events this arrival revealed (at most one in practice)
                if let Some(events) = before {
                    for _ in events..rcv.loss_events() {
                        log.push(LossRecord { time: now, kind: LossKind::RateLossEvent, window_before: f64::NAN, window_after: f64::NAN });
                    }
                }
            }
        }
        if let Some(p) = out {
            self.forward(now, p);
        }
        self.sync_rate(f);
    }

    fn udp_fire(&mut self, now: Time, f: u32) {
        if let Endpoint::Udp { src, sent, .. } = &mut self.flows[f as usize].ep {
            let before = self.out.len();
            let next = src.fire(now, &mut self.out);
            *sent += (self.out.len() - before) as u64;
            if let Some(t) = next {
                self.q.schedule(t, Ev::Udp(f).pack());
            }
        }
        self.flush(now);
    }

    /// Keep one live heap entry per timer: re-arm only when the deadline moved earlier.
    fn sync_rto(&mut self, f: u32) {
        let fs = &mut self.flows[f as usize];
        if let Some(snd) = fs.ep.tcp() {
            if let Some(d) = fs.rto.arm(snd.rto_deadline()) {
                self.q.schedule(d, Ev::Rto(f).pack());
            }
        }
    }

    fn rto_fired(&mut self, now: Time, f: u32) {
        let fs = &mut self.flows[f as usize];
        if !fs.rto.fire(now) {
            return; // stale entry
        }
        if let Some(snd) = fs.ep.tcp() {
            match snd.rto_deadline() {
                Some(d) if d <= now => snd.on_timeout(now, &mut self.out),
                _ => {}
            }
        }
        self.check_controller(f);
        self.flush(now);
        self.sync_rto(f);
    }

    fn sync_delack(&mut self, f: u32) {
        let fs = &mut self.flows[f as usize];
        if let Some(rcv) = fs.ep.sink() {
            if let Some(d) = fs.delack.arm(rcv.delack_deadline) {
                self.q.schedule(d, Ev::DelAck(f).pack());
            }
        }
    }

    fn delack_fired(&mut self, now: Time, f: u32) {
        let fs = &mut self.flows[f as usize];
        if !fs.delack.fire(now) {
            return; // stale entry
        }
        let ack = fs.ep.sink().and_then(|rcv| match rcv.delack_deadline {
            Some(d) if d <= now => rcv.on_delack_timeout(now),
            _ => None,
        });
        if let Some(a) = ack {
            self.forward(now, a);
        }
        self.sync_delack(f);
    }

    fn sample(&mut self, now: Time) {
        let iv = self.cfg.timeseries.expect("sampling without an interval");
        let ts = self.ts.as_mut().expect("time series");
        let t = to_secs(now);
        for (i, fs) in self.flows.iter_mut().enumerate() {
            let (cwnd, ssthresh, srtt, delivered) = fs.ep.sample();
            let rate = (delivered - fs.ts_delivered) as f64 * self.cfg.flows[i].kind.payload_bits() / to_secs(iv);
            fs.ts_delivered = delivered;
            ts.push_flow(t, i as u32, cwnd, ssthresh, rate, srtt);
        }
        for (i, l) in self.links.iter().enumerate() {
            if !self.cfg.topology.links[i].report {
                continue;
            }
            // (bytes_sent_at: the packets that waited and have started by now count now, not
            // at the next arrival; the series then sums to the link's totals as before)
            let bytes = l.bytes_sent_at(now);
            let (drops, marks) = (l.stats.drops, l.stats.marks);
            let util = (bytes - self.ts_link_bytes[i]) as f64 * 8.0 / (l.rate_bps * to_secs(iv));
            ts.push_link(t, &l.name, l.queue_len_at(now) as f64, util, drops - self.ts_link_drops[i], marks - self.ts_link_marks[i]);
            self.ts_link_bytes[i] = bytes;
            self.ts_link_drops[i] = drops;
            self.ts_link_marks[i] = marks;
        }
        if now + iv <= self.cfg.duration {
            self.q.schedule(now + iv, Ev::Sample.pack());
        }
    }

    fn snapshot(&mut self, now: Time) -> Snapshot {
        let flows = self
            .flows
            .iter_mut()
            .map(|fs| fs.ep.counters(now))
            .collect();
        let links = self.links.iter_mut().map(|l| l.snapshot(now)).collect();
        Snapshot { flows, links }
    }

    fn collect(mut self, end: Time) -> RunResult {
        let meas = self.cfg.measure;
        let window_s = to_secs(meas.to.min(end).saturating_sub(meas.from)).max(1e-12);
        let start = self.snaps[0].take().unwrap_or_else(|| Snapshot {
            flows: vec![FlowCounters::default(); self.flows.len()],
            links: vec![LinkStats::default(); self.links.len()],
        });
        let stop = match self.snaps[1].take() {
            Some(s) => s,
            None => self.snapshot(end),
        };
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, fs) in self.flows.iter().enumerate() {
            let spec = &self.cfg.flows[i];
            let c = stop.flows[i].minus(&start.flows[i]);
            let mut r = FlowResult::new(i as u32, spec);
            let bits = spec.kind.payload_bits();
            if let Endpoint::Udp { .. } = &fs.ep {
                r.packets_sent = c.sent;
                r.packets_delivered = c.delivered;
                r.throughput_bps = c.sent as f64 * bits / window_s;
                r.goodput_bps = c.delivered as f64 * bits / window_s;
            } else {
                // TCP and rate-based flows (the latter leave the TCP-only counters at zero).
                let st = &c.tcp;
                r.packets_sent = st.sent;
                r.packets_delivered = c.delivered;
                r.retransmissions = st.retransmissions;
                r.loss_events = Some(st.loss_events);
                r.timeouts = st.timeouts;
                r.ecn_reactions = st.ecn_reactions;
                r.fast_retransmits = st.fast_retransmits;
                r.throughput_bps = st.sent as f64 * bits / window_s;
                r.goodput_bps = c.delivered as f64 * bits / window_s;
                r.loss_event_rate = if st.sent > 0 { st.loss_events as f64 / st.sent as f64 } else { 0.0 };
                r.mean_rtt_s = if st.rtt_samples > 0 { st.rtt_sum / st.rtt_samples as f64 } else { f64::NAN };
                r.mean_rtt_sample_s = if st.rtt_samples > 0 { st.rtt_seen_sum / st.rtt_samples as f64 } else { f64::NAN };
                r.mean_rto_s = if st.rto_samples > 0 { st.rto_sum / st.rto_samples as f64 } else { f64::NAN };
                r.mean_cwnd = if st.active_ns > 0 { st.cwnd_area / st.active_ns as f64 } else { f64::NAN };
            }
            flows.push(r);
        }
        let mut links = Vec::new();
        for (i, l) in self.links.iter().enumerate() {
            if !self.cfg.topology.links[i].report {
                continue;
            }
            links.push(LinkResult::from_stats(&l.name, &stop.links[i].minus(&start.links[i]), window_s));
        }
        let mut losses: Vec<(u32, LossRecord)> = vec![];
        for (i, fs) in self.flows.iter_mut().enumerate() {
            if let Some(snd) = fs.ep.tcp() {
                losses.extend(snd.take_log().into_iter().map(|r| (i as u32, r)));
            } else if let Endpoint::Rate { log, .. } = &mut fs.ep {
                losses.extend(std::mem::take(log).into_iter().map(|r| (i as u32, r)));
            }
        }
        let loss_log = if losses.is_empty() && !self.cfg.flows.iter().any(|f| matches!(&f.kind, FlowKind::Tcp { tcp, .. } if tcp.log_losses)) {
            None
        } else {
            losses.sort_by_key(|(f, r)| (r.time, *f));
            let mut log = LossLog::default();
            for (f, r) in losses {
                log.time.push(to_secs(r.time));
                log.flow.push(f);
                log.kind.push(r.kind.name());
                log.window_before.push(r.window_before);
                log.window_after.push(r.window_after);
            }
            Some(log)
        };
        RunResult { flows, links, timeseries: self.ts.take(), loss_log, events: self.q.processed(), trace: None }
    }
}

#[cfg(test)]
mod tests {
    use super::{Ev, MAX_LINKS};

    /// Every kind of event comes back from the queue's word as it went in, with the largest
    /// link and entry numbers too; a link arrival is told apart from every other kind.
    #[test]
    fn events_round_trip_through_their_packed_word() {
        let top = u32::MAX;
        let link = MAX_LINKS as u32 - 1;
        let all = [
            Ev::LinkArrival { link: 0, entry: 0 },
            Ev::LinkArrival { link, entry: top },
            Ev::LinkArrival { link: 12_345, entry: 16 * 777 + 5 },
            Ev::Rto(top),
            Ev::DelAck(7),
            Ev::Start(0),
            Ev::Stop(top),
            Ev::Udp(3),
            Ev::Pace(top),
            Ev::RateSnd(1),
            Ev::RateRcv(2),
            Ev::Sample,
            Ev::Measure(1),
        ];
        for ev in all {
            let w = ev.pack();
            assert_eq!(w.get(), ev);
            let arrival = match ev {
                Ev::LinkArrival { link, entry } => Some((link, entry)),
                _ => None,
            };
            assert_eq!(w.link_arrival(), arrival, "{ev:?}");
        }
    }
}
