//! `recovery = "linux"`: loss recovery as Linux 2.6.22 does it, in the form ns-2's TCP-Linux
//! (`Agent/TCP/Linux`, the peer of every Linux congestion module in the ns-2 bank) implements:
//!
//! - **FACK loss marking**: an un-SACKed packet is lost once a packet at least
//!   `dupthresh + 1` above it has been SACKed (no duplicate-ACK counting);
//! - **lost-retransmission detection**: a retransmission is lost again once a packet sent
//!   after it is SACKed, or a retransmission sent `dupthresh + 1` later is acknowledged, and
//!   is sent again without waiting for the timer;
//! - **in flight** = sent − SACKed − marked lost (a retransmission counts once), so SACKed
//!   packets free room for new data even before recovery starts;
//! - **rate halving**: on entering recovery the controller reduces its window, the window in
//!   use becomes the controller's `min_cwnd()` (half the threshold for the modules that use
//!   `tcp_reno_min_cwnd`, the threshold otherwise), and the flight falls from the old window
//!   by one packet per two ACKs until it reaches it; the window does not grow in recovery;
//! - at the end of recovery, a window still below the controller's is **moderated** to the
//!   flight + 3 packets (`tcp_max_burst`) and slow-starts back (one packet per ACK);
//! - a **timeout** marks every un-SACKed packet lost but keeps the SACKed ones (no go-back-N).
//!
//! Modern Linux replaces rate halving by PRR (RFC 6937); this mode is the 2.6.22 behaviour the
//! ns-2 modules run with. See docs/ns2-notes.md ("Fast recovery in TCP/Linux").

use super::core::Core;
use super::{LossKind, LOST, RETX, SACKED};
use crate::cc::{Ack, Controller as _};
use crate::net::packet::{ecn, Packet};
use crate::sim::{clock_secs as to_secs, Time};
use crate::transport::seqruns::SeqRuns;
use std::collections::VecDeque;

/// One retransmission still in flight: (sequence, first new sequence at the time, id).
#[derive(Clone, Copy)]
struct Rtx {
    seq: u32,
    snd_max_at: u32,
    id: u32,
}

/// The state Linux-style recovery keeps besides the sender's scoreboard. The window in use
/// during fast recovery and the moderated window after it are the sender's `pinned` and `cap`.
pub(super) struct Linux {
    /// Retransmission id of each packet in [snd_una, snd_max) (0: never retransmitted),
    /// aligned with the sender's scoreboard (extended by [`Linux::sync`] for new packets).
    ids: VecDeque<u32>,
    /// Retransmissions in the order they were sent (ids increase, snd_max_at never falls).
    rtx: VecDeque<Rtx>,
    next_id: u32,
    /// Largest id among the retransmissions acknowledged or SACKed so far.
    acked_id: u32,
    /// Highest SACKed sequence number (None: no SACK seen since the scoreboard was empty).
    high_sacked: Option<u32>,
    /// Packets below this have been checked by the FACK rule.
    marked_upto: u32,
    /// No packet below this awaits retransmission.
    lost_from: u32,
    sacked: u32,
    /// The SACKed packets (an ACK's blocks visit only the packets they newly SACK).
    runs: SeqRuns,
    lost: u32,
    /// In the Loss state (after a timeout) rather than fast recovery.
    loss_state: bool,
    /// Rate halving: the flight allowed while it falls from the old window.
    next_pif: u32,
}

impl Default for Linux {
    fn default() -> Self {
        Linux {
            ids: VecDeque::new(),
            rtx: VecDeque::new(),
            next_id: 1,
            acked_id: 0,
            high_sacked: None,
            marked_upto: 0,
            lost_from: 0,
            sacked: 0,
            runs: SeqRuns::default(),
            lost: 0,
            loss_state: false,
            next_pif: 0,
        }
    }
}

impl Linux {
    /// Align `ids` with the scoreboard: packets sent since are new (never retransmitted).
    #[inline]
    fn sync(&mut self, c: &Core) {
        if self.ids.len() < c.sb.len() {
            self.ids.resize(c.sb.len(), 0);
        }
    }

    /// Packets in flight: sent and neither acknowledged, SACKed nor marked lost.
    fn in_flight(&self, c: &Core) -> u32 {
        (c.snd_max - c.snd_una) - self.sacked - self.lost
    }

    /// Mark `i` (an index into the scoreboard) lost.
    fn mark_lost(&mut self, c: &mut Core, i: usize) {
        let seq = c.snd_una + i as u32;
        c.sb[i] = (c.sb[i] & !RETX) | LOST;
        self.lost += 1;
        if seq < self.lost_from {
            self.lost_from = seq;
        }
    }

    /// Apply the ACK's SACK blocks and its cumulative acknowledgement to the scoreboard.
    fn scoreboard(&mut self, c: &mut Core, pkt: &Packet, acked: u32) {
        // Cumulatively acknowledged packets leave the scoreboard.
        for _ in 0..acked {
            let f = c.sb.pop_front().unwrap_or(0);
            let id = self.ids.pop_front().unwrap_or(0);
            if f & SACKED != 0 {
                self.sacked -= 1;
            } else if f & LOST != 0 {
                self.lost -= 1;
            } else if f & RETX != 0 && id > self.acked_id {
                self.acked_id = id;
            }
        }
        c.snd_una += acked;
        self.runs.drop_below(c.snd_una);
        let (sb, snd_una) = (&mut c.sb, c.snd_una);
        for &(start, end) in pkt.sack_blocks() {
            let lo = start.max(snd_una);
            let hi = end.min(c.snd_max);
            self.runs.add(lo, hi, |seq| {
                let i = (seq - snd_una) as usize;
                let f = sb[i];
                sb[i] = SACKED;
                self.sacked += 1;
                if f & LOST != 0 {
                    self.lost -= 1;
                } else if f & RETX != 0 && self.ids[i] > self.acked_id {
                    self.acked_id = self.ids[i];
                }
                if self.high_sacked.is_none_or(|h| seq > h) {
                    self.high_sacked = Some(seq);
                }
            });
        }
        if self.sacked == 0 && self.lost == 0 {
            // Nothing SACKed or awaiting retransmission: the scoreboard is empty (ns-2 clears it).
            self.high_sacked = None;
        }
    }

    /// FACK marking and lost-retransmission detection; true if a packet was newly marked lost.
    fn mark_losses(&mut self, c: &mut Core) -> bool {
        let dup = c.p.dupthresh;
        let Some(high) = self.high_sacked else { return false };
        let mut newly = false;
        // FACK: un-SACKed packets at least dupthresh + 1 below the highest SACKed one.
        let limit = high.saturating_sub(dup);
        let from = self.marked_upto.max(c.snd_una);
        for seq in from..limit {
            let i = (seq - c.snd_una) as usize;
            if c.sb[i] & (SACKED | LOST | RETX) == 0 {
                self.mark_lost(c, i);
                newly = true;
            }
        }
        if limit > from {
            self.marked_upto = limit;
        }
        // Retransmissions lost again.
        while let Some(&r) = self.rtx.front() {
            let live = r.seq >= c.snd_una && {
                let i = (r.seq - c.snd_una) as usize;
                c.sb[i] & RETX != 0 && c.sb[i] & (SACKED | LOST) == 0 && self.ids[i] == r.id
            };
            if !live {
                self.rtx.pop_front();
                continue;
            }
            if r.snd_max_at <= high || r.id + dup + 1 < self.acked_id {
                self.rtx.pop_front();
                self.mark_lost(c, (r.seq - c.snd_una) as usize);
                newly = true;
            } else {
                break;
            }
        }
        newly
    }

    /// Lowest packet awaiting retransmission.
    fn next_lost(&mut self, c: &Core) -> Option<u32> {
        if self.lost == 0 {
            return None;
        }
        let mut seq = self.lost_from.max(c.snd_una);
        while seq < c.snd_max {
            if c.sb[(seq - c.snd_una) as usize] & LOST != 0 {
                self.lost_from = seq;
                return Some(seq);
            }
            seq += 1;
        }
        None
    }

    /// Send what the window (and rate halving) allows: lost packets first, then new data.
    pub(super) fn send(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        self.sync(c);
        let wnd = c.window().min(c.p.max_window).max(1.0) as u32;
        let mut pif = self.in_flight(c);
        self.next_pif = self.next_pif.min(pif + 1);
        while pif < wnd.max(self.next_pif) {
            if let Some(seq) = self.next_lost(c) {
                let i = (seq - c.snd_una) as usize;
                c.sb[i] &= !LOST;
                self.lost -= 1;
                let id = self.next_id;
                self.next_id += 1;
                self.ids[i] = id;
                self.rtx.push_back(Rtx { seq, snd_max_at: c.snd_max, id });
                c.transmit(now, seq, out);
            } else if !c.send_new(now, out) {
                break;
            }
            pif += 1;
            self.next_pif = self.next_pif.min((pif - 1).max(1));
        }
    }

    /// An ACK, with its RTT sample (as the controller sees it) already taken.
    pub(super) fn on_ack(&mut self, c: &mut Core, now: Time, pkt: &Packet, rtt: f64, out: &mut Vec<Packet>) {
        self.sync(c);
        let ack = pkt.seq;
        if ack < c.snd_una || ack > c.snd_max {
            self.send(c, now, out);
            return;
        }
        let acked = ack - c.snd_una;
        if acked > 0 {
            c.sample_timed(now, ack);
        }
        self.scoreboard(c, pkt, acked);
        if c.snd_nxt < c.snd_una {
            c.snd_nxt = c.snd_una;
        }
        let newly_lost = self.mark_losses(c);
        let ece = pkt.ecn & ecn::ECE != 0;
        if acked > 0 {
            // Window growth: not in fast recovery, never on an ECN echo.
            let in_fast_recovery = c.in_recovery && !self.loss_state;
            if !in_fast_recovery && !ece {
                let (in_flight, min_rtt) = (c.in_flight(), c.min_rtt);
                c.cc.on_ack_with(|| Ack { now: to_secs(now), acked, rtt: Some(rtt), min_rtt, in_flight });
                if let Some(cap) = c.cap {
                    // Slow start back to the controller's window, one packet per ACK.
                    c.cap = if cap + 1.0 >= c.cc.window() { None } else { Some(cap + 1.0) };
                }
            }
            c.count_rto();
        }
        // Every ACK that is not old restarts the timer while data is outstanding (TCP-Linux's
        // renew_timer in ns-2), duplicates included.
        c.rearm_timer(now);
        if c.in_recovery {
            if ack >= c.recover {
                self.end_recovery(c);
            }
        } else if newly_lost {
            self.enter_recovery(c, now);
        } else if ece && acked > 0 && ack > c.reduced_upto {
            c.loss_event(now, true);
        }
        self.send(c, now, out);
    }

    /// Recovery (or the Loss state) ends: a window still below the controller's is moderated.
    fn end_recovery(&mut self, c: &mut Core) {
        let moderated = (self.in_flight(c) + 3) as f64;
        let w = c.cc.window();
        if !self.loss_state && c.pinned.is_some_and(|r| r < w) && moderated < w {
            c.cap = Some(moderated);
        }
        self.loss_state = false;
        self.next_pif = 0;
        c.in_recovery = false;
        c.pinned = None;
    }

    fn enter_recovery(&mut self, c: &mut Core, now: Time) {
        let before = c.cwnd();
        let reduced = c.snd_una >= c.reduced_upto;
        if reduced {
            c.reduce(now, false);
        }
        c.stats.fast_retransmits += 1;
        c.timed = None;
        c.in_recovery = true;
        c.recover = c.snd_max;
        let floor = c.cc.min_cwnd().min(c.cc.window());
        self.loss_state = false;
        c.cap = None;
        c.pinned = Some(floor);
        self.next_pif = before as u32;
        if reduced {
            // Logged with the window in use during recovery.
            c.record(now, LossKind::FastRetransmit, before);
        }
        c.restart_timer(now);
    }

    /// The retransmission timer fired (the controller has already been told): every
    /// un-SACKed packet is lost; SACKed ones are not sent again.
    pub(super) fn on_timeout(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        let mut lost = 0;
        for f in c.sb.iter_mut() {
            if *f & SACKED == 0 {
                *f = LOST;
                lost += 1;
            }
        }
        self.lost = lost;
        self.lost_from = c.snd_una;
        self.marked_upto = c.snd_max;
        self.rtx.clear();
        self.acked_id = 0;
        self.loss_state = true;
        self.next_pif = 0;
        c.cap = None;
        c.in_recovery = true;
        c.recover = c.snd_max;
        self.send(c, now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_params as params, Mode, Recovery, TcpSender};
    use crate::net::packet::Packet;
    use crate::cc::Controller as _;
    use crate::sim::{secs, Rng, Time};
    use serde_json::{json, Map, Value};


    fn sender(algorithm: &str, given: Value, w: f64) -> TcpSender {
        let given: Map<String, Value> = given.as_object().unwrap().clone();
        let p = crate::registry::validate_window(algorithm, &given).unwrap();
        let ctl = crate::registry::build_window(&p, w, f64::INFINITY).unwrap();
        TcpSender::new(0, params(w), Recovery::Linux, ctl, Rng::new(1))
    }

    fn ack(n: u32, sacks: &[(u32, u32)], t: Time) -> Packet {
        let mut a = Packet::ack(0, n, 40, t.saturating_sub(secs(0.1)));
        for (i, &b) in sacks.iter().enumerate() {
            a.sack[i] = b;
        }
        a.nsack = sacks.len() as u8;
        a
    }

    fn seqs(out: &[Packet]) -> Vec<u32> {
        out.iter().map(|p| p.seq).collect()
    }

    /// Packet 0 of a 20-packet window is lost; packets 1.. arrive and are SACKed one by one.
    /// Returns the sender after `k` duplicate ACKs and what each ACK released.
    fn lose_first(s: &mut TcpSender, k: u32) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        s.start(0, &mut out);
        assert_eq!(seqs(&out), (0..20).collect::<Vec<_>>());
        let mut sent = Vec::new();
        for i in 1..=k {
            let mut o = Vec::new();
            s.on_ack(secs(0.1) + i as Time, &ack(0, &[(1, i + 1)], secs(0.1)), &mut o);
            sent.push(seqs(&o));
        }
        sent
    }

    #[test]
    fn fack_marks_a_loss_once_dupthresh_plus_one_packets_above_it_are_sacked() {
        let mut s = sender("tcp", json!({}), 20.0);
        let sent = lose_first(&mut s, 4);
        // SACKed packets free room for new data before recovery (in flight = sent − SACKed).
        assert_eq!(sent[0], vec![20]);
        assert_eq!(sent[2], vec![22]);
        // The 4th SACKed packet (seq 4 = 0 + dupthresh + 1) marks packet 0 lost: one loss
        // event, window 20 -> 10, and rate halving starts from the old window.
        assert_eq!(s.c.stats.loss_events, 1);
        assert_eq!(s.c.cc.window(), 10.0);
        assert!(s.c.in_recovery);
        // Reno's min_cwnd is half the threshold: the window in use during recovery is 5.
        assert_eq!(s.cwnd(), 5.0);
        // The ACK that detected the loss retransmits packet 0 (in flight 20 - 4 SACKed - 1 lost
        // + ... stays below the old window).
        assert!(sent[3].contains(&0), "{:?}", sent[3]);
    }

    #[test]
    fn rate_halving_sends_one_packet_per_two_acks_down_to_min_cwnd() {
        let mut s = sender("tcp", json!({}), 20.0);
        lose_first(&mut s, 4);
        let mut released = Vec::new();
        for i in 5..=19 {
            let mut o = Vec::new();
            s.on_ack(secs(0.2) + i as Time, &ack(0, &[(1, i + 1)], secs(0.1)), &mut o);
            released.push(o.len());
        }
        let total: usize = released.iter().sum();
        // 15 more ACKs: the flight falls by one packet per two ACKs (one packet released
        // every other ACK) rather than one per ACK, and stays above min_cwnd = 5.
        assert_eq!(total, 7, "{released:?}");
        assert!(released.windows(2).all(|w| w[0] + w[1] == 1), "{released:?}");
        let Mode::Linux(lx) = &s.mode else { unreachable!() };
        assert!(lx.in_flight(&s.c) >= 5);
    }

    #[test]
    fn a_lost_retransmission_is_sent_again_without_a_timeout() {
        let mut s = sender("tcp", json!({}), 20.0);
        lose_first(&mut s, 4);
        // Keep ACKing packets sent after the retransmission of 0 (20, 21, ...): once one of
        // them is SACKed, the retransmission is known lost and goes out again.
        let mut again = false;
        for i in 5..40 {
            let mut o = Vec::new();
            s.on_ack(secs(0.3) + i as Time, &ack(0, &[(1, i + 1)], secs(0.2)), &mut o);
            if seqs(&o).contains(&0) {
                again = true;
                break;
            }
        }
        assert!(again, "packet 0 retransmitted a second time");
        assert_eq!(s.c.stats.timeouts, 0);
        assert_eq!(s.c.stats.loss_events, 1, "the second retransmission is the same loss event");
    }

    #[test]
    fn recovery_ends_with_the_window_moderated_then_slow_starting_back() {
        let mut s = sender("tcp", json!({}), 20.0);
        lose_first(&mut s, 19);
        let high = s.c.snd_max;
        let mut o = Vec::new();
        s.on_ack(secs(0.5), &ack(high, &[], secs(0.4)), &mut o);
        assert!(!s.c.in_recovery);
        let w = s.cwnd();
        // Moderated to the flight (nothing outstanding) + 3, below the controller's 10 ...
        assert_eq!(w, 3.0);
        // ... and one packet more per ACK until the controller's window is reached.
        let mut t = secs(0.6);
        let mut n = s.c.snd_una;
        for _ in 0..20 {
            n += 1;
            t += 1000;
            s.on_ack(t, &ack(n, &[], t - secs(0.1)), &mut o);
        }
        assert!(s.cwnd() >= 10.0);
    }

    #[test]
    fn modules_without_min_cwnd_keep_the_reduced_window_in_recovery() {
        // BIC (Linux: no min_cwnd): the window in use is the threshold, 0.8 W.
        let mut s = sender("bic", json!({}), 20.0);
        lose_first(&mut s, 4);
        assert!(s.c.in_recovery);
        assert_eq!(s.cwnd(), s.c.cc.window());
        assert!(s.cwnd() > 10.0);
    }

    #[test]
    fn a_timeout_keeps_sacked_packets_and_resends_only_the_rest() {
        let mut s = sender("tcp", json!({}), 20.0);
        let mut out = Vec::new();
        s.start(0, &mut out);
        // The whole window is outstanding when the timer fires.
        let mut o = Vec::new();
        s.on_timeout(secs(3.0), &mut o);
        assert_eq!(seqs(&o), vec![0], "window 1 after the timeout: the first hole only");
        let mut o = Vec::new();
        s.on_ack(secs(3.2), &ack(1, &[(2, 7)], secs(3.0)), &mut o);
        // Packet 1 is next; 2..=6 are SACKed and are not sent again.
        assert!(seqs(&o).contains(&1));
        assert!(!seqs(&o).iter().any(|q| (2..7).contains(q)), "{:?}", seqs(&o));
    }
}
