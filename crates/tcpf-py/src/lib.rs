//! Python bindings: `tcpfriendly._core`. JSON strings cross the boundary; the Python package
//! turns them into dicts and DataFrames. Runs release the GIL.

mod models;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tcpf_core::api;

fn scenario_err(e: tcpf_core::scenario::ScenarioError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Version of the engine.
#[pyfunction]
fn version() -> &'static str {
    tcpf_core::VERSION
}

/// Validate a scenario (JSON) and return it normalised, every default filled in.
#[pyfunction]
fn normalize(scenario_json: &str) -> PyResult<String> {
    api::normalize(scenario_json).map_err(scenario_err)
}

/// The normalised scenario plus per-flow resolved values (start times, delays).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn expand(scenario_json: &str, seed: Option<u64>) -> PyResult<String> {
    api::expand(scenario_json, seed).map_err(scenario_err)
}

/// Run a scenario and return the result JSON.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, timeseries=None))]
fn run(py: Python<'_>, scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>) -> PyResult<String> {
    let owned = scenario_json.to_string();
    py.allow_threads(move || api::run(&owned, seed, timeseries)).map_err(scenario_err)
}

/// The controller registry as JSON.
#[pyfunction]
fn algorithms() -> String {
    api::algorithms()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(expand, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    models::register(m)?;
    Ok(())
}
