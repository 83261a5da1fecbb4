//! The event queue: a hierarchical timing wheel with an adaptive slot width, keyed by
//! (time, insertion sequence).
//!
//! Ties in time are broken by insertion order, so a run is a pure function of its inputs. The
//! order is exact — the same as a heap on (time, seq) — whatever the slot width: the wheel only
//! decides *when* an event is sorted, never where. Cancellation is lazy: the owner of a timer
//! remembers which entry is current and ignores stale ones when they fire (see `engine`).
//! `replace_top` re-schedules the event being handled — the common case of a link whose next
//! packet is due soon.
//!
//! Layout. Time is cut into slots of 2^`shift` ns; `cur_a` is the slot being drained.
//! - `cur` holds every event of a slot ≤ `cur_a`, sorted by descending key: the next event is
//!   the last element, so a pop is `Vec::pop`.
//! - `LEVELS` wheels of 64 slots hold the later events. An event of slot `a > cur_a` sits on the
//!   level of the highest base-64 digit in which `a` and `cur_a` differ, in the bucket of `a`'s
//!   digit there (unsorted; a bit per non-empty bucket in `occ`). When `cur` runs dry, the next
//!   non-empty bucket of the lowest level that has one becomes current: a level-0 bucket is
//!   moved into `cur` and sorted; a higher bucket is spread over the levels below it.
//!   Buckets are singly linked lists through one slab of nodes (`nodes`, recycled through a
//!   free list), so the wheels take memory for the events they hold, not per bucket, and
//!   spreading a bucket re-links nodes without copying events.
//! - `far` (a 4-ary heap) holds events beyond the top level's range; it is read only when the
//!   wheels are empty.
//!
//! The slot width adapts: every `window` events the mean gap between events is measured and
//! the width set to the power of two nearest `WIDTH_PER_GAP` gaps (the events are then re-filed).
//! A level-0 bucket then holds a few events, so sorting it is cheap, and most events are filed
//! once or twice instead of sifting through a heap of every pending event.

use super::Time;

/// An entry of the queue: fire `event` at `time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheduled<E> {
    pub time: Time,
    pub seq: u64,
    pub event: E,
}

#[derive(Clone, Copy)]
struct Slot<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E: Copy> Slot<E> {
    /// (time, seq) as one integer, so that ordering is a single comparison.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }

    #[inline(always)]
    fn get(&self) -> Scheduled<E> {
        Scheduled { time: self.time, seq: self.seq, event: self.event }
    }
}

/// Bits of the slot number per wheel level (64 buckets a level).
const BITS: u32 = 6;
const BUCKETS: usize = 1 << BITS;
/// Wheel levels: with `shift` s they cover 2^(s + 24) ns past the current slot.
const LEVELS: u32 = 4;
/// Events between two measurements of the mean gap between events.
const WINDOW: u64 = 8192;
/// Slot width, in mean gaps between events (rounded to a power of two).
const WIDTH_PER_GAP: u64 = 2;
/// The slot width before the first measurement: 2^10 ns ≈ 1 µs.
const INITIAL_SHIFT: u32 = 10;
const MAX_SHIFT: u32 = 40;

/// The end of a bucket list.
const NIL: u32 = u32::MAX;

/// A wheel entry: an event and the next node of its bucket (or of the free list).
#[derive(Clone, Copy)]
struct Node<E> {
    slot: Slot<E>,
    next: u32,
}

/// Bits of `occ` strictly above digit `d`.
#[inline(always)]
fn above(d: u64) -> u64 {
    (u64::MAX << d) << 1
}

/// Deterministic priority queue of events.
pub struct EventQueue<E> {
    cur: Vec<Slot<E>>,
    cur_a: u64,
    shift: u32,
    /// First node of each bucket's list (`NIL`: empty), level by level.
    heads: [u32; LEVELS as usize * BUCKETS],
    nodes: Vec<Node<E>>,
    /// First node of the free list (`NIL`: none).
    free: u32,
    occ: [u64; LEVELS as usize],
    far: Heap<E>,
    len: usize,
    next_seq: u64,
    now: Time,
    processed: u64,
    /// Width adaptation: events per measurement, and when the current one started.
    window: u64,
    window_end: u64,
    window_from: Time,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_window(WINDOW)
    }

    fn with_window(window: u64) -> Self {
        EventQueue {
            cur: Vec::with_capacity(64),
            cur_a: 0,
            shift: INITIAL_SHIFT,
            heads: [NIL; LEVELS as usize * BUCKETS],
            nodes: Vec::new(),
            free: NIL,
            occ: [0; LEVELS as usize],
            far: Heap { heap: Vec::new() },
            len: 0,
            next_seq: 0,
            now: 0,
            processed: 0,
            window,
            window_end: window,
            window_from: 0,
        }
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
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn entry(&mut self, time: Time, event: E) -> Slot<E> {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let seq = self.next_seq;
        self.next_seq += 1;
        Slot { time: time.max(self.now), seq, event }
    }

    /// Schedule `event` at absolute time `time` (never earlier than now).
    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        let e = self.entry(time, event);
        self.len += 1;
        self.insert(e);
    }

    /// The next event at or before `until`, left in the queue; the clock advances to it.
    /// Follow with `pop` or `replace_top`.
    #[inline]
    pub fn peek_until(&mut self, until: Time) -> Option<Scheduled<E>> {
        if self.cur.is_empty() {
            if self.len == 0 {
                return None;
            }
            self.refill();
        }
        let s = self.cur.last().expect("refill leaves the next event in cur").get();
        if s.time > until {
            return None;
        }
        self.now = s.time;
        self.processed += 1;
        Some(s)
    }

    /// The `k`-th event due after the one returned by `peek_until` (`k` ≥ 1), if it is already
    /// sorted (a hint for prefetching: one scheduled meanwhile may come first).
    #[inline]
    pub fn peek_ahead(&self, k: usize) -> Option<&E> {
        self.cur.len().checked_sub(k + 1).map(|i| &self.cur[i].event)
    }

    /// Remove the event returned by `peek_until`.
    #[inline]
    pub fn pop(&mut self) {
        self.cur.pop().expect("pop from an empty queue");
        self.len -= 1;
        self.after_pop();
    }

    /// Replace the event returned by `peek_until` with a new one.
    #[inline]
    pub fn replace_top(&mut self, time: Time, event: E) {
        self.cur.pop().expect("replace_top on an empty queue");
        let e = self.entry(time, event);
        self.insert(e);
        self.after_pop();
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

    /// File an event of the queue (counted in `len` already).
    #[inline]
    fn insert(&mut self, e: Slot<E>) {
        let a = e.time >> self.shift;
        if a <= self.cur_a {
            // Due in the slot being drained (or, after a `peek_until` that stopped at its
            // horizon, before it): into `cur`, in order.
            let k = e.key();
            let at = self.cur.partition_point(|x| x.key() > k);
            self.cur.insert(at, e);
        } else {
            self.file(e, a);
        }
    }

    /// File an event of slot `a > cur_a` on its wheel level, or in `far`.
    #[inline]
    fn file(&mut self, e: Slot<E>, a: u64) {
        let level = (63 - (a ^ self.cur_a).leading_zeros()) / BITS;
        if level >= LEVELS {
            self.far.push(e);
            return;
        }
        let i = if self.free != NIL {
            let i = self.free;
            let n = &mut self.nodes[i as usize];
            self.free = n.next;
            n.slot = e;
            i
        } else {
            assert!(self.nodes.len() < NIL as usize, "event queue: too many pending events");
            self.nodes.push(Node { slot: e, next: NIL });
            (self.nodes.len() - 1) as u32
        };
        self.link(i, level, a);
    }

    /// Put node `i` (of slot `a`, on `level`) at the head of its bucket.
    #[inline(always)]
    fn link(&mut self, i: u32, level: u32, a: u64) {
        let d = (a >> (level * BITS)) as usize & (BUCKETS - 1);
        let b = level as usize * BUCKETS + d;
        self.nodes[i as usize].next = self.heads[b];
        self.heads[b] = i;
        self.occ[level as usize] |= 1 << d;
    }

    /// Detach bucket `b`'s list, returning its first node.
    #[inline(always)]
    fn take_bucket(&mut self, level: u32, d: u64) -> u32 {
        self.occ[level as usize] &= !(1 << d);
        std::mem::replace(&mut self.heads[level as usize * BUCKETS + d as usize], NIL)
    }

    /// Move node `i`'s event into `cur` (unsorted) and free the node; returns the next node.
    #[inline(always)]
    fn release(&mut self, i: u32) -> u32 {
        let n = &mut self.nodes[i as usize];
        let next = n.next;
        self.cur.push(n.slot);
        n.next = self.free;
        self.free = i;
        next
    }

    /// `cur` is empty and the queue is not: make the next non-empty slot current.
    #[inline(never)]
    fn refill(&mut self) {
        debug_assert!(self.cur.is_empty() && self.len > 0);
        loop {
            // Level 0: the next bucket is a whole slot; sort it.
            let d0 = self.cur_a & (BUCKETS as u64 - 1);
            let m = self.occ[0] & above(d0);
            if m != 0 {
                let d = m.trailing_zeros() as u64;
                self.cur_a = (self.cur_a & !(BUCKETS as u64 - 1)) | d;
                let mut i = self.take_bucket(0, d);
                while i != NIL {
                    i = self.release(i);
                }
                self.sort_cur();
                return;
            }
            // A higher level: its next bucket becomes current and spreads over the levels below.
            let mut spread = false;
            for level in 1..LEVELS {
                let sh = level * BITS;
                let dk = (self.cur_a >> sh) & (BUCKETS as u64 - 1);
                let m = self.occ[level as usize] & above(dk);
                if m != 0 {
                    let d = m.trailing_zeros() as u64;
                    self.cur_a = ((self.cur_a >> (sh + BITS)) << (sh + BITS)) | (d << sh);
                    let head = self.take_bucket(level, d);
                    self.spread(head);
                    spread = true;
                    break;
                }
            }
            if !spread {
                // The wheels are empty: the earliest far event starts a new range.
                let first = self.far.pop().expect("a non-empty queue with empty wheels has far events");
                self.cur_a = first.time >> self.shift;
                self.cur.push(first);
                let top = self.cur_a >> (LEVELS * BITS);
                while let Some(e) = self.far.peek() {
                    let a = e.time >> self.shift;
                    if a >> (LEVELS * BITS) != top {
                        break;
                    }
                    let e = self.far.pop().expect("peeked");
                    if a == self.cur_a {
                        self.cur.push(e);
                    } else {
                        self.file(e, a);
                    }
                }
            }
            if !self.cur.is_empty() {
                self.sort_cur();
                return;
            }
        }
    }

    /// Re-file the nodes of a detached bucket list (all of slots ≥ `cur_a`, on lower levels
    /// now).
    #[inline]
    fn spread(&mut self, mut i: u32) {
        while i != NIL {
            let n = self.nodes[i as usize];
            let a = n.slot.time >> self.shift;
            if a == self.cur_a {
                i = self.release(i);
            } else {
                let level = (63 - (a ^ self.cur_a).leading_zeros()) / BITS;
                debug_assert!(level < LEVELS);
                self.link(i, level, a);
                i = n.next;
            }
        }
    }

    #[inline]
    fn sort_cur(&mut self) {
        if self.cur.len() > 1 {
            self.cur.sort_unstable_by(|x, y| y.key().cmp(&x.key()));
        }
    }

    /// Measure the mean gap between events every `window` events and re-file the queue when
    /// the slot width should change.
    #[inline]
    fn after_pop(&mut self) {
        if self.processed < self.window_end {
            return;
        }
        self.adapt();
    }

    #[inline(never)]
    fn adapt(&mut self) {
        let gap = (self.now - self.window_from) / self.window;
        self.window_end = self.processed + self.window;
        self.window_from = self.now;
        let width = gap.saturating_mul(WIDTH_PER_GAP).max(1);
        // Nearest power of two (in the log): 2^s ≤ width < 2^(s+1), round up above 1.5 × 2^s.
        let mut shift = 63 - width.leading_zeros();
        if shift > 0 && width >= (3u64 << (shift - 1)) {
            shift += 1;
        }
        let shift = shift.min(MAX_SHIFT);
        if shift != self.shift {
            self.rebuild(shift);
        }
    }

    /// Re-file every event with slot width 2^`shift`.
    fn rebuild(&mut self, shift: u32) {
        let mut all = std::mem::take(&mut self.cur);
        for b in 0..self.heads.len() {
            let mut i = std::mem::replace(&mut self.heads[b], NIL);
            while i != NIL {
                all.push(self.nodes[i as usize].slot);
                i = self.nodes[i as usize].next;
            }
        }
        self.nodes.clear();
        self.free = NIL;
        all.append(&mut self.far.heap);
        self.occ = [0; LEVELS as usize];
        self.shift = shift;
        // Every pending event is due at or after `now`.
        self.cur_a = self.now >> shift;
        for e in all.drain(..) {
            let a = e.time >> shift;
            if a <= self.cur_a {
                self.cur.push(e);
            } else {
                self.file(e, a);
            }
        }
        self.sort_cur();
    }
}

/// A 4-ary min-heap on (time, seq): the far events.
struct Heap<E> {
    heap: Vec<Slot<E>>,
}

const ARITY: usize = 4;

impl<E: Copy> Heap<E> {
    fn peek(&self) -> Option<&Slot<E>> {
        self.heap.first()
    }

    fn push(&mut self, e: Slot<E>) {
        self.heap.push(e);
        let mut i = self.heap.len() - 1;
        let k = e.key();
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if k < self.heap[parent].key() {
                self.heap[i] = self.heap[parent];
                i = parent;
            } else {
                break;
            }
        }
        self.heap[i] = e;
    }

    fn pop(&mut self) -> Option<Slot<E>> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = self.heap[0];
        let n = self.heap.len();
        let k = last.key();
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            let mut best_key = self.heap[first].key();
            for c in first + 1..end {
                let kc = self.heap[c].key();
                if kc < best_key {
                    best = c;
                    best_key = kc;
                }
            }
            if best_key < k {
                self.heap[i] = self.heap[best];
                i = best;
            } else {
                break;
            }
        }
        self.heap[i] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Rng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

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
    fn an_event_due_before_a_refused_horizon_comes_first() {
        // peek_until stops at its horizon after making a later slot current; an event scheduled
        // in between must still pop first.
        let mut q = EventQueue::new();
        q.schedule(10_000_000, 1u8);
        assert_eq!(q.pop_until(1_000), None);
        q.schedule(2_000, 2u8);
        q.schedule(10_000_000, 3u8);
        let order: Vec<u8> = std::iter::from_fn(|| q.pop_until(u64::MAX).map(|s| s.event)).collect();
        assert_eq!(order, vec![2, 1, 3]);
    }

    /// Random schedules, peeks with a horizon, pops and top replacements against a
    /// `BinaryHeap` on (time, seq); `delay` draws how far ahead of now an event is scheduled.
    fn against_reference(seed: u64, window: u64, steps: usize, delay: impl Fn(&mut Rng) -> u64) {
        let mut rng = Rng::new(seed);
        let mut q = EventQueue::with_window(window);
        let mut reference: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
        let mut seq = 0u64;
        let mut id = 0u32;
        let mut popped = 0u64;
        for _ in 0..steps {
            let now = q.now();
            match rng.next_u64() % 8 {
                0..=2 => {
                    let t = now.saturating_add(delay(&mut rng));
                    q.schedule(t, id);
                    reference.push(Reverse((t, seq, id)));
                    seq += 1;
                    id += 1;
                }
                3 => {
                    // A horizon that may fall before the next event.
                    let until = now.saturating_add(rng.next_u64() % 2_000);
                    let want = reference.peek().map(|r| r.0).filter(|r| r.0 <= until);
                    let got = q.peek_until(until).map(|s| (s.time, s.seq, s.event));
                    assert_eq!(got, want);
                    if got.is_some() {
                        q.pop();
                        reference.pop();
                        popped += 1;
                    }
                }
                _ => {
                    let got = q.peek_until(u64::MAX).map(|s| (s.time, s.seq, s.event));
                    assert_eq!(got, reference.peek().map(|r| r.0));
                    if let Some((t, _, _)) = got {
                        reference.pop();
                        popped += 1;
                        if rng.next_u64() % 2 == 0 {
                            let t2 = t.saturating_add(delay(&mut rng));
                            q.replace_top(t2, id);
                            reference.push(Reverse((t2, seq, id)));
                            seq += 1;
                            id += 1;
                        } else {
                            q.pop();
                        }
                    }
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        // Drain.
        while let Some(s) = q.pop_until(u64::MAX) {
            assert_eq!(Some((s.time, s.seq, s.event)), reference.pop().map(|r| r.0));
            popped += 1;
        }
        assert!(reference.is_empty());
        assert_eq!(q.processed(), popped);
    }

    #[test]
    fn matches_a_binary_heap_with_small_delays_and_ties() {
        against_reference(9, 64, 100_000, |r| r.next_u64() % 1000);
        against_reference(10, 64, 100_000, |r| r.next_u64() % 4); // mostly equal times
    }

    #[test]
    fn matches_a_binary_heap_across_levels_and_far_events() {
        // Delays from 1 ns to 2^50 ns: every wheel level, the far heap, and width changes as
        // the mean gap swings.
        against_reference(11, 64, 200_000, |r| {
            let bits = r.next_u64() % 51;
            r.next_u64() & ((1u64 << bits) - 1)
        });
        against_reference(12, 1024, 200_000, |r| {
            if r.next_u64() % 10 == 0 { 1_000_000 + r.next_u64() % 3_000_000_000 } else { r.next_u64() % 200_000 }
        });
        against_reference(13, WINDOW, 300_000, |r| r.next_u64() % 50_000_000);
        // Times near the top of the clock.
        against_reference(14, 64, 50_000, |r| u64::MAX - (r.next_u64() % 1000));
    }

    #[test]
    fn matches_a_binary_heap_as_the_pace_changes() {
        // Phases of very different event rates force the slot width up and down.
        for (seed, scale) in [(20u64, 1u64), (21, 1_000), (22, 1_000_000), (23, 3)] {
            against_reference(seed, 128, 40_000, move |r| (r.next_u64() % 100) * scale);
        }
    }

    #[test]
    fn the_slot_width_follows_the_gap_between_events() {
        let mut q = EventQueue::with_window(100);
        let mut t = 0;
        for i in 0..50u32 {
            q.schedule(t, i);
            t += 100_000; // a gap of 100 µs
        }
        for _ in 0..1000 {
            let s = q.peek_until(u64::MAX).unwrap();
            q.replace_top(s.time + 50 * 100_000, s.event);
        }
        // 2 gaps = 200 µs ≈ 2^18 ns (262 µs; 2^17 = 131 µs is farther in the log).
        assert_eq!(q.shift, 18);
    }
}
