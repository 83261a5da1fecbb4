//! The history spectrum of jin2001 (§2–3, Table 1, Appendix E): controls that remember the
//! window just before the last decrease, `w_max`, and the window just after it, `w0`.
//!
//! - Increase per RTT `W ← W + α/(W − w0)^k` (k > −1), i.e. `w(t) = w0 + c·t^u` with
//!   `u = 1/(k+1)`, `c = ((k+1)α)^u` (jin2001 eq. 1–2); per ACK `α·(W − w0)^(−k)/W`
//!   (Appendix E eq. 15). The first ACK after a decrease, where `W = w0` would give a zero (or,
//!   for k > 0, infinite) step, sets `W ← w0 + c/w0` instead (Appendix E: one ACK's share of
//!   the first RTT's growth `w(1) − w0 = c`).
//! - Decrease per loss event `W ← W − β·W^l` (l ≤ 1); then `w_max` = the window before,
//!   `w0` = the window after, and α is recomputed from `w_max`.
//! - α makes the control TCP-friendly under random loss: eq. 4 (exact, with Γ) or eq. 6 (the
//!   small-β approximation that drops `1 − β·w_max^(l−1)/(k+2)`), chosen with `alpha_rule`.
//! - The first `w0` is the window when congestion avoidance starts (jin2001 footnote 2): after
//!   the loss that ends slow start (which halves the window, as ns-2 does), or after a timeout's
//!   slow start reaches ssthresh; that first `w_max` is obtained from `w0` by inverting the
//!   decrease rule (`w0 = w_max − β·w_max^l`).
//!
//! - SIMD/period (`simd_period`, tsao2007 Fig. 1(b)) is SIMD with the α of periodic losses:
//!   the c of jin2001 Appendix A eq. 10, which is eq. 5's without the division by Γ(u+1)
//!   (Γ(3) = 2 for SIMD, so α is √2 times eq. 8's). Same controller, the constant switched by
//!   `periodic`.
//!
//! Presets: SIMD (k = −1/2, l = 1), SIMD/period, AIAD/H (k = 0, l = 0) and the other Table 1
//! members.

use super::params::{AlgorithmInfo, ParamError, ParamKind, ParamSpec, Params, Taxonomy};
use super::{Ack, Controller, LossEvent, Timeout, Window};

/// jin2001's α with β divided by `g`: Γ(u+1) for random losses (eq. 4), 1 for periodic ones
/// (the α of Appendix A eq. 10's c, by footnote 3): the model's formula
/// (`models::spectrum::alpha_form`) evaluated with `libm::pow`, the same bits on every platform.
fn alpha_over(k: f64, l: f64, beta: f64, w_max: f64, exact: bool, g: f64) -> f64 {
    crate::models::spectrum::alpha_form(k, l, beta, w_max, exact, g, libm::pow)
}

/// TCP-friendly α of jin2001 eq. 4 (`exact`) or eq. 6 (small-β approximation): random losses.
pub fn history_alpha(k: f64, l: f64, beta: f64, w_max: f64, exact: bool) -> f64 {
    alpha_over(k, l, beta, w_max, exact, crate::models::spectrum::gamma_factor(k))
}

/// The α of periodic losses, jin2001 Appendix A eq. 10 (`exact`; without its correction
/// `1 − β·w_max^(l−1)/(k+2)` otherwise): eq. 4 without the Γ(u+1), i.e. `history_alpha`
/// times Γ(u+1)^(k+1). `models::spectrum::c_periodic` is the same constant as c.
pub fn history_alpha_periodic(k: f64, l: f64, beta: f64, w_max: f64, exact: bool) -> f64 {
    alpha_over(k, l, beta, w_max, exact, 1.0)
}

/// `c` of the window function `w(t) = w0 + c·t^(1/(k+1))` for a given α (jin2001 §2).
pub fn history_c(k: f64, alpha: f64) -> f64 {
    libm::pow((k + 1.0) * alpha, 1.0 / (k + 1.0))
}

/// SIMD's α (jin2001 eq. 8): `3√β / ((1 − 2β/3)·√(2·w_max))`; equals `history_alpha(−1/2, 1, …, true)`.
pub fn simd_alpha(beta: f64, w_max: f64) -> f64 {
    3.0 * beta.sqrt() / ((1.0 - 2.0 * beta / 3.0) * (2.0 * w_max).sqrt())
}

/// The `w_max` whose decrease leaves `w0`: solves `w − β·w^l = w0` (w ≥ w0).
pub fn w_max_from_w0(w0: f64, l: f64, beta: f64) -> f64 {
    if l == 1.0 {
        return w0 / (1.0 - beta);
    }
    if l == 0.0 {
        return w0 + beta;
    }
    // h(w) = w − β·w^l − w0 is increasing for w ≥ 1 when l ≤ 1 and β < 1: Newton from above.
    let mut w = w0 + beta * libm::pow(w0.max(1.0), l);
    for _ in 0..60 {
        let h = w - beta * libm::pow(w, l) - w0;
        let dh = 1.0 - beta * l * libm::pow(w, l - 1.0);
        let next = w - h / dh;
        if (next - w).abs() <= 1e-12 * w {
            w = next;
            break;
        }
        w = next;
    }
    w
}

const ALPHA_RULES: &[&str] = &["exact", "approx"];

const K: ParamSpec = ParamSpec {
    name: "k",
    min: Some(-1.0),
    min_open: true,
    doc: "increase exponent: +alpha/(W - w0)^k per RTT (k > -1; k < 0 super-linear, k > 0 sub-linear in time)",
    ..ParamSpec::NUMBER
};

const L: ParamSpec = ParamSpec {
    name: "l",
    max: Some(1.0),
    doc: "decrease exponent: -beta*W^l per loss event (l <= 1)",
    ..ParamSpec::NUMBER
};

const fn beta(default: f64) -> ParamSpec {
    ParamSpec { unit: "packets^(1-l)", ..ParamSpec::fraction("beta", default, "decrease coefficient: -beta*W^l per loss event (for l = 1 the fraction removed)") }
}

const ALPHA_RULE_PERIODIC: ParamSpec = ParamSpec {
    doc: "alpha for periodic losses from jin2001 App. A eq. 10 (exact, with the 1 - beta*w_max^(l-1)/(k+2) term) or without that term (approx, small beta)",
    ..ALPHA_RULE
};

const ALPHA_RULE: ParamSpec = ParamSpec {
    name: "alpha_rule",
    kind: ParamKind::Choice(ALPHA_RULES),
    default_text: Some("exact"),
    doc: "TCP-friendly alpha from jin2001 eq. 4 (exact, with the 1 - beta*w_max^(l-1)/(k+2) term) or eq. 6 (approx, small beta; Table 1 uses it)",
    ..ParamSpec::NUMBER
};

fn check_region(k: f64, l: f64, warnings: &mut Vec<String>) {
    let r = l - 1.0 / (k + 1.0);
    if !(-1.0 - 1e-12..=1e-12).contains(&r) {
        warnings.push(format!(
            "history control k = {k}, l = {l} lies outside jin2001's convergence region -1 <= l - 1/(k+1) <= 0 (Fig. 2; here {r:.3}): flows may not converge to fairness"
        ));
    }
}

fn check_history(p: &mut Params) -> Result<(), ParamError> {
    let (k, l) = (p.get("k")?, p.get("l")?);
    check_region(k, l, &mut p.warnings);
    Ok(())
}

struct Preset {
    name: &'static str,
    k: f64,
    l: f64,
    beta: f64,
    summary: &'static str,
    source: &'static str,
    taxonomy: Option<Taxonomy>,
    notes: &'static str,
    /// α from periodic losses (jin2001 App. A eq. 10) instead of random ones (eq. 4).
    periodic: bool,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "simd",
        k: -0.5,
        l: 1.0,
        beta: 1.0 / 16.0,
        summary: "SIMD, history k = -1/2, l = 1: window grows as w0 + c*t^2, W <- W - beta*W per loss event",
        source: "jin2001 §3 eq. 8, Appendix E (beta = 1/16 as jin2001 §6 and tsao2007 Table 2)",
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "superlinear", history: "variable" }),
        notes: "alpha = 3*sqrt(beta)/((1 - 2*beta/3)*sqrt(2*w_max)); per ACK W += alpha*sqrt(W - w0)/W; first ACK after a decrease W = w0 + (alpha/2)^2/w0. Not in ns-2 2.35.",
        periodic: false,
    },
    Preset {
        name: "simd_period",
        k: -0.5,
        l: 1.0,
        beta: 1.0 / 16.0,
        summary: "SIMD/period: SIMD with alpha for periodic losses (jin2001 App. A eq. 10), sqrt(2) times SIMD's; window grows as w0 + c*t^2 with c twice SIMD's",
        source: "jin2001 Appendix A eq. 10; tsao2007 Fig. 1(b) and Observation 1 ('SIMD/period ... based on CV[T] = 0'); beta = 1/16 as SIMD's",
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "superlinear", history: "variable" }),
        notes: "alpha = 3*sqrt(beta)/((1 - 2*beta/3)*sqrt(w_max)), c = (3/(2*(1 - 2*beta/3)))^2*beta/w_max: TCP-friendly when losses are periodic, more than TCP's throughput when they are not (tsao2007). Otherwise SIMD's law. Not in ns-2 2.35.",
        periodic: true,
    },
    Preset {
        name: "aiad_h",
        k: 0.0,
        l: 0.0,
        beta: 2.0 / 3.0,
        summary: "AIAD/H, history k = 0, l = 0: +3*beta/(2*w_max) per RTT, W <- W - beta per loss event",
        source: "jin2001 §3 Table 1 (beta = 2/3 as jin2001 §6 'AIAD(2/3)'; tsao2007 Table 2 uses beta = 0.25)",
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "linear", history: "non-historical" }),
        notes: "With alpha_rule = exact the increase is 3*beta/(2*w_max - beta) per RTT (eq. 4). Not in ns-2 2.35.",
        periodic: false,
    },
    Preset {
        name: "pimd",
        k: -1.0 / 3.0,
        l: 1.0,
        beta: 1.0 / 16.0,
        summary: "History k = -1/3, l = 1: window grows as w0 + c*t^1.5, W <- W - beta*W per loss event",
        source: "jin2001 Table 1 (not simulated there; beta = 1/16 chosen as for SIMD)",
        taxonomy: None,
        notes: "Per RTT +1.89*beta^(2/3)*((W - w0)/w_max)^(1/3) with the eq. 6 alpha.",
        periodic: false,
    },
    Preset {
        name: "aisd_h",
        k: 0.0,
        l: 0.5,
        beta: 0.67,
        summary: "History k = 0, l = 1/2: +3*beta/(2*sqrt(w_max)) per RTT, W <- W - beta*sqrt(W) per loss event",
        source: "jin2001 Table 1 (the history counterpart of SQRT; beta = 0.67 chosen as SQRT's in tsao2007)",
        taxonomy: None,
        notes: "",
        periodic: false,
    },
    Preset {
        name: "pisd",
        k: -1.0 / 3.0,
        l: 0.5,
        beta: 0.67,
        summary: "History k = -1/3, l = 1/2: window grows as w0 + c*t^1.5, W <- W - beta*sqrt(W) per loss event",
        source: "jin2001 Table 1 (not simulated there; beta = 0.67 chosen as SQRT's in tsao2007)",
        taxonomy: None,
        notes: "",
        periodic: false,
    },
];

/// Every history-spectrum algorithm: the general `history` plus the presets.
pub fn infos() -> Vec<AlgorithmInfo> {
    let mut v = vec![AlgorithmInfo {
        name: "history",
        family: "history",
        summary: "jin2001 history spectrum (k, l): +alpha/(W - w0)^k per RTT, W <- W - beta*W^l per loss event, alpha from w_max",
        source: "jin2001 §2-3 eq. 3-7, Appendix E",
        params: vec![K, L, beta(1.0 / 16.0), ALPHA_RULE],
        aliases: vec![],
        taxonomy: None,
        notes: "Presets: simd (k=-1/2, l=1), simd_period (SIMD with the periodic-loss alpha of App. A eq. 10), aiad_h (0, 0), pimd (-1/3, 1), aisd_h (0, 1/2), pisd (-1/3, 1/2). A warning is printed outside the convergence region -1 <= l - 1/(k+1) <= 0.",
        named_numbers: false,
        check: Some(check_history),
    }];
    for p in PRESETS {
        v.push(AlgorithmInfo {
            name: p.name,
            family: "history",
            summary: p.summary,
            source: p.source,
            params: vec![beta(p.beta), if p.periodic { ALPHA_RULE_PERIODIC } else { ALPHA_RULE }],
            aliases: vec![],
            taxonomy: p.taxonomy.clone(),
            notes: p.notes,
            named_numbers: false,
            check: None,
        });
    }
    v
}

/// One history-spectrum algorithm (`history` or a preset) by name.
pub fn info(name: &str) -> Option<AlgorithmInfo> {
    infos().into_iter().find(|a| a.name == name)
}

/// A history-spectrum controller.
#[derive(Clone, Debug)]
pub struct History {
    pub k: f64,
    pub l: f64,
    pub beta: f64,
    pub exact: bool,
    /// α for periodic losses (jin2001 App. A eq. 10; SIMD/period) instead of eq. 4.
    pub periodic: bool,
    /// Window just before the last decrease (jin2001's w_max).
    pub w_max: f64,
    /// Window just after it.
    pub w0: f64,
    /// Current α (from w_max) and c = ((k+1)α)^(1/(k+1)).
    pub alpha: f64,
    pub c: f64,
    /// The next congestion-avoidance ACK is the first after a decrease.
    first: bool,
    /// w0 and w_max must be taken when congestion avoidance starts (start, timeout).
    fresh: bool,
    w: Window,
}

impl History {
    pub fn new(k: f64, l: f64, beta: f64, exact: bool, initial_window: f64, cap: f64) -> Self {
        History { k, l, beta, exact, periodic: false, w_max: f64::NAN, w0: f64::NAN, alpha: f64::NAN, c: f64::NAN, first: true, fresh: true, w: Window::new(initial_window, cap) }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        let exact = p.text("alpha_rule")? != Some("approx");
        let (k, l, periodic) = match PRESETS.iter().find(|q| q.name == p.algorithm) {
            Some(q) => (q.k, q.l, q.periodic),
            None => (p.get("k")?, p.get("l")?, false),
        };
        Ok(Self::new(k, l, p.get("beta")?, exact, initial_window, cap).with_periodic_alpha(periodic))
    }

    /// Take α from periodic losses (jin2001 App. A eq. 10) instead of random ones (eq. 4).
    pub fn with_periodic_alpha(mut self, periodic: bool) -> Self {
        self.periodic = periodic;
        self
    }

    /// Record a decrease: the window before (`w_max`) and after (`w0`); recompute α and c.
    fn set_epoch(&mut self, w_max: f64, w0: f64) {
        self.w_max = w_max;
        self.w0 = w0;
        self.alpha = if self.periodic {
            history_alpha_periodic(self.k, self.l, self.beta, w_max, self.exact)
        } else {
            history_alpha(self.k, self.l, self.beta, w_max, self.exact)
        };
        self.c = history_c(self.k, self.alpha);
        self.first = true;
        self.fresh = false;
    }

    #[cfg(test)]
    pub(crate) fn window_mut(&mut self) -> &mut Window {
        &mut self.w
    }
}

impl Controller for History {
    fn on_ack(&mut self, _ack: &Ack) {
        if self.w.in_slow_start() {
            self.w.slow_start();
            return;
        }
        if self.fresh {
            let w0 = self.w.cwnd;
            self.set_epoch(w_max_from_w0(w0, self.l, self.beta), w0);
        }
        let w = self.w.cwnd;
        let d = w - self.w0;
        if self.first || d <= 0.0 {
            self.first = false;
            let target = self.w0 + self.c / self.w0;
            self.w.grow(target - w);
        } else {
            let inc = self.alpha * libm::pow(d, -self.k) / w;
            self.w.grow(inc);
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        if self.w.in_slow_start() {
            self.w.reduce_to(ev.window * 0.5);
            let w0 = self.w.cwnd;
            self.set_epoch(w_max_from_w0(w0, self.l, self.beta), w0);
        } else {
            let w_max = ev.window;
            self.w.reduce_to(w_max - self.beta * libm::pow(w_max, self.l));
            let w0 = self.w.cwnd;
            self.set_epoch(w_max, w0);
        }
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.timeout(to.window);
        self.fresh = true;
    }

    window_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use serde_json::json;

    fn params(name: &str, given: serde_json::Value) -> Params {
        info(name).expect("a history preset").validate(given.as_object().unwrap()).unwrap()
    }

    #[test]
    fn eq4_reduces_to_the_papers_special_cases() {
        for beta in [1.0 / 16.0, 1.0 / 8.0, 0.25] {
            for w_max in [10.0, 50.0, 200.0] {
                // SIMD: eq. 8.
                let a = history_alpha(-0.5, 1.0, beta, w_max, true);
                assert!((a / simd_alpha(beta, w_max) - 1.0).abs() < 1e-12, "{a}");
                // AIMD (k = 0, l = 1): 3β/(2 − β), independent of w_max.
                let a = history_alpha(0.0, 1.0, beta, w_max, true);
                assert!((a - 3.0 * beta / (2.0 - beta)).abs() < 1e-12, "{a}");
                // AIAD/H (k = 0, l = 0): eq. 6 gives 3β/(2·w_max), eq. 4 gives 3β/(2·w_max − β).
                let a = history_alpha(0.0, 0.0, beta, w_max, false);
                assert!((a - 1.5 * beta / w_max).abs() < 1e-15);
                let a = history_alpha(0.0, 0.0, beta, w_max, true);
                assert!((a - 3.0 * beta / (2.0 * w_max - beta)).abs() < 1e-15);
            }
        }
        // Table 1's rounded constants (eq. 6): k = −1/3 gives 1.89·β^(2/3) on ((W−w0)/w_max)^(1/3)
        // and c = 1.4β/√w_max (l = 1); SIMD's c = 9β/(8·w_max).
        let (beta, w_max) = (0.1, 64.0);
        let a = history_alpha(-1.0 / 3.0, 1.0, beta, w_max, false);
        let table = 1.89 * f64::powf(beta, 2.0 / 3.0) / f64::powf(w_max, 1.0 / 3.0);
        // Eq. 6 gives 2.25·Γ(5/2)^(−2/3) = 1.861, not Table 1's 1.89: the table rounds (its c,
        // 1.4, is eq. 7's 1.381 rounded, and 1.5·1.4^(2/3) = 1.877).
        println!("k=-1/3, l=1: alpha {a:.5} Table 1 {table:.5} (coefficient {:.4})", a / f64::powf(beta, 2.0 / 3.0) * f64::powf(w_max, 1.0 / 3.0));
        assert!((a / table - 1.0).abs() < 0.02);
        let c = history_c(-1.0 / 3.0, a);
        assert!((c / (1.4 * beta / w_max.sqrt()) - 1.0).abs() < 0.02, "{c}");
        let c = history_c(-0.5, history_alpha(-0.5, 1.0, beta, w_max, false));
        assert!((c / (9.0 * beta / (8.0 * w_max)) - 1.0).abs() < 1e-12, "{c}");
        // k = −1/3, l = 1/2: c = 1.4β/w_max.
        let c = history_c(-1.0 / 3.0, history_alpha(-1.0 / 3.0, 0.5, beta, w_max, false));
        assert!((c / (1.4 * beta / w_max) - 1.0).abs() < 0.02, "{c}");
    }

    #[test]
    fn inverse_decrease() {
        for l in [1.0, 0.5, 0.0, -0.5, 0.3] {
            for w0 in [2.0, 17.3, 90.0] {
                let wm = w_max_from_w0(w0, l, 0.67 * if l == 1.0 { 0.1 } else { 1.0 });
                let b = 0.67 * if l == 1.0 { 0.1 } else { 1.0 };
                assert!((wm - b * wm.powf(l) - w0).abs() < 1e-9, "l={l} w0={w0}: {wm}");
            }
        }
    }

    /// Put a controller in congestion avoidance right after a decrease from `w_max`.
    fn after_decrease(k: f64, l: f64, beta: f64, exact: bool, w_max: f64) -> History {
        decreased_from(History::new(k, l, beta, exact, 2.0, f64::INFINITY), w_max)
    }

    /// `c` in congestion avoidance right after a decrease from `w_max`.
    fn decreased_from(mut c: History, w_max: f64) -> History {
        c.window_mut().ssthresh = 1.0;
        c.window_mut().cwnd = w_max;
        c.fresh = false;
        c.on_loss_event(&loss(w_max));
        c
    }

    #[test]
    fn simd_window_follows_w0_plus_c_t_squared() {
        for beta in [1.0 / 16.0, 1.0 / 8.0] {
            for w_max in [50.0, 128.0] {
                let mut c = after_decrease(-0.5, 1.0, beta, true, w_max);
                let w0 = c.w0;
                assert!((w0 - w_max * (1.0 - beta)).abs() < 1e-12);
                let cc = c.alpha * c.alpha / 4.0;
                assert!((cc - c.c).abs() < 1e-15);
                // The epoch lasts until W regains w_max: t* = sqrt(β·w_max/c).
                let t_end = (beta * w_max / cc).sqrt();
                let ws = rtts(&mut c, t_end as usize);
                for t in [t_end * 0.25, t_end * 0.5, t_end * 0.75, t_end - 1.0] {
                    let t = t.round() as usize;
                    let closed = w0 + cc * (t as f64).powi(2);
                    let got = ws[t - 1];
                    let err = (got - w0) / (closed - w0) - 1.0;
                    println!("SIMD beta={beta:.4} w_max={w_max}: t={t} W={got:.3} w0+c*t^2={closed:.3} (growth error {:.2}%)", err * 100.0);
                    assert!((got / closed - 1.0).abs() < 0.02, "t={t}: {got} vs {closed}");
                    // The stricter reading: the growth itself, W − w0 against c·t².
                    assert!(err.abs() < 0.02, "t={t}: growth error {err}");
                }
            }
        }
    }

    #[test]
    fn simd_first_ack_rule() {
        let mut c = after_decrease(-0.5, 1.0, 1.0 / 16.0, true, 64.0);
        let w0 = c.window();
        c.on_ack(&ack());
        let expect = w0 + (c.alpha / 2.0).powi(2) / w0;
        assert!((c.window() - expect).abs() < 1e-12, "{} vs {expect}", c.window());
        // Then eq. 15.
        let w = c.window();
        c.on_ack(&ack());
        assert!((c.window() - (w + c.alpha * (w - w0).sqrt() / w)).abs() < 1e-12);
    }

    #[test]
    fn aiad_h_increments_three_beta_over_two_w_max_per_rtt() {
        for (beta, w_max) in [(2.0 / 3.0, 40.0), (0.25, 40.0), (2.0 / 3.0, 100.0)] {
            for exact in [false, true] {
                let mut c = after_decrease(0.0, 0.0, beta, exact, w_max);
                assert!((c.window() - (w_max - beta)).abs() < 1e-12, "additive decrease");
                let ws = rtts(&mut c, 200);
                let per_rtt = (ws[199] - ws[99]) / 100.0;
                let expect = if exact { 3.0 * beta / (2.0 * w_max - beta) } else { 3.0 * beta / (2.0 * w_max) };
                println!("AIAD/H beta={beta:.3} w_max={w_max} exact={exact}: +{per_rtt:.6}/RTT, closed form {expect:.6}");
                assert!((per_rtt / expect - 1.0).abs() < 0.01, "{per_rtt} vs {expect}");
            }
        }
    }

    #[test]
    fn other_table1_members_follow_their_window_functions() {
        // w(t) = w0 + c·t^u with u = 1/(k+1).
        for (k, l, beta) in [(-1.0 / 3.0, 1.0, 0.0625), (0.0, 0.5, 0.67), (-1.0 / 3.0, 0.5, 0.67)] {
            let w_max = 80.0;
            let mut c = after_decrease(k, l, beta, true, w_max);
            let (w0, cc, u) = (c.w0, c.c, 1.0 / (k + 1.0));
            assert!((w0 - (w_max - beta * f64::powf(w_max, l))).abs() < 1e-12);
            let t_end = (beta * f64::powf(w_max, l) / cc).powf(1.0 / u);
            let ws = rtts(&mut c, t_end as usize);
            let t = (t_end * 0.6).round() as usize;
            let closed = w0 + cc * (t as f64).powf(u);
            println!("k={k:.3} l={l}: t={t} of {t_end:.1} W={:.3} closed {closed:.3}", ws[t - 1]);
            assert!((ws[t - 1] / closed - 1.0).abs() < 0.02);
        }
    }

    #[test]
    fn first_w_max_comes_from_the_end_of_slow_start() {
        let mut c = History::new(-0.5, 1.0, 1.0 / 16.0, true, 2.0, f64::INFINITY);
        for _ in 0..60 {
            c.on_ack(&ack());
        }
        assert_eq!(c.window(), 62.0);
        c.on_loss_event(&loss(62.0)); // ends slow start: halves, first w0 = 31
        assert_eq!(c.window(), 31.0);
        assert_eq!(c.w0, 31.0);
        assert!((c.w_max - 31.0 / (1.0 - 1.0 / 16.0)).abs() < 1e-12);
        assert!((c.alpha - simd_alpha(1.0 / 16.0, c.w_max)).abs() < 1e-15);
        // After a timeout the next congestion-avoidance phase takes a fresh w0.
        c.on_timeout(&timeout(40.0));
        assert_eq!(c.window(), 1.0);
        while c.window() < c.ssthresh() {
            c.on_ack(&ack());
        }
        let w0 = c.window();
        c.on_ack(&ack());
        assert_eq!(c.w0, w0);
        assert!((c.w_max - w0 / (1.0 - 1.0 / 16.0)).abs() < 1e-12);
    }

    /// A controller of preset `name` right after a decrease from `w_max` (congestion avoidance).
    fn preset_after_decrease(name: &str, beta: f64, w_max: f64) -> History {
        let p = params(name, json!({ "beta": beta }));
        decreased_from(History::from_params(&p, 2.0, f64::INFINITY).unwrap(), w_max)
    }

    #[test]
    fn simd_period_c_is_gamma3_times_simds() {
        for beta in [1.0 / 16.0, 1.0 / 8.0, 0.25] {
            for w_max in [23.0, 50.0, 128.0] {
                let s = preset_after_decrease("simd", beta, w_max);
                let p = preset_after_decrease("simd_period", beta, w_max);
                assert!(!s.periodic && p.periodic);
                // jin2001 App. A: eq. 10's c over eq. 5's is Γ(u+1) = Γ(3) = 2; α is √2 times eq. 8's.
                assert!((p.c / s.c - 2.0).abs() < 1e-12, "β={beta} w_max={w_max}: {} / {}", p.c, s.c);
                assert!((p.alpha / simd_alpha(beta, w_max) - 2f64.sqrt()).abs() < 1e-12);
                // The controller's constant is the spectrum model's eq. 10.
                let model = crate::models::spectrum::c_periodic(-0.5, 1.0, beta, w_max, false);
                assert!((p.c / model - 1.0).abs() < 1e-12, "{} vs eq. 10 {model}", p.c);
                // Otherwise SIMD: the same decrease and the same w_max, w0.
                assert_eq!((p.w0, p.w_max, p.k, p.l, p.beta), (s.w0, s.w_max, s.k, s.l, s.beta));
            }
        }
        // approx: eq. 10 without the correction, still twice SIMD's (eq. 7) c: 9β/(4 w_max).
        let p = params("simd_period", json!({"alpha_rule": "approx"}));
        let mut c = History::from_params(&p, 2.0, f64::INFINITY).unwrap();
        c.window_mut().ssthresh = 1.0;
        c.window_mut().cwnd = 64.0;
        c.fresh = false;
        c.on_loss_event(&loss(64.0));
        assert!((c.c - 9.0 / 4.0 * 0.0625 / 64.0).abs() < 1e-15, "{}", c.c);
    }

    #[test]
    fn simd_period_is_simd_with_twice_the_growth() {
        let (beta, w_max) = (1.0 / 16.0, 100.0);
        let mut s = preset_after_decrease("simd", beta, w_max);
        let mut p = preset_after_decrease("simd_period", beta, w_max);
        // SIMD's epoch is t* = √(β·w_max/c) RTTs; SIMD/period's is t*/√2.
        let ts = (beta * w_max / s.c).sqrt();
        let tp = (beta * w_max / p.c).sqrt();
        assert!((ts / tp - 2f64.sqrt()).abs() < 1e-12);
        let ws = rtts(&mut s, ts as usize);
        let wp = rtts(&mut p, tp as usize);
        for t in [tp * 0.3, tp * 0.6, tp - 1.0] {
            let t = t.round() as usize;
            let (gs, gp) = (ws[t - 1] - s.w0, wp[t - 1] - p.w0);
            println!("t={t}: SIMD grew {gs:.3}, SIMD/period {gp:.3} (ratio {:.4})", gp / gs);
            assert!((gp / gs - 2.0).abs() < 0.04, "t={t}: {gp} vs 2 x {gs}");
        }
        // The same decrease rule: a loss at the same window leaves the same w0 and w_max.
        p.on_loss_event(&loss(90.0));
        s.on_loss_event(&loss(90.0));
        assert_eq!((p.window(), p.w0, p.w_max), (s.window(), s.w0, s.w_max));
        assert!((p.c / s.c - 2.0).abs() < 1e-12);
        // And the same slow start and first w_max after it.
        let mut a = History::from_params(&params("simd", json!({})), 2.0, f64::INFINITY).unwrap();
        let mut b = History::from_params(&params("simd_period", json!({})), 2.0, f64::INFINITY).unwrap();
        for _ in 0..40 {
            a.on_ack(&ack());
            b.on_ack(&ack());
        }
        assert_eq!(a.window(), b.window());
        a.on_loss_event(&loss(42.0));
        b.on_loss_event(&loss(42.0));
        assert_eq!((a.window(), a.w0, a.w_max), (b.window(), b.w0, b.w_max));
    }

    #[test]
    fn presets_validate() {
        let p = params("simd", json!({}));
        assert_eq!(p.to_json(), json!({"beta": 0.0625, "alpha_rule": "exact"}));
        let c = History::from_params(&p, 2.0, 128.0).unwrap();
        assert_eq!((c.k, c.l, c.exact), (-0.5, 1.0, true));
        let p = params("simd_period", json!({}));
        assert_eq!(p.to_json(), json!({"beta": 0.0625, "alpha_rule": "exact"}));
        let c = History::from_params(&p, 2.0, 128.0).unwrap();
        assert_eq!((c.k, c.l, c.exact, c.periodic), (-0.5, 1.0, true, true));
        for (given, field) in [(json!({"beta": 1.0}), "beta"), (json!({"beta": 0.0}), "beta"), (json!({"alpha_rule": "eq5"}), "alpha_rule"), (json!({"k": 0.5}), "k")] {
            let e = info("simd_period").unwrap().validate(given.as_object().unwrap()).unwrap_err();
            assert_eq!(e.field, field, "{given}");
        }
        let p = params("aiad_h", json!({"alpha_rule": "approx"}));
        let c = History::from_params(&p, 2.0, 128.0).unwrap();
        assert_eq!((c.k, c.l, c.exact), (0.0, 0.0, false));
        assert!((c.beta - 2.0 / 3.0).abs() < 1e-15);
        let p = params("history", json!({"k": -0.5, "l": 1}));
        assert!(p.warnings.is_empty());
        let p = params("history", json!({"k": 1, "l": 1}));
        assert_eq!(p.warnings.len(), 1, "outside the convergence region");
        for (k, l, field) in [(-1.0, 1.0, "k"), (0.0, 1.5, "l")] {
            let e = info("history").unwrap().validate(json!({"k": k, "l": l}).as_object().unwrap()).unwrap_err();
            assert_eq!(e.field, field);
        }
        let e = info("simd").unwrap().validate(json!({"alpha_rule": "eq5"}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.field, "alpha_rule");
        assert!(e.message.contains("exact, approx"), "{}", e.message);
    }
}
