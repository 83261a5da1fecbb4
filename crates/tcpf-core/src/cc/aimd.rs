//! The AIMD family: standard TCP (AIMD(1, 1/2)) and GAIMD(α, β) of yang2000.
//!
//! Per RTT the window grows by α (applied per ACK as α/W); a loss event removes the fraction β
//! (`W ← W − β·W`). yang2000 writes the kept fraction instead; `keep` is accepted and
//! converted (β = 1 − keep). As ns-2 does, the loss event that ends slow start halves the
//! window whatever β says (the slow-start overshoot is not a steady-state sawtooth).

use super::params::{keep_alias, AlgorithmInfo, ParamSpec, Params, Taxonomy, ParamError};
use super::{Ack, Controller, LossEvent, Window};

pub fn tcp_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "tcp",
        family: "aimd",
        summary: "Standard TCP congestion avoidance: AIMD(1, 1/2), with slow start",
        source: "RFC 5681; Jacobson 1988",
        params: vec![],
        aliases: vec![],
        taxonomy: None,
        notes: "Loss recovery (reno | newreno | sack | linux) is chosen per flow with `recovery`.",
        named_numbers: false,
        check: None,
    }
}

const ALPHA: ParamSpec = ParamSpec {
    name: "alpha",
    default: Some(0.31),
    min: Some(0.0),
    max: None,
    min_open: true,
    max_open: false,
    unit: "packets/RTT",
    doc: "additive increase per RTT",
    ..ParamSpec::NUMBER
};

const BETA: ParamSpec = ParamSpec::fraction("beta", 0.125, "fraction of the window removed on a loss event");

pub fn gaimd_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "gaimd",
        family: "aimd",
        summary: "General AIMD: +alpha per RTT, W <- W - beta*W per loss event",
        source: "yang2000 (defaults: GAIMD(0.31, keep 0.875), on its TO-friendly curve)",
        params: vec![ALPHA, BETA],
        aliases: vec![keep_alias("beta", "fraction of the window kept on a loss event (yang2000's β, ns-2's decrease_num_); beta = 1 - keep")],
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "non-historical", curve: "linear", history: "variable" }),
        notes: "TCP-friendly (TD curve) when alpha = 3*beta/(2-beta); tsao2007 used GAIMD(0.2, 0.125).",
        named_numbers: false,
        check: None,
    }
}

/// The TCP-friendly α for a removed fraction β on the TD (triple-duplicate-ACK) curve:
/// `α = 3β/(2 − β)` (yang2000 eq. 6; jin2001 §3; sastry2005 eq. 5). β = 1/2 gives 1.
pub fn td_alpha(beta: f64) -> f64 {
    3.0 * beta / (2.0 - beta)
}

/// The TCP-friendly α for a removed fraction β on the TO (timeout) curve of yang2000 eq. 7:
/// `α = 4(1 − b²)/3` with `b = 1 − β` the kept fraction. β = 1/2 gives 1.
pub fn to_alpha(beta: f64) -> f64 {
    let b = 1.0 - beta;
    4.0 * (1.0 - b * b) / 3.0
}

/// AIMD(α, β) with standard slow start and timeout rules.
#[derive(Clone, Debug)]
pub struct Aimd {
    pub alpha: f64,
    pub beta: f64,
    w: Window,
}

impl Aimd {
    pub fn new(alpha: f64, beta: f64, initial_window: f64, cap: f64) -> Self {
        Aimd { alpha, beta, w: Window::new(initial_window, cap) }
    }

    /// `on_ack`, which reads nothing of the ACK's report: slow start, or α/W per ACK.
    #[inline]
    pub(crate) fn grow_on_ack(&mut self) {
        if self.w.in_slow_start() {
            self.w.slow_start();
        } else {
            let inc = self.alpha / self.w.cwnd;
            self.w.grow(inc);
        }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        if p.algorithm == "tcp" {
            Ok(Self::new(1.0, 0.5, initial_window, cap))
        } else {
            Ok(Self::new(p.get("alpha")?, p.get("beta")?, initial_window, cap))
        }
    }
}

impl Controller for Aimd {
    reno_min_cwnd!();

    #[inline]
    fn on_ack(&mut self, _ack: &Ack) {
        self.grow_on_ack();
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let removed = if self.w.in_slow_start() { 0.5 } else { self.beta };
        self.w.reduce_to(ev.window * (1.0 - removed));
    }

    window_in_field!(standard_timeout);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ack() -> Ack {
        Ack { now: 0.0, acked: 1, rtt: Some(0.1), min_rtt: 0.1, in_flight: 0 }
    }

    fn loss(w: f64) -> LossEvent {
        LossEvent { now: 0.0, window: w, in_flight: 0, ecn: false }
    }

    #[test]
    fn additive_increase_per_rtt_is_alpha() {
        let mut c = Aimd::new(0.31, 0.125, 2.0, f64::INFINITY);
        c.w.ssthresh = 1.0; // congestion avoidance from the start
        c.w.cwnd = 20.0;
        // One RTT = one ACK per packet of the window at its start.
        let w0 = c.window();
        for _ in 0..20 {
            c.on_ack(&ack());
        }
        let inc = c.window() - w0;
        assert!((inc - 0.31).abs() < 0.01, "increase {inc}");
    }

    /// `Held::on_rtt_sample_with` does not call AIMD for RTT samples: they must not matter.
    #[test]
    fn aimd_ignores_rtt_samples() {
        let mut a = Aimd::new(0.31, 0.125, 2.0, 500.0);
        let mut b = a.clone();
        for k in 0..300 {
            a.on_rtt_sample(k as f64 * 0.01, 0.05 + (k % 7) as f64 * 0.01);
            for c in [&mut a, &mut b] {
                c.on_ack(&ack());
                if k % 97 == 96 {
                    let w = c.window();
                    c.on_loss_event(&loss(w));
                }
            }
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
    }

    #[test]
    fn decrease_removes_beta_after_slow_start_ended() {
        let mut c = Aimd::new(0.31, 0.125, 2.0, f64::INFINITY);
        c.on_loss_event(&loss(40.0)); // ends slow start: halves
        assert_eq!(c.window(), 20.0);
        c.on_loss_event(&loss(20.0));
        assert!((c.window() - 17.5).abs() < 1e-12);
        assert_eq!(c.ssthresh(), c.window());
    }

    #[test]
    fn timeout_restarts_from_one() {
        let mut c = Aimd::new(1.0, 0.5, 2.0, f64::INFINITY);
        c.on_timeout(&crate::cc::Timeout { now: 0.0, window: 30.0, in_flight: 30 });
        assert_eq!(c.window(), 1.0);
        assert_eq!(c.ssthresh(), 15.0);
    }

    #[test]
    fn window_never_passes_the_cap() {
        let mut c = Aimd::new(1.0, 0.5, 2.0, 5.0);
        for _ in 0..100 {
            c.on_ack(&ack());
        }
        assert_eq!(c.window(), 5.0);
    }

    #[test]
    fn tcp_friendly_alpha_curves() {
        // Both curves pass through TCP's AIMD(1, 1/2).
        assert!((td_alpha(0.5) - 1.0).abs() < 1e-15);
        assert!((to_alpha(0.5) - 1.0).abs() < 1e-15);
        // jin2001: AIMD(1/5, 1/8) and AIMD(1/10, 1/16) are on the TD curve (to 2 digits).
        assert!((td_alpha(0.125) - 0.2).abs() < 0.001, "{}", td_alpha(0.125));
        assert!((td_alpha(1.0 / 16.0) - 0.0968).abs() < 1e-4, "{}", td_alpha(1.0 / 16.0));
        // yang2000: keep 0.875 gives α ≈ 0.31 on the TO curve (its GAIMD(0.31, 0.875)).
        let a = to_alpha(0.125);
        println!("TD(1/8) = {:.4}, TO(1/8) = {a:.4}", td_alpha(0.125));
        assert!((a - 0.3125).abs() < 1e-12, "{a}");
        // The same relations in yang2000's kept-fraction form: TD α = 3(1−b)/(1+b).
        for b in [0.5, 0.75, 0.875] {
            assert!((td_alpha(1.0 - b) - 3.0 * (1.0 - b) / (1.0 + b)).abs() < 1e-15);
        }
    }

    #[test]
    fn keep_is_converted_to_canonical_beta() {
        let given = json!({"alpha": 0.31, "keep": 0.875});
        let p = gaimd_info().validate(given.as_object().unwrap()).unwrap();
        assert_eq!(p.to_json(), json!({"alpha": 0.31, "beta": 0.125}));
    }

    #[test]
    fn rejects_impossible_values_naming_the_field() {
        let e = gaimd_info().validate(json!({"beta": 1.5}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.field, "beta");
        assert!(e.message.contains("(0, 1)"), "{}", e.message);
        let e = gaimd_info().validate(json!({"keep": 0.8, "beta": 0.2}).as_object().unwrap()).unwrap_err();
        assert!(e.message.contains("only one"), "{}", e.message);
        let e = gaimd_info().validate(json!({"gamma": 1}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.field, "gamma");
    }
}
