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
//! - The near wheel holds the events of the next 63 slots: an event of slot `a` with
//!   `cur_a < a < cur_a + 64` sits in `near[a % 64]`, a vector (unsorted; a bit per non-empty
//!   bucket in `near_occ`). Each near bucket holds one slot, so making it current swaps its
//!   vector with the empty `cur` and sorts it, with no copy. Most events (link delays of a few
//!   slot widths) are filed here directly and handled once more when they become current.
//! - Upper wheels (levels 1 to `LEVELS` − 1, 64 buckets each) hold the later events. An event
//!   of slot `a ≥ cur_a + 64` sits on the level of the highest base-64 digit in which `a` and
//!   `cur_a` differ, in the bucket of `a`'s digit there (unsorted; a bit per non-empty bucket in
//!   `occ`); `hi_next` is the first slot of the earliest non-empty upper bucket. When `cur` runs
//!   dry, the next near slot becomes current, unless an upper bucket starts no later: then that
//!   bucket is spread over `cur`, the near wheel and the levels below it. Upper buckets are
//!   singly linked lists through one slab of nodes (`nodes`, recycled through a free list), so
//!   they take memory for the events they hold, not per bucket, and spreading a bucket to a
//!   lower level re-links nodes without copying events.
//! - `far` (a 4-ary heap) holds the events whose slot differs from `cur_a` above the lowest
//!   `LEVELS` digits (beyond the top level's range; the near wheel stops at that boundary too);
//!   it is read only when the wheels are empty.
//!
//! The slot width adapts: every `window` events the mean gap between events is measured; the
//! width wanted is `WIDTH_PER_GAP` gaps (twice that with many events pending, see `WIDE_LEN`),
//! and unless the width is within a factor of two of it, the width becomes the power of two
//! nearest it (the events are then re-filed).
//! A near bucket then holds a few events, so sorting it is cheap, and most events are filed
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
const MASK: u64 = BUCKETS as u64 - 1;
/// Wheel levels: with `shift` s they cover 2^(s + 24) ns past the current slot.
const LEVELS: u32 = 4;
/// Events between two measurements of the mean gap between events.
const WINDOW: u64 = 8192;
/// Slot width, in mean gaps between events (rounded to a power of two). Four rather than two:
/// fewer events are filed on the upper levels and moved down, and the run loop more often
/// finds the next event already sorted in `cur` (to prefetch for it), against a longer
/// insertion into `cur` (measured: 3 200 flows −4.5 % CPU, the 32-flow reference −1 %).
const WIDTH_PER_GAP: u64 = 4;
/// With this many events pending (thousands of flows) the slots are twice as wide (8 mean
/// gaps), until fewer than `NARROW_LEN` are: the near wheel's 64 slots then hold a small share
/// of the pending events (most are a link's delay ahead, thousands of gaps), and wider slots
/// file more of them there directly, not on the upper levels, at the price of a longer sort
/// per slot (measured, profile-guided, CPU: 3 200 flows × 20 s 0.949 with this rule; 8 gaps
/// for every run: 3 200 flows 0.962–0.976, but 320 flows, some 1 000 pending, 1.023 and the
/// 32-flow reference 1.011).
const WIDE_LEN: usize = 6144;
const NARROW_LEN: usize = WIDE_LEN / 2;
/// The slot width before the first measurement: 2^10 ns ≈ 1 µs.
const INITIAL_SHIFT: u32 = 10;
const MAX_SHIFT: u32 = 40;
/// A near bucket whose vector grew beyond this many entries is freed when it empties, so
/// the near wheel keeps little memory after a burst.
const NEAR_KEEP: usize = 1024;

/// The end of a bucket list.
const NIL: u32 = u32::MAX;
/// `hi_next` when the upper levels are empty.
const NONE: u64 = u64::MAX;

/// An upper-level wheel entry: an event and the next node of its bucket (or of the free list).
#[derive(Clone, Copy)]
struct Node<E> {
    slot: Slot<E>,
    next: u32,
}

/// Deterministic priority queue of events.
pub struct EventQueue<E> {
    cur: Vec<Slot<E>>,
    cur_a: u64,
    shift: u32,
    /// The near wheel: an event of slot `a` with `cur_a < a < cur_a + 64` (and in the same
    /// top-level range as `cur_a`) sits in `near[a % 64]`, unsorted; a bit per non-empty
    /// bucket in `near_occ`. Each bucket thus holds a single slot.
    near: [Vec<Slot<E>>; BUCKETS],
    near_occ: u64,
    /// Slots of the near wheel after `cur_a`, plus one: 64, or fewer before the end of the top
    /// level's range (see `near_span`).
    near_span: u64,
    /// The upper levels 1..`LEVELS`: first node of each bucket's list (`NIL`: empty).
    heads: [[u32; BUCKETS]; LEVELS as usize],
    occ: [u64; LEVELS as usize],
    /// The first slot of the earliest non-empty upper bucket (`NONE`: none).
    hi_next: u64,
    nodes: Vec<Node<E>>,
    /// First node of the free list (`NIL`: none).
    free: u32,
    far: Heap<E>,
    len: usize,
    next_seq: u64,
    now: Time,
    processed: u64,
    /// Width adaptation: events per measurement, and when the current one started.
    window: u64,
    window_end: u64,
    window_from: Time,
    /// Slots of `2 × WIDTH_PER_GAP` mean gaps (see `WIDE_LEN`).
    wide: bool,
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
            near: std::array::from_fn(|_| Vec::new()),
            near_occ: 0,
            near_span: near_span(0),
            heads: [[NIL; BUCKETS]; LEVELS as usize],
            occ: [0; LEVELS as usize],
            hi_next: NONE,
            nodes: Vec::new(),
            free: NIL,
            far: Heap { heap: Vec::new() },
            len: 0,
            next_seq: 0,
            now: 0,
            processed: 0,
            window,
            window_end: window,
            window_from: 0,
            wide: false,
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

    #[inline(always)]
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

    /// Schedule each `(time, event)` in turn, as `schedule` would (the same sequence numbers,
    /// so the same order), filing them sorted at once when nothing is due in the current slot
    /// yet: a run's start-up events (every flow's start, often all at time 0) then cost a sort,
    /// where inserting each into the current slot in order moved every earlier one (100 000
    /// flows starting together: 3 s).
    pub fn schedule_all(&mut self, events: impl IntoIterator<Item = (Time, E)>) {
        if !self.cur.is_empty() {
            for (time, event) in events {
                self.schedule(time, event);
            }
            return;
        }
        let mut v: Vec<Slot<E>> = events.into_iter().map(|(time, event)| self.entry(time, event)).collect();
        self.len += v.len();
        // keys are unique (the sequence number), so an unstable sort is exact
        v.sort_unstable_by_key(|e| std::cmp::Reverse(e.key()));
        for e in v {
            let a = e.time >> self.shift;
            if a <= self.cur_a {
                // descending keys onto the empty `cur`: it stays sorted, the next event last
                self.cur.push(e);
            } else {
                self.file(e, a);
            }
        }
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

    /// Whether an event scheduled now at `time` would be the next one: every pending event is
    /// due strictly later (so one scheduled after it at the same instant would come after it).
    #[inline]
    pub fn is_next(&self, time: Time) -> bool {
        match self.cur.last() {
            Some(s) => time < s.time,
            // the other events are in later slots than `cur_a`
            None => time >> self.shift <= self.cur_a,
        }
    }

    /// Handle an event at `time` that `is_next` without filing it: the clock, the count of
    /// events, the sequence numbers and the width adaptation move exactly as when it is
    /// scheduled, peeked and popped.
    #[inline]
    pub fn pass(&mut self, time: Time) {
        debug_assert!(time >= self.now && self.is_next(time));
        self.next_seq += 1;
        self.now = time;
        self.processed += 1;
        self.after_pop();
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
    #[inline(always)]
    fn insert(&mut self, e: Slot<E>) {
        let a = e.time >> self.shift;
        if a <= self.cur_a {
            // Due in the slot being drained (or, after a `peek_until` that stopped at its
            // horizon, before it): into `cur`, in order.
            self.insert_cur(e);
        } else {
            self.file(e, a);
        }
    }

    /// Insert `e` into `cur` at its place (a short `cur` is scanned from its end).
    #[inline(always)]
    fn insert_cur(&mut self, e: Slot<E>) {
        let k = e.key();
        let n = self.cur.len();
        if n > 16 {
            let at = self.cur.partition_point(|x| x.key() > k);
            self.cur.insert(at, e);
            return;
        }
        self.cur.push(e);
        sift_down_into_place(&mut self.cur, n);
    }

    /// File an event of slot `a > cur_a` in the near wheel, on an upper level, or in `far`.
    #[inline(always)]
    fn file(&mut self, e: Slot<E>, a: u64) {
        if a - self.cur_a < self.near_span {
            self.push_near(e, a);
        } else {
            // By field: a `Slot` argument is passed through a copy in memory, and the compiler
            // then builds every event filed here (by `replace_top` too) in that copy, field by
            // field, and reads it back whole to push it into its near bucket: a load wider than
            // the stores before it is not served from them, and waits for them to reach the
            // cache (measured, plain build: −2 % CPU on the reference; the profile-guided build
            // showed no gain).
            self.file_upper(e.time, e.seq, e.event, a);
        }
    }

    /// Put an event of slot `a` (`cur_a < a < cur_a + near_span`) in its near bucket.
    #[inline(always)]
    fn push_near(&mut self, e: Slot<E>, a: u64) {
        let b = (a & MASK) as usize;
        self.near[b].push(e);
        self.near_occ |= 1 << b;
    }

    /// File an event of slot `a ≥ cur_a + 64` on the upper level of the highest base-64 digit
    /// in which `a` and `cur_a` differ, or in `far` beyond the top level.
    #[inline(never)]
    fn file_upper(&mut self, time: Time, seq: u64, event: E, a: u64) {
        let e = Slot { time, seq, event };
        let x = a ^ self.cur_a;
        if x >> (LEVELS * BITS) != 0 {
            self.far.push(e);
            return;
        }
        let level = (63 - x.leading_zeros()) / BITS;
        debug_assert!((1..LEVELS).contains(&level));
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

    /// Put node `i` (of slot `a`, on upper `level`) at the head of its bucket.
    #[inline(always)]
    fn link(&mut self, i: u32, level: u32, a: u64) {
        let sh = level * BITS;
        let d = ((a >> sh) & MASK) as usize;
        let l = level as usize & (LEVELS as usize - 1);
        self.nodes[i as usize].next = self.heads[l][d];
        self.heads[l][d] = i;
        self.occ[l] |= 1 << d;
        self.hi_next = self.hi_next.min((a >> sh) << sh);
    }

    /// The first slot of the earliest non-empty upper bucket, and its level (`NONE`, 0: none).
    /// Every non-empty upper bucket lies after `cur_a`'s digit on its level, in `cur_a`'s
    /// range of the level above; a lower level's buckets come first.
    fn upper_next(&self) -> (u64, u32) {
        for level in 1..LEVELS {
            let m = self.occ[level as usize];
            if m != 0 {
                let sh = level * BITS;
                debug_assert!(m & !above((self.cur_a >> sh) & MASK) == 0);
                let d = m.trailing_zeros() as u64;
                return (((self.cur_a >> (sh + BITS)) << (sh + BITS)) | (d << sh), level);
            }
        }
        (NONE, 0)
    }

    /// `cur` is empty and the queue is not: make the next non-empty slot current.
    #[inline(always)]
    fn refill(&mut self) {
        debug_assert!(self.cur.is_empty() && self.len > 0);
        loop {
            let occ = self.near_occ;
            if occ != 0 {
                // The next near slot: the first bucket after `cur_a`'s, cyclically.
                let next = self.cur_a + 1;
                let s0 = next + occ.rotate_right(next as u32).trailing_zeros() as u64;
                if s0 < self.hi_next {
                    self.cur_a = s0;
                    self.near_span = near_span(s0);
                    let b = (s0 & MASK) as usize;
                    self.near_occ = occ & !(1 << b);
                    self.swap_near_in(b);
                    self.sort_cur();
                    return;
                }
            }
            if self.refill_upper() {
                return;
            }
        }
    }

    /// `refill` when an upper bucket comes first (or with the next near slot), or the wheels
    /// are empty; true when `cur` is filled (and sorted).
    #[inline(never)]
    fn refill_upper(&mut self) -> bool {
        if self.hi_next != NONE {
            // The upper bucket becomes current and spreads over the near wheel and the levels
            // below it.
            let (start, level) = self.upper_next();
            debug_assert!(start == self.hi_next && start > self.cur_a);
            self.cur_a = start;
            self.near_span = near_span(start);
            let d = ((start >> (level * BITS)) & MASK) as usize;
            self.occ[level as usize] &= !(1 << d);
            let head = std::mem::replace(&mut self.heads[level as usize][d], NIL);
            self.hi_next = self.upper_next().0;
            self.spread(head);
            if self.near_occ & (1 << (start & MASK)) != 0 {
                self.take_near(start);
            }
        } else {
            debug_assert!(self.near_occ == 0);
            // The wheels are empty: the earliest far event starts a new range.
            let first = self.far.pop().expect("a non-empty queue with empty wheels has far events");
            self.cur_a = first.time >> self.shift;
            self.near_span = near_span(self.cur_a);
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
        if self.cur.is_empty() {
            return false;
        }
        self.sort_cur();
        true
    }

    /// Move near bucket of slot `a` (= `cur_a`) into `cur`.
    #[inline(always)]
    fn take_near(&mut self, a: u64) {
        let b = (a & MASK) as usize;
        self.near_occ &= !(1 << b);
        if self.cur.is_empty() {
            self.swap_near_in(b);
        } else {
            self.cur.append(&mut self.near[b]);
        }
    }

    /// Make near bucket `b`'s vector `cur` (which is empty) without a copy; a vector grown
    /// past `NEAR_KEEP` is not kept for the bucket.
    #[inline(always)]
    fn swap_near_in(&mut self, b: usize) {
        debug_assert!(self.cur.is_empty());
        std::mem::swap(&mut self.cur, &mut self.near[b]);
        if self.near[b].capacity() > NEAR_KEEP {
            self.near[b] = Vec::new();
        }
    }

    /// Re-file the nodes of a detached upper bucket list (all of slots ≥ `cur_a`, the bucket's
    /// first slot): into `cur`, the near wheel or a lower level.
    fn spread(&mut self, mut i: u32) {
        while i != NIL {
            let n = self.nodes[i as usize];
            let a = n.slot.time >> self.shift;
            if a - self.cur_a < BUCKETS as u64 {
                if a == self.cur_a {
                    self.cur.push(n.slot);
                } else {
                    self.push_near(n.slot, a);
                }
                let node = &mut self.nodes[i as usize];
                node.next = self.free;
                self.free = i;
            } else {
                let level = (63 - (a ^ self.cur_a).leading_zeros()) / BITS;
                debug_assert!((1..LEVELS).contains(&level));
                self.link(i, level, a);
            }
            i = n.next;
        }
    }

    /// Sort `cur` by descending key. Up to 16 events (a slot is a few mean gaps between
    /// events wide, so most hold no more) go through a sorting network of branch-free
    /// compare-exchanges: which of two events of a slot comes first is close to random, so the
    /// branches of the insertion sort this replaces were often mispredicted (measured,
    /// profile-guided, CPU: up to 8 events −4.5 % on the reference; 9 to 16 then 3 200 flows
    /// × 6 s 0.973, × 20 s 0.984, whose wide slots often hold 9 or more, the reference 0.993).
    #[inline(always)]
    fn sort_cur(&mut self) {
        let v = &mut self.cur[..];
        match v.len() {
            0 | 1 => {}
            2 => network(v, &NET2),
            3 => network(v, &NET3),
            _ => self.sort_cur_long(),
        }
    }

    #[inline(never)]
    fn sort_cur_long(&mut self) {
        let v = &mut self.cur[..];
        match v.len() {
            4 => network(v, &NET4),
            5 => network(v, &NET5),
            6 => network(v, &NET6),
            7 => network(v, &NET7),
            8 => network(v, &NET8),
            9 => network(v, &NET9),
            10 => network(v, &NET10),
            11 => network(v, &NET11),
            12 => network(v, &NET12),
            13 => network(v, &NET13),
            14 => network(v, &NET14),
            15 => network(v, &NET15),
            16 => network(v, &NET16),
            _ => v.sort_unstable_by_key(|x| std::cmp::Reverse(x.key())),
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
        if self.len >= WIDE_LEN {
            self.wide = true;
        } else if self.len < NARROW_LEN {
            self.wide = false;
        }
        let per_gap = if self.wide { 2 * WIDTH_PER_GAP } else { WIDTH_PER_GAP };
        let width = gap.saturating_mul(per_gap).max(1);
        let mut shift = 63 - width.leading_zeros();
        // The width stays while it is within a factor of two of the one wanted
        // (2^(s−1) ≤ width < 2^(s+1)): a mean gap near a rounding boundary would otherwise
        // flip it back and forth, and each change re-files every pending event (3 200 flows:
        // 71 changes between 2^10 and 2^11 ns in 20 s, each of some 9 600 events).
        if shift == self.shift || shift + 1 == self.shift {
            return;
        }
        // Else the nearest power of two (in the log): 2^s ≤ width < 2^(s+1), round up above
        // 1.5 × 2^s.
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
        for b in 0..BUCKETS {
            all.append(&mut self.near[b]);
        }
        for level in 0..LEVELS as usize {
            for d in 0..BUCKETS {
                let mut i = std::mem::replace(&mut self.heads[level][d], NIL);
                while i != NIL {
                    all.push(self.nodes[i as usize].slot);
                    i = self.nodes[i as usize].next;
                }
            }
        }
        self.nodes.clear();
        self.free = NIL;
        all.append(&mut self.far.heap);
        self.near_occ = 0;
        self.occ = [0; LEVELS as usize];
        self.hi_next = NONE;
        self.shift = shift;
        // Every pending event is due at or after `now`.
        self.cur_a = self.now >> shift;
        self.near_span = near_span(self.cur_a);
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

/// The near wheel's `near_span` when slot `a` is current: the next 63 slots, but none past the
/// top level's range (events there wait in `far`).
#[inline(always)]
fn near_span(a: u64) -> u64 {
    let range = 1u64 << (LEVELS * BITS);
    (BUCKETS as u64).min(range - (a & (range - 1)))
}

/// Optimal sorting networks (fewest compare-exchanges) for 2 to 8 elements: after the
/// compare-exchanges in order, every pair is in order (`sorting_networks_sort` checks them on
/// every 0-1 input, which suffices).
const NET2: [(u8, u8); 1] = [(0, 1)];
const NET3: [(u8, u8); 3] = [(0, 1), (1, 2), (0, 1)];
const NET4: [(u8, u8); 5] = [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)];
const NET5: [(u8, u8); 9] = [(0, 3), (1, 4), (0, 2), (1, 3), (0, 1), (2, 4), (1, 2), (3, 4), (2, 3)];
const NET6: [(u8, u8); 12] = [(0, 5), (1, 3), (2, 4), (1, 2), (3, 4), (0, 3), (2, 5), (0, 1), (2, 3), (4, 5), (1, 2), (3, 4)];
const NET7: [(u8, u8); 16] =
    [(0, 6), (2, 3), (4, 5), (0, 2), (1, 4), (3, 6), (0, 1), (2, 5), (3, 4), (1, 2), (4, 6), (2, 3), (4, 5), (1, 2), (3, 4), (5, 6)];
const NET8: [(u8, u8); 19] = [
    (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7), (0, 1), (2, 3), (4, 5), (6, 7), (2, 4), (3, 5), (1, 4), (3, 6), (1, 2),
    (3, 4), (5, 6),
];

/// Batcher's odd-even merge sort for 16 inputs; `NET9` to `NET15` are derived from it by
/// `pruned`.
const NET16: [(u8, u8); 63] = [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2), (4, 5), (6, 7), (4, 6), (5, 7), (5, 6), (0, 4), (2, 6), (2, 4), (1, 5), (3, 7), (3, 5), (1, 2), (3, 4), (5, 6), (8, 9), (10, 11), (8, 10), (9, 11), (9, 10), (12, 13), (14, 15), (12, 14), (13, 15), (13, 14), (8, 12), (10, 14), (10, 12), (9, 13), (11, 15), (11, 13), (9, 10), (11, 12), (13, 14), (0, 8), (4, 12), (4, 8), (2, 10), (6, 14), (6, 10), (2, 4), (6, 8), (10, 12), (1, 9), (5, 13), (5, 9), (3, 11), (7, 15), (7, 11), (3, 5), (7, 9), (11, 13), (1, 2), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12), (13, 14)];

/// Batcher's 16-input network for `n` inputs, in its first `.1` places: without the
/// compare-exchanges that touch an input past `n` (a network stays valid when the inputs past
/// `n` are taken as the smallest key, which no compare-exchange then moves), and without one
/// that repeats the pair kept just before it (a no-op).
const fn pruned_full(n: u8) -> ([(u8, u8); 63], usize) {
    let mut out = [(0, 0); 63];
    let (mut i, mut k) = (0, 0);
    while i < NET16.len() {
        let (a, b) = NET16[i];
        if b < n && (k == 0 || out[k - 1].0 != a || out[k - 1].1 != b) {
            out[k] = (a, b);
            k += 1;
        }
        i += 1;
    }
    (out, k)
}

/// The number of compare-exchanges `pruned(n)` keeps.
const fn pruned_len(n: u8) -> usize {
    pruned_full(n).1
}

/// `pruned_full(n)` cut to its length `M` (= `pruned_len(n)`).
const fn pruned<const M: usize>(n: u8) -> [(u8, u8); M] {
    let (full, k) = pruned_full(n);
    assert!(k == M, "pruned: M must be pruned_len(n)");
    let mut out = [(0, 0); M];
    let mut i = 0;
    while i < M {
        out[i] = full[i];
        i += 1;
    }
    out
}

const NET9: [(u8, u8); pruned_len(9)] = pruned(9);
const NET10: [(u8, u8); pruned_len(10)] = pruned(10);
const NET11: [(u8, u8); pruned_len(11)] = pruned(11);
const NET12: [(u8, u8); pruned_len(12)] = pruned(12);
const NET13: [(u8, u8); pruned_len(13)] = pruned(13);
const NET14: [(u8, u8); pruned_len(14)] = pruned(14);
const NET15: [(u8, u8); pruned_len(15)] = pruned(15);

/// Apply a sorting network (unrolled: `pairs` is a constant).
#[inline(always)]
fn network<E: Copy>(v: &mut [Slot<E>], pairs: &[(u8, u8)]) {
    for &(i, j) in pairs {
        cx(v, i as usize, j as usize);
    }
}

/// Compare-exchange without a branch: `v[i]` gets the larger key of the two (`i < j`).
#[inline(always)]
fn cx<E: Copy>(v: &mut [Slot<E>], i: usize, j: usize) {
    use std::hint::select_unpredictable as pick;
    let (a, b) = (v[i], v[j]);
    let swap = a.key() < b.key();
    v[i] = Slot { time: pick(swap, b.time, a.time), seq: pick(swap, b.seq, a.seq), event: pick(swap, b.event, a.event) };
    v[j] = Slot { time: pick(swap, a.time, b.time), seq: pick(swap, a.seq, b.seq), event: pick(swap, a.event, b.event) };
}

/// Insertion sort's step on a slice sorted by descending key up to `i`: move `v[i]` down to
/// its place.
#[inline(always)]
fn sift_down_into_place<E: Copy>(v: &mut [Slot<E>], i: usize) {
    let x = v[i];
    let k = x.key();
    let mut j = i;
    while j > 0 && v[j - 1].key() < k {
        v[j] = v[j - 1];
        j -= 1;
    }
    v[j] = x;
}

/// Bits of `occ` strictly above digit `d`.
#[inline(always)]
fn above(d: u64) -> u64 {
    (u64::MAX << d) << 1
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
    fn sorting_networks_sort() {
        // The 0-1 principle: a network that sorts every sequence of 0s and 1s sorts every
        // sequence. Keys by time alone (equal keys are allowed here, unlike in the queue).
        for n in 2..=16usize {
            for bits in 0u32..1 << n {
                let mut v: Vec<Slot<u32>> = (0..n).map(|i| Slot { time: (bits >> i & 1) as Time, seq: 0, event: i as u32 }).collect();
                let mut q: EventQueue<u32> = EventQueue::new();
                q.cur = std::mem::take(&mut v);
                q.sort_cur();
                assert!(q.cur.windows(2).all(|w| w[0].time >= w[1].time), "n = {n}, input {bits:b}");
                let mut seen: Vec<u32> = q.cur.iter().map(|s| s.event).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..n as u32).collect::<Vec<_>>());
            }
        }
    }

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
    /// After a pop or a replacement, an event 0-3 ns ahead is passed (`pass`) when `is_next`
    /// says it would be the next one, which must then be true; returns how many were.
    fn against_reference(seed: u64, window: u64, steps: usize, delay: impl Fn(&mut Rng) -> u64) -> u64 {
        let mut rng = Rng::new(seed);
        let mut q = EventQueue::with_window(window);
        let mut reference: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
        let mut seq = 0u64;
        let mut id = 0u32;
        let mut popped = 0u64;
        let mut passed = 0u64;
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
                        if rng.next_u64().is_multiple_of(2) {
                            let t2 = t.saturating_add(delay(&mut rng));
                            q.replace_top(t2, id);
                            reference.push(Reverse((t2, seq, id)));
                            seq += 1;
                            id += 1;
                        } else {
                            q.pop();
                        }
                        if rng.next_u64().is_multiple_of(3) {
                            let t = q.now().saturating_add(rng.next_u64() % 4);
                            if q.is_next(t) {
                                assert!(reference.peek().is_none_or(|r| r.0 .0 > t), "is_next({t}) with an event due at or before it");
                                q.pass(t);
                                assert_eq!(q.now(), t);
                                seq += 1;
                                popped += 1;
                                passed += 1;
                            }
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
        passed
    }

    #[test]
    fn passing_the_next_event_is_scheduling_and_popping_it() {
        // The passed events keep the order, the count and the clock of the reference (a pass
        // takes a sequence number): with many events at the same instants, and spread over
        // the upper levels (the current slot often empty).
        let passed = against_reference(50, 64, 200_000, |r| r.next_u64() % 8);
        assert!(passed > 300, "{passed} passes");
        let passed = against_reference(51, WINDOW, 200_000, |r| r.next_u64() % 50_000_000);
        assert!(passed > 1_000, "{passed} passes");
    }

    #[test]
    fn schedule_all_is_schedule_in_turn() {
        // Start-up bursts (many ties at 0, times over every level and beyond), into an empty
        // queue (sorted at once) and into one with events due now (one by one): then a run
        // as `against_reference`'s, and the pops must be those of scheduling each in turn.
        for (seed, n, spread) in [(50u64, 20_000usize, 1u64), (51, 5_000, 1 << 40), (52, 3_000, 5_000), (53, 0, 1)] {
            for busy in [false, true] {
                let mut rng = Rng::new(seed);
                let events: Vec<(u64, u32)> = (0..n as u32).map(|i| (if rng.next_u64().is_multiple_of(3) { 0 } else { rng.next_u64() % spread }, i)).collect();
                let (mut a, mut b) = (EventQueue::with_window(256), EventQueue::with_window(256));
                if busy {
                    for q in [&mut a, &mut b] {
                        q.schedule(0, u32::MAX);
                        q.schedule(7, u32::MAX - 1);
                    }
                }
                a.schedule_all(events.iter().copied());
                for &(t, e) in &events {
                    b.schedule(t, e);
                }
                assert_eq!(a.len(), b.len());
                let mut k = 0u32;
                loop {
                    let (x, y) = (a.peek_until(u64::MAX).map(|s| (s.time, s.seq, s.event)), b.peek_until(u64::MAX).map(|s| (s.time, s.seq, s.event)));
                    assert_eq!(x, y, "seed {seed}, busy {busy}");
                    let Some((t, _, _)) = x else { break };
                    // keep the queues busy for a while: some events re-schedule later ones
                    if k < 2 * n as u32 && rng.next_u64().is_multiple_of(2) {
                        let t2 = t + rng.next_u64() % 3_000;
                        a.replace_top(t2, 1_000_000 + k);
                        b.replace_top(t2, 1_000_000 + k);
                        k += 1;
                    } else {
                        a.pop();
                        b.pop();
                    }
                }
                assert_eq!(a.processed(), b.processed());
            }
        }
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
    fn a_far_event_comes_before_a_later_near_one_across_the_top_range() {
        // Slot width stays 2^10 ns: the wheels cover 2^34 ns. Z is filed far at t = 0; when the
        // clock nears 2^34, X (later than Z, but within 64 slots of the current one) must not
        // pop first.
        let top = 1u64 << (INITIAL_SHIFT + LEVELS * BITS);
        let mut q = EventQueue::with_window(u64::MAX);
        q.schedule(top + 3 * 1024, 'z');
        q.schedule(top - 10 * 1024, 'a');
        assert_eq!(q.pop_until(u64::MAX).map(|s| s.event), Some('a'));
        q.schedule(top + 5 * 1024, 'x');
        q.schedule(top - 2 * 1024, 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop_until(u64::MAX).map(|s| s.event)).collect();
        assert_eq!(order, vec!['b', 'z', 'x']);
    }

    #[test]
    fn matches_a_binary_heap_near_the_ranges_of_the_levels() {
        // A fixed slot width (2^10 ns) and delays just short of or past the range of each level
        // (2^16, 2^22, 2^28, 2^34 ns), so the near wheel crosses the ranges' boundaries while
        // upper buckets and far events are pending.
        for (seed, bits) in [(30u64, 16u32), (31, 22), (32, 28), (33, 34)] {
            against_reference(seed, u64::MAX / 2, 60_000, move |r| {
                let span = 1u64 << bits;
                match r.next_u64() % 4 {
                    0 => r.next_u64() % 70_000,
                    1 => span.saturating_sub(r.next_u64() % 70_000),
                    2 => span + r.next_u64() % 70_000,
                    _ => r.next_u64() % (2 * span),
                }
            });
        }
    }

    #[test]
    fn matches_a_binary_heap_with_crowded_slots() {
        // A fixed slot width (2^10 ns) much wider than the gaps: long runs of ties in `cur` and
        // buckets of tens of events (every sorting path).
        against_reference(40, u64::MAX, 50_000, |r| r.next_u64() % 3);
        against_reference(41, u64::MAX, 50_000, |r| r.next_u64() % 40_000);
    }

    #[test]
    fn matches_a_binary_heap_as_the_pace_changes() {
        // Phases of very different event rates force the slot width up and down.
        for (seed, scale) in [(20u64, 1u64), (21, 1_000), (22, 1_000_000), (23, 3)] {
            against_reference(seed, 128, 40_000, move |r| (r.next_u64() % 100) * scale);
        }
    }

    /// Keep `n` events pending a mean gap `gap` apart for `pops` events: `n` events a gap
    /// apart (scheduled from now if the queue is empty), each re-scheduled `n` gaps later.
    fn steady(q: &mut EventQueue<u32>, n: u32, gap: u64, pops: usize) {
        if q.is_empty() {
            let t0 = q.now();
            for i in 0..n {
                q.schedule(t0 + i as u64 * gap, i);
            }
        }
        for _ in 0..pops {
            let s = q.peek_until(u64::MAX).unwrap();
            q.replace_top(s.time + n as u64 * gap, s.event);
        }
    }

    #[test]
    fn the_slot_width_follows_the_gap_between_events() {
        let mut q = EventQueue::with_window(100);
        steady(&mut q, 50, 100_000, 1000); // a gap of 100 µs
        // 4 gaps = 400 µs ≈ 2^19 ns (524 µs; 2^18 = 262 µs is farther in the log).
        assert_eq!(q.shift, 19);
    }

    #[test]
    fn slots_are_twice_as_wide_with_many_events_pending() {
        // n events pending, a mean gap of 50 µs apart
        let shift_with = |n: u32| {
            let mut q = EventQueue::with_window(1000);
            steady(&mut q, n, 50_000, 20_000);
            q.shift
        };
        // 4 gaps = 200 µs ≈ 2^18 ns; 8 gaps = 400 µs ≈ 2^19
        assert_eq!(shift_with(50), 18);
        assert_eq!(shift_with(WIDE_LEN as u32 + 100), 19);
    }

    #[test]
    fn the_slot_width_stays_while_the_gap_hovers_about_a_rounding_boundary() {
        // 50 events pending, a mean gap apart
        let mut q = EventQueue::with_window(100);
        // 4 gaps of 96 µs = 384 µs, just below 1.5 × 2^18 ns: the nearest power is 2^18
        steady(&mut q, 50, 96_000, 1000);
        assert_eq!(q.shift, 18);
        // 4 gaps of 100 µs = 400 µs, just above: nearest 2^19, but 2^18 is within a factor 2
        steady(&mut q, 50, 100_000, 1000);
        assert_eq!(q.shift, 18, "the width moved for a gap within a factor of two of it");
        // 4 gaps of 140 µs = 560 µs ≥ 2^19: beyond a factor of two, the nearest power again
        steady(&mut q, 50, 140_000, 1000);
        assert_eq!(q.shift, 19);
        // and down: 4 gaps of 70 µs = 280 µs ≥ 2^18, within a factor of two of 2^19: stays
        steady(&mut q, 50, 70_000, 1000);
        assert_eq!(q.shift, 19);
        // 4 gaps of 50 µs = 200 µs < 2^18: the nearest power, 2^18 (200 µs ≥ 1.5 × 2^17)
        steady(&mut q, 50, 50_000, 1000);
        assert_eq!(q.shift, 18);
    }
}
