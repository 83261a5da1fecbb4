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

use super::{Packet, TcpSender, LOST, RETX, SACKED};
use crate::cc::Ack;
use crate::net::packet::ecn;
use crate::sim::{to_secs, Time};
use std::collections::VecDeque;

/// One retransmission still in flight: (sequence, first new sequence at the time, id).
#[derive(Clone, Copy)]
struct Rtx {
    seq: u32,
    snd_max_at: u32,
    id: u32,
}

/// The state Linux-style recovery keeps besides the sender's scoreboard.
pub(super) struct LinuxRecovery {
    /// Retransmission id of each packet in [snd_una, snd_max) (0: never retransmitted),
    /// aligned with the sender's scoreboard.
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
    lost: u32,
    /// In the Loss state (after a timeout) rather than fast recovery.
    loss_state: bool,
    /// Window in use during fast recovery (the controller's `min_cwnd`).
    rec_cwnd: f64,
    /// Rate halving: the flight allowed while it falls from the old window.
    next_pif: u32,
    /// After recovery: the moderated window, slow-starting back to the controller's.
    cap: Option<f64>,
}

impl LinuxRecovery {
    pub(super) fn new() -> Self {
        LinuxRecovery {
            ids: VecDeque::new(),
            rtx: VecDeque::new(),
            next_id: 1,
            acked_id: 0,
            high_sacked: None,
            marked_upto: 0,
            lost_from: 0,
            sacked: 0,
            lost: 0,
            loss_state: false,
            rec_cwnd: 0.0,
            next_pif: 0,
            cap: None,
        }
    }

    /// A new packet was sent.
    pub(super) fn push(&mut self) {
        self.ids.push_back(0);
    }
}

impl TcpSender {
    fn lx(&mut self) -> &mut LinuxRecovery {
        self.lx.as_deref_mut().expect("linux recovery state")
    }

    /// The window in use (before the receiver window cap).
    pub(super) fn linux_window(&self, lx: &LinuxRecovery) -> f64 {
        if self.in_recovery && !lx.loss_state {
            lx.rec_cwnd
        } else {
            match lx.cap {
                Some(c) => c.min(self.cc.window()),
                None => self.cc.window(),
            }
        }
    }

    /// Packets in flight: sent and neither acknowledged, SACKed nor marked lost.
    fn linux_in_flight(&self) -> u32 {
        let lx = self.lx.as_deref().expect("linux recovery state");
        (self.snd_max - self.snd_una) - lx.sacked - lx.lost
    }

    /// Mark `i` (an index into the scoreboard) lost.
    fn mark_lost(&mut self, i: usize) {
        let seq = self.snd_una + i as u32;
        self.sb[i] = (self.sb[i] & !RETX) | LOST;
        let lx = self.lx();
        lx.lost += 1;
        if seq < lx.lost_from {
            lx.lost_from = seq;
        }
    }

    /// Apply the ACK's SACK blocks and its cumulative acknowledgement to the scoreboard.
    fn linux_scoreboard(&mut self, pkt: &Packet, acked: u32) {
        // Cumulatively acknowledged packets leave the scoreboard.
        for _ in 0..acked {
            let f = self.sb.pop_front().unwrap_or(0);
            let lx = self.lx.as_deref_mut().unwrap();
            let id = lx.ids.pop_front().unwrap_or(0);
            if f & SACKED != 0 {
                lx.sacked -= 1;
            } else if f & LOST != 0 {
                lx.lost -= 1;
            } else if f & RETX != 0 && id > lx.acked_id {
                lx.acked_id = id;
            }
        }
        self.snd_una += acked;
        for &(start, end) in pkt.sack_blocks() {
            let lo = start.max(self.snd_una);
            let hi = end.min(self.snd_max);
            for seq in lo..hi {
                let i = (seq - self.snd_una) as usize;
                let f = self.sb[i];
                if f & SACKED != 0 {
                    continue;
                }
                self.sb[i] = SACKED;
                let lx = self.lx.as_deref_mut().unwrap();
                lx.sacked += 1;
                if f & LOST != 0 {
                    lx.lost -= 1;
                } else if f & RETX != 0 && lx.ids[i] > lx.acked_id {
                    lx.acked_id = lx.ids[i];
                }
                if lx.high_sacked.map_or(true, |h| seq > h) {
                    lx.high_sacked = Some(seq);
                }
            }
        }
        let lx = self.lx.as_deref_mut().unwrap();
        if lx.sacked == 0 && lx.lost == 0 {
            // Nothing SACKed or awaiting retransmission: the scoreboard is empty (ns-2 clears it).
            lx.high_sacked = None;
        }
    }

    /// FACK marking and lost-retransmission detection; true if a packet was newly marked lost.
    fn linux_mark_losses(&mut self) -> bool {
        let dup = self.p.dupthresh;
        let Some(high) = self.lx.as_deref().unwrap().high_sacked else { return false };
        let mut newly = false;
        // FACK: un-SACKed packets at least dupthresh + 1 below the highest SACKed one.
        let limit = high.saturating_sub(dup);
        let from = self.lx.as_deref().unwrap().marked_upto.max(self.snd_una);
        for seq in from..limit {
            let i = (seq - self.snd_una) as usize;
            if self.sb[i] & (SACKED | LOST | RETX) == 0 {
                self.mark_lost(i);
                newly = true;
            }
        }
        if limit > from {
            self.lx().marked_upto = limit;
        }
        // Retransmissions lost again.
        loop {
            let lx = self.lx.as_deref().unwrap();
            let Some(&r) = lx.rtx.front() else { break };
            let live = r.seq >= self.snd_una && {
                let i = (r.seq - self.snd_una) as usize;
                self.sb[i] & RETX != 0 && self.sb[i] & (SACKED | LOST) == 0 && lx.ids[i] == r.id
            };
            if !live {
                self.lx().rtx.pop_front();
                continue;
            }
            if r.snd_max_at <= high || r.id + dup + 1 < lx.acked_id {
                self.lx().rtx.pop_front();
                self.mark_lost((r.seq - self.snd_una) as usize);
                newly = true;
            } else {
                break;
            }
        }
        newly
    }

    /// Lowest packet awaiting retransmission.
    fn linux_next_lost(&mut self) -> Option<u32> {
        let lx = self.lx.as_deref().unwrap();
        if lx.lost == 0 {
            return None;
        }
        let mut seq = lx.lost_from.max(self.snd_una);
        while seq < self.snd_max {
            if self.sb[(seq - self.snd_una) as usize] & LOST != 0 {
                self.lx().lost_from = seq;
                return Some(seq);
            }
            seq += 1;
        }
        None
    }

    /// Send what the window (and rate halving) allows: lost packets first, then new data.
    pub(super) fn linux_send(&mut self, now: Time, out: &mut Vec<Packet>) {
        let lx = self.lx.as_deref().unwrap();
        let wnd = self.linux_window(lx).min(self.p.max_window).max(1.0) as u32;
        let mut pif = self.linux_in_flight();
        let lx = self.lx();
        lx.next_pif = lx.next_pif.min(pif + 1);
        while pif < wnd.max(self.lx.as_deref().unwrap().next_pif) {
            if let Some(seq) = self.linux_next_lost() {
                let i = (seq - self.snd_una) as usize;
                self.sb[i] &= !LOST;
                let snd_max = self.snd_max;
                let lx = self.lx();
                lx.lost -= 1;
                let id = lx.next_id;
                lx.next_id += 1;
                lx.ids[i] = id;
                lx.rtx.push_back(Rtx { seq, snd_max_at: snd_max, id });
                self.transmit(now, seq, out);
            } else if !self.send_new(now, out) {
                break;
            }
            pif += 1;
            let lx = self.lx();
            lx.next_pif = lx.next_pif.min((pif - 1).max(1));
        }
    }

    /// An ACK, with its RTT sample (as the controller sees it) already taken.
    pub(super) fn linux_on_ack(&mut self, now: Time, pkt: &Packet, rtt: f64, out: &mut Vec<Packet>) {
        let ack = pkt.seq;
        if ack < self.snd_una || ack > self.snd_max {
            self.linux_send(now, out);
            return;
        }
        let acked = ack - self.snd_una;
        if acked > 0 {
            self.sample_timed(now, ack);
        }
        self.linux_scoreboard(pkt, acked);
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        let newly_lost = self.linux_mark_losses();
        let ece = pkt.ecn & ecn::ECE != 0;
        if acked > 0 {
            // Window growth: not in fast recovery, never on an ECN echo.
            let in_fast_recovery = self.in_recovery && !self.lx.as_deref().unwrap().loss_state;
            if !in_fast_recovery && !ece {
                let in_flight = self.in_flight();
                self.cc.on_ack(&Ack { now: to_secs(now), acked, rtt: Some(rtt), min_rtt: self.min_rtt, in_flight });
                let w = self.cc.window();
                let lx = self.lx();
                if let Some(c) = lx.cap {
                    // Slow start back to the controller's window, one packet per ACK.
                    lx.cap = if c + 1.0 >= w { None } else { Some(c + 1.0) };
                }
            }
            self.stats.rto_sum += self.rtt.rto();
            self.stats.rto_samples += 1;
        }
        // Every ACK that is not old restarts the timer while data is outstanding (TCP-Linux's
        // renew_timer in ns-2), duplicates included.
        if self.snd_una < self.snd_max {
            self.restart_timer(now);
        } else {
            self.rto_deadline = None;
        }
        if self.in_recovery {
            if ack >= self.recover {
                // Recovery (or the Loss state) ends.
                let moderated = (self.linux_in_flight() + 3) as f64;
                let w = self.cc.window();
                let lx = self.lx();
                if !lx.loss_state && lx.rec_cwnd < w && moderated < w {
                    lx.cap = Some(moderated);
                }
                lx.loss_state = false;
                lx.next_pif = 0;
                self.in_recovery = false;
            }
        } else if newly_lost {
            self.linux_enter_recovery(now);
        } else if ece && acked > 0 && ack > self.reduced_upto {
            self.loss_event(now, true);
        }
        self.linux_send(now, out);
    }

    fn linux_enter_recovery(&mut self, now: Time) {
        let before = self.cwnd();
        let reduced = self.snd_una >= self.reduced_upto;
        if reduced {
            self.reduce(now, false);
        }
        self.stats.fast_retransmits += 1;
        self.timed = None;
        self.in_recovery = true;
        self.recover = self.snd_max;
        let floor = self.cc.min_cwnd().min(self.cc.window());
        let lx = self.lx();
        lx.loss_state = false;
        lx.cap = None;
        lx.rec_cwnd = floor;
        lx.next_pif = before as u32;
        if reduced {
            // Logged with the window in use during recovery.
            self.record(now, super::LossKind::FastRetransmit, before);
        }
        self.restart_timer(now);
    }

    /// The retransmission timer fired (the controller has already been told): every
    /// un-SACKed packet is lost; SACKed ones are not sent again.
    pub(super) fn linux_on_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        let una = self.snd_una;
        let mut lost = 0;
        for f in self.sb.iter_mut() {
            if *f & SACKED == 0 {
                *f = LOST;
                lost += 1;
            }
        }
        let snd_max = self.snd_max;
        let lx = self.lx();
        lx.lost = lost;
        lx.lost_from = una;
        lx.marked_upto = snd_max;
        lx.rtx.clear();
        lx.acked_id = 0;
        lx.loss_state = true;
        lx.next_pif = 0;
        lx.cap = None;
        self.in_recovery = true;
        self.recover = snd_max;
        self.linux_send(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Recovery, TcpParams, TcpSender};
    use crate::net::packet::Packet;
    use crate::sim::{secs, Rng, Time};
    use serde_json::{json, Map, Value};

    fn params(initial_window: f64) -> TcpParams {
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
            clock_phase: 0.0,
            rtt_noise: 0.0,
            log_losses: false,
        }
    }

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
        assert_eq!(s.stats.loss_events, 1);
        assert_eq!(s.cc.window(), 10.0);
        assert!(s.in_recovery);
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
        assert!(s.linux_in_flight() >= 5);
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
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(s.stats.loss_events, 1, "the second retransmission is the same loss event");
    }

    #[test]
    fn recovery_ends_with_the_window_moderated_then_slow_starting_back() {
        let mut s = sender("tcp", json!({}), 20.0);
        lose_first(&mut s, 19);
        let high = s.snd_max;
        let mut o = Vec::new();
        s.on_ack(secs(0.5), &ack(high, &[], secs(0.4)), &mut o);
        assert!(!s.in_recovery);
        let w = s.cwnd();
        // Moderated to the flight (nothing outstanding) + 3, below the controller's 10 ...
        assert_eq!(w, 3.0);
        // ... and one packet more per ACK until the controller's window is reached.
        let mut t = secs(0.6);
        let mut n = s.snd_una;
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
        assert!(s.in_recovery);
        assert_eq!(s.cwnd(), s.cc.window());
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
