//! BIC-TCP (Xu, Harfoush, Rhee, INFOCOM 2004), as Linux's tcp_bic implements it: after a
//! loss the window climbs back towards the window at the loss, `W_max`, by binary search, then
//! probes beyond it ("max probing"); far from `W_max` the step is capped at `max_increment`.
//!
//! Increase per RTT (applied per ACK as `inc/W`), with B = `b` (4) and
//! `s_min = b/smooth_part` (0.2 packets):
//! - W ≤ low_window (14): 1 (standard TCP);
//! - W < W_max (binary search): d = (W_max − W)/B; `max_increment` if d > max_increment,
//!   `s_min` if d ≤ 1, else d;
//! - W ≥ W_max (max probing): `s_min` if W < W_max + B; (W − W_max)/(B − 1) if
//!   W < W_max + max_increment·(B − 1); else `max_increment`;
//! - before the first loss (no W_max yet) at least W/20 (5% per RTT).
//!
//! Loss event: W_max = W·(1 + keep)/2 if W < W_max and fast convergence is on (the flow is
//! releasing bandwidth), else W; the window becomes `keep·W` (keep = 1 − beta, Linux 819/1024)
//! or W/2 at or below low_window. The loss that ends slow start is handled the same way (as in
//! Linux). A timeout follows the shared rule (ssthresh = W/2, window 1) and forgets W_max, as
//! Linux's module does on entering the loss state (Linux keeps keep·W as the ssthresh).

use super::params::{ON_OFF, keep_alias, AlgorithmInfo, ParamKind, ParamSpec, Params, Taxonomy};
use super::{Ack, Controller, LossEvent, Timeout, Window};

/// BIC's parameters (Linux tcp_bic defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BicParams {
    /// Fraction removed on a loss event (Linux: 1 − 819/1024).
    pub beta: f64,
    pub max_increment: f64,
    pub low_window: f64,
    /// BICTCP_B: the binary search moves 1/b of the distance to W_max per RTT.
    pub b: f64,
    /// Linux's smooth_part: near W_max the increase is b/smooth_part per RTT.
    pub smooth_part: f64,
    pub fast_convergence: bool,
}

impl BicParams {
    pub const LINUX: BicParams = BicParams { beta: 205.0 / 1024.0, max_increment: 16.0, low_window: 14.0, b: 4.0, smooth_part: 20.0, fast_convergence: true };

    pub fn from_params(p: &Params) -> Self {
        BicParams {
            beta: p.get("beta"),
            max_increment: p.get("max_increment"),
            low_window: p.get("low_window"),
            b: p.get("b"),
            smooth_part: p.get("smooth_part"),
            fast_convergence: p.text("fast_convergence") != Some("off"),
        }
    }

    pub fn keep(&self) -> f64 {
        1.0 - self.beta
    }

    /// Increase per RTT at window `w` given `w_max` (0: none yet).
    pub fn increase(&self, w: f64, w_max: f64, lost_before: bool) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let s_min = self.b / self.smooth_part;
        let mut inc = if w < w_max {
            let d = (w_max - w) / self.b;
            if d > self.max_increment {
                self.max_increment
            } else if d <= 1.0 {
                s_min
            } else {
                d
            }
        } else if w < w_max + self.b {
            s_min
        } else if w < w_max + self.max_increment * (self.b - 1.0) {
            (w - w_max) / (self.b - 1.0)
        } else {
            self.max_increment
        };
        if !lost_before {
            inc = inc.max(w / 20.0);
        }
        inc
    }
}

fn specs() -> Vec<ParamSpec> {
    let d = BicParams::LINUX;
    vec![
        ParamSpec {
            name: "beta",
            default: Some(d.beta),
            min: Some(0.0),
            max: Some(1.0),
            min_open: true,
            max_open: true,
            unit: "fraction",
            doc: "fraction of the window removed on a loss event above low_window (Linux keeps 819/1024)",
            ..ParamSpec::NUMBER
        },
        ParamSpec { name: "max_increment", default: Some(d.max_increment), min: Some(0.0), min_open: true, unit: "packets/RTT", doc: "largest increase per RTT (S_max)", ..ParamSpec::NUMBER },
        ParamSpec { name: "low_window", default: Some(d.low_window), min: Some(0.0), unit: "packets", doc: "at or below this window BIC is standard TCP (+1 per RTT, halving)", ..ParamSpec::NUMBER },
        ParamSpec { name: "b", default: Some(d.b), min: Some(1.0), min_open: true, unit: "", doc: "binary-search divisor: each RTT closes 1/b of the distance to W_max", ..ParamSpec::NUMBER },
        ParamSpec {
            name: "smooth_part",
            default: Some(d.smooth_part),
            min: Some(0.0),
            min_open: true,
            unit: "RTTs",
            doc: "near W_max the increase is b/smooth_part per RTT (S_min)",
            ..ParamSpec::NUMBER
        },
        ParamSpec {
            name: "fast_convergence",
            kind: ParamKind::Choice(ON_OFF),
            default_text: Some("on"),
            doc: "a loss below the previous W_max sets W_max = W*(1 + keep)/2 (releases bandwidth to newer flows)",
            ..ParamSpec::NUMBER
        },
    ]
}

pub fn bic_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "bic",
        family: "bic",
        summary: "BIC-TCP: binary search towards the window at the last loss, then max probing; W <- keep*W per loss event",
        source: "Xu, Harfoush, Rhee, INFOCOM 2004; structure and defaults of Linux net/ipv4/tcp_bic.c (keep 819/1024, max_increment 16, low_window 14, B 4, smooth_part 20, fast convergence)",
        params: specs(),
        aliases: vec![keep_alias("beta", "fraction of the window kept on a loss event (Linux's beta/1024); beta = 1 - keep")],
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "concave-convex", history: "variable" }),
        notes: "ns-2: Agent/TCP/Linux with select_ca bic; set_ca_param bic fast_convergence|max_increment|low_window|beta (keep*1024)|smooth_part. Taxonomy derived here from tsao2007's definitions (the step depends on W_max; concave then convex curve, liu2008 §2); tsao2007 itself does not classify BIC.",
        named_numbers: false,
        check: None,
    }
}

/// BIC-TCP.
#[derive(Clone, Debug)]
pub struct Bic {
    pub p: BicParams,
    /// Window before the last decrease (after fast convergence); 0 before any.
    pub w_max: f64,
    lost: bool,
    w: Window,
}

impl Bic {
    pub fn new(p: BicParams, initial_window: f64, cap: f64) -> Self {
        Bic { p, w_max: 0.0, lost: false, w: Window::new(initial_window, cap) }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Self {
        Self::new(BicParams::from_params(p), initial_window, cap)
    }

    /// Increase per RTT at the current window.
    pub fn increase(&self) -> f64 {
        self.p.increase(self.w.cwnd, self.w_max, self.lost)
    }
}

impl Controller for Bic {
    fn on_ack(&mut self, _ack: &Ack) {
        if self.w.in_slow_start() {
            self.w.slow_start();
        } else {
            let inc = self.increase() / self.w.cwnd;
            self.w.grow(inc);
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let w = ev.window;
        self.w_max = if w < self.w_max && self.p.fast_convergence { w * (1.0 + self.p.keep()) / 2.0 } else { w };
        self.lost = true;
        let keep = if w <= self.p.low_window { 0.5 } else { self.p.keep() };
        self.w.reduce_to(w * keep);
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.timeout(to.window);
        self.w_max = 0.0;
        self.lost = false;
    }

    window_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use serde_json::json;

    fn after_loss_at(w: f64) -> Bic {
        let mut c = Bic::new(BicParams::LINUX, 2.0, f64::INFINITY);
        c.w.cwnd = w;
        c.on_loss_event(&loss(w));
        c
    }

    #[test]
    fn decrease_keeps_819_of_1024_and_records_w_max() {
        let c = after_loss_at(1000.0);
        assert!((c.window() - 1000.0 * 819.0 / 1024.0).abs() < 1e-9);
        assert_eq!(c.w_max, 1000.0);
        // Fast convergence: a loss below W_max lowers W_max to W(1 + keep)/2.
        let mut c = after_loss_at(1000.0);
        let w = c.window();
        c.on_loss_event(&loss(w));
        assert!((c.w_max - w * (1.0 + 819.0 / 1024.0) / 2.0).abs() < 1e-9);
        // Standard TCP at or below low_window.
        let c = after_loss_at(12.0);
        assert_eq!(c.window(), 6.0);
    }

    #[test]
    fn binary_search_halves_the_distance_by_b_each_rtt_then_probes() {
        let p = BicParams::LINUX;
        // Far below W_max: capped at max_increment.
        assert_eq!(p.increase(500.0, 1000.0, true), 16.0);
        // Within 4*16 of W_max: (W_max - W)/4.
        assert_eq!(p.increase(960.0, 1000.0, true), 10.0);
        // Within 2B: S_min = 4/20.
        assert!((p.increase(996.0, 1000.0, true) - 0.2).abs() < 1e-12);
        // Max probing: slow near W_max, then (W - W_max)/3, then max_increment.
        assert!((p.increase(1002.0, 1000.0, true) - 0.2).abs() < 1e-12);
        assert_eq!(p.increase(1030.0, 1000.0, true), 10.0);
        assert_eq!(p.increase(1100.0, 1000.0, true), 16.0);
        // Before any loss: at least 5% per RTT.
        assert_eq!(p.increase(1000.0, 0.0, false), 50.0);

        // Driving the controller: from 800 after a loss at 1000 (keep 0.8).
        let mut c = after_loss_at(1000.0);
        let start = c.window();
        let w = rtts(&mut c, 120);
        let steps: Vec<f64> = std::iter::once(start).chain(w.iter().cloned()).collect::<Vec<_>>().windows(2).map(|x| x[1] - x[0]).collect();
        println!("BIC from {start:.1} towards W_max 1000: windows {:?}", w.iter().map(|x| (x * 10.0).round() / 10.0).collect::<Vec<_>>());
        // Linear phase at max_increment while the distance exceeds 4*16 packets.
        assert!((steps[0] - 16.0).abs() < 0.5, "{}", steps[0]);
        // Binary search: about 1/B of the distance is closed per RTT once it is below B·S_max
        // (a little less, since the step shrinks with the distance within the round).
        let i = w.iter().position(|&x| 1000.0 - x < 60.0).unwrap();
        for k in i..i + 3 {
            let (d0, d1) = (1000.0 - w[k], 1000.0 - w[k + 1]);
            println!("BIC: distance to W_max {d0:.2} -> {d1:.2} (ratio {:.3})", d1 / d0);
            assert!((0.74..0.82).contains(&(d1 / d0)), "distance {d0} -> {d1}");
        }
        // It does not overshoot W_max while searching, reaches it, and later probes beyond.
        let j = w.iter().position(|&x| x >= 1000.0).expect("reaches W_max");
        assert!(w[..j].iter().all(|&x| x < 1000.0));
        assert!(*w.last().unwrap() > 1000.0 + 4.0, "max probing: {}", w.last().unwrap());
        // Concave then convex: the largest steps are early (search) and late (probing).
        let mid = steps[j.saturating_sub(2)..(j + 3).min(steps.len())].iter().cloned().fold(f64::INFINITY, f64::min);
        assert!(mid < 1.0 && steps[0] > 10.0 && *steps.last().unwrap() > 2.0, "steps {steps:?}");
    }

    #[test]
    fn timeout_forgets_w_max_and_validation() {
        let mut c = after_loss_at(1000.0);
        c.on_timeout(&timeout(800.0));
        assert_eq!((c.window(), c.ssthresh(), c.w_max), (1.0, 400.0, 0.0));
        let v = |j: serde_json::Value| crate::cc::params::validate("bic", j.as_object().unwrap());
        assert_eq!(BicParams::from_params(&v(json!({})).unwrap()), BicParams::LINUX);
        let p = v(json!({"keep": 0.875, "fast_convergence": "off"})).unwrap();
        let bp = BicParams::from_params(&p);
        assert!((bp.beta - 0.125).abs() < 1e-12 && !bp.fast_convergence);
        assert_eq!(v(json!({"b": 1})).unwrap_err().field, "b");
        assert_eq!(v(json!({"fast_convergence": "yes"})).unwrap_err().field, "fast_convergence");
    }
}
