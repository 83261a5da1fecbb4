//! TFRC (RFC 5348): the sender paces at the TCP throughput equation's rate for the loss event
//! rate and RTT; the receiver measures the loss event rate from a history of loss intervals
//! and reports once per RTT (and at once when a new loss event starts).
//!
//! Simplifications, stated: packets are never reordered in the simulator, so a gap in the
//! sequence is a loss as soon as it is seen (no NDUPACK wait); the sender is never data-limited.
//! History discounting (§5.5) is a parameter (`discount`, off by default; on in ns-2's
//! `Agent/TFRCSink`, `discount_ 1`): while the open interval is longer than twice the mean of
//! the closed ones, the closed ones weigh less (by 2·mean/open, at least ½) in the average
//! that includes the open interval, and when that interval closes its discount stays with them.

use super::{equation_inverse, interval_weights, num, tcp_equation, Endpoints, Feedback, Pacer, RateReceiver, RateSender};
use crate::cc::params::{AlgorithmInfo, ParamError, ParamKind, ParamSpec, Params, Taxonomy, ON_OFF};
use crate::net::packet::Packet;
use crate::sim::{secs, to_secs, Time};
use std::collections::VecDeque;

/// TFRC's parameters, source and tsao2007 Table 3 class.
pub fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "tfrc",
        family: "rate-based",
        summary: "TCP-Friendly Rate Control: paces at the TCP throughput equation's rate for the measured loss event rate and RTT",
        source: "RFC 5348 (Floyd et al. 2000); tsao2007 uses 8 loss intervals",
        params: vec![
            num("history", 8.0, 1.0, Some(64.0), "loss intervals", "loss intervals averaged for the loss event rate (weights 1,1,1,1,0.8,0.6,0.4,0.2 for 8)"),
            num("t_rto_rtts", 4.0, 0.0, None, "RTTs", "t_RTO in the equation, as a multiple of the RTT (RFC 5348: 4R)"),
            num("t_mbi", 64.0, 0.0, None, "s", "maximum back-off interval: the rate never falls below one packet per t_mbi"),
            ParamSpec {
                name: "discount",
                kind: ParamKind::Choice(ON_OFF),
                default_text: Some("off"),
                doc: "history discounting (RFC 5348 §5.5): on, while the open loss interval is longer than twice the mean of the closed ones, the closed ones weigh less (factor 2·mean/open, at least 0.5) in the average with the open one, and keep that discount when it closes, so the loss event rate falls faster after congestion ends; ns-2's Agent/TFRCSink does this by default (discount_ 1)",
                ..ParamSpec::NUMBER
            },
        ],
        aliases: vec![],
        taxonomy: Some(Taxonomy { fairness: "rate-based", increase: "historical", curve: "linear", history: "fixed" }),
        notes: "Slow start doubles per RTT until the first loss, limited to twice the receive rate; a no-feedback timer halves the rate.",
        check: None,
        named_numbers: false,
    }
}

/// Sender and receiver for validated parameters; `s` is the packet size (bytes).
pub fn build(p: &Params, s: u32) -> Result<Endpoints, ParamError> {
    let t_rto_rtts = p.get("t_rto_rtts")?;
    let mut rcv = TfrcReceiver::new(s as f64, p.get("history")? as usize, t_rto_rtts);
    rcv.history.discount = p.text("discount")? == Some("on");
    Ok((Box::new(Tfrc::new(s as f64, t_rto_rtts, p.get("t_mbi")?)), Box::new(rcv)))
}

/// The sender (RFC 5348 §4).
pub struct Tfrc {
    pace: Pacer,
    t_rto_rtts: f64,
    t_mbi: f64,
    p: f64,
    x_recv: f64,
    /// Time the rate was last doubled in slow start (s).
    tld: f64,
    feedback_seen: bool,
    timeouts: u64,
}

impl Tfrc {
    pub fn new(s: f64, t_rto_rtts: f64, t_mbi: f64) -> Self {
        // One packet per second until the first feedback.
        Tfrc { pace: Pacer::new(s, s), t_rto_rtts, t_mbi, p: 0.0, x_recv: 0.0, tld: 0.0, feedback_seen: false, timeouts: 0 }
    }

    fn min_rate(&self) -> f64 {
        self.pace.s / self.t_mbi
    }

    /// Initial rate after the first RTT sample: W_init / R (RFC 5348 §4.2, RFC 3390's W_init).
    fn initial_rate(&self) -> f64 {
        let s = self.pace.s;
        (4.0 * s).min((2.0 * s).max(4380.0)) / self.pace.r
    }
}

impl RateSender for Tfrc {
    pacer_in_field!();

    fn start(&mut self, now: Time) {
        self.pace.sending = true;
        self.pace.arm_nofeedback(now);
        self.tld = to_secs(now);
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        let t = to_secs(now);
        self.pace.rtt_sample(now, fb, 0.1);
        self.x_recv = fb.x_recv;
        self.p = fb.p;
        let recv_limit = 2.0 * self.x_recv;
        if !self.feedback_seen {
            self.feedback_seen = true;
            if self.p == 0.0 {
                self.pace.x = self.initial_rate();
                self.tld = t;
            }
        }
        let r = self.pace.r;
        if self.p > 0.0 {
            let x_eq = tcp_equation(self.pace.s, r, self.p, 1.0, self.t_rto_rtts * r);
            self.pace.x = x_eq.min(recv_limit).max(self.min_rate());
        } else if t - self.tld >= r {
            self.pace.x = (2.0 * self.pace.x).min(recv_limit).max(self.initial_rate());
            self.tld = t;
        }
        self.pace.arm_nofeedback(now);
    }

    fn on_timer(&mut self, now: Time) {
        // No feedback for a while: halve the rate (RFC 5348 §4.4, simplified).
        self.timeouts += 1;
        self.pace.x = (self.pace.x / 2.0).max(self.min_rate());
        self.x_recv /= 2.0;
        self.pace.arm_nofeedback(now);
    }

    fn timeouts(&self) -> u64 {
        self.timeouts
    }
}

/// Loss intervals and the loss event rate (RFC 5348 §5).
#[derive(Clone, Debug)]
pub struct LossHistory {
    weights: Vec<f64>,
    /// Closed intervals, newest first (packets).
    closed: VecDeque<f64>,
    /// Each closed interval's discount (RFC 5348 §5.5's DF_i; 1 without discounting).
    df: VecDeque<f64>,
    /// Sequence number and estimated send time (s) of the first loss of the current event.
    current: Option<(u32, f64)>,
    /// History discounting (§5.5).
    pub discount: bool,
}

/// The smallest discount factor (RFC 5348 §5.5's DF_min; ns-2's minDiscountRatio_).
const DF_MIN: f64 = 0.5;

impl LossHistory {
    pub fn new(n: usize) -> Self {
        LossHistory { weights: interval_weights(n), closed: VecDeque::new(), df: VecDeque::new(), current: None, discount: false }
    }

    /// The closed intervals' weighted mean with their discounts (the open one left out).
    fn closed_mean(&self) -> Option<f64> {
        let (mut tot, mut wt) = (0.0, 0.0);
        for ((x, d), w) in self.closed.iter().zip(&self.df).zip(&self.weights) {
            tot += x * w * d;
            wt += w * d;
        }
        (wt > 0.0).then(|| tot / wt)
    }

    /// The discount of the closed intervals while the open one lasts `open` packets: 2·mean /
    /// open (at least DF_MIN) when the open interval is more than twice their mean, else 1.
    /// (ns-2's rule: the mean of the closed intervals, not RFC 5348's I_mean with the open one.)
    fn general_discount(&self, open: f64) -> f64 {
        if !self.discount {
            return 1.0;
        }
        match self.closed_mean() {
            Some(mean) if open > 2.0 * mean => (2.0 * mean / open).max(DF_MIN),
            _ => 1.0,
        }
    }

    /// A packet `seq` sent at `sent` (s) was lost; `rtt` is the sender's estimate. Returns true
    /// if it starts a new loss event. `first_interval` gives the length to record for the
    /// interval before the first loss event (RFC 5348 §6.3.1).
    pub fn on_loss(&mut self, seq: u32, sent: f64, rtt: f64, first_interval: impl FnOnce() -> f64) -> bool {
        match self.current {
            Some((_, t0)) if sent <= t0 + rtt => false,
            Some((s0, _)) => {
                // The discount in force when the open interval closes stays with the older ones.
                let d = self.general_discount((seq - s0) as f64);
                if d < 1.0 {
                    self.df.iter_mut().for_each(|x| *x *= d);
                }
                self.push((seq - s0) as f64);
                self.current = Some((seq, sent));
                true
            }
            None => {
                self.push(first_interval().max(1.0));
                self.current = Some((seq, sent));
                true
            }
        }
    }

    fn push(&mut self, interval: f64) {
        self.closed.push_front(interval);
        self.closed.truncate(self.weights.len());
        self.df.push_front(1.0);
        self.df.truncate(self.weights.len());
    }

    /// The loss event rate with `next` the next expected sequence number (0 before any loss).
    pub fn p(&self, next: u32) -> f64 {
        let Some((s0, _)) = self.current else { return 0.0 };
        let open = (next - s0) as f64;
        let n = self.closed.len();
        let w = &self.weights;
        // I_tot0: the open interval and the newest n-1 closed ones; I_tot1: the n closed ones.
        // Without discounting every factor below is 1 (and the sums are the plain ones).
        let g = self.general_discount(open);
        let mut tot0 = open * w[0];
        let mut wt0 = w[0];
        for (i, (x, d)) in self.closed.iter().zip(&self.df).enumerate().take(w.len() - 1) {
            let k = if self.discount { w[i + 1] * d * g } else { w[i + 1] };
            tot0 += x * k;
            wt0 += k;
        }
        let mut tot1 = 0.0;
        let mut wt1 = 0.0;
        for (i, (x, d)) in self.closed.iter().zip(&self.df).enumerate().take(n) {
            let k = if self.discount { w[i] * d } else { w[i] };
            tot1 += x * k;
            wt1 += k;
        }
        let mean = (tot0 / wt0).max(if wt1 > 0.0 { tot1 / wt1 } else { 0.0 });
        1.0 / mean
    }
}

/// The receiver (RFC 5348 §6).
pub struct TfrcReceiver {
    s: f64,
    t_rto_rtts: f64,
    next: u32,
    delivered: u64,
    loss_events: u64,
    history: LossHistory,
    last_stamp: Time,
    last_arrival: Time,
    bytes_since: f64,
    last_report: Option<Time>,
    rtt: f64,
    timer: Option<Time>,
}

impl TfrcReceiver {
    pub fn new(s: f64, n: usize, t_rto_rtts: f64) -> Self {
        TfrcReceiver {
            s,
            t_rto_rtts,
            next: 0,
            delivered: 0,
            loss_events: 0,
            history: LossHistory::new(n),
            last_stamp: 0,
            last_arrival: 0,
            bytes_since: 0.0,
            last_report: None,
            rtt: 0.0,
            timer: None,
        }
    }

    fn report(&mut self, now: Time) -> Feedback {
        let since = self.last_report.map_or(self.rtt.max(1e-3), |t| to_secs(now - t).max(1e-6));
        let fb = Feedback {
            stamp: self.last_stamp,
            delay: now - self.last_arrival,
            x_recv: self.bytes_since / since,
            p: self.history.p(self.next),
            ..Feedback::default()
        };
        self.bytes_since = 0.0;
        self.last_report = Some(now);
        self.timer = Some(now + secs(self.rtt.max(1e-3)));
        fb
    }
}

impl RateReceiver for TfrcReceiver {
    fn on_data(&mut self, now: Time, pkt: &Packet, sender_rtt: f64) -> Option<Feedback> {
        if sender_rtt > 0.0 {
            self.rtt = sender_rtt;
        }
        if pkt.seq < self.next {
            return None;
        }
        let mut new_event = false;
        if pkt.seq > self.next && self.delivered > 0 {
            // Packets next..seq-1 are lost; interpolate their send times.
            let (t_a, t_b) = (to_secs(self.last_stamp), to_secs(pkt.stamp));
            let gap = (pkt.seq - self.next + 1) as f64;
            for (k, lost) in (self.next..pkt.seq).enumerate() {
                let sent = t_a + (t_b - t_a) * (k + 1) as f64 / gap;
                let (s, r, x_recv, tr) = (self.s, self.rtt.max(1e-3), self.bytes_since_rate(now), self.t_rto_rtts);
                if self.history.on_loss(lost, sent, self.rtt, || 1.0 / equation_inverse(s, r, x_recv, 1.0, tr * r)) {
                    new_event = true;
                    self.loss_events += 1;
                }
            }
        }
        self.next = pkt.seq + 1;
        self.delivered += 1;
        self.last_stamp = pkt.stamp;
        self.last_arrival = now;
        self.bytes_since += self.s;
        if self.last_report.is_none() || new_event {
            return Some(self.report(now));
        }
        None
    }

    fn timer(&self) -> Option<Time> {
        self.timer
    }

    fn on_timer(&mut self, now: Time) -> Option<Feedback> {
        if self.bytes_since > 0.0 {
            Some(self.report(now))
        } else {
            // Nothing arrived since the last report: stay quiet, look again in an RTT.
            self.timer = Some(now + secs(self.rtt.max(1e-3)));
            None
        }
    }

    fn delivered(&self) -> u64 {
        self.delivered
    }

    fn loss_events(&self) -> u64 {
        self.loss_events
    }
}

impl TfrcReceiver {
    /// Receive rate since the last report (for seeding the first loss interval).
    fn bytes_since_rate(&self, now: Time) -> f64 {
        let since = self.last_report.map_or(1.0, |t| to_secs(now - t).max(1e-3));
        (self.bytes_since / since).max(self.s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_event_rate_follows_rfc_5348_weighted_average() {
        // A scripted pattern: the first loss at packet 100 (its interval seeded as 100), then
        // loss events starting at packets 150, 300, 340, 400, 500, 620, 700, 760, 900.
        let mut h = LossHistory::new(8);
        let starts = [100u32, 150, 300, 340, 400, 500, 620, 700, 760, 900];
        for (i, &s) in starts.iter().enumerate() {
            // one loss per event, events far apart in time
            assert!(h.on_loss(s, i as f64 * 10.0, 0.1, || 100.0));
        }
        // Closed intervals, newest first: 140, 60, 80, 120, 100, 60, 40, 150 (the 9th, 100,
        // dropped off); open interval at next = 960: 60.
        let w = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
        let closed = [140.0, 60.0, 80.0, 120.0, 100.0, 60.0, 40.0, 150.0];
        let tot1: f64 = closed.iter().zip(w).map(|(x, w)| x * w).sum();
        let tot0: f64 = 60.0 * w[0] + closed[..7].iter().zip(&w[1..]).map(|(x, w)| x * w).sum::<f64>();
        let expect = 1.0 / (tot0.max(tot1) / w.iter().sum::<f64>());
        let p = h.p(960);
        println!("p = {p} (I_tot0 {tot0}, I_tot1 {tot1})");
        assert!((p - expect).abs() < 1e-12);
        // A long open interval raises the mean (I_tot0 wins) and lowers p.
        assert!(h.p(1400) < p);
    }

    #[test]
    fn history_discounting_lets_the_loss_rate_fall_faster_after_congestion() {
        // Eight closed intervals of 100 packets, then a long loss-free spell.
        let build = |discount: bool| {
            let mut h = LossHistory::new(8);
            h.discount = discount;
            for k in 0..9u32 {
                assert!(h.on_loss(100 * (k + 1), k as f64, 0.1, || 100.0));
            }
            h
        };
        let (plain, disc) = (build(false), build(true));
        let last = 900u32;
        // Open interval up to twice the mean (200): no discount, the same p.
        assert_eq!(plain.p(last + 150).to_bits(), disc.p(last + 150).to_bits());
        assert_eq!(plain.p(last + 200).to_bits(), disc.p(last + 200).to_bits());
        // Open 400 = 4x the mean: the closed ones weigh 2·100/400 = 0.5 in I_tot0.
        let w = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
        let (open, g) = (400.0, 0.5);
        let tot0 = open * w[0] + w[1..].iter().map(|w| 100.0 * w * g).sum::<f64>();
        let wt0 = w[0] + w[1..].iter().map(|w| w * g).sum::<f64>();
        let expect = 1.0 / (tot0 / wt0);
        let p = disc.p(last + 400);
        println!("p after 400 loss-free packets: {} plain, {p} discounted", plain.p(last + 400));
        assert!((p - expect).abs() < 1e-12, "{p} vs {expect}");
        assert!(p < plain.p(last + 400));
        // The factor never goes below 0.5: at open 2 000 it is 0.5, not 0.1.
        let open = 2000.0;
        let tot0 = open * w[0] + w[1..].iter().map(|w| 100.0 * w * 0.5).sum::<f64>();
        assert!((disc.p(last + 2000) - wt0 / tot0).abs() < 1e-12);
        // When the long interval closes, its discount stays with the older intervals: the
        // next average weighs them by 0.5 (DF_i), the new closed one (2 000) by 1.
        let mut d = build(true);
        assert!(d.on_loss(last + 2000, 100.0, 0.1, || 100.0));
        let closed_mean = (2000.0 * w[0] + w[1..].iter().map(|w| 100.0 * w * 0.5).sum::<f64>()) / (w[0] + w[1..].iter().map(|w| w * 0.5).sum::<f64>());
        assert!((d.closed_mean().unwrap() - closed_mean).abs() < 1e-9);
    }

    #[test]
    fn losses_within_one_rtt_are_one_event() {
        let mut h = LossHistory::new(8);
        assert!(h.on_loss(10, 1.0, 0.1, || 50.0));
        assert!(!h.on_loss(11, 1.05, 0.1, || 50.0));
        assert!(h.on_loss(30, 1.2, 0.1, || 50.0));
        // closed [20, 50], open 10: I_tot0 = (10 + 20 + 50)/3, I_tot1 = (20 + 50)/2 = 35 wins
        assert!((h.p(40) - 1.0 / 35.0).abs() < 1e-12, "{}", h.p(40));
    }
}
