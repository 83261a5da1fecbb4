//! CUBIC (RFC 9438). After a congestion event the window follows a cubic function of the time
//! since the current congestion-avoidance stage began, centred on the window at the event:
//!
//! - `W_cubic(t) = C·(t − K)³ + W_max`, `K = ∛((W_max − cwnd_epoch)/C)` (RFC 9438 §4.2; t in
//!   seconds, windows in packets), concave below W_max and convex above it;
//! - per ACK `cwnd += (target − cwnd)/cwnd` with `target = W_cubic(t + RTT)` clamped to
//!   [cwnd, 1.5·cwnd] (RTT: the smoothed RTT of the samples, gain 1/8 as RFC 6298);
//! - Reno-friendly region (§4.3): `W_est` starts at cwnd_epoch and grows by `α_cubic/cwnd` per
//!   ACK, `α_cubic = 3(1 − β_cubic)/(1 + β_cubic)` until W_est reaches the window before the last
//!   reduction, then 1; while `W_cubic(t) < W_est` the window is W_est;
//! - on a loss event (§4.6–4.7): `W_max = cwnd·(1 + β_cubic)/2` if cwnd < W_max and fast
//!   convergence is on, else cwnd; `ssthresh = cwnd = β_cubic·cwnd` — also for the loss that ends
//!   slow start;
//! - on a timeout (§4.8): ssthresh = β_cubic·W, window 1, standard slow start; the first
//!   congestion-avoidance stage after it uses K = 0 and W_max = the window when it begins.
//!
//! β_cubic (0.7) is the kept fraction; the parameter `beta` is the removed one (0.3), `keep` is
//! accepted. Slow start is standard (RFC 9438 allows HyStart++; it is not modelled).

use super::aimd::td_alpha;
use super::params::{ON_OFF, keep_alias, AlgorithmInfo, ParamKind, ParamSpec, Params, Taxonomy, ParamError};
use super::{Ack, Controller, LossEvent, Timeout, Window, MIN_SSTHRESH};

/// CUBIC's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    /// C, packets/s³.
    pub c: f64,
    /// Fraction removed on a loss event (1 − β_cubic).
    pub beta: f64,
    pub fast_convergence: bool,
    pub reno_friendly: bool,
}

impl CubicParams {
    pub const RFC9438: CubicParams = CubicParams { c: 0.4, beta: 0.3, fast_convergence: true, reno_friendly: true };

    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(CubicParams { c: p.get("c")?, beta: p.get("beta")?, fast_convergence: p.text("fast_convergence")? != Some("off"), reno_friendly: p.text("reno_friendly")? != Some("off") })
    }

    /// β_cubic, the fraction kept.
    pub fn keep(&self) -> f64 {
        1.0 - self.beta
    }

    /// K of RFC 9438 §4.2 (seconds) for a stage starting at `cwnd_epoch` below `w_max`.
    pub fn k(&self, w_max: f64, cwnd_epoch: f64) -> f64 {
        libm::cbrt((w_max - cwnd_epoch).max(0.0) / self.c)
    }

    /// α_cubic of the Reno-friendly region (3(1 − β_cubic)/(1 + β_cubic)).
    pub fn alpha_cubic(&self) -> f64 {
        td_alpha(self.beta)
    }
}

fn specs() -> Vec<ParamSpec> {
    let d = CubicParams::RFC9438;
    vec![
        ParamSpec { name: "c", default: Some(d.c), min: Some(0.0), min_open: true, unit: "packets/s^3", doc: "C: aggressiveness of the cubic function", ..ParamSpec::NUMBER },
        ParamSpec::fraction("beta", d.beta, "fraction of the window removed on a loss event (1 - beta_cubic)"),
        ParamSpec {
            name: "fast_convergence",
            kind: ParamKind::Choice(ON_OFF),
            default_text: Some("on"),
            doc: "a loss below the previous W_max sets W_max = cwnd*(1 + beta_cubic)/2 (RFC 9438 §4.7)",
            ..ParamSpec::NUMBER
        },
        ParamSpec {
            name: "reno_friendly",
            kind: ParamKind::Choice(ON_OFF),
            default_text: Some("on"),
            doc: "use the Reno-friendly estimate W_est where it exceeds W_cubic (RFC 9438 §4.3; Linux's tcp_friendliness)",
            ..ParamSpec::NUMBER
        },
    ]
}

pub fn cubic_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "cubic",
        family: "cubic",
        summary: "CUBIC: W(t) = C(t-K)^3 + W_max after a loss, with the Reno-friendly region; W <- 0.7*W per loss event",
        source: "RFC 9438 (C = 0.4, beta_cubic = 0.7, fast convergence, Reno-friendly region)",
        params: specs(),
        aliases: vec![keep_alias("beta", "beta_cubic, the fraction of the window kept on a loss event; beta = 1 - keep")],
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "concave-convex", history: "variable" }),
        notes: "ns-2: Agent/TCP/Linux with select_ca cubic runs Linux 2.6.22's CUBIC v2.1, which keeps 819/1024 (keep = 0.8, beta = 0.2), caps the convex growth at 16 packets per (min) RTT, has no 1.5*cwnd clamp and no switch of alpha_cubic to 1; its set_ca_param names are fast_convergence, tcp_friendliness, max_increment. Taxonomy derived here from tsao2007's definitions; tsao2007 itself does not classify CUBIC.",
        named_numbers: false,
        check: None,
    }
}

/// CUBIC.
#[derive(Clone, Debug)]
pub struct Cubic {
    pub p: CubicParams,
    /// W_max: the window before the last reduction (after fast convergence).
    pub w_max: f64,
    /// The window before the last reduction, as it was (cwnd_prior).
    cwnd_prior: f64,
    /// Start of the current congestion-avoidance stage (None: the next ACK in congestion
    /// avoidance starts one).
    epoch_start: Option<f64>,
    /// K and the plateau W_max of the current stage.
    pub k: f64,
    pub origin: f64,
    /// The Reno-friendly estimate.
    pub w_est: f64,
    srtt: Option<f64>,
    after_timeout: bool,
    w: Window,
}

impl Cubic {
    pub fn new(p: CubicParams, initial_window: f64, cap: f64) -> Self {
        Cubic { p, w_max: 0.0, cwnd_prior: 0.0, epoch_start: None, k: 0.0, origin: 0.0, w_est: 0.0, srtt: None, after_timeout: false, w: Window::new(initial_window, cap) }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        Ok(Self::new(CubicParams::from_params(p)?, initial_window, cap))
    }

    /// W_cubic(t) of the current stage, t seconds after it began.
    pub fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        self.p.c * d * d * d + self.origin
    }

    /// Time since the current stage began.
    pub fn elapsed(&self, now: f64) -> Option<f64> {
        self.epoch_start.map(|s| now - s)
    }

    fn start_epoch(&mut self, now: f64) {
        let cwnd = self.w.cwnd;
        self.epoch_start = Some(now);
        if self.after_timeout || self.w_max <= cwnd {
            // RFC 9438 §4.8 (and Linux when cwnd has reached W_max): plateau at the current window.
            self.k = 0.0;
            self.origin = cwnd;
            if self.after_timeout {
                self.w_max = cwnd;
            }
        } else {
            self.k = self.p.k(self.w_max, cwnd);
            self.origin = self.w_max;
        }
        self.w_est = cwnd;
        self.after_timeout = false;
    }
}

impl Controller for Cubic {
    fn on_rtt_sample(&mut self, _now: f64, rtt: f64) {
        self.srtt = Some(match self.srtt {
            None => rtt,
            Some(s) => s + (rtt - s) / 8.0,
        });
    }

    fn on_ack(&mut self, ack: &Ack) {
        if self.w.in_slow_start() {
            self.w.slow_start();
            return;
        }
        if self.epoch_start.is_none() {
            self.start_epoch(ack.now);
        }
        let t = ack.now - self.epoch_start.unwrap_or(ack.now);
        let cwnd = self.w.cwnd;
        let rtt = self.srtt.or(ack.rtt).unwrap_or(0.0);
        // Reno-friendly estimate (§4.3).
        let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { self.p.alpha_cubic() };
        self.w_est += alpha / cwnd;
        if self.p.reno_friendly && self.w_cubic(t) < self.w_est {
            if self.w_est > cwnd {
                self.w.cwnd = self.w_est.min(self.w.cap);
            }
            return;
        }
        let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
        self.w.grow((target - cwnd) / cwnd);
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let w = ev.window;
        self.w_max = if self.p.fast_convergence && w < self.w_max { w * (1.0 + self.p.keep()) / 2.0 } else { w };
        self.cwnd_prior = w;
        self.w.reduce_to(w * self.p.keep());
        self.epoch_start = None;
        self.after_timeout = false;
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.ssthresh = (to.window * self.p.keep()).max(MIN_SSTHRESH);
        self.w.cwnd = 1.0;
        self.cwnd_prior = to.window;
        self.epoch_start = None;
        self.after_timeout = true;
    }

    window_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use serde_json::json;

    /// A CUBIC flow in congestion avoidance after a loss at `w` (window now 0.7·w).
    fn after_loss_at(p: CubicParams, w: f64) -> Cubic {
        let mut c = Cubic::new(p, 2.0, f64::INFINITY);
        c.w.cwnd = w;
        c.on_loss_event(&loss(w));
        c
    }

    /// Rounds of one RTT each, ACKs spread evenly in time (one per packet of the window at the
    /// round's start), every ACK carrying the RTT sample. Returns (time, window) per round.
    fn drive(c: &mut Cubic, now: &mut f64, rtt: f64, rounds: usize) -> Vec<(f64, f64)> {
        let mut out = vec![];
        for _ in 0..rounds {
            let n = c.window().round().max(1.0) as usize;
            for _ in 0..n {
                *now += rtt / n as f64;
                c.on_rtt_sample(*now, rtt);
                c.on_ack(&ack_at(*now, rtt));
            }
            out.push((*now, c.window()));
        }
        out
    }

    #[test]
    fn k_and_the_cubic_window_function() {
        let p = CubicParams::RFC9438;
        let mut c = after_loss_at(p, 1000.0);
        assert_eq!(c.window(), 700.0);
        assert_eq!((c.w_max, c.ssthresh()), (1000.0, 700.0));
        let mut now = 10.0;
        let rtt = 0.1;
        let w = drive(&mut c, &mut now, rtt, 200);
        // K = ∛((W_max − β·W_max)/C) = ∛(300/0.4) (RFC 9438 eq. 2).
        let k = libm::cbrt(300.0 / 0.4);
        assert!((c.k - k).abs() < 1e-12, "K {} vs {k}", c.k);
        assert_eq!(c.origin, 1000.0);
        println!("CUBIC: K = {k:.4} s");
        // The window tracks W_cubic: at each round's end it lies between W_cubic(t) and
        // W_cubic(t + RTT) up to the per-ACK lag (a few packets).
        let t0 = 10.0;
        let mut worst: f64 = 0.0;
        for &(t, win) in &w {
            let (lo, hi) = (c.w_cubic(t - t0), c.w_cubic(t - t0 + rtt));
            let err = if win < lo { lo - win } else if win > hi { win - hi } else { 0.0 };
            worst = worst.max(err / 1000.0);
        }
        println!("CUBIC: largest distance from [W(t), W(t+RTT)] over 200 RTTs: {:.3}% of W_max", worst * 100.0);
        assert!(worst < 0.01);
        // Concave, then a plateau at W_max around t = K, then convex.
        let at = |tt: f64| w.iter().min_by(|a, b| (a.0 - t0 - tt).abs().total_cmp(&(b.0 - t0 - tt).abs())).unwrap().1;
        assert!((at(k) - 1000.0).abs() < 3.0, "W(K) = {}", at(k));
        let (g1, g2, g3) = (at(2.0) - at(1.0), at(k + 0.5) - at(k - 0.5), at(k + 9.0) - at(k + 8.0));
        println!("CUBIC growth per second: early {g1:.1}, around K {g2:.1}, late {g3:.1}");
        assert!(g1 > 5.0 * g2 && g3 > 5.0 * g2);
    }

    #[test]
    fn reno_friendly_region() {
        // A small W_max with a short RTT: W_cubic grows slower than the Reno estimate.
        let p = CubicParams::RFC9438;
        let mut c = after_loss_at(p, 20.0);
        let mut now = 0.0;
        let rtt = 0.02;
        let w = drive(&mut c, &mut now, rtt, 60);
        let a = p.alpha_cubic();
        assert!((a - 0.9 / 1.7).abs() < 1e-12);
        // While W_est < cwnd_prior (20): α_cubic per RTT; then 1 per RTT.
        let steps: Vec<f64> = w.windows(2).map(|x| x[1].1 - x[0].1).collect();
        println!("CUBIC Reno-friendly: windows {:?}", w.iter().map(|x| (x.1 * 100.0).round() / 100.0).collect::<Vec<_>>());
        let i = w.iter().position(|x| x.1 >= 20.0).unwrap();
        let early = &steps[3..i - 1];
        for s in early {
            assert!((s - a).abs() < 0.05, "step {s} vs alpha_cubic {a}");
        }
        // In the region the window is the estimate itself.
        assert_eq!(c.window(), c.w_est);
        assert!(c.w_cubic(now) < c.w_est);
        let later = &steps[i + 1..i + 8];
        for s in later {
            assert!((s - 1.0).abs() < 0.08, "step {s} after W_est passed cwnd_prior");
        }
        // Off: the cubic function alone, slower here.
        let mut d = after_loss_at(CubicParams { reno_friendly: false, ..p }, 20.0);
        let mut now = 0.0;
        let wd = drive(&mut d, &mut now, rtt, 60);
        assert!(wd[i].1 < w[i].1 - 1.0, "{} vs {}", wd[i].1, w[i].1);
    }

    #[test]
    fn fast_convergence_and_beta() {
        let p = CubicParams::RFC9438;
        let mut c = after_loss_at(p, 1000.0);
        c.on_loss_event(&loss(900.0));
        assert!((c.w_max - 900.0 * 1.7 / 2.0).abs() < 1e-9);
        assert!((c.window() - 630.0).abs() < 1e-9);
        let mut c = after_loss_at(CubicParams { fast_convergence: false, ..p }, 1000.0);
        c.on_loss_event(&loss(900.0));
        assert_eq!(c.w_max, 900.0);
    }

    #[test]
    fn timeout_then_plateau_at_the_new_window() {
        let p = CubicParams::RFC9438;
        let mut c = after_loss_at(p, 1000.0);
        c.on_timeout(&timeout(800.0));
        assert_eq!((c.window(), c.ssthresh()), (1.0, 560.0));
        let mut now = 0.0;
        drive(&mut c, &mut now, 0.1, 12); // slow start to 560
        assert!(c.window() >= 560.0);
        assert_eq!(c.k, 0.0);
        assert_eq!(c.w_max, c.origin);
        assert!((c.origin - 560.0).abs() < 2.0, "{}", c.origin);
    }

    #[test]
    fn validation() {
        let v = |j: serde_json::Value| cubic_info().validate(j.as_object().unwrap());
        assert_eq!(CubicParams::from_params(&v(json!({})).unwrap()).unwrap(), CubicParams::RFC9438);
        let p = CubicParams::from_params(&v(json!({"keep": 0.8, "reno_friendly": "off"})).unwrap()).unwrap();
        assert!((p.beta - 0.2).abs() < 1e-12 && !p.reno_friendly);
        assert_eq!(v(json!({"c": 0})).unwrap_err().field, "c");
        assert!(v(json!({"beta": 0.3, "keep": 0.7})).is_err());
    }
}
