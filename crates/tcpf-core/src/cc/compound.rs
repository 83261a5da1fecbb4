//! Compound TCP (Tan, Song, Zhang, Sridharan, INFOCOM 2006): the window is the sum of a
//! loss-based Reno window `cwnd` and a delay-based window `dwnd`, `win = cwnd + dwnd`.
//!
//! - Per ACK (congestion avoidance) `cwnd ← cwnd + 1/win`; slow start grows cwnd by one packet
//!   per ACK with dwnd = 0.
//! - Once per round (Vegas's rounds, see `vegas::Rounds`) with `diff = w·(RTT − BaseRTT)/RTT`
//!   (the packets this flow keeps queued; w the packets sent in the round, RTT its smallest
//!   sample): `dwnd ← dwnd + (α·win^k − 1)⁺` if diff < γ, else `dwnd ← (dwnd − ζ·diff)⁺`.
//!   The decrease applies at once at the round's end; the increase, like every per-RTT increase
//!   in this crate, is spread over the next round's ACKs (`(α·win^k − 1)⁺/win` each). Linux's
//!   and ns-2's module add it at once at the round's end (a burst of up to ~25 packets at
//!   100 Mb/s and 100 ms); the per-round totals are the same. `variant = "ns2-module"` follows
//!   the module: the increase at once, from the packets sent in the round, in slow start too,
//!   with its integer arithmetic and its rounds (see `ModuleRounds`).
//! - Loss event: `win ← win·(1 − β)`, `cwnd ← cwnd/2`, `dwnd ← (win·(1 − β) − cwnd/2)⁺`;
//!   ssthresh is the new cwnd. Timeout: dwnd = 0 and the shared rule for cwnd.
//! - Below `low_window` (0: never) the delay component is off (dwnd = 0), as in later ports
//!   (Andrew's Linux CTCP uses 38).
//!
//! Defaults α = 1/8, β = 1/2, k = 3/4, γ = 30 packets, ζ = 1 (the paper; also ns-2's
//! tcp_compound module, a Linux 2.6.22 port, which liu2008 ran).

use super::params::{AlgorithmInfo, ParamKind, ParamSpec, Params, ParamError};

const VARIANT: &[&str] = &["paper", "ns2-module"];
use super::vegas::{RoundEnd, Rounds};
use super::{Ack, Controller, LossEvent, Timeout, Window};

/// Compound TCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompoundParams {
    pub alpha: f64,
    pub beta: f64,
    pub k: f64,
    pub gamma: f64,
    pub zeta: f64,
    pub low_window: f64,
    /// ns-2 2.35's tcp_compound module: at each round's end (in slow start too) dwnd grows at
    /// once by ⌊⌊old_wnd^k⌋·α⌋ − 1 whole packets, old_wnd the packets sent in the round, diff in
    /// half packets with integer division; the first round after a recovery spans every packet
    /// sent since the last round before the loss; a loss leaves the whole reduced window in
    /// cwnd with dwnd = 0 (the paper: α·win^k − 1 spread over the round, and the cut split
    /// between the two).
    pub ns2_module: bool,
}

impl CompoundParams {
    pub const PAPER: CompoundParams = CompoundParams { alpha: 0.125, beta: 0.5, k: 0.75, gamma: 30.0, zeta: 1.0, low_window: 0.0, ns2_module: false };

    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(CompoundParams {
            alpha: p.get("alpha")?,
            beta: p.get("beta")?,
            k: p.get("k")?,
            gamma: p.get("gamma")?,
            zeta: p.get("zeta")?,
            low_window: p.get("low_window")?,
            ns2_module: p.text("variant")? == Some("ns2-module"),
        })
    }

    /// ns-2's module: dwnd's increase at the end of a round in which `old_wnd` packets were
    /// sent, `⌊qroot(old_wnd³)·α⌋ − 1` (not below 0); for k other than 3/4, `⌊old_wnd^k⌋`.
    pub fn module_increase(&self, old_wnd: u64) -> f64 {
        let powed = if self.k == 0.75 && old_wnd < (1 << 21) {
            qroot(old_wnd * old_wnd * old_wnd) as f64
        } else {
            libm::pow(old_wnd as f64, self.k).floor()
        };
        ((powed * self.alpha).floor() - 1.0).max(0.0)
    }

    /// dwnd's increase per round at total window `win` (when diff < γ).
    pub fn increase(&self, win: f64) -> f64 {
        if self.ns2_module {
            let powed = libm::pow(win.floor(), self.k).floor();
            ((powed * self.alpha).floor() - 1.0).max(0.0)
        } else {
            (self.alpha * libm::pow(win, self.k) - 1.0).max(0.0)
        }
    }
}

fn specs() -> Vec<ParamSpec> {
    let d = CompoundParams::PAPER;
    vec![
        ParamSpec { name: "alpha", default: Some(d.alpha), min: Some(0.0), min_open: true, unit: "", doc: "dwnd grows by alpha*win^k - 1 per RTT while diff < gamma", ..ParamSpec::NUMBER },
        ParamSpec::fraction("beta", d.beta, "fraction of the total window removed on a loss event"),
        ParamSpec { name: "k", default: Some(d.k), min: Some(0.0), max: Some(1.0), min_open: true, unit: "", doc: "exponent of the delay window's increase (0.75 ~ HS-TCP's 0.8)", ..ParamSpec::NUMBER },
        ParamSpec { name: "gamma", default: Some(d.gamma), min: Some(0.0), min_open: true, unit: "packets", doc: "queued packets (diff) above which dwnd shrinks", ..ParamSpec::NUMBER },
        ParamSpec { name: "zeta", default: Some(d.zeta), min: Some(0.0), min_open: true, unit: "", doc: "dwnd shrinks by zeta*diff per RTT once diff >= gamma", ..ParamSpec::NUMBER },
        ParamSpec { name: "low_window", default: Some(d.low_window), min: Some(0.0), unit: "packets", doc: "below this total window the delay component is off (0: always on)", ..ParamSpec::NUMBER },
        ParamSpec {
            name: "variant",
            kind: ParamKind::Choice(VARIANT),
            default_text: Some("paper"),
            doc: "paper: dwnd grows by alpha*win^k - 1 per RTT and a loss event keeps cwnd/2 in cwnd and the rest of win*(1 - beta) in dwnd; ns2-module: as ns-2 2.35's tcp_compound module computes it - at each round's end (slow start included) dwnd grows at once by floor(floor(w^k)*alpha) - 1 whole packets, w the packets sent in the round (the first round after a recovery counts every packet since the last round before the loss), diff in half packets with integer division, and after a loss cwnd holds the whole reduced window, dwnd = 0",
            ..ParamSpec::NUMBER
        },
    ]
}

pub fn compound_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "compound",
        family: "compound",
        summary: "Compound TCP: Reno window + delay window dwnd (+(alpha*win^k - 1) per RTT while fewer than gamma packets queue, -zeta*diff beyond)",
        source: "Tan, Song, Zhang, Sridharan, INFOCOM 2006 (alpha 1/8, beta 1/2, k 3/4, gamma 30, zeta 1; the same constants as ns-2's tcp_compound)",
        params: specs(),
        aliases: vec![],
        taxonomy: None,
        notes: "ns-2: Agent/TCP/Linux with select_ca compound (no module parameters; constants compiled in). ns-2's module takes its RTT samples through the rtt_sample hook, which TCP/Linux feeds once per ACK only with timestamps_ true (the exporter sets it; without it dwnd stays 0). It computes in whole packets: dwnd grows at once at a round's end by floor(floor(w^(3/4))/8) - 1, w the packets sent in the round (the paper's alpha*win^k - 1 rounded down to a whole packet or more); its round's left edge is not reset by the restart after a recovery, so the first round after one counts the packets of about three windows. On a loss it has no hook of its own: ssthresh is half the total window (Reno), and at the first ACK after the recovery its stale cwnd or dwnd exceeds the reduced window, so cwnd takes the whole window and dwnd restarts from 0. It also updates dwnd during slow start. Delay-driven component: tsao2007's taxonomy does not apply.",
        named_numbers: false,
        check: None,
    }
}

/// The module's quartic root (Newton's iteration on integers, stopping once two iterates
/// differ by at most one): `qroot(w³)` is its `w^(3/4)`, within a packet of the true value.
fn qroot(a: u64) -> u64 {
    if a == 0 {
        return 0;
    }
    let fls = 64 - a.leading_zeros() as u64;
    let mut x: u64 = 1 << (fls >> 2);
    loop {
        let x1 = x;
        let mut x3 = x * x * x;
        let mut dividend = a;
        if x3 > 0xffff_ffff {
            let shift = 64 - (x3 >> 32).leading_zeros() as u64;
            x3 >>= shift;
            dividend >>= shift;
        }
        x = ((3 * x + (dividend / x3.max(1)) as u32 as u64) / 4) as u32 as u64;
        if x1.abs_diff(x) <= 1 {
            return x;
        }
    }
}

/// The module's rounds (its `beg_snd_una`/`beg_snd_nxt`): as `vegas::Rounds`, except that a
/// restart (the module's `vegas_enable` when recovery ends, or after a timeout) moves only
/// the round's right edge; its left edge stays where the last completed round left it, so the
/// first round after a recovery counts every packet sent since the round before the loss.
#[derive(Clone, Debug)]
pub struct ModuleRounds {
    una: u64,
    beg_una: u64,
    beg_nxt: u64,
    enable: bool,
    /// Smallest RTT sample in the round and the number of samples, microseconds + 1 (the
    /// module never lets an RTT be 0).
    min_us: u64,
    samples: u32,
    base_us: u64,
}

impl ModuleRounds {
    fn new() -> Self {
        ModuleRounds { una: 0, beg_una: 0, beg_nxt: 0, enable: true, min_us: u64::MAX, samples: 0, base_us: u64::MAX }
    }

    fn on_rtt(&mut self, rtt: f64) {
        let us = (rtt * 1e6).round().max(0.0) as u64 + 1;
        self.base_us = self.base_us.min(us);
        self.min_us = self.min_us.min(us);
        self.samples += 1;
    }

    fn restart(&mut self) {
        self.enable = true;
    }

    /// An ACK of new data: (packets sent in the round, its smallest RTT, BaseRTT, samples)
    /// of the round that ended with it, if one did.
    fn on_ack(&mut self, ack: &Ack) -> Option<(u64, u64, u64, u32)> {
        self.una += ack.acked as u64;
        let nxt = self.una + ack.in_flight as u64;
        if self.enable {
            self.enable = false;
            self.beg_nxt = nxt;
            self.min_us = u64::MAX;
            self.samples = 0;
            return None;
        }
        if self.una <= self.beg_nxt {
            return None;
        }
        let end = (self.beg_nxt - self.beg_una, self.min_us, self.base_us, self.samples);
        self.beg_una = self.beg_nxt;
        self.beg_nxt = nxt;
        self.min_us = u64::MAX;
        self.samples = 0;
        Some(end)
    }
}

/// Compound TCP.
#[derive(Clone, Debug)]
pub struct Compound {
    pub p: CompoundParams,
    pub dwnd: f64,
    /// The last round saw fewer than γ packets queued: dwnd grows during this one.
    pub growing: bool,
    pub rounds: Rounds,
    /// The ns-2 module's rounds (variant ns2-module).
    pub mrounds: ModuleRounds,
    /// The loss-based part (cwnd, ssthresh, cap).
    w: Window,
}

impl Compound {
    pub fn new(p: CompoundParams, initial_window: f64, cap: f64) -> Self {
        Compound { p, dwnd: 0.0, growing: false, rounds: Rounds::new(), mrounds: ModuleRounds::new(), w: Window::new(initial_window, cap) }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        Ok(Self::new(CompoundParams::from_params(p)?, initial_window, cap))
    }

    /// The loss-based window.
    pub fn cwnd(&self) -> f64 {
        self.w.cwnd
    }

    fn total(&self) -> f64 {
        self.w.cwnd + self.dwnd
    }

    fn end_of_round(&mut self, r: RoundEnd) {
        if self.w.in_slow_start() {
            return;
        }
        let win = self.total();
        if win < self.p.low_window {
            self.dwnd = 0.0;
            self.growing = false;
            return;
        }
        if r.samples <= 2 || r.rtt <= 0.0 || r.sent <= 0.0 {
            self.growing = false;
            return;
        }
        let diff = r.diff();
        if diff < self.p.gamma {
            self.growing = true;
        } else {
            self.growing = false;
            self.dwnd = (self.dwnd - self.p.zeta * diff).max(0.0);
        }
        self.dwnd = self.dwnd.min((self.w.cap - self.w.cwnd).max(0.0));
    }

    /// ns-2's module at a round's end (in slow start too), in its integer arithmetic: with
    /// `old_wnd` the packets sent in the round, diff in half packets is
    /// `2·old_wnd − ⌊2·old_wnd·BaseRTT/RTT⌋` (RTTs in µs); below 2γ dwnd grows at once by
    /// `⌊old_wnd^(3/4)·α⌋ − 1`, otherwise it loses ζ·diff (whole packets, not below 0).
    fn module_end_of_round(&mut self, sent: u64, rtt_us: u64, base_us: u64, samples: u32) {
        if samples <= 2 || rtt_us == 0 || rtt_us == u64::MAX {
            return;
        }
        let win = self.total();
        if win < self.p.low_window {
            self.dwnd = 0.0;
            return;
        }
        let target = ((sent * base_us) << 1) / rtt_us;
        let diff = (sent << 1).saturating_sub(target) as f64;
        if diff < 2.0 * self.p.gamma {
            self.dwnd += self.p.module_increase(sent);
        } else {
            let d2 = 2.0 * self.dwnd;
            let cut = diff * self.p.zeta;
            self.dwnd = if d2 < cut { 0.0 } else { ((d2 - cut) / 2.0).floor() };
        }
        self.dwnd = self.dwnd.min((self.w.cap - self.w.cwnd).max(0.0));
    }
}

impl Controller for Compound {
    reno_min_cwnd!();

    fn on_rtt_sample(&mut self, _now: f64, rtt: f64) {
        if self.p.ns2_module {
            self.mrounds.on_rtt(rtt);
        } else {
            self.rounds.on_rtt(rtt);
        }
    }

    fn on_ack(&mut self, ack: &Ack) {
        if self.p.ns2_module {
            // The module: cwnd as Reno's on the total window; dwnd changes only at a round's
            // end, at once (the sender sends the increase as a burst), in slow start too.
            let end = self.mrounds.on_ack(ack);
            if self.w.in_slow_start() {
                self.w.slow_start();
            } else {
                let win = self.total();
                self.w.grow(1.0 / win);
            }
            if let Some((sent, rtt_us, base_us, samples)) = end {
                self.module_end_of_round(sent, rtt_us, base_us, samples);
            }
            return;
        }
        let end = self.rounds.on_ack(ack);
        if self.w.in_slow_start() {
            self.w.slow_start();
        } else {
            let win = self.total();
            self.w.grow(1.0 / win);
            if self.growing && win >= self.p.low_window {
                self.dwnd = (self.dwnd + self.p.increase(win) / win).min((self.w.cap - self.w.cwnd).max(0.0));
            }
        }
        if let Some(r) = end {
            self.end_of_round(r);
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let win = ev.window * (1.0 - self.p.beta);
        if self.p.ns2_module {
            // ns-2's module: Reno's ssthresh on the total window; after recovery cwnd takes
            // the whole reduced window and dwnd restarts from 0.
            self.w.reduce_to(win.floor());
            self.dwnd = 0.0;
        } else {
            self.w.reduce_to(self.w.cwnd / 2.0);
            self.dwnd = (win - self.w.cwnd).max(0.0);
        }
        self.growing = false;
        self.rounds.restart();
        self.mrounds.restart();
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.timeout(to.window);
        self.dwnd = 0.0;
        self.growing = false;
        self.rounds.restart();
        self.mrounds.restart();
    }

    fn window(&self) -> f64 {
        self.total().min(self.w.cap)
    }

    fn ssthresh(&self) -> f64 {
        self.w.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use crate::cc::vegas::tests::round;
    use crate::cc::Ack;
    use serde_json::json;

    fn in_ca(cwnd: f64, dwnd: f64) -> Compound {
        let mut c = Compound::new(CompoundParams::PAPER, 2.0, f64::INFINITY);
        c.w.ssthresh = 2.0;
        c.w.cwnd = cwnd;
        c.dwnd = dwnd;
        c
    }

    #[test]
    fn dwnd_grows_by_alpha_win_to_the_k_minus_one_and_shrinks_by_diff() {
        let p = CompoundParams::PAPER;
        // No queueing: over the next round dwnd grows by (1/8·win^0.75 − 1)⁺, spread over its
        // ACKs (the per-ACK convention); the decision itself changes nothing yet.
        let mut c = in_ca(100.0, 0.0);
        c.end_of_round(RoundEnd { sent: 100.0, rtt: 0.1, samples: 100, base_rtt: 0.1 });
        assert!(c.growing && c.dwnd == 0.0);
        let inc = 0.125 * libm::pow(100.0, 0.75) - 1.0;
        for _ in 0..100 {
            c.on_ack(&Ack { now: 0.0, acked: 1, rtt: Some(0.1), min_rtt: 0.1, in_flight: 99 });
        }
        println!("CTCP: dwnd after one RTT from win 100: {:.4} (alpha*win^k - 1 = {inc:.4})", c.dwnd);
        assert!((c.dwnd - inc).abs() < 0.03 * inc, "{} vs {inc}", c.dwnd);
        assert!((c.cwnd() - 100.0 - 100.0 / 101.5).abs() < 0.02, "cwnd {}", c.cwnd());
        println!("CTCP: dwnd increase per RTT at win 100: {inc:.4}; at 1000: {:.4}; at 10: {:.4}", p.increase(1000.0), p.increase(10.0));
        assert_eq!(p.increase(10.0), 0.0, "small windows: no delay-window growth");
        // diff below γ = 30 still grows; at or above it, dwnd loses ζ·diff at once.
        let mut c = in_ca(100.0, 50.0);
        c.end_of_round(RoundEnd { sent: 150.0, rtt: 0.12, samples: 150, base_rtt: 0.1 }); // diff 25
        assert!(c.growing && c.dwnd == 50.0);
        let mut c = in_ca(100.0, 50.0);
        c.growing = true;
        c.end_of_round(RoundEnd { sent: 150.0, rtt: 0.15, samples: 150, base_rtt: 0.1 }); // diff 50
        assert!(c.dwnd.abs() < 1e-9 && !c.growing);
        let mut c = in_ca(100.0, 50.0);
        c.end_of_round(RoundEnd { sent: 150.0, rtt: 0.13, samples: 150, base_rtt: 0.1 }); // diff 34.6
        assert!((c.dwnd - (50.0 - 150.0 * 0.03 / 0.13)).abs() < 1e-9, "{}", c.dwnd);
        // The loss part: +1/win per ACK.
        let mut c = in_ca(100.0, 100.0);
        c.on_ack(&ack());
        assert!((c.cwnd() - (100.0 + 1.0 / 200.0)).abs() < 1e-12);
    }

    #[test]
    fn loss_keeps_win_times_one_minus_beta_and_halves_cwnd() {
        let mut c = in_ca(100.0, 100.0);
        c.on_loss_event(&loss(200.0));
        assert_eq!((c.window(), c.cwnd(), c.dwnd, c.ssthresh()), (100.0, 50.0, 50.0, 50.0));
        let mut c = in_ca(100.0, 0.0);
        c.on_loss_event(&loss(100.0));
        assert_eq!((c.window(), c.dwnd), (50.0, 0.0));
        c.dwnd = 30.0;
        c.on_timeout(&timeout(80.0));
        assert_eq!((c.window(), c.ssthresh(), c.dwnd), (1.0, 40.0, 0.0));
    }

    #[test]
    fn delay_window_fills_the_pipe_then_holds_gamma_packets_queued() {
        // One flow on a 10000 packets/s bottleneck with BaseRTT 0.1 s (BDP 1000 packets):
        // RTT = max(0.1, W/10000).
        let mut c = in_ca(500.0, 0.0);
        let mut now = 0.0;
        let mut log = vec![];
        for _ in 0..200 {
            let rtt = (c.window() / 10000.0).max(0.1);
            round(&mut c, rtt, &mut now);
            log.push((c.window(), c.cwnd(), c.dwnd));
        }
        let show: Vec<_> = log.iter().step_by(10).map(|(w, cw, d)| (w.round(), cw.round(), d.round())).collect();
        println!("CTCP (win, cwnd, dwnd) every 10 RTTs: {show:?}");
        // The delay window takes the total past the BDP within a few tens of RTTs (Reno: 500) ...
        let reach = log.iter().position(|x| x.0 >= 1000.0).unwrap();
        println!("CTCP: BDP reached after {reach} RTTs");
        assert!(reach < 40, "reached the BDP after {reach} RTTs");
        // ... then keeps the flow's queue around γ = 30 packets while cwnd grows by one packet
        // per RTT and dwnd gives way.
        let queued: Vec<f64> = log[reach + 10..].iter().map(|x| x.0 - 1000.0).collect();
        let mean = queued.iter().sum::<f64>() / queued.len() as f64;
        let (lo, hi) = queued.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &q| (a.min(q), b.max(q)));
        println!("CTCP: queued packets mean {mean:.1}, range [{lo:.1}, {hi:.1}]");
        assert!((5.0..=50.0).contains(&mean) && lo > -30.0 && hi < 90.0);
        let (a, z) = (log[reach + 10], log[199]);
        let rounds = (199 - reach - 10) as f64;
        assert!(((z.1 - a.1) / rounds - 1.0).abs() < 0.05, "cwnd {} -> {}", a.1, z.1);
        assert!(z.2 < a.2 - 0.8 * rounds, "dwnd {} -> {}", a.2, z.2);
        // Slow start: dwnd stays 0.
        let mut s = Compound::new(CompoundParams::PAPER, 2.0, f64::INFINITY);
        let mut now = 0.0;
        for _ in 0..5 {
            round(&mut s, 0.1, &mut now);
        }
        assert_eq!(s.dwnd, 0.0);
        assert!(s.window() >= 32.0);
    }

    #[test]
    fn validation() {
        let v = |j: serde_json::Value| compound_info().validate(j.as_object().unwrap());
        assert_eq!(CompoundParams::from_params(&v(json!({})).unwrap()).unwrap(), CompoundParams::PAPER);
        assert_eq!(v(json!({"k": 1.5})).unwrap_err().field, "k");
        assert_eq!(v(json!({"gamma": 0})).unwrap_err().field, "gamma");
    }

    #[test]
    fn ns2_module_variant_grows_in_whole_packets_and_empties_dwnd_on_a_loss() {
        let paper = CompoundParams::PAPER;
        let module = CompoundParams { ns2_module: true, ..CompoundParams::PAPER };
        // win = 100: 100^0.75 = 31.62; paper 31.62/8 - 1 = 2.95; module floor(31/8) - 1 = 2.
        assert!((paper.increase(100.0) - 2.9528).abs() < 1e-3);
        assert_eq!(module.increase(100.0), 2.0);
        assert_eq!(module.increase(346.7), 9.0); // 346^0.75 = 80.2 -> 80/8 - 1 (paper: 9.03)
        assert_eq!(module.increase(20.0), 0.0); // 20^0.75 = 9.46 -> 9/8 = 1 -> 0
        let v = |j: serde_json::Value| compound_info().validate(j.as_object().unwrap());
        assert_eq!(CompoundParams::from_params(&v(json!({"variant": "ns2-module"})).unwrap()).unwrap(), module);
        assert_eq!(CompoundParams::from_params(&v(json!({})).unwrap()).unwrap(), paper);
        assert_eq!(v(json!({"variant": "linux"})).unwrap_err().field, "variant");
        // The module's loss reaction: the reduced total window all in cwnd, dwnd = 0.
        let mut c = Compound::new(module, 2.0, f64::INFINITY);
        c.w.ssthresh = 2.0;
        c.w.cwnd = 60.0;
        c.dwnd = 40.0;
        c.on_loss_event(&loss(100.0));
        assert_eq!((c.cwnd(), c.dwnd, c.window(), c.ssthresh()), (50.0, 0.0, 50.0, 50.0));
        let mut c = Compound::new(paper, 2.0, f64::INFINITY);
        c.w.ssthresh = 2.0;
        c.w.cwnd = 60.0;
        c.dwnd = 40.0;
        c.on_loss_event(&loss(100.0));
        assert_eq!((c.cwnd(), c.dwnd, c.window()), (30.0, 20.0, 50.0));
    }

    #[test]
    fn ns2_module_rounds_grow_dwnd_at_once_from_the_packets_sent_and_keep_the_stale_left_edge() {
        let module = CompoundParams { ns2_module: true, ..CompoundParams::PAPER };
        // qroot(w³) is w^(3/4) within one: 100 -> 31.6, 700 -> 136.1, 346 -> 80.2.
        for (w, root) in [(100u64, 31.62), (700, 136.09), (346, 80.18), (8, 4.76)] {
            let q = qroot(w * w * w) as f64;
            assert!((q - root).abs() <= 1.0, "qroot({w}^3) = {q}, want ~{root}");
        }
        assert_eq!(module.module_increase(100), 2.0);
        assert_eq!(module.module_increase(700), 16.0);
        assert_eq!(module.module_increase(20), 0.0);
        let ack = |acked, in_flight| Ack { now: 0.0, acked, rtt: Some(0.1), min_rtt: 0.1, in_flight };
        // A flow in congestion avoidance with 100 packets in flight, no queueing (RTT 100 ms):
        // nothing changes during the round; at its end dwnd grows at once by
        // floor(qroot(100³)/8) - 1 = 2.
        let mut c = Compound::new(module, 2.0, f64::INFINITY);
        c.w.ssthresh = 2.0;
        c.w.cwnd = 100.0;
        c.on_ack(&ack(1, 100)); // the first ACK starts a round: [1, 101)
        for _ in 0..100 {
            c.on_rtt_sample(0.0, 0.1);
            c.on_ack(&ack(1, 100));
            assert_eq!(c.dwnd, 0.0);
        }
        c.on_rtt_sample(0.0, 0.1);
        c.on_ack(&ack(1, 100));
        println!("module: dwnd {} after a round of 100 packets", c.dwnd);
        assert_eq!(c.dwnd, 2.0);
        // The module's diff is in half packets with integer division: 100 packets sent with
        // RTT 130 ms over BaseRTT 100 ms -> 2·100 − ⌊200·100001/130001⌋ = 47 < 60: growth; at
        // RTT 150 ms -> 67 ≥ 60: dwnd loses ⌊(2·dwnd − 67)/2⌋.
        c.module_end_of_round(100, 130_001, 100_001, 100);
        assert_eq!(c.dwnd, 4.0);
        c.dwnd = 50.0;
        c.module_end_of_round(100, 150_001, 100_001, 100);
        assert_eq!(c.dwnd, 16.0); // (100 - 67) / 2 = 16.5 -> 16
        c.module_end_of_round(100, 150_001, 100_001, 2); // 2 samples: no decision
        assert_eq!(c.dwnd, 16.0);
        // In slow start too (the paper variant leaves dwnd at 0 there).
        let mut s = Compound::new(module, 2.0, f64::INFINITY);
        s.module_end_of_round(700, 100_001, 100_001, 700);
        assert!(s.w.in_slow_start());
        assert_eq!(s.dwnd, 16.0);
        // After a loss the next round's right edge is where the flow stands when the ACKs
        // resume, but its left edge stays at the last round's end: the first round after a
        // recovery counts the packets sent since then.
        let mut r = ModuleRounds::new();
        r.on_ack(&ack(1, 100)); // una 1: round [1, 101)
        for _ in 0..100 {
            r.on_rtt(0.1);
            assert_eq!(r.on_ack(&ack(1, 100)), None);
        }
        r.on_rtt(0.1);
        // The module's state starts zeroed: the first round counts from sequence 0.
        assert_eq!(r.on_ack(&ack(1, 100)).map(|e| e.0), Some(101)); // una 102: next [101, 202)
        r.restart(); // loss; recovery ends with una 300, 150 in flight
        for _ in 0..3 {
            r.on_rtt(0.1);
        }
        assert_eq!(r.on_ack(&ack(198, 150)), None); // enable: right edge 450, samples reset
        assert_eq!(r.samples, 0);
        for _ in 0..3 {
            r.on_rtt(0.1);
        }
        assert_eq!(r.on_ack(&ack(151, 150)), Some((450 - 101, 100_001, 100_001, 3)));
    }
}
