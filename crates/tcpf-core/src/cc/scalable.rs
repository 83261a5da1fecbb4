//! Scalable TCP (Kelly 2003): a multiplicative increase — a fixed amount per ACK, so the window
//! grows by the factor (1 + a) every RTT — and a multiplicative decrease by b per loss event.
//!
//! Per ACK `W ← W + a` (a = 0.01); per loss event `W ← W − b·W` (b = 0.125). At or below the
//! legacy window (16 packets) it is standard TCP: `+1/W` per ACK and halving. Slow start and
//! timeouts are the shared ones.
//!
//! Linux's tcp_scalable (and ns-2's `select_ca scalable`) differs: it adds one packet per
//! min(W, 50) + 1 ACKs, i.e. ≈ 1/51 ≈ 0.02 per ACK above 50 packets (the module doubles a "to
//! account for delayed ACKs") and Reno-like growth below; it removes 1/8 at every window and uses
//! that for the timeout's ssthresh too. Set a = 0.0196 and low_window = 50 to approximate it.

use super::params::{keep_alias, AlgorithmInfo, ParamSpec, Params, Taxonomy, ParamError};
use super::{Ack, Controller, LossEvent, Window};

const A: ParamSpec = ParamSpec {
    name: "a",
    default: Some(0.01),
    min: Some(0.0),
    min_open: true,
    unit: "packets/ACK",
    doc: "increase per ACK above low_window (the window grows by the factor 1 + a per RTT)",
    ..ParamSpec::NUMBER
};

const B: ParamSpec = ParamSpec::fraction("b", 0.125, "fraction of the window removed on a loss event above low_window");

const LOW_WINDOW: ParamSpec = ParamSpec {
    name: "low_window",
    default: Some(16.0),
    min: Some(0.0),
    unit: "packets",
    doc: "legacy window: at or below it Scalable TCP is standard TCP (+1/W per ACK, halving)",
    ..ParamSpec::NUMBER
};

pub fn scalable_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "scalable",
        family: "scalable",
        summary: "Scalable TCP: +a per ACK (MIMD), W <- W - b*W per loss event; standard TCP up to low_window",
        source: "Kelly, Scalable TCP, CCR 33(2) 2003 (a = 0.01, b = 0.125, legacy window 16)",
        params: vec![A, B, LOW_WINDOW],
        aliases: vec![keep_alias("b", "fraction of the window kept on a loss event; b = 1 - keep")],
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "superlinear", history: "variable" }),
        notes: "ns-2: Agent/TCP/Linux with select_ca scalable (no parameters; Linux's module adds ~1/51 per ACK above 50 packets, see the module doc). Taxonomy derived here from tsao2007's definitions (step a*W per RTT: exponential curve); tsao2007 itself does not classify Scalable TCP.",
        named_numbers: false,
        check: None,
    }
}

/// Scalable TCP.
#[derive(Clone, Debug)]
pub struct Scalable {
    pub a: f64,
    pub b: f64,
    pub low_window: f64,
    w: Window,
}

impl Scalable {
    pub fn new(a: f64, b: f64, low_window: f64, initial_window: f64, cap: f64) -> Self {
        Scalable { a, b, low_window, w: Window::new(initial_window, cap) }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        Ok(Self::new(p.get("a")?, p.get("b")?, p.get("low_window")?, initial_window, cap))
    }
}

impl Controller for Scalable {
    reno_min_cwnd!();

    fn on_ack(&mut self, _ack: &Ack) {
        if self.w.in_slow_start() {
            self.w.slow_start();
        } else if self.w.cwnd <= self.low_window {
            let inc = 1.0 / self.w.cwnd;
            self.w.grow(inc);
        } else {
            self.w.grow(self.a);
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let b = if ev.window <= self.low_window { 0.5 } else { self.b };
        self.w.reduce_to(ev.window * (1.0 - b));
    }

    window_in_field!(standard_timeout);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use serde_json::json;

    fn in_ca(w: f64) -> Scalable {
        let mut c = Scalable::new(0.01, 0.125, 16.0, 2.0, f64::INFINITY);
        c.w.ssthresh = 1.0;
        c.w.cwnd = w;
        c
    }

    #[test]
    fn plus_a_per_ack_and_times_0875_per_loss() {
        let mut c = in_ca(100.0);
        c.on_ack(&ack());
        assert!((c.window() - 100.01).abs() < 1e-12);
        // One RTT multiplies the window by ~(1 + a): 100 ACKs of +0.01.
        let mut c = in_ca(100.0);
        let inc = one_rtt(&mut c);
        assert!((inc - 1.0).abs() < 1e-9, "{inc}");
        // Ten RTTs: W grows geometrically (rounds of W ACKs each).
        let mut c = in_ca(1000.0);
        let w = rtts(&mut c, 10);
        let ratio = w[9] / w[8];
        println!("Scalable: windows over 10 RTTs from 1000: {:?}; last ratio {ratio:.5}", w.iter().map(|x| x.round()).collect::<Vec<_>>());
        assert!((ratio - 1.01).abs() < 1e-3);
        let mut c = in_ca(1000.0);
        c.on_loss_event(&loss(1000.0));
        assert!((c.window() - 875.0).abs() < 1e-9);
        assert_eq!(c.ssthresh(), 875.0);
    }

    #[test]
    fn legacy_window_is_standard_tcp() {
        let mut c = in_ca(10.0);
        let inc = one_rtt(&mut c);
        assert!((inc - 1.0).abs() < 0.06, "{inc}");
        c.on_loss_event(&loss(12.0));
        assert_eq!(c.window(), 6.0);
    }

    #[test]
    fn slow_start_timeout_and_keep_alias() {
        let mut c = Scalable::new(0.01, 0.125, 16.0, 2.0, f64::INFINITY);
        for _ in 0..198 {
            c.on_ack(&ack());
        }
        assert_eq!(c.window(), 200.0);
        c.on_loss_event(&loss(200.0));
        assert_eq!(c.window(), 175.0);
        c.on_timeout(&timeout(175.0));
        assert_eq!((c.window(), c.ssthresh()), (1.0, 87.5));
        let p = scalable_info().validate(json!({"keep": 0.75}).as_object().unwrap()).unwrap();
        assert_eq!(p.to_json(), json!({"a": 0.01, "b": 0.25, "low_window": 16.0}));
        let e = scalable_info().validate(json!({"a": 0}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.field, "a");
    }
}
