//! H-TCP (Leith & Shorten, PFLDnet 2004; draft-leith-tcp-htcp-06), with Linux tcp_htcp's
//! structure and defaults. The increase depends on the time Δ since the last congestion event:
//!
//! - `α(Δ) = 1` for Δ ≤ Δ_L (1 s), else `1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²`;
//! - RTT scaling: `α(Δ)·RTT_min/RTT_ref` (RTT_ref = 100 ms; the ratio clamped to [0.1, 2] and
//!   the product to ≥ 1, as Linux);
//! - adaptive backoff: on a loss event the kept fraction becomes `RTT_min/RTT_max` clamped to
//!   [1/2, 4/5] (so the removed fraction β lies in [beta_min, beta_max] = [0.2, 0.5]), and the
//!   increase is `2(1 − keep)·α(Δ)` so that the control stays TCP-friendly;
//! - bandwidth switch: if the largest throughput measured in the epoch before this loss differs
//!   from the previous epoch's by more than 20 %, the flow backs off by 1/2 (as also on the first
//!   loss: Linux's mode switch waits for one congestion event before adapting).
//!
//! Per ACK `W ← W + α/W`. Δ counts from the end of the loss recovery (the first ACK after the
//! event, as Linux sets `last_cong` when the state returns to Open). RTT_min is the smallest
//! sample; RTT_max the largest sample taken in congestion avoidance at least 3·RTT_min after the
//! last congestion event, faded towards RTT_min by 5 % at each event (Linux). Throughput is
//! measured per round (≥ RTT_min and about a window of ACKs), smoothed with gain 1/4.
//! Slow start is standard; the loss that ends it applies the backoff above (1/2, the first event).
//! A timeout follows the shared rule (ssthresh = W/2, window 1) and restarts Δ.

use crate::error::show_num;
use super::params::{ON_OFF, AlgorithmInfo, ParamError, ParamKind, ParamSpec, Params, Taxonomy};
use super::{Ack, Controller, LossEvent, Timeout, Window};

/// H-TCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HtcpParams {
    /// Δ_L, seconds of standard-TCP behaviour after a congestion event.
    pub delta_l: f64,
    /// Smallest and largest fraction removed on a loss event.
    pub beta_min: f64,
    pub beta_max: f64,
    pub adaptive_backoff: bool,
    pub rtt_scaling: bool,
    pub rtt_ref: f64,
    pub bandwidth_switch: bool,
}

impl HtcpParams {
    pub const DEFAULT: HtcpParams = HtcpParams { delta_l: 1.0, beta_min: 0.2, beta_max: 0.5, adaptive_backoff: true, rtt_scaling: true, rtt_ref: 0.1, bandwidth_switch: true };

    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(HtcpParams {
            delta_l: p.get("delta_l")?,
            beta_min: p.get("beta_min")?,
            beta_max: p.get("beta_max")?,
            adaptive_backoff: p.text("adaptive_backoff")? != Some("off"),
            rtt_scaling: p.text("rtt_scaling")? != Some("off"),
            rtt_ref: p.get("rtt_ref")?,
            bandwidth_switch: p.text("bandwidth_switch")? != Some("off"),
        })
    }

    /// α(Δ) before scaling and backoff adjustment.
    pub fn alpha_delta(&self, delta: f64) -> f64 {
        if delta <= self.delta_l {
            1.0
        } else {
            let d = delta - self.delta_l;
            1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
        }
    }

    /// The increase per RTT for Δ, the smallest RTT and the kept fraction in force.
    pub fn alpha(&self, delta: f64, rtt_min: f64, keep: f64) -> f64 {
        let mut f = self.alpha_delta(delta);
        if self.rtt_scaling && rtt_min.is_finite() && rtt_min > 0.0 {
            f = (f * (rtt_min / self.rtt_ref).clamp(0.1, 2.0)).max(1.0);
        }
        if self.adaptive_backoff {
            2.0 * (1.0 - keep) * f
        } else {
            f
        }
    }
}

fn choice(name: &'static str, doc: &'static str) -> ParamSpec {
    ParamSpec { name, kind: ParamKind::Choice(ON_OFF), default_text: Some("on"), doc, ..ParamSpec::NUMBER }
}

fn specs() -> Vec<ParamSpec> {
    let d = HtcpParams::DEFAULT;
    vec![
        ParamSpec { name: "delta_l", default: Some(d.delta_l), min: Some(0.0), unit: "s", doc: "Delta_L: standard TCP increase for this long after a congestion event", ..ParamSpec::NUMBER },
        ParamSpec::fraction("beta_min", d.beta_min, "smallest fraction removed on a loss event (Linux keeps at most 0.8)"),
        ParamSpec::fraction("beta_max", d.beta_max, "largest fraction removed (the fallback: first event, bandwidth switch, no RTT data)"),
        choice("adaptive_backoff", "keep = RTT_min/RTT_max on a loss event, and alpha scaled by 2(1 - keep)"),
        choice("rtt_scaling", "scale alpha(Delta) by RTT_min/rtt_ref (Linux use_rtt_scaling)"),
        ParamSpec { name: "rtt_ref", default: Some(d.rtt_ref), min: Some(0.0), min_open: true, unit: "s", doc: "reference RTT of the RTT scaling", ..ParamSpec::NUMBER },
        choice("bandwidth_switch", "back off by beta_max when the throughput before a loss changed by more than 20% (Linux use_bandwidth_switch)"),
    ]
}

fn check(p: &mut Params) -> Result<(), ParamError> {
    if p.get("beta_min")? > p.get("beta_max")? {
        return Err(ParamError::new("beta_min", format!("must be <= beta_max ({}); got {}", show_num(p.get("beta_max")?), show_num(p.get("beta_min")?))));
    }
    Ok(())
}

pub fn htcp_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "htcp",
        family: "htcp",
        summary: "H-TCP: +alpha(Delta)/W per ACK with Delta the time since the last congestion event; adaptive backoff W <- (RTT_min/RTT_max)*W",
        source: "Leith & Shorten, PFLDnet 2004 and draft-leith-tcp-htcp-06 (Delta_L = 1 s, alpha(Delta), adaptive backoff in [0.5, 0.8]); RTT scaling, bandwidth switch and defaults of Linux net/ipv4/tcp_htcp.c",
        params: specs(),
        aliases: vec![],
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "superlinear", history: "variable" }),
        notes: "ns-2: Agent/TCP/Linux with select_ca htcp; set_ca_param htcp use_rtt_scaling|use_bandwidth_switch (0/1). Taxonomy derived here from tsao2007's definitions (the step grows with the time since the last loss: convex curve, liu2008 §2); tsao2007 itself does not classify H-TCP.",
        named_numbers: false,
        check: Some(check),
    }
}

/// H-TCP.
#[derive(Clone, Debug)]
pub struct Htcp {
    pub p: HtcpParams,
    /// Fraction kept at the next loss event (and in α's 2(1 − keep) factor).
    pub keep: f64,
    modeswitch: bool,
    pub rtt_min: f64,
    pub rtt_max: f64,
    /// Time of the last congestion event (end of its recovery); None before the first ACK.
    pub last_cong: Option<f64>,
    /// A loss event or timeout happened and no ACK has ended its recovery yet.
    recovering: bool,
    // Throughput measurement (packets/s).
    count: f64,
    last_time: Option<f64>,
    pub bi: f64,
    pub max_b: f64,
    pub old_max_b: f64,
    w: Window,
}

impl Htcp {
    pub fn new(p: HtcpParams, initial_window: f64, cap: f64) -> Self {
        Htcp {
            p,
            keep: 1.0 - p.beta_max,
            modeswitch: false,
            rtt_min: f64::INFINITY,
            rtt_max: 0.0,
            last_cong: None,
            recovering: false,
            count: 0.0,
            last_time: None,
            bi: 0.0,
            max_b: 0.0,
            old_max_b: 0.0,
            w: Window::new(initial_window, cap),
        }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        Ok(Self::new(HtcpParams::from_params(p)?, initial_window, cap))
    }

    /// Increase per RTT at time `now`.
    pub fn alpha(&self, now: f64) -> f64 {
        let delta = self.last_cong.map_or(0.0, |t| now - t);
        self.p.alpha(delta, self.rtt_min, self.keep)
    }

    /// Congestion epochs (RTT_min units) since the last congestion event.
    fn ccount(&self, now: f64) -> f64 {
        match self.last_cong {
            Some(t) if self.rtt_min.is_finite() && self.rtt_min > 0.0 => (now - t) / self.rtt_min,
            _ => 0.0,
        }
    }

    fn measure_throughput(&mut self, ack: &Ack) {
        let now = ack.now;
        let Some(t0) = self.last_time else {
            self.last_time = Some(now);
            self.count = 0.0;
            return;
        };
        self.count += ack.acked as f64;
        let alpha = self.alpha(now).max(1.0);
        if self.count >= self.w.cwnd - alpha && now - t0 >= self.rtt_min && self.rtt_min.is_finite() {
            let cur = self.count / (now - t0);
            if self.ccount(now) <= 3.0 {
                self.bi = cur;
                self.max_b = cur;
            } else {
                self.bi = (3.0 * self.bi + cur) / 4.0;
                self.max_b = self.max_b.max(self.bi);
            }
            self.count = 0.0;
            self.last_time = Some(now);
        }
    }

    /// Linux's htcp_beta_update: the kept fraction for this loss event.
    fn update_beta(&mut self) {
        let lo = 1.0 - self.p.beta_max;
        let hi = 1.0 - self.p.beta_min;
        if self.p.bandwidth_switch {
            let (max_b, old) = (self.max_b, self.old_max_b);
            self.old_max_b = max_b;
            if !(4.0 * old <= 5.0 * max_b && 5.0 * max_b <= 6.0 * old) {
                self.keep = lo;
                self.modeswitch = false;
                return;
            }
        }
        if self.p.adaptive_backoff && self.modeswitch && self.rtt_min > 0.010 && self.rtt_max > 0.0 {
            self.keep = (self.rtt_min / self.rtt_max).clamp(lo, hi);
        } else {
            self.keep = lo;
            self.modeswitch = true;
        }
    }

    fn congestion(&mut self, now: f64) {
        self.recovering = true;
        self.last_cong = Some(now);
        self.count = 0.0;
        self.last_time = None;
    }
}

impl Controller for Htcp {
    fn on_rtt_sample(&mut self, now: f64, rtt: f64) {
        self.rtt_min = self.rtt_min.min(rtt);
        if self.last_cong.is_none() {
            self.last_cong = Some(now);
        }
    }

    fn on_ack(&mut self, ack: &Ack) {
        let now = ack.now;
        if self.recovering || self.last_cong.is_none() {
            // Recovery has ended (or the connection starts): Δ counts from here.
            self.recovering = false;
            self.last_cong = Some(now);
        }
        self.measure_throughput(ack);
        if self.w.in_slow_start() {
            self.w.slow_start();
            return;
        }
        if let Some(rtt) = ack.rtt {
            if self.w.ssthresh.is_finite() && self.ccount(now) > 3.0 {
                self.rtt_max = self.rtt_max.max(self.rtt_min).max(rtt);
            }
        }
        let a = self.alpha(now);
        let w = self.w.cwnd;
        self.w.grow(a / w);
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        self.update_beta();
        if self.rtt_min.is_finite() && self.rtt_max > self.rtt_min {
            self.rtt_max = self.rtt_min + 0.95 * (self.rtt_max - self.rtt_min);
        }
        self.w.reduce_to(ev.window * self.keep);
        self.congestion(ev.now);
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.timeout(to.window);
        self.congestion(to.now);
    }

    window_in_field!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use crate::cc::{Ack, LossEvent};
    use serde_json::json;

    fn at(now: f64, rtt: f64, w: f64) -> Ack {
        Ack { now, acked: 1, rtt: Some(rtt), min_rtt: rtt, in_flight: w as u32 }
    }

    /// Rounds of one RTT each with ACKs spread evenly; every ACK carries `rtt`.
    fn drive(c: &mut Htcp, now: &mut f64, rtt: f64, rounds: usize) -> Vec<f64> {
        let mut out = vec![];
        for _ in 0..rounds {
            let n = c.window().round().max(1.0) as usize;
            for _ in 0..n {
                *now += rtt / n as f64;
                c.on_rtt_sample(*now, rtt);
                c.on_ack(&at(*now, rtt, c.window()));
            }
            out.push(c.window());
        }
        out
    }

    fn lossev(now: f64, w: f64) -> LossEvent {
        LossEvent { now, window: w, in_flight: w as u32, ecn: false }
    }

    #[test]
    fn alpha_of_delta() {
        let p = HtcpParams::DEFAULT;
        assert_eq!(p.alpha_delta(0.5), 1.0);
        assert_eq!(p.alpha_delta(1.0), 1.0);
        assert!((p.alpha_delta(3.0) - (1.0 + 20.0 + 1.0)).abs() < 1e-12);
        assert!((p.alpha_delta(11.0) - (1.0 + 100.0 + 25.0)).abs() < 1e-12);
        // 2(1 − keep) factor: keep 1/2 leaves α(Δ); keep 0.8 gives 0.4·α(Δ).
        assert!((p.alpha(3.0, 0.1, 0.5) - 22.0).abs() < 1e-12);
        assert!((p.alpha(3.0, 0.1, 0.8) - 0.4 * 22.0).abs() < 1e-12);
        // RTT scaling with RTT_ref = 100 ms: α·RTT_min/RTT_ref, ratio in [0.1, 2], at least 1.
        assert!((p.alpha(3.0, 0.05, 0.5) - 11.0).abs() < 1e-12);
        assert!((p.alpha(3.0, 0.5, 0.5) - 44.0).abs() < 1e-12);
        assert_eq!(p.alpha(3.0, 0.001, 0.5), 2.2);
        assert_eq!(p.alpha(0.5, 0.05, 0.5), 1.0);
        let ns = HtcpParams { rtt_scaling: false, ..p };
        assert!((ns.alpha(3.0, 0.05, 0.5) - 22.0).abs() < 1e-12);
    }

    #[test]
    fn increase_per_rtt_follows_alpha_of_the_time_since_the_loss() {
        let mut c = Htcp::new(HtcpParams::DEFAULT, 2.0, f64::INFINITY);
        let mut now = 0.0;
        let rtt = 0.1;
        c.w.ssthresh = 1.0;
        c.w.cwnd = 100.0;
        drive(&mut c, &mut now, rtt, 1);
        c.on_loss_event(&lossev(now, c.window()));
        let w0 = c.window();
        assert!((w0 - 50.5).abs() < 0.5, "first event backs off by 1/2: {w0}");
        let w = drive(&mut c, &mut now, rtt, 60);
        let t_cong = c.last_cong.unwrap();
        let steps: Vec<f64> = std::iter::once(w0).chain(w.iter().cloned()).collect::<Vec<_>>().windows(2).map(|x| x[1] - x[0]).collect();
        println!("H-TCP steps per RTT after a loss: {:?}", steps.iter().map(|s| (s * 100.0).round() / 100.0).collect::<Vec<_>>());
        // Δ ≤ 1 s: one packet per RTT.
        for s in &steps[1..9] {
            assert!((s - 1.0).abs() < 0.03, "{s}");
        }
        // Later: α(Δ) at mid-round (keep 1/2, RTT_min = RTT_ref), over the round's ACKs
        // (one per packet of the window at its start, while the window grows by ~α).
        for r in 15..25 {
            let mid = t_cong + (r as f64 + 0.5) * rtt;
            let a = c.p.alpha_delta(mid - t_cong);
            let prev = if r == 0 { w0 } else { w[r - 1] };
            let expect = a * prev.round() / (prev + a / 2.0);
            assert!((steps[r] - expect).abs() < 0.03 * expect, "round {r}: step {} vs {expect} (alpha {a})", steps[r]);
        }
        assert!(steps[24] > 10.0 * steps[5]);
        // Per ACK exactly W <- W + alpha(Delta)/W.
        let t = t_cong + 2.5;
        let win = c.window();
        c.on_ack(&at(t, rtt, win));
        assert!((c.window() - (win + c.p.alpha_delta(2.5) / win)).abs() < 1e-9);
    }

    #[test]
    fn adaptive_backoff_uses_rtt_min_over_rtt_max() {
        let p = HtcpParams { bandwidth_switch: false, ..HtcpParams::DEFAULT };
        let mut c = Htcp::new(p, 2.0, f64::INFINITY);
        let mut now = 0.0;
        c.w.ssthresh = 1.0;
        c.w.cwnd = 100.0;
        drive(&mut c, &mut now, 0.1, 1);
        // First event: 1/2 (mode switch).
        c.on_loss_event(&lossev(now, 100.0));
        assert_eq!(c.window(), 50.0);
        // An epoch with RTTs up to 0.125 s (queueing 25 ms) after 3 RTT_min.
        drive(&mut c, &mut now, 0.1, 5);
        drive(&mut c, &mut now, 0.125, 5);
        assert!((c.rtt_max - 0.125).abs() < 1e-12);
        let w = c.window();
        c.on_loss_event(&lossev(now, w));
        assert!((c.keep - 0.8).abs() < 1e-12, "keep {}", c.keep);
        assert!((c.window() - 0.8 * w).abs() < 1e-9);
        // α now scaled by 2(1 − 0.8) = 0.4.
        assert!((c.alpha(now + 0.5) - 0.4).abs() < 1e-12);
        // RTT_max faded towards RTT_min by 5 %.
        assert!((c.rtt_max - (0.1 + 0.95 * 0.025)).abs() < 1e-12);
        // Large queueing (RTT_max = 3·RTT_min): clamped to keep 1/2.
        drive(&mut c, &mut now, 0.3, 10);
        let w = c.window();
        c.on_loss_event(&lossev(now, w));
        assert_eq!(c.keep, 0.5);
    }

    #[test]
    fn bandwidth_switch_backs_off_by_half_after_a_throughput_change() {
        let mut c = Htcp::new(HtcpParams::DEFAULT, 2.0, f64::INFINITY);
        let mut now = 0.0;
        c.w.ssthresh = 1.0;
        let epoch = |c: &mut Htcp, now: &mut f64, w: f64| {
            c.w.cwnd = w;
            c.w.ssthresh = w;
            drive(c, now, 0.1, 8);
            drive(c, now, 0.15, 8);
            c.on_loss_event(&lossev(*now, c.window()));
        };
        // Epochs of equal throughput: the first event backs off by 1/2, the second arms the mode
        // switch, the third adapts: keep = RTT_min/RTT_max = 0.1/0.15.
        for i in 0..3 {
            epoch(&mut c, &mut now, 100.0);
            println!("H-TCP epoch {i}: max_b {:.0} pkt/s, keep {:.4}", c.old_max_b, c.keep);
        }
        assert!((c.keep - 0.1 / 0.15).abs() < 1e-9, "keep {}", c.keep);
        // Half the window, half the throughput: the bandwidth switch backs off by 1/2.
        epoch(&mut c, &mut now, 50.0);
        assert_eq!(c.keep, 0.5);
        // With the switch off the same epoch keeps adapting.
        let mut c = Htcp::new(HtcpParams { bandwidth_switch: false, ..HtcpParams::DEFAULT }, 2.0, f64::INFINITY);
        c.w.ssthresh = 1.0;
        let mut now = 0.0;
        for _ in 0..3 {
            epoch(&mut c, &mut now, 100.0);
        }
        epoch(&mut c, &mut now, 50.0);
        assert!((c.keep - 0.1 / 0.15).abs() < 1e-9, "keep {}", c.keep);
    }

    #[test]
    fn slow_start_timeout_and_validation() {
        let mut c = Htcp::new(HtcpParams::DEFAULT, 2.0, f64::INFINITY);
        for _ in 0..8 {
            c.on_ack(&ack());
        }
        assert_eq!(c.window(), 10.0);
        c.on_timeout(&timeout(10.0));
        assert_eq!((c.window(), c.ssthresh()), (1.0, 5.0));
        let v = |j: serde_json::Value| htcp_info().validate(j.as_object().unwrap());
        assert_eq!(HtcpParams::from_params(&v(json!({})).unwrap()).unwrap(), HtcpParams::DEFAULT);
        assert_eq!(v(json!({"beta_min": 0.6})).unwrap_err().field, "beta_min");
        assert!(!HtcpParams::from_params(&v(json!({"rtt_scaling": "off"})).unwrap()).unwrap().rtt_scaling);
    }
}
