//! `[[flows]]` groups: what each group runs, where its flows attach, and when they start and
//! stop.

use super::network::GraphDef;
use super::table::{err, Table};
use super::units;
use crate::error::{show_names, show_num};
use super::ScenarioError;
use crate::net::MAX_ROUTE_LINKS;
use crate::cc::{ParamError, Params};
use crate::registry::{self, Entry, Kind};
use crate::sim::Rng;
use crate::transport::{udp, OnOff, Recovery, UdpPattern};
use serde_json::{json, Map, Value};

/// A per-flow quantity: one value, a range, or one value per flow.
#[derive(Clone, Debug, PartialEq)]
pub enum Spread {
    Fixed(f64),
    Range(f64, f64),
    List(Vec<f64>),
}

impl Spread {
    pub fn parse(v: &Value, count: u32) -> Result<Spread, String> {
        match v {
            Value::Array(a) => {
                if a.len() != count as usize {
                    return Err(format!("a list needs one value per flow ({count}); got {} (write a range as \"low..high\")", a.len()));
                }
                Ok(Spread::List(a.iter().map(units::seconds).collect::<Result<_, _>>()?))
            }
            _ => {
                let (lo, hi) = units::seconds_range(v)?;
                Ok(if lo == hi { Spread::Fixed(lo) } else { Spread::Range(lo, hi) })
            }
        }
    }

    pub fn normalized(&self) -> Value {
        match self {
            Spread::Fixed(x) => json!(x),
            Spread::Range(a, b) => json!(format!("{a}..{b}")),
            Spread::List(l) => json!(l),
        }
    }

    pub fn min(&self) -> f64 {
        match self {
            Spread::Fixed(x) => *x,
            Spread::Range(a, _) => *a,
            Spread::List(l) => l.iter().cloned().fold(f64::INFINITY, f64::min),
        }
    }

    pub fn max(&self) -> f64 {
        match self {
            Spread::Fixed(x) => *x,
            Spread::Range(_, b) => *b,
            Spread::List(l) => l.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        }
    }

    /// Value k of n, a range spread evenly (ends included; the midpoint for one flow).
    pub fn evenly(&self, k: u32, n: u32) -> f64 {
        match self {
            Spread::Fixed(x) => *x,
            Spread::Range(lo, hi) if n <= 1 => (lo + hi) / 2.0,
            Spread::Range(lo, hi) => lo + (hi - lo) * k as f64 / (n - 1) as f64,
            Spread::List(l) => l[k as usize],
        }
    }

    /// Value k, a range drawn uniformly from the flow's own stream.
    pub fn random(&self, k: u32, rng: &mut Rng) -> f64 {
        match self {
            Spread::Fixed(x) => *x,
            Spread::Range(lo, hi) => rng.range(*lo, *hi),
            Spread::List(l) => l[k as usize],
        }
    }
}

#[derive(Clone, Debug)]
pub enum GroupKind {
    /// `external`: the parameters as given, for a controller defined outside the registry
    /// (e.g. a Python class); `params` is then empty.
    Tcp { params: Params, recovery: Recovery, external: Option<Value> },
    /// A rate-based sender (TFRC, TFRCP, TEAR).
    Rate { params: Params },
    /// `packet_size`: the group's own bytes per datagram, None for the scenario's.
    Udp { pattern: UdpPattern, packet_size: Option<u32> },
}

#[derive(Clone, Debug)]
pub enum RouteDef {
    /// Through the dumbbell's bottleneck, left to right unless reversed.
    Dumbbell,
    /// Through these routers (node indices), in order.
    Path(Vec<usize>),
}

#[derive(Clone, Debug)]
pub struct Group {
    pub count: u32,
    pub algorithm: String,
    pub kind: GroupKind,
    /// One-way delay of each flow's sender-side access link.
    pub access_delay: Spread,
    pub access_rate: f64,
    /// One-way delay of each flow's receiver-side access link.
    pub receiver_delay: Spread,
    pub start: Spread,
    pub stop: Option<Spread>,
    pub route: RouteDef,
    pub reverse: bool,
    /// σ of the RTT-sample noise (uniform on [0, 2σ]) the controller sees, seconds.
    pub rtt_noise: f64,
}

const FLOW_KEYS: &[&str] = &[
    "count", "algorithm", "recovery", "params", "access_delay", "access_rate", "receiver_delay", "start", "stop",
    "direction", "rate", "on", "off", "phase", "steps", "repeat", "shape", "path", "from", "to", "rtt_noise", "packet_size",
];

/// Parse group `gi`. `graph` is the topology when it is not a dumbbell; `ref_rate` gives the
/// rate that "Nx" multiples refer to for a route (the bottleneck, or the path's first link).
pub fn group(gi: usize, v: &Value, graph: Option<&GraphDef>, dumbbell_rate: f64, duration: f64, external: &[String]) -> Result<Group, ScenarioError> {
    let path = format!("flows[{gi}]");
    let t = Table::new(&path, v)?;
    t.only(FLOW_KEYS)?;
    let count = t.integer("count", Some(1), 0, 100_000, "flows in this group")? as u32;
    let algorithm = t.with("algorithm", Some("tcp".to_string()), |v| v.as_str().map(str::to_string).ok_or_else(|| format!("must be an algorithm name (see `tcpf algorithms`); got {v}")))?;
    let reverse = t.string("direction", "forward", &["forward", "reverse"])? == "reverse";

    let (route, ref_rate) = group_route(&t, &path, graph, dumbbell_rate, reverse)?;
    let (algorithm, kind) = group_kind(&t, &path, algorithm, ref_rate, external)?;
    let access_delay = delay(&t, "access_delay", 0.001, count)?;
    // Default: 10× the reference rate, capped at the largest rate a scenario may state, so
    // that the normalised scenario (which states it) is valid input again.
    let access_rate = t.with("access_rate", Some((10.0 * ref_rate).min(units::MAX_RATE)), |v| units::rate_or_multiple(v, ref_rate))?;
    let receiver_delay = delay(&t, "receiver_delay", 0.0, count)?;
    let (start, stop) = start_stop(&t, count, duration)?;
    let rtt_noise = t.with("rtt_noise", Some(0.0), units::seconds)?;
    Ok(Group { count, algorithm, kind, access_delay, access_rate, receiver_delay, start, stop, route, reverse, rtt_noise })
}

/// A per-flow propagation delay (`access_delay`, `receiver_delay`): a time, a range spread
/// evenly over the group's `count` flows, or a list of one time per flow.
fn delay(t: &Table, key: &str, default: f64, count: u32) -> Result<Spread, ScenarioError> {
    t.with(key, Some(Spread::Fixed(default)), |v| {
        Spread::parse(v, count).map_err(|m| {
            format!("{m}; a delay is a time in [0, 1e7] s (\"5ms\"), a range spread evenly over the group's flows (\"1ms..10ms\") or a list of one time per flow")
        })
    })
}

impl Group {
    /// Flow k's one-way access and receiver delays, seconds: every use of the group's delays
    /// (links, BDP, the expanded scenario) reads them here.
    pub fn delays(&self, k: u32) -> (f64, f64) {
        (self.access_delay.evenly(k, self.count), self.receiver_delay.evenly(k, self.count))
    }
}

/// Where the group's flows go: the route and the rate that "Nx" multiples refer to (the
/// bottleneck, or the path's first link).
fn group_route(t: &Table, path: &str, graph: Option<&GraphDef>, dumbbell_rate: f64, reverse: bool) -> Result<(RouteDef, f64), ScenarioError> {
    match graph {
        None => {
            for k in ["path", "from", "to"] {
                if t.get(k).is_some() {
                    return err(t.field(k), "needs a general topology ([[links]]); the dumbbell routes every flow through its bottleneck");
                }
            }
            Ok((RouteDef::Dumbbell, dumbbell_rate))
        }
        Some(g) => {
            let name_of = |key: &str, v: &Value| -> Result<usize, ScenarioError> {
                let s = v.as_str().ok_or(ScenarioError { field: t.field(key), message: format!("must be a node name; got {v}") })?;
                g.node(s).ok_or(ScenarioError { field: t.field(key), message: format!("unknown node '{s}' (nodes: {})", show_names(&g.nodes)) })
            };
            let mut nodes = match (t.get("path"), t.get("from"), t.get("to")) {
                (Some(Value::Array(a)), None, None) => {
                    if a.len() < 2 {
                        return err(t.field("path"), "needs at least two routers");
                    }
                    let mut p = vec![];
                    for x in a {
                        p.push(name_of("path", x)?);
                    }
                    for w in p.windows(2) {
                        if g.edge(w[0], w[1]).is_none() {
                            return err(t.field("path"), format!("no link from '{}' to '{}'", g.nodes[w[0]], g.nodes[w[1]]));
                        }
                    }
                    p
                }
                (Some(other), None, None) => return err(t.field("path"), format!("must be a list of router names; got {other}")),
                (None, Some(a), Some(b)) => {
                    let (a, b) = (name_of("from", a)?, name_of("to", b)?);
                    if a == b {
                        return err(t.field("to"), format!("must be another router than from ('{}'): a flow crosses at least one link", g.nodes[a]));
                    }
                    g.shortest_path(a, b).ok_or(ScenarioError { field: t.field("to"), message: format!("no route from '{}' to '{}'", g.nodes[a], g.nodes[b]) })?
                }
                (None, None, None) => return err(path.to_string(), "needs path = [routers...] or from/to with a general topology"),
                _ => return err(path.to_string(), "give either path or from and to, not both"),
            };
            // With the flow's two access links, the route must fit a packet's hop count.
            let max = MAX_ROUTE_LINKS - 2;
            if nodes.len() - 1 > max {
                let key = if t.get("path").is_some() { "path" } else { "to" };
                return err(t.field(key), format!("a route crosses at most {max} links between routers (with the flow's two access links, {MAX_ROUTE_LINKS}); this one crosses {}", nodes.len() - 1));
            }
            if reverse {
                nodes.reverse();
                for w in nodes.windows(2) {
                    if g.edge(w[0], w[1]).is_none() {
                        return err(t.field("direction"), format!("no link from '{}' to '{}' for the reversed path", g.nodes[w[0]], g.nodes[w[1]]));
                    }
                }
            }
            let (li, _) = g.edge(nodes[0], nodes[1]).expect("checked above");
            let rate = g.links[li].rate;
            Ok((RouteDef::Path(nodes), rate))
        }
    }
}

/// What the group runs: its canonical algorithm name and kind, validated against the registry
/// (or `external`, the user-defined controllers); `ref_rate` is the rate "Nx" multiples of a
/// UDP source refer to.
fn group_kind(t: &Table, path: &str, algorithm: String, ref_rate: f64, external: &[String]) -> Result<(String, GroupKind), ScenarioError> {
    let entry = registry::resolve(&algorithm);
    let empty = Map::new();
    let given = || match t.get("params") {
        None => Ok(&empty),
        Some(Value::Object(m)) => Ok(m),
        Some(other) => err(t.field("params"), format!("must be a table of parameters; got {other}")),
    };
    let params_error = |e: ParamError| e.under(&format!("{path}.params"));
    if t.get("packet_size").is_some() && entry.map(Entry::kind) != Some(Kind::Udp) {
        // Window and rate-based senders share the scenario's size: the buffer's BDP, RED's
        // mean packet size and the formulas' packets/s all read it.
        return err(t.field("packet_size"), format!("applies to UDP sources ({}) only; '{algorithm}' sends the scenario's packet_size", registry::names(Kind::Udp).join(", ")));
    }
    Ok(match entry.map(Entry::kind) {
        Some(Kind::Rate) => {
            for k in ["recovery", "rtt_noise"].into_iter().chain(udp_pattern_keys()) {
                if t.get(k).is_some() {
                    return err(t.field(k), format!("does not apply to the rate-based scheme '{algorithm}'"));
                }
            }
            let (_, params) = registry::validate(&algorithm, given()?).map_err(params_error)?;
            (params.algorithm.clone(), GroupKind::Rate { params })
        }
        Some(Kind::Udp) => {
            for k in ["recovery", "params", "rtt_noise"] {
                if t.get(k).is_some() {
                    let keys: Vec<&str> = udp::source_keys(&algorithm).iter().map(|k| k.name).collect();
                    return err(
                        t.field(k),
                        format!("does not apply to a UDP source ('{algorithm}'): give its {} as keys of the flow group, e.g. rate = \"2Mbps\" (tcpf algorithms {algorithm})", keys.join(", ")),
                    );
                }
            }
            let pattern = udp_pattern(t, &algorithm, ref_rate)?;
            let packet_size = t.get("packet_size").map(|_| super::packet_size(t, None)).transpose()?;
            (algorithm, GroupKind::Udp { pattern, packet_size })
        }
        _ => {
            for k in udp_pattern_keys() {
                if t.get(k).is_some() {
                    return err(t.field(k), format!("applies to UDP sources ({}) only, not '{algorithm}'", registry::names(Kind::Udp).join(", ")));
                }
            }
            let recovery = match t.string("recovery", "sack", &["reno", "newreno", "newreno-impatient", "sack", "linux"])?.as_str() {
                "reno" => Recovery::Reno,
                "newreno" => Recovery::NewReno,
                "newreno-impatient" => Recovery::NewRenoImpatient,
                "linux" => Recovery::Linux,
                _ => Recovery::Sack,
            };
            let given = given()?;
            if external.contains(&algorithm) {
                let params = Params::opaque(&algorithm);
                (algorithm, GroupKind::Tcp { params, recovery, external: Some(Value::Object(given.clone())) })
            } else {
                let params = registry::validate_window(&algorithm, given).map_err(|e| {
                    if e.field.is_empty() {
                        // The message names the window controllers; add the other kinds.
                        let mut message = format!("{}; rate-based: {}; UDP sources: {}", e.message, registry::names(Kind::Rate).join(", "), registry::names(Kind::Udp).join(", "));
                        if !external.is_empty() {
                            message.push_str(&format!("; user-defined: {}", external.join(", ")));
                        }
                        ScenarioError::new(t.field("algorithm"), message)
                    } else {
                        params_error(e)
                    }
                })?;
                (params.algorithm.clone(), GroupKind::Tcp { params, recovery, external: None })
            }
        }
    })
}

/// When the group's flows start and stop; every flow must start before the end of the run
/// and stop after it starts.
fn start_stop(t: &Table, count: u32, duration: f64) -> Result<(Spread, Option<Spread>), ScenarioError> {
    let start = t.with("start", Some(Spread::Fixed(0.0)), |v| Spread::parse(v, count))?;
    if start.max() >= duration {
        return err(t.field("start"), format!("must be before the end of the run ({} s); got up to {} s", show_num(duration), show_num(start.max())));
    }
    let stop = match t.get("stop") {
        None => None,
        Some(_) => {
            let s = t.with("stop", None, |v| Spread::parse(v, count))?;
            let ok = match (&start, &s) {
                (Spread::List(a), Spread::List(b)) => a.iter().zip(b).all(|(x, y)| y > x),
                (Spread::List(a), _) => s.min() > a.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
                (_, Spread::List(b)) => b.iter().all(|y| *y > start.max()),
                _ => s.min() > start.max(),
            };
            if !ok {
                return err(t.field("stop"), format!("every flow must stop after it starts (start up to {} s)", show_num(start.max())));
            }
            Some(s)
        }
    };
    Ok((start, stop))
}

/// The keys that give a UDP source's pattern (every UDP source's keys but `packet_size`,
/// which has its own check), which no other kind of group takes.
fn udp_pattern_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = vec![];
    for name in registry::names(Kind::Udp) {
        for k in udp::source_keys(name) {
            if k.name != "packet_size" && !keys.contains(&k.name) {
                keys.push(k.name);
            }
        }
    }
    keys
}

fn udp_pattern(t: &Table, algorithm: &str, ref_rate: f64) -> Result<UdpPattern, ScenarioError> {
    let rate_of = |v: &Value| units::rate_or_multiple(v, ref_rate);
    if algorithm == "pareto" {
        for k in ["steps", "repeat", "phase"] {
            if t.get(k).is_some() {
                return err(t.field(k), "does not apply to a Pareto ON/OFF source (rate, on, off, shape)");
            }
        }
        let rate = t.need("rate", "the Pareto source's sending rate while ON, such as \"2Mbps\" or \"0.5x\" (a multiple of the bottleneck's rate)", rate_of)?;
        let mean_on = t.with("on", Some(udp::PARETO_MEAN_ON), units::seconds)?;
        let mean_off = t.with("off", Some(udp::PARETO_MEAN_OFF), units::seconds)?;
        if mean_on <= 0.0 || mean_off <= 0.0 {
            return err(t.field(if mean_on <= 0.0 { "on" } else { "off" }), "mean ON and OFF times must be positive");
        }
        let shape = t.number("shape", Some(udp::PARETO_SHAPE), 1.0 + 1e-9, 100.0, "Pareto shape (> 1 for a finite mean)")?;
        return Ok(UdpPattern::ParetoOnOff { rate, mean_on, mean_off, shape });
    }
    if let Some(steps_v) = t.get("steps") {
        for k in ["rate", "on", "off", "phase"] {
            if t.get(k).is_some() {
                return err(t.field(k), "give either steps (with optional repeat) or rate with on/off, not both");
            }
        }
        let arr = steps_v.as_array().filter(|a| !a.is_empty()).ok_or(ScenarioError { field: t.field("steps"), message: "must be a list of [time, rate] pairs, the first at time 0".into() })?;
        let mut steps = vec![];
        for (i, s) in arr.iter().enumerate() {
            let f = format!("{}[{i}]", t.field("steps"));
            let pair = s.as_array().filter(|p| p.len() == 2).ok_or(ScenarioError { field: f.clone(), message: format!("must be [time, rate]; got {s}") })?;
            let time = units::seconds(&pair[0]).map_err(|m| ScenarioError { field: f.clone(), message: m })?;
            let rate = match &pair[1] {
                Value::Number(n) if n.as_f64() == Some(0.0) => 0.0,
                r => rate_of(r).map_err(|m| ScenarioError { field: f.clone(), message: m })?,
            };
            if i == 0 && time != 0.0 {
                return err(f, "the first step must be at time 0");
            }
            if i > 0 && time <= steps.last().map_or(0.0, |s: &(f64, f64)| s.0) {
                return err(f, "step times must increase");
            }
            steps.push((time, rate));
        }
        let repeat = match t.get("repeat") {
            None => None,
            Some(_) => {
                let p = t.with("repeat", None, units::seconds)?;
                if p <= steps.last().unwrap().0 {
                    return err(t.field("repeat"), format!("the period must be longer than the last step's time ({} s)", show_num(steps.last().unwrap().0)));
                }
                Some(p)
            }
        };
        return Ok(UdpPattern::Steps { steps, repeat });
    }
    if t.get("repeat").is_some() {
        return err(t.field("repeat"), "applies to steps only");
    }
    let rate = t.need("rate", "the CBR source's sending rate (while ON), such as \"2Mbps\" or \"0.5x\" (a multiple of the bottleneck's rate); or steps = [[0, \"2Mbps\"], [10, 0]] for a rate that changes", rate_of)?;
    match (t.get("on"), t.get("off")) {
        (None, None) => {
            if t.get("phase").is_some() {
                return err(t.field("phase"), "needs on and off");
            }
            Ok(UdpPattern::Constant { rate })
        }
        (Some(_), Some(_)) => {
            let on = t.with("on", None, units::seconds)?;
            let off = t.with("off", None, units::seconds)?;
            if on <= 0.0 {
                return err(t.field("on"), "the on period must be positive");
            }
            let phase = t.with("phase", Some(0.0), units::seconds)?;
            Ok(UdpPattern::SquareWave { rate, wave: OnOff { on, off, phase } })
        }
        _ => err(t.field(if t.get("on").is_some() { "off" } else { "on" }), "on and off go together"),
    }
}

impl Group {
    pub fn normalized(&self, graph: Option<&GraphDef>) -> Value {
        let mut m = Map::new();
        m.insert("count".into(), json!(self.count));
        m.insert("algorithm".into(), json!(self.algorithm));
        match &self.kind {
            GroupKind::Tcp { params, recovery, external } => {
                m.insert("recovery".into(), json!(recovery.name()));
                m.insert("params".into(), external.clone().unwrap_or_else(|| params.to_json()));
                m.insert("rtt_noise".into(), json!(self.rtt_noise));
            }
            GroupKind::Rate { params } => {
                m.insert("params".into(), params.to_json());
            }
            GroupKind::Udp { pattern, packet_size } => {
                if let Some(size) = packet_size {
                    m.insert("packet_size".into(), json!(size));
                }
                match pattern {
                    UdpPattern::Constant { rate } => {
                        m.insert("rate".into(), json!(rate));
                    }
                    UdpPattern::SquareWave { rate, wave } => {
                        m.insert("rate".into(), json!(rate));
                        m.insert("on".into(), json!(wave.on));
                        m.insert("off".into(), json!(wave.off));
                        m.insert("phase".into(), json!(wave.phase));
                    }
                    UdpPattern::Steps { steps, repeat } => {
                        m.insert("steps".into(), json!(steps.iter().map(|(t, r)| json!([t, r])).collect::<Vec<_>>()));
                        m.insert("repeat".into(), json!(repeat));
                    }
                    UdpPattern::ParetoOnOff { rate, mean_on, mean_off, shape } => {
                        m.insert("rate".into(), json!(rate));
                        m.insert("on".into(), json!(mean_on));
                        m.insert("off".into(), json!(mean_off));
                        m.insert("shape".into(), json!(shape));
                    }
                }
            }
        }
        if let (RouteDef::Path(p), Some(g)) = (&self.route, graph) {
            // The resolved path, in the data direction as given (before `direction`).
            let mut nodes: Vec<&str> = p.iter().map(|&i| g.nodes[i].as_str()).collect();
            if self.reverse {
                nodes.reverse();
            }
            m.insert("path".into(), json!(nodes));
        }
        m.insert("access_delay".into(), self.access_delay.normalized());
        m.insert("access_rate".into(), json!(self.access_rate));
        m.insert("receiver_delay".into(), self.receiver_delay.normalized());
        m.insert("start".into(), self.start.normalized());
        m.insert("stop".into(), self.stop.as_ref().map_or(Value::Null, Spread::normalized));
        m.insert("direction".into(), json!(if self.reverse { "reverse" } else { "forward" }));
        Value::Object(m)
    }
}
