//! BIC-TCP (Xu, Harfoush, Rhee, INFOCOM 2004), as Linux's tcp_bic (2.6.22, the module ns-2's
//! TCP-Linux runs) implements it: after a loss the window climbs back towards the window at the
//! loss, `W_max`, by binary search, then probes beyond it ("max probing"); far from `W_max` the
//! step is capped at `max_increment`.
//!
//! The window is a whole number of packets and grows as Linux grows it: one packet once
//! `cnt + 1` ACKs have arrived since the last step (the `snd_cwnd_cnt` counter), where `cnt`,
//! "ACKs per packet of growth", is computed in integer arithmetic from the integer window W,
//! with B = `b` (4):
//! - W ≤ low_window (14): cnt = W (standard TCP, and none of the scaling below);
//! - W < W_max (binary search): d = ⌊(W_max − W)/B⌋; cnt = ⌊W/max_increment⌋ if
//!   d > max_increment, ⌊W·smooth_part/B⌋ if d ≤ 1, else ⌊W/d⌋;
//! - W ≥ W_max (max probing): ⌊W·smooth_part/B⌋ if W < W_max + B; ⌊W·(B − 1)/(W − W_max)⌋ if
//!   W < W_max + max_increment·(B − 1); else ⌊W/max_increment⌋;
//! - before the first loss at most 20 (at least 5% growth per RTT);
//! - then cnt = ⌊16·cnt/delayed_ack⌋ (at least 1), where `delayed_ack` is Linux's running
//!   estimate of packets per ACK ×16: per ACK in the Open state (not in recovery, not after a
//!   timeout until the data outstanding then is acknowledged) `delayed_ack += acked −
//!   ⌊delayed_ack/16⌋`, starting at 32. With integer truncation it rests anywhere in
//!   [16·n, 16·n + 15] for n packets per ACK, and from 32 it settles at 31 when every packet is
//!   acknowledged: without delayed ACKs Linux's BIC grows 31/16 ≈ 1.94 times as fast as the
//!   nominal per-RTT steps (max_increment, d, b/smooth_part); with one ACK for every two
//!   packets it grows at the nominal rate.
//! - cnt is recomputed when the window changes or 1000/32 = 31 ms (Linux: HZ/32 jiffies at
//!   ns-2's HZ = 1000) after the last computation.
//!
//! Slow start (W ≤ ssthresh, Linux's test) adds one packet per ACK. Loss event: W_max =
//! ⌊W·(1 + keep)/2⌋ if W < W_max and fast convergence is on (the flow is releasing bandwidth),
//! else W; ssthresh and the window become ⌊keep·W⌋ (keep = 1 − beta, Linux 819/1024), or ⌊W/2⌋
//! at or below low_window, at least 2. The loss that ends slow start is handled the same way.
//! A timeout sets ssthresh by the same rule (ns-2's TCP-Linux asks the module, which keeps
//! keep·W), the window to 1, and resets the module as Linux does on entering the loss state:
//! W_max and the loss history are forgotten and `delayed_ack` restarts at 32.
//!
//! Not modelled: Linux's `tcp_is_cwnd_limited` test (no growth unless the flight fills the
//! window; ns-2 reduces it to in_flight ≥ cwnd, which a bulk sender always meets).

use super::params::{ON_OFF, keep_alias, AlgorithmInfo, ParamKind, ParamSpec, Params, Taxonomy, ParamError};
use super::{Ack, Controller, LossEvent, Timeout, Window, MIN_SSTHRESH};

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

    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(BicParams {
            beta: p.get("beta")?,
            max_increment: p.get("max_increment")?,
            low_window: p.get("low_window")?,
            b: p.get("b")?,
            smooth_part: p.get("smooth_part")?,
            fast_convergence: p.text("fast_convergence")? != Some("off"),
        })
    }

    pub fn keep(&self) -> f64 {
        1.0 - self.beta
    }

    /// Linux's `ca->cnt` for the integer window `w` given `w_max` (0: none yet): the window
    /// grows by one packet after `cnt + 1` ACKs. `delayed_ack` is the packets-per-ACK
    /// estimate ×16 (`ACK_RATIO_SCALE`). Every division truncates, as Linux's unsigned
    /// arithmetic does.
    pub fn cnt(&self, w: f64, w_max: f64, lost_before: bool, delayed_ack: u32) -> f64 {
        if w <= self.low_window {
            // Standard TCP; Linux returns before the delayed-ACK scaling.
            return w;
        }
        let b = self.b;
        let mut cnt = if w < w_max {
            let d = ((w_max - w) / b).floor();
            if d > self.max_increment {
                (w / self.max_increment).floor()
            } else if d <= 1.0 {
                (w * self.smooth_part / b).floor()
            } else {
                (w / d).floor()
            }
        } else if w < w_max + b {
            (w * self.smooth_part / b).floor()
        } else if w < w_max + self.max_increment * (b - 1.0) {
            (w * (b - 1.0) / (w - w_max)).floor()
        } else {
            (w / self.max_increment).floor()
        };
        if !lost_before && cnt > 20.0 {
            cnt = 20.0;
        }
        ((cnt * ACK_RATIO_SCALE as f64) / delayed_ack as f64).floor().max(1.0)
    }

    /// The window after a loss event at the integer window `w` (Linux's ssthresh, at least 2).
    pub fn reduced(&self, w: f64) -> f64 {
        let r = if w <= self.low_window { (w / 2.0).floor() } else { (w * self.keep()).floor() };
        r.max(MIN_SSTHRESH)
    }
}

/// Linux's ACK_RATIO_SHIFT (4): `delayed_ack` holds packets per ACK times 16.
pub const ACK_RATIO_SCALE: u32 = 16;

/// Linux recomputes `cnt` at most every HZ/32 jiffies while the window is unchanged (31 ms with
/// ns-2's HZ = 1000 and its millisecond `tcp_time_stamp`).
const RECOMPUTE_MS: i64 = 1000 / 32;

fn specs() -> Vec<ParamSpec> {
    let d = BicParams::LINUX;
    vec![
        ParamSpec::fraction("beta", d.beta, "fraction of the window removed on a loss event above low_window (Linux keeps 819/1024)"),
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
    /// Linux's last_max_cwnd: window before the last decrease (after fast convergence); 0
    /// before any.
    pub w_max: f64,
    /// A loss event since the start or the last timeout (Linux's loss_cwnd ≠ 0).
    lost: bool,
    /// Linux's delayed_ack: packets per ACK ×16, a running estimate.
    pub delayed_ack: u32,
    /// ACKs per packet of growth (Linux's ca->cnt) and the ACKs counted towards the next packet
    /// (snd_cwnd_cnt).
    cnt: f64,
    acks: u32,
    /// Window and time (whole ms) when `cnt` was last computed.
    last_cwnd: f64,
    last_ms: i64,
    /// After a timeout: packets still to be acknowledged before Linux leaves the loss state.
    loss_left: u64,
    w: Window,
}

impl Bic {
    pub fn new(p: BicParams, initial_window: f64, cap: f64) -> Self {
        Bic {
            p,
            w_max: 0.0,
            lost: false,
            delayed_ack: 2 * ACK_RATIO_SCALE,
            cnt: 0.0,
            acks: 0,
            last_cwnd: 0.0,
            last_ms: 0,
            loss_left: 0,
            w: Window::new(initial_window.floor().max(1.0), cap),
        }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        Ok(Self::new(BicParams::from_params(p)?, initial_window, cap))
    }

    /// ACKs per packet of growth (Linux's cnt) at the current window and ACK ratio.
    pub fn cnt(&self) -> f64 {
        self.p.cnt(self.w.cwnd, self.w_max, self.lost, self.delayed_ack)
    }

    /// Increase per RTT at the current window if every packet is acknowledged separately.
    pub fn increase(&self) -> f64 {
        self.w.cwnd / (self.cnt() + 1.0)
    }

    /// One packet more, never past the cap (Linux: below snd_cwnd_clamp).
    fn step(&mut self) {
        if self.w.cwnd + 1.0 <= self.w.cap {
            self.w.cwnd += 1.0;
        }
    }
}

impl Controller for Bic {
    fn on_ack(&mut self, ack: &Ack) {
        // The ACK-ratio estimate (Linux's pkts_acked hook) moves only in the Open state; the
        // transports report no ACKs during fast recovery, and after a timeout Linux stays in
        // the loss state until everything outstanding then is acknowledged.
        if self.loss_left > 0 {
            self.loss_left = self.loss_left.saturating_sub(ack.acked as u64);
        } else if ack.acked > 0 {
            self.delayed_ack = self.delayed_ack + ack.acked - self.delayed_ack / ACK_RATIO_SCALE;
        }
        if self.w.cwnd <= self.w.ssthresh {
            self.step();
            return;
        }
        let now_ms = (ack.now * 1000.0).floor() as i64;
        if self.w.cwnd != self.last_cwnd || now_ms - self.last_ms > RECOMPUTE_MS {
            self.last_cwnd = self.w.cwnd;
            self.last_ms = now_ms;
            self.cnt = self.cnt();
        }
        if self.acks as f64 >= self.cnt {
            self.step();
            self.acks = 0;
        } else {
            self.acks += 1;
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let w = ev.window.floor().max(1.0);
        self.w_max = if w < self.w_max && self.p.fast_convergence { (w * (1.0 + self.p.keep()) / 2.0).floor() } else { w };
        self.lost = true;
        self.acks = 0;
        self.loss_left = 0;
        self.w.reduce_to(self.p.reduced(w));
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.ssthresh = self.p.reduced(to.window.floor().max(1.0));
        self.w.cwnd = 1.0;
        *self = Bic { p: self.p, w: self.w, loss_left: to.in_flight as u64, ..Bic::new(self.p, 1.0, self.w.cap) };
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

    /// One RTT with delayed ACKs: one ACK for every two packets of the window.
    fn rtt_delack(c: &mut Bic) -> f64 {
        let n = (c.window() / 2.0).floor() as usize;
        for _ in 0..n {
            c.on_ack(&Ack { acked: 2, ..ack() });
        }
        c.window()
    }

    #[test]
    fn decrease_keeps_819_of_1024_and_records_w_max() {
        // Integer windows as Linux: 1000·819/1024 = 799.8 truncates to 799.
        let c = after_loss_at(1000.0);
        assert_eq!((c.window(), c.ssthresh(), c.w_max), (799.0, 799.0, 1000.0));
        // Fast convergence: a loss below W_max lowers W_max to ⌊W(1 + keep)/2⌋ = ⌊799·1843/2048⌋.
        let mut c = after_loss_at(1000.0);
        c.on_loss_event(&loss(799.0));
        assert_eq!(c.w_max, 719.0);
        assert_eq!(c.window(), 639.0);
        // Standard TCP at or below low_window (⌊W/2⌋, at least 2).
        assert_eq!(after_loss_at(12.0).window(), 6.0);
        assert_eq!(after_loss_at(13.0).window(), 6.0);
        assert_eq!(after_loss_at(3.0).window(), 2.0);
    }

    #[test]
    fn cnt_is_linux_integer_arithmetic_scaled_by_the_ack_ratio() {
        let p = BicParams::LINUX;
        // Nominal ratio (two packets per ACK, delayed_ack = 32): half the per-packet cnt.
        // Far below W_max: ⌊W/16⌋.
        assert_eq!(p.cnt(500.0, 1000.0, true, 32), 15.0);
        // Within 4·16 of W_max: ⌊W/d⌋, d = ⌊(W_max − W)/4⌋ = 10.
        assert_eq!(p.cnt(960.0, 1000.0, true, 32), 48.0);
        // d ≤ 1 and just above W_max: ⌊W·20/4⌋ (0.2 packets per RTT nominal).
        assert_eq!(p.cnt(996.0, 1000.0, true, 32), 2490.0);
        assert_eq!(p.cnt(1002.0, 1000.0, true, 32), 2505.0);
        // Max probing: ⌊3W/(W − W_max)⌋, then ⌊W/16⌋.
        assert_eq!(p.cnt(1030.0, 1000.0, true, 32), 51.0);
        assert_eq!(p.cnt(1100.0, 1000.0, true, 32), 34.0);
        // Before any loss: at most 20 (5% per RTT).
        assert_eq!(p.cnt(1000.0, 0.0, false, 32), 10.0);
        // At or below low_window: cnt = W, without the ACK-ratio scaling.
        assert_eq!(p.cnt(10.0, 0.0, false, 31), 10.0);
        // One packet per ACK (delayed_ack settles at 31): ⌊16·31/31⌋ instead of 15.
        assert_eq!(p.cnt(500.0, 1000.0, true, 31), 16.0);
        // Never below 1.
        assert_eq!(p.cnt(20.0, 0.0, false, 320), 1.0);
    }

    #[test]
    fn ack_ratio_settles_at_31_with_one_ack_per_packet() {
        // Linux's estimate starts at 2 packets per ACK (32) and truncates: with one ACK per
        // packet it moves once, to 31, and stays there.
        let mut c = after_loss_at(1000.0);
        assert_eq!(c.delayed_ack, 32);
        for _ in 0..200 {
            c.on_ack(&ack());
        }
        assert_eq!(c.delayed_ack, 31);
        // Two packets per ACK keeps it at 32; three climb to 48.
        let mut c = after_loss_at(1000.0);
        for _ in 0..200 {
            c.on_ack(&Ack { acked: 2, ..ack() });
        }
        assert_eq!(c.delayed_ack, 32);
        for _ in 0..200 {
            c.on_ack(&Ack { acked: 3, ..ack() });
        }
        assert_eq!(c.delayed_ack, 48);
        // So without delayed ACKs the window grows ≈ 2·32/31 times the nominal rate: far from
        // W_max, ⌊49·16/31⌋ = 25 ACKs per packet, 799/26 ≈ 31 packets in the first RTT.
        let mut a = after_loss_at(1000.0);
        let mut b = after_loss_at(1000.0);
        let fast = rtts(&mut a, 1)[0] - 799.0;
        let nominal = rtt_delack(&mut b) - 799.0;
        println!("BIC first RTT after a loss at 1000: +{fast} (one ACK per packet), +{nominal} (delayed ACKs)");
        assert_eq!(nominal, 16.0);
        assert!((30.0..=31.0).contains(&fast), "{fast}");
    }

    #[test]
    fn binary_search_halves_the_distance_by_b_each_rtt_then_probes() {
        // The nominal curve (delayed ACKs, delayed_ack = 32), from 799 after a loss at 1000.
        let mut c = after_loss_at(1000.0);
        let start = c.window();
        let w: Vec<f64> = (0..120).map(|_| rtt_delack(&mut c)).collect();
        let steps: Vec<f64> = std::iter::once(start).chain(w.iter().cloned()).collect::<Vec<_>>().windows(2).map(|x| x[1] - x[0]).collect();
        println!("BIC from {start} towards W_max 1000: windows {w:?}");
        // Linear phase at max_increment while the distance exceeds 4*16 packets.
        assert!((steps[0] - 16.0).abs() < 1.0, "{}", steps[0]);
        // Binary search: about 1/B of the distance is closed per RTT once it is below B·S_max
        // (a little less, since the step shrinks with the distance within the round).
        let i = w.iter().position(|&x| 1000.0 - x < 60.0).unwrap();
        for k in i..i + 3 {
            let (d0, d1) = (1000.0 - w[k], 1000.0 - w[k + 1]);
            println!("BIC: distance to W_max {d0} -> {d1} (ratio {:.3})", d1 / d0);
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
    fn cnt_is_recomputed_on_a_window_change_or_after_31_ms() {
        // At 996 (d ≤ 1 below W_max 1000) cnt is ⌊996·5·16/31⌋ = 2570 with one ACK per packet.
        let mut c = after_loss_at(1000.0);
        c.w.cwnd = 996.0;
        c.on_ack(&ack_at(1.0, 0.1));
        assert_eq!(c.cnt, 2570.0);
        // ACKs for two packets bring the ratio back to 32, but the window is unchanged: the
        // old cnt stays for 31 ms.
        c.delayed_ack = 32;
        c.on_ack(&Ack { acked: 2, ..ack_at(1.031, 0.1) });
        assert_eq!((c.delayed_ack, c.cnt), (32, 2570.0));
        c.on_ack(&Ack { acked: 2, ..ack_at(1.0325, 0.1) });
        assert_eq!(c.cnt, 2490.0);
    }

    #[test]
    fn timeout_resets_the_module_and_validation() {
        // ns-2's TCP-Linux asks the module for ssthresh on a timeout: ⌊800·819/1024⌋ = 639.
        let mut c = after_loss_at(1000.0);
        for _ in 0..10 {
            c.on_ack(&ack());
        }
        assert_eq!(c.delayed_ack, 31);
        c.on_timeout(&Timeout { in_flight: 40, ..timeout(800.0) });
        assert_eq!((c.window(), c.ssthresh(), c.w_max, c.delayed_ack), (1.0, 639.0, 0.0, 32));
        // In the loss state (until the 40 packets outstanding are acknowledged, the ACK that
        // completes them included) the ACK ratio does not move; afterwards it does.
        for _ in 0..8 {
            c.on_ack(&Ack { acked: 5, ..ack() });
        }
        assert_eq!(c.delayed_ack, 32);
        c.on_ack(&ack());
        assert_eq!(c.delayed_ack, 31);
        // Slow start while W ≤ ssthresh: one packet per ACK.
        assert_eq!(c.window(), 10.0);
        let v = |j: serde_json::Value| bic_info().validate(j.as_object().unwrap());
        assert_eq!(BicParams::from_params(&v(json!({})).unwrap()).unwrap(), BicParams::LINUX);
        let p = v(json!({"keep": 0.875, "fast_convergence": "off"})).unwrap();
        let bp = BicParams::from_params(&p).unwrap();
        assert!((bp.beta - 0.125).abs() < 1e-12 && !bp.fast_convergence);
        assert_eq!(v(json!({"b": 1})).unwrap_err().field, "b");
        assert_eq!(v(json!({"fast_convergence": "yes"})).unwrap_err().field, "fast_convergence");
    }
}
