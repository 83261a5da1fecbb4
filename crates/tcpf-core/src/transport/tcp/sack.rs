//! `recovery = "sack"`, in the spirit of RFC 6675: a scoreboard of SACKed packets; in recovery
//! the sender estimates the packets in the network (`pipe`) and, while the window allows,
//! retransmits every packet deemed lost (DupThresh SACKed packets above it) before new data.

use super::classic::DupAck;
use super::core::Core;
use super::{RETX, SACKED};
use crate::net::packet::Packet;
use crate::sim::Time;

pub(super) struct Sack;

/// Mark the packets the ACK's SACK blocks cover.
pub(super) fn apply_sack(c: &mut Core, pkt: &Packet) {
    for &(start, end) in pkt.sack_blocks() {
        let lo = start.max(c.snd_una);
        let hi = end.min(c.snd_max);
        for seq in lo..hi {
            c.sb[(seq - c.snd_una) as usize] |= SACKED;
        }
    }
}

/// Sequence number below which every un-SACKed packet counts as lost (RFC 6675 IsLost:
/// at least DupThresh SACKed packets above it).
fn lost_below(c: &Core) -> u32 {
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

/// Packets deemed in the network: un-SACKed ones not deemed lost, plus retransmissions.
fn pipe(c: &Core, lost_below: u32) -> u32 {
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

/// Send while pipe < cwnd: lost packets not yet retransmitted first, then new data.
fn sack_send(c: &mut Core, now: Time, out: &mut Vec<Packet>) {
    let cwnd = c.cwnd();
    let lost_below = lost_below(c);
    let mut pipe = pipe(c, lost_below) as f64;
    let mut scan = 0usize;
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
            Some(seq) => c.transmit(now, seq, out),
            None => {
                if !c.send_new(now, out) {
                    break;
                }
            }
        }
        pipe += 1.0;
    }
}

impl DupAck for Sack {
    const SACK: bool = true;

    #[inline]
    fn send(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        if c.in_recovery {
            sack_send(c, now, out);
        } else {
            c.send_window(c.cc.window(), now, out);
        }
    }

    fn enter(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        for f in c.sb.iter_mut() {
            *f &= !RETX;
        }
        c.transmit(now, c.snd_una, out);
        sack_send(c, now, out);
    }

    /// A partial ACK keeps SACK recovery going; the full one ends it.
    #[inline]
    fn on_new_ack(&mut self, c: &mut Core, _now: Time, _acked: u32, partial: bool, _out: &mut Vec<Packet>) {
        if !partial {
            c.in_recovery = false;
        }
    }
}
