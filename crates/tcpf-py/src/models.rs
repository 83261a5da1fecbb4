//! Bindings for `tcpf_core::models`: `_core.model(name, params_json) -> result_json`.
//! Bad parameters raise `_core.FieldError` (a ValueError) with `field` (the parameter) and
//! `message`; `_core.model_names()` lists the models.

use pyo3::prelude::*;
use tcpf_core::models::api;

/// Run analytic model `name` with parameters given as a JSON object; returns the result JSON.
#[pyfunction]
fn model(py: Python<'_>, name: &str, params_json: &str) -> PyResult<String> {
    let (name, params) = (name.to_string(), params_json.to_string());
    py.allow_threads(move || api::call_json(&name, &params)).map_err(|e| crate::field_err(py, e))
}

/// The names `model` accepts.
#[pyfunction]
fn model_names() -> Vec<&'static str> {
    api::MODELS.to_vec()
}

/// yang2000 eq. 2, the GAIMD sending rate T(p, RTT, T0, b) in packets/s
/// (`tcpf_core::models::rate::gaimd`, the function behind the `rate` model's `rate_eq2`),
/// without the `rate` model's curves and JSON: the per-flow metrics of every sweep run call
/// it. The caller validates the arguments (`tcpfriendly.metrics.groups` does).
#[pyfunction]
fn gaimd_rate(alpha: f64, keep: f64, p: f64, rtt: f64, t0: f64, b: f64) -> f64 {
    tcpf_core::models::rate::gaimd(alpha, keep, p, rtt, t0, b)
}

/// Add the model functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(model, m)?)?;
    m.add_function(wrap_pyfunction!(model_names, m)?)?;
    m.add_function(wrap_pyfunction!(gaimd_rate, m)?)?;
    Ok(())
}
