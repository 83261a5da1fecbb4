//! `recovery = "sack"`, in the spirit of RFC 6675: a scoreboard of SACKed packets; in recovery
//! the sender estimates the packets in the network (`pipe`) and, while the window allows,
//! retransmits every packet deemed lost (DupThresh SACKed packets above it) before new data.

use super::classic::DupAck;
use super::core::Core;
use super::{RETX, SACKED};
use crate::net::packet::Packet;
use crate::sim::Time;
use std::collections::BTreeMap;

/// The SACKed packets as runs `[start, end)` keyed by their start: disjoint, never adjacent
/// (touching runs merge), inside [snd_una, snd_max). It lets an ACK's SACK blocks visit only the
/// packets they newly cover, and finds the n-th highest SACKed packet by visiting at most n runs.
#[derive(Default)]
pub(super) struct SackedRuns(BTreeMap<u32, u32>);

impl SackedRuns {
    /// Cover `[lo, hi)`, calling `newly` for each packet not covered before, in increasing order.
    pub fn add(&mut self, lo: u32, hi: u32, mut newly: impl FnMut(u32)) {
        if lo >= hi {
            return;
        }
        let (mut start, mut end) = (lo, hi);
        // Packets below `covered` are SACKed (or below the block).
        let mut covered = lo;
        if let Some((&s, &e)) = self.0.range(..lo).next_back() {
            if e >= lo {
                start = s;
                covered = e;
                end = end.max(e);
                self.0.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.0.range(lo..=hi).next() {
            (covered..s).for_each(&mut newly);
            covered = covered.max(e);
            end = end.max(e);
            self.0.remove(&s);
        }
        (covered..hi).for_each(&mut newly);
        self.0.insert(start, end);
    }

    /// Forget the packets below `seq` (cumulatively acknowledged).
    pub fn drop_below(&mut self, seq: u32) {
        while let Some((&s, &e)) = self.0.first_key_value() {
            if s >= seq {
                break;
            }
            self.0.remove(&s);
            if e > seq {
                self.0.insert(seq, e);
                break;
            }
        }
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The `n`-th highest SACKed packet (n ≥ 1), if at least `n` are SACKed.
    pub fn nth_highest(&self, n: u32) -> Option<u32> {
        let mut above = 0;
        for (&s, &e) in self.0.iter().rev() {
            if above + (e - s) >= n {
                return Some(e - (n - above));
            }
            above += e - s;
        }
        None
    }
}

/// SACK recovery's view of the sender's scoreboard, kept up to date as packets are SACKed,
/// retransmitted and acknowledged so that an ACK costs O(log n) rather than a scan of the
/// window (the scanning definitions, [`lost_below_scan`] and [`pipe_scan`], check it in debug
/// builds).
#[derive(Default)]
pub(super) struct Sack {
    runs: SackedRuns,
    /// Packets flagged SACKED.
    sacked: u32,
    /// In recovery: un-SACKed packets flagged RETX (all retransmitted since recovery began).
    retx: u32,
    /// In recovery: every packet in [snd_una, holes_from) is SACKed or retransmitted.
    holes_from: u32,
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
            debug_assert_eq!(pipe, pipe_scan(c, lost_below), "pipe");
        }
        (lost_below, pipe)
    }

    /// Retransmit `seq` (in recovery), counting it if it is now an un-SACKed retransmission.
    fn retransmit(&mut self, c: &mut Core, now: Time, seq: u32, out: &mut Vec<Packet>) {
        let before = c.sb.get((seq - c.snd_una) as usize).copied();
        c.transmit(now, seq, out);
        if before.is_some_and(|f| f & (SACKED | RETX) == 0) {
            self.retx += 1;
        }
    }

    /// Send while pipe < cwnd: lost packets not yet retransmitted first, then new data.
    fn sack_send(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        let cwnd = c.cwnd();
        let (lost_below, pipe) = self.lost_below_and_pipe(c);
        let mut pipe = pipe as f64;
        let mut scan = (self.holes_from.max(c.snd_una) - c.snd_una) as usize;
        while cwnd - pipe >= 1.0 {
            // First un-SACKed, not yet retransmitted packet deemed lost.
            let mut next = None;
            while scan < c.sb.len() {
                let seq = c.snd_una + scan as u32;
                if seq >= lost_below {
                    break;
                }
                if c.sb[scan] & (SACKED | RETX) == 0 {
                    next = Some(seq);
                    scan += 1;
                    break;
                }
                scan += 1;
            }
            match next {
                Some(seq) => self.retransmit(c, now, seq, out),
                None => {
                    if !c.send_new(now, out) {
                        break;
                    }
                }
            }
            pipe += 1.0;
        }
        // Packets below stay SACKed or retransmitted until recovery ends.
        self.holes_from = c.snd_una + scan as u32;
    }
}

impl DupAck for Sack {
    /// Mark the packets the ACK's SACK blocks cover.
    fn apply_sack(&mut self, c: &mut Core, pkt: &Packet) {
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
    }

    fn on_cumulative_ack(&mut self, c: &Core, ack: u32) {
        for &f in c.sb.range(..(ack - c.snd_una) as usize) {
            if f & SACKED != 0 {
                self.sacked -= 1;
            } else if c.in_recovery && f & RETX != 0 {
                self.retx -= 1;
            }
        }
        self.runs.drop_below(ack);
    }

    #[inline]
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
        self.sack_send(c, now, out);
    }

    /// A partial ACK keeps SACK recovery going; the full one ends it.
    #[inline]
    fn on_new_ack(&mut self, c: &mut Core, _now: Time, _acked: u32, partial: bool, _out: &mut Vec<Packet>) {
        if !partial {
            c.in_recovery = false;
        }
    }

    /// Every flag is about to be cleared (go-back-N).
    fn on_timeout(&mut self) {
        self.runs.clear();
        self.sacked = 0;
        self.retx = 0;
    }
}
