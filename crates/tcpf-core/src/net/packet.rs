//! The packet: small, `Copy`, moved by value through queues.

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
