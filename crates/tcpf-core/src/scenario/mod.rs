//! Scenario files: what a user writes (TOML, or the same structure as JSON from Python),
//! validated field by field with errors that name the field and the allowed range, every
//! default filled in (and cited), and resolved into an engine `SimConfig`.
//!
//! `normalize` returns the canonical scenario: numbers in SI units (bits/s, seconds,
//! packets), ranges as `[low, high]`, controller parameters in canonical form (β removed).
//! Normalising a normalised scenario returns it unchanged.

mod flows;
mod network;
mod table;
mod trace;
pub mod units;

use crate::config::Limits;
use crate::engine::{FlowKind, FlowSpec, SimConfig};
use crate::error::show_num;
use crate::net::loss::LossAttach;
use crate::net::queue::QueueSpec;
use crate::net::topology::{Dumbbell, DumbbellFlow, Route, Topology};
use crate::net::LinkId;
use crate::sim::{secs, Rng};
use crate::transport::{TcpParams, Window};
use flows::{Group, GroupKind, RouteDef};
use network::{DumbbellDef, GraphDef, QueueDef};
use serde_json::{json, Map, Value};
use table::{err, Table};
pub use trace::TraceTable;

/// A bad scenario: the dotted path of the field and what is wrong with it.
pub type ScenarioError = crate::error::FieldError;

/// The network after validation, queues resolved.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // one per scenario
pub enum Net {
    Dumbbell { def: DumbbellDef, queue: QueueDef },
    /// A general graph; `queues[i]` = (forward, reverse) queues of link i.
    Graph { def: GraphDef, queues: Vec<(QueueDef, Option<QueueDef>)> },
}

#[derive(Clone, Debug)]
pub struct TcpTable {
    pub initial_window: u32,
    pub tick: f64,
    pub min_rto: f64,
    pub initial_rto: f64,
    pub max_rto: f64,
    pub max_backoff: u32,
    pub delayed_ack: bool,
    pub delack_timeout: f64,
    pub ack_size: u32,
    pub header_size: u32,
    pub dupthresh: u32,
    pub limited_transmit: bool,
    /// A decrease keeps fractions of a packet (ns-2's precisionReduce_ true, its default since
    /// 2006); false: the window is truncated to whole packets before and after (ns-2 before).
    pub precise_reduce: bool,
    /// ns-2's TCP agent rules where they differ from RFC 5681 (`TcpParams::ns2_agent`).
    pub ns2_agent: bool,
}

impl TcpTable {
    /// The options shown in the normalised scenario only when set away from their default (as
    /// [limits]): the results of scenarios without them are unchanged.
    fn echo_options(&self, tcp: &mut Value) {
        if !self.precise_reduce {
            tcp["precise_reduce"] = json!(false);
        }
        if self.ns2_agent {
            tcp["ns2_agent"] = json!(true);
        }
    }
}

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub duration: f64,
    pub seed: u64,
    pub packet_size: u32,
    pub max_window: Option<u32>,
    pub measure: (f64, f64),
    pub tcp: TcpTable,
    pub timeseries: Option<f64>,
    pub loss_log: bool,
    pub net: Net,
    /// The `[limits]` table, defaults filled in; `limits_given`: whether the scenario has one
    /// (the normalised scenario shows it only then).
    pub limits: Limits,
    limits_given: bool,
    /// The `[trace]` table, if any.
    pub trace: Option<TraceTable>,
    groups: Vec<Group>,
}

const TOP_KEYS: &[&str] = &[
    "duration", "seed", "packet_size", "max_window", "measure", "bottleneck", "nodes", "links", "tcp", "flows",
    "timeseries", "loss_log", "limits", "trace", "name", "description",
];

/// One flow after resolution.
struct ResolvedFlow {
    id: u32,
    group: u32,
    access_delay: f64,
    receiver_delay: f64,
    start: f64,
    stop: Option<f64>,
}

/// An external controller's name must not be an algorithm of the registry (or an alias): it
/// would replace that algorithm in every group using it (e.g. the TCP a law is judged
/// against), or lose to it (a rate-based or UDP entry), as `registry::register` refuses a
/// taken name.
fn check_external(external: &[String]) -> Result<(), ScenarioError> {
    match external.iter().find(|n| crate::registry::resolve(n).is_some()) {
        Some(name) => err("controllers", format!("'{name}' is a built-in algorithm (tcpf algorithms): give the Python controller another name")),
        None => Ok(()),
    }
}

impl Scenario {
    /// Validate a scenario given as a JSON value (a parsed TOML file has the same shape).
    pub fn from_value(v: &Value) -> Result<Scenario, ScenarioError> {
        Self::from_value_with(v, &[])
    }

    /// Validate a scenario in which flow groups may also name the `external` controllers
    /// (defined outside the registry, e.g. in Python; their parameters pass through as given).
    /// An external name must not be an algorithm of the registry (`check_external`).
    pub fn from_value_with(v: &Value, external: &[String]) -> Result<Scenario, ScenarioError> {
        check_external(external)?;
        let top = Table::new("", v)?;
        top.only(TOP_KEYS)?;
        let duration = top.need("duration", "the simulated time in seconds, in (0, 1e7]", |v| {
            units::positive_seconds(v, "the simulated time")
        })?;
        let seed = top.integer("seed", Some(1), 0, u64::MAX >> 11, "random seed")?;
        let packet_size = packet_size(&top, Some(1000))?;
        let max_window = match top.get("max_window") {
            None => None,
            Some(_) => Some(top.integer("max_window", None, 1, Limits::MAX_PACKETS as u64, "packets, receiver window cap")? as u32),
        };
        let measure = match top.get("measure") {
            None => (0.0, duration),
            Some(m) => {
                let t = Table::new("measure", m)?;
                t.only(&["from", "to"])?;
                let from = t.with("from", Some(0.0), units::seconds)?;
                let to = t.with("to", Some(duration), units::seconds)?;
                if from >= to {
                    return err("measure.to", format!("must be after measure.from ({} s); got {} s", show_num(from), show_num(to)));
                }
                if to > duration + 1e-9 {
                    return err("measure.to", format!("must not be after the end of the run ({} s); got {} s", show_num(duration), show_num(to)));
                }
                (from, to)
            }
        };
        let timeseries = match top.get("timeseries") {
            None => None,
            Some(v) => Some(interval("timeseries", v, duration)?),
        };
        let loss_log = top.boolean("loss_log", false)?;
        let tcp = tcp_table(top.get("tcp"))?;
        let limits = limits_table(top.get("limits"))?;

        // The network: a dumbbell or a general graph.
        let (dumbbell, graph) = match (top.get("bottleneck"), top.get("links")) {
            (Some(b), None) => {
                if top.get("nodes").is_some() {
                    return err("nodes", "goes with [[links]] (a general topology), not with [bottleneck]");
                }
                (Some(network::dumbbell(b)?), None)
            }
            (None, Some(l)) => (None, Some(network::graph(top.get("nodes"), l)?)),
            (Some(_), Some(_)) => return err("links", "give either [bottleneck] (a dumbbell) or [[links]] (a general topology), not both"),
            (None, None) => return err("bottleneck", "is required (a table with at least rate and delay), or [[links]] for a general topology"),
        };

        let flows_v = top.get("flows").ok_or(ScenarioError { field: "flows".into(), message: "is required: at least one [[flows]] group".into() })?;
        let arr = flows_v.as_array().ok_or(ScenarioError { field: "flows".into(), message: "must be a list of [[flows]] tables".into() })?;
        if arr.is_empty() {
            return err("flows", "needs at least one flow group");
        }
        let d_rate = dumbbell.as_ref().map_or(0.0, |d| d.rate);
        let mut groups = Vec::with_capacity(arr.len());
        for (gi, g) in arr.iter().enumerate() {
            groups.push(flows::group(gi, g, graph.as_ref(), d_rate, duration, external)?);
        }
        let total: u64 = groups.iter().map(|g| g.count as u64).sum();
        if total > 100_000 {
            return err("flows", format!("at most 100000 flows in all; got {total}"));
        }
        let ngroups = groups.len() as u32;

        // Queues, with limits relative to the BDP of the flows that cross each link.
        let net = match (dumbbell, graph) {
            (Some(def), None) => {
                let bdp = dumbbell_bdp(&groups, def.rate, def.delay, packet_size);
                let queue = def.queue.resolve(bdp, packet_size)?;
                check_loss_groups("bottleneck.loss", &queue, ngroups)?;
                Net::Dumbbell { def, queue }
            }
            (None, Some(def)) => {
                let mut queues = vec![];
                let rtts = graph_rtts(&def, &groups);
                for (i, l) in def.links.iter().enumerate() {
                    let fwd_bdp = graph_bdp(&def, &rtts, i, false, packet_size);
                    let fwd = l.queue.resolve(fwd_bdp, packet_size)?;
                    check_loss_groups(&format!("links[{i}].loss"), &fwd, ngroups)?;
                    let rev = if l.duplex {
                        let mut q = l.queue.clone();
                        q.loss = None; // a link's loss model applies in its from → to direction
                        Some(q.resolve(graph_bdp(&def, &rtts, i, true, packet_size), packet_size)?)
                    } else {
                        None
                    };
                    queues.push((fwd, rev));
                }
                for (gi, g) in groups.iter().enumerate() {
                    if let (RouteDef::Path(p), GroupKind::Tcp { .. } | GroupKind::Rate { .. }) = (&g.route, &g.kind) {
                        for w in p.windows(2) {
                            if def.edge(w[1], w[0]).is_none() {
                                return err(format!("flows[{gi}].path"), format!("no link from '{}' back to '{}' for the ACKs (make the link duplex)", def.nodes[w[1]], def.nodes[w[0]]));
                            }
                        }
                    }
                }
                Net::Graph { def, queues }
            }
            _ => unreachable!(),
        };
        if let Some(iv) = timeseries {
            let links = match &net {
                Net::Dumbbell { .. } => 2,
                Net::Graph { queues, .. } => queues.iter().map(|(_, r)| 1 + r.is_some() as u64).sum(),
            };
            check_timeseries_rows(iv, duration, total, links)?;
        }
        let trace = trace::trace_table(top.get("trace"), total)?;
        let mut s = Scenario { duration, seed, packet_size, max_window, measure, tcp, timeseries, loss_log, net, limits: limits.unwrap_or_default(), limits_given: limits.is_some(), trace: None, groups };
        if let Some(t) = trace.as_ref().filter(|t| t.links.is_some()) {
            let cfg = s.to_config();
            t.spec(&cfg.topology.links.iter().map(|l| l.name.as_str()).collect::<Vec<_>>())?;
        }
        s.trace = trace;
        Ok(s)
    }

    /// Valid but questionable settings (e.g. a binomial control that is not TCP-friendly).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = vec![];
        for (gi, g) in self.groups.iter().enumerate() {
            if let GroupKind::Tcp { params, .. } = &g.kind {
                out.extend(params.warnings.iter().map(|w| format!("flows[{gi}].params: {w}")));
            } else if self.path_ecn(g) {
                out.push(format!(
                    "flows[{gi}]: '{}' is not ECN-capable (only TCP flows are): the ECN queue on its path drops its packets where it marks TCP's",
                    g.algorithm
                ));
            }
        }
        out
    }

    /// Number of flows in all groups.
    pub fn flow_count(&self) -> usize {
        self.groups.iter().map(|g| g.count as usize).sum()
    }

    fn graph(&self) -> Option<&GraphDef> {
        match &self.net {
            Net::Graph { def, .. } => Some(def),
            _ => None,
        }
    }

    /// The canonical scenario (every default filled in).
    pub fn normalized(&self) -> Value {
        let t = &self.tcp;
        let mut top = Map::new();
        top.insert("duration".into(), json!(self.duration));
        top.insert("seed".into(), json!(self.seed));
        top.insert("packet_size".into(), json!(self.packet_size));
        top.insert("max_window".into(), json!(self.max_window));
        top.insert("measure".into(), json!({"from": self.measure.0, "to": self.measure.1}));
        top.insert("timeseries".into(), json!(self.timeseries));
        top.insert("loss_log".into(), json!(self.loss_log));
        if self.limits_given {
            top.insert("limits".into(), json!({"memory": self.limits.memory, "access_queue": self.limits.access_queue}));
        }
        if let Some(t) = &self.trace {
            top.insert("trace".into(), t.normalized());
        }
        match &self.net {
            Net::Dumbbell { def, queue } => {
                let mut b = Map::new();
                b.insert("rate".into(), json!(def.rate));
                b.insert("delay".into(), json!(def.delay));
                queue.normalized(&mut b);
                top.insert("bottleneck".into(), Value::Object(b));
            }
            Net::Graph { def, queues } => {
                top.insert("nodes".into(), json!(def.nodes.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()));
                let links: Vec<Value> = def
                    .links
                    .iter()
                    .zip(queues)
                    .map(|(l, (q, _))| {
                        let mut m = Map::new();
                        m.insert("name".into(), json!(l.name));
                        m.insert("from".into(), json!(def.nodes[l.from]));
                        m.insert("to".into(), json!(def.nodes[l.to]));
                        m.insert("rate".into(), json!(l.rate));
                        m.insert("delay".into(), json!(l.delay));
                        m.insert("duplex".into(), json!(l.duplex));
                        q.normalized(&mut m);
                        Value::Object(m)
                    })
                    .collect();
                top.insert("links".into(), json!(links));
            }
        }
        let mut tcp = json!({
            "initial_window": t.initial_window, "tick": t.tick, "min_rto": t.min_rto, "initial_rto": t.initial_rto,
            "max_rto": t.max_rto, "max_backoff": t.max_backoff, "delayed_ack": t.delayed_ack,
            "delack_timeout": t.delack_timeout, "ack_size": t.ack_size, "header_size": t.header_size,
            "dupthresh": t.dupthresh, "limited_transmit": t.limited_transmit,
        });
        // Shown only when set (as [limits]): the results of scenarios without it are unchanged.
        t.echo_options(&mut tcp);
        top.insert("tcp".into(), tcp);
        top.insert("flows".into(), json!(self.groups.iter().map(|g| g.normalized(self.graph())).collect::<Vec<_>>()));
        Value::Object(top)
    }

    fn resolve_flows(&self) -> Vec<ResolvedFlow> {
        let mut out = Vec::with_capacity(self.flow_count());
        let mut id = 0u32;
        for (gi, g) in self.groups.iter().enumerate() {
            for k in 0..g.count {
                let mut rng = Rng::stream(self.seed, "start", id as u64);
                let start = g.start.random(k, &mut rng);
                let stop = g.stop.as_ref().map(|s| s.random(k, &mut Rng::stream(self.seed, "stop", id as u64)));
                let (access_delay, receiver_delay) = g.delays(k);
                out.push(ResolvedFlow { id, group: gi as u32, access_delay, receiver_delay, start, stop });
                id += 1;
            }
        }
        out
    }

    fn group_flows(&self, groups: &Option<Vec<u32>>) -> Option<Vec<bool>> {
        groups.as_ref().map(|gs| {
            let mut v = vec![];
            for (gi, g) in self.groups.iter().enumerate() {
                v.extend(std::iter::repeat_n(gs.contains(&(gi as u32)), g.count as usize));
            }
            v
        })
    }

    fn attach(&self, q: &QueueDef) -> Option<LossAttach> {
        q.loss.as_ref().map(|l| LossAttach { spec: l.spec.clone(), flows: self.group_flows(&l.groups), include_acks: l.include_acks })
    }

    /// The engine configuration for this scenario.
    pub fn to_config(&self) -> SimConfig {
        let rf = self.resolve_flows();
        let (topology, routes) = match &self.net {
            Net::Dumbbell { def, queue } => {
                let spec = queue.spec.clone();
                let db = Dumbbell { rate_bps: def.rate, delay: secs(def.delay), queue: spec.clone(), reverse_queue: spec, loss: self.attach(queue) };
                let attach: Vec<DumbbellFlow> = rf
                    .iter()
                    .map(|f| {
                        let g = &self.groups[f.group as usize];
                        DumbbellFlow { access_delay: secs(f.access_delay), receiver_delay: secs(f.receiver_delay), access_rate_bps: g.access_rate, reverse: g.reverse }
                    })
                    .collect();
                db.build(&attach)
            }
            Net::Graph { def, queues } => self.build_graph(def, queues, &rf),
        };
        let t = &self.tcp;
        let ecn = |r: &Route| r.fwd.iter().any(|&l| topology.links[l as usize].queue.ecn());
        let flows = rf
            .iter()
            .zip(routes)
            .map(|(f, route)| {
                let g = &self.groups[f.group as usize];
                let kind = match &g.kind {
                    GroupKind::Tcp { params, recovery, external } => FlowKind::Tcp {
                        params: params.clone(),
                        external: external.clone(),
                        recovery: *recovery,
                        tcp: TcpParams {
                            initial_window: t.initial_window as f64,
                            tick: t.tick,
                            min_rto: t.min_rto,
                            max_rto: t.max_rto,
                            initial_rto: t.initial_rto,
                            max_backoff: t.max_backoff,
                            max_window: self.max_window.unwrap_or(Limits::WINDOW) as f64,
                            packet_size: self.packet_size,
                            header_size: t.header_size,
                            ecn: ecn(&route),
                            dupthresh: t.dupthresh,
                            limited_transmit: t.limited_transmit,
                            precise_reduce: t.precise_reduce,
                            ns2_agent: t.ns2_agent,
                            clock_phase: Rng::stream(self.seed, "clock", f.id as u64).range(0.0, t.tick),
                            rtt_noise: g.rtt_noise,
                            log_losses: self.loss_log,
                        },
                        ack_size: t.ack_size,
                        delayed_ack: t.delayed_ack,
                        delack_timeout: secs(t.delack_timeout),
                    },
                    GroupKind::Rate { params } => FlowKind::Rate { params: params.clone(), size: self.packet_size + t.header_size, payload: self.packet_size, ack_size: t.ack_size },
                    GroupKind::Udp { pattern, packet_size } => FlowKind::Udp { size: packet_size.unwrap_or(self.packet_size), pattern: pattern.clone() },
                };
                FlowSpec {
                    group: f.group,
                    route,
                    start: secs(f.start),
                    stop: f.stop.map(secs),
                    kind,
                    algorithm: g.algorithm.clone(),
                    direction: if g.reverse { "reverse".into() } else { "forward".into() },
                }
            })
            .collect();
        let trace = self.trace.as_ref().map(|t| {
            let names: Vec<&str> = topology.links.iter().map(|l| l.name.as_str()).collect();
            t.spec(&names).expect("trace.links checked when the scenario was read")
        });
        SimConfig {
            seed: self.seed,
            duration: secs(self.duration),
            measure: Window { from: secs(self.measure.0), to: secs(self.measure.1) },
            topology,
            flows,
            timeseries: self.timeseries.map(secs),
            limits: self.limits,
            trace,
            loss_log: self.loss_log,
        }
    }

    fn build_graph(&self, def: &GraphDef, queues: &[(QueueDef, Option<QueueDef>)], rf: &[ResolvedFlow]) -> (Topology, Vec<Route>) {
        let mut t = Topology::default();
        for n in &def.nodes {
            t.add_node(n.clone());
        }
        // Router links: forward and (if duplex) reverse, by graph link index.
        let mut ids: Vec<(LinkId, Option<LinkId>)> = vec![];
        for (l, (fq, rq)) in def.links.iter().zip(queues) {
            let f = t.add_link(l.name.clone(), l.from as u32, l.to as u32, l.rate, secs(l.delay), fq.spec.clone(), true);
            t.links[f as usize].loss = self.attach(fq);
            let r = rq.as_ref().map(|q| t.add_link(format!("{}_reverse", l.name), l.to as u32, l.from as u32, l.rate, secs(l.delay), q.spec.clone(), true));
            ids.push((f, r));
        }
        let hop = |a: usize, b: usize| -> LinkId {
            let (i, rev) = def.edge(a, b).expect("validated path");
            if rev { ids[i].1.expect("duplex") } else { ids[i].0 }
        };
        let mut routes = vec![];
        for f in rf {
            let g = &self.groups[f.group as usize];
            let RouteDef::Path(p) = &g.route else { unreachable!("graph flows have paths") };
            let (first, last) = (p[0] as u32, *p.last().unwrap() as u32);
            let s = t.add_node(format!("s{}", f.id));
            let d = t.add_node(format!("d{}", f.id));
            let s_up = t.add_link(format!("s{}_up", f.id), s, first, g.access_rate, secs(f.access_delay), QueueSpec::Unlimited, false);
            let s_down = t.add_link(format!("s{}_down", f.id), first, s, g.access_rate, secs(f.access_delay), QueueSpec::Unlimited, false);
            let d_down = t.add_link(format!("d{}_down", f.id), last, d, g.access_rate, secs(f.receiver_delay), QueueSpec::Unlimited, false);
            let d_up = t.add_link(format!("d{}_up", f.id), d, last, g.access_rate, secs(f.receiver_delay), QueueSpec::Unlimited, false);
            let mut fwd = vec![s_up];
            fwd.extend(p.windows(2).map(|w| hop(w[0], w[1])));
            fwd.push(d_down);
            let rev = if matches!(g.kind, GroupKind::Tcp { .. } | GroupKind::Rate { .. }) {
                let mut rev = vec![d_up];
                rev.extend(p.windows(2).rev().map(|w| hop(w[1], w[0])));
                rev.push(s_down);
                rev
            } else {
                vec![]
            };
            routes.push(Route { fwd, rev });
        }
        (t, routes)
    }

    /// The normalised scenario plus every per-flow resolved value (for exporters such as
    /// ns-2's): what a run of this scenario with this seed simulates.
    pub fn expanded(&self) -> Value {
        let t = &self.tcp;
        let flows: Vec<Value> = self
            .resolve_flows()
            .iter()
            .map(|f| {
                let g = &self.groups[f.group as usize];
                let mut m = Map::new();
                m.insert("id".into(), json!(f.id));
                m.insert("group".into(), json!(f.group));
                match &g.kind {
                    GroupKind::Tcp { params, recovery, external } => {
                        m.insert("kind".into(), json!("tcp"));
                        m.insert("algorithm".into(), json!(g.algorithm));
                        m.insert("params".into(), external.clone().unwrap_or_else(|| params.to_json()));
                        m.insert("recovery".into(), json!(recovery.name()));
                        m.insert("rtt_noise_s".into(), json!(g.rtt_noise));
                    }
                    GroupKind::Rate { params } => {
                        m.insert("kind".into(), json!("rate"));
                        m.insert("algorithm".into(), json!(g.algorithm));
                        m.insert("params".into(), params.to_json());
                    }
                    GroupKind::Udp { pattern, packet_size } => {
                        m.insert("kind".into(), json!(g.algorithm));
                        m.insert("algorithm".into(), json!(g.algorithm));
                        m.insert("params".into(), json!({}));
                        let udp = match pattern {
                            crate::transport::UdpPattern::Constant { rate } => json!({"rate_bps": rate, "on_s": null, "off_s": null}),
                            crate::transport::UdpPattern::SquareWave { rate, wave } => json!({"rate_bps": rate, "on_s": wave.on, "off_s": wave.off, "phase_s": wave.phase}),
                            crate::transport::UdpPattern::Steps { steps, repeat } => json!({"steps": steps, "repeat_s": repeat}),
                            crate::transport::UdpPattern::ParetoOnOff { rate, mean_on, mean_off, shape } => json!({"rate_bps": rate, "mean_on_s": mean_on, "mean_off_s": mean_off, "shape": shape}),
                        };
                        let mut udp = udp;
                        udp["packet_size"] = json!(packet_size.unwrap_or(self.packet_size));
                        m.insert(g.algorithm.clone(), udp);
                    }
                }
                m.insert("direction".into(), json!(if g.reverse { "reverse" } else { "forward" }));
                if let (RouteDef::Path(p), Some(gr)) = (&g.route, self.graph()) {
                    m.insert("path".into(), json!(p.iter().map(|&i| gr.nodes[i].clone()).collect::<Vec<_>>()));
                }
                m.insert("access_delay_s".into(), json!(f.access_delay));
                m.insert("receiver_delay_s".into(), json!(f.receiver_delay));
                m.insert("access_rate_bps".into(), json!(g.access_rate));
                m.insert("start_s".into(), json!(f.start));
                m.insert("stop_s".into(), json!(f.stop));
                m.insert("ecn".into(), json!(self.flow_ecn(g)));
                Value::Object(m)
            })
            .collect();
        let mut top = Map::new();
        top.insert("seed".into(), json!(self.seed));
        top.insert("duration_s".into(), json!(self.duration));
        top.insert("measure".into(), json!({"from_s": self.measure.0, "to_s": self.measure.1}));
        top.insert("packet_size".into(), json!(self.packet_size));
        top.insert("max_window".into(), json!(self.max_window));
        let mut tcp = json!({"initial_window": t.initial_window, "tick_s": t.tick, "min_rto_s": t.min_rto, "initial_rto_s": t.initial_rto,
                   "max_rto_s": t.max_rto, "max_backoff": t.max_backoff, "delayed_ack": t.delayed_ack,
                   "delack_timeout_s": t.delack_timeout, "ack_size": t.ack_size, "header_size": t.header_size,
                   "dupthresh": t.dupthresh, "limited_transmit": t.limited_transmit});
        t.echo_options(&mut tcp);
        top.insert("tcp".into(), tcp);
        match &self.net {
            Net::Dumbbell { def, queue } => {
                top.insert("bottleneck".into(), queue.expanded(def.rate, def.delay));
            }
            Net::Graph { def, queues } => {
                let links: Vec<Value> = def
                    .links
                    .iter()
                    .zip(queues)
                    .map(|(l, (fq, rq))| {
                        let mut v = fq.expanded(l.rate, l.delay);
                        v["name"] = json!(l.name);
                        v["from"] = json!(def.nodes[l.from]);
                        v["to"] = json!(def.nodes[l.to]);
                        v["reverse"] = rq.as_ref().map_or(Value::Null, |q| q.expanded(l.rate, l.delay));
                        v
                    })
                    .collect();
                top.insert("nodes".into(), json!(def.nodes));
                top.insert("links".into(), json!(links));
            }
        }
        top.insert("flows".into(), json!(flows));
        top.insert("scenario".into(), self.normalized());
        Value::Object(top)
    }

    /// Whether the group's flows are ECN-capable: TCP flows whose path has an ECN queue, as
    /// the engine builds them (`to_config`); rate-based and UDP senders are not, so the ns-2
    /// export leaves their agents' `ecn_` at 0.
    fn flow_ecn(&self, g: &Group) -> bool {
        matches!(g.kind, GroupKind::Tcp { .. }) && self.path_ecn(g)
    }

    /// Whether the group's path has a queue that marks ECN-capable packets.
    fn path_ecn(&self, g: &Group) -> bool {
        match (&self.net, &g.route) {
            (Net::Dumbbell { queue, .. }, _) => queue.spec.ecn(),
            (Net::Graph { def, queues }, RouteDef::Path(p)) => p.windows(2).any(|w| {
                let (i, rev) = def.edge(w[0], w[1]).expect("validated");
                if rev { queues[i].1.as_ref().is_some_and(|q| q.spec.ecn()) } else { queues[i].0.spec.ecn() }
            }),
            _ => false,
        }
    }
}

fn check_loss_groups(field: &str, q: &QueueDef, ngroups: u32) -> Result<(), ScenarioError> {
    if let Some(l) = &q.loss {
        if let Some(g) = l.groups.as_ref().and_then(|gs| gs.iter().find(|&&g| g >= ngroups)) {
            return err(format!("{field}.groups"), format!("flow group {g} does not exist (there are {ngroups})"));
        }
    }
    Ok(())
}

/// Round-trip propagation delay of flow k of a group, excluding the routers' links.
fn edge_rtt(g: &Group, k: u32) -> f64 {
    let (access, receiver) = g.delays(k);
    2.0 * (access + receiver)
}

/// BDP (packets) of the dumbbell: rate × mean round-trip propagation delay of the forward TCP
/// flows (all flows if none).
fn dumbbell_bdp(groups: &[Group], rate: f64, delay: f64, packet_size: u32) -> f64 {
    let mut rtts = vec![];
    for g in groups.iter().filter(|g| !g.reverse && matches!(g.kind, GroupKind::Tcp { .. } | GroupKind::Rate { .. })) {
        rtts.extend((0..g.count).map(|k| edge_rtt(g, k) + 2.0 * delay));
    }
    let rtt = if rtts.is_empty() { 2.0 * delay } else { rtts.iter().sum::<f64>() / rtts.len() as f64 };
    rate * rtt / (8.0 * packet_size as f64)
}

/// For each graph link and direction ([link][reversed?]), the sum and the number of the
/// round-trip propagation delays of the TCP and rate-based flows whose data cross it that way,
/// summed in group order, then flow order (as `Iterator::sum` over that list would: the same
/// start and order, so the same value). One pass over the paths for all links: asked per
/// link, it was links × paths × path length.
fn graph_rtts(def: &GraphDef, groups: &[Group]) -> Vec<[(f64, u64); 2]> {
    let zero = std::iter::empty::<f64>().sum::<f64>();
    let mut acc = vec![[(zero, 0u64); 2]; def.links.len()];
    // The last group counted at each link and direction: a path that crosses one twice counts once.
    let mut seen = vec![[usize::MAX; 2]; def.links.len()];
    for (gi, g) in groups.iter().enumerate().filter(|(_, g)| matches!(g.kind, GroupKind::Tcp { .. } | GroupKind::Rate { .. })) {
        if let RouteDef::Path(p) = &g.route {
            let hops: Vec<(usize, bool)> = p.windows(2).map(|w| def.edge(w[0], w[1]).expect("validated path")).collect();
            let path_delay = hops.iter().map(|&(li, _)| def.links[li].delay).sum::<f64>();
            for &(li, rev) in &hops {
                if std::mem::replace(&mut seen[li][rev as usize], gi) == gi {
                    continue;
                }
                let a = &mut acc[li][rev as usize];
                for k in 0..g.count {
                    a.0 += edge_rtt(g, k) + 2.0 * path_delay;
                    a.1 += 1;
                }
            }
        }
    }
    acc
}

/// BDP (packets) of graph link `li` in one direction: its rate × the mean round-trip
/// propagation delay of the TCP flows whose data cross it that way (of those crossing it the
/// other way if none; twice its own delay if no flow crosses it). `rtts` is [`graph_rtts`].
fn graph_bdp(def: &GraphDef, rtts: &[[(f64, u64); 2]], li: usize, reversed: bool, packet_size: u32) -> f64 {
    let mean = |rev: bool| {
        let (sum, n) = rtts[li][rev as usize];
        if n == 0 { None } else { Some(sum / n as f64) }
    };
    let l = &def.links[li];
    let rtt = mean(reversed).or_else(|| mean(!reversed)).unwrap_or(2.0 * l.delay);
    l.rate * rtt / (8.0 * packet_size as f64)
}

/// `packet_size` of table `t`: the scenario's (bytes of payload of every data packet) or a UDP
/// group's own (bytes of each of its datagrams); one range for both.
fn packet_size(t: &Table, default: Option<u64>) -> Result<u32, ScenarioError> {
    Ok(t.integer("packet_size", default, 40, 65_535, "bytes per data packet")? as u32)
}

fn tcp_table(v: Option<&Value>) -> Result<TcpTable, ScenarioError> {
    let empty = Value::Object(Map::new());
    let t = Table::new("tcp", v.unwrap_or(&empty))?;
    t.only(&["initial_window", "tick", "min_rto", "initial_rto", "max_rto", "max_backoff", "delayed_ack", "delack_timeout", "ack_size", "header_size", "dupthresh", "limited_transmit", "precise_reduce", "ns2_agent"])?;
    let tcp = TcpTable {
        initial_window: t.integer("initial_window", Some(2), 1, 1000, "packets")? as u32,
        tick: t.with("tick", Some(0.01), |v| units::positive_seconds(v, "RTO clock granularity"))?,
        min_rto: t.with("min_rto", Some(0.2), units::seconds)?,
        initial_rto: t.with("initial_rto", Some(3.0), |v| units::positive_seconds(v, "RTO before the first RTT sample"))?,
        max_rto: t.with("max_rto", Some(60.0), |v| units::positive_seconds(v, "RTO ceiling"))?,
        max_backoff: t.integer("max_backoff", Some(64), 1, 1 << 20, "largest RTO multiplier")? as u32,
        delayed_ack: t.boolean("delayed_ack", false)?,
        delack_timeout: t.with("delack_timeout", Some(0.1), |v| units::positive_seconds(v, "delayed-ACK timer"))?,
        ack_size: t.integer("ack_size", Some(40), 1, 65_535, "bytes")? as u32,
        header_size: t.integer("header_size", Some(40), 0, 65_535, "TCP/IP header bytes added to each data packet on the wire (ns-2's tcpip_base_hdr_size_)")? as u32,
        dupthresh: t.integer("dupthresh", Some(3), 1, 1000, "duplicate ACKs that trigger fast retransmit")? as u32,
        limited_transmit: t.boolean("limited_transmit", true)?,
        precise_reduce: t.boolean("precise_reduce", true)?,
        ns2_agent: t.boolean("ns2_agent", false)?,
    };
    if tcp.max_rto < tcp.min_rto {
        return err("tcp.max_rto", format!("must be at least tcp.min_rto ({} s); got {} s", show_num(tcp.min_rto), show_num(tcp.max_rto)));
    }
    Ok(tcp)
}

/// The `[limits]` table (docs/scenario.md, "Resource limits"), None when absent.
fn limits_table(v: Option<&Value>) -> Result<Option<Limits>, ScenarioError> {
    let Some(v) = v else { return Ok(None) };
    let t = Table::new("limits", v)?;
    t.only(&["memory", "access_queue"])?;
    let d = Limits::default();
    Ok(Some(Limits {
        memory: t.with("memory", Some(d.memory), |v| units::bytes(v, Limits::MIN_MEMORY, Limits::MAX_MEMORY))?,
        access_queue: t.integer("access_queue", Some(d.access_queue as u64), 1, Limits::MAX_PACKETS as u64, "packets an access link holds")? as u32,
    }))
}

/// Refuse a time series of more than [`Limits::TIMESERIES_ROWS`] rows: one per sample and flow
/// and per sample and reported link.
fn check_timeseries_rows(iv: f64, duration: f64, flows: u64, links: u64) -> Result<(), ScenarioError> {
    let samples = (duration / iv).floor();
    let per = (flows + links) as f64;
    if samples * per > Limits::TIMESERIES_ROWS as f64 {
        let max = Limits::TIMESERIES_ROWS;
        return err(
            "timeseries",
            format!(
                "interval {} s gives {} samples x ({flows} flows + {links} links) = {} rows, more than {max}: use an interval of at least {} s",
                show_num(iv),
                show_num(samples),
                show_num(samples * per),
                show_num(duration * per / max as f64)
            ),
        );
    }
    Ok(())
}

fn interval(field: &str, v: &Value, duration: f64) -> Result<f64, ScenarioError> {
    let iv = match v {
        Value::Object(_) => {
            let t = Table::new(field, v)?;
            t.only(&["interval"])?;
            t.with("interval", None, |v| units::positive_seconds(v, "sampling interval"))?
        }
        _ => units::positive_seconds(v, "sampling interval").map_err(|m| ScenarioError { field: field.into(), message: m })?,
    };
    if duration / iv > 1e7 {
        return err(field, format!("interval {} s gives more than 1e7 samples over {} s", show_num(iv), show_num(duration)));
    }
    Ok(iv)
}

#[cfg(test)]
mod tests;
