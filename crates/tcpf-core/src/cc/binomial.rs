//! Binomial congestion control (Bansal & Balakrishnan 2001, as used by jin2001 §2,
//! sastry2005 eq. 6 and tsao2007 Table 2): per RTT `W ← W + α/W^k`, per loss event
//! `W ← W − β·W^l`. Per ACK the increase is applied as `α/W^(k+1)`.
//!
//! TCP-friendly iff `k + l = 1`; other combinations are accepted with a warning. Rejected
//! (the control does not converge to fairness, or can drive the window negative):
//! `k ≤ −1` (the increase no longer favours the smaller window, sastry2005 Corollary 2),
//! `l > 1` (the decrease can exceed the window, sastry2005 §II) and `k + l ≤ 0` (the decrease
//! no longer offsets the increase over an epoch, sastry2005 Corollary 3).
//!
//! As ns-2 does, the loss event that ends slow start halves the window whatever β says.

use super::params::{AlgorithmInfo, ParamError, ParamSpec, Params, Taxonomy};
use super::{Ack, Controller, LossEvent, Window};

const K: ParamSpec = ParamSpec {
    name: "k",
    min: Some(-1.0),
    min_open: true,
    unit: "",
    doc: "increase exponent: +alpha/W^k per RTT (k > -1)",
    ..ParamSpec::NUMBER
};

const L: ParamSpec = ParamSpec {
    name: "l",
    max: Some(1.0),
    unit: "",
    doc: "decrease exponent: -beta*W^l per loss event (l <= 1)",
    ..ParamSpec::NUMBER
};

const ALPHA: ParamSpec = ParamSpec {
    name: "alpha",
    default: Some(1.0),
    min: Some(0.0),
    min_open: true,
    unit: "packets^(1+k)/RTT",
    doc: "increase coefficient: +alpha/W^k per RTT",
    ..ParamSpec::NUMBER
};

const BETA: ParamSpec = ParamSpec { unit: "packets^(1-l)", ..ParamSpec::fraction("beta", 0.67, "decrease coefficient: -beta*W^l per loss event (ns-2: 1 - decrease_num_)") };

/// Reject unstable (k, l) pairs; warn when the pair is not TCP-friendly.
pub fn check_kl(k: f64, l: f64, warnings: &mut Vec<String>) -> Result<(), ParamError> {
    if k + l <= 0.0 {
        return Err(ParamError::new(
            "l",
            format!("k + l must be > 0 or the decrease never offsets the increase and flows do not converge to fairness (sastry2005 Corollary 3); got k + l = {}", k + l),
        ));
    }
    if (k + l - 1.0).abs() > 1e-9 {
        warnings.push(format!(
            "binomial k = {k}, l = {l}: k + l = {} is not 1, so the control is not TCP-friendly (throughput will not scale as 1/sqrt(p); Bansal-Balakrishnan 2001, sastry2005 Corollary 13)",
            k + l
        ));
    }
    Ok(())
}

fn check_binomial(p: &mut Params) -> Result<(), ParamError> {
    let (k, l) = (p.get("k")?, p.get("l")?);
    check_kl(k, l, &mut p.warnings)
}

const BINOMIAL_TAXONOMY_NOTE: &str = "TCP-friendly iff k + l = 1 (a warning is printed otherwise). ns-2: Agent/TCP windowOption_ 6 with k_parameter_ = k, l_parameter_ = l, increase_num_ = alpha, decrease_num_ = 1 - beta.";

pub fn binomial_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "binomial",
        family: "binomial",
        summary: "Binomial(k, l): +alpha/W^k per RTT, W <- W - beta*W^l per loss event",
        source: "Bansal & Balakrishnan 2001; jin2001 §2; sastry2005 eq. 6",
        params: vec![K, L, ALPHA, BETA],
        aliases: vec![],
        taxonomy: None,
        notes: BINOMIAL_TAXONOMY_NOTE,
        named_numbers: false,
        check: Some(check_binomial),
    }
}

pub fn iiad_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "iiad",
        family: "binomial",
        summary: "IIAD, binomial k = 1, l = 0: +alpha/W per RTT, W <- W - beta per loss event",
        source: "Bansal & Balakrishnan 2001; defaults alpha = 1, beta = 0.67 as tsao2007 Table 2 (jin2001 uses beta = 2/3)",
        params: vec![ALPHA, BETA],
        aliases: vec![],
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "sublinear", history: "non-historical" }),
        notes: "ns-2: windowOption_ 6, k_parameter_ 1, l_parameter_ 0, increase_num_ = alpha, decrease_num_ = 1 - beta.",
        named_numbers: false,
        check: None,
    }
}

pub fn sqrt_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "sqrt",
        family: "binomial",
        summary: "SQRT, binomial k = l = 1/2: +alpha/sqrt(W) per RTT, W <- W - beta*sqrt(W) per loss event",
        source: "Bansal & Balakrishnan 2001; defaults alpha = 1, beta = 0.67 as tsao2007 Table 2",
        params: vec![ALPHA, BETA],
        aliases: vec![],
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "sublinear", history: "variable" }),
        notes: "ns-2: windowOption_ 6, k_parameter_ 0.5, l_parameter_ 0.5, increase_num_ = alpha, decrease_num_ = 1 - beta.",
        named_numbers: false,
        check: None,
    }
}

/// Binomial(k, l, α, β).
#[derive(Clone, Debug)]
pub struct Binomial {
    pub k: f64,
    pub l: f64,
    pub alpha: f64,
    pub beta: f64,
    w: Window,
}

impl Binomial {
    pub fn new(k: f64, l: f64, alpha: f64, beta: f64, initial_window: f64, cap: f64) -> Self {
        Binomial { k, l, alpha, beta, w: Window::new(initial_window, cap) }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        let (k, l) = match p.algorithm.as_str() {
            "iiad" => (1.0, 0.0),
            "sqrt" => (0.5, 0.5),
            _ => (p.get("k")?, p.get("l")?),
        };
        Ok(Self::new(k, l, p.get("alpha")?, p.get("beta")?, initial_window, cap))
    }

    /// Per-RTT increment at window `w`: α/w^k.
    pub fn increase_per_rtt(&self, w: f64) -> f64 {
        self.alpha / libm::pow(w, self.k)
    }

    /// Amount removed by a loss event at window `w`: β·w^l.
    pub fn decrease(&self, w: f64) -> f64 {
        self.beta * libm::pow(w, self.l)
    }

    #[cfg(test)]
    pub(crate) fn window_mut(&mut self) -> &mut Window {
        &mut self.w
    }
}

impl Controller for Binomial {
    fn on_ack(&mut self, _ack: &Ack) {
        if self.w.in_slow_start() {
            self.w.slow_start();
        } else {
            let w = self.w.cwnd;
            let inc = self.alpha / libm::pow(w, self.k + 1.0);
            self.w.grow(inc);
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let target = if self.w.in_slow_start() { ev.window * 0.5 } else { ev.window - self.decrease(ev.window) };
        self.w.reduce_to(target);
    }

    window_in_field!(standard_timeout);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use serde_json::json;

    #[test]
    fn increase_per_rtt_is_alpha_over_w_to_the_k() {
        for (k, l) in [(1.0, 0.0), (0.5, 0.5), (0.0, 1.0), (0.25, 0.75)] {
            for w0 in [40.0, 100.0, 200.0] {
                let mut c = Binomial::new(k, l, 1.0, 0.67, 2.0, f64::INFINITY);
                c.window_mut().ssthresh = 1.0;
                c.window_mut().cwnd = w0;
                // Per ACK: exactly alpha/W^(k+1).
                c.on_ack(&ack());
                assert!((c.window() - (w0 + 1.0 / f64::powf(w0, k + 1.0))).abs() < 1e-12);
                c.window_mut().cwnd = w0;
                let inc = one_rtt(&mut c);
                let expect = 1.0 / f64::powf(w0, k);
                // W ACKs of alpha/W^(k+1) integrate to W1^(k+2) = W0^(k+2) + (k+2)*alpha*W0.
                let integrated = f64::powf(f64::powf(w0, k + 2.0) + (k + 2.0) * w0, 1.0 / (k + 2.0)) - w0;
                println!("k={k} l={l} W={w0}: +{inc:.5}/RTT, alpha/W^k = {expect:.5}, integrated per-ACK rule {integrated:.5}");
                assert!((inc / integrated - 1.0).abs() < 2e-3, "k={k} W={w0}: {inc} vs {integrated}");
                // Within an RTT the window (and so the per-ACK step) moves a little.
                assert!((inc / expect - 1.0).abs() < 0.02, "k={k} W={w0}: {inc} vs {expect}");
            }
        }
    }

    #[test]
    fn decrease_is_beta_w_to_the_l_after_slow_start() {
        let mut c = Binomial::new(0.5, 0.5, 1.0, 0.67, 2.0, f64::INFINITY);
        c.on_loss_event(&loss(80.0)); // ends slow start: halves
        assert_eq!(c.window(), 40.0);
        c.on_loss_event(&loss(36.0));
        assert!((c.window() - (36.0 - 0.67 * 6.0)).abs() < 1e-12);
        let mut c = Binomial::new(1.0, 0.0, 1.0, 0.67, 2.0, f64::INFINITY);
        c.on_loss_event(&loss(80.0));
        c.on_loss_event(&loss(30.0));
        assert!((c.window() - 29.33).abs() < 1e-12);
        assert_eq!(c.ssthresh(), c.window());
    }

    #[test]
    fn presets_and_validation() {
        let p = iiad_info().validate(&json!({}).as_object().unwrap().clone()).unwrap();
        assert_eq!(p.to_json(), json!({"alpha": 1.0, "beta": 0.67}));
        let c = Binomial::from_params(&p, 2.0, 100.0).unwrap();
        assert_eq!((c.k, c.l), (1.0, 0.0));
        let p = sqrt_info().validate(json!({"beta": 0.5}).as_object().unwrap()).unwrap();
        let c = Binomial::from_params(&p, 2.0, 100.0).unwrap();
        assert_eq!((c.k, c.l, c.beta), (0.5, 0.5, 0.5));
        assert!(p.warnings.is_empty());
        // TCP-friendly binomial: no warning.
        let p = binomial_info().validate(json!({"k": 0.3, "l": 0.7}).as_object().unwrap()).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        // Not TCP-friendly but stable: accepted with a warning that names the problem.
        let p = binomial_info().validate(json!({"k": 1, "l": 1}).as_object().unwrap()).unwrap();
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].contains("not TCP-friendly"), "{}", p.warnings[0]);
        println!("warning: {}", p.warnings[0]);
        // Unstable: rejected, naming the field.
        let e = binomial_info().validate(json!({"k": -0.5, "l": 0.2}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.field, "l");
        assert!(e.message.contains("k + l must be > 0"), "{}", e.message);
        let e = binomial_info().validate(json!({"k": -1, "l": 1}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.field, "k");
        let e = binomial_info().validate(json!({"k": 0, "l": 1.5}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.field, "l");
        let e = binomial_info().validate(json!({"l": 0.5}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.field, "k");
        assert!(e.message.contains("required"));
    }
}
