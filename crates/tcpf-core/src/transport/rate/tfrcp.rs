//! TFRCP (Padhye, Kurose, Towsley, Koodli 1999): every `interval` seconds the sender sets its
//! rate from the TCP equation with the loss rate and mean RTT measured over the interval, or
//! doubles it after an interval without loss. The receiver acknowledges every packet.

use super::{num, tcp_equation, Endpoints, Feedback, Pacer, RateReceiver, RateSender};
use crate::cc::params::{AlgorithmInfo, ParamError, Params, Taxonomy};
use crate::net::packet::Packet;
use crate::sim::{secs, Time};

/// TFRCP's parameters, source and tsao2007 Table 3 class.
pub fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "tfrcp",
        family: "rate-based",
        summary: "TFRCP: every interval, set the rate from the TCP equation with the loss rate and RTT measured over it; double it after a loss-free interval",
        source: "Padhye, Kurose, Towsley, Koodli 1999; tsao2007 uses a 5 s interval",
        params: vec![num("interval", 5.0, 0.0, None, "s", "how often the rate is recomputed")],
        aliases: vec![],
        taxonomy: Some(Taxonomy { fairness: "rate-based", increase: "non-historical", curve: "superlinear", history: "fixed" }),
        notes: "The receiver acknowledges every packet; the sender measures loss rate and RTT from the acknowledgements.",
        check: None,
        named_numbers: false,
    }
}

/// Sender and receiver for validated parameters; `s` is the packet size (bytes).
pub fn build(p: &Params, s: u32) -> Result<Endpoints, ParamError> {
    Ok((Box::new(Tfrcp::new(s as f64, p.get("interval")?)), Box::new(TfrcpReceiver::new())))
}

pub struct Tfrcp {
    pace: Pacer,
    interval: f64,
    received: u64,
    lost: u64,
    rtt_sum: f64,
    rtt_n: u64,
}

impl Tfrcp {
    pub fn new(s: f64, interval: f64) -> Self {
        // Start at one packet per 100 ms, as a TCP with a 2-packet window and a 200 ms RTT.
        Tfrcp { pace: Pacer::new(s, 10.0 * s), interval, received: 0, lost: 0, rtt_sum: 0.0, rtt_n: 0 }
    }
}

impl RateSender for Tfrcp {
    pacer_in_field!();

    fn start(&mut self, now: Time) {
        self.pace.sending = true;
        self.pace.timer = Some(now + secs(self.interval));
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        self.rtt_sum += self.pace.rtt_sample(now, fb, 0.125);
        self.rtt_n += 1;
        self.received += fb.received as u64;
        self.lost += fb.lost as u64;
    }

    fn on_timer(&mut self, now: Time) {
        let s = self.pace.s;
        let total = self.received + self.lost;
        if self.lost == 0 {
            if total > 0 {
                self.pace.x *= 2.0;
            }
        } else {
            let p = self.lost as f64 / total as f64;
            let r = if self.rtt_n > 0 { self.rtt_sum / self.rtt_n as f64 } else { self.pace.r.max(1e-3) };
            self.pace.x = tcp_equation(s, r, p, 1.0, 4.0 * r).max(s / 64.0);
        }
        self.received = 0;
        self.lost = 0;
        self.rtt_sum = 0.0;
        self.rtt_n = 0;
        self.pace.timer = Some(now + secs(self.interval));
    }
}

/// Acknowledges every packet with the number lost since the previous acknowledgement.
pub struct TfrcpReceiver {
    next: u32,
    delivered: u64,
    loss_events: u64,
}

impl TfrcpReceiver {
    pub fn new() -> Self {
        TfrcpReceiver { next: 0, delivered: 0, loss_events: 0 }
    }
}

impl Default for TfrcpReceiver {
    fn default() -> Self {
        Self::new()
    }
}

impl RateReceiver for TfrcpReceiver {
    fn on_data(&mut self, _now: Time, pkt: &Packet, _rtt: f64) -> Option<Feedback> {
        if pkt.seq < self.next {
            return None;
        }
        let lost = pkt.seq - self.next;
        if lost > 0 {
            self.loss_events += 1;
        }
        self.next = pkt.seq + 1;
        self.delivered += 1;
        Some(Feedback { stamp: pkt.stamp, received: 1, lost, ..Feedback::default() })
    }

    fn timer(&self) -> Option<Time> {
        None
    }

    fn on_timer(&mut self, _now: Time) -> Option<Feedback> {
        None
    }

    fn delivered(&self) -> u64 {
        self.delivered
    }

    fn loss_events(&self) -> u64 {
        self.loss_events
    }
}
