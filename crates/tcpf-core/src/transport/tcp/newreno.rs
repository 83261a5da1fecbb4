//! `recovery = "newreno"` (RFC 6582): Reno's fast recovery, but it lasts until the recovery
//! point is acknowledged; each partial ACK retransmits the next hole and deflates the window
//! by the packets it acknowledged.

use super::classic::DupAck;
use super::core::Core;
use super::reno::Reno;
use crate::net::packet::Packet;
use crate::sim::Time;

#[derive(Default)]
pub(super) struct NewReno {
    reno: Reno,
}

impl DupAck for NewReno {
    #[inline]
    fn inflation(&self) -> f64 {
        self.reno.inflate
    }

    fn enter(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        self.reno.enter_inflated(c, now, out);
    }

    #[inline]
    fn on_new_ack(&mut self, c: &mut Core, now: Time, acked: u32, partial: bool, out: &mut Vec<Packet>) {
        if partial {
            self.reno.inflate = (self.reno.inflate - acked as f64 + 1.0).max(0.0);
            c.transmit(now, c.snd_una, out);
        } else {
            c.in_recovery = false;
            self.reno.inflate = 0.0;
        }
    }

    #[inline]
    fn on_dupack_in_recovery(&mut self) {
        self.reno.inflate += 1.0;
    }

    #[inline]
    fn on_timeout(&mut self) {
        self.reno.inflate = 0.0;
    }
}
