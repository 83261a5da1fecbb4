//! Scenario files: what a user writes (TOML, or the same structure as JSON from Python),
//! validated field by field with errors that name the field and the allowed range, every
//! default filled in (and cited), and resolved into an engine `SimConfig`.
//!
//! `normalize` returns the canonical scenario: numbers in SI units (bits/s, seconds,
//! packets), ranges as `[low, high]`, controller parameters in canonical form (β removed).
//! Normalising a normalised scenario returns it unchanged.

pub mod units;

use crate::cc::{self, Params};
use crate::engine::{FlowKind, FlowSpec, SimConfig};
use crate::net::loss::LossSpec;
use crate::net::queue::{QueueSpec, RedParams};
use crate::net::topology::{Dumbbell, DumbbellFlow};
use crate::sim::{secs, Rng};
use crate::transport::{OnOff, Recovery, TcpParams, Window};
use serde_json::{json, Map, Value};
use std::fmt;

/// A bad scenario: the dotted path of the field and what is wrong with it.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

fn err<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError { field: field.into(), message: message.into() })
}

/// A table being read: remembers its path and rejects keys it does not know.
struct Table<'a> {
    path: String,
    map: &'a Map<String, Value>,
}

impl<'a> Table<'a> {
    fn new(path: &str, v: &'a Value) -> Result<Self, ScenarioError> {
        match v {
            Value::Object(map) => Ok(Table { path: path.to_string(), map }),
            other => err(path, format!("must be a table; got {other}")),
        }
    }

    fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn only(&self, allowed: &[&str]) -> Result<(), ScenarioError> {
        for k in self.map.keys() {
            if !allowed.contains(&k.as_str()) {
                return err(self.field(k), format!("unknown field (allowed here: {})", allowed.join(", ")));
            }
        }
        Ok(())
    }

    fn with<T>(&self, key: &str, default: Option<T>, f: impl Fn(&Value) -> Result<T, String>) -> Result<T, ScenarioError> {
        match self.get(key) {
            Some(v) => f(v).map_err(|m| ScenarioError { field: self.field(key), message: m }),
            None => match default {
                Some(d) => Ok(d),
                None => err(self.field(key), "is required"),
            },
        }
    }

    fn number(&self, key: &str, default: Option<f64>, lo: f64, hi: f64, what: &str) -> Result<f64, ScenarioError> {
        self.with(key, default, |v| {
            let x = v.as_f64().ok_or_else(|| format!("must be a number ({what}); got {v}"))?;
            if x.is_finite() && x >= lo && x <= hi {
                Ok(x)
            } else {
                Err(format!("must be in [{lo}, {hi}] ({what}); got {x}"))
            }
        })
    }

    fn integer(&self, key: &str, default: Option<u64>, lo: u64, hi: u64, what: &str) -> Result<u64, ScenarioError> {
        self.with(key, default, |v| {
            let x = v.as_f64().ok_or_else(|| format!("must be a whole number ({what}); got {v}"))?;
            if x.fract() != 0.0 || x < lo as f64 || x > hi as f64 {
                return Err(format!("must be a whole number in [{lo}, {hi}] ({what}); got {v}"));
            }
            Ok(x as u64)
        })
    }

    fn boolean(&self, key: &str, default: bool) -> Result<bool, ScenarioError> {
        self.with(key, Some(default), |v| v.as_bool().ok_or_else(|| format!("must be true or false; got {v}")))
    }

    fn string(&self, key: &str, default: &str, allowed: &[&str]) -> Result<String, ScenarioError> {
        self.with(key, Some(default.to_string()), |v| {
            let s = v.as_str().ok_or_else(|| format!("must be one of {}; got {v}", allowed.join(", ")))?;
            if allowed.contains(&s) {
                Ok(s.to_string())
            } else {
                Err(format!("must be one of {}; got '{s}'", allowed.join(", ")))
            }
        })
    }
}

/// Bottleneck queue defaults (jin2001 Table 4): DropTail 1.5·BDP; RED 2.5·BDP with
/// min_th 0.15·limit, max_th 0.5·limit, q_weight 0.002, max_p 0.1, gentle, wait.
const DROPTAIL_LIMIT_BDP: f64 = 1.5;
const RED_LIMIT_BDP: f64 = 2.5;

/// A flow group after validation.
#[derive(Clone, Debug)]
struct Group {
    count: u32,
    algorithm: String,
    kind: GroupKind,
    access_delay: (f64, f64),
    access_rate: f64,
    receiver_delay: f64,
    start: (f64, f64),
    stop: Option<f64>,
    reverse: bool,
}

#[derive(Clone, Debug)]
enum GroupKind {
    Tcp { params: Params, recovery: Recovery },
    Cbr { rate: f64, on_off: Option<OnOff> },
}

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub duration: f64,
    pub seed: u64,
    pub packet_size: u32,
    pub max_window: Option<u32>,
    pub measure: (f64, f64),
    pub rate: f64,
    pub delay: f64,
    pub queue: String,
    pub limit_pkts: u32,
    pub bdp_pkts: f64,
    pub ecn: bool,
    pub red: Option<RedParams>,
    pub loss: Option<LossSpec>,
    pub tcp: TcpTable,
    pub timeseries: Option<f64>,
    groups: Vec<Group>,
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
}

const TOP_KEYS: &[&str] = &["duration", "seed", "packet_size", "max_window", "measure", "bottleneck", "tcp", "flows", "timeseries", "name", "description"];

impl Scenario {
    /// Validate a scenario given as a JSON value (a parsed TOML file has the same shape).
    pub fn from_value(v: &Value) -> Result<Scenario, ScenarioError> {
        let top = Table::new("", v)?;
        top.only(TOP_KEYS)?;
        let duration = top.with("duration", None, |v| {
            let d = units::seconds(v)?;
            if d > 0.0 && d <= 1e7 { Ok(d) } else { Err(format!("must be in (0, 1e7] seconds; got {d}")) }
        })?;
        let seed = top.integer("seed", Some(1), 0, u64::MAX >> 11, "random seed")?;
        let packet_size = top.integer("packet_size", Some(1000), 40, 65_535, "bytes")? as u32;
        let max_window = match top.get("max_window") {
            None => None,
            Some(_) => Some(top.integer("max_window", None, 1, 1 << 24, "packets, receiver window cap")? as u32),
        };
        let measure = match top.get("measure") {
            None => (0.0, duration),
            Some(m) => {
                let t = Table::new("measure", m)?;
                t.only(&["from", "to"])?;
                let from = t.with("from", Some(0.0), units::seconds)?;
                let to = t.with("to", Some(duration), units::seconds)?;
                if from >= to {
                    return err("measure.to", format!("must be after measure.from ({from} s); got {to} s"));
                }
                if to > duration + 1e-9 {
                    return err("measure.to", format!("must not be after the end of the run ({duration} s); got {to} s"));
                }
                (from, to)
            }
        };
        let timeseries = match top.get("timeseries") {
            None => None,
            Some(v) => Some(interval("timeseries", v, duration)?),
        };

        // [tcp]
        let empty = Value::Object(Map::new());
        let tcp_v = top.get("tcp").unwrap_or(&empty);
        let t = Table::new("tcp", tcp_v)?;
        t.only(&["initial_window", "tick", "min_rto", "initial_rto", "max_rto", "max_backoff", "delayed_ack", "delack_timeout", "ack_size", "header_size", "dupthresh", "limited_transmit"])?;
        let tcp = TcpTable {
            initial_window: t.integer("initial_window", Some(2), 1, 1000, "packets")? as u32,
            tick: t.with("tick", Some(0.01), |v| positive_seconds(v, "RTO clock granularity"))?,
            min_rto: t.with("min_rto", Some(0.2), units::seconds)?,
            initial_rto: t.with("initial_rto", Some(3.0), |v| positive_seconds(v, "RTO before the first RTT sample"))?,
            max_rto: t.with("max_rto", Some(60.0), |v| positive_seconds(v, "RTO ceiling"))?,
            max_backoff: t.integer("max_backoff", Some(64), 1, 1 << 20, "largest RTO multiplier")? as u32,
            delayed_ack: t.boolean("delayed_ack", false)?,
            delack_timeout: t.with("delack_timeout", Some(0.1), |v| positive_seconds(v, "delayed-ACK timer"))?,
            ack_size: t.integer("ack_size", Some(40), 1, 65_535, "bytes")? as u32,
            header_size: t.integer("header_size", Some(40), 0, 65_535, "TCP/IP header bytes added to each data packet on the wire (ns-2's tcpip_base_hdr_size_)")? as u32,
            limited_transmit: t.boolean("limited_transmit", true)?,
            dupthresh: t.integer("dupthresh", Some(3), 1, 1000, "duplicate ACKs that trigger fast retransmit")? as u32,
        };
        if tcp.max_rto < tcp.min_rto {
            return err("tcp.max_rto", format!("must be at least tcp.min_rto ({} s); got {} s", tcp.min_rto, tcp.max_rto));
        }

        // [bottleneck]
        let b_v = top.get("bottleneck").ok_or(ScenarioError { field: "bottleneck".into(), message: "is required (a table with at least rate and delay)".into() })?;
        let b = Table::new("bottleneck", b_v)?;
        b.only(&["rate", "delay", "queue", "limit", "ecn", "red", "loss"])?;
        let rate = b.with("rate", None, units::rate)?;
        let delay = b.with("delay", None, units::seconds)?;
        let queue = b.string("queue", "droptail", &["droptail", "red"])?;
        let ecn = b.boolean("ecn", false)?;
        if ecn && queue != "red" {
            return err("bottleneck.ecn", "ECN marking needs queue = \"red\"");
        }
        let loss = match b.get("loss") {
            None => None,
            Some(v) => Some(loss_spec(v)?),
        };

        // [[flows]]
        let flows_v = top.get("flows").ok_or(ScenarioError { field: "flows".into(), message: "is required: at least one [[flows]] group".into() })?;
        let arr = flows_v.as_array().ok_or(ScenarioError { field: "flows".into(), message: "must be a list of [[flows]] tables".into() })?;
        if arr.is_empty() {
            return err("flows", "needs at least one flow group");
        }
        let mut groups = Vec::with_capacity(arr.len());
        for (gi, g) in arr.iter().enumerate() {
            groups.push(group(gi, g, rate, duration)?);
        }
        let total: u64 = groups.iter().map(|g| g.count as u64).sum();
        if total > 100_000 {
            return err("flows", format!("at most 100000 flows in all; got {total}"));
        }

        // Buffer sizes relative to the BDP of the forward flows' mean propagation RTT.
        let bdp_pkts = bdp_packets(&groups, rate, delay, packet_size);
        let limit_default = if queue == "red" { RED_LIMIT_BDP } else { DROPTAIL_LIMIT_BDP };
        let limit_pkts = b.with("limit", Some(limit_default * bdp_pkts), |v| match units::size(v)? {
            units::Size::Packets(p) if p.is_finite() && p >= 1.0 && p.fract() == 0.0 => Ok(p),
            units::Size::Packets(p) => Err(format!("must be a whole number of packets >= 1; got {p}")),
            units::Size::Bdp(x) if x.is_finite() && x > 0.0 => Ok(x * bdp_pkts),
            units::Size::Bdp(x) => Err(format!("must be a positive multiple of the BDP; got {x}")),
        })?;
        let limit_pkts = (limit_pkts.round() as u32).max(2);
        let red = if queue == "red" {
            Some(red_params(b.get("red"), limit_pkts as f64, ecn, packet_size)?)
        } else {
            if b.get("red").is_some() {
                return err("bottleneck.red", "RED parameters need queue = \"red\"");
            }
            None
        };
        Ok(Scenario { duration, seed, packet_size, max_window, measure, rate, delay, queue, limit_pkts, bdp_pkts, ecn, red, loss, tcp, timeseries, groups })
    }

    /// Number of flows in all groups.
    pub fn flow_count(&self) -> usize {
        self.groups.iter().map(|g| g.count as usize).sum()
    }

    /// The canonical scenario (every default filled in).
    pub fn normalized(&self) -> Value {
        let red = self.red.as_ref().map(|r| {
            json!({"min_th": r.min_th, "max_th": r.max_th, "q_weight": r.q_weight, "max_p": r.max_p,
                   "gentle": r.gentle, "wait": r.wait, "mark_p": r.mark_p})
        });
        let flows: Vec<Value> = self
            .groups
            .iter()
            .map(|g| {
                let mut m = Map::new();
                m.insert("count".into(), json!(g.count));
                m.insert("algorithm".into(), json!(g.algorithm));
                match &g.kind {
                    GroupKind::Tcp { params, recovery } => {
                        m.insert("recovery".into(), json!(recovery.name()));
                        m.insert("params".into(), params.to_json());
                    }
                    GroupKind::Cbr { rate, on_off } => {
                        m.insert("rate".into(), json!(rate));
                        m.insert("on".into(), on_off.map_or(Value::Null, |o| json!(o.on)));
                        m.insert("off".into(), on_off.map_or(Value::Null, |o| json!(o.off)));
                    }
                }
                m.insert("access_delay".into(), json!([g.access_delay.0, g.access_delay.1]));
                m.insert("access_rate".into(), json!(g.access_rate));
                m.insert("receiver_delay".into(), json!(g.receiver_delay));
                m.insert("start".into(), json!([g.start.0, g.start.1]));
                m.insert("stop".into(), g.stop.map_or(Value::Null, |s| json!(s)));
                m.insert("direction".into(), json!(if g.reverse { "reverse" } else { "forward" }));
                Value::Object(m)
            })
            .collect();
        let t = &self.tcp;
        json!({
            "duration": self.duration,
            "seed": self.seed,
            "packet_size": self.packet_size,
            "max_window": self.max_window,
            "measure": {"from": self.measure.0, "to": self.measure.1},
            "timeseries": self.timeseries,
            "bottleneck": {
                "rate": self.rate, "delay": self.delay, "queue": self.queue, "limit": self.limit_pkts,
                "ecn": self.ecn, "red": red, "loss": self.loss.as_ref().map(|l| serde_json::to_value(l).unwrap()),
            },
            "tcp": {
                "initial_window": t.initial_window, "tick": t.tick, "min_rto": t.min_rto, "initial_rto": t.initial_rto,
                "max_rto": t.max_rto, "max_backoff": t.max_backoff, "delayed_ack": t.delayed_ack,
                "delack_timeout": t.delack_timeout, "ack_size": t.ack_size, "header_size": t.header_size,
                "dupthresh": t.dupthresh, "limited_transmit": t.limited_transmit,
            },
            "flows": flows,
        })
    }

    /// Per-flow resolved values: (group, spec, access delay, receiver delay, access rate, start).
    fn resolve_flows(&self) -> Vec<ResolvedFlow> {
        let mut out = Vec::with_capacity(self.flow_count());
        let mut id = 0u64;
        for (gi, g) in self.groups.iter().enumerate() {
            for k in 0..g.count {
                let access_delay = spread(g.access_delay, k, g.count);
                let start = if g.start.1 > g.start.0 {
                    Rng::stream(self.seed, "start", id).range(g.start.0, g.start.1)
                } else {
                    g.start.0
                };
                out.push(ResolvedFlow { id: id as u32, group: gi as u32, access_delay, start, g: g.clone() });
                id += 1;
            }
        }
        out
    }

    /// The engine configuration for this scenario.
    pub fn to_config(&self) -> SimConfig {
        let rf = self.resolve_flows();
        let queue_spec = match &self.red {
            Some(r) => QueueSpec::Red { limit: self.limit_pkts, params: r.clone() },
            None => QueueSpec::DropTail { limit: self.limit_pkts },
        };
        let db = Dumbbell { rate_bps: self.rate, delay: secs(self.delay), queue: queue_spec.clone(), reverse_queue: queue_spec, loss: self.loss.clone() };
        let attach: Vec<DumbbellFlow> = rf
            .iter()
            .map(|f| DumbbellFlow { access_delay: secs(f.access_delay), receiver_delay: secs(f.g.receiver_delay), access_rate_bps: f.g.access_rate, reverse: f.g.reverse })
            .collect();
        let (topology, routes) = db.build(&attach);
        let t = &self.tcp;
        let flows = rf
            .iter()
            .zip(routes)
            .map(|(f, route)| {
                let kind = match &f.g.kind {
                    GroupKind::Tcp { params, recovery } => FlowKind::Tcp {
                        params: params.clone(),
                        recovery: *recovery,
                        tcp: TcpParams {
                            initial_window: t.initial_window as f64,
                            tick: t.tick,
                            min_rto: t.min_rto,
                            max_rto: t.max_rto,
                            initial_rto: t.initial_rto,
                            max_backoff: t.max_backoff,
                            max_window: self.max_window.map_or(f64::INFINITY, |w| w as f64),
                            packet_size: self.packet_size,
                            header_size: t.header_size,
                            ecn: self.ecn,
                            dupthresh: t.dupthresh,
                            limited_transmit: t.limited_transmit,
                            clock_phase: Rng::stream(self.seed, "clock", f.id as u64).range(0.0, t.tick),
                        },
                        ack_size: t.ack_size,
                        delayed_ack: t.delayed_ack,
                        delack_timeout: secs(t.delack_timeout),
                    },
                    GroupKind::Cbr { rate, on_off } => FlowKind::Cbr { rate_bps: *rate, size: self.packet_size, on_off: *on_off },
                };
                FlowSpec {
                    group: f.group,
                    route,
                    start: secs(f.start),
                    stop: f.g.stop.map(secs),
                    kind,
                    algorithm: f.g.algorithm.clone(),
                    direction: if f.g.reverse { "reverse".into() } else { "forward".into() },
                }
            })
            .collect();
        SimConfig {
            seed: self.seed,
            duration: secs(self.duration),
            measure: Window { from: secs(self.measure.0), to: secs(self.measure.1) },
            topology,
            flows,
            timeseries: self.timeseries.map(secs),
        }
    }

    /// The normalised scenario plus every per-flow resolved value (for exporters such as
    /// ns-2's): what a run of this scenario with this seed simulates.
    pub fn expanded(&self) -> Value {
        let t = &self.tcp;
        let flows: Vec<Value> = self
            .resolve_flows()
            .iter()
            .map(|f| {
                let mut m = Map::new();
                m.insert("id".into(), json!(f.id));
                m.insert("group".into(), json!(f.group));
                match &f.g.kind {
                    GroupKind::Tcp { params, recovery } => {
                        m.insert("kind".into(), json!("tcp"));
                        m.insert("algorithm".into(), json!(f.g.algorithm));
                        m.insert("params".into(), params.to_json());
                        m.insert("recovery".into(), json!(recovery.name()));
                    }
                    GroupKind::Cbr { rate, on_off } => {
                        m.insert("kind".into(), json!("cbr"));
                        m.insert("algorithm".into(), json!("cbr"));
                        m.insert("params".into(), json!({}));
                        m.insert("cbr".into(), json!({"rate_bps": rate, "on_s": on_off.map(|o| o.on), "off_s": on_off.map(|o| o.off)}));
                    }
                }
                m.insert("direction".into(), json!(if f.g.reverse { "reverse" } else { "forward" }));
                m.insert("access_delay_s".into(), json!(f.access_delay));
                m.insert("receiver_delay_s".into(), json!(f.g.receiver_delay));
                m.insert("access_rate_bps".into(), json!(f.g.access_rate));
                m.insert("start_s".into(), json!(f.start));
                m.insert("stop_s".into(), json!(f.g.stop));
                m.insert("ecn".into(), json!(self.ecn));
                Value::Object(m)
            })
            .collect();
        let red = self.red.as_ref().map(|r| {
            json!({"min_th_pkts": r.min_th, "max_th_pkts": r.max_th, "q_weight": r.q_weight, "max_p": r.max_p,
                   "gentle": r.gentle, "wait": r.wait, "mark_p": r.mark_p, "mean_pkt_size": r.mean_pkt_size})
        });
        json!({
            "seed": self.seed,
            "duration_s": self.duration,
            "measure": {"from_s": self.measure.0, "to_s": self.measure.1},
            "packet_size": self.packet_size,
            "max_window": self.max_window,
            "tcp": {"initial_window": t.initial_window, "tick_s": t.tick, "min_rto_s": t.min_rto, "initial_rto_s": t.initial_rto,
                    "max_rto_s": t.max_rto, "max_backoff": t.max_backoff, "delayed_ack": t.delayed_ack,
                    "delack_timeout_s": t.delack_timeout, "ack_size": t.ack_size, "header_size": t.header_size,
                    "dupthresh": t.dupthresh, "limited_transmit": t.limited_transmit},
            "bottleneck": {"rate_bps": self.rate, "delay_s": self.delay, "queue": self.queue, "limit_pkts": self.limit_pkts,
                           "bdp_pkts": self.bdp_pkts, "ecn": self.ecn, "red": red,
                           "loss": self.loss.as_ref().map(|l| serde_json::to_value(l).unwrap())},
            "flows": flows,
            "scenario": self.normalized(),
        })
    }
}

struct ResolvedFlow {
    id: u32,
    group: u32,
    access_delay: f64,
    start: f64,
    g: Group,
}

/// Value k of n spread evenly over [lo, hi] (ends included; the midpoint for one flow).
fn spread((lo, hi): (f64, f64), k: u32, n: u32) -> f64 {
    if n <= 1 || hi == lo {
        if n <= 1 { (lo + hi) / 2.0 } else { lo }
    } else {
        lo + (hi - lo) * k as f64 / (n - 1) as f64
    }
}

fn bdp_packets(groups: &[Group], rate: f64, delay: f64, packet_size: u32) -> f64 {
    let mut sum = 0.0;
    let mut n = 0.0;
    for g in groups.iter().filter(|g| !g.reverse && matches!(g.kind, GroupKind::Tcp { .. })) {
        for k in 0..g.count {
            sum += 2.0 * (spread(g.access_delay, k, g.count) + delay + g.receiver_delay);
            n += 1.0;
        }
    }
    let rtt = if n > 0.0 { sum / n } else { 2.0 * delay };
    rate * rtt / (8.0 * packet_size as f64)
}

fn positive_seconds(v: &Value, what: &str) -> Result<f64, String> {
    let t = units::seconds(v)?;
    if t > 0.0 { Ok(t) } else { Err(format!("must be a positive time ({what}); got {t}")) }
}

fn interval(field: &str, v: &Value, duration: f64) -> Result<f64, ScenarioError> {
    let iv = match v {
        Value::Object(_) => {
            let t = Table::new(field, v)?;
            t.only(&["interval"])?;
            t.with("interval", None, |v| positive_seconds(v, "sampling interval"))?
        }
        _ => positive_seconds(v, "sampling interval").map_err(|m| ScenarioError { field: field.into(), message: m })?,
    };
    if duration / iv > 1e7 {
        return err(field, format!("interval {iv} s gives more than 1e7 samples over {duration} s"));
    }
    Ok(iv)
}

fn loss_spec(v: &Value) -> Result<LossSpec, ScenarioError> {
    let t = Table::new("bottleneck.loss", v)?;
    let model = t.string("model", "bernoulli", &["bernoulli"])?;
    match model.as_str() {
        _ => {
            t.only(&["model", "p"])?;
            let p = t.number("p", None, 0.0, 1.0, "loss probability per packet")?;
            Ok(LossSpec::Bernoulli { p })
        }
    }
}

fn red_params(v: Option<&Value>, limit: f64, ecn: bool, packet_size: u32) -> Result<RedParams, ScenarioError> {
    let empty = Value::Object(Map::new());
    let t = Table::new("bottleneck.red", v.unwrap_or(&empty))?;
    t.only(&["min_th", "max_th", "q_weight", "max_p", "gentle", "wait", "mark_p"])?;
    let min_th = t.with("min_th", Some(0.15 * limit), |v| units::threshold(v, limit))?;
    let max_th = t.with("max_th", Some(0.5 * limit), |v| units::threshold(v, limit))?;
    let max_p = t.number("max_p", Some(0.1), 1e-9, 1.0, "drop probability at max_th")?;
    let p = RedParams {
        min_th,
        max_th,
        q_weight: t.number("q_weight", Some(0.002), 1e-9, 1.0, "EWMA weight of the average queue")?,
        max_p,
        gentle: t.boolean("gentle", true)?,
        wait: t.boolean("wait", true)?,
        ecn,
        // Default: mark below max_th, drop in the gentle region (ns-2's mark_p_ with max_p 0.1).
        mark_p: t.number("mark_p", Some(max_p), 1e-9, 1.0, "ECN-capable packets are marked while RED's base probability is below this, dropped above (ns-2 mark_p_)")?,
        mean_pkt_size: packet_size,
    };
    p.validate().map_err(|m| {
        let (f, msg) = m.split_once(": ").unwrap_or(("", &m));
        ScenarioError { field: format!("bottleneck.red.{f}"), message: msg.to_string() }
    })?;
    if p.max_th > limit {
        return err("bottleneck.red.max_th", format!("must not exceed the queue limit ({limit} packets); got {}", p.max_th));
    }
    Ok(p)
}

const FLOW_KEYS: &[&str] = &["count", "algorithm", "recovery", "params", "access_delay", "access_rate", "receiver_delay", "start", "stop", "direction", "rate", "on", "off"];

fn group(gi: usize, v: &Value, bottleneck_rate: f64, duration: f64) -> Result<Group, ScenarioError> {
    let path = format!("flows[{gi}]");
    let t = Table::new(&path, v)?;
    t.only(FLOW_KEYS)?;
    let count = t.integer("count", Some(1), 0, 100_000, "flows in this group")? as u32;
    let algorithm = t.with("algorithm", Some("tcp".to_string()), |v| v.as_str().map(str::to_string).ok_or_else(|| format!("must be an algorithm name (see `tcpf algorithms`); got {v}")))?;
    let kind = if algorithm == "cbr" {
        for k in ["recovery", "params"] {
            if t.get(k).is_some() {
                return err(t.field(k), "does not apply to a CBR source (give rate, on, off)");
            }
        }
        let rate = t.with("rate", None, |v| units::rate_or_multiple(v, bottleneck_rate))?;
        let on_off = match (t.get("on"), t.get("off")) {
            (None, None) => None,
            (Some(_), Some(_)) => {
                let on = t.with("on", None, |v| positive_seconds(v, "on period"))?;
                let off = t.with("off", None, units::seconds)?;
                Some(OnOff { on, off })
            }
            _ => return err(t.field(if t.get("on").is_some() { "off" } else { "on" }), "on and off go together"),
        };
        GroupKind::Cbr { rate, on_off }
    } else {
        for k in ["rate", "on", "off"] {
            if t.get(k).is_some() {
                return err(t.field(k), format!("applies to algorithm = \"cbr\" only, not '{algorithm}'"));
            }
        }
        let recovery = match t.string("recovery", "sack", &["reno", "newreno", "sack"])?.as_str() {
            "reno" => Recovery::Reno,
            "newreno" => Recovery::NewReno,
            _ => Recovery::Sack,
        };
        let empty = Map::new();
        let given = match t.get("params") {
            None => &empty,
            Some(Value::Object(m)) => m,
            Some(other) => return err(t.field("params"), format!("must be a table of parameters; got {other}")),
        };
        let params = cc::params::validate(&algorithm, given).map_err(|e| {
            if e.field.is_empty() {
                ScenarioError { field: t.field("algorithm"), message: e.message }
            } else {
                ScenarioError { field: format!("{path}.params.{}", e.field), message: e.message }
            }
        })?;
        GroupKind::Tcp { params, recovery }
    };
    let access_delay = t.with("access_delay", Some((0.001, 0.001)), units::seconds_range)?;
    let access_rate = t.with("access_rate", Some(10.0 * bottleneck_rate), |v| units::rate_or_multiple(v, bottleneck_rate))?;
    let receiver_delay = t.with("receiver_delay", Some(0.0), units::seconds)?;
    let start = t.with("start", Some((0.0, 0.0)), units::seconds_range)?;
    if start.0 >= duration {
        return err(t.field("start"), format!("must be before the end of the run ({duration} s); got {} s", start.0));
    }
    let stop = match t.get("stop") {
        None => None,
        Some(_) => {
            let s = t.with("stop", None, units::seconds)?;
            if s <= start.1 {
                return err(t.field("stop"), format!("must be after the start ({} s); got {s} s", start.1));
            }
            Some(s)
        }
    };
    let reverse = t.string("direction", "forward", &["forward", "reverse"])? == "reverse";
    Ok(Group { count, algorithm, kind, access_delay, access_rate, receiver_delay, start, stop, reverse })
}

#[cfg(test)]
mod tests;
