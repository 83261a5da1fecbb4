//! Python bindings: `tcpfriendly._core`. JSON strings cross the boundary; the Python package
//! turns them into dicts and DataFrames. Runs release the GIL.

mod controllers;
mod models;

/// Large engine arrays on huge pages (see `tcpf_core::alloc`); Python's own memory is untouched.
#[global_allocator]
static ALLOC: tcpf_core::alloc::HugePageAlloc = tcpf_core::alloc::HugePageAlloc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tcpf_core::api;
use tcpf_core::error::FieldError as CoreFieldError;

pyo3::create_exception!(
    _core,
    FieldError,
    PyValueError,
    "Bad input: `field` is the dotted path of the offending field (None when the error is about the input as a whole) and `message` says what is wrong; str() is \"field: message\"."
);

/// The engine's structured error as a Python `FieldError` carrying `field` and `message`.
pub(crate) fn field_err(py: Python<'_>, e: CoreFieldError) -> PyErr {
    let err = FieldError::new_err(e.to_string());
    let value = err.value(py);
    let field = if e.field.is_empty() { None } else { Some(e.field) };
    if let Err(set) = value.setattr("field", field).and_then(|_| value.setattr("message", e.message)) {
        return set;
    }
    err
}

/// Version of the engine.
#[pyfunction]
fn version() -> &'static str {
    tcpf_core::VERSION
}

/// The engine's build identity: a 16-hex-digit hash, fixed at build time (`build.rs`), of
/// the sources that decide simulation results (`crates/tcpf-core`, these bindings, the
/// manifests and `Cargo.lock`). Same sources, same id; the run caches key on it, since
/// `version()` stays the same when the engine changes.
#[pyfunction]
fn engine_id() -> &'static str {
    ENGINE_ID
}

const ENGINE_ID: &str = env!("TCPF_ENGINE_ID");

fn run_err(py: Python<'_>, e: api::RunError) -> PyErr {
    match e {
        api::RunError::Scenario(e) => field_err(py, e),
        api::RunError::Runtime(m) => PyRuntimeError::new_err(m),
    }
}

/// Names and classes of user-defined (Python) controllers.
fn classes(controllers: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, Py<PyAny>)>> {
    let mut out = vec![];
    if let Some(d) = controllers {
        for (k, v) in d.iter() {
            out.push((k.extract::<String>()?, v.unbind()));
        }
    }
    Ok(out)
}

/// Validate a scenario (JSON) and return it normalised, every default filled in.
/// `controllers`: names of user-defined controllers that flow groups may use.
#[pyfunction]
#[pyo3(signature = (scenario_json, controllers=None))]
fn normalize(py: Python<'_>, scenario_json: &str, controllers: Option<Vec<String>>) -> PyResult<String> {
    api::normalize_with(scenario_json, &controllers.unwrap_or_default()).map_err(|e| field_err(py, e))
}

/// Parameters typed on a command line (JSON object) with the types `algorithm`'s registry
/// entry gives them (`registry::coerce_untyped`).
#[pyfunction]
fn coerce_params(py: Python<'_>, algorithm: &str, params_json: &str) -> PyResult<String> {
    api::coerce_params(algorithm, params_json).map_err(|e| field_err(py, e))
}

/// The normalised scenario plus per-flow resolved values (start times, delays).
/// `controllers`: names of user-defined controllers that flow groups may use.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, controllers=None))]
fn expand(py: Python<'_>, scenario_json: &str, seed: Option<u64>, controllers: Option<Vec<String>>) -> PyResult<String> {
    api::expand_with(scenario_json, seed, &controllers.unwrap_or_default()).map_err(|e| field_err(py, e))
}

/// Run a scenario and return the result JSON. `controllers` maps algorithm names to Python
/// classes (subclasses of `tcpfriendly.Controller`); without it the GIL is released for the
/// whole run.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, timeseries=None, controllers=None))]
fn run(py: Python<'_>, scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>, controllers: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
    let owned = scenario_json.to_string();
    let classes = classes(controllers)?;
    if classes.is_empty() {
        return py.allow_threads(move || api::run(&owned, seed, timeseries)).map_err(|e| run_err(py, e));
    }
    let factory = controllers::PyFactory::new(py, classes)?;
    let names = factory.names();
    py.allow_threads(move || api::run_with(&owned, seed, timeseries, &names, &factory)).map_err(|e| run_err(py, e))
}

/// Like `run`, also returning the packet trace (the scenario's `[trace]` table) as bytes, or
/// None when the scenario traces nothing: `(result_json, trace)`.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, timeseries=None, controllers=None))]
fn run_traced(py: Python<'_>, scenario_json: &str, seed: Option<u64>, timeseries: Option<f64>, controllers: Option<&Bound<'_, PyDict>>) -> PyResult<(String, Option<Py<pyo3::types::PyBytes>>)> {
    let owned = scenario_json.to_string();
    let classes = classes(controllers)?;
    let (text, trace) = if classes.is_empty() {
        py.allow_threads(move || api::run_traced(&owned, seed, timeseries, &[], None)).map_err(|e| run_err(py, e))?
    } else {
        let factory = controllers::PyFactory::new(py, classes)?;
        let names = factory.names();
        py.allow_threads(move || api::run_traced(&owned, seed, timeseries, &names, Some(&factory))).map_err(|e| run_err(py, e))?
    };
    Ok((text, trace.map(|b| pyo3::types::PyBytes::new(py, &b).unbind())))
}

/// The controller registry as JSON.
#[pyfunction]
fn algorithms() -> String {
    api::algorithms()
}

/// The engine's resource limits and their defaults as JSON.
#[pyfunction]
fn limits() -> String {
    api::limits()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FieldError", m.py().get_type::<FieldError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(engine_id, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(expand, m)?)?;
    m.add_function(wrap_pyfunction!(coerce_params, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_traced, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(limits, m)?)?;
    models::register(m)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn engine_id_is_sixteen_hex_digits_and_the_same_on_every_call() {
        let id = super::engine_id();
        assert_eq!(id.len(), 16, "{id}");
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{id}");
        assert_eq!(super::engine_id(), id);
    }
}
