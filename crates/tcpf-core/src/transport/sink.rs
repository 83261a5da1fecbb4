//! The TCP receiver: cumulative ACKs, SACK blocks (RFC 2018: the block holding the newest
//! arrival first), optional delayed ACKs (every second in-order packet, or after a timeout;
//! anything out of order is acknowledged at once), and ECN echo.

use super::seqruns::SeqRuns;
use crate::net::packet::{ecn, Packet, MAX_SACK_BLOCKS};
use crate::sim::Time;

/// Bytes a SACK block adds to an ACK (ns-2's Sack1 sink; RFC 2018 uses 8 per block too).
pub const SACK_BLOCK_BYTES: u32 = 8;

pub struct TcpSink {
    pub flow: u32,
    ack_size: u32,
    sack: bool,
    delayed: bool,
    delack_timeout: Time,
    /// Next expected sequence number.
    next: u32,
    /// The packets above `next` that have arrived, as maximal runs (the SACK blocks).
    ooo: SeqRuns,
    /// Newest out-of-order arrivals, newest first.
    recent: [u32; MAX_SACK_BLOCKS],
    nrecent: usize,
    pending: u32,
    /// RFC 3168: echo ECE on every ACK from a CE mark until a data packet with CWR arrives.
    ece_latched: bool,
    pending_stamp: Time,
    /// When a delayed ACK must go out (None: none pending).
    pub delack_deadline: Option<Time>,
    /// Unique data packets received.
    pub delivered: u64,
}

impl TcpSink {
    pub fn new(flow: u32, ack_size: u32, sack: bool, delayed: bool, delack_timeout: Time) -> Self {
        TcpSink {
            flow,
            ack_size,
            sack,
            delayed,
            delack_timeout,
            next: 0,
            ooo: SeqRuns::default(),
            recent: [0; MAX_SACK_BLOCKS],
            nrecent: 0,
            pending: 0,
            ece_latched: false,
            pending_stamp: 0,
            delack_deadline: None,
            delivered: 0,
        }
    }

    /// Highest in-order sequence received + 1.
    pub fn next_expected(&self) -> u32 {
        self.next
    }

    fn note_recent(&mut self, seq: u32) {
        let n = self.nrecent.min(MAX_SACK_BLOCKS - 1);
        self.recent.copy_within(0..n, 1);
        self.recent[0] = seq;
        self.nrecent = (self.nrecent + 1).min(MAX_SACK_BLOCKS);
    }

    #[inline]
    fn fill_sack(&self, ack: &mut Packet) {
        if !self.sack || self.ooo.is_empty() {
            return;
        }
        (ack.sack, ack.nsack) = self.sack_blocks();
    }

    /// `fill_sack`'s blocks and how many there are (out of line: most ACKs carry none). They
    /// are returned, not written into the ACK through a reference: an ACK whose address is
    /// passed to a call lives in memory, built there field by field (1- and 2-byte stores) and
    /// copied on at once in 8- and 16-byte loads, which cannot be served from those stores and
    /// wait for them to reach the cache, on every ACK (measured, plain build: −4 % CPU on the
    /// reference; the profile-guided build showed no gain).
    #[inline(never)]
    fn sack_blocks(&self) -> ([(u32, u32); MAX_SACK_BLOCKS], u8) {
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        let mut n = 0usize;
        let mut push = |b: (u32, u32), n: &mut usize| {
            if *n < MAX_SACK_BLOCKS && !blocks[..*n].contains(&b) {
                blocks[*n] = b;
                *n += 1;
            }
        };
        for &seq in &self.recent[..self.nrecent] {
            if let Some(b) = self.ooo.run_of(seq) {
                push(b, &mut n);
            }
        }
        // Then the lowest blocks (they tell the sender about the holes it must fill first).
        for b in self.ooo.iter() {
            if n >= MAX_SACK_BLOCKS {
                break;
            }
            push(b, &mut n);
        }
        (blocks, n as u8)
    }

    #[inline]
    fn make_ack(&mut self, stamp: Time) -> Packet {
        let mut a = Packet::ack(self.flow, self.next, self.ack_size, stamp);
        if self.ece_latched {
            a.ecn |= ecn::ECE;
        }
        self.fill_sack(&mut a);
        a.size += SACK_BLOCK_BYTES * a.nsack as u32;
        self.pending = 0;
        self.delack_deadline = None;
        a
    }

    /// A data packet arrives; returns the ACK to send now, if any.
    pub fn on_data(&mut self, now: Time, pkt: &Packet) -> Option<Packet> {
        let seq = pkt.seq;
        if pkt.ecn & ecn::CWR != 0 {
            self.ece_latched = false;
        }
        if pkt.ecn & ecn::CE != 0 {
            self.ece_latched = true;
        }
        let in_order = seq == self.next;
        let immediate = if in_order && self.ooo.is_empty() {
            // The usual packet: the next in order with nothing held out of order (fresh, no
            // run to deliver with it, no SACK block to send), decided without the lookups below.
            self.delivered += 1;
            self.next += 1;
            !self.delayed
        } else {
            // The runs held out of order all lie above `next`: an in-order packet is always fresh.
            let fresh = in_order || (seq > self.next && self.ooo.run_of(seq).is_none());
            if fresh {
                self.delivered += 1;
            }
            if in_order {
                self.next += 1;
                // The run that now follows in order is delivered with it.
                if let Some((_, end)) = self.ooo.first().filter(|&(start, _)| start == self.next) {
                    self.next = end;
                    self.ooo.drop_below(end);
                }
            } else if fresh {
                self.ooo.add(seq, seq + 1, |_| {});
                self.note_recent(seq);
            }
            !self.delayed || !in_order || !self.ooo.is_empty() || !fresh
        };
        if immediate || self.pending >= 1 {
            return Some(self.make_ack(pkt.stamp));
        }
        self.pending += 1;
        self.pending_stamp = pkt.stamp;
        self.delack_deadline = Some(now + self.delack_timeout);
        None
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack_timeout(&mut self, _now: Time) -> Option<Packet> {
        if self.pending == 0 {
            self.delack_deadline = None;
            return None;
        }
        let stamp = self.pending_stamp;
        Some(self.make_ack(stamp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink(sack: bool, delayed: bool) -> TcpSink {
        TcpSink::new(0, 40, sack, delayed, 100_000_000)
    }

    fn data(seq: u32) -> Packet {
        Packet::data(0, seq, 1000, 0, 0)
    }

    #[test]
    fn cumulative_acks_and_sack_blocks() {
        let mut s = sink(true, false);
        assert_eq!(s.on_data(0, &data(0)).unwrap().seq, 1);
        let a = s.on_data(0, &data(2)).unwrap();
        assert_eq!(a.seq, 1);
        assert_eq!(a.sack_blocks(), &[(2, 3)]);
        let a = s.on_data(0, &data(5)).unwrap();
        assert_eq!(a.sack_blocks(), &[(5, 6), (2, 3)]);
        let a = s.on_data(0, &data(3)).unwrap();
        assert_eq!(a.sack_blocks(), &[(2, 4), (5, 6)]);
        let a = s.on_data(0, &data(1)).unwrap();
        assert_eq!(a.seq, 4);
        assert_eq!(a.sack_blocks(), &[(5, 6)]);
        assert_eq!(s.delivered, 5);
        // duplicate: acknowledged, not counted
        s.on_data(0, &data(2)).unwrap();
        assert_eq!(s.delivered, 5);
    }

    #[test]
    fn delayed_ack_every_second_packet() {
        let mut s = sink(false, true);
        assert!(s.on_data(0, &data(0)).is_none());
        assert_eq!(s.delack_deadline, Some(100_000_000));
        assert_eq!(s.on_data(1, &data(1)).unwrap().seq, 2);
        assert!(s.on_data(2, &data(2)).is_none());
        assert_eq!(s.on_delack_timeout(100_000_002).unwrap().seq, 3);
        // out of order: immediate
        assert_eq!(s.on_data(3, &data(5)).unwrap().seq, 3);
    }

    #[test]
    fn echoes_congestion_experienced_until_cwr() {
        let mut s = sink(false, false);
        let mut p = data(0);
        p.ecn = ecn::ECT | ecn::CE;
        assert!(s.on_data(0, &p).unwrap().ecn & ecn::ECE != 0);
        // repeated on later ACKs (RFC 3168) ...
        assert!(s.on_data(0, &data(1)).unwrap().ecn & ecn::ECE != 0);
        // ... until the sender says it reduced its window
        let mut c = data(2);
        c.ecn = ecn::ECT | ecn::CWR;
        assert!(s.on_data(0, &c).unwrap().ecn & ecn::ECE == 0);
        assert!(s.on_data(0, &data(3)).unwrap().ecn & ecn::ECE == 0);
    }
}
