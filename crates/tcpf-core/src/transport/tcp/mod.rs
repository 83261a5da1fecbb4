//! The TCP sender. Sequence numbers count packets (as in ns-2). The sender (`core.rs`) keeps
//! what every loss-recovery mode shares: sequence state, the scoreboard, RTT and RTO, the
//! controller, transmission and statistics. Each mode has its own file, statically dispatched
//! through [`Mode`]:
//! - Reno (`reno.rs`): fast retransmit, fast recovery with window inflation, leaves on the
//!   first new ACK;
//! - NewReno (`newreno.rs`, RFC 6582): stays in recovery until the recovery point is
//!   acknowledged, retransmitting one hole per partial ACK;
//! - SACK (`sack.rs`, in the spirit of RFC 6675): a scoreboard of SACKed packets, `pipe`
//!   estimation, and retransmission of every packet deemed lost before new data;
//! - Linux (`linux.rs`, 2.6.22 as ns-2's TCP-Linux): FACK loss marking, lost retransmissions
//!   resent without a timeout, rate halving down to the controller's `min_cwnd`.
//!
//! Reno, NewReno and SACK share the duplicate-ACK skeleton of `classic.rs`.
//!
//! A fast retransmit starts a new loss event only for a packet sent after the last window
//! reduction, so a loss event reduces the window once. RTO per RFC 6298 with a coarse clock
//! (see `rtt`), exponential backoff, Karn's rule, and go-back-N after a timeout.

use crate::cc::{Controller, Timeout};
use crate::net::packet::Packet;
use crate::sim::{to_secs, Time};

mod classic;
mod core;
mod linux;
mod newreno;
mod reno;
mod sack;

use self::core::Core;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    Reno,
    NewReno,
    /// NewReno whose timer only the first partial ACK of a recovery restarts (RFC 6582's
    /// Impatient variant; ns-2's `Agent/TCP/Newreno` default), see `tcp/newreno.rs`.
    NewRenoImpatient,
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
            Recovery::NewRenoImpatient => "newreno-impatient",
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
#[derive(Clone, Debug, PartialEq)]
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
    /// False: a decrease (loss event or timeout) sees the window truncated to whole packets and
    /// leaves whole packets, as ns-2 before 2006 (`precisionReduce_ false`).
    pub precise_reduce: bool,
    /// ns-2's TCP agent rules where they differ from RFC 5681 (`tcp/tcp.cc`, `tcp-reno.cc`,
    /// `tcp-newreno.cc`): the reductions of [`crate::cc::Window::ns2`]; with Reno and NewReno
    /// recovery the ACK that ends fast recovery grows the window once (`recv_newack_helper`
    /// calls `opencwnd`), and a limited-transmit duplicate ACK sends the next packet of a
    /// go-back-N after a timeout (`send_one` sends `t_seqno_`), not only new data; SACK
    /// recovery follows `tcp-sack1.cc` instead of RFC 6675 (`sack.rs`).
    pub ns2_agent: bool,
    /// Phase of this sender's RTO clock, seconds in [0, tick) (ns-2's boot_time_).
    pub clock_phase: f64,
    /// σ of the noise (uniform on [0, 2σ], seconds) added to the RTT samples the controller
    /// sees (liu2008 §6.4); packet timing is unaffected.
    pub rtt_noise: f64,
    /// Keep a record of every window reduction.
    pub log_losses: bool,
}

/// Why the window was reduced (or, for a rate-based flow, that its receiver saw a loss event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    FastRetransmit,
    Timeout,
    Ecn,
    /// A loss event detected by a rate-based flow's receiver (TFRC, TEAR, TFRCP: the events
    /// its `loss_events()` counts); the flow has no window, so the record's windows are NaN.
    RateLossEvent,
}

impl LossKind {
    pub fn name(self) -> &'static str {
        match self {
            LossKind::FastRetransmit => "fast_retransmit",
            LossKind::Timeout => "timeout",
            LossKind::Ecn => "ecn",
            LossKind::RateLossEvent => "rate_loss_event",
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

/// The loss-recovery mode of a sender and its own state.
enum Mode {
    Reno(reno::Reno),
    NewReno(newreno::NewReno),
    Sack(sack::Sack),
    Linux(Box<linux::Linux>),
}

impl Mode {
    fn new(recovery: Recovery) -> Self {
        match recovery {
            Recovery::Reno => Mode::Reno(reno::Reno::default()),
            Recovery::NewReno => Mode::NewReno(newreno::NewReno::new(false)),
            Recovery::NewRenoImpatient => Mode::NewReno(newreno::NewReno::new(true)),
            Recovery::Sack => Mode::Sack(sack::Sack::default()),
            Recovery::Linux => Mode::Linux(Box::default()),
        }
    }

    /// Send what the window allows.
    #[inline]
    fn send(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        match self {
            Mode::Reno(m) => classic::send(m, c, now, out),
            Mode::NewReno(m) => classic::send(m, c, now, out),
            Mode::Sack(m) => classic::send(m, c, now, out),
            Mode::Linux(m) => m.send(c, now, out),
        }
    }

    /// An ACK, its RTT sample (as the controller sees it) already taken.
    #[inline]
    fn on_ack(&mut self, c: &mut Core, now: Time, pkt: &Packet, rtt: f64, out: &mut Vec<Packet>) {
        match self {
            Mode::Reno(m) => classic::on_ack(m, c, now, pkt, rtt, out),
            Mode::NewReno(m) => classic::on_ack(m, c, now, pkt, rtt, out),
            Mode::Sack(m) => classic::on_ack(m, c, now, pkt, rtt, out),
            Mode::Linux(m) => m.on_ack(c, now, pkt, rtt, out),
        }
    }

    /// The retransmission timer fired (the controller has already been told).
    fn on_timeout(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        match self {
            Mode::Reno(m) => classic::on_timeout(m, c, now, out),
            Mode::NewReno(m) => classic::on_timeout(m, c, now, out),
            Mode::Sack(m) => classic::on_timeout(m, c, now, out),
            Mode::Linux(m) => m.on_timeout(c, now, out),
        }
    }
}

pub struct TcpSender {
    c: Core,
    mode: Mode,
}

impl TcpSender {
    /// `noise` is the random stream of the RTT-sample noise (used only if `p.rtt_noise > 0`).
    pub fn new(flow: u32, p: TcpParams, recovery: Recovery, cc: Box<dyn Controller>, noise: crate::sim::Rng) -> Self {
        TcpSender { c: Core::new(flow, p, cc, noise), mode: Mode::new(recovery) }
    }

    /// Congestion window in use, capped by the receiver window.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        self.c.cwnd()
    }

    /// A fault the controller reported (the run must stop).
    #[inline]
    pub fn controller_error(&self) -> Option<String> {
        self.c.cc.error()
    }

    pub fn srtt(&self) -> f64 {
        self.c.rtt.srtt()
    }

    /// The controller's slow-start threshold (infinite before the first decrease).
    pub fn ssthresh(&self) -> f64 {
        self.c.cc.ssthresh()
    }

    pub fn in_flight(&self) -> u32 {
        self.c.in_flight()
    }

    /// When the retransmission timer should fire (None: not running).
    #[inline]
    pub fn rto_deadline(&self) -> Option<Time> {
        self.c.rto_deadline
    }

    /// Counters since the start of the run.
    pub fn stats(&self) -> &TcpStats {
        &self.c.stats
    }

    /// Bytes of per-packet state held: the scoreboard (one entry per packet outstanding) and
    /// the loss log (for the run's memory guard).
    pub fn held_bytes(&self) -> u64 {
        (self.c.sb.capacity() + self.c.log.capacity() * std::mem::size_of::<LossRecord>()) as u64
    }

    /// The window reductions recorded so far (if `log_losses`), emptying the record.
    pub fn take_log(&mut self) -> Vec<LossRecord> {
        std::mem::take(&mut self.c.log)
    }

    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.c.started = true;
        self.c.cwnd_t = now;
        self.mode.send(&mut self.c, now, out);
    }

    /// The application stops: no new data after what was already sent.
    pub fn stop(&mut self, now: Time) {
        self.c.note_cwnd(now);
        self.c.data_limit = self.c.snd_max;
        self.c.started = false;
    }

    /// Counters as of `t` (the window integral brought up to `t`).
    pub fn snapshot(&mut self, t: Time) -> TcpStats {
        self.c.note_cwnd(t);
        self.c.stats.clone()
    }

    /// An ACK arrives at `now`.
    #[inline]
    pub fn on_ack(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Packet>) {
        let rtt = self.c.take_rtt_sample(now, pkt);
        self.mode.on_ack(&mut self.c, now, pkt, rtt, out);
    }

    /// The retransmission timer fired.
    pub fn on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        let c = &mut self.c;
        c.note_cwnd(now);
        c.stats.timeouts += 1;
        c.stats.loss_events += 1;
        let window = c.cwnd();
        let seen = if c.p.precise_reduce { window } else { window.floor().max(1.0) };
        c.cc.on_timeout(&Timeout { now: to_secs(now), window: seen, in_flight: c.in_flight() });
        if !c.p.precise_reduce {
            c.cc.truncate_reduction();
        }
        c.record(now, LossKind::Timeout, window);
        c.rtt.back_off();
        c.in_recovery = false;
        c.pinned = None;
        c.dupacks = 0;
        c.recover = c.snd_max;
        c.reduced_upto = c.snd_max;
        c.timed = None;
        c.rto_deadline = None;
        self.mode.on_timeout(&mut self.c, now, out);
        if self.c.snd_una < self.c.snd_max {
            self.c.restart_timer(now);
        }
    }
}

/// A standard-TCP sender for the recovery modes' unit tests (`test_params`): `recovery`,
/// initial window `window`, and with `ns2_agent` ns-2's agent rules (the window arithmetic as
/// the engine gives the laws of ns-2's own agents).
#[cfg(test)]
pub(crate) fn test_sender(recovery: Recovery, window: f64, ns2_agent: bool, limited_transmit: bool) -> TcpSender {
    let p = crate::registry::validate_window("tcp", &serde_json::Map::new()).unwrap();
    let mut ctl = crate::registry::build_window(&p, window, f64::INFINITY).unwrap();
    if ns2_agent {
        ctl.ns2_window_rules();
    }
    let p = TcpParams { ns2_agent, limited_transmit, ..test_params(window) };
    TcpSender::new(0, p, recovery, ctl, crate::sim::Rng::new(1))
}

/// A [`test_sender`] of initial window `window` that has sent 0..window and had packet 0
/// acknowledged (ns-2 fast-retransmits nothing before it), which sent window and window + 1.
#[cfg(test)]
pub(crate) fn test_sender_past_packet_0(recovery: Recovery, window: f64, ns2_agent: bool, limited_transmit: bool) -> TcpSender {
    let mut s = test_sender(recovery, window, ns2_agent, limited_transmit);
    let mut out = Vec::new();
    s.start(0, &mut out);
    assert_eq!(out.len(), window as usize);
    let w = window as u32;
    assert_eq!(test_ack(&mut s, 0.1, 1, None), vec![w, w + 1]);
    s
}

/// Give `s` at `t` seconds the ACK of `n` with at most one SACK block; returns the sequence
/// numbers it sent.
#[cfg(test)]
pub(crate) fn test_ack(s: &mut TcpSender, t: f64, n: u32, block: Option<(u32, u32)>) -> Vec<u32> {
    use crate::sim::secs;
    let mut a = Packet::ack(0, n, 40, secs(t) - secs(0.1));
    if let Some(b) = block {
        a.sack[0] = b;
        a.nsack = 1;
    }
    let mut out = Vec::new();
    s.on_ack(secs(t), &a, &mut out);
    out.iter().map(|p| p.seq).collect()
}

/// TCP parameters for the recovery modes' unit tests: ns-2's defaults, no window cap.
#[cfg(test)]
pub(crate) fn test_params(initial_window: f64) -> TcpParams {
    TcpParams {
        initial_window,
        tick: 0.01,
        min_rto: 0.2,
        max_rto: 60.0,
        initial_rto: 3.0,
        max_backoff: 64,
        max_window: f64::INFINITY,
        packet_size: 1000,
        header_size: 40,
        ecn: false,
        dupthresh: 3,
        limited_transmit: false,
        precise_reduce: true,
        ns2_agent: false,
        clock_phase: 0.0,
        rtt_noise: 0.0,
        log_losses: false,
    }
}
