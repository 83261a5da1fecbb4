//! What every loss-recovery mode of the TCP sender shares: sequence state, the scoreboard, RTT
//! and RTO, the controller, transmission, window reductions and statistics.

use super::{LossKind, LossRecord, TcpParams, TcpStats, RETX};
use crate::cc::{Controller, Held, LossEvent};
use crate::net::packet::{ecn, Packet};
use crate::sim::{clock_secs as to_secs, ns_f64, Rng, Time};
use crate::transport::rtt::RttEstimator;
use std::collections::VecDeque;

pub(super) struct Core {
    pub flow: u32,
    pub p: TcpParams,
    /// The controller (built-in laws unboxed: static calls on every ACK).
    pub cc: Held,
    pub snd_una: u32,
    pub snd_nxt: u32,
    pub snd_max: u32,
    /// No new data past this sequence number (the application stopped).
    pub data_limit: u32,
    pub dupacks: u32,
    pub in_recovery: bool,
    /// snd_max when the last recovery (or timeout) started: a later fast retransmit for a
    /// packet below it belongs to the same loss event. (0 once a SACK recovery under
    /// `ns2_agent` has ended, as ns-2's Sack1 clears its `recover_`.)
    pub recover: u32,
    /// snd_max at the last window reduction (loss, ECN or timeout).
    pub reduced_upto: u32,
    /// Flags of packets [snd_una, snd_max).
    pub sb: VecDeque<u8>,
    pub rtt: RttEstimator,
    /// The one packet being timed for the RTO estimator (seq, send time).
    pub timed: Option<(u32, Time)>,
    pub min_rtt: f64,
    /// When the retransmission timer should fire (None: not running).
    pub rto_deadline: Option<Time>,
    pub started: bool,
    pub stats: TcpStats,
    pub cwnd_t: Time,
    /// Set CWR on the next new data packet (after reacting to an ECN echo).
    pub cwr_pending: bool,
    noise: Option<Rng>,
    /// Window reductions, if `log_losses`.
    pub log: Vec<LossRecord>,
    /// The window in use instead of the controller's while a recovery mode fixes it (Linux
    /// fast recovery: the controller's `min_cwnd`).
    pub pinned: Option<f64>,
    /// A cap on the controller's window (Linux: the window moderated after recovery).
    pub cap: Option<f64>,
}

impl Core {
    pub fn new(flow: u32, p: TcpParams, cc: Box<dyn Controller>, noise: Rng) -> Self {
        let noise = if p.rtt_noise > 0.0 { Some(noise) } else { None };
        let rtt = RttEstimator::new(p.tick, p.min_rto, p.max_rto, p.initial_rto, p.max_backoff, p.clock_phase);
        Core {
            flow,
            p,
            cc: Held::new(cc),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_limit: u32::MAX,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            reduced_upto: 0,
            sb: VecDeque::new(),
            rtt,
            timed: None,
            min_rtt: f64::INFINITY,
            rto_deadline: None,
            started: false,
            stats: TcpStats::default(),
            cwnd_t: 0,
            cwr_pending: false,
            noise,
            log: Vec::new(),
            pinned: None,
            cap: None,
        }
    }

    /// The window in use (before the receiver window cap).
    #[inline]
    pub fn window(&self) -> f64 {
        match (self.pinned, self.cap) {
            (Some(w), _) => w,
            (None, Some(c)) => c.min(self.cc.window()),
            (None, None) => self.cc.window(),
        }
    }

    /// Congestion window in use, capped by the receiver window.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        self.window().min(self.p.max_window)
    }

    pub fn in_flight(&self) -> u32 {
        self.snd_max - self.snd_una
    }

    /// Account the window's time integral up to `now` (before it changes).
    #[inline]
    pub fn note_cwnd(&mut self, now: Time) {
        if self.started && now > self.cwnd_t {
            let dt = now - self.cwnd_t;
            self.stats.cwnd_area += self.cwnd() * ns_f64(dt);
            self.stats.active_ns += dt;
        }
        self.cwnd_t = now;
    }

    /// The per-ACK part every mode shares: the window integral, the RTT sample from the
    /// timestamp echo given to the controller (with the configured noise; packet timing is
    /// unaffected) and counted. Returns the sample as the controller saw it.
    #[inline]
    pub fn take_rtt_sample(&mut self, now: Time, pkt: &Packet) -> f64 {
        self.note_cwnd(now);
        let true_rtt = to_secs(now.saturating_sub(pkt.stamp));
        let rtt = match self.noise.as_mut() {
            Some(r) => true_rtt + r.range(0.0, 2.0 * self.p.rtt_noise),
            None => true_rtt,
        };
        if rtt < self.min_rtt {
            self.min_rtt = rtt;
        }
        self.cc.on_rtt_sample_with(|| to_secs(now), rtt);
        self.stats.rtt_sum += true_rtt;
        self.stats.rtt_seen_sum += rtt;
        self.stats.rtt_samples += 1;
        rtt
    }

    pub fn restart_timer(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rtt.rto_ns());
    }

    /// Restart the timer while data is outstanding, stop it otherwise.
    #[inline]
    pub fn rearm_timer(&mut self, now: Time) {
        if self.snd_una < self.snd_max {
            self.restart_timer(now);
        } else {
            self.rto_deadline = None;
        }
    }

    /// Count the RTO in force (its mean is reported).
    #[inline]
    pub fn count_rto(&mut self) {
        self.stats.rto_sum += self.rtt.rto();
        self.stats.rto_samples += 1;
    }

    #[inline(always)]
    pub fn transmit(&mut self, now: Time, seq: u32, out: &mut Vec<Packet>) {
        if seq < self.snd_max {
            self.stats.retransmissions += 1;
            if matches!(self.timed, Some((t, _)) if t == seq) {
                self.timed = None; // Karn: never time a retransmitted packet
            }
            let i = (seq - self.snd_una) as usize;
            if let Some(f) = self.sb.get_mut(i) {
                *f |= RETX;
            }
        } else {
            debug_assert_eq!(seq, self.snd_max);
            self.snd_max = seq + 1;
            self.sb.push_back(0);
            if self.timed.is_none() {
                self.timed = Some((seq, now));
            }
        }
        self.stats.sent += 1;
        let mut mark = if self.p.ecn { ecn::ECT } else { 0 };
        if self.cwr_pending && seq + 1 == self.snd_max {
            mark |= ecn::CWR;
            self.cwr_pending = false;
        }
        out.push(Packet::data(self.flow, seq, self.p.packet_size + self.p.header_size, now, mark));
        if self.rto_deadline.is_none() {
            self.restart_timer(now);
        }
    }

    #[inline]
    pub fn has_data(&self, seq: u32) -> bool {
        seq < self.snd_max || seq < self.data_limit
    }

    /// Send from snd_nxt up to snd_una + `window` (receiver window capped, at least 1).
    #[inline(always)]
    pub fn send_window(&mut self, window: f64, now: Time, out: &mut Vec<Packet>) {
        let wnd = window.min(self.p.max_window).max(1.0) as u32;
        let limit = self.snd_una.saturating_add(wnd);
        while self.snd_nxt < limit && self.has_data(self.snd_nxt) {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            self.transmit(now, seq, out);
        }
    }

    /// Send the next new packet if the application has data and the receiver window room;
    /// false if not.
    pub fn send_new(&mut self, now: Time, out: &mut Vec<Packet>) -> bool {
        let seq = self.snd_max;
        let room = (self.snd_una as f64 + self.p.max_window) > seq as f64;
        if !self.has_data(seq) || !room {
            return false;
        }
        self.snd_nxt = seq + 1;
        self.transmit(now, seq, out);
        true
    }

    pub fn record(&mut self, now: Time, kind: LossKind, before: f64) {
        if self.p.log_losses {
            self.log.push(LossRecord { time: now, kind, window_before: before, window_after: self.cwnd() });
        }
    }

    /// A loss event: the controller reduces its window once. Returns the window before.
    pub fn reduce(&mut self, now: Time, ecn: bool) -> f64 {
        let window = self.cwnd();
        let in_flight = self.in_flight();
        // ns-2 before 2006 (precisionReduce_ false): the law sees whole packets and leaves them.
        let seen = if self.p.precise_reduce { window } else { window.floor().max(1.0) };
        self.cc.on_loss_event(&LossEvent { now: to_secs(now), window: seen, in_flight, ecn });
        if !self.p.precise_reduce {
            self.cc.truncate_reduction();
        }
        self.reduced_upto = self.snd_max;
        self.stats.loss_events += 1;
        if ecn {
            self.stats.ecn_reactions += 1;
            self.cwr_pending = true;
        }
        window
    }

    pub fn loss_event(&mut self, now: Time, ecn: bool) {
        let before = self.reduce(now, ecn);
        self.record(now, if ecn { LossKind::Ecn } else { LossKind::FastRetransmit }, before);
    }

    /// The ACK of `ack` ends the RTO estimator's timed packet (Karn: never a retransmitted one).
    pub fn sample_timed(&mut self, now: Time, ack: u32) {
        if let Some((seq, sent)) = self.timed {
            if ack > seq {
                self.rtt.sample(to_secs(now - sent), to_secs(sent));
                self.timed = None;
            }
        }
    }
}
