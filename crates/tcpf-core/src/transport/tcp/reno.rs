//! `recovery = "reno"`: fast retransmit, then fast recovery with window inflation (one packet
//! per duplicate ACK) that ends at the first new ACK.

use super::classic::DupAck;
use super::core::Core;
use crate::net::packet::Packet;
use crate::sim::Time;

/// Window inflation during fast recovery, shared with NewReno.
#[derive(Default)]
pub(super) struct Reno {
    pub inflate: f64,
}

impl Reno {
    /// Fast retransmit: inflate by dupthresh, resend the first hole, send what the window allows.
    pub fn enter_inflated(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        self.inflate = c.p.dupthresh as f64;
        c.transmit(now, c.snd_una, out);
        self.send(c, now, out);
    }
}

impl DupAck for Reno {
    #[inline]
    fn inflation(&self) -> f64 {
        self.inflate
    }

    fn enter(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        self.enter_inflated(c, now, out);
    }

    /// Any new ACK ends Reno's recovery.
    #[inline]
    fn on_new_ack(&mut self, c: &mut Core, _now: Time, _acked: u32, _partial: bool, _out: &mut Vec<Packet>) {
        c.in_recovery = false;
        self.inflate = 0.0;
    }

    #[inline]
    fn on_dupack_in_recovery(&mut self) {
        self.inflate += 1.0;
    }

    #[inline]
    fn on_timeout(&mut self) {
        self.inflate = 0.0;
    }
}
