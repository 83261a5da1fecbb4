//! The algorithm registry: one entry per algorithm a flow group can run — window controllers
//! (`cc`), rate-based senders (`transport::rate`) and UDP sources (`transport::udp`) — each
//! with its name, kind, parameter schema, taxonomy and source paper (its `AlgorithmInfo`), its
//! constructor, and how the ns-2 exporter expresses it. Scenario validation, `tcpf
//! algorithms` (`api::algorithms`), the engine and the analytic models all read this table.
//!
//! Adding a control law: write its file (the law, its `AlgorithmInfo`, its `from_params`) and
//! add one line to `builtin()` below. A program (or a test) can add a law at run time with
//! `register`; validation, runs and the listing then see it like a built-in one.
//!
//! Aliases are other names for a registered algorithm, with the defaults that name implies:
//! `tcpf model`'s `aimd` (jin2001's AIMD: `gaimd` with β = 1/16 and the TCP-friendly
//! α = 3β/(2 − β)) and `aiad` (jin2001's AIAD(2/3): the history control `aiad_h`). A scenario
//! using an alias is normalised to the canonical name and parameters.

use crate::cc::params::{Alias as ParamAlias, AlgorithmInfo, ParamError, Params};
use crate::cc::{aimd, bic, binomial, compound, cubic, cyrf, formula, history, hstcp, htcp, illinois, scalable, vegas, Controller};
use crate::transport::rate::{self, tear, tfrc, tfrcp};
use crate::transport::udp;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::sync::{OnceLock, RwLock};

/// What an algorithm drives: a window controller inside the TCP sender, a paced rate-based
/// sender with its own receiver, or a UDP source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Window,
    Rate,
    Udp,
}

/// A window controller from validated parameters, the initial window and the window cap
/// (packets). An error names a parameter the law looked up but its schema does not have.
pub type WindowBuild = fn(&Params, f64, f64) -> Result<Box<dyn Controller>, ParamError>;

/// A rate-based sender and its receiver from validated parameters and the packet size (bytes).
pub type RateBuild = fn(&Params, u32) -> Result<rate::Endpoints, ParamError>;

/// How an entry is constructed; the variant is its kind.
#[derive(Clone, Copy)]
pub enum Build {
    Window(WindowBuild),
    Rate(RateBuild),
    /// UDP sources are built from the flow group's pattern (`rate`, `on`/`off`, `steps`, ...),
    /// not from `params`.
    Udp,
}

/// How the ns-2 exporter expresses an algorithm (`tcpf algorithms --json` prints it as
/// `"ns2": {"agent": ...}`, `{"linux": ...}` or `{"unsupported": ...}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ns2 {
    /// An ns-2 agent configured from the canonical parameters; the value names the exporter's
    /// mapping (`tcp`, `gaimd`, `binomial`, `iiad`, `sqrt`; `tfrc`; `cbr`, `pareto`).
    Agent(&'static str),
    /// A Linux 2.6.22 congestion-control module run by ns-2's Agent/TCP/Linux (`select_ca`).
    Linux(&'static str),
    /// ns-2 2.35 cannot run it: why (the exporter's error message).
    Unsupported(&'static str),
}

/// One algorithm.
pub struct Entry {
    pub info: AlgorithmInfo,
    pub build: Build,
    pub ns2: Ns2,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry").field("name", &self.name()).field("kind", &self.kind()).field("ns2", &self.ns2).finish()
    }
}

impl Entry {
    pub fn window(info: AlgorithmInfo, build: WindowBuild, ns2: Ns2) -> Entry {
        Entry { info, build: Build::Window(build), ns2 }
    }

    pub fn rate(info: AlgorithmInfo, build: RateBuild, ns2: Ns2) -> Entry {
        Entry { info, build: Build::Rate(build), ns2 }
    }

    pub fn udp(info: AlgorithmInfo, ns2: Ns2) -> Entry {
        Entry { info, build: Build::Udp, ns2 }
    }

    pub fn name(&self) -> &'static str {
        self.info.name
    }

    pub fn kind(&self) -> Kind {
        match self.build {
            Build::Window(_) => Kind::Window,
            Build::Rate(_) => Kind::Rate,
            Build::Udp => Kind::Udp,
        }
    }
}

/// Another name for a registered algorithm. `info` describes it as `tcpf algorithms` lists it
/// (the canonical schema with the defaults the alias implies); `prepare` fills parameters the
/// alias derives from the others before the canonical schema validates them.
pub struct Alias {
    pub info: AlgorithmInfo,
    pub canonical: &'static str,
    pub prepare: Option<fn(&mut Map<String, Value>)>,
}

fn boxed<C: Controller + 'static>(c: Result<C, ParamError>) -> Result<Box<dyn Controller>, ParamError> {
    Ok(Box::new(c?))
}

/// Why ns-2 lacks the history-spectrum controls (the exporter's wording).
macro_rules! history_why {
    () => {
        "is a member of jin2001's history spectrum: its increase depends on w0 and on alpha recomputed from w_max after every decrease, which no Agent/TCP windowOption_ law implements"
    };
}

fn hist(name: &str) -> AlgorithmInfo {
    history::info(name).expect("a history preset")
}

/// The built-in algorithms, in the order `tcpf algorithms` lists them.
fn builtin() -> Vec<Entry> {
    use Ns2::{Agent, Linux, Unsupported};
    vec![
        Entry::window(aimd::tcp_info(), |p, w, c| boxed(aimd::Aimd::from_params(p, w, c)), Agent("tcp")),
        Entry::window(aimd::gaimd_info(), |p, w, c| boxed(aimd::Aimd::from_params(p, w, c)), Agent("gaimd")),
        Entry::window(binomial::binomial_info(), |p, w, c| boxed(binomial::Binomial::from_params(p, w, c)), Agent("binomial")),
        Entry::window(binomial::iiad_info(), |p, w, c| boxed(binomial::Binomial::from_params(p, w, c)), Agent("iiad")),
        Entry::window(binomial::sqrt_info(), |p, w, c| boxed(binomial::Binomial::from_params(p, w, c)), Agent("sqrt")),
        Entry::window(hist("history"), |p, w, c| boxed(history::History::from_params(p, w, c)), Unsupported(concat!("ns-2 2.35 has no history-spectrum controller (it ", history_why!(), ")"))),
        Entry::window(hist("simd"), |p, w, c| boxed(history::History::from_params(p, w, c)), Unsupported(concat!("ns-2 2.35 has no SIMD (SIMD ", history_why!(), ")"))),
        Entry::window(hist("simd_period"), |p, w, c| boxed(history::History::from_params(p, w, c)), Unsupported(concat!("ns-2 2.35 has no SIMD/period (SIMD/period ", history_why!(), ")"))),
        Entry::window(hist("aiad_h"), |p, w, c| boxed(history::History::from_params(p, w, c)), Unsupported(concat!("ns-2 2.35 has no AIAD/H (AIAD/H ", history_why!(), ")"))),
        Entry::window(hist("pimd"), |p, w, c| boxed(history::History::from_params(p, w, c)), Unsupported(concat!("ns-2 2.35 has no such controller (pimd ", history_why!(), ")"))),
        Entry::window(hist("aisd_h"), |p, w, c| boxed(history::History::from_params(p, w, c)), Unsupported(concat!("ns-2 2.35 has no such controller (aisd_h ", history_why!(), ")"))),
        Entry::window(hist("pisd"), |p, w, c| boxed(history::History::from_params(p, w, c)), Unsupported(concat!("ns-2 2.35 has no such controller (pisd ", history_why!(), ")"))),
        Entry::window(cyrf::log_info(), |p, w, c| boxed(cyrf::Cyrf::from_params(p, w, c)), Unsupported("ns-2 2.35 has no LOG controller (sastry2005's CYRF increase log(W) is not a power of W, so windowOption_ 6 cannot express it)")),
        Entry::window(cyrf::sigmoid_info(), |p, w, c| boxed(cyrf::Cyrf::from_params(p, w, c)), Unsupported("ns-2 2.35 has no SIGMOID controller (sastry2005's CYRF family is not in Agent/TCP)")),
        Entry::window(illinois::illinois_info(), |p, w, c| boxed(illinois::Illinois::from_params(p, w, c)), Unsupported("ns-2 2.35 has only Linux's tcp_illinois (use algorithm = \"illinois_linux\"); the paper version's parameters cannot be set there")),
        Entry::window(illinois::illinois_linux_info(), |p, w, c| boxed(illinois::Illinois::from_params(p, w, c)), Linux("illinois")),
        Entry::window(hstcp::hstcp_info(), |p, w, c| boxed(hstcp::HsTcp::from_params(p, w, c)), Linux("highspeed")),
        Entry::window(scalable::scalable_info(), |p, w, c| boxed(scalable::Scalable::from_params(p, w, c)), Linux("scalable")),
        Entry::window(bic::bic_info(), |p, w, c| boxed(bic::Bic::from_params(p, w, c)), Linux("bic")),
        Entry::window(cubic::cubic_info(), |p, w, c| boxed(cubic::Cubic::from_params(p, w, c)), Linux("cubic")),
        Entry::window(htcp::htcp_info(), |p, w, c| boxed(htcp::Htcp::from_params(p, w, c)), Linux("htcp")),
        Entry::window(compound::compound_info(), |p, w, c| boxed(compound::Compound::from_params(p, w, c)), Linux("compound")),
        Entry::window(vegas::vegas_info(), |p, w, c| boxed(vegas::Vegas::from_params(p, w, c)), Linux("vegas")),
        Entry::window(formula::formula_info(), |p, w, c| boxed(formula::Formula::from_params(p, w, c)), Unsupported("ns-2 2.35 cannot run a user-defined window law (formula controllers exist only in tcpfriendly)")),
        Entry::rate(tfrc::info(), tfrc::build, Agent("tfrc")),
        Entry::rate(tfrcp::info(), tfrcp::build, Unsupported("ns-2 2.35 has no TFRCP agent (Padhye et al.'s interval-based sender is not in the release; only Agent/TFRC)")),
        Entry::rate(tear::info(), tear::build, Unsupported("ns-2 2.35 has no TEAR agent (receiver-emulated TCP windows are not in the release)")),
        Entry::udp(udp::cbr_info(), Agent("cbr")),
        Entry::udp(udp::pareto_info(), Agent("pareto")),
    ]
}

/// jin2001's AIMD: `gaimd` with β = 1/16 (jin2001 §6) and, unless given, the TCP-friendly
/// α = 3β/(2 − β) (yang2000 eq. 6; jin2001 §3) for the β in use.
fn aimd_alias() -> Alias {
    const BETA: f64 = 1.0 / 16.0;
    let mut info = aimd::gaimd_info();
    info.name = "aimd";
    info.summary = "jin2001's AIMD: gaimd with beta = 1/16 and the TCP-friendly alpha = 3*beta/(2-beta) unless alpha is given";
    info.source = "jin2001 §3 and §6 (AIMD(1/16)); the name tcpf model uses";
    for p in &mut info.params {
        match p.name {
            "beta" => p.default = Some(BETA),
            "alpha" => {
                p.default = Some(aimd::td_alpha(BETA));
                p.doc = "additive increase per RTT (default 3*beta/(2-beta), TCP-friendly for the beta in use)";
            }
            _ => {}
        }
    }
    fn prepare(m: &mut Map<String, Value>) {
        let beta = match (m.get("beta").and_then(Value::as_f64), m.get("keep").and_then(Value::as_f64)) {
            (Some(b), None) => Some(b),
            (None, Some(k)) => Some(1.0 - k),
            (None, None) if !m.contains_key("beta") && !m.contains_key("keep") => {
                m.insert("beta".into(), json!(BETA));
                Some(BETA)
            }
            // both, or not numbers: the canonical schema reports it
            _ => None,
        };
        if let Some(b) = beta.filter(|b| *b > 0.0 && *b < 1.0) {
            m.entry("alpha").or_insert_with(|| json!(aimd::td_alpha(b)));
        }
    }
    Alias { info, canonical: "gaimd", prepare: Some(prepare) }
}

/// jin2001's AIAD(2/3): the history control `aiad_h` (k = 0, l = 0) and its β = 2/3 default.
fn aiad_alias() -> Alias {
    let mut info = hist("aiad_h");
    info.name = "aiad";
    info.summary = "jin2001's AIAD: the history control aiad_h (k = 0, l = 0), +3*beta/(2*w_max) per RTT, W <- W - beta per loss event";
    info.source = "jin2001 §3 Table 1 and §6 (AIAD(2/3)); the name tcpf model uses";
    Alias { info, canonical: "aiad_h", prepare: None }
}

fn builtin_aliases() -> Vec<Alias> {
    vec![aimd_alias(), aiad_alias()]
}

static BUILTIN: OnceLock<Vec<Entry>> = OnceLock::new();
static ALIASES: OnceLock<Vec<Alias>> = OnceLock::new();
/// Entries added at run time with `register` (leaked: they live as long as the program).
static EXTRA: RwLock<Vec<&'static Entry>> = RwLock::new(Vec::new());

fn aliases() -> &'static [Alias] {
    ALIASES.get_or_init(builtin_aliases)
}

/// Every registered algorithm: the built-in ones, then those added with `register`.
pub fn entries() -> Vec<&'static Entry> {
    let mut v: Vec<&'static Entry> = BUILTIN.get_or_init(builtin).iter().collect();
    v.extend(EXTRA.read().unwrap_or_else(|e| e.into_inner()).iter().copied());
    v
}

/// The entry named `name` (canonical names only; see `resolve` for aliases).
pub fn lookup(name: &str) -> Option<&'static Entry> {
    entries().into_iter().find(|e| e.name() == name)
}

/// The alias named `name`, if it is one.
pub fn alias(name: &str) -> Option<&'static Alias> {
    aliases().iter().find(|a| a.info.name == name)
}

/// The entry `name` stands for, canonical name or alias.
pub fn resolve(name: &str) -> Option<&'static Entry> {
    lookup(name).or_else(|| alias(name).and_then(|a| lookup(a.canonical)))
}

/// Add an algorithm at run time. Its name must not be taken (by an entry or an alias).
pub fn register(entry: Entry) -> Result<(), ParamError> {
    let mut extra = EXTRA.write().unwrap_or_else(|e| e.into_inner());
    let name = entry.name();
    let taken = BUILTIN.get_or_init(builtin).iter().any(|e| e.name() == name) || extra.iter().any(|e| e.name() == name) || alias(name).is_some();
    if taken {
        return Err(ParamError::new("", format!("algorithm '{name}' is already registered")));
    }
    extra.push(Box::leak(Box::new(entry)));
    Ok(())
}

/// Command-line values arrive untyped (`tcpf model --param`, `tcpf evaluate --params`): a number
/// given for a formula or choice parameter of `algorithm` becomes its text, and a numeric text
/// given for a number parameter becomes the number. Another algorithm's (a Python
/// controller's) parameters pass through as given.
pub fn coerce_untyped(algorithm: &str, params: &Map<String, Value>) -> Map<String, Value> {
    let Some(info) = resolve(algorithm).map(|e| &e.info) else { return params.clone() };
    let mut out = params.clone();
    for (k, v) in out.iter_mut() {
        let spec = info.params.iter().find(|p| p.name == k).or_else(|| info.aliases.iter().find(|a| a.name == k).map(|a| &a.spec));
        let kind = match spec {
            Some(s) => s.kind,
            // extra named constants of formula controllers are numbers
            None => crate::cc::ParamKind::Number,
        };
        match (kind, &*v) {
            (crate::cc::ParamKind::Number, Value::String(t)) => {
                if let Ok(x) = t.trim().parse::<f64>() {
                    *v = crate::cc::params::number(x);
                }
            }
            (crate::cc::ParamKind::Number, _) => {}
            (_, Value::Number(n)) => *v = Value::String(n.to_string()),
            _ => {}
        }
    }
    out
}

/// Names of the entries of one kind, in listing order.
pub fn names(kind: Kind) -> Vec<&'static str> {
    entries().into_iter().filter(|e| e.kind() == kind).map(Entry::name).collect()
}

/// Validate `given` parameters for `name` (an entry or an alias); returns the entry and the
/// parameters in canonical form (`Params::algorithm` is the canonical name). An unknown
/// name is an error with an empty field.
pub fn validate(name: &str, given: &Map<String, Value>) -> Result<(&'static Entry, Params), ParamError> {
    if let Some(e) = lookup(name) {
        return Ok((e, e.info.validate(given)?));
    }
    if let Some(a) = alias(name) {
        let e = lookup(a.canonical).expect("an alias names a registered entry");
        let mut given = given.clone();
        if let Some(prepare) = a.prepare {
            prepare(&mut given);
        }
        return Ok((e, e.info.validate(&given)?));
    }
    Err(unknown(name))
}

fn unknown(name: &str) -> ParamError {
    ParamError::new("", format!("unknown algorithm '{name}' (known: {})", names(Kind::Window).join(", ")))
}

/// Validate parameters of a window controller (`name` an entry or alias of that kind); any
/// other name is unknown, with the window controllers listed.
pub fn validate_window(name: &str, given: &Map<String, Value>) -> Result<Params, ParamError> {
    match resolve(name) {
        Some(e) if e.kind() == Kind::Window => Ok(validate(name, given)?.1),
        _ => Err(unknown(name)),
    }
}

/// Construct the window controller for validated parameters.
pub fn build_window(params: &Params, initial_window: f64, cap: f64) -> Result<Box<dyn Controller>, ParamError> {
    match lookup(&params.algorithm).map(|e| e.build) {
        Some(Build::Window(build)) => build(params, initial_window, cap),
        _ => Err(ParamError::new("", format!("'{}' is not a registered window controller", params.algorithm))),
    }
}

/// Construct the sender and receiver of a rate-based scheme for validated parameters.
pub fn build_rate(params: &Params, packet_size: u32) -> Result<rate::Endpoints, ParamError> {
    match lookup(&params.algorithm).map(|e| e.build) {
        Some(Build::Rate(build)) => build(params, packet_size),
        _ => Err(ParamError::new("", format!("'{}' is not a registered rate-based scheme", params.algorithm))),
    }
}

fn alias_json(a: &ParamAlias) -> Value {
    json!({"name": a.name, "canonical": a.canonical, "doc": a.spec.doc, "min": a.spec.min, "max": a.spec.max})
}

fn info_json(info: &AlgorithmInfo, kind: Kind, ns2: Ns2) -> Value {
    let mut item = serde_json::to_value(info).expect("registry serialises");
    item["kind"] = json!(kind);
    // Parameter aliases are part of how users write parameters: list them beside the
    // canonical ones.
    item["aliases"] = Value::Array(info.aliases.iter().map(alias_json).collect());
    item["ns2"] = json!(ns2);
    if kind == Kind::Udp {
        // A UDP source takes no params table; the flow group's own keys give its pattern.
        item["keys"] = json!(crate::transport::udp::source_keys(info.name));
    }
    item
}

/// The registry as `tcpf algorithms --json` prints it: every entry, then every alias (with
/// `alias_of` naming its canonical entry).
pub fn to_json() -> Value {
    let mut list: Vec<Value> = entries().into_iter().map(|e| info_json(&e.info, e.kind(), e.ns2)).collect();
    for a in aliases() {
        let e = lookup(a.canonical).expect("an alias names a registered entry");
        let mut item = info_json(&a.info, e.kind(), e.ns2);
        item["alias_of"] = json!(a.canonical);
        list.push(item);
    }
    Value::Array(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Parameters every entry needs when its schema has required ones.
    fn required(name: &str) -> Map<String, Value> {
        let v = match name {
            "binomial" | "history" => json!({"k": 0.5, "l": 0.5}),
            "formula" => json!({"increase": "1", "decrease": "w/2"}),
            _ => json!({}),
        };
        v.as_object().unwrap().clone()
    }

    #[test]
    fn every_registered_law_but_the_formula_is_held_by_value() {
        // A family missing from `builtin_laws!` would still run, boxed and dispatched
        // dynamically on every ACK: this names it.
        for e in entries() {
            let Build::Window(build) = e.build else { continue };
            let (_, p) = validate(e.name(), &required(e.name())).unwrap_or_else(|err| panic!("{}: {err}", e.name()));
            let held = crate::cc::Held::new(build(&p, 2.0, 100.0).unwrap());
            assert_eq!(held.is_dyn(), e.name() == "formula", "{}", e.name());
        }
    }

    #[test]
    fn every_entry_builds_from_its_defaults() {
        // A law that looks up a parameter its schema does not have fails here.
        for e in entries() {
            let (_, p) = validate(e.name(), &required(e.name())).unwrap_or_else(|err| panic!("{}: {err}", e.name()));
            match e.build {
                Build::Window(b) => assert!(b(&p, 2.0, 100.0).is_ok(), "{}", e.name()),
                Build::Rate(b) => assert!(b(&p, 1000).is_ok(), "{}", e.name()),
                Build::Udp => assert!(p.values.is_empty() && p.texts.is_empty()),
            }
        }
    }

    #[test]
    fn names_are_unique_and_aliases_point_at_entries() {
        let mut names: Vec<&str> = entries().iter().map(|e| e.name()).collect();
        names.extend(aliases().iter().map(|a| a.info.name));
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
        for a in aliases() {
            assert!(lookup(a.canonical).is_some(), "{}", a.canonical);
        }
    }

    #[test]
    fn unknown_parameter_lookup_is_an_error() {
        let (_, p) = validate("gaimd", &Map::new()).unwrap();
        assert_eq!(p.get("beta").unwrap(), 0.125);
        let e = p.get("betta").unwrap_err();
        assert_eq!(e.field, "betta");
        assert!(p.text("beta").is_err());
    }

    #[test]
    fn aimd_alias_is_gaimd_with_jin2001_defaults() {
        let (e, p) = validate("aimd", &Map::new()).unwrap();
        assert_eq!(e.name(), "gaimd");
        assert_eq!(p.algorithm, "gaimd");
        assert_eq!(p.get("beta").unwrap(), 1.0 / 16.0);
        assert_eq!(p.get("alpha").unwrap(), aimd::td_alpha(1.0 / 16.0));
        let given = json!({"keep": 0.75});
        let (_, p) = validate("aimd", given.as_object().unwrap()).unwrap();
        assert_eq!(p.get("beta").unwrap(), 0.25);
        assert_eq!(p.get("alpha").unwrap(), aimd::td_alpha(0.25));
        let given = json!({"alpha": 0.5, "beta": 0.2});
        let (_, p) = validate("aimd", given.as_object().unwrap()).unwrap();
        assert_eq!((p.get("alpha").unwrap(), p.get("beta").unwrap()), (0.5, 0.2));
        // a bad beta is reported by the canonical schema, naming the field
        let given = json!({"beta": 1.5});
        assert_eq!(validate("aimd", given.as_object().unwrap()).unwrap_err().field, "beta");
    }

    #[test]
    fn aiad_alias_is_aiad_h() {
        let (e, p) = validate("aiad", &Map::new()).unwrap();
        assert_eq!(e.name(), "aiad_h");
        assert_eq!(p, validate("aiad_h", &Map::new()).unwrap().1);
    }

    #[test]
    fn window_validation_rejects_other_kinds_as_unknown() {
        let e = validate_window("tfrc", &Map::new()).unwrap_err();
        assert!(e.field.is_empty() && e.message.starts_with("unknown algorithm 'tfrc' (known: tcp, gaimd,"), "{e}");
    }
}
