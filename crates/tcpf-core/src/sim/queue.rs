//! The event queue: a 4-ary min-heap keyed by (time, insertion sequence).
//!
//! Ties in time are broken by insertion order, so a run is a pure function of its inputs.
//! Cancellation is lazy: the owner of a timer remembers which entry is current and ignores
//! stale ones when they fire (see `engine`). `replace_top` re-schedules the event being
//! handled with one sift-down — the common case of a link whose next packet is due next.

use super::Time;

/// An entry of the queue: fire `event` at `time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheduled<E> {
    pub time: Time,
    pub seq: u64,
    pub event: E,
}

/// Heap slot: (time, seq) packed into one integer so that ordering is a single comparison.
#[derive(Clone, Copy)]
struct Slot<E> {
    key: u128,
    event: E,
}

impl<E: Copy> Slot<E> {
    #[inline(always)]
    fn new(time: Time, seq: u64, event: E) -> Self {
        Slot { key: ((time as u128) << 64) | seq as u128, event }
    }

    #[inline(always)]
    fn get(&self) -> Scheduled<E> {
        Scheduled { time: (self.key >> 64) as Time, seq: self.key as u64, event: self.event }
    }
}

const ARITY: usize = 4;

/// Deterministic priority queue of events.
pub struct EventQueue<E> {
    heap: Vec<Slot<E>>,
    next_seq: u64,
    now: Time,
    processed: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: Vec::with_capacity(1024), next_seq: 0, now: 0, processed: 0 }
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

    #[inline]
    fn entry(&mut self, time: Time, event: E) -> Slot<E> {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        Slot::new(time.max(self.now), seq, event)
    }

    /// Schedule `event` at absolute time `time` (never earlier than now).
    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        let e = self.entry(time, event);
        self.heap.push(e);
        self.sift_up(self.heap.len() - 1);
    }

    /// The next event at or before `until`, left in the queue; the clock advances to it.
    /// Follow with `pop` or `replace_top`.
    #[inline]
    pub fn peek_until(&mut self, until: Time) -> Option<Scheduled<E>> {
        match self.heap.first() {
            Some(slot) => {
                let s = slot.get();
                if s.time > until {
                    return None;
                }
                self.now = s.time;
                self.processed += 1;
                Some(s)
            }
            None => None,
        }
    }

    /// Remove the event returned by `peek_until`.
    #[inline]
    pub fn pop(&mut self) {
        let last = self.heap.pop().expect("pop from an empty queue");
        if !self.heap.is_empty() {
            self.heap[0] = last;
            self.sift_down(0);
        }
    }

    /// Replace the event returned by `peek_until` with a new one.
    #[inline]
    pub fn replace_top(&mut self, time: Time, event: E) {
        let e = self.entry(time, event);
        self.heap[0] = e;
        self.sift_down(0);
    }

    /// Pop the next event at or before `until`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until: Time) -> Option<Scheduled<E>> {
        let s = self.peek_until(until)?;
        self.pop();
        Some(s)
    }

    /// Advance the clock to `t` without an event (used at the end of a run).
    pub fn advance_to(&mut self, t: Time) {
        if t > self.now {
            self.now = t;
        }
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let x = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if x.key < self.heap[parent].key {
                self.heap[i] = self.heap[parent];
                i = parent;
            } else {
                break;
            }
        }
        self.heap[i] = x;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let x = self.heap[i];
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            let mut best_key = self.heap[first].key;
            for c in first + 1..end {
                let k = self.heap[c].key;
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if best_key < x.key {
                self.heap[i] = self.heap[best];
                i = best;
            } else {
                break;
            }
        }
        self.heap[i] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Rng;

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

    #[test]
    fn matches_a_sorted_reference_under_random_use() {
        // Random schedules, pops and top replacements against a sorted list.
        let mut rng = Rng::new(9);
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64, u32)> = vec![];
        let mut seq = 0u64;
        let mut id = 0u32;
        for _ in 0..20_000 {
            let now = q.now();
            match rng.next_u64() % 3 {
                0 | 1 => {
                    let t = now + rng.next_u64() % 1000;
                    q.schedule(t, id);
                    reference.push((t.max(now), seq, id));
                    seq += 1;
                    id += 1;
                }
                _ => {
                    reference.sort();
                    if let Some(s) = q.peek_until(u64::MAX) {
                        let (t, _, e) = reference.remove(0);
                        assert_eq!((s.time, s.event), (t, e));
                        if rng.next_u64() % 2 == 0 {
                            let t2 = s.time + rng.next_u64() % 1000;
                            q.replace_top(t2, id);
                            reference.push((t2, seq, id));
                            seq += 1;
                            id += 1;
                        } else {
                            q.pop();
                        }
                    }
                }
            }
        }
    }
}
