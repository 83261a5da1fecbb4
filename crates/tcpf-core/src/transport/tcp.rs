//! The TCP sender. Sequence numbers count packets (as in ns-2). Loss recovery:
//! - Reno: fast retransmit, fast recovery with window inflation, leaves on the first new ACK;
//! - NewReno (RFC 6582): stays in recovery until the recovery point is acknowledged,
//!   retransmitting one hole per partial ACK;
//! - SACK (in the spirit of RFC 6675): a scoreboard of SACKed packets, `pipe` estimation, and
//!   retransmission of every packet deemed lost before new data;
//! - Linux (2.6.22, as ns-2's TCP-Linux): FACK loss marking, lost retransmissions resent without
//!   a timeout, rate halving down to the controller's `min_cwnd` (see `tcp/linux.rs`).
//!
//! A fast retransmit starts a new loss event only for a packet sent after the last window
//! reduction, so a loss event reduces the window once. RTO per RFC 6298 with a coarse clock
//! (see `rtt`), exponential backoff, Karn's rule, and go-back-N after a timeout.

use super::rtt::RttEstimator;
use crate::cc::{Ack, Controller, LossEvent, Timeout};
use crate::net::packet::{ecn, Packet};
use crate::sim::{secs, to_secs, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    Reno,
    NewReno,
    Sack,
    /// Linux 2.6.22 as in ns-2's TCP-Linux: FACK, lost-retransmission detection, rate
    /// halving to the controller's `min_cwnd` (see `tcp/linux.rs`).
    Linux,
}

impl Recovery {
    pub fn name(self) -> &'static str {
        match self {
            Recovery::Reno => "reno",
            Recovery::NewReno => "newreno",
            Recovery::Sack => "sack",
            Recovery::Linux => "linux",
        }
    }

    /// Whether the receiver must send SACK blocks.
    pub fn uses_sack(self) -> bool {
        matches!(self, Recovery::Sack | Recovery::Linux)
    }
}

/// Transport parameters (the scenario's `[tcp]` table and `max_window`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TcpParams {
    pub initial_window: f64,
    /// RTO clock granularity, seconds.
    pub tick: f64,
    pub min_rto: f64,
    pub max_rto: f64,
    pub initial_rto: f64,
    pub max_backoff: u32,
    /// Receiver window cap, packets (infinity: none).
    pub max_window: f64,
    /// Payload bytes of a data packet.
    pub packet_size: u32,
    /// TCP/IP header bytes added on the wire (ns-2's tcpip_base_hdr_size_).
    pub header_size: u32,
    pub ecn: bool,
    pub dupthresh: u32,
    /// RFC 3042 limited transmit: the first dupthresh−1 duplicate ACKs each release one new
    /// packet (ns-2's singledup_).
    pub limited_transmit: bool,
    /// Phase of this sender's RTO clock, seconds in [0, tick) (ns-2's boot_time_).
    pub clock_phase: f64,
    /// σ of the noise (uniform on [0, 2σ], seconds) added to the RTT samples the controller
    /// sees (liu2008 §6.4); packet timing is unaffected.
    pub rtt_noise: f64,
    /// Keep a record of every window reduction.
    pub log_losses: bool,
}

/// Why the window was reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    FastRetransmit,
    Timeout,
    Ecn,
}

impl LossKind {
    pub fn name(self) -> &'static str {
        match self {
            LossKind::FastRetransmit => "fast_retransmit",
            LossKind::Timeout => "timeout",
            LossKind::Ecn => "ecn",
        }
    }
}

/// One window reduction.
#[derive(Clone, Copy, Debug)]
pub struct LossRecord {
    pub time: Time,
    pub kind: LossKind,
    pub window_before: f64,
    pub window_after: f64,
}

const SACKED: u8 = 1;
const RETX: u8 = 2;
/// Marked lost, awaiting retransmission (`recovery = "linux"` only).
const LOST: u8 = 4;

mod linux;

/// Counters since the start of the run (the engine subtracts snapshots).
#[derive(Clone, Debug, Default)]
pub struct TcpStats {
    pub sent: u64,
    pub retransmissions: u64,
    pub loss_events: u64,
    pub timeouts: u64,
    pub ecn_reactions: u64,
    pub fast_retransmits: u64,
    pub rtt_sum: f64,
    pub rtt_samples: u64,
    pub rto_sum: f64,
    pub rto_samples: u64,
    /// Sum of the RTT samples as the controller saw them (with noise, if any).
    pub rtt_seen_sum: f64,
    /// ∫ window dt (packet·ns) and the time it covers.
    pub cwnd_area: f64,
    pub active_ns: u64,
}

impl TcpStats {
    /// Counts between an earlier snapshot and this one.
    pub fn minus(&self, e: &TcpStats) -> TcpStats {
        TcpStats {
            sent: self.sent - e.sent,
            retransmissions: self.retransmissions - e.retransmissions,
            loss_events: self.loss_events - e.loss_events,
            timeouts: self.timeouts - e.timeouts,
            ecn_reactions: self.ecn_reactions - e.ecn_reactions,
            fast_retransmits: self.fast_retransmits - e.fast_retransmits,
            rtt_sum: self.rtt_sum - e.rtt_sum,
            rtt_samples: self.rtt_samples - e.rtt_samples,
            rto_sum: self.rto_sum - e.rto_sum,
            rto_samples: self.rto_samples - e.rto_samples,
            rtt_seen_sum: self.rtt_seen_sum - e.rtt_seen_sum,
            cwnd_area: self.cwnd_area - e.cwnd_area,
            active_ns: self.active_ns - e.active_ns,
        }
    }
}

pub struct TcpSender {
    pub flow: u32,
    p: TcpParams,
    recovery: Recovery,
    cc: Box<dyn Controller>,
    snd_una: u32,
    snd_nxt: u32,
    snd_max: u32,
    /// No new data past this sequence number (the application stopped).
    data_limit: u32,
    dupacks: u32,
    in_recovery: bool,
    /// snd_max when the last recovery (or timeout) started: a later fast retransmit for a
    /// packet below it belongs to the same loss event.
    recover: u32,
    /// snd_max at the last window reduction (loss, ECN or timeout).
    reduced_upto: u32,
    /// Reno/NewReno window inflation during fast recovery.
    inflate: f64,
    /// Flags of packets [snd_una, snd_max).
    sb: VecDeque<u8>,
    rtt: RttEstimator,
    /// The one packet being timed for the RTO estimator (seq, send time).
    timed: Option<(u32, Time)>,
    min_rtt: f64,
    /// When the retransmission timer should fire (None: not running).
    pub rto_deadline: Option<Time>,
    started: bool,
    pub stats: TcpStats,
    cwnd_t: Time,
    /// Set CWR on the next new data packet (after reacting to an ECN echo).
    cwr_pending: bool,
    noise: Option<crate::sim::Rng>,
    /// Window reductions, if `log_losses`.
    pub log: Vec<LossRecord>,
    /// State of Linux-style recovery (`recovery = "linux"` only).
    lx: Option<Box<linux::LinuxRecovery>>,
}

impl TcpSender {
    /// `noise` is the random stream of the RTT-sample noise (used only if `p.rtt_noise > 0`).
    pub fn new(flow: u32, p: TcpParams, recovery: Recovery, cc: Box<dyn Controller>, noise: crate::sim::Rng) -> Self {
        let noise = if p.rtt_noise > 0.0 { Some(noise) } else { None };
        let rtt = RttEstimator::new(p.tick, p.min_rto, p.max_rto, p.initial_rto, p.max_backoff, p.clock_phase);
        TcpSender {
            flow,
            p,
            recovery,
            cc,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_limit: u32::MAX,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            reduced_upto: 0,
            inflate: 0.0,
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
            lx: if recovery == Recovery::Linux { Some(Box::new(linux::LinuxRecovery::new())) } else { None },
        }
    }

    /// Congestion window as the controller sees it, capped by the receiver window.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        match self.lx.as_deref() {
            None => self.cc.window().min(self.p.max_window),
            Some(lx) => self.linux_window(lx).min(self.p.max_window),
        }
    }

    pub fn ssthresh(&self) -> f64 {
        self.cc.ssthresh()
    }

    /// A fault the controller reported (the run must stop).
    #[inline]
    pub fn controller_error(&self) -> Option<String> {
        self.cc.error()
    }

    pub fn srtt(&self) -> f64 {
        self.rtt.srtt()
    }

    pub fn in_flight(&self) -> u32 {
        self.snd_max - self.snd_una
    }

    /// Account the window's time integral up to `now` (before it changes).
    #[inline]
    fn note_cwnd(&mut self, now: Time) {
        if self.started && now > self.cwnd_t {
            let dt = now - self.cwnd_t;
            self.stats.cwnd_area += self.cwnd() * dt as f64;
            self.stats.active_ns += dt;
        }
        self.cwnd_t = now;
    }

    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.started = true;
        self.cwnd_t = now;
        self.send_allowed(now, out);
    }

    /// The application stops: no new data after what was already sent.
    pub fn stop(&mut self, now: Time) {
        self.note_cwnd(now);
        self.data_limit = self.snd_max;
        self.started = false;
    }

    /// Counters as of `t` (the window integral brought up to `t`).
    pub fn snapshot(&mut self, t: Time) -> TcpStats {
        self.note_cwnd(t);
        self.stats.clone()
    }

    fn restart_timer(&mut self, now: Time) {
        self.rto_deadline = Some(now + secs(self.rtt.rto()));
    }

    fn transmit(&mut self, now: Time, seq: u32, out: &mut Vec<Packet>) {
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
            if let Some(lx) = self.lx.as_deref_mut() {
                lx.push();
            }
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
    fn has_data(&self, seq: u32) -> bool {
        seq < self.snd_max || seq < self.data_limit
    }

    /// Send what the window allows.
    fn send_allowed(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.lx.is_some() {
            self.linux_send(now, out);
            return;
        }
        if self.in_recovery && self.recovery == Recovery::Sack {
            self.sack_send(now, out);
            return;
        }
        let wnd = (self.cc.window() + self.inflate).min(self.p.max_window).max(1.0) as u32;
        let limit = self.snd_una.saturating_add(wnd);
        while self.snd_nxt < limit && self.has_data(self.snd_nxt) {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            self.transmit(now, seq, out);
        }
    }

    /// Sequence number below which every un-SACKed packet counts as lost (RFC 6675 IsLost:
    /// at least DupThresh SACKed packets above it).
    fn lost_below(&self) -> u32 {
        let mut count = 0;
        for (i, f) in self.sb.iter().enumerate().rev() {
            if f & SACKED != 0 {
                count += 1;
                if count >= self.p.dupthresh {
                    return self.snd_una + i as u32;
                }
            }
        }
        self.snd_una
    }

    fn pipe(&self, lost_below: u32) -> u32 {
        let mut pipe = 0;
        for (i, f) in self.sb.iter().enumerate() {
            if f & SACKED == 0 {
                let seq = self.snd_una + i as u32;
                if seq >= lost_below {
                    pipe += 1;
                }
                if f & RETX != 0 {
                    pipe += 1;
                }
            }
        }
        pipe
    }

    fn sack_send(&mut self, now: Time, out: &mut Vec<Packet>) {
        let cwnd = self.cwnd();
        let lost_below = self.lost_below();
        let mut pipe = self.pipe(lost_below) as f64;
        let mut scan = 0usize;
        while cwnd - pipe >= 1.0 {
            // First un-SACKed, not yet retransmitted packet deemed lost.
            let mut next = None;
            while scan < self.sb.len() {
                let seq = self.snd_una + scan as u32;
                if seq >= lost_below {
                    break;
                }
                if self.sb[scan] & (SACKED | RETX) == 0 {
                    next = Some(seq);
                    scan += 1;
                    break;
                }
                scan += 1;
            }
            match next {
                Some(seq) => self.transmit(now, seq, out),
                None => {
                    if !self.send_new(now, out) {
                        break;
                    }
                }
            }
            pipe += 1.0;
        }
    }

    /// Send the next new packet if the application has data and the receiver window room;
    /// false if not.
    fn send_new(&mut self, now: Time, out: &mut Vec<Packet>) -> bool {
        let seq = self.snd_max;
        let room = (self.snd_una as f64 + self.p.max_window) > seq as f64;
        if !self.has_data(seq) || !room {
            return false;
        }
        self.snd_nxt = seq + 1;
        self.transmit(now, seq, out);
        true
    }

    /// RFC 3042: one new packet per early duplicate ACK, within cwnd + dupacks.
    fn limited_transmit(&mut self, now: Time, out: &mut Vec<Packet>) {
        let seq = self.snd_max;
        let wnd = (self.cc.window() + self.dupacks as f64).min(self.p.max_window) as u32;
        if self.snd_nxt == self.snd_max && seq < self.snd_una.saturating_add(wnd) && self.has_data(seq) {
            self.snd_nxt = seq + 1;
            self.transmit(now, seq, out);
        }
    }

    fn record(&mut self, now: Time, kind: LossKind, before: f64) {
        if self.p.log_losses {
            self.log.push(LossRecord { time: now, kind, window_before: before, window_after: self.cwnd() });
        }
    }

    /// A loss event: the controller reduces its window once. Returns the window before.
    fn reduce(&mut self, now: Time, ecn: bool) -> f64 {
        let window = self.cwnd();
        let in_flight = self.in_flight();
        self.cc.on_loss_event(&LossEvent { now: to_secs(now), window, in_flight, ecn });
        self.reduced_upto = self.snd_max;
        self.stats.loss_events += 1;
        if ecn {
            self.stats.ecn_reactions += 1;
            self.cwr_pending = true;
        }
        window
    }

    fn loss_event(&mut self, now: Time, ecn: bool) {
        let before = self.reduce(now, ecn);
        self.record(now, if ecn { LossKind::Ecn } else { LossKind::FastRetransmit }, before);
    }

    /// The ACK of `ack` ends the RTO estimator's timed packet (Karn: never a retransmitted one).
    fn sample_timed(&mut self, now: Time, ack: u32) {
        if let Some((seq, sent)) = self.timed {
            if ack > seq {
                self.rtt.sample(to_secs(now - sent), to_secs(sent));
                self.timed = None;
            }
        }
    }

    fn enter_recovery(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.snd_una >= self.reduced_upto {
            self.loss_event(now, false);
        }
        self.stats.fast_retransmits += 1;
        // Abandon the RTT measurement in progress (BSD and ns-2 do): the timed packet may sit
        // above the hole and be acknowledged only after the repair.
        self.timed = None;
        self.in_recovery = true;
        self.recover = self.snd_max;
        match self.recovery {
            Recovery::Reno | Recovery::NewReno => {
                self.inflate = self.p.dupthresh as f64;
                self.transmit(now, self.snd_una, out);
                self.send_allowed(now, out);
            }
            Recovery::Sack | Recovery::Linux => {
                for f in self.sb.iter_mut() {
                    *f &= !RETX;
                }
                self.transmit(now, self.snd_una, out);
                self.sack_send(now, out);
            }
        }
        self.restart_timer(now);
    }

    fn apply_sack(&mut self, pkt: &Packet) {
        for &(start, end) in pkt.sack_blocks() {
            let lo = start.max(self.snd_una);
            let hi = end.min(self.snd_max);
            for seq in lo..hi {
                self.sb[(seq - self.snd_una) as usize] |= SACKED;
            }
        }
    }

    /// An ACK arrives at `now`.
    pub fn on_ack(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Packet>) {
        self.note_cwnd(now);
        let ack = pkt.seq;
        let now_s = to_secs(now);
        // Per-ACK RTT sample from the timestamp echo.
        let true_rtt = to_secs(now.saturating_sub(pkt.stamp));
        // The controller sees the sample plus the configured noise; timing is unaffected.
        let rtt = match self.noise.as_mut() {
            Some(r) => true_rtt + r.range(0.0, 2.0 * self.p.rtt_noise),
            None => true_rtt,
        };
        if rtt < self.min_rtt {
            self.min_rtt = rtt;
        }
        self.cc.on_rtt_sample(now_s, rtt);
        self.stats.rtt_sum += true_rtt;
        self.stats.rtt_seen_sum += rtt;
        self.stats.rtt_samples += 1;
        if self.lx.is_some() {
            self.linux_on_ack(now, pkt, rtt, out);
            return;
        }
        if self.recovery == Recovery::Sack && pkt.nsack > 0 {
            self.apply_sack(pkt);
        }
        if ack > self.snd_una && ack <= self.snd_max {
            let acked = ack - self.snd_una;
            self.sample_timed(now, ack);
            self.sb.drain(..acked as usize);
            self.snd_una = ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            self.dupacks = 0;
            if self.in_recovery {
                if ack >= self.recover {
                    self.in_recovery = false;
                    self.inflate = 0.0;
                } else {
                    match self.recovery {
                        Recovery::Reno => {
                            self.in_recovery = false;
                            self.inflate = 0.0;
                        }
                        Recovery::NewReno => {
                            self.inflate = (self.inflate - acked as f64 + 1.0).max(0.0);
                            self.transmit(now, self.snd_una, out);
                        }
                        Recovery::Sack | Recovery::Linux => {}
                    }
                }
            } else if pkt.ecn & ecn::ECE == 0 {
                // An ACK carrying an ECN echo never opens the window (RFC 3168 §6.1.2).
                let in_flight = self.in_flight();
                self.cc.on_ack(&Ack { now: now_s, acked, rtt: Some(rtt), min_rtt: self.min_rtt, in_flight });
            }
            if !self.in_recovery && pkt.ecn & ecn::ECE != 0 && ack > self.reduced_upto {
                self.loss_event(now, true);
            }
            if self.snd_una < self.snd_max {
                self.restart_timer(now);
            } else {
                self.rto_deadline = None;
            }
            self.stats.rto_sum += self.rtt.rto();
            self.stats.rto_samples += 1;
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                if self.recovery != Recovery::Sack {
                    self.inflate += 1.0;
                }
            } else if self.dupacks >= self.p.dupthresh && self.snd_una >= self.recover {
                self.enter_recovery(now, out);
                return;
            } else if self.p.limited_transmit && self.dupacks < self.p.dupthresh {
                self.limited_transmit(now, out);
                return;
            }
        }
        self.send_allowed(now, out);
    }

    /// The retransmission timer fired.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.note_cwnd(now);
        self.stats.timeouts += 1;
        self.stats.loss_events += 1;
        let window = self.cwnd();
        self.cc.on_timeout(&Timeout { now: to_secs(now), window, in_flight: self.in_flight() });
        self.record(now, LossKind::Timeout, window);
        self.rtt.back_off();
        self.in_recovery = false;
        self.inflate = 0.0;
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.reduced_upto = self.snd_max;
        self.timed = None;
        self.rto_deadline = None;
        if self.lx.is_some() {
            self.linux_on_timeout(now, out);
        } else {
            for f in self.sb.iter_mut() {
                *f = 0;
            }
            self.snd_nxt = self.snd_una;
            self.send_allowed(now, out);
        }
        if self.snd_una < self.snd_max {
            self.restart_timer(now);
        }
    }
}
