//! JSON in, JSON out: the entry points the Python bindings (and any other front end) use.

use crate::engine::Simulation;
use crate::scenario::{Scenario, ScenarioError};
use serde_json::{json, Map, Value};

fn parse(scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>) -> Result<Scenario, ScenarioError> {
    let mut v: Value = serde_json::from_str(scenario_json).map_err(|e| ScenarioError { field: String::new(), message: format!("scenario is not valid JSON: {e}") })?;
    if let Some(obj) = v.as_object_mut() {
        if let Some(s) = seed {
            obj.insert("seed".into(), json!(s));
        }
        if let Some(t) = timeseries {
            obj.insert("timeseries".into(), json!(t));
        }
    }
    Scenario::from_value(&v)
}

/// Validate and return the canonical scenario.
pub fn normalize(scenario_json: &str) -> Result<String, ScenarioError> {
    Ok(parse(scenario_json, None, None)?.normalized().to_string())
}

/// The canonical scenario plus every per-flow resolved value.
pub fn expand(scenario_json: &str, seed: Option<u64>) -> Result<String, ScenarioError> {
    Ok(parse(scenario_json, seed, None)?.expanded().to_string())
}

/// Run a validated scenario and return the result object.
pub fn run_scenario(s: &Scenario) -> Value {
    let cfg = s.to_config();
    let res = Simulation::new(cfg).run();
    let mut out = Map::new();
    out.insert("version".into(), json!(crate::VERSION));
    out.insert("scenario".into(), s.normalized());
    out.insert("flows".into(), serde_json::to_value(&res.flows).expect("flows serialise"));
    out.insert("links".into(), serde_json::to_value(&res.links).expect("links serialise"));
    if let Some(log) = res.loss_log {
        out.insert("loss_events".into(), serde_json::to_value(&log).expect("loss log serialises"));
    }
    if let Some(ts) = res.timeseries {
        out.insert("timeseries".into(), serde_json::to_value(&ts).expect("time series serialise"));
    }
    out.insert("events".into(), json!(res.events));
    Value::Object(out)
}

/// Validate, run, and return the result JSON.
pub fn run(scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>) -> Result<String, ScenarioError> {
    let s = parse(scenario_json, seed, timeseries)?;
    Ok(run_scenario(&s).to_string())
}

/// Every registered controller, with parameters, defaults and sources.
pub fn algorithms() -> String {
    let mut list = serde_json::to_value(crate::cc::registry()).expect("registry serialises");
    // Aliases are part of how users write parameters: list them beside the canonical ones.
    if let Value::Array(items) = &mut list {
        for (item, info) in items.iter_mut().zip(crate::cc::registry()) {
            let aliases: Vec<Value> = info
                .aliases
                .iter()
                .map(|a| json!({"name": a.name, "canonical": a.canonical, "doc": a.spec.doc, "min": a.spec.min, "max": a.spec.max}))
                .collect();
            item["aliases"] = Value::Array(aliases);
        }
    }
    list.to_string()
}
