//! JSON in, JSON out: the entry points the Python bindings (and any other front end) use.

use crate::engine::{ControllerFactory, Simulation};
use crate::scenario::{Scenario, ScenarioError};
use serde_json::{json, Map, Value};

pub use crate::error::RunError;

fn parse(scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>) -> Result<Scenario, ScenarioError> {
    parse_with(scenario_json, seed, timeseries, &[])
}

fn parse_with(scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>, external: &[String]) -> Result<Scenario, ScenarioError> {
    let mut v: Value = serde_json::from_str(scenario_json).map_err(|e| ScenarioError { field: String::new(), message: format!("scenario is not valid JSON: {e}") })?;
    if let Some(obj) = v.as_object_mut() {
        if let Some(s) = seed {
            obj.insert("seed".into(), json!(s));
        }
        if let Some(t) = timeseries {
            obj.insert("timeseries".into(), json!(t));
        }
    }
    Scenario::from_value_with(&v, external)
}

/// Validate and return the canonical scenario.
pub fn normalize(scenario_json: &str) -> Result<String, ScenarioError> {
    normalize_with(scenario_json, &[])
}

/// Validate (accepting the `external` controller names) and return the canonical scenario.
pub fn normalize_with(scenario_json: &str, external: &[String]) -> Result<String, ScenarioError> {
    Ok(parse_with(scenario_json, None, None, external)?.normalized().to_string())
}

/// The canonical scenario plus every per-flow resolved value.
pub fn expand(scenario_json: &str, seed: Option<u64>) -> Result<String, ScenarioError> {
    expand_with(scenario_json, seed, &[])
}

/// `expand`, accepting the `external` controller names (as `normalize_with`).
pub fn expand_with(scenario_json: &str, seed: Option<u64>, external: &[String]) -> Result<String, ScenarioError> {
    Ok(parse_with(scenario_json, seed, None, external)?.expanded().to_string())
}

/// `registry::coerce_untyped` on a JSON object of parameters typed on a command line.
pub fn coerce_params(algorithm: &str, params_json: &str) -> Result<String, ScenarioError> {
    let v: Value = serde_json::from_str(params_json).map_err(|e| ScenarioError { field: "params".into(), message: format!("not valid JSON: {e}") })?;
    let Value::Object(m) = v else {
        return Err(ScenarioError { field: "params".into(), message: "must be a table of parameters".into() });
    };
    Ok(Value::Object(crate::registry::coerce_untyped(algorithm, &m)).to_string())
}

/// Run a validated scenario and return the result object.
pub fn run_scenario(s: &Scenario) -> Result<Value, RunError> {
    run_scenario_with(s, None)
}

/// Run a validated scenario whose external controllers come from `factory`.
pub fn run_scenario_with(s: &Scenario, factory: Option<&dyn ControllerFactory>) -> Result<Value, RunError> {
    Ok(run_scenario_traced(s, factory)?.0)
}

/// Run a validated scenario; also return its packet trace (the scenario's `[trace]`), if any.
pub fn run_scenario_traced(s: &Scenario, factory: Option<&dyn ControllerFactory>) -> Result<(Value, Option<Vec<u8>>), RunError> {
    let cfg = s.to_config();
    let mut res = Simulation::with_factory(cfg, factory).map_err(RunError::Runtime)?.run()?;
    let trace = res.trace.take();
    let mut out = Map::new();
    out.insert("version".into(), json!(crate::VERSION));
    out.insert("scenario".into(), s.normalized());
    out.insert("warnings".into(), json!(s.warnings()));
    out.insert("flows".into(), serde_json::to_value(&res.flows).expect("flows serialise"));
    out.insert("links".into(), serde_json::to_value(&res.links).expect("links serialise"));
    if let Some(log) = res.loss_log {
        out.insert("loss_events".into(), serde_json::to_value(&log).expect("loss log serialises"));
    }
    if let Some(ts) = res.timeseries {
        out.insert("timeseries".into(), serde_json::to_value(&ts).expect("time series serialise"));
    }
    out.insert("events".into(), json!(res.events));
    Ok((Value::Object(out), trace))
}

/// Validate, run, and return the result JSON.
pub fn run(scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>) -> Result<String, RunError> {
    let s = parse(scenario_json, seed, timeseries)?;
    Ok(run_scenario(&s)?.to_string())
}

/// Like `run_with` (`factory` None: `run`), also returning the packet trace's bytes when the
/// scenario has a `[trace]` table.
pub fn run_traced(scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>, names: &[String], factory: Option<&dyn ControllerFactory>) -> Result<(String, Option<Vec<u8>>), RunError> {
    let s = parse_with(scenario_json, seed, timeseries, names)?;
    let (v, trace) = run_scenario_traced(&s, factory)?;
    Ok((v.to_string(), trace))
}

/// Like `run`, with controllers the registry does not know: `names` may appear as algorithms
/// and `factory` builds them.
pub fn run_with(scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>, names: &[String], factory: &dyn ControllerFactory) -> Result<String, RunError> {
    let s = parse_with(scenario_json, seed, timeseries, names)?;
    Ok(run_scenario_with(&s, Some(factory))?.to_string())
}

/// Every registered algorithm (window controllers, rate-based schemes, UDP sources, then the
/// aliases), with kind, parameters, defaults, sources and the ns-2 mapping.
pub fn algorithms() -> String {
    crate::registry::to_json().to_string()
}

/// The engine's resource limits and their defaults (`config::Limits`), as JSON: what a
/// scenario gets when it sets no `max_window` or `[limits]`. Read by the ns-2 exporter so that
/// the exported script mirrors them.
pub fn limits() -> String {
    use crate::config::Limits;
    json!({
        "window": Limits::WINDOW,
        "access_queue": Limits::ACCESS_QUEUE,
        "memory": Limits::MEMORY,
        "min_memory": Limits::MIN_MEMORY,
        "max_memory": Limits::MAX_MEMORY,
        "max_packets": Limits::MAX_PACKETS,
        "timeseries_rows": Limits::TIMESERIES_ROWS,
    })
    .to_string()
}
