//! Controllers written in Python (`tcpfriendly.Controller` subclasses), driven by the engine
//! through the `Controller` trait. Every call takes the GIL, so such flows run far slower than
//! built-in controllers; the window and threshold are read back after each call and cached.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use tcpf_core::cc::{Ack, Controller, LossEvent, Timeout};
use tcpf_core::engine::ControllerFactory;

/// The record types handed to Python (named tuples from `tcpfriendly.controller`).
struct Records {
    ack: Py<PyAny>,
    loss: Py<PyAny>,
    timeout: Py<PyAny>,
    /// `tuple.__new__`: a record is made as a named tuple's own `__new__` makes it,
    /// `tuple.__new__(cls, values)`, without that Python-level function (about 0.45 µs per ACK).
    tuple_new: Py<PyAny>,
}

impl Records {
    fn make<'py>(&self, py: Python<'py>, cls: &Py<PyAny>, values: impl IntoPyObject<'py>) -> PyResult<PyObject> {
        self.tuple_new.call1(py, (cls.clone_ref(py), values))
    }
}

pub struct PyFactory {
    classes: Vec<(String, Py<PyAny>)>,
    records: std::sync::Arc<Records>,
}

impl PyFactory {
    pub fn new(py: Python<'_>, classes: Vec<(String, Py<PyAny>)>) -> PyResult<Self> {
        let m = py.import("tcpfriendly.controller")?;
        let tuple_new = py.import("builtins")?.getattr("tuple")?.getattr("__new__")?.unbind();
        let records = Records { ack: m.getattr("Ack")?.unbind(), loss: m.getattr("LossEvent")?.unbind(), timeout: m.getattr("Timeout")?.unbind(), tuple_new };
        Ok(PyFactory { classes, records: std::sync::Arc::new(records) })
    }

    pub fn names(&self) -> Vec<String> {
        self.classes.iter().map(|(n, _)| n.clone()).collect()
    }
}

fn to_py(py: Python<'_>, v: &Value) -> PyResult<PyObject> {
    let json = py.import("json")?;
    Ok(json.call_method1("loads", (v.to_string(),))?.unbind())
}

impl ControllerFactory for PyFactory {
    fn build(&self, name: &str, params: &Value, flow: u32, initial_window: f64, max_window: f64) -> Result<Box<dyn Controller>, String> {
        Python::with_gil(|py| {
            let cls = self.classes.iter().find(|(n, _)| n == name).map(|(_, c)| c.clone_ref(py)).ok_or_else(|| format!("no Python controller named '{name}'"))?;
            let made = (|| -> PyResult<PyController> {
                let kwargs = PyDict::new(py);
                if let Value::Object(m) = params {
                    for (k, v) in m {
                        kwargs.set_item(k, to_py(py, v)?)?;
                    }
                }
                kwargs.set_item("initial_window", initial_window)?;
                kwargs.set_item("max_window", max_window)?;
                let obj = cls.call(py, (), Some(&kwargs))?;
                // Only pay for per-sample calls when the class overrides on_rtt_sample.
                let base = py.import("tcpfriendly.controller")?.getattr("Controller")?.getattr("on_rtt_sample")?;
                let own = obj.bind(py).get_type().getattr("on_rtt_sample")?;
                let rtt_hook = !own.is(&base);
                let mut c = PyController { obj, records: self.records.clone(), cwnd: initial_window, ssthresh: f64::INFINITY, error: None, rtt_hook };
                c.refresh(py)?;
                Ok(c)
            })();
            made.map(|c| Box::new(c) as Box<dyn Controller>).map_err(|e| format!("creating Python controller '{name}' for flow {flow}: {e}"))
        })
    }
}

struct PyController {
    obj: Py<PyAny>,
    records: std::sync::Arc<Records>,
    cwnd: f64,
    ssthresh: f64,
    error: Option<String>,
    rtt_hook: bool,
}

impl PyController {
    /// Read `cwnd` and `ssthresh` back from the Python object.
    fn refresh(&mut self, py: Python<'_>) -> PyResult<()> {
        let o = self.obj.bind(py);
        // (interned names: no new Python string per ACK)
        let cwnd: f64 = o.getattr(intern!(py, "cwnd"))?.extract()?;
        let ssthresh: f64 = o.getattr(intern!(py, "ssthresh"))?.extract()?;
        if !(cwnd.is_finite() && cwnd > 0.0) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("cwnd must be a positive finite number; got {}", tcpf_core::error::show_num(cwnd))));
        }
        if ssthresh.is_nan() || ssthresh <= 0.0 {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("ssthresh must be positive; got {}", tcpf_core::error::show_num(ssthresh))));
        }
        self.cwnd = cwnd;
        self.ssthresh = ssthresh;
        Ok(())
    }

    fn call(&mut self, now: f64, method: &str, make: impl FnOnce(Python<'_>, &Records) -> PyResult<PyObject>) {
        if self.error.is_some() {
            return;
        }
        let records = self.records.clone();
        Python::with_gil(|py| {
            let r = (|| -> PyResult<()> {
                let arg = make(py, &records)?;
                let name = match method {
                    "on_ack" => intern!(py, "on_ack"),
                    "on_loss_event" => intern!(py, "on_loss_event"),
                    _ => intern!(py, "on_timeout"),
                };
                self.obj.call_method1(py, name, (arg,))?;
                self.refresh(py)
            })();
            if let Err(e) = r {
                self.error = Some(format!("at t = {now:.6} s: {method} raised {e}"));
            }
        });
    }
}

impl Controller for PyController {
    fn on_ack(&mut self, ack: &Ack) {
        let a = *ack;
        self.call(a.now, "on_ack", |py, r| r.make(py, &r.ack, (a.now, a.acked, a.rtt, a.min_rtt, a.in_flight)));
    }

    fn on_rtt_sample(&mut self, now: f64, rtt: f64) {
        if !self.rtt_hook || self.error.is_some() {
            return;
        }
        Python::with_gil(|py| {
            if let Err(e) = self.obj.call_method1(py, intern!(py, "on_rtt_sample"), (now, rtt)).and_then(|_| self.refresh(py)) {
                self.error = Some(format!("at t = {now:.6} s: on_rtt_sample raised {e}"));
            }
        });
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let e = *ev;
        self.call(e.now, "on_loss_event", |py, r| r.make(py, &r.loss, (e.now, e.window, e.in_flight, e.ecn)));
    }

    fn on_timeout(&mut self, to: &Timeout) {
        let t = *to;
        self.call(t.now, "on_timeout", |py, r| r.make(py, &r.timeout, (t.now, t.window, t.in_flight)));
    }

    fn window(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn error(&self) -> Option<String> {
        self.error.clone()
    }
}
