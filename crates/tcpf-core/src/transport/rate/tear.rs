//! TEAR (Rhee, Ozdemir, Yi 2000): the receiver emulates TCP's congestion window from the
//! arrivals — slow start, +1/W per packet in congestion avoidance, halving once per round on
//! loss — and records the average window of each epoch (the rounds between two loss events).
//! Once per RTT it reports rate = weighted average of the last epochs' windows × s / RTT,
//! and the sender paces at that rate.

use super::{interval_weights, num, Endpoints, Feedback, Pacer, RateReceiver, RateSender};
use crate::cc::params::{AlgorithmInfo, ParamError, Params, Taxonomy};
use crate::net::packet::Packet;
use crate::sim::{secs, to_secs, Time};
use std::collections::VecDeque;

/// TEAR's parameters, source and tsao2007 Table 3 class.
pub fn info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "tear",
        family: "rate-based",
        summary: "TEAR: the receiver emulates TCP's window per round and reports the weighted average window over the last epochs divided by the RTT",
        source: "Rhee, Ozdemir, Yi 2000; tsao2007 uses 8 epochs",
        params: vec![num("history", 8.0, 1.0, Some(64.0), "epochs", "epochs (loss-free periods) averaged, with TFRC's weights")],
        aliases: vec![],
        taxonomy: Some(Taxonomy { fairness: "rate-based", increase: "historical", curve: "linear", history: "fixed" }),
        notes: "The sender paces at the reported rate; the receiver reports once per RTT.",
        check: None,
        named_numbers: false,
    }
}

/// Sender and receiver for validated parameters; `s` is the packet size (bytes).
pub fn build(p: &Params, s: u32) -> Result<Endpoints, ParamError> {
    Ok((Box::new(Tear::new(s as f64)), Box::new(TearReceiver::new(s as f64, p.get("history")? as usize))))
}

pub struct Tear {
    pace: Pacer,
    timeouts: u64,
}

impl Tear {
    pub fn new(s: f64) -> Self {
        Tear { pace: Pacer::new(s, s), timeouts: 0 }
    }
}

impl RateSender for Tear {
    pacer_in_field!();

    fn start(&mut self, now: Time) {
        self.pace.sending = true;
        self.pace.arm_nofeedback(now);
    }

    fn on_feedback(&mut self, now: Time, fb: &Feedback) {
        self.pace.rtt_sample(now, fb, 0.1);
        if fb.rate > 0.0 {
            self.pace.x = fb.rate.max(self.pace.s / 64.0);
        }
        self.pace.arm_nofeedback(now);
    }

    fn on_timer(&mut self, now: Time) {
        self.timeouts += 1;
        self.pace.x = (self.pace.x / 2.0).max(self.pace.s / 64.0);
        self.pace.arm_nofeedback(now);
    }

    fn timeouts(&self) -> u64 {
        self.timeouts
    }
}

pub struct TearReceiver {
    s: f64,
    weights: Vec<f64>,
    next: u32,
    delivered: u64,
    loss_events: u64,
    cwnd: f64,
    ssthresh: f64,
    /// Packets left in the current emulated round, and the round's window.
    round_left: f64,
    /// Sum of the windows of this epoch's rounds, and their number.
    epoch_sum: f64,
    epoch_rounds: u32,
    /// Average windows of closed epochs, newest first.
    epochs: VecDeque<f64>,
    /// Start time (s) of the round in which the last loss event was taken.
    last_loss_round: Option<f64>,
    round_start: f64,
    last_stamp: Time,
    last_arrival: Time,
    rtt: f64,
    timer: Option<Time>,
    reported: bool,
}

impl TearReceiver {
    pub fn new(s: f64, n: usize) -> Self {
        TearReceiver {
            s,
            weights: interval_weights(n),
            next: 0,
            delivered: 0,
            loss_events: 0,
            cwnd: 1.0,
            ssthresh: f64::INFINITY,
            round_left: 1.0,
            epoch_sum: 0.0,
            epoch_rounds: 0,
            epochs: VecDeque::new(),
            last_loss_round: None,
            round_start: 0.0,
            last_stamp: 0,
            last_arrival: 0,
            rtt: 0.0,
            timer: None,
            reported: false,
        }
    }

    fn end_round(&mut self, t: f64) {
        self.epoch_sum += self.cwnd;
        self.epoch_rounds += 1;
        self.round_left = self.cwnd.max(1.0);
        self.round_start = t;
    }

    /// Weighted average window over the epochs, counting the open one only if it raises it
    /// (as TFRC's I_0).
    fn mean_window(&self) -> f64 {
        let open = if self.epoch_rounds > 0 { self.epoch_sum / self.epoch_rounds as f64 } else { self.cwnd };
        if self.epochs.is_empty() {
            return open.max(self.cwnd);
        }
        let w = &self.weights;
        let (mut a, mut wa) = (open * w[0], w[0]);
        for (i, x) in self.epochs.iter().enumerate().take(w.len() - 1) {
            a += x * w[i + 1];
            wa += w[i + 1];
        }
        let (mut b, mut wb) = (0.0, 0.0);
        for (i, x) in self.epochs.iter().enumerate() {
            b += x * w[i];
            wb += w[i];
        }
        (a / wa).max(b / wb)
    }

    fn report(&mut self, now: Time) -> Feedback {
        let rtt = self.rtt.max(1e-3);
        self.reported = true;
        self.timer = Some(now + secs(rtt));
        Feedback { stamp: self.last_stamp, delay: now - self.last_arrival, rate: self.mean_window() * self.s / rtt, ..Feedback::default() }
    }
}

impl RateReceiver for TearReceiver {
    fn on_data(&mut self, now: Time, pkt: &Packet, sender_rtt: f64) -> Option<Feedback> {
        if sender_rtt > 0.0 {
            self.rtt = sender_rtt;
        }
        if pkt.seq < self.next {
            return None;
        }
        let t = to_secs(now);
        if pkt.seq > self.next && self.delivered > 0 {
            // A loss: at most one window cut per emulated round.
            if self.last_loss_round != Some(self.round_start) {
                self.last_loss_round = Some(self.round_start);
                self.loss_events += 1;
                if self.epoch_rounds > 0 {
                    self.epochs.push_front(self.epoch_sum / self.epoch_rounds as f64);
                    self.epochs.truncate(self.weights.len());
                }
                self.epoch_sum = 0.0;
                self.epoch_rounds = 0;
                self.ssthresh = (self.cwnd / 2.0).max(1.0);
                self.cwnd = self.ssthresh;
            }
        }
        self.next = pkt.seq + 1;
        self.delivered += 1;
        self.last_stamp = pkt.stamp;
        self.last_arrival = now;
        if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
        self.round_left -= 1.0;
        if self.round_left <= 0.0 {
            self.end_round(t);
        }
        if !self.reported {
            return Some(self.report(now));
        }
        None
    }

    fn timer(&self) -> Option<Time> {
        self.timer
    }

    fn on_timer(&mut self, now: Time) -> Option<Feedback> {
        Some(self.report(now))
    }

    fn delivered(&self) -> u64 {
        self.delivered
    }

    fn loss_events(&self) -> u64 {
        self.loss_events
    }
}
