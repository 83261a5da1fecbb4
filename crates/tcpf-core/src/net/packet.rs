//! The packet: small, `Copy`, moved by value through the engine; [`Wire`] is its compact form
//! while it propagates (what the links' pipes hold).

use crate::sim::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketKind {
    /// TCP data segment (one packet = one sequence number).
    Data,
    /// TCP acknowledgement.
    Ack,
    /// Unreliable datagram (CBR and other UDP sources).
    Datagram,
}

/// ECN codepoints and TCP ECN flags, as bits.
pub mod ecn {
    /// ECN-capable transport (set by the sender on data).
    pub const ECT: u8 = 1;
    /// Congestion experienced (set by a marking queue).
    pub const CE: u8 = 2;
    /// ECN echo (set by the receiver on an ACK).
    pub const ECE: u8 = 4;
    /// Congestion window reduced (set by the sender on data after it reacted to an echo).
    pub const CWR: u8 = 8;
}

/// Up to three SACK blocks `[start, end)` in packet sequence numbers.
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Flow index (sender and receiver of a flow share it).
    pub flow: u32,
    /// Data: sequence number. Ack: cumulative ack (next expected sequence number).
    pub seq: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Index of the next link on the path.
    pub hop: u16,
    pub kind: PacketKind,
    pub ecn: u8,
    /// Data: time the packet was sent. Ack: the echoed send time of the data packet that
    /// triggered it (a timestamp echo), giving an RTT sample per ACK.
    pub stamp: Time,
    /// Number of valid SACK blocks.
    pub nsack: u8,
    /// Rate-based data: the sender's RTT estimate in microseconds (what TFRC and TEAR data
    /// packets carry for the receiver).
    pub aux: u32,
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn data(flow: u32, seq: u32, size: u32, now: Time, ecn: u8) -> Self {
        Packet { flow, seq, size, hop: 0, kind: PacketKind::Data, ecn, stamp: now, nsack: 0, aux: 0, sack: [(0, 0); MAX_SACK_BLOCKS] }
    }

    pub fn ack(flow: u32, ack: u32, size: u32, echo: Time) -> Self {
        Packet { flow, seq: ack, size, hop: 0, kind: PacketKind::Ack, ecn: 0, stamp: echo, nsack: 0, aux: 0, sack: [(0, 0); MAX_SACK_BLOCKS] }
    }

    pub fn datagram(flow: u32, seq: u32, size: u32, now: Time) -> Self {
        Packet { flow, seq, size, hop: 0, kind: PacketKind::Datagram, ecn: 0, stamp: now, nsack: 0, aux: 0, sack: [(0, 0); MAX_SACK_BLOCKS] }
    }

    #[inline]
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.nsack as usize]
    }
}

/// A packet in a link's propagation pipe: the fields every packet has, in 24 bytes. The
/// SACK blocks and the aux word ([`Ext`]) travel out of line, in a FIFO beside the pipe,
/// only for packets that carry any (`Packet::split` / `Wire::join` round-trip exactly).
#[derive(Clone, Copy, Debug)]
pub struct Wire {
    stamp: Time,
    flow: u32,
    seq: u32,
    size: u32,
    hop: u16,
    /// Kind (bits 0-1), number of SACK blocks (bits 2-3), has an [`Ext`] (bit 4).
    tag: u8,
    ecn: u8,
}

/// The most links a route may have: a packet counts its hops in 16 bits.
pub const MAX_ROUTE_LINKS: usize = u16::MAX as usize;

/// What a [`Wire`] leaves out: the aux word and the SACK blocks.
#[derive(Clone, Copy, Debug)]
pub struct Ext {
    aux: u32,
    sack: [(u32, u32); MAX_SACK_BLOCKS],
}

const TAG_EXT: u8 = 1 << 4;

impl Packet {
    /// The compact form, and the out-of-line part if the packet has a nonzero aux word or
    /// SACK block.
    #[inline]
    pub fn split(&self) -> (Wire, Option<Ext>) {
        // SACK blocks past `nsack` are never written (they stay zero), so `nsack` says whether
        // there are any.
        debug_assert!(self.sack[self.nsack as usize..].iter().all(|&b| b == (0, 0)), "SACK block past nsack");
        let ext = (self.aux != 0 || self.nsack != 0).then_some(Ext { aux: self.aux, sack: self.sack });
        let tag = self.kind as u8 | (self.nsack << 2) | if ext.is_some() { TAG_EXT } else { 0 };
        (Wire { stamp: self.stamp, flow: self.flow, seq: self.seq, size: self.size, hop: self.hop, tag, ecn: self.ecn }, ext)
    }
}

impl Wire {
    /// Flow index.
    #[inline(always)]
    pub fn flow(&self) -> u32 {
        self.flow
    }

    /// Bytes on the wire.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Index of the next link on the path.
    #[inline(always)]
    pub fn hop(&self) -> u16 {
        self.hop
    }

    /// The packet has entered the link at its hop: the next one is next.
    #[inline(always)]
    pub fn next_hop(&mut self) {
        self.hop += 1;
    }

    /// ECN bits ([`ecn`]).
    #[inline(always)]
    pub fn ecn(&self) -> u8 {
        self.ecn
    }

    /// Set ECN bits (a marking queue sets [`ecn::CE`]).
    #[inline(always)]
    pub fn set_ecn(&mut self, bits: u8) {
        self.ecn |= bits;
    }

    #[inline(always)]
    pub fn is_ack(&self) -> bool {
        self.tag & 3 == PacketKind::Ack as u8
    }

    /// Whether the packet has an out-of-line part (to be passed to `join`).
    #[inline]
    pub fn has_ext(&self) -> bool {
        self.tag & TAG_EXT != 0
    }

    /// The packet again, from its compact form and its out-of-line part (`Some` exactly when
    /// `has_ext`).
    #[inline]
    pub fn join(self, ext: Option<Ext>) -> Packet {
        debug_assert_eq!(ext.is_some(), self.has_ext());
        let kind = match self.tag & 3 {
            0 => PacketKind::Data,
            1 => PacketKind::Ack,
            _ => PacketKind::Datagram,
        };
        let (aux, sack) = ext.map_or((0, [(0, 0); MAX_SACK_BLOCKS]), |e| (e.aux, e.sack));
        Packet { flow: self.flow, seq: self.seq, size: self.size, hop: self.hop, kind, ecn: self.ecn, stamp: self.stamp, nsack: (self.tag >> 2) & 3, aux, sack }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &Packet, b: &Packet) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    #[test]
    fn wire_is_small_and_round_trips() {
        assert_eq!(std::mem::size_of::<Wire>(), 24);
        let mut ack = Packet::ack(7, 100, 64, 123_456_789_012);
        ack.ecn = ecn::ECE;
        ack.hop = 2;
        ack.sack[0] = (102, 104);
        ack.sack[1] = (106, 107);
        ack.nsack = 2;
        let mut rate = Packet::data(3, 9, 1000, 5, ecn::ECT | ecn::CE);
        rate.aux = 40_000;
        for p in [ack, rate, Packet::data(1, 2, 1500, 99, 0), Packet::datagram(u32::MAX, u32::MAX, 200, Time::MAX)] {
            let (w, ext) = p.split();
            assert_eq!(w.has_ext(), p.aux != 0 || p.nsack > 0);
            assert!(same(&w.join(ext), &p), "{p:?}");
        }
    }
}
