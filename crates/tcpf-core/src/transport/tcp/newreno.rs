//! `recovery = "newreno"` (RFC 6582): Reno's fast recovery, but it lasts until the recovery
//! point is acknowledged; each partial ACK retransmits the next hole and deflates the window
//! by the packets it acknowledged.
//!
//! Every partial ACK restarts the retransmission timer (RFC 6582 §4.1's "Slow-but-Steady"
//! variant; ns-2 with `newreno_changes1_ 0`). `recovery = "newreno-impatient"` restarts it on
//! the first partial ACK only ("Impatient"; ns-2's `Agent/TCP/Newreno` by default,
//! `newreno_changes1_ 1`), so a recovery that repairs one hole per round trip and lasts longer
//! than the RTO after its first partial ACK ends in a timeout: a window that lost many packets
//! is retransmitted from the timeout rather than repaired hole by hole.

use super::classic::DupAck;
use super::core::Core;
use super::reno::Reno;
use crate::net::packet::Packet;
use crate::sim::Time;

#[derive(Default)]
pub(super) struct NewReno {
    reno: Reno,
    /// The Impatient variant: only the first partial ACK of a recovery restarts the timer.
    impatient: bool,
    /// Partial ACKs since the recovery began.
    partials: u32,
}

impl NewReno {
    /// `impatient`: RFC 6582's Impatient variant (see the module's documentation).
    pub fn new(impatient: bool) -> Self {
        NewReno { impatient, ..Default::default() }
    }
}

impl DupAck for NewReno {
    #[inline]
    fn inflation(&self) -> f64 {
        self.reno.inflate
    }

    fn enter(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        self.partials = 0;
        self.reno.enter_inflated(c, now, out);
    }

    #[inline]
    fn on_new_ack(&mut self, c: &mut Core, now: Time, acked: u32, partial: bool, out: &mut Vec<Packet>) {
        if partial {
            self.partials = self.partials.saturating_add(1);
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
    fn restarts_timer(&self, in_recovery: bool) -> bool {
        !(self.impatient && in_recovery && self.partials > 1)
    }

    #[inline]
    fn on_timeout(&mut self) {
        self.reno.inflate = 0.0;
    }
}
