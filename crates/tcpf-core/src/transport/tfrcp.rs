//! TFRCP (Padhye, Kurose, Towsley, Koodli 1999): every `interval` seconds the sender sets its
//! rate from the TCP equation with the loss rate and mean RTT measured over the interval, or
//! doubles it after an interval without loss. The receiver acknowledges every packet.

use super::rate::{tcp_equation, Feedback, RateReceiver, RateSender};
use crate::net::packet::Packet;
use crate::sim::{secs, to_secs, Time};

pub struct Tfrcp {
    s: f64,
    interval: f64,
    x: f64,
    r: f64,
    seq: u32,
    last_send: Option<Time>,
    tick: Option<Time>,
    sending: bool,
    received: u64,
    lost: u64,
    rtt_sum: f64,
    rtt_n: u64,
}

impl Tfrcp {
    pub fn new(s: f64, interval: f64) -> Self {
        // Start at one packet per 100 ms, as a TCP with a 2-packet window and a 200 ms RTT.
        Tfrcp { s, interval, x: 10.0 * s, r: 0.0, seq: 0, last_send: None, tick: None, sending: false, received: 0, lost: 0, rtt_sum: 0.0, rtt_n: 0 }
    }
}

impl RateSender for Tfrcp {
    fn start(&mut self, now: Time) {
        self.sending = true;
        self.tick = Some(now + secs(self.interval));
    }

    fn next_send(&self) -> Option<Time> {
        if !self.sending {
            return None;
        }
        Some(self.last_send.map_or(0, |t| t + secs(self.s / self.x).max(1)))
    }

    fn send(&mut self, now: Time) -> u32 {
        self.last_send = Some(now);
        self.seq += 1;
        self.seq - 1
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        let sample = to_secs(now.saturating_sub(fb.stamp).saturating_sub(fb.delay));
        self.r = if self.r == 0.0 { sample } else { 0.875 * self.r + 0.125 * sample };
        self.rtt_sum += sample;
        self.rtt_n += 1;
        self.received += fb.received as u64;
        self.lost += fb.lost as u64;
    }

    fn timer(&self) -> Option<Time> {
        if self.sending {
            self.tick
        } else {
            None
        }
    }

    fn on_timer(&mut self, now: Time) {
        let total = self.received + self.lost;
        if self.lost == 0 {
            if total > 0 {
                self.x *= 2.0;
            }
        } else {
            let p = self.lost as f64 / total as f64;
            let r = if self.rtt_n > 0 { self.rtt_sum / self.rtt_n as f64 } else { self.r.max(1e-3) };
            self.x = tcp_equation(self.s, r, p, 1.0, 4.0 * r).max(self.s / 64.0);
        }
        self.received = 0;
        self.lost = 0;
        self.rtt_sum = 0.0;
        self.rtt_n = 0;
        self.tick = Some(now + secs(self.interval));
    }

    fn stop(&mut self) {
        self.sending = false;
    }

    fn rate(&self) -> f64 {
        self.x
    }

    fn rtt(&self) -> f64 {
        self.r
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
