//! A unidirectional link: loss model → output queue → transmitter → propagation pipe.
//!
//! Packets in propagation sit in a FIFO (`pipe`) because a link delivers in order; the engine
//! keeps one event per link for the head of that FIFO, which keeps the event heap small.
//! Links with an unlimited FIFO need no transmit-complete events at all: departure times
//! follow from `busy_until`.

use super::loss::LossModel;
use super::packet::{ecn, Packet, PacketKind};
use super::queue::{Admission, QueueSpec, Red};
use super::NodeId;
use crate::sim::{Rng, Time};
use std::collections::VecDeque;

/// Counters over the measurement window.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub arrivals: u64,
    pub departures: u64,
    pub bytes_sent: u64,
    /// Queue drops (buffer full or RED) plus loss-model drops.
    pub drops: u64,
    pub early_drops: u64,
    pub forced_drops: u64,
    pub loss_model_drops: u64,
    pub marks: u64,
    /// ∫ busy dt over the window (ns).
    pub busy_ns: u128,
    /// ∫ waiting-queue length dt over the window (packet·ns).
    pub queue_area: u128,
}

/// What the engine must schedule after a packet entered a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entered {
    /// Lost or dropped; nothing to schedule.
    Dropped,
    /// Waiting behind others; nothing to schedule.
    Queued,
    /// Transmission started; schedule a transmit-complete event at this time.
    TxUntil(Time),
    /// (Unlimited FIFO) in the pipe; schedule an arrival at this time if the pipe was empty.
    Piped { arrival: Time, first: bool },
}

enum Discipline {
    Unlimited,
    DropTail { limit: u32 },
    Red(Box<Red>),
}

pub struct Link {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: f64,
    pub delay: Time,
    ns_per_byte: f64,
    discipline: Discipline,
    waiting: VecDeque<Packet>,
    in_service: Option<Packet>,
    busy_until: Time,
    pipe: VecDeque<(Time, Packet)>,
    pub loss: Option<LossModel>,
    pub stats: LinkStats,
    meas_from: Time,
    meas_to: Time,
    q_last: Time,
}

impl Link {
    pub fn new(name: String, from: NodeId, to: NodeId, rate_bps: f64, delay: Time, queue: &QueueSpec, rng: Rng) -> Self {
        let discipline = match queue {
            QueueSpec::Unlimited => Discipline::Unlimited,
            QueueSpec::DropTail { limit } => Discipline::DropTail { limit: *limit },
            QueueSpec::Red { limit, params } => Discipline::Red(Box::new(Red::new(*limit, params.clone(), rate_bps, rng))),
        };
        Link {
            name,
            from,
            to,
            rate_bps,
            delay,
            ns_per_byte: 8e9 / rate_bps,
            discipline,
            waiting: VecDeque::new(),
            in_service: None,
            busy_until: 0,
            pipe: VecDeque::new(),
            loss: None,
            stats: LinkStats::default(),
            meas_from: 0,
            meas_to: Time::MAX,
            q_last: 0,
        }
    }

    pub fn set_measurement(&mut self, from: Time, to: Time) {
        self.meas_from = from;
        self.meas_to = to;
        self.q_last = from;
    }

    #[inline]
    fn measuring(&self, now: Time) -> bool {
        now >= self.meas_from && now <= self.meas_to
    }

    #[inline]
    fn overlap(&self, a: Time, b: Time) -> u64 {
        let lo = a.max(self.meas_from);
        let hi = b.min(self.meas_to);
        hi.saturating_sub(lo)
    }

    #[inline]
    fn tx_ns(&self, bytes: u32) -> Time {
        ((bytes as f64 * self.ns_per_byte).ceil() as Time).max(1)
    }

    /// Account the waiting-queue length up to `now` (call before it changes).
    #[inline]
    fn queue_tick(&mut self, now: Time) {
        if now > self.q_last {
            let dt = self.overlap(self.q_last, now);
            self.stats.queue_area += self.waiting.len() as u128 * dt as u128;
            self.q_last = now;
        }
    }

    /// Packets waiting (not counting the one being sent).
    pub fn queue_len(&self) -> usize {
        self.waiting.len()
    }

    /// Average RED queue, if RED.
    pub fn red_avg(&self) -> Option<f64> {
        match &self.discipline {
            Discipline::Red(r) => Some(r.avg),
            _ => None,
        }
    }

    fn note_drop(&mut self, now: Time, kind: Admission) {
        if self.measuring(now) {
            self.stats.drops += 1;
            match kind {
                Admission::EarlyDrop => self.stats.early_drops += 1,
                _ => self.stats.forced_drops += 1,
            }
        }
    }

    fn start_tx(&mut self, now: Time, pkt: Packet) -> Time {
        let done = now + self.tx_ns(pkt.size);
        let busy = self.overlap(now, done);
        self.stats.busy_ns += busy as u128;
        self.in_service = Some(pkt);
        done
    }

    /// A packet enters the link at `now`.
    #[inline]
    pub fn enter(&mut self, now: Time, mut pkt: Packet) -> Entered {
        let measuring = self.measuring(now);
        if measuring {
            self.stats.arrivals += 1;
        }
        if let Some(loss) = self.loss.as_mut() {
            if (!loss.data_only || pkt.kind != PacketKind::Ack) && loss.drops(now) {
                if measuring {
                    self.stats.drops += 1;
                    self.stats.loss_model_drops += 1;
                }
                return Entered::Dropped;
            }
        }
        match &mut self.discipline {
            Discipline::Unlimited => {
                let start = now.max(self.busy_until);
                let done = start + self.tx_ns(pkt.size);
                self.busy_until = done;
                let busy = self.overlap(start, done);
                self.stats.busy_ns += busy as u128;
                if self.measuring(done) {
                    self.stats.departures += 1;
                    self.stats.bytes_sent += pkt.size as u64;
                }
                let arrival = done + self.delay;
                let first = self.pipe.is_empty();
                self.pipe.push_back((arrival, pkt));
                Entered::Piped { arrival, first }
            }
            Discipline::DropTail { limit } => {
                let in_system = self.waiting.len() as u32 + self.in_service.is_some() as u32;
                if in_system >= *limit {
                    self.note_drop(now, Admission::ForcedDrop);
                    return Entered::Dropped;
                }
                self.admit_queued(now, pkt)
            }
            Discipline::Red(red) => {
                let ect = pkt.ecn & ecn::ECT != 0;
                match red.admit(now, self.waiting.len() as u32, ect) {
                    Admission::Enqueue => self.admit_queued(now, pkt),
                    Admission::Mark => {
                        pkt.ecn |= ecn::CE;
                        if measuring {
                            self.stats.marks += 1;
                        }
                        self.admit_queued(now, pkt)
                    }
                    d => {
                        self.note_drop(now, d);
                        Entered::Dropped
                    }
                }
            }
        }
    }

    fn admit_queued(&mut self, now: Time, pkt: Packet) -> Entered {
        if self.in_service.is_none() {
            Entered::TxUntil(self.start_tx(now, pkt))
        } else {
            self.queue_tick(now);
            self.waiting.push_back(pkt);
            Entered::Queued
        }
    }

    /// The packet in service finished at `now`. Returns (next transmit-complete time, arrival
    /// time to schedule if the pipe was empty).
    pub fn tx_done(&mut self, now: Time) -> (Option<Time>, Option<Time>) {
        let pkt = self.in_service.take().expect("tx_done without a packet in service");
        if self.measuring(now) {
            self.stats.departures += 1;
            self.stats.bytes_sent += pkt.size as u64;
        }
        let arrival = now + self.delay;
        let first = self.pipe.is_empty();
        self.pipe.push_back((arrival, pkt));
        let next = if let Some(p) = {
            self.queue_tick(now);
            self.waiting.pop_front()
        } {
            Some(self.start_tx(now, p))
        } else {
            if let Discipline::Red(red) = &mut self.discipline {
                red.went_idle(now);
            }
            None
        };
        (next, if first { Some(arrival) } else { None })
    }

    /// The head of the pipe reaches the far end at `now`. Returns it and the arrival time of
    /// the next one, if any.
    #[inline]
    pub fn pop_arrival(&mut self) -> (Packet, Option<Time>) {
        let (_, pkt) = self.pipe.pop_front().expect("arrival with an empty pipe");
        (pkt, self.pipe.front().map(|(t, _)| *t))
    }

    /// Close the time integrals at the end of the run.
    pub fn finish(&mut self, end: Time) {
        self.queue_tick(end);
    }

    /// Length of the measurement window (ns).
    pub fn window_ns(&self, end: Time) -> u64 {
        self.meas_to.min(end).saturating_sub(self.meas_from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(seq: u32) -> Packet {
        Packet::data(0, seq, 1000, 0, 0)
    }

    #[test]
    fn droptail_limits_packets_in_system() {
        let mut l = Link::new("l".into(), 0, 1, 8e6, 1_000_000, &QueueSpec::DropTail { limit: 3 }, Rng::new(1));
        assert_eq!(l.enter(0, pkt(0)), Entered::TxUntil(1_000_000));
        assert_eq!(l.enter(0, pkt(1)), Entered::Queued);
        assert_eq!(l.enter(0, pkt(2)), Entered::Queued);
        assert_eq!(l.enter(0, pkt(3)), Entered::Dropped);
        assert_eq!(l.stats.drops, 1);
        let (next, arr) = l.tx_done(1_000_000);
        assert_eq!(next, Some(2_000_000));
        assert_eq!(arr, Some(2_000_000));
        let (p, nxt) = l.pop_arrival();
        assert_eq!(p.seq, 0);
        assert_eq!(nxt, None);
    }

    #[test]
    fn unlimited_fifo_serialises_back_to_back() {
        let mut l = Link::new("a".into(), 0, 1, 8e6, 500, &QueueSpec::Unlimited, Rng::new(1));
        assert_eq!(l.enter(0, pkt(0)), Entered::Piped { arrival: 1_000_500, first: true });
        assert_eq!(l.enter(10, pkt(1)), Entered::Piped { arrival: 2_000_500, first: false });
        let (p, nxt) = l.pop_arrival();
        assert_eq!((p.seq, nxt), (0, Some(2_000_500)));
    }

    #[test]
    fn utilisation_and_queue_integrals() {
        let mut l = Link::new("b".into(), 0, 1, 8e6, 0, &QueueSpec::DropTail { limit: 10 }, Rng::new(1));
        l.set_measurement(0, 4_000_000);
        l.enter(0, pkt(0));
        l.enter(0, pkt(1));
        let (n, _) = l.tx_done(1_000_000);
        assert_eq!(n, Some(2_000_000));
        l.tx_done(2_000_000);
        l.finish(4_000_000);
        assert_eq!(l.stats.busy_ns, 2_000_000);
        // one packet waited for 1 ms
        assert_eq!(l.stats.queue_area, 1_000_000);
    }
}
