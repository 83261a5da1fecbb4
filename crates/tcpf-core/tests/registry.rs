//! The algorithm registry is the one place a control law is added: a toy window controller
//! defined in this file, registered at run time, is validated by the scenario layer, listed by
//! `api::algorithms()` and run end to end by the engine, with no other code knowing its name.

use serde_json::{json, Value};
use std::sync::Once;
use tcpf_core::api;
use tcpf_core::cc::params::{AlgorithmInfo, ParamError, ParamSpec, Params};
use tcpf_core::cc::{Ack, Controller, LossEvent, Timeout, Window};
use tcpf_core::registry::{self, Entry, Kind, Ns2};

/// A toy law: +`gain` packets per RTT, halve on a loss event.
struct Toy {
    gain: f64,
    w: Window,
}

impl Controller for Toy {
    fn on_ack(&mut self, _ack: &Ack) {
        if self.w.in_slow_start() {
            self.w.slow_start();
        } else {
            let inc = self.gain / self.w.cwnd;
            self.w.grow(inc);
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        self.w.reduce_to(ev.window / 2.0);
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.timeout(to.window);
    }

    fn window(&self) -> f64 {
        self.w.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.w.ssthresh
    }
}

fn toy_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "toy",
        family: "test",
        summary: "A test-only law: +gain per RTT, halve on a loss event",
        source: "tests/registry.rs",
        params: vec![ParamSpec { name: "gain", default: Some(1.0), min: Some(0.0), min_open: true, unit: "packets/RTT", doc: "increase per RTT", ..ParamSpec::NUMBER }],
        aliases: vec![],
        taxonomy: None,
        notes: "",
        named_numbers: false,
        check: None,
    }
}

fn build_toy(p: &Params, initial_window: f64, cap: f64) -> Result<Box<dyn Controller>, ParamError> {
    Ok(Box::new(Toy { gain: p.get("gain")?, w: Window::new(initial_window, cap) }))
}

/// A law whose constructor looks up a parameter its schema does not have.
fn build_typo(p: &Params, initial_window: f64, cap: f64) -> Result<Box<dyn Controller>, ParamError> {
    Ok(Box::new(Toy { gain: p.get("gian")?, w: Window::new(initial_window, cap) }))
}

fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        registry::register(Entry::window(toy_info(), build_toy, Ns2::Unsupported("a test-only law"))).unwrap();
        let typo = AlgorithmInfo { name: "toy_typo", ..toy_info() };
        registry::register(Entry::window(typo, build_typo, Ns2::Unsupported("a test-only law"))).unwrap();
    });
}

fn scenario(algorithm: &str, params: Value) -> String {
    json!({
        "duration": 20, "seed": 3,
        "bottleneck": {"rate": "2Mbps", "delay": "20ms", "queue": "droptail"},
        "flows": [
            {"count": 2, "algorithm": algorithm, "params": params},
            {"count": 1, "algorithm": "tcp"}
        ]
    })
    .to_string()
}

#[test]
fn a_registered_toy_controller_runs_end_to_end() {
    register();
    let out: Value = serde_json::from_str(&api::run(&scenario("toy", json!({"gain": 2})), None, None).unwrap()).unwrap();
    let toy: Vec<&Value> = out["flows"].as_array().unwrap().iter().filter(|f| f["algorithm"] == "toy").collect();
    assert_eq!(toy.len(), 2);
    for f in toy {
        assert!(f["goodput_bps"].as_f64().unwrap() > 100_000.0, "{f}");
        assert!(f["loss_events"].as_u64().unwrap() > 0, "{f}");
    }
    // the canonical scenario carries the toy's parameters in canonical form
    assert_eq!(out["scenario"]["flows"][0]["params"], json!({"gain": 2.0}));
}

#[test]
fn the_listing_and_validation_see_the_toy() {
    register();
    let list: Value = serde_json::from_str(&api::algorithms()).unwrap();
    let toy = list.as_array().unwrap().iter().find(|a| a["name"] == "toy").expect("toy listed");
    assert_eq!(toy["kind"], "window");
    assert_eq!(toy["params"][0]["name"], "gain");
    assert_eq!(toy["ns2"], json!({"unsupported": "a test-only law"}));
    assert!(registry::names(Kind::Window).contains(&"toy"));
    // the schema is enforced by the scenario layer, naming the field
    let e = api::normalize(&scenario("toy", json!({"gian": 2}))).unwrap_err();
    assert_eq!(e.field, "flows[0].params.gian");
    assert!(e.message.starts_with("unknown parameter for 'toy' (allowed: gain)"), "{e}");
    let e = api::normalize(&scenario("toy", json!({"gain": 0}))).unwrap_err();
    assert_eq!(e.field, "flows[0].params.gain");
    // and an unknown algorithm's message lists it among the window controllers
    let e = api::normalize(&scenario("toy2", json!({}))).unwrap_err();
    assert_eq!(e.field, "flows[0].algorithm");
    assert!(e.message.contains(", toy"), "{e}");
}

#[test]
fn a_name_is_registered_once() {
    register();
    let e = registry::register(Entry::window(toy_info(), build_toy, Ns2::Unsupported(""))).unwrap_err();
    assert!(e.message.contains("'toy' is already registered"), "{e}");
    let gaimd = AlgorithmInfo { name: "aimd", ..toy_info() };
    assert!(registry::register(Entry::window(gaimd, build_toy, Ns2::Unsupported(""))).is_err(), "an alias's name is taken too");
}

#[test]
fn a_parameter_lookup_the_schema_lacks_fails_at_construction() {
    register();
    // validation passes (gain is in the schema); the constructor asks for "gian"
    let err = api::run(&scenario("toy_typo", json!({})), None, None).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("gian") && text.contains("'toy_typo' has no number parameter"), "{text}");
    assert!(matches!(err, api::RunError::Runtime(_)));
}
