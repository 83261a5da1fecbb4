//! The network part of a scenario: a dumbbell (`[bottleneck]`, the default) or a general
//! graph (`[[nodes]]`, `[[links]]`), queues with buffer sizes relative to the BDP, and loss
//! models.

use super::table::{err, Table};
use super::units;
use super::ScenarioError;
use crate::net::loss::{LossSpec, Phase};
use crate::net::queue::{QueueSpec, RedParams};
use crate::error::{show_names, show_num};
use serde_json::{json, Map, Value};
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

/// Bottleneck queue defaults (jin2001 Table 4): DropTail 1.5·BDP; RED 2.5·BDP with
/// min_th 0.15·limit, max_th 0.5·limit, q_weight 0.002, max_p 0.1, gentle, wait.
const DROPTAIL_LIMIT_BDP: f64 = 1.5;
const RED_LIMIT_BDP: f64 = 2.5;

/// A loss model attached to a link, possibly only for some flow groups.
#[derive(Clone, Debug)]
pub struct LossDef {
    pub spec: LossSpec,
    pub groups: Option<Vec<u32>>,
    pub include_acks: bool,
}

/// A queue as written, before the BDP is known.
#[derive(Clone, Debug)]
pub struct QueueDraft {
    path: String,
    pub kind: String,
    limit: Option<units::Size>,
    pub ecn: bool,
    red: Option<Value>,
    pub loss: Option<LossDef>,
}

/// A queue with its limit and thresholds in packets: the engine's [`QueueSpec`], the BDP it
/// was sized against and the loss model in front of it.
#[derive(Clone, Debug)]
pub struct QueueDef {
    pub spec: QueueSpec,
    pub bdp_pkts: f64,
    pub loss: Option<LossDef>,
}

impl QueueDef {
    /// The queue keys of a normalised scenario (the input form).
    pub fn normalized(&self, t: &mut Map<String, Value>) {
        t.insert("queue".into(), json!(self.spec.name()));
        t.insert("limit".into(), json!(self.spec.limit()));
        t.insert("ecn".into(), json!(self.spec.ecn()));
        t.insert("red".into(), self.spec.red().map_or(Value::Null, |r| red_json(r, false)));
        t.insert("loss".into(), self.loss.as_ref().map_or(Value::Null, loss_json));
    }

    /// A link of the expanded scenario (engine units, thresholds in packets).
    pub fn expanded(&self, rate: f64, delay: f64) -> Value {
        let s = &self.spec;
        json!({"rate_bps": rate, "delay_s": delay, "queue": s.name(), "limit_pkts": s.limit(), "bdp_pkts": self.bdp_pkts,
               "ecn": s.ecn(), "red": s.red().map(|r| red_json(r, true)), "loss": self.loss.as_ref().map(loss_json)})
    }
}

/// RED's parameters as the normalised scenario writes them, or (`expanded`) as the expanded
/// one does: thresholds named `*_pkts` and the mean packet size added.
fn red_json(r: &RedParams, expanded: bool) -> Value {
    let (min, max) = if expanded { ("min_th_pkts", "max_th_pkts") } else { ("min_th", "max_th") };
    let mut v = json!({min: r.min_th, max: r.max_th, "q_weight": r.q_weight, "max_p": r.max_p,
                       "gentle": r.gentle, "wait": r.wait, "mark_p": r.mark_p});
    if expanded {
        v["mean_pkt_size"] = json!(r.mean_pkt_size);
    }
    v
}

pub const QUEUE_KEYS: &[&str] = &["queue", "limit", "ecn", "red", "loss"];

/// The smallest queue limit, packets: one being sent and one waiting.
pub const MIN_LIMIT: u32 = 2;

impl QueueDraft {
    pub(crate) fn parse(t: &Table) -> Result<QueueDraft, ScenarioError> {
        let kind = t.string("queue", "droptail", &["droptail", "red"])?;
        let limit = match t.get("limit") {
            None => None,
            Some(_) => Some(t.with("limit", None, |v| match units::size(v)? {
                units::Size::Packets(p) if p.is_finite() && p >= MIN_LIMIT as f64 && p <= u32::MAX as f64 && p.fract() == 0.0 => {
                    Ok(units::Size::Packets(p))
                }
                units::Size::Packets(p) => {
                    Err(format!("must be a whole number of packets in [{MIN_LIMIT}, {}]; got {}", u32::MAX, show_num(p)))
                }
                units::Size::Bdp(x) if x.is_finite() && x > 0.0 => Ok(units::Size::Bdp(x)),
                units::Size::Bdp(x) => Err(format!("must be a positive multiple of the BDP; got {}", show_num(x))),
            })?),
        };
        let ecn = t.boolean("ecn", false)?;
        if ecn && kind != "red" {
            return err(t.field("ecn"), "ECN marking needs queue = \"red\"");
        }
        let red = t.get("red").cloned();
        if red.is_some() && kind != "red" {
            return err(t.field("red"), "RED parameters need queue = \"red\"");
        }
        let loss = match t.get("loss") {
            None => None,
            Some(v) => Some(loss_def(&t.field("loss"), v)?),
        };
        Ok(QueueDraft { path: t.path.clone(), kind, limit, ecn, red, loss })
    }

    /// Resolve the limit against `bdp_pkts` (the BDP of the flows crossing the link).
    pub fn resolve(&self, bdp_pkts: f64, packet_size: u32) -> Result<QueueDef, ScenarioError> {
        let default = if self.kind == "red" { RED_LIMIT_BDP } else { DROPTAIL_LIMIT_BDP };
        let limit = match self.limit {
            None => default * bdp_pkts,
            Some(units::Size::Packets(p)) => p,
            Some(units::Size::Bdp(x)) => x * bdp_pkts,
        };
        if let Some(units::Size::Bdp(x)) = self.limit {
            if limit.round() > u32::MAX as f64 {
                return err(
                    format!("{}.limit", self.path),
                    format!("{} BDP is {} packets here (BDP {} packets), above the largest limit, {}", show_num(x), show_num(limit.round()), show_num(bdp_pkts), u32::MAX),
                );
            }
        }
        // A limit from the BDP is at least MIN_LIMIT packets (docs/scenario.md); an explicit
        // one was checked in `parse`. A default on a huge BDP saturates at u32::MAX.
        let limit = (limit.round() as u32).max(MIN_LIMIT);
        let spec = if self.kind == "red" {
            let params = red_params(&format!("{}.red", self.path), self.red.as_ref(), limit as f64, self.ecn, packet_size)?;
            QueueSpec::Red { limit, params }
        } else {
            QueueSpec::DropTail { limit }
        };
        Ok(QueueDef { spec, bdp_pkts, loss: self.loss.clone() })
    }
}

fn red_params(path: &str, v: Option<&Value>, limit: f64, ecn: bool, packet_size: u32) -> Result<RedParams, ScenarioError> {
    let empty = Value::Object(Map::new());
    let t = Table::new(path, v.unwrap_or(&empty))?;
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
        ScenarioError { field: format!("{path}.{f}"), message: msg.to_string() }
    })?;
    if p.max_th > limit {
        return err(format!("{path}.max_th"), format!("must not exceed the queue limit ({} packets); got {}", show_num(limit), show_num(p.max_th)));
    }
    Ok(p)
}

const LOSS_MODELS: &[&str] = &["bernoulli", "periodic", "general_exponential", "gilbert_elliott", "schedule"];

fn loss_def(path: &str, v: &Value) -> Result<LossDef, ScenarioError> {
    let t = Table::new(path, v)?;
    let spec = loss_spec(&t, &["groups", "include_acks"])?;
    let groups = match t.get("groups") {
        None => None,
        Some(Value::Array(a)) => {
            let mut g = vec![];
            for (i, x) in a.iter().enumerate() {
                match x.as_u64() {
                    Some(n) => g.push(n as u32),
                    None => return err(format!("{path}.groups[{i}]"), format!("must be a flow-group index; got {x}")),
                }
            }
            Some(g)
        }
        Some(other) => return err(format!("{path}.groups"), format!("must be a list of flow-group indices; got {other}")),
    };
    let include_acks = t.boolean("include_acks", false)?;
    Ok(LossDef { spec, groups, include_acks })
}

fn loss_spec(t: &Table, extra: &[&str]) -> Result<LossSpec, ScenarioError> {
    let model = t.string("model", "bernoulli", LOSS_MODELS)?;
    let allow = |keys: &[&str]| {
        let mut all: Vec<&str> = vec!["model"];
        all.extend_from_slice(keys);
        all.extend_from_slice(extra);
        t.only(&all)
    };
    let spec = match model.as_str() {
        "bernoulli" => {
            allow(&["p"])?;
            LossSpec::Bernoulli { p: t.number("p", None, 0.0, 1.0, "loss probability per packet")? }
        }
        "periodic" => {
            allow(&["packets", "interval"])?;
            let packets = match t.get("packets") {
                None => None,
                Some(_) => Some(t.integer("packets", None, 1, u64::MAX >> 11, "drop every N-th packet")?),
            };
            let interval = match t.get("interval") {
                None => None,
                Some(_) => Some(t.with("interval", None, |v| units::positive_seconds(v, "the time between losses"))?),
            };
            if packets.is_some() == interval.is_some() {
                return err(t.field("model"), "periodic loss needs exactly one of packets (every N packets) or interval (every T seconds)");
            }
            LossSpec::Periodic { packets, interval }
        }
        "general_exponential" => {
            allow(&["mean", "cv"])?;
            let mean = t.need("mean", "the mean time between losses, such as \"2s\"", |v| {
                units::positive_seconds(v, "the mean time between losses")
            })?;
            LossSpec::GeneralExponential { mean, cv: t.number("cv", Some(1.0), 0.0, 10.0, "coefficient of variation of the time between losses")? }
        }
        "gilbert_elliott" => {
            allow(&["p_gb", "p_bg", "loss_good", "loss_bad"])?;
            LossSpec::GilbertElliott {
                p_gb: t.number("p_gb", None, 0.0, 1.0, "per-packet probability of going from the good to the bad state")?,
                p_bg: t.number("p_bg", None, 0.0, 1.0, "per-packet probability of going from the bad to the good state")?,
                loss_good: t.number("loss_good", Some(0.0), 0.0, 1.0, "loss probability in the good state")?,
                loss_bad: t.number("loss_bad", Some(1.0), 0.0, 1.0, "loss probability in the bad state")?,
            }
        }
        _ => {
            allow(&["phases"])?;
            let arr = match t.get("phases") {
                Some(Value::Array(a)) if !a.is_empty() => a,
                _ => return err(t.field("phases"), "is required: a list of {from = seconds, model = ..., ...}"),
            };
            let mut phases = vec![];
            for (i, ph) in arr.iter().enumerate() {
                let pt = Table::new(&format!("{}[{i}]", t.field("phases")), ph)?;
                let from = pt.need("from", "the time (s) this phase starts", units::seconds)?;
                if pt.get("model").and_then(Value::as_str) == Some("schedule") {
                    return err(pt.field("model"), "a schedule phase cannot itself be a schedule");
                }
                let loss = loss_spec(&pt, &["from"])?;
                phases.push(Phase { from, loss });
            }
            LossSpec::Schedule { phases }
        }
    };
    spec.validate().map_err(|m| {
        let (f, msg) = m.split_once(": ").unwrap_or(("", &m));
        ScenarioError { field: if f.is_empty() { t.path.clone() } else { t.field(f) }, message: msg.to_string() }
    })?;
    Ok(spec)
}

pub fn loss_json(l: &LossDef) -> Value {
    let mut v = serde_json::to_value(&l.spec).expect("loss spec serialises");
    if let Value::Object(m) = &mut v {
        m.retain(|_, x| !x.is_null());
        if let Some(g) = &l.groups {
            m.insert("groups".into(), json!(g));
        }
        m.insert("include_acks".into(), json!(l.include_acks));
        if let Some(Value::Array(phases)) = m.get_mut("phases") {
            for ph in phases.iter_mut() {
                // {"from": .., "loss": {...}} → {"from": .., "model": .., ...} (the input form)
                if let Some(Value::Object(inner)) = ph.get("loss").cloned() {
                    let mut flat = Map::new();
                    flat.insert("from".into(), ph["from"].clone());
                    for (k, x) in inner {
                        if !x.is_null() {
                            flat.insert(k, x);
                        }
                    }
                    *ph = Value::Object(flat);
                }
            }
        }
    }
    v
}

/// `[bottleneck]`.
#[derive(Clone, Debug)]
pub struct DumbbellDef {
    pub rate: f64,
    pub delay: f64,
    pub queue: QueueDraft,
}

pub fn dumbbell(v: &Value) -> Result<DumbbellDef, ScenarioError> {
    let b = Table::new("bottleneck", v)?;
    let mut keys = vec!["rate", "delay"];
    keys.extend_from_slice(QUEUE_KEYS);
    b.only(&keys)?;
    let rate = b.need("rate", "a rate such as \"10Mbps\" (b/s with a unit: bps, Kbps, Mbps, Gbps)", units::rate)?;
    let delay = b.need("delay", "a one-way propagation delay such as \"20ms\" (or seconds)", units::seconds)?;
    Ok(DumbbellDef { rate, delay, queue: QueueDraft::parse(&b)? })
}

/// One `[[links]]` entry between two routers.
#[derive(Clone, Debug)]
pub struct GraphLinkDef {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub rate: f64,
    pub delay: f64,
    pub duplex: bool,
    pub queue: QueueDraft,
}

#[derive(Clone, Debug)]
pub struct GraphDef {
    pub nodes: Vec<String>,
    pub links: Vec<GraphLinkDef>,
    /// Lookups built once (a graph may have many thousands of nodes and links): each node's
    /// index by name, each directed pair's link, each node's outgoing directed links.
    node_index: HashMap<String, usize>,
    edges: HashMap<(usize, usize), (usize, bool)>,
    out: Vec<Vec<(usize, usize, bool)>>,
}

pub fn graph(nodes_v: Option<&Value>, links_v: &Value) -> Result<GraphDef, ScenarioError> {
    let mut nodes: Vec<String> = vec![];
    // Lookups by name and by pair are hashed: a scenario may hold many thousands of nodes and
    // links, and scanning the earlier ones for each new one was quadratic (66 000 links took
    // nearly 5 minutes to be refused).
    let mut node_index: HashMap<String, usize> = HashMap::new();
    let declared = nodes_v.is_some();
    if let Some(v) = nodes_v {
        let arr = v.as_array().ok_or(ScenarioError { field: "nodes".into(), message: "must be a list of [[nodes]] tables (name = ...)".into() })?;
        for (i, n) in arr.iter().enumerate() {
            let name = match n {
                Value::String(_) => identifier(n).map_err(|m| ScenarioError { field: format!("nodes[{i}]"), message: m })?,
                _ => {
                    let t = Table::new(&format!("nodes[{i}]"), n)?;
                    t.only(&["name"])?;
                    t.need("name", "the node's name (letters, digits, _ and -)", identifier)?
                }
            };
            if node_index.contains_key(&name) {
                return err(format!("nodes[{i}].name"), format!("'{name}' is declared twice"));
            }
            node_index.insert(name.clone(), nodes.len());
            nodes.push(name);
        }
    }
    let arr = links_v.as_array().ok_or(ScenarioError { field: "links".into(), message: "must be a list of [[links]] tables".into() })?;
    if arr.is_empty() {
        return err("links", "needs at least one link");
    }
    let mut links: Vec<GraphLinkDef> = vec![];
    let mut names = LinkNames::default();
    // The directed pairs the earlier links join (both ways for a duplex link): each pair's
    // first link, the graph's `edge`.
    let mut edges: HashMap<(usize, usize), (usize, bool)> = HashMap::new();
    for (i, l) in arr.iter().enumerate() {
        let path = format!("links[{i}]");
        let t = Table::new(&path, l)?;
        let mut keys = vec!["name", "from", "to", "rate", "delay", "duplex"];
        keys.extend_from_slice(QUEUE_KEYS);
        t.only(&keys)?;
        let mut node = |key: &str| -> Result<usize, ScenarioError> {
            let name = t.with(key, None, identifier)?;
            match node_index.get(&name) {
                Some(&i) => Ok(i),
                None if declared => err(t.field(key), format!("unknown node '{name}' (declared: {})", show_names(&nodes))),
                None => {
                    node_index.insert(name.clone(), nodes.len());
                    nodes.push(name);
                    Ok(nodes.len() - 1)
                }
            }
        };
        let from = node("from")?;
        let to = node("to")?;
        if from == to {
            return err(t.field("to"), "a link must join two different nodes");
        }
        let name = t.with("name", Some(format!("{}-{}", nodes[from], nodes[to])), identifier)?;
        let duplex = t.boolean("duplex", true)?;
        names.check(&links, &name, duplex).map_err(|m| ScenarioError { field: t.field("name"), message: m })?;
        if edges.contains_key(&(from, to)) {
            return err(path, format!("a link from '{}' to '{}' already exists", nodes[from], nodes[to]));
        }
        edges.insert((from, to), (links.len(), false));
        if duplex {
            // (an earlier one-way link the other way keeps the pair)
            edges.entry((to, from)).or_insert((links.len(), true));
        }
        names.add(links.len(), &name, duplex);
        links.push(GraphLinkDef {
            name,
            from,
            to,
            rate: t.need("rate", "a rate such as \"10Mbps\" (b/s with a unit: bps, Kbps, Mbps, Gbps)", units::rate)?,
            delay: t.need("delay", "a one-way propagation delay such as \"20ms\" (or seconds)", units::seconds)?,
            duplex,
            queue: QueueDraft::parse(&t)?,
        });
    }
    Ok(GraphDef::new(nodes, node_index, edges, links))
}

/// The longest node or link name (see [`identifier`]).
pub const MAX_NAME_LEN: usize = 64;

/// A node or link name: a letter or `_`, then letters, digits, `_`, `.` or `-`, at most
/// [`MAX_NAME_LEN`] characters in all. Names reach the reports and the ns-2 script exported from
/// a scenario (where they are Tcl words), so nothing else is allowed: no space, quote, bracket,
/// `$`, `;` or non-ASCII character.
pub(crate) fn identifier(v: &Value) -> Result<String, String> {
    let s = v.as_str().ok_or_else(|| format!("must be a name (a string); got {v}"))?;
    let ok_first = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let ok_rest = s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok_first && ok_rest && s.len() <= MAX_NAME_LEN {
        Ok(s.to_string())
    } else {
        Err(format!(
            "must be a name: a letter or '_', then letters, digits, '_', '.' or '-', at most {MAX_NAME_LEN} characters; got {v}"
        ))
    }
}

/// The names the earlier links report: each link's name, and `<name>_reverse` for a duplex
/// link's reverse direction, with the index of the link that has it.
#[derive(Default)]
struct LinkNames {
    name: HashMap<String, usize>,
    reverse: HashMap<String, usize>,
}

impl LinkNames {
    /// A new link's name (and, if `duplex`, its reverse direction's `<name>_reverse`) must
    /// differ from every name the earlier links report, reverse directions included. Of
    /// several clashes the one with the earliest link is reported (a link can clash in one
    /// way only).
    fn check(&self, links: &[GraphLinkDef], name: &str, duplex: bool) -> Result<(), String> {
        let reverse = format!("{name}_reverse");
        let same = self.name.get(name).map(|&i| (i, 0));
        let is_reverse = self.reverse.get(name).map(|&i| (i, 1));
        let would_be = if duplex { self.name.get(&reverse).map(|&i| (i, 2)) } else { None };
        match [same, is_reverse, would_be].into_iter().flatten().min() {
            None => Ok(()),
            Some((_, 0)) => Err(format!("'{name}' is used by another link")),
            Some((i, 1)) => Err(format!("'{name}' is the name of the reverse direction of link '{}'", links[i].name)),
            Some(_) => Err(format!("the reverse direction of '{name}' would be named '{reverse}', which is used by another link")),
        }
    }

    fn add(&mut self, index: usize, name: &str, duplex: bool) {
        self.name.insert(name.to_string(), index);
        if duplex {
            self.reverse.insert(format!("{name}_reverse"), index);
        }
    }
}

impl GraphDef {
    fn new(nodes: Vec<String>, node_index: HashMap<String, usize>, edges: HashMap<(usize, usize), (usize, bool)>, links: Vec<GraphLinkDef>) -> Self {
        // The directed links leaving each node, in link order.
        let mut out = vec![vec![]; nodes.len()];
        for (i, l) in links.iter().enumerate() {
            out[l.from].push((l.to, i, false));
            if l.duplex {
                out[l.to].push((l.from, i, true));
            }
        }
        GraphDef { nodes, links, node_index, edges, out }
    }

    /// The directed link from `a` to `b`, if any: (graph link index, reversed?).
    pub fn edge(&self, a: usize, b: usize) -> Option<(usize, bool)> {
        self.edges.get(&(a, b)).copied()
    }

    pub fn node(&self, name: &str) -> Option<usize> {
        self.node_index.get(name).copied()
    }

    /// Fewest hops from `a` to `b`, ties broken by propagation delay, then by link order.
    /// (Dijkstra on (hops, delay): of the nodes not yet settled, the one with the smallest
    /// (hops, delay), and of equal ones the lowest index, is settled next; a node's cost is
    /// replaced only by a strictly smaller one, found along the links in their order.)
    pub fn shortest_path(&self, a: usize, b: usize) -> Option<Vec<usize>> {
        let n = self.nodes.len();
        let mut best: Vec<Option<(usize, f64)>> = vec![None; n];
        let mut prev = vec![usize::MAX; n];
        let mut done = vec![false; n];
        best[a] = Some((0, 0.0));
        let mut heap = BinaryHeap::new();
        heap.push(Reverse(Cost(0, 0.0, a)));
        while let Some(Reverse(Cost(hops, delay, u))) = heap.pop() {
            if done[u] || best[u] != Some((hops, delay)) {
                continue; // settled, or a cost since replaced by a smaller one
            }
            done[u] = true;
            if u == b {
                break;
            }
            for &(v, li, _) in &self.out[u] {
                let c = (hops + 1, delay + self.links[li].delay);
                let better = match best[v] {
                    None => true,
                    Some(o) => c.0 < o.0 || (c.0 == o.0 && c.1 < o.1),
                };
                if !done[v] && better {
                    best[v] = Some(c);
                    prev[v] = u;
                    heap.push(Reverse(Cost(c.0, c.1, v)));
                }
            }
        }
        best[b]?;
        let mut path = vec![b];
        while *path.last().unwrap() != a {
            path.push(prev[*path.last().unwrap()]);
        }
        path.reverse();
        Some(path)
    }
}

/// A node's cost in [`GraphDef::shortest_path`]: hops, propagation delay (a sum of finite
/// delays, never NaN), then the node's index.
#[derive(Clone, Copy, PartialEq)]
struct Cost(usize, f64, usize);

impl Eq for Cost {}

impl Ord for Cost {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.cmp(&o.0).then(self.1.total_cmp(&o.1)).then(self.2.cmp(&o.2))
    }
}

impl PartialOrd for Cost {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
