//! DropTail: a FIFO that drops arrivals when it is full.

use super::{Admission, Arrival, Discipline};
use crate::net::packet::Wire;

/// Tail drop. `limit` counts packets in the system, the one being sent included (ns-2's
/// DropTail `limit_`).
#[derive(Clone, Debug)]
pub struct DropTail {
    pub limit: u32,
}

impl Discipline for DropTail {
    #[inline]
    fn on_arrival(&mut self, a: &Arrival, _pkt: &Wire) -> Admission {
        if a.waiting + a.busy as u32 >= self.limit {
            Admission::ForcedDrop
        } else {
            Admission::Enqueue
        }
    }
}
