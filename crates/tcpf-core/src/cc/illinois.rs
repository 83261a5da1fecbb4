//! TCP-Illinois (liu2008 §3), a C-AIMD control: per ACK `W ← W + α/W`, per loss event
//! `W ← W − β·W`, with α falling and β rising with the average queueing delay d_a:
//!
//! - α = α_max if d_a ≤ d1, else κ1/(κ2 + d_a)              (eq. 2)
//! - β = β_min if d_a ≤ d2, κ3 + κ4·d_a if d2 < d_a < d3, else β_max   (eq. 3)
//! - κ1..κ4 from continuity at d1, d2, d3 and α(d_m) = α_min  (eq. 4), d_i = η_i·d_m.
//!
//! T_a is the average of the RTT samples of the last W ACKs (one round: the samples of as many
//! ACKs as the window held when the round began; every ACK counts, duplicates included).
//! T_min and T_max are the smallest and largest T_a ever seen (the paper's default option;
//! `extremes = "instantaneous"` takes them from single samples, footnote 4's alternative and
//! Linux's choice), d_m = T_max − T_min, d_a = T_a − T_min; α and β are updated once per round.
//! Other rules: α = 1 and β = 1/2 while W < W_thresh; after a timeout (ssthresh = W/2, slow
//! start) α = 1 and β = 1/2 until one round after slow start ends; the θ rule: once d_a > d1,
//! α returns to α_max only after d_a has stayed ≤ d1 for θ consecutive rounds (meanwhile α keeps
//! its last value). The loss that ends slow start halves the window (β = 1/2 applies then
//! anyway, since α and β start at 1 and 1/2).

use crate::error::show_num;
use super::params::{AlgorithmInfo, ParamError, ParamKind, ParamSpec, Params};
use super::{Ack, Controller, LossEvent, Timeout, Window};

/// TCP-Illinois parameters (liu2008 §3, §6).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IllinoisParams {
    pub alpha_max: f64,
    pub alpha_min: f64,
    pub beta_max: f64,
    pub beta_min: f64,
    pub w_thresh: f64,
    pub eta1: f64,
    pub eta2: f64,
    pub eta3: f64,
    pub theta: f64,
    /// T_min/T_max from the instantaneous RTT samples instead of the per-round averages
    /// (liu2008 footnote 4's alternative option; Linux's choice).
    pub instantaneous: bool,
    /// θ rule counts every round with d_a <= d1 since α left α_max (Linux's rtt_low), not only
    /// consecutive ones (liu2008).
    pub theta_cumulative: bool,
    /// A loss event keeps β·W instead of removing it: Linux 2.6.22's tcp_illinois_ssthresh
    /// (the module ns-2 2.35 runs); liu2008 and later Linux remove β·W.
    pub keep_beta: bool,
}

impl IllinoisParams {
    /// liu2008 §6's standard setting.
    pub const PAPER: IllinoisParams =
        IllinoisParams { alpha_max: 10.0, alpha_min: 0.1, beta_max: 0.5, beta_min: 0.125, w_thresh: 10.0, eta1: 0.01, eta2: 0.1, eta3: 0.8, theta: 5.0, instantaneous: false, theta_cumulative: false, keep_beta: false };
    /// Linux's tcp_illinois (and so ns-2's Agent/TCP/Linux): α_min ≈ 0.3, W_thresh = 15,
    /// base/max RTT from instantaneous samples, and θ counted cumulatively (its rtt_low is not
    /// reset by a round with d_a > d1).
    pub const LINUX: IllinoisParams = IllinoisParams { alpha_min: 0.3, w_thresh: 15.0, instantaneous: true, theta_cumulative: true, ..Self::PAPER };

    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(IllinoisParams {
            alpha_max: p.get("alpha_max")?,
            alpha_min: p.get("alpha_min")?,
            beta_max: p.get("beta_max")?,
            beta_min: p.get("beta_min")?,
            w_thresh: p.get("w_thresh")?,
            eta1: p.get("eta1")?,
            eta2: p.get("eta2")?,
            eta3: p.get("eta3")?,
            theta: p.get("theta")?,
            instantaneous: p.text("extremes")? == Some("instantaneous"),
            theta_cumulative: p.text("theta_count")? == Some("cumulative"),
            keep_beta: p.text("decrease")? == Some("linux-2.6.22"),
        })
    }

    /// d1, d2, d3 for a maximum average queueing delay `d_m`.
    pub fn thresholds(&self, d_m: f64) -> [f64; 3] {
        [self.eta1 * d_m, self.eta2 * d_m, self.eta3 * d_m]
    }

    /// κ1..κ4 of eq. 4 for `d_m` (NaN where a denominator vanishes: α_max = α_min, d3 = d2;
    /// the branches that would use them are then empty).
    pub fn kappas(&self, d_m: f64) -> [f64; 4] {
        let [d1, d2, d3] = self.thresholds(d_m);
        let (amax, amin) = (self.alpha_max, self.alpha_min);
        let k1 = (d_m - d1) * amin * amax / (amax - amin);
        let k2 = (d_m - d1) * amin / (amax - amin) - d1;
        let k3 = (self.beta_min * d3 - self.beta_max * d2) / (d3 - d2);
        let k4 = (self.beta_max - self.beta_min) / (d3 - d2);
        [k1, k2, k3, k4]
    }

    /// α(d_a) of eq. 2 (without the θ rule or the W_thresh rule).
    pub fn alpha(&self, d_a: f64, d_m: f64) -> f64 {
        let d1 = self.eta1 * d_m;
        if d_a <= d1 || self.alpha_max <= self.alpha_min {
            return self.alpha_max;
        }
        let [k1, k2, _, _] = self.kappas(d_m);
        // Beyond d_m (not reachable with T_max tracking) α stays at α_min.
        (k1 / (k2 + d_a)).max(self.alpha_min)
    }

    /// β(d_a) of eq. 3 (without the W_thresh rule).
    pub fn beta(&self, d_a: f64, d_m: f64) -> f64 {
        let [_, d2, d3] = self.thresholds(d_m);
        if d_a <= d2 {
            self.beta_min
        } else if d_a < d3 {
            let [_, _, k3, k4] = self.kappas(d_m);
            k3 + k4 * d_a
        } else {
            self.beta_max
        }
    }
}

#[allow(clippy::too_many_arguments)]
const fn num(name: &'static str, default: f64, min: f64, max: Option<f64>, min_open: bool, max_open: bool, unit: &'static str, doc: &'static str) -> ParamSpec {
    ParamSpec { name, default: Some(default), min: Some(min), max, min_open, max_open, unit, doc, ..ParamSpec::NUMBER }
}

fn specs(d: IllinoisParams) -> Vec<ParamSpec> {
    vec![
        num("alpha_max", d.alpha_max, 1.0, None, false, false, "packets/RTT", "increase per RTT when the queueing delay is small (d_a <= d1)"),
        num("alpha_min", d.alpha_min, 0.0, Some(1.0), true, false, "packets/RTT", "increase per RTT at the largest delay d_m"),
        num("beta_max", d.beta_max, 0.0, Some(0.5), true, false, "fraction", "fraction removed at large delay (d_a >= d3)"),
        num("beta_min", d.beta_min, 0.0, Some(0.5), true, false, "fraction", "fraction removed at small delay (d_a <= d2)"),
        num("w_thresh", d.w_thresh, 0.0, None, true, false, "packets", "below this window alpha = 1, beta = 1/2"),
        num("eta1", d.eta1, 0.0, Some(1.0), false, true, "fraction", "d1 = eta1*d_m"),
        num("eta2", d.eta2, 0.0, Some(1.0), false, false, "fraction", "d2 = eta2*d_m"),
        num("eta3", d.eta3, 0.0, Some(1.0), false, false, "fraction", "d3 = eta3*d_m"),
        num("theta", d.theta, 0.0, None, false, false, "RTTs", "rounds d_a must stay <= d1 before alpha may return to alpha_max"),
        ParamSpec {
            name: "theta_count",
            kind: ParamKind::Choice(THETA_COUNT),
            default_text: Some(if d.theta_cumulative { "cumulative" } else { "consecutive" }),
            doc: "the theta rule counts consecutive rounds with d_a <= d1 (liu2008) or all such rounds since alpha left alpha_max (Linux's rtt_low)",
            ..ParamSpec::NUMBER
        },
        ParamSpec {
            name: "extremes",
            kind: ParamKind::Choice(EXTREMES),
            default_text: Some(if d.instantaneous { "instantaneous" } else { "average" }),
            doc: "T_min and T_max from the per-round average RTT (liu2008's default) or from single RTT samples (its footnote 4 alternative; Linux)",
            ..ParamSpec::NUMBER
        },
        ParamSpec {
            name: "decrease",
            kind: ParamKind::Choice(DECREASE),
            default_text: Some("standard"),
            doc: "standard: a loss event removes beta*W (liu2008 eq. 3, Linux since 2.6.23); linux-2.6.22: it keeps beta*W, as Linux 2.6.22's tcp_illinois_ssthresh does - the module ns-2 2.35 runs (same cut at beta = 1/2, deeper below)",
            ..ParamSpec::NUMBER
        },
    ]
}

fn check(p: &mut Params) -> Result<(), ParamError> {
    if p.get("beta_min")? > p.get("beta_max")? {
        return Err(ParamError::new("beta_min", format!("must be <= beta_max ({}); got {}", show_num(p.get("beta_max")?), show_num(p.get("beta_min")?))));
    }
    if p.get("eta2")? > p.get("eta3")? {
        return Err(ParamError::new("eta2", format!("must be <= eta3 ({}); got {}", show_num(p.get("eta3")?), show_num(p.get("eta2")?))));
    }
    Ok(())
}

const EXTREMES: &[&str] = &["average", "instantaneous"];
const THETA_COUNT: &[&str] = &["consecutive", "cumulative"];
const DECREASE: &[&str] = &["standard", "linux-2.6.22"];

const NS2: &str = "ns-2: Agent/TCP/Linux with select_ca illinois runs Linux's implementation (Linux parameters: the illinois_linux preset).";

pub fn illinois_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "illinois",
        family: "illinois",
        summary: "TCP-Illinois: +alpha(d_a)/W per ACK, W <- W - beta(d_a)*W per loss event, d_a the average queueing delay",
        source: "liu2008 §3 eq. 2-4; defaults from §6",
        params: specs(IllinoisParams::PAPER),
        aliases: vec![],
        taxonomy: None,
        notes: NS2,
        named_numbers: false,
        check: Some(check),
    }
}

pub fn illinois_linux_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "illinois_linux",
        family: "illinois",
        summary: "TCP-Illinois with Linux tcp_illinois's defaults (alpha_min = 0.3, w_thresh = 15, instantaneous min/max RTT)",
        source: "liu2008 §3; Linux net/ipv4/tcp_illinois.c defaults",
        params: specs(IllinoisParams::LINUX),
        aliases: vec![],
        taxonomy: None,
        notes: NS2,
        named_numbers: false,
        check: Some(check),
    }
}

/// TCP-Illinois.
#[derive(Clone, Debug)]
pub struct Illinois {
    pub p: IllinoisParams,
    /// α and β from the last per-round update (before the W_thresh and timeout rules).
    alpha: f64,
    beta: f64,
    /// T_min and T_max of the per-round average RTT.
    pub t_min: f64,
    pub t_max: f64,
    /// The last round's average RTT.
    pub t_avg: f64,
    sum: f64,
    count: f64,
    /// ACKs that make up the current round.
    target: f64,
    rounds: u64,
    /// θ rule: d_a has exceeded d1 since α was last α_max; rounds since with d_a ≤ d1.
    above: bool,
    low_rounds: f64,
    /// After a timeout: hold α = 1, β = 1/2 while in slow start (`Some(u64::MAX)`) and then until
    /// the round numbered by the value closes.
    hold: Option<u64>,
    w: Window,
}

impl Illinois {
    pub fn new(p: IllinoisParams, initial_window: f64, cap: f64) -> Self {
        Illinois {
            p,
            alpha: 1.0,
            beta: 0.5,
            t_min: f64::INFINITY,
            t_max: f64::NEG_INFINITY,
            t_avg: f64::NAN,
            sum: 0.0,
            count: 0.0,
            target: initial_window.max(1.0),
            rounds: 0,
            above: false,
            low_rounds: 0.0,
            hold: None,
            w: Window::new(initial_window, cap),
        }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        Ok(Self::new(IllinoisParams::from_params(p)?, initial_window, cap))
    }

    fn base(&self, w: f64) -> bool {
        w < self.p.w_thresh || self.hold.is_some()
    }

    /// α in force at window `w` (1 below W_thresh and while a timeout's hold lasts).
    pub fn alpha(&self) -> f64 {
        if self.base(self.w.cwnd) {
            1.0
        } else {
            self.alpha
        }
    }

    /// β in force at the current window.
    pub fn beta(&self) -> f64 {
        if self.base(self.w.cwnd) {
            0.5
        } else {
            self.beta
        }
    }

    /// Current d_a and d_m (seconds).
    pub fn delays(&self) -> (f64, f64) {
        (self.t_avg - self.t_min, self.t_max - self.t_min)
    }

    fn close_round(&mut self) {
        let t_a = self.sum / self.count;
        self.sum = 0.0;
        self.count = 0.0;
        self.target = self.w.cwnd.max(1.0);
        self.rounds += 1;
        self.t_avg = t_a;
        if !self.p.instantaneous {
            self.t_min = self.t_min.min(t_a);
            self.t_max = self.t_max.max(t_a);
        }
        if let Some(until) = self.hold {
            if self.rounds < until {
                return;
            }
            self.hold = None;
        }
        let (d_a, d_m) = self.delays();
        if d_a <= self.p.eta1 * d_m {
            if self.above {
                self.low_rounds += 1.0;
                if self.low_rounds >= self.p.theta {
                    self.above = false;
                    self.low_rounds = 0.0;
                    self.alpha = self.p.alpha_max;
                }
            } else {
                self.alpha = self.p.alpha_max;
            }
        } else {
            self.above = true;
            if !self.p.theta_cumulative {
                self.low_rounds = 0.0;
            }
            self.alpha = self.p.alpha(d_a, d_m);
        }
        self.beta = self.p.beta(d_a, d_m);
    }

    #[cfg(test)]
    pub(crate) fn window_mut(&mut self) -> &mut Window {
        &mut self.w
    }
}

impl Controller for Illinois {
    reno_min_cwnd!();

    fn on_rtt_sample(&mut self, _now: f64, rtt: f64) {
        if self.p.instantaneous {
            self.t_min = self.t_min.min(rtt);
            self.t_max = self.t_max.max(rtt);
        }
        self.sum += rtt;
        self.count += 1.0;
        if self.count >= self.target {
            self.close_round();
        }
    }

    fn on_ack(&mut self, _ack: &Ack) {
        if self.w.in_slow_start() {
            self.w.slow_start();
            return;
        }
        if self.hold == Some(u64::MAX) {
            // Slow start has ended: keep α = 1, β = 1/2 for one more full round.
            self.hold = Some(self.rounds + 2);
        }
        let w = self.w.cwnd;
        let a = if self.base(w) { 1.0 } else { self.alpha };
        self.w.grow(a / w);
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let b = if self.w.in_slow_start() || self.base(ev.window) { 0.5 } else { self.beta };
        let keep = if self.p.keep_beta { b } else { 1.0 - b };
        self.w.reduce_to(ev.window * keep);
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.timeout(to.window);
        self.hold = Some(u64::MAX);
        self.above = false;
        self.low_rounds = 0.0;
    }

    window_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use serde_json::json;

    #[test]
    fn alpha_and_beta_match_eqs_2_to_4() {
        for p in [IllinoisParams::PAPER, IllinoisParams::LINUX, IllinoisParams { eta1: 0.2, ..IllinoisParams::PAPER }] {
            let d_m = 0.04;
            let [d1, d2, d3] = p.thresholds(d_m);
            // eq. 4, written out independently.
            let k1 = (d_m - d1) * p.alpha_min * p.alpha_max / (p.alpha_max - p.alpha_min);
            let k2 = (d_m - d1) * p.alpha_min / (p.alpha_max - p.alpha_min) - d1;
            let k3 = (p.beta_min * d3 - p.beta_max * d2) / (d3 - d2);
            let k4 = (p.beta_max - p.beta_min) / (d3 - d2);
            let mid = (d2 + d3) / 2.0;
            let beq = |d: f64| if d <= d2 { p.beta_min } else if d < d3 { k3 + k4 * d } else { p.beta_max };
            let cases = [
                (0.0, p.alpha_max, p.beta_min),
                (d1, p.alpha_max, beq(d1)), // β_min unless η1 > η2 (the lossy-link setting)
                (mid, k1 / (k2 + mid), k3 + k4 * mid),
                (d3, k1 / (k2 + d3), p.beta_max),
                (d_m, p.alpha_min, p.beta_max),
            ];
            for (d_a, a, b) in cases {
                let (ga, gb) = (p.alpha(d_a, d_m), p.beta(d_a, d_m));
                println!("alpha_min={} eta1={}: d_a={d_a:.4}: alpha {ga:.4} (eq. {a:.4}), beta {gb:.4} (eq. {b:.4})", p.alpha_min, p.eta1);
                assert!((ga - a).abs() < 1e-12 && (gb - b).abs() < 1e-12);
            }
            // Continuity (eq. 4's conditions) and β linear midway.
            assert!((k1 / (k2 + d1) - p.alpha_max).abs() < 1e-9);
            assert!((k1 / (k2 + d_m) - p.alpha_min).abs() < 1e-12);
            assert!((p.beta(mid, d_m) - (p.beta_min + p.beta_max) / 2.0).abs() < 1e-12);
            assert_eq!(p.kappas(d_m), [k1, k2, k3, k4]);
        }
        // No queueing delay seen yet: α_max, β_min.
        assert_eq!(IllinoisParams::PAPER.alpha(0.0, 0.0), 10.0);
        assert_eq!(IllinoisParams::PAPER.beta(0.0, 0.0), 0.125);
    }

    /// One round of `w` RTT samples of `rtt` seconds each.
    fn round(c: &mut Illinois, rtt: f64) {
        let n = c.target as usize;
        for _ in 0..n {
            c.on_rtt_sample(0.0, rtt);
        }
    }

    fn in_ca(p: IllinoisParams, w: f64) -> Illinois {
        let mut c = Illinois::new(p, 2.0, f64::INFINITY);
        c.window_mut().ssthresh = 1.0;
        c.window_mut().cwnd = w;
        c.target = w;
        c
    }

    #[test]
    fn average_rtt_over_one_window_of_acks_and_per_round_update() {
        let mut c = in_ca(IllinoisParams::PAPER, 20.0);
        for i in 0..20 {
            c.on_rtt_sample(0.0, 0.1 + 0.01 * (i % 2) as f64);
        }
        assert!((c.t_avg - 0.105).abs() < 1e-12);
        round(&mut c, 0.2); // T_max
        round(&mut c, 0.15);
        let (d_a, d_m) = c.delays();
        assert!((d_m - 0.095).abs() < 1e-12 && (d_a - 0.045).abs() < 1e-12);
        assert!((c.alpha() - IllinoisParams::PAPER.alpha(0.045, 0.095)).abs() < 1e-12);
        assert!((c.beta() - IllinoisParams::PAPER.beta(0.045, 0.095)).abs() < 1e-12);
        // α applies per ACK as α/W; β on a loss.
        let a = c.alpha();
        let w = c.window();
        c.on_ack(&ack());
        assert!((c.window() - (w + a / w)).abs() < 1e-12);
        let (b, w) = (c.beta(), c.window());
        c.on_loss_event(&loss(w));
        assert!((c.window() - w * (1.0 - b)).abs() < 1e-12);
    }

    #[test]
    fn instantaneous_extremes_option() {
        let mut c = in_ca(IllinoisParams { instantaneous: true, ..IllinoisParams::PAPER }, 10.0);
        for i in 0..10 {
            c.on_rtt_sample(0.0, if i == 3 { 0.3 } else { 0.1 });
        }
        assert_eq!((c.t_min, c.t_max), (0.1, 0.3));
        let (d_a, d_m) = c.delays();
        assert!((d_a - 0.02).abs() < 1e-12 && (d_m - 0.2).abs() < 1e-12);
        let mut c = in_ca(IllinoisParams::PAPER, 10.0);
        for i in 0..10 {
            c.on_rtt_sample(0.0, if i == 3 { 0.3 } else { 0.1 });
        }
        assert!((c.t_min - 0.12).abs() < 1e-12 && (c.t_max - 0.12).abs() < 1e-12);
    }

    #[test]
    fn small_windows_use_alpha_one_beta_half() {
        let mut c = in_ca(IllinoisParams::PAPER, 8.0);
        round(&mut c, 0.1);
        assert_eq!((c.alpha(), c.beta()), (1.0, 0.5));
        c.on_loss_event(&loss(8.0));
        assert_eq!(c.window(), 4.0);
        let mut c = in_ca(IllinoisParams::LINUX, 12.0); // W_thresh 15
        round(&mut c, 0.1);
        assert_eq!(c.alpha(), 1.0);
        let mut c = in_ca(IllinoisParams::PAPER, 12.0);
        round(&mut c, 0.1);
        assert_eq!(c.alpha(), 10.0);
    }

    #[test]
    fn theta_counted_cumulatively_survives_a_congested_round() {
        // Three low rounds, one high round, two more low rounds: 5 low rounds in all.
        let run = |p: IllinoisParams| {
            let mut c = in_ca(IllinoisParams { theta: 5.0, ..p }, 40.0);
            round(&mut c, 0.1);
            round(&mut c, 0.2);
            for d in [0.1, 0.1, 0.1, 0.2, 0.1, 0.1] {
                round(&mut c, d);
            }
            c.alpha()
        };
        assert_eq!(run(IllinoisParams { theta_cumulative: true, ..IllinoisParams::PAPER }), 10.0);
        assert!(run(IllinoisParams::PAPER) < 10.0, "consecutive counting restarts after the high round");
    }

    #[test]
    fn theta_rule_delays_the_return_to_alpha_max() {
        for theta in [5.0, 2.0, 0.0] {
            let mut c = in_ca(IllinoisParams { theta, ..IllinoisParams::PAPER }, 40.0);
            round(&mut c, 0.1);
            round(&mut c, 0.2);
            assert!(c.alpha() < 10.0, "congested round");
            let congested = c.alpha();
            // Delay back at T_min: α is held for θ rounds, then returns to α_max.
            let mut back_at = None;
            for r in 1..=10 {
                round(&mut c, 0.1);
                if c.alpha() == 10.0 {
                    back_at = Some(r);
                    break;
                }
                assert_eq!(c.alpha(), congested, "held at its last value");
            }
            println!("theta = {theta}: alpha back to alpha_max after {back_at:?} rounds with d_a <= d1");
            assert_eq!(back_at, Some((theta as u32).max(1)));
            // One congested round resets the count.
            round(&mut c, 0.18);
            round(&mut c, 0.1);
            if theta > 1.0 {
                assert!(c.alpha() < 10.0);
            }
        }
    }

    #[test]
    fn timeout_resets_alpha_and_beta_until_a_round_after_slow_start() {
        let mut c = in_ca(IllinoisParams::PAPER, 40.0);
        round(&mut c, 0.1);
        round(&mut c, 0.1);
        assert_eq!(c.alpha(), 10.0);
        c.on_timeout(&timeout(40.0));
        assert_eq!((c.window(), c.ssthresh()), (1.0, 20.0));
        // Slow start to ssthresh, rounds closing meanwhile.
        while c.window() < c.ssthresh() {
            c.on_rtt_sample(0.0, 0.1);
            c.on_ack(&ack());
        }
        // Slow start is over but α = 1, β = 1/2 for the round in progress and one more.
        c.on_rtt_sample(0.0, 0.1);
        c.on_ack(&ack());
        assert_eq!((c.alpha(), c.beta()), (1.0, 0.5));
        let r0 = c.rounds;
        while c.rounds < r0 + 1 {
            c.on_rtt_sample(0.0, 0.1);
            c.on_ack(&ack());
        }
        assert_eq!(c.alpha(), 1.0, "one full round after slow start still held");
        while c.rounds < r0 + 2 {
            c.on_rtt_sample(0.0, 0.1);
            c.on_ack(&ack());
        }
        assert_eq!((c.alpha(), c.beta()), (10.0, 0.125));
    }

    #[test]
    fn validation() {
        let v = |j: serde_json::Value| illinois_info().validate(j.as_object().unwrap());
        let p = v(json!({})).unwrap();
        assert_eq!(IllinoisParams::from_params(&p).unwrap(), IllinoisParams::PAPER);
        let p = illinois_linux_info().validate(json!({}).as_object().unwrap()).unwrap();
        assert_eq!(IllinoisParams::from_params(&p).unwrap(), IllinoisParams::LINUX);
        assert_eq!(v(json!({"beta_min": 0.4, "beta_max": 0.3})).unwrap_err().field, "beta_min");
        assert_eq!(v(json!({"eta2": 0.9})).unwrap_err().field, "eta2");
        assert_eq!(v(json!({"alpha_min": 1.5})).unwrap_err().field, "alpha_min");
        assert_eq!(v(json!({"beta_max": 0.6})).unwrap_err().field, "beta_max");
        assert_eq!(v(json!({"eta1": 1})).unwrap_err().field, "eta1");
        assert_eq!(v(json!({"extremes": "median"})).unwrap_err().field, "extremes");
        assert!(IllinoisParams::from_params(&v(json!({"extremes": "instantaneous"})).unwrap()).unwrap().instantaneous);
    }

    /// Linux 2.6.22's tcp_illinois_ssthresh keeps beta*W: at beta = beta_min = 1/8 (low delay)
    /// a loss from 100 packets leaves 12.5 (ns-2 traced 12, an integer), the standard rule 87.5;
    /// at beta = 1/2 both halve.
    #[test]
    fn linux_2_6_22_decrease_keeps_beta_times_w() {
        let v = |j: serde_json::Value| illinois_linux_info().validate(j.as_object().unwrap());
        for (decrease, expect) in [("standard", 87.5), ("linux-2.6.22", 12.5)] {
            let p = IllinoisParams::from_params(&v(json!({"decrease": decrease})).unwrap()).unwrap();
            let mut c = in_ca(p, 100.0);
            c.beta = 0.125;
            c.on_loss_event(&loss(100.0));
            assert_eq!(c.window(), expect, "{decrease}");
            let mut c = in_ca(p, 100.0);
            c.beta = 0.5;
            c.on_loss_event(&loss(100.0));
            assert_eq!(c.window(), 50.0, "{decrease}");
        }
        assert_eq!(v(json!({"decrease": "keep"})).unwrap_err().field, "decrease");
    }

}
