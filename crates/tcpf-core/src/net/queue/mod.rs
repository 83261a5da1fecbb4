//! Output-queue disciplines: unlimited FIFO, DropTail and RED, behind one [`Discipline`]
//! trait and dispatched statically through the [`Queue`] enum.
//!
//! A discipline decides for each arriving packet ([`Discipline::on_arrival`]) and may also
//! decide when the packet's service starts ([`Discipline::on_service`], for CoDel/PIE-style
//! disciplines that judge the time a packet waited). The link serves its FIFO at a constant
//! rate, so a packet's service start is known the moment it is admitted; the dequeue-time
//! decision is therefore taken at admission, in service order, with the sojourn time the
//! packet will have had. It sees the queue as admitted so far: packets that arrive while it
//! waits are not known yet. Disciplines without a dequeue decision (DropTail, RED) leave
//! [`Discipline::AT_SERVICE`] false and the link compiles the call away.

mod droptail;
mod red;

pub use droptail::DropTail;
pub use red::{Red, RedParams};

use super::packet::Wire;
use crate::sim::{Rng, Time};

/// How a link buffers packets.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueSpec {
    /// FIFO that never drops (access links).
    Unlimited,
    /// Tail drop. `limit` counts packets in the system, the one being sent included
    /// (ns-2's DropTail `limit_`).
    DropTail { limit: u32 },
    /// RED. `limit` is the number of packets that may wait (ns-2's RED `limit_`).
    Red { limit: u32, params: RedParams },
}

impl QueueSpec {
    /// The discipline's name as scenarios write it (`queue = "red"`).
    pub fn name(&self) -> &'static str {
        match self {
            QueueSpec::Unlimited => "unlimited",
            QueueSpec::DropTail { .. } => "droptail",
            QueueSpec::Red { .. } => "red",
        }
    }

    /// The buffer limit in packets (`u32::MAX` for an unlimited queue).
    pub fn limit(&self) -> u32 {
        match self {
            QueueSpec::Unlimited => u32::MAX,
            QueueSpec::DropTail { limit } | QueueSpec::Red { limit, .. } => *limit,
        }
    }

    /// RED's parameters, if RED.
    pub fn red(&self) -> Option<&RedParams> {
        match self {
            QueueSpec::Red { params, .. } => Some(params),
            _ => None,
        }
    }

    /// Whether the queue marks ECN-capable packets instead of dropping them early.
    pub fn ecn(&self) -> bool {
        self.red().is_some_and(|r| r.ecn)
    }
}

/// What a queue decides for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Enqueue,
    /// Enqueue with the CE codepoint set.
    Mark,
    /// Dropped by an early (probabilistic) decision.
    EarlyDrop,
    /// Dropped because the buffer is full (or RED's forced region).
    ForcedDrop,
}

/// What a discipline sees of its link when a packet arrives.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    /// Arrival time.
    pub at: Time,
    /// Packets waiting (not counting the one being sent).
    pub waiting: u32,
    /// Whether a packet is being sent at `at`.
    pub busy: bool,
    /// End of the last admitted packet's transmission (when the link went or goes idle).
    pub busy_until: Time,
}

impl Arrival {
    /// When this packet's service would start: the FIFO serves at a constant rate.
    #[inline]
    pub fn service_start(&self) -> Time {
        self.at.max(self.busy_until)
    }
}

/// A queue discipline: an enqueue decision, and optionally a decision when service starts.
pub trait Discipline {
    /// Whether [`Discipline::on_service`] decides anything (false: the link skips it at
    /// compile time).
    const AT_SERVICE: bool = false;

    /// Decide for a packet arriving as `a` describes.
    fn on_arrival(&mut self, a: &Arrival, pkt: &Wire) -> Admission;

    /// Decide for an admitted packet (`Enqueue` or `Mark`) when its service starts at `start`,
    /// after waiting `sojourn`: `EarlyDrop` drops it there, `Mark` marks it. Called in service
    /// order, only when [`Discipline::AT_SERVICE`] is true.
    #[inline]
    fn on_service(&mut self, _start: Time, _sojourn: Time, _pkt: &Wire) -> Admission {
        Admission::Enqueue
    }
}

/// Both decisions of discipline `d` for one packet.
#[inline(always)]
fn decide<D: Discipline>(d: &mut D, a: &Arrival, pkt: &Wire) -> Admission {
    let first = d.on_arrival(a, pkt);
    if D::AT_SERVICE && matches!(first, Admission::Enqueue | Admission::Mark) {
        let start = a.service_start();
        return match d.on_service(start, start - a.at, pkt) {
            Admission::Enqueue => first,
            other => other,
        };
    }
    first
}

/// A link's queue: the discipline a [`QueueSpec`] describes, with its state.
#[derive(Clone, Debug)]
pub enum Queue {
    Unlimited,
    DropTail(DropTail),
    Red(Box<Red>),
}

impl Queue {
    /// The queue `spec` describes on a link of `rate_bps`; `rng` drives random decisions.
    pub fn new(spec: &QueueSpec, rate_bps: f64, rng: Rng) -> Self {
        match spec {
            QueueSpec::Unlimited => Queue::Unlimited,
            QueueSpec::DropTail { limit } => Queue::DropTail(DropTail { limit: *limit }),
            QueueSpec::Red { limit, params } => Queue::Red(Box::new(Red::new(*limit, params.clone(), rate_bps, rng))),
        }
    }

    /// The decision for a packet arriving as `a` describes.
    #[inline]
    pub fn decide(&mut self, a: &Arrival, pkt: &Wire) -> Admission {
        match self {
            Queue::Unlimited => Admission::Enqueue,
            Queue::DropTail(d) => decide(d, a, pkt),
            Queue::Red(r) => decide(&mut **r, a, pkt),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;

    /// A toy dequeue-time discipline: drop a packet that would wait longer than `target`.
    struct Sojourn {
        target: Time,
        seen: Vec<(Time, Time)>,
    }

    impl Discipline for Sojourn {
        const AT_SERVICE: bool = true;
        fn on_arrival(&mut self, _a: &Arrival, _pkt: &Wire) -> Admission {
            Admission::Enqueue
        }
        fn on_service(&mut self, start: Time, sojourn: Time, _pkt: &Wire) -> Admission {
            self.seen.push((start, sojourn));
            if sojourn > self.target { Admission::EarlyDrop } else { Admission::Enqueue }
        }
    }

    #[test]
    fn service_time_decision_sees_the_sojourn() {
        let mut d = Sojourn { target: 2_000, seen: vec![] };
        let pkt = Packet::data(0, 0, 1000, 0, 0).split().0;
        let short = Arrival { at: 10_000, waiting: 1, busy: true, busy_until: 11_000 };
        let long = Arrival { at: 10_000, waiting: 3, busy: true, busy_until: 13_000 };
        let idle = Arrival { at: 10_000, waiting: 0, busy: false, busy_until: 9_000 };
        assert_eq!(decide(&mut d, &short, &pkt), Admission::Enqueue);
        assert_eq!(decide(&mut d, &long, &pkt), Admission::EarlyDrop);
        assert_eq!(decide(&mut d, &idle, &pkt), Admission::Enqueue);
        assert_eq!(d.seen, vec![(11_000, 1_000), (13_000, 3_000), (10_000, 0)]);
        // DropTail decides at arrival only.
        let mut dt = DropTail { limit: 2 };
        const { assert!(!DropTail::AT_SERVICE) };
        assert_eq!(decide(&mut dt, &short, &pkt), Admission::ForcedDrop);
        assert_eq!(decide(&mut dt, &idle, &pkt), Admission::Enqueue);
    }
}
