//! The event queue: a binary min-heap keyed by (time, insertion sequence).
//!
//! Ties in time are broken by insertion order, so a run is a pure function of its inputs.
//! Cancellation is lazy: the owner of a timer remembers which entry is current and ignores
//! stale ones when they fire (see `transport::Timer`).

use super::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// An entry of the queue: fire `event` at `time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheduled<E> {
    pub time: Time,
    pub seq: u64,
    pub event: E,
}

impl<E: Eq> Ord for Scheduled<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the earliest (time, seq) first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl<E: Eq> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Deterministic priority queue of events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Scheduled<E>>,
    next_seq: u64,
    now: Time,
    processed: u64,
}

impl<E: Eq + Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Eq + Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), next_seq: 0, now: 0, processed: 0 }
    }

    /// Current simulated time (the time of the last event popped).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `event` at absolute time `time` (never earlier than now).
    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Scheduled { time: time.max(self.now), seq, event });
    }

    /// Pop the next event at or before `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<Scheduled<E>> {
        match self.heap.peek() {
            Some(s) if s.time <= until => {
                let s = self.heap.pop().unwrap();
                self.now = s.time;
                self.processed += 1;
                Some(s)
            }
            _ => None,
        }
    }

    /// Advance the clock to `t` without an event (used at the end of a run).
    pub fn advance_to(&mut self, t: Time) {
        if t > self.now {
            self.now = t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(20, 'a');
        q.schedule(10, 'b');
        q.schedule(20, 'c');
        q.schedule(10, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop_until(u64::MAX).map(|s| s.event)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.now(), 20);
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn pop_until_respects_horizon() {
        let mut q = EventQueue::new();
        q.schedule(5, 1u8);
        q.schedule(15, 2u8);
        assert_eq!(q.pop_until(10).map(|s| s.event), Some(1));
        assert_eq!(q.pop_until(10), None);
        assert_eq!(q.len(), 1);
    }
}
