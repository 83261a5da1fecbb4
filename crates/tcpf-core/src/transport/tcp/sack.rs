//! `recovery = "sack"`, in the spirit of RFC 6675: a scoreboard of SACKed packets; in recovery
//! the sender estimates the packets in the network (`pipe`) and, while the window allows,
//! retransmits every packet deemed lost (DupThresh SACKed packets above it) before new data.
//!
//! With `TcpParams::ns2_agent`, ns-2's `Agent/TCP/Sack1` (`tcp-sack1.cc`, `scoreboard-rq.cc`)
//! instead: `pipe_` is a count set at the fast retransmit to the packets outstanding less the
//! duplicate ACKs, one less per ACK in recovery (two per partial ACK), one more per
//! transmission; every un-SACKed packet below the highest SACKed one is a hole, retransmitted
//! once; a duplicate ACK counts only if its SACK blocks SACK a new packet.

use super::classic::DupAck;
use super::core::Core;
use super::{RETX, SACKED};
use crate::cc::Controller as _;
use crate::net::packet::Packet;
use crate::sim::Time;
use crate::transport::seqruns::SeqRuns;

/// SACK recovery's view of the sender's scoreboard, kept up to date as packets are SACKed,
/// retransmitted and acknowledged so that an ACK costs O(log n) rather than a scan of the
/// window (the scanning definitions, [`lost_below_scan`] and [`pipe_scan`], check it in debug
/// builds).
#[derive(Default)]
pub(super) struct Sack {
    /// The SACKed packets (as runs, so that an ACK's blocks visit only the packets they newly
    /// SACK and the DupThresh-th highest is found by visiting at most DupThresh runs).
    runs: SeqRuns,
    /// Packets flagged SACKED.
    sacked: u32,
    /// In recovery: un-SACKed packets flagged RETX (all retransmitted since recovery began).
    retx: u32,
    /// In recovery: every packet in [snd_una, holes_from) is SACKed or retransmitted.
    holes_from: u32,
    /// With `TcpParams::ns2_agent`, in recovery: ns-2 Sack1's `pipe_`, a running estimate
    /// set at the fast retransmit and counted down per ACK instead of read off the scoreboard.
    agent_pipe: i64,
}

/// Sequence number below which every un-SACKed packet counts as lost (RFC 6675 IsLost: at
/// least DupThresh SACKed packets above it), by scanning the scoreboard: the reference.
#[cfg(any(test, debug_assertions))]
fn lost_below_scan(c: &Core) -> u32 {
    let mut count = 0;
    for (i, f) in c.sb.iter().enumerate().rev() {
        if f & SACKED != 0 {
            count += 1;
            if count >= c.p.dupthresh {
                return c.snd_una + i as u32;
            }
        }
    }
    c.snd_una
}

/// Packets deemed in the network (un-SACKed ones not deemed lost, plus retransmissions), by
/// scanning the scoreboard: the reference.
#[cfg(any(test, debug_assertions))]
fn pipe_scan(c: &Core, lost_below: u32) -> u32 {
    let mut pipe = 0;
    for (i, f) in c.sb.iter().enumerate() {
        if f & SACKED == 0 {
            let seq = c.snd_una + i as u32;
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

impl Sack {
    /// (lost_below, pipe): every un-SACKed packet below `lost_below` counts as lost (RFC 6675
    /// IsLost: at least DupThresh SACKed packets above it, here the DupThresh-th highest SACKed
    /// packet); `pipe` counts the un-SACKed packets not deemed lost plus the retransmissions
    /// (in recovery only).
    fn lost_below_and_pipe(&self, c: &Core) -> (u32, u32) {
        let n = c.p.dupthresh.max(1);
        let (lost_below, unsacked_above) = match self.runs.nth_highest(n) {
            // Exactly n SACKed packets in [lost_below, snd_max).
            Some(seq) => (seq, c.snd_max - seq - n),
            None => (c.snd_una, c.in_flight() - self.sacked),
        };
        let pipe = unsacked_above + self.retx;
        #[cfg(debug_assertions)]
        {
            debug_assert_eq!(lost_below, lost_below_scan(c), "lost_below");
            // The retransmissions are counted in recovery only.
            debug_assert!(!c.in_recovery || pipe == pipe_scan(c, lost_below), "pipe");
        }
        (lost_below, pipe)
    }

    /// `on_cumulative_ack` when flags may need uncounting.
    #[inline(never)]
    fn uncount_below(&mut self, c: &Core, ack: u32) {
        for &f in c.sb.range(..(ack - c.snd_una) as usize) {
            if f & SACKED != 0 {
                self.sacked -= 1;
            } else if c.in_recovery && f & RETX != 0 {
                self.retx -= 1;
            }
        }
        self.runs.drop_below(ack);
    }

    /// Retransmit `seq` (in recovery), counting it if it is now an un-SACKed retransmission.
    fn retransmit(&mut self, c: &mut Core, now: Time, seq: u32, out: &mut Vec<Packet>) {
        let before = c.sb.get((seq - c.snd_una) as usize).copied();
        c.transmit(now, seq, out);
        if before.is_some_and(|f| f & (SACKED | RETX) == 0) {
            self.retx += 1;
        }
    }

    /// Send while pipe < cwnd: lost packets not yet retransmitted first, then new data (out
    /// of line: in recovery only).
    #[inline(never)]
    fn sack_send(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        if c.p.ns2_agent {
            return self.sack1_send(c, now, out);
        }
        let cwnd = c.cwnd();
        let (lost_below, pipe) = self.lost_below_and_pipe(c);
        let mut pipe = pipe as f64;
        let mut scan = self.scan_start(c);
        while cwnd - pipe >= 1.0 {
            if !self.send_next(c, now, &mut scan, lost_below, out) {
                break;
            }
            pipe += 1.0;
        }
        // Packets below stay SACKed or retransmitted until recovery ends.
        self.holes_from = c.snd_una + scan as u32;
    }

    /// ns-2 Sack1's `send_much` in fast recovery: while `pipe_ < int(cwnd_)`, the next hole
    /// (any un-SACKed packet below the highest SACKed one, each retransmitted once), else new
    /// data; each transmission adds one to `pipe_`.
    fn sack1_send(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        let cwnd = c.window().floor() as i64;
        let below = self.runs.nth_highest(1).unwrap_or(c.snd_una);
        let mut scan = self.scan_start(c);
        while self.agent_pipe < cwnd {
            if !self.send_next(c, now, &mut scan, below, out) {
                break;
            }
            self.agent_pipe += 1;
        }
        self.holes_from = c.snd_una + scan as u32;
    }

    /// Where the search for holes resumes: the scoreboard index of `holes_from`.
    fn scan_start(&self, c: &Core) -> usize {
        (self.holes_from.max(c.snd_una) - c.snd_una) as usize
    }

    /// Send one packet in recovery: the first un-SACKed, not yet retransmitted packet below
    /// `below` from scoreboard index `scan` on (a hole; `scan` moves past it), else new data.
    /// False if there is neither.
    fn send_next(&mut self, c: &mut Core, now: Time, scan: &mut usize, below: u32, out: &mut Vec<Packet>) -> bool {
        while *scan < c.sb.len() && c.snd_una + (*scan as u32) < below {
            let i = *scan;
            *scan += 1;
            if c.sb[i] & (SACKED | RETX) == 0 {
                self.retransmit(c, now, c.snd_una + i as u32, out);
                return true;
            }
        }
        c.send_new(now, out)
    }
}

impl DupAck for Sack {
    const TCP_AGENT: bool = false;

    /// Mark the packets the ACK's SACK blocks cover.
    fn apply_sack(&mut self, c: &mut Core, pkt: &Packet) -> bool {
        let before = self.sacked;
        let in_recovery = c.in_recovery;
        let (sb, snd_una) = (&mut c.sb, c.snd_una);
        for &(start, end) in pkt.sack_blocks() {
            let lo = start.max(snd_una);
            let hi = end.min(c.snd_max);
            self.runs.add(lo, hi, |seq| {
                let f = &mut sb[(seq - snd_una) as usize];
                if in_recovery && *f & RETX != 0 {
                    self.retx -= 1;
                }
                *f |= SACKED;
                self.sacked += 1;
            });
        }
        self.sacked != before
    }

    /// ns-2's Sack1 counts a duplicate ACK only when its SACK blocks add information
    /// (`ScoreBoard::CheckUpdate`).
    #[inline]
    fn counts_dupack(&self, c: &Core, news: bool) -> bool {
        news || !c.p.ns2_agent
    }

    #[inline]
    fn on_cumulative_ack(&mut self, c: &Core, ack: u32) {
        // Nothing to uncount (no packet is flagged SACKED, no un-SACKed retransmission is
        // counted) and no run to drop: the usual ACK outside recovery.
        if self.sacked == 0 && (self.retx == 0 || !c.in_recovery) {
            debug_assert!(self.runs.is_empty());
            return;
        }
        self.uncount_below(c, ack);
    }

    #[inline(always)]
    fn send(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        if c.in_recovery {
            self.sack_send(c, now, out);
        } else {
            c.send_window(c.cc.window(), now, out);
        }
    }

    fn enter(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        for f in c.sb.iter_mut() {
            *f &= !RETX;
        }
        self.retx = 0;
        self.holes_from = c.snd_una;
        self.retransmit(c, now, c.snd_una, out);
        if c.p.ns2_agent {
            // ns-2: the packets sent less the duplicate ACKs; the retransmission is not
            // counted, and nothing more is sent before the next ACK.
            self.agent_pipe = (c.snd_max - c.snd_una) as i64 - c.p.dupthresh as i64;
            self.holes_from = c.snd_una + 1;
            return;
        }
        self.sack_send(c, now, out);
    }

    /// A partial ACK keeps SACK recovery going; the full one ends it.
    #[inline]
    fn on_new_ack(&mut self, c: &mut Core, _now: Time, _acked: u32, partial: bool, _out: &mut Vec<Packet>) {
        if !partial {
            c.in_recovery = false;
            if c.p.ns2_agent {
                // ns-2's Sack1 clears `recover_` when fast recovery ends: the next fast
                // retransmit needs only packet 0 acknowledged (classic::may_fast_retransmit).
                c.recover = 0;
            }
        }
        // ns-2 (`partial_ack_` false): every ACK in recovery takes one from `pipe_`, a partial
        // one a second.
        self.agent_pipe -= 2;
    }

    #[inline]
    fn on_dupack_in_recovery(&mut self) {
        self.agent_pipe -= 1;
    }

    /// Every flag is about to be cleared (go-back-N).
    fn on_timeout(&mut self) {
        self.runs.clear();
        self.sacked = 0;
        self.retx = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_ack, test_params as params, test_sender_past_packet_0, Mode, Recovery, TcpSender, SACKED};
    use super::{lost_below_scan, pipe_scan};
    use crate::net::packet::{Packet, MAX_SACK_BLOCKS};
    use crate::sim::{secs, Rng, Time};
    use serde_json::Map;
    use std::collections::{BTreeSet, VecDeque};


    /// A receiver's ACK: the cumulative acknowledgement and up to three SACK blocks, the one
    /// holding the packet that just arrived first, then the highest others (RFC 2018).
    fn ack_for(received: &BTreeSet<u32>, cum: u32, arrived: u32, t: Time) -> Packet {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for &s in received.range(cum..) {
            match runs.last_mut() {
                Some(r) if r.1 == s => r.1 = s + 1,
                _ => runs.push((s, s + 1)),
            }
        }
        let mut blocks: Vec<(u32, u32)> = runs.iter().copied().filter(|r| r.0 <= arrived && arrived < r.1).collect();
        blocks.extend(runs.iter().rev().copied().filter(|r| !(r.0 <= arrived && arrived < r.1)));
        blocks.truncate(MAX_SACK_BLOCKS);
        let mut a = Packet::ack(0, cum, 40, t.saturating_sub(secs(0.05)));
        for (i, &b) in blocks.iter().enumerate() {
            a.sack[i] = b;
        }
        a.nsack = blocks.len() as u8;
        a
    }

    /// A SACK sender of window `w` without limited transmit, past packet 0: 1..w + 2 are
    /// outstanding.
    fn sent_window(w: f64, ns2_agent: bool) -> TcpSender {
        test_sender_past_packet_0(Recovery::Sack, w, ns2_agent, false)
    }

    /// The duplicate ACK of 1 SACKing `block`; returns what the sender sent.
    fn dupack(s: &mut TcpSender, t: f64, block: (u32, u32)) -> Vec<u32> {
        test_ack(s, t, 1, Some(block))
    }

    /// ns-2's Sack1 (`ns2_agent`) retransmits any hole below the highest SACKed packet, where
    /// RFC 6675 waits for DupThresh SACKed packets above it; its `pipe_` starts at the packets
    /// outstanding less the duplicate ACKs and loses one per ACK.
    #[test]
    fn ns2_sack1_retransmits_any_hole_below_the_highest_sacked_packet() {
        // 0..11 sent, 0 acknowledged, 1 and 6 lost.
        for (ns2, want) in [(true, vec![6]), (false, vec![11])] {
            let mut s = sent_window(9.0, ns2);
            assert!(dupack(&mut s, 1.0, (2, 3)).is_empty());
            assert!(dupack(&mut s, 1.01, (2, 4)).is_empty());
            assert_eq!(dupack(&mut s, 1.02, (2, 5)), vec![1], "fast retransmit (ns2_agent = {ns2})");
            assert_eq!(s.cwnd(), 5.0);
            if let Mode::Sack(m) = &s.mode {
                if ns2 {
                    assert_eq!(m.agent_pipe, 7, "10 outstanding less 3 duplicate ACKs");
                }
            }
            assert!(dupack(&mut s, 1.03, (2, 6)).is_empty());
            assert!(dupack(&mut s, 1.04, (7, 8)).is_empty());
            // 7 and 8 SACKed above 6: a hole for ns-2, not yet lost for RFC 6675 (new data).
            assert_eq!(dupack(&mut s, 1.05, (7, 9)), want, "ns2_agent = {ns2}");
        }
    }

    /// ns-2's Sack1 counts a duplicate ACK only when its SACK blocks add information.
    #[test]
    fn ns2_sack1_counts_only_duplicate_acks_that_sack_something_new() {
        for (ns2, want) in [(true, vec![]), (false, vec![1])] {
            let mut s = sent_window(9.0, ns2);
            dupack(&mut s, 1.0, (2, 3));
            dupack(&mut s, 1.01, (2, 4));
            // The same information again (a duplicated packet, say).
            assert_eq!(dupack(&mut s, 1.02, (2, 4)), want, "ns2_agent = {ns2}");
            if ns2 {
                assert_eq!(dupack(&mut s, 1.03, (2, 5)), vec![1], "the third counted one");
            }
        }
    }

    /// Thousands of packets outstanding, one in 20 transmissions lost at random (retransmissions
    /// too, so that retransmissions get SACKed and timeouts happen): after every ACK the
    /// scoreboard's counters and runs give what scanning it gives; with ns-2's Sack1 rules, the
    /// sender leaves no room in its `pipe_` unused.
    #[test]
    fn a_large_scattered_scoreboard_gives_the_scanning_answers() {
        for ns2 in [false, true] {
            scattered_scoreboard(ns2);
        }
    }

    fn scattered_scoreboard(ns2_agent: bool) {
        let p = crate::registry::validate_window("tcp", &Map::new()).unwrap();
        let ctl = crate::registry::build_window(&p, 6000.0, f64::INFINITY).unwrap();
        let p = super::super::TcpParams { ns2_agent, ..params(6000.0) };
        let mut s = TcpSender::new(0, p, Recovery::Sack, ctl, Rng::new(1));
        let mut wire: VecDeque<Packet> = VecDeque::new();
        let mut out = Vec::new();
        s.start(0, &mut out);
        wire.extend(out.drain(..));
        let mut rng = Rng::new(3);
        let mut sent_once = BTreeSet::new();
        let mut received = BTreeSet::new();
        let mut cum = 0u32;
        let (mut checks, mut in_recovery_checks, mut largest, mut room_checks) = (0u32, 0u32, 0usize, 0u32);
        let mut t: Time = secs(0.1);
        let mut retx_sacked = 0;
        for step in 0.. {
            assert!(step < 200_000, "stuck at {cum}");
            let expired = s.rto_deadline().is_some_and(|d| t >= d);
            let Some(pkt) = (if expired { None } else { wire.pop_front() }) else {
                // Everything sent has arrived or is lost, or the timer expired: it fires.
                t = t.max(s.rto_deadline().expect("data outstanding"));
                s.on_timeout(t, &mut out);
                wire.extend(out.drain(..));
                continue;
            };
            t += 20_000;
            let first = sent_once.insert(pkt.seq);
            if rng.range(0.0, 1.0) < 0.05 {
                continue;
            }
            if !first && pkt.seq > cum {
                retx_sacked += 1;
            }
            received.insert(pkt.seq);
            while received.contains(&cum) {
                cum += 1;
            }
            s.on_ack(t, &ack_for(&received, cum, pkt.seq, t), &mut out);
            wire.extend(out.drain(..));
            let Mode::Sack(m) = &s.mode else { unreachable!() };
            let c = &s.c;
            largest = largest.max(c.sb.len());
            assert_eq!(m.sacked as usize, c.sb.iter().filter(|&&f| f & SACKED != 0).count());
            let (lost_below, pipe) = m.lost_below_and_pipe(c);
            assert_eq!(lost_below, lost_below_scan(c), "lost_below after the ACK of {}", pkt.seq);
            if c.in_recovery {
                assert_eq!(pipe, pipe_scan(c, lost_below), "pipe after the ACK of {}", pkt.seq);
                in_recovery_checks += 1;
                if ns2_agent {
                    // The data never runs out: the sender has used every room pipe_ gave it.
                    assert!(m.agent_pipe >= c.window().floor() as i64, "pipe_ {} < cwnd {}", m.agent_pipe, c.window());
                    room_checks += 1;
                }
            }
            checks += 1;
            if cum >= 20_000 {
                break;
            }
        }
        assert!(largest > 5000, "scoreboard of {largest} packets");
        assert!(s.c.stats.retransmissions > 500, "{} retransmissions", s.c.stats.retransmissions);
        assert!(in_recovery_checks > 10_000 && checks > 20_000, "{in_recovery_checks} of {checks}");
        assert!(s.c.stats.timeouts > 0 && retx_sacked > 100, "{} timeouts, {retx_sacked} retransmissions SACKed", s.c.stats.timeouts);
        assert!(!ns2_agent || room_checks > 10_000, "{room_checks} checks of pipe_");
    }
}
