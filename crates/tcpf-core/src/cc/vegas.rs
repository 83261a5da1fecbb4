//! TCP Vegas (Brakmo & Peterson, JSAC 1995), as Linux's tcp_vegas implements it, and the
//! per-RTT round tracking that Vegas and Compound TCP share.
//!
//! Once per round (the ACKs of the packets outstanding when it began, as Linux's
//! `beg_snd_nxt`): with `w` the packets sent in the previous round, `RTT` the smallest sample in
//! the round and `BaseRTT` the smallest ever, `diff = w·(RTT − BaseRTT)/RTT` — the packets this
//! flow keeps queued, i.e. (Expected − Actual)·BaseRTT. With `round_rtt = "mean"` the round's
//! RTT is the mean of its samples instead, as ns-2's own Agent/TCP/Vegas takes it (the sum of
//! the round's fine-grained samples over their count, `tcp/tcp-vegas.cc`) and as liu2008's
//! eq. 33 reasons about a noisy RTT (its time average enters diff): noise added to every sample
//! then raises diff by its mean, where the round's minimum filters it out.
//!
//! - Congestion avoidance: `W ← W + 1` if diff < α, `W ← W − 1` if diff > β, else unchanged.
//! - Slow start: the window grows by one packet per ACK (Linux; the 1995 paper doubles only
//!   every other RTT); at a round's end, if diff > γ, slow start ends: the window is cut to the
//!   rate actually achieved, `W ← min(W, w·BaseRTT/RTT + 1)`, and ssthresh = min(ssthresh, W − 1).
//! - A decrease also sets ssthresh = min(ssthresh, W − 1), as later Linux does
//!   (`tcp_vegas_ssthresh`): without it (Linux 2.6.22, so ns-2's module) a window that reaches
//!   the ssthresh left by a loss re-enters slow start on the next ACK and cannot shrink below
//!   it. `lower_ssthresh = "off"` selects the 2.6.22 behaviour (slow start while W ≤ ssthresh,
//!   the end of slow start sets ssthresh = 2), to compare with ns-2 2.35.
//! - Rounds with fewer than 3 RTT samples make no Vegas decision (Linux: they may be delayed
//!   ACKs); the window then grows as Reno's for that ACK.
//! - Loss event: W/2 (Reno); timeout: the shared rule. Either restarts the round tracking, so
//!   the first round after recovery is not judged on stale data (Linux's vegas_enable).
//!
//! Defaults are Linux's (α = 2, β = 4, γ = 1 packets; ns-2's own Agent/TCP/Vegas uses 1, 3, 1;
//! liu2008 §6 sets α = β = γ).

use crate::error::show_num;
use super::params::{AlgorithmInfo, ParamError, ParamKind, ParamSpec, Params, ON_OFF};
use super::{Ack, Controller, LossEvent, Timeout, Window, MIN_SSTHRESH};

/// Per-RTT rounds in Linux's manner: a round ends with the first ACK beyond the packets that
/// were outstanding when it began. Sequence positions are reconstructed from the ACKs: the
/// cumulative count of acknowledged packets (`una`) and `una + in_flight` (`nxt`).
#[derive(Clone, Debug, Default)]
pub struct Rounds {
    una: u64,
    beg_una: u64,
    beg_nxt: u64,
    started: bool,
    /// Smallest RTT sample, sum of the samples and their number in the current round.
    pub min_rtt: f64,
    pub sum_rtt: f64,
    pub samples: u32,
    /// A round's RTT is the mean of its samples (ns-2's Agent/TCP/Vegas), not the smallest.
    pub mean: bool,
    /// Smallest RTT sample ever (BaseRTT).
    pub base_rtt: f64,
}

/// What a round that just ended saw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundEnd {
    /// Packets sent during the round (Linux's old_wnd).
    pub sent: f64,
    /// Its RTT: the smallest sample in it (or their mean, `Rounds::mean`).
    pub rtt: f64,
    pub samples: u32,
    pub base_rtt: f64,
}

impl RoundEnd {
    /// Vegas's diff: packets queued by this flow, `sent·(RTT − BaseRTT)/RTT`.
    pub fn diff(&self) -> f64 {
        self.sent * (self.rtt - self.base_rtt) / self.rtt
    }

    /// The window that would have sent at the measured rate: `sent·BaseRTT/RTT`.
    pub fn target(&self) -> f64 {
        self.sent * self.base_rtt / self.rtt
    }
}

impl Rounds {
    pub fn new() -> Self {
        Rounds { min_rtt: f64::INFINITY, base_rtt: f64::INFINITY, ..Default::default() }
    }

    /// Rounds whose RTT is the mean of their samples (`mean`) or the smallest.
    pub fn with_mean(mean: bool) -> Self {
        Rounds { mean, ..Self::new() }
    }

    pub fn on_rtt(&mut self, rtt: f64) {
        self.min_rtt = self.min_rtt.min(rtt);
        self.sum_rtt += rtt;
        self.base_rtt = self.base_rtt.min(rtt);
        self.samples += 1;
    }

    /// Forget the current round's samples.
    fn clear_round(&mut self) {
        self.min_rtt = f64::INFINITY;
        self.sum_rtt = 0.0;
        self.samples = 0;
    }

    /// Start afresh at the next ACK (after recovery or a timeout).
    pub fn restart(&mut self) {
        self.started = false;
    }

    /// An ACK of new data: returns the round that ended with it, if one did.
    pub fn on_ack(&mut self, ack: &Ack) -> Option<RoundEnd> {
        self.una += ack.acked as u64;
        let nxt = self.una + ack.in_flight as u64;
        if !self.started {
            self.started = true;
            self.beg_una = self.una;
            self.beg_nxt = nxt;
            self.clear_round();
            return None;
        }
        if self.una <= self.beg_nxt {
            return None;
        }
        let rtt = if self.mean && self.samples > 0 { self.sum_rtt / self.samples as f64 } else { self.min_rtt };
        let end = RoundEnd { sent: (self.beg_nxt - self.beg_una) as f64, rtt, samples: self.samples, base_rtt: self.base_rtt };
        self.beg_una = self.beg_nxt;
        self.beg_nxt = nxt;
        self.clear_round();
        Some(end)
    }
}

/// Vegas's thresholds, packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasParams {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    /// A decrease lowers ssthresh below the window (later Linux's `tcp_vegas_ssthresh`); off:
    /// Linux 2.6.22 (ns-2 2.35's module), where the window cannot fall below the threshold
    /// left by the last loss.
    pub lower_ssthresh: bool,
    /// A round's RTT is the mean of its samples (ns-2's Agent/TCP/Vegas), not the smallest
    /// (Linux).
    pub mean_rtt: bool,
}

/// `round_rtt`'s choices: the round's smallest sample (Linux) or their mean (ns-2).
const ROUND_RTT: &[&str] = &["min", "mean"];

impl VegasParams {
    pub const LINUX: VegasParams = VegasParams { alpha: 2.0, beta: 4.0, gamma: 1.0, lower_ssthresh: true, mean_rtt: false };

    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(VegasParams {
            alpha: p.get("alpha")?,
            beta: p.get("beta")?,
            gamma: p.get("gamma")?,
            lower_ssthresh: p.text("lower_ssthresh")? != Some("off"),
            mean_rtt: p.text("round_rtt")? == Some("mean"),
        })
    }
}

fn specs() -> Vec<ParamSpec> {
    let d = VegasParams::LINUX;
    let n = |name, default, doc| ParamSpec { name, default: Some(default), min: Some(0.0), unit: "packets", doc, ..ParamSpec::NUMBER };
    vec![
        n("alpha", d.alpha, "below this many queued packets (diff) the window grows by 1 per RTT"),
        n("beta", d.beta, "above this many queued packets the window shrinks by 1 per RTT"),
        n("gamma", d.gamma, "slow start ends when diff exceeds gamma"),
        ParamSpec {
            name: "lower_ssthresh",
            kind: ParamKind::Choice(ON_OFF),
            default_text: Some("on"),
            doc: "on: a decrease (and the end of slow start) sets ssthresh = min(ssthresh, W - 1), as Linux since 2.6.25 (tcp_vegas_ssthresh); off: Linux 2.6.22, the module ns-2 2.35 runs - the end of slow start sets ssthresh = 2, a decrease leaves it, so the window bounces off the threshold left by the last loss (slow start while W <= ssthresh)",
            ..ParamSpec::NUMBER
        },
        ParamSpec {
            name: "round_rtt",
            kind: ParamKind::Choice(ROUND_RTT),
            default_text: Some("min"),
            doc: "the RTT a round's diff is computed with: min, the smallest sample of the round (Linux's tcp_vegas); mean, the mean of the round's samples (ns-2's native Agent/TCP/Vegas, tcp-vegas.cc, which liu2008 §6 ran: 'TCP-Vegas [is] in the standard ns-2 simulation package'), so noise on the samples raises diff by its mean (liu2008 eq. 33)",
            ..ParamSpec::NUMBER
        },
    ]
}

fn check(p: &mut Params) -> Result<(), ParamError> {
    if p.get("alpha")? > p.get("beta")? {
        return Err(ParamError::new("alpha", format!("must be <= beta ({}); got {}", show_num(p.get("beta")?), show_num(p.get("alpha")?))));
    }
    Ok(())
}

pub fn vegas_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "vegas",
        family: "vegas",
        summary: "TCP Vegas: once per RTT +1 if the flow queues fewer than alpha packets, -1 above beta; slow start ends above gamma",
        source: "Brakmo & Peterson, IEEE JSAC 13(8) 1995; per-ACK slow start, round tracking and defaults (alpha 2, beta 4, gamma 1) of Linux net/ipv4/tcp_vegas.c",
        params: specs(),
        aliases: vec![],
        taxonomy: None,
        notes: "liu2008 §6 sets alpha = beta = gamma (Fig. 15: 2, 5, 10) and ran ns-2's native Vegas, whose round RTT is the mean of the samples (round_rtt = \"mean\"). ns-2: Agent/TCP/Linux with select_ca vegas and set_ca_param vegas alpha|beta|gamma in half packets (2*value, integers), round_rtt = \"min\" only; ns-2's native Agent/TCP/Vegas (v_alpha_, v_beta_, v_gamma_; defaults 1, 3, 1) is the 1995 algorithm with its own slow start, window arithmetic and loss recovery, of which round_rtt = \"mean\" takes only the round's RTT. Delay-based: tsao2007's taxonomy does not apply.",
        named_numbers: false,
        check: Some(check),
    }
}

/// TCP Vegas.
#[derive(Clone, Debug)]
pub struct Vegas {
    pub p: VegasParams,
    pub rounds: Rounds,
    /// Window when the current round began (Linux's beg_snd_cwnd).
    round_cwnd: f64,
    w: Window,
}

impl Vegas {
    pub fn new(p: VegasParams, initial_window: f64, cap: f64) -> Self {
        Vegas { p, rounds: Rounds::with_mean(p.mean_rtt), round_cwnd: initial_window, w: Window::new(initial_window, cap) }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        Ok(Self::new(VegasParams::from_params(p)?, initial_window, cap))
    }

    /// Slow start: cwnd < ssthresh, or cwnd <= ssthresh in Linux 2.6.22's module.
    fn in_slow_start(&self) -> bool {
        if self.p.lower_ssthresh {
            self.w.in_slow_start()
        } else {
            self.w.cwnd <= self.w.ssthresh
        }
    }

    fn end_of_round(&mut self, r: RoundEnd) {
        let old_cwnd = self.round_cwnd;
        self.round_cwnd = self.w.cwnd;
        if r.samples <= 2 || r.rtt <= 0.0 || r.sent <= 0.0 {
            // Too few samples: Reno for this ACK.
            if self.in_slow_start() {
                self.w.slow_start();
            } else {
                let inc = 1.0 / self.w.cwnd;
                self.w.grow(inc);
            }
            return;
        }
        let diff = r.diff();
        if self.in_slow_start() {
            if diff > self.p.gamma {
                // Too fast: leave slow start at the rate actually achieved.
                self.w.cwnd = self.w.cwnd.min(r.target() + 1.0);
                if self.p.lower_ssthresh {
                    self.w.ssthresh = self.w.ssthresh.min(self.w.cwnd - 1.0).max(MIN_SSTHRESH);
                } else {
                    // 2.6.22: ssthresh = 2, and the slow-start step is still taken.
                    self.w.ssthresh = MIN_SSTHRESH;
                    self.w.slow_start();
                }
            } else {
                self.w.slow_start();
            }
        } else {
            let next = if diff > self.p.beta {
                old_cwnd - 1.0
            } else if diff < self.p.alpha {
                old_cwnd + 1.0
            } else {
                old_cwnd
            };
            if next > self.w.cwnd {
                self.w.grow(1.0);
            } else if next < self.w.cwnd {
                self.w.cwnd -= 1.0;
                // Keep ssthresh below the window so that Vegas stays in congestion avoidance
                // (later Linux; 2.6.22 let the window bounce off an ssthresh left by a loss).
                if self.p.lower_ssthresh {
                    self.w.ssthresh = self.w.ssthresh.min(self.w.cwnd - 1.0).max(MIN_SSTHRESH);
                }
            }
        }
        self.w.cwnd = self.w.cwnd.clamp(MIN_SSTHRESH, self.w.cap.max(MIN_SSTHRESH));
        self.round_cwnd = self.w.cwnd;
    }
}

impl Controller for Vegas {
    reno_min_cwnd!();

    fn on_rtt_sample(&mut self, _now: f64, rtt: f64) {
        self.rounds.on_rtt(rtt);
    }

    fn on_ack(&mut self, ack: &Ack) {
        match self.rounds.on_ack(ack) {
            Some(r) => self.end_of_round(r),
            None => {
                if self.in_slow_start() {
                    self.w.slow_start();
                }
            }
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        self.w.reduce_to(ev.window / 2.0);
        self.rounds.restart();
        self.round_cwnd = self.w.cwnd;
    }

    fn on_timeout(&mut self, to: &Timeout) {
        self.w.timeout(to.window);
        self.rounds.restart();
        self.round_cwnd = self.w.cwnd;
    }

    window_in_field!();
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use serde_json::json;

    /// One round of a steady sender: as many ACKs as the window at its start (one per packet),
    /// each after an RTT sample of `rtt`, each reporting the rest of the window in flight.
    pub fn round(c: &mut dyn Controller, rtt: f64, now: &mut f64) {
        let n = c.window().floor().max(1.0) as usize;
        for _ in 0..n {
            *now += rtt / n as f64;
            c.on_rtt_sample(*now, rtt);
            let in_flight = (c.window().floor() as u32).saturating_sub(1);
            c.on_ack(&Ack { now: *now, acked: 1, rtt: Some(rtt), min_rtt: rtt, in_flight });
        }
    }

    fn in_ca(p: VegasParams, w: f64) -> Vegas {
        let mut c = Vegas::new(p, 2.0, f64::INFINITY);
        c.w.ssthresh = MIN_SSTHRESH;
        c.w.cwnd = w;
        c.round_cwnd = w;
        c
    }

    #[test]
    fn rounds_end_after_a_window_of_acks() {
        let mut r = Rounds::new();
        let a = |in_flight| Ack { now: 0.0, acked: 1, rtt: Some(0.1), min_rtt: 0.1, in_flight };
        assert_eq!(r.on_ack(&a(9)), None); // starts: 9 more outstanding
        for _ in 0..9 {
            r.on_rtt(0.12);
            assert_eq!(r.on_ack(&a(9)), None);
        }
        r.on_rtt(0.11);
        let e = r.on_ack(&a(9)).expect("round ends with the 10th ACK");
        assert_eq!((e.sent, e.rtt, e.samples), (9.0, 0.11, 10));
        for _ in 0..9 {
            r.on_rtt(0.1);
            assert_eq!(r.on_ack(&a(9)), None);
        }
        r.on_rtt(0.1);
        let e = r.on_ack(&a(9)).unwrap();
        assert_eq!(e.sent, 10.0, "steady state: a round is one window");
        assert!((e.diff() - 0.0).abs() < 1e-12);
        let e = RoundEnd { sent: 20.0, rtt: 0.125, samples: 20, base_rtt: 0.1 };
        assert!((e.diff() - 4.0).abs() < 1e-12 && (e.target() - 16.0).abs() < 1e-12);
    }

    #[test]
    fn a_round_rtt_is_its_smallest_sample_or_with_mean_their_mean() {
        let a = |in_flight| Ack { now: 0.0, acked: 1, rtt: Some(0.1), min_rtt: 0.1, in_flight };
        for (mean, expect) in [(false, 0.10), (true, 0.13)] {
            let mut r = Rounds::with_mean(mean);
            r.on_rtt(0.10);
            assert_eq!(r.on_ack(&a(3)), None); // starts: 3 more outstanding
            for rtt in [0.16, 0.10, 0.16] {
                r.on_rtt(rtt);
                assert_eq!(r.on_ack(&a(3)), None);
            }
            r.on_rtt(0.10);
            let e = r.on_ack(&a(3)).expect("round ends with the 4th ACK after its start");
            assert!((e.rtt - expect).abs() < 1e-12, "mean {mean}: round RTT {} (want {expect})", e.rtt);
            assert_eq!((e.samples, e.base_rtt), (4, 0.10), "the base is the smallest sample either way");
        }
    }

    #[test]
    fn with_mean_round_rtt_noise_on_the_samples_shrinks_the_window() {
        // liu2008 eq. 33: samples T + n with n in {0, 2σ} alternately (mean σ); the smallest
        // sample of each round is noise-free, so Linux's Vegas holds its window, while the mean
        // puts σ into diff (W·σ/(T + σ) = 20·0.02/0.12 ≈ 3.3 > β = 2): the window shrinks.
        let mut p = VegasParams::LINUX;
        p.alpha = 2.0;
        p.beta = 2.0;
        let mut windows = vec![];
        for mean in [false, true] {
            p.mean_rtt = mean;
            let mut c = in_ca(p, 20.0);
            c.rounds = Rounds::with_mean(mean);
            let mut now = 0.0;
            for _ in 0..10 {
                let n = c.window().floor().max(1.0) as usize;
                for i in 0..n {
                    let rtt = 0.1 + if i % 2 == 0 { 0.0 } else { 0.04 };
                    now += 0.1 / n as f64;
                    c.on_rtt_sample(now, rtt);
                    let in_flight = (c.window().floor() as u32).saturating_sub(1);
                    c.on_ack(&Ack { now, acked: 1, rtt: Some(rtt), min_rtt: 0.1, in_flight });
                }
            }
            windows.push(c.window());
        }
        println!("Vegas, noisy samples: window after 10 rounds: min {} mean {}", windows[0], windows[1]);
        assert!(windows[0] >= 20.0, "the round minimum filters the noise: {}", windows[0]);
        assert!(windows[1] <= 14.0, "the round mean carries it: {}", windows[1]);
    }

    #[test]
    fn round_rtt_is_validated_and_defaults_to_min() {
        let v = |j: serde_json::Value| vegas_info().validate(j.as_object().unwrap());
        assert!(!VegasParams::from_params(&v(json!({})).unwrap()).unwrap().mean_rtt);
        assert!(VegasParams::from_params(&v(json!({"round_rtt": "mean"})).unwrap()).unwrap().mean_rtt);
        let e = v(json!({"round_rtt": "average"})).unwrap_err();
        assert!(e.to_string().contains("round_rtt"), "{e}");
    }

    #[test]
    fn plus_minus_one_per_rtt_from_diff_against_alpha_beta() {
        let p = VegasParams::LINUX;
        // The decision at a round's end: diff = w(RTT − BaseRTT)/RTT against α = 2, β = 4.
        for (rtt, expect) in [(0.1, 1.0), (0.105, 1.0), (0.1 * 20.0 / 17.0, 0.0), (0.12, 0.0), (0.13, -1.0), (0.2, -1.0)] {
            let mut c = in_ca(p, 20.0);
            let e = RoundEnd { sent: 20.0, rtt, samples: 20, base_rtt: 0.1 };
            c.end_of_round(e);
            println!("Vegas: W 20, RTT {rtt:.4}: diff {:.2} -> {:+}", e.diff(), c.window() - 20.0);
            assert_eq!(c.window() - 20.0, expect, "rtt {rtt}");
        }
        // Driven by ACKs: one step per round, in the direction of the decision.
        let mut now = 0.0;
        for (rtt, sign) in [(0.1, 1.0), (0.2, -1.0)] {
            let mut c = in_ca(p, 20.0);
            round(&mut c, 0.1, &mut now); // BaseRTT, rounds started
            let w0 = c.window();
            for _ in 0..6 {
                round(&mut c, rtt, &mut now);
            }
            let d = c.window() - w0;
            println!("Vegas: 6 rounds at RTT {rtt}: {w0} -> {}", c.window());
            assert!(d * sign >= 4.0 && d.abs() <= 6.0, "rtt {rtt}: change {d}");
        }
        // Equilibrium: with queueing proportional to the window, W settles where α ≤ diff ≤ β.
        let mut c = in_ca(p, 10.0);
        let mut now = 0.0;
        round(&mut c, 0.1, &mut now);
        for _ in 0..200 {
            // one bottleneck of 100 packets/s·0.1 s = 10 packets BDP: RTT = max(base, W/C)
            let rtt = (c.window() / 100.0).max(0.1);
            round(&mut c, rtt, &mut now);
        }
        let w = c.window();
        let diff = w - 10.0; // queued packets
        println!("Vegas equilibrium: W = {w}, queued {diff}");
        assert!((p.alpha - 1.0..=p.beta + 1.0).contains(&diff), "W {w}");
    }

    #[test]
    fn slow_start_ends_when_diff_exceeds_gamma() {
        let p = VegasParams { alpha: 2.0, beta: 2.0, gamma: 2.0, ..VegasParams::LINUX };
        let mut c = Vegas::new(p, 2.0, f64::INFINITY);
        let mut now = 0.0;
        let mut rounds = 0;
        // BDP 20 packets: RTT = max(0.1, W/200).
        while c.ssthresh().is_infinite() && rounds < 50 {
            let rtt = (c.window() / 200.0).max(0.1);
            round(&mut c, rtt, &mut now);
            rounds += 1;
        }
        println!("Vegas slow start left after {rounds} rounds at W = {}, ssthresh {}", c.window(), c.ssthresh());
        assert_eq!(c.ssthresh(), c.window() - 1.0);
        assert!(c.window() <= 22.0, "cut to the achieved rate: {}", c.window());
        // γ = 1 (Linux) ends it no later.
        let mut d = Vegas::new(VegasParams::LINUX, 2.0, f64::INFINITY);
        let mut now = 0.0;
        let mut r2 = 0;
        while d.ssthresh().is_infinite() && r2 < 50 {
            let rtt = (d.window() / 200.0).max(0.1);
            round(&mut d, rtt, &mut now);
            r2 += 1;
        }
        assert!(r2 <= rounds);
    }

    #[test]
    fn loss_halves_and_restarts_rounds() {
        let mut c = in_ca(VegasParams::LINUX, 40.0);
        let mut now = 0.0;
        round(&mut c, 0.1, &mut now);
        c.on_loss_event(&loss(40.0));
        assert_eq!((c.window(), c.ssthresh()), (20.0, 20.0));
        // The first round after recovery makes no decision.
        let w = c.window();
        round(&mut c, 0.3, &mut now);
        assert_eq!(c.window(), w);
        // Then, with queueing (diff > β), the window shrinks below the ssthresh the loss left:
        // each decrease takes ssthresh along (Linux 2.6.22's Vegas bounced off it instead).
        for _ in 0..6 {
            round(&mut c, 0.3, &mut now);
        }
        println!("Vegas after a loss to 20 with diff > beta: W = {}, ssthresh {}", c.window(), c.ssthresh());
        assert!(c.window() <= 16.0 && c.ssthresh() < c.window());
        c.on_timeout(&timeout(20.0));
        assert_eq!((c.window(), c.ssthresh()), (1.0, 10.0));
        let v = |j: serde_json::Value| vegas_info().validate(j.as_object().unwrap());
        assert_eq!(VegasParams::from_params(&v(json!({})).unwrap()).unwrap(), VegasParams::LINUX);
        assert_eq!(v(json!({"alpha": 5, "beta": 3})).unwrap_err().field, "alpha");
        assert!(v(json!({"alpha": 5, "beta": 5, "gamma": 5})).is_ok());
        assert!(!VegasParams::from_params(&v(json!({"lower_ssthresh": "off"})).unwrap()).unwrap().lower_ssthresh);
        assert_eq!(v(json!({"lower_ssthresh": "maybe"})).unwrap_err().field, "lower_ssthresh");
    }

    /// Linux 2.6.22's module (ns-2 2.35): a decrease leaves ssthresh alone, and a window at or
    /// below ssthresh slow-starts, so after a loss to 20 the window cannot stay below 20 however
    /// much the flow queues; later Linux (the default) goes down to the Vegas target.
    #[test]
    fn linux_2_6_22_variant_bounces_off_the_threshold_left_by_a_loss() {
        let run = |lower: bool| {
            let p = VegasParams { lower_ssthresh: lower, ..VegasParams::LINUX };
            let mut c = in_ca(p, 40.0);
            let mut now = 0.0;
            round(&mut c, 0.1, &mut now);
            c.on_loss_event(&loss(40.0));
            let mut lowest = f64::INFINITY;
            for _ in 0..12 {
                round(&mut c, 0.3, &mut now); // diff = W * 2/3 > beta every round
                lowest = lowest.min(c.window());
            }
            (lowest, c.ssthresh())
        };
        let (low_new, _) = run(true);
        let (low_old, th_old) = run(false);
        println!("lowest window after a loss to 20, diff > beta: later Linux {low_new}, 2.6.22 {low_old}");
        assert!(low_new <= 14.0, "{low_new}");
        assert_eq!(th_old, 20.0);
        assert!(low_old >= 20.0, "{low_old}");
    }
}
