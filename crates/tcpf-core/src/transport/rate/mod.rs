//! Rate-based (equation- or emulation-based) senders that pace packets instead of clocking
//! them on ACKs, and their receivers: TFRC (RFC 5348), TFRCP (Padhye et al. 1999) and TEAR
//! (Rhee et al. 2000). The engine drives them through these traits; feedback travels as
//! ACK-kind packets whose contents the engine hands over beside the packet.
//!
//! This module is the kit every scheme shares (feedback, pacing, the traits, TCP's equation);
//! each scheme is one file (`tfrc`, `tfrcp`, `tear`) with its `info()` (parameters, source,
//! taxonomy) and `build()`, and depends only on this kit. The schemes are registered in
//! `crate::registry`.

pub mod tear;
pub mod tfrc;
pub mod tfrcp;

use crate::cc::params::ParamSpec;
use crate::net::packet::Packet;
use crate::sim::{secs, to_secs, Time};

/// What a receiver reports to its sender.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Feedback {
    /// Send time of the last data packet received (echoed), and how long the receiver held it.
    pub stamp: Time,
    pub delay: Time,
    /// Receive rate since the last report, bytes/s.
    pub x_recv: f64,
    /// Loss event rate (TFRC), or the fraction lost since the last report (TFRCP).
    pub p: f64,
    /// Rate the receiver computed for the sender (TEAR), bytes/s.
    pub rate: f64,
    /// Packets received and lost since the last report.
    pub received: u32,
    pub lost: u32,
}

/// What every paced sender keeps: packet size, allowed rate, RTT estimate, the pacing clock
/// and the sender's own timer (no-feedback or interval).
#[derive(Clone, Debug)]
pub struct Pacer {
    pub s: f64,
    /// Allowed rate, bytes/s.
    pub x: f64,
    /// RTT estimate, s (0: none yet).
    pub r: f64,
    seq: u32,
    last_send: Option<Time>,
    pub sending: bool,
    pub timer: Option<Time>,
}

impl Pacer {
    pub fn new(s: f64, x: f64) -> Self {
        Pacer { s, x, r: 0.0, seq: 0, last_send: None, sending: false, timer: None }
    }

    /// Take an RTT sample from feedback (`now` − echoed send time − the receiver's hold time)
    /// into the estimate with weight `gain`; returns the sample.
    pub fn rtt_sample(&mut self, now: Time, fb: &Feedback, gain: f64) -> f64 {
        let sample = to_secs(now.saturating_sub(fb.stamp).saturating_sub(fb.delay)).max(1e-6);
        self.r = if self.r == 0.0 { sample } else { (1.0 - gain) * self.r + gain * sample };
        sample
    }

    /// Arm the no-feedback timer: max(4R, 2s/X), or 2 s before any RTT sample (RFC 5348 §4).
    pub fn arm_nofeedback(&mut self, now: Time) {
        let t = if self.r > 0.0 { (4.0 * self.r).max(2.0 * self.s / self.x) } else { 2.0 };
        self.timer = Some(now + secs(t));
    }
}

/// A paced sender. Pacing (one packet every s/X), stopping and the timer's deadline come from
/// its `Pacer`; a scheme says how feedback and its timer change the rate.
pub trait RateSender: Send {
    fn pacer(&self) -> &Pacer;
    fn pacer_mut(&mut self) -> &mut Pacer;
    /// Start sending at `now`.
    fn start(&mut self, now: Time);
    fn on_feedback(&mut self, now: Time, fb: &Feedback);
    /// The sender's timer fired.
    fn on_timer(&mut self, now: Time);
    /// Times the sender cut its rate for lack of feedback.
    fn timeouts(&self) -> u64 {
        0
    }

    /// When the next packet is due (None: not sending).
    fn next_send(&self) -> Option<Time> {
        let p = self.pacer();
        if !p.sending {
            return None;
        }
        Some(p.last_send.map_or(0, |t| t + secs(p.s / p.x).max(1)))
    }

    /// Send the packet due at `now`: returns its sequence number.
    fn send(&mut self, now: Time) -> u32 {
        let p = self.pacer_mut();
        p.last_send = Some(now);
        p.seq += 1;
        p.seq - 1
    }

    /// When the sender's own timer fires next.
    fn timer(&self) -> Option<Time> {
        let p = self.pacer();
        if p.sending {
            p.timer
        } else {
            None
        }
    }

    /// The application stops: send nothing more.
    fn stop(&mut self) {
        self.pacer_mut().sending = false;
    }

    /// Current allowed rate, bytes/s.
    fn rate(&self) -> f64 {
        self.pacer().x
    }

    /// Current RTT estimate, seconds (0 before any), carried in data packets.
    fn rtt(&self) -> f64 {
        self.pacer().r
    }
}

/// The receiving end: turns arrivals into feedback.
pub trait RateReceiver: Send {
    /// A data packet arrives; feedback to send at once, if any.
    fn on_data(&mut self, now: Time, pkt: &Packet, sender_rtt: f64) -> Option<Feedback>;
    /// When the receiver's feedback timer fires next.
    fn timer(&self) -> Option<Time>;
    fn on_timer(&mut self, now: Time) -> Option<Feedback>;
    /// Unique data packets received.
    fn delivered(&self) -> u64;
    /// Loss events detected.
    fn loss_events(&self) -> u64;
}

/// TCP's throughput equation (RFC 5348 §3.1), bytes/s: packet size `s` bytes, RTT `r` s,
/// loss event rate `p`, `b` packets per ACK, retransmission timeout `t_rto` s.
pub fn tcp_equation(s: f64, r: f64, p: f64, b: f64, t_rto: f64) -> f64 {
    let denom = r * (2.0 * b * p / 3.0).sqrt() + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / denom
}

/// The loss event rate at which the equation gives rate `x` (bytes/s), by bisection
/// (RFC 5348 §6.3.1 uses this to seed the loss history after the first loss event).
pub fn equation_inverse(s: f64, r: f64, x: f64, b: f64, t_rto: f64) -> f64 {
    let (mut lo, mut hi) = (1e-9f64, 1.0f64);
    if tcp_equation(s, r, hi, b, t_rto) >= x {
        return hi;
    }
    if tcp_equation(s, r, lo, b, t_rto) <= x {
        return lo;
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if tcp_equation(s, r, mid, b, t_rto) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}

/// A number parameter of a rate-based scheme: `default`, in (`min`, `max`].
pub(crate) const fn num(name: &'static str, default: f64, min: f64, max: Option<f64>, unit: &'static str, doc: &'static str) -> ParamSpec {
    ParamSpec { name, default: Some(default), min: Some(min), max, min_open: true, max_open: false, unit, doc, ..ParamSpec::NUMBER }
}

/// A scheme's sender and receiver, as the registry's constructors return them.
pub type Endpoints = (Box<dyn RateSender>, Box<dyn RateReceiver>);

/// Weights of the last `n` intervals (RFC 5348 §5.4): 1 for the newer half, then falling.
pub fn interval_weights(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i < n / 2 { 1.0 } else { 2.0 * (n - i) as f64 / (n + 2) as f64 })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equation_matches_rfc_5348_formula() {
        // s = 1000 B, R = 0.1 s, p = 0.01, b = 1, t_RTO = 4R, evaluated by hand:
        // denominator = 0.1·√(0.02/3) + 0.4·3·√(0.03/8)·0.01·(1 + 0.0032)
        let s: f64 = 1000.0;
        let hand = s / (0.1 * (0.02f64 / 3.0).sqrt() + 0.4 * 3.0 * (0.03f64 / 8.0).sqrt() * 0.01 * 1.0032);
        let x = tcp_equation(s, 0.1, 0.01, 1.0, 0.4);
        assert!((x - hand).abs() / hand < 1e-9, "{x} vs {hand}");
        // and with Padhye's formula as implemented independently in `models` (packets/s)
        let padhye = crate::models::rate::padhye(0.01, 0.1, 0.4, 1.0) * s;
        assert!((x - padhye).abs() / padhye < 1e-9, "{x} vs {padhye}");
        let p = equation_inverse(s, 0.1, x, 1.0, 0.4);
        assert!((p - 0.01).abs() / 0.01 < 1e-6, "{p}");
    }

    #[test]
    fn weights_are_rfc_5348s_for_eight_intervals() {
        assert_eq!(interval_weights(8), vec![1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]);
    }
}
