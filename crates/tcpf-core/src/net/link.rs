//! A unidirectional link: loss model → output queue → transmitter → propagation pipe.
//!
//! The queue is FIFO and the transmitter serves at a constant rate, so a packet's service
//! start and end are known the moment it is admitted: start = max(arrival, end of the
//! previous packet). The link therefore keeps only the service-start times of packets still
//! waiting (to know the queue length when the next packet arrives) and needs no
//! transmit-complete events. Packets in propagation sit in a FIFO (`pipe`); the engine keeps
//! one event for its head, which names the head's entry. Admission is exact: the queue
//! length, RED's average and idle time are those at the packet's arrival time.

use super::loss::LossModel;
use super::packet::{ecn, Ext, Wire};
use super::queue::{Admission, Arrival, Queue, QueueSpec};
use super::NodeId;
use crate::sim::{Rng, Time};
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;
/// Entries in a chunk of a pipe.
const CHUNK: usize = 16;

/// The number of pipe entry `pos` of chunk `chunk` (chunk × [`CHUNK`] + position): what
/// [`Link::pipe_push`] and [`Link::pop_arrival`] give and the engine's link arrivals carry.
#[inline(always)]
fn entry_number(chunk: u32, pos: usize) -> u32 {
    chunk * CHUNK as u32 + pos as u32
}

/// The chunk and position of entry number `entry` (`entry_number`'s inverse; the position
/// is a mask, which spares an entry index its bounds check).
#[inline(always)]
fn entry_place(entry: u32) -> (u32, usize) {
    (entry / CHUNK as u32, entry as usize % CHUNK)
}

/// The storage of every link's propagation pipe: chunks of [`CHUNK`] compact entries in one
/// store, each link linking its own chunks into a FIFO, freed chunks reused first. Memory
/// follows the packets in flight at once (plus at most two part-filled chunks a link), not
/// the sum of each pipe's largest backlog: per-link buffers sized to each flow's largest
/// window held 6× more than was ever in flight at 3 200 flows.
///
/// An entry is its arrival time beside its packet (32 bytes, two to a cache line, chunks
/// aligned to cache lines), so that a push or a pop touches one line, not one for the times
/// and another for the packets; the chunks' links are kept apart (`next`). Freed chunks are
/// kept on a stack, not linked through `next`: a pipe that holds one packet at a time (an
/// access link, with thousands of flows) then takes and frees a chunk per packet touching
/// only the stack's top, not a `next` slot written a propagation delay before.
#[derive(Default)]
pub struct Pipes {
    chunks: Vec<Chunk>,
    /// The chunk after each chunk in its link's FIFO (meaningless for the last chunk of a
    /// FIFO and for free chunks: a pop reads it only past a full chunk that is not the tail).
    next: Vec<u32>,
    /// Free chunks, the last freed on top (reused first, while its lines are still cached).
    free: Vec<u32>,
}

#[derive(Clone, Copy)]
struct Entry {
    at: Time,
    wire: Wire,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk {
    e: [Entry; CHUNK],
}

impl Pipes {
    pub fn new() -> Self {
        Pipes { chunks: Vec::new(), next: Vec::new(), free: Vec::new() }
    }

    /// Bytes held: every chunk ever needed at once (freed chunks are kept for reuse).
    pub fn held_bytes(&self) -> u64 {
        (self.chunks.capacity() * std::mem::size_of::<Chunk>() + (self.next.capacity() + self.free.capacity()) * 4) as u64
    }

    /// A fresh chunk whose first entry is (`at`, `wire`): a freed one (inline, the usual
    /// case), else a new one.
    #[inline(always)]
    fn alloc(&mut self, at: Time, wire: Wire) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.chunks[i as usize].e[0] = Entry { at, wire };
                i
            }
            None => self.grow(at, wire),
        }
    }

    /// Ask the processor to fetch entry `entry` (as [`Link::pipe_push`] and
    /// [`Link::pop_arrival`] number them) and the one after it into the cache: a hint, with no
    /// effect on results. A pipe's head was written a propagation delay ago and, with
    /// thousands of links, has usually left the cache. The pop reads the head's packet and the
    /// next entry's time: with two entries to a line, the next one is in the following line
    /// half the time. Both are fetched without a test: a branch on the position goes either
    /// way at random, and a fetch of a line already asked for (or of the chunk's first entry,
    /// after its last) costs next to nothing.
    #[inline(always)]
    pub fn prefetch_entry(&self, entry: u32) {
        let (h, p) = entry_place(entry);
        if let Some(c) = self.chunks.get(h as usize) {
            prefetch(&c.e[p]);
            prefetch(&c.e[(p + 1) % CHUNK]);
        }
    }

    /// `alloc` when no chunk is free.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, at: Time, wire: Wire) -> u32 {
        // (an entry's number, `entry_number`, is a u32)
        assert!(self.chunks.len() < (u32::MAX / CHUNK as u32) as usize, "too many packets in flight");
        self.chunks.push(Chunk { e: [Entry { at, wire }; CHUNK] });
        self.next.push(NIL);
        (self.chunks.len() - 1) as u32
    }

    #[inline]
    fn release(&mut self, i: u32) {
        self.free.push(i);
    }
}

/// A hint to fetch `*p`'s cache line (nothing on other architectures).
#[inline(always)]
pub fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect; the address comes from a reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Counters since the start of the run (the engine subtracts snapshots taken at the ends of
/// the measurement window).
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
    /// ∫ waiting-queue length dt (packet·ns).
    pub queue_area: u128,
}

impl LinkStats {
    /// Counts between an earlier snapshot and this one.
    pub fn minus(&self, e: &LinkStats) -> LinkStats {
        LinkStats {
            arrivals: self.arrivals - e.arrivals,
            departures: self.departures - e.departures,
            bytes_sent: self.bytes_sent - e.bytes_sent,
            drops: self.drops - e.drops,
            early_drops: self.early_drops - e.early_drops,
            forced_drops: self.forced_drops - e.forced_drops,
            loss_model_drops: self.loss_model_drops - e.loss_model_drops,
            marks: self.marks - e.marks,
            busy_ns: self.busy_ns - e.busy_ns,
            queue_area: self.queue_area - e.queue_area,
        }
    }
}

/// What an access link's admission and its pipe's push and pop read and write, in one cache
/// line: with thousands of links a link's state has left the cache between two packets,
/// and spread over a 400-byte [`Link`] it cost two or three lines each time.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Hot {
    /// End of the last admitted packet's transmission.
    busy_until: Time,
    delay: Time,
    /// On the fast path: packets the link holds at most, the one being sent included
    /// (`limits.access_queue`), counted in transmission times of the arriving packet.
    cap: Time,
    /// Transmission times of the two packet sizes seen last (data and ACKs alternate).
    tx_ns: [Time; 2],
    tx_bytes: [u32; 2],
    /// Packets in propagation: a FIFO of chunks in the shared [`Pipes`], read at `head`
    /// from `hpos`, written at `tail` from `tpos` (`NIL` when empty).
    head: u32,
    tail: u32,
    hpos: u8,
    tpos: u8,
    /// Nobody reads this link's counters, it never drops and never refuses a packet (an
    /// unreported, lossless, unlimited access link): admission is the FIFO arithmetic alone.
    fast: bool,
}

pub struct Link {
    h: Hot,
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: f64,
    ns_per_byte: f64,
    queue: Queue,
    /// Service-start times (and sizes) of admitted packets that have not started yet.
    starts: VecDeque<(Time, u32)>,
    /// Start of the busy period that ends at `busy_until` (transmission is continuous in it).
    period_start: Time,
    /// The out-of-line parts of the packets in the pipe that have one, in their order.
    ext: VecDeque<Ext>,
    pub loss: Option<LossModel>,
    pub stats: LinkStats,
    q_last: Time,
}

impl Link {
    pub fn new(name: String, from: NodeId, to: NodeId, rate_bps: f64, delay: Time, queue: &QueueSpec, rng: Rng) -> Self {
        Link {
            h: Hot { busy_until: 0, delay, cap: Time::MAX, tx_ns: [0; 2], tx_bytes: [0; 2], head: NIL, tail: NIL, hpos: 0, tpos: 0, fast: false },
            name,
            from,
            to,
            rate_bps,
            ns_per_byte: 8e9 / rate_bps,
            queue: Queue::new(queue, rate_bps, rng),
            starts: VecDeque::new(),
            period_start: 0,
            ext: VecDeque::new(),
            loss: None,
            stats: LinkStats::default(),
            q_last: 0,
        }
    }

    /// Nothing reads this link's counters or queue length (it is not reported). If it also
    /// has no loss model and an unlimited queue, admission skips the counters and the
    /// waiting-queue bookkeeping: the times it returns are the same, `stats` stays at zero.
    /// Call after the loss model is attached.
    pub fn unreported(&mut self) {
        self.h.fast = self.loss.is_none() && matches!(self.queue, Queue::Unlimited);
    }

    /// Hold at most `packets` (the one being sent included) on the fast path: an arrival that
    /// would wait behind `packets` transmission times of itself is dropped (uncounted: the
    /// link is not reported). Bounds what an unresponsive sender piles up on its access link.
    pub fn cap_backlog(&mut self, packets: u32) {
        self.h.cap = packets as Time;
    }

    /// Bytes held by this link's own buffers (its pipe's entries are in [`Pipes`]).
    pub fn held_bytes(&self) -> u64 {
        (self.starts.capacity() * std::mem::size_of::<(Time, u32)>() + self.ext.capacity() * std::mem::size_of::<Ext>()) as u64
    }

    #[inline]
    fn tx_ns(&mut self, bytes: u32) -> Time {
        let h = &mut self.h;
        if h.tx_bytes[0] == bytes {
            return h.tx_ns[0];
        }
        if h.tx_bytes[1] == bytes {
            h.tx_bytes.swap(0, 1);
            h.tx_ns.swap(0, 1);
            return h.tx_ns[0];
        }
        // Rounded up to whole nanoseconds.
        let t = ((bytes as f64 * self.ns_per_byte).ceil() as Time).max(1);
        h.tx_bytes = [bytes, h.tx_bytes[0]];
        h.tx_ns = [t, h.tx_ns[0]];
        t
    }

    /// Bring the waiting queue up to time `t`: packets whose service has started leave it.
    #[inline]
    fn advance(&mut self, t: Time) {
        while let Some(&(s, bytes)) = self.starts.front() {
            if s > t {
                break;
            }
            self.stats.queue_area += self.starts.len() as u128 * (s - self.q_last) as u128;
            self.q_last = s;
            self.starts.pop_front();
            self.stats.departures += 1;
            self.stats.bytes_sent += bytes as u64;
        }
        if t > self.q_last {
            self.stats.queue_area += self.starts.len() as u128 * (t - self.q_last) as u128;
            self.q_last = t;
        }
    }

    /// Bytes whose transmission has started by time `t` (`stats.bytes_sent` counts a packet
    /// that waited only when a later arrival or a snapshot brings the waiting queue up to
    /// date): what a time-series sample reads, without changing the link.
    pub fn bytes_sent_at(&self, t: Time) -> u64 {
        let started: u64 = self.starts.iter().take_while(|&&(s, _)| s <= t).map(|&(_, b)| b as u64).sum();
        self.stats.bytes_sent + started
    }

    /// Packets waiting at time `t` (not counting the one being sent).
    pub fn queue_len_at(&self, t: Time) -> usize {
        self.starts.iter().filter(|&&(s, _)| s > t).count()
    }

    fn note_drop(&mut self, kind: Admission) {
        self.stats.drops += 1;
        match kind {
            Admission::EarlyDrop => self.stats.early_drops += 1,
            _ => self.stats.forced_drops += 1,
        }
    }

    /// A packet reaches the link's entrance at time `at` (never earlier than the previous
    /// one). Returns when it reaches the far end, or None if it was dropped.
    #[inline(always)]
    pub fn admit(&mut self, at: Time, pkt: &mut Wire) -> Option<Time> {
        if self.h.fast {
            let tx = self.tx_ns(pkt.size());
            if self.h.busy_until.saturating_sub(at) >= tx.saturating_mul(self.h.cap) {
                return None;
            }
            let done = at.max(self.h.busy_until) + tx;
            self.h.busy_until = done;
            return Some(done + self.h.delay);
        }
        self.admit_queued(at, pkt)
    }

    /// `admit` through the queue discipline, the loss model and the link's counters.
    #[inline]
    fn admit_queued(&mut self, at: Time, pkt: &mut Wire) -> Option<Time> {
        self.stats.arrivals += 1;
        if let Some(loss) = self.loss.as_mut() {
            if (!loss.data_only || !pkt.is_ack()) && loss.drops(at, pkt.flow()) {
                self.stats.drops += 1;
                self.stats.loss_model_drops += 1;
                return None;
            }
        }
        self.advance(at);
        let arrival = Arrival { at, waiting: self.starts.len() as u32, busy: at < self.h.busy_until, busy_until: self.h.busy_until };
        let decision = self.queue.decide(&arrival, pkt);
        match decision {
            Admission::Enqueue => {}
            Admission::Mark => {
                pkt.set_ecn(ecn::CE);
                self.stats.marks += 1;
            }
            d => {
                self.note_drop(d);
                return None;
            }
        }
        let start = at.max(self.h.busy_until);
        if start > self.h.busy_until {
            self.period_start = start;
        }
        let done = start + self.tx_ns(pkt.size());
        self.h.busy_until = done;
        if start > at {
            self.starts.push_back((start, pkt.size()));
        } else {
            self.stats.departures += 1;
            self.stats.bytes_sent += pkt.size() as u64;
        }
        self.stats.busy_ns += (done - start) as u128;
        Some(done + self.h.delay)
    }

    /// Ask the processor to fetch the line admission and the pipe's ends read (a hint).
    #[inline(always)]
    pub fn prefetch_hot(&self) {
        prefetch(&self.h);
    }

    /// Whether a packet (`ext`: with an out-of-line part) entering the pipe now and leaving
    /// it next, with nothing in between, would leave every allocation as it found it: the pipe
    /// is empty, a freed chunk is at hand, and the FIFO of out-of-line parts has room. It
    /// then need not enter it (`Simulation::forward_wire`).
    #[inline(always)]
    pub fn can_pass(&self, pipes: &Pipes, ext: bool) -> bool {
        self.h.tail == NIL && !pipes.free.is_empty() && (!ext || self.ext.len() < self.ext.capacity())
    }

    /// Put an admitted packet (its compact form and out-of-line part, as `Packet::split`
    /// gives them) in the propagation pipe (its entries live in `pipes`). If it is the only
    /// one there, returns the number of its entry (the caller must then schedule its arrival,
    /// naming that entry for `pop_arrival`).
    #[inline(always)]
    pub fn pipe_push(&mut self, pipes: &mut Pipes, arrival: Time, wire: Wire, ext: Option<Ext>) -> Option<u32> {
        if let Some(e) = ext {
            self.ext.push_back(e);
        }
        if self.h.tail == NIL {
            let c = pipes.alloc(arrival, wire);
            (self.h.head, self.h.tail, self.h.hpos, self.h.tpos) = (c, c, 0, 1);
            return Some(entry_number(c, 0));
        }
        let t = self.h.tpos as usize;
        // (`tpos` is at most CHUNK: `>=` lets the entry index go unchecked)
        if t >= CHUNK {
            let c = pipes.alloc(arrival, wire);
            pipes.next[self.h.tail as usize] = c;
            (self.h.tail, self.h.tpos) = (c, 1);
        } else {
            let c = &mut pipes.chunks[self.h.tail as usize];
            debug_assert!(c.e[t - 1].at <= arrival, "pipe out of order");
            c.e[t] = Entry { at: arrival, wire };
            self.h.tpos += 1;
        }
        None
    }

    /// The number of the pipe's head entry (None: the pipe is empty).
    pub fn head_entry(&self) -> Option<u32> {
        (self.h.head != NIL).then(|| entry_number(self.h.head, self.h.hpos as usize))
    }

    /// The head of the pipe, entry `entry`, reaches the far end. Returns its compact form (its
    /// out-of-line part, if any, is taken with `take_ext`) and the arrival time and entry of
    /// the next one, if any.
    /// With `AHEAD`, prefetch the line the link's next pop will read (worth it only when the
    /// pipes outgrow the cache, i.e. with many links).
    #[inline]
    pub fn pop_arrival<const AHEAD: bool>(&mut self, pipes: &mut Pipes, entry: u32) -> (Wire, Option<(Time, u32)>) {
        debug_assert_eq!(Some(entry), self.head_entry(), "an arrival for another entry than the head");
        // The entry is found from its number, not from the link's head: the two loads do not
        // wait for each other (with thousands of links both have usually left the cache).
        let (h, p) = entry_place(entry);
        let c = &pipes.chunks[h as usize];
        let next = if h == self.h.tail && p + 1 == self.h.tpos as usize {
            None
        } else if p + 1 < CHUNK {
            self.h.hpos += 1;
            // The next pop reads entry p + 2 (the next chunk's first when p is the last
            // but one), in another line when p is even: fetch it now, a packet spacing ahead
            // rather than a propagation delay after it was written (a hint, no effect on
            // results; unconditional, as in `Pipes::prefetch_entry`, even when p + 2 is in
            // p + 1's line or past the packets written so far; `next` of a tail chunk is stale,
            // a harmless line to fetch, or NIL, no fetch).
            if AHEAD {
                let ahead = if p + 2 < CHUNK { h } else { pipes.next[h as usize] };
                if let Some(a) = pipes.chunks.get(ahead as usize) {
                    prefetch(&a.e[(p + 2) % CHUNK]);
                }
            }
            // (the next entry of the same chunk: `entry_number(h, p + 1)`)
            return (c.e[p].wire, Some((c.e[p + 1].at, entry + 1)));
        } else {
            Some(pipes.next[h as usize])
        };
        // (releasing a chunk leaves its entries as they are)
        pipes.release(h);
        let wire = pipes.chunks[h as usize].e[p].wire;
        let t = match next {
            None => {
                (self.h.head, self.h.tail) = (NIL, NIL);
                None
            }
            Some(n) => {
                (self.h.head, self.h.hpos) = (n, 0);
                Some((pipes.chunks[n as usize].e[0].at, entry_number(n, 0)))
            }
        };
        (wire, t)
    }

    /// The out-of-line part of the packet `pop_arrival` returned last, if it has one
    /// (`Wire::has_ext`): it waits here until taken (before the next pop).
    #[inline]
    pub fn take_ext(&mut self) -> Option<Ext> {
        self.ext.pop_front()
    }

    /// `take_ext` without taking it.
    pub fn peek_ext(&self) -> Option<Ext> {
        self.ext.front().copied()
    }

    /// Counters as of time `t`: integrals are brought up to `t` and transmission time still to
    /// come after `t` is left out. Exact when every admission so far arrived by `t` (links
    /// entered through events); a link entered ahead of time (folded) may count busy time of
    /// earlier busy periods that lie after `t` (it is never reported).
    pub fn snapshot(&mut self, t: Time) -> LinkStats {
        self.advance(t);
        let mut s = self.stats.clone();
        let after = self.h.busy_until.saturating_sub(t.max(self.period_start));
        s.busy_ns = s.busy_ns.saturating_sub(after as u128);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::net::Packet;

    fn packet(seq: u32) -> Packet {
        Packet::data(0, seq, 1000, 0, 0)
    }

    fn pkt(seq: u32) -> Wire {
        packet(seq).split().0
    }

    /// Push a whole packet.
    fn push(l: &mut Link, pipes: &mut Pipes, arrival: Time, p: Packet) -> bool {
        let (w, e) = p.split();
        let loc = l.pipe_push(pipes, arrival, w, e);
        assert_eq!(loc.is_some(), loc == l.head_entry());
        loc.is_some()
    }

    /// Pop a whole packet.
    fn pop<const AHEAD: bool>(l: &mut Link, pipes: &mut Pipes) -> (Packet, Option<Time>) {
        let loc = l.head_entry().expect("a packet in the pipe");
        let (w, t) = l.pop_arrival::<AHEAD>(pipes, loc);
        assert_eq!(t.map(|(_, n)| n), l.head_entry());
        let e = if w.has_ext() { l.take_ext() } else { None };
        (w.join(e), t.map(|(t, _)| t))
    }

    #[test]
    fn droptail_limits_packets_in_system() {
        let mut l = Link::new("l".into(), 0, 1, 8e6, 1_000_000, &QueueSpec::DropTail { limit: 3 }, Rng::new(1));
        let mut p = pkt(0);
        assert_eq!(l.admit(0, &mut p), Some(2_000_000));
        assert_eq!(l.admit(0, &mut p), Some(3_000_000));
        assert_eq!(l.admit(0, &mut p), Some(4_000_000));
        assert_eq!(l.admit(0, &mut p), None);
        assert_eq!(l.stats.drops, 1);
        // at 1 ms the first left: room for one more
        assert_eq!(l.admit(1_000_000, &mut p), Some(5_000_000));
        assert_eq!(l.admit(1_000_000, &mut p), None);
    }

    #[test]
    fn a_capped_access_link_holds_at_most_its_cap() {
        // 8 Mb/s: a 1000-byte packet takes 1 ms. Cap 3: the one being sent and two waiting.
        let mut l = Link::new("a".into(), 0, 1, 8e6, 500, &QueueSpec::Unlimited, Rng::new(1));
        l.unreported();
        l.cap_backlog(3);
        let mut p = pkt(0);
        assert_eq!(l.admit(0, &mut p), Some(1_000_500));
        assert_eq!(l.admit(0, &mut p), Some(2_000_500));
        assert_eq!(l.admit(0, &mut p), Some(3_000_500));
        assert_eq!(l.admit(0, &mut p), None);
        // at 1 ms the first left: room for one more
        assert_eq!(l.admit(1_000_000, &mut p), Some(4_000_500));
        assert_eq!(l.admit(1_000_000, &mut p), None);
        // uncapped (the default), the same arrivals all pass
        let mut u = Link::new("u".into(), 0, 1, 8e6, 500, &QueueSpec::Unlimited, Rng::new(1));
        u.unreported();
        assert!((0..10).all(|_| u.admit(0, &mut p).is_some()));
    }

    #[test]
    fn unreported_access_link_times_like_a_counted_one() {
        let mut counted = Link::new("c".into(), 0, 1, 8e6, 500, &QueueSpec::Unlimited, Rng::new(1));
        let mut fast = Link::new("f".into(), 0, 1, 8e6, 500, &QueueSpec::Unlimited, Rng::new(1));
        fast.unreported();
        let mut p = pkt(0);
        let mut a = Packet::ack(0, 1, 40, 0).split().0;
        for at in [0, 0, 100, 5_000_000, 5_000_000, 9_000_000] {
            assert_eq!(counted.admit(at, &mut p), fast.admit(at, &mut p));
            assert_eq!(counted.admit(at, &mut a), fast.admit(at, &mut a));
        }
        assert_eq!(counted.stats.arrivals, 12);
        assert_eq!(fast.stats.arrivals, 0);
        // a lossy or bounded link keeps counting
        let mut bounded = Link::new("b".into(), 0, 1, 8e6, 500, &QueueSpec::DropTail { limit: 1 }, Rng::new(1));
        bounded.unreported();
        bounded.admit(0, &mut p);
        assert_eq!(bounded.admit(0, &mut p), None);
        assert_eq!(bounded.stats.drops, 1);
    }

    #[test]
    fn pipe_is_fifo() {
        // an access link's hot state is one cache line
        assert_eq!((std::mem::size_of::<Hot>(), std::mem::align_of::<Link>()), (64, 64));
        // two entries to a cache line, chunks aligned to lines
        assert_eq!((std::mem::size_of::<Entry>(), std::mem::size_of::<Chunk>(), std::mem::align_of::<Chunk>()), (32, 32 * CHUNK, 64));
        let mut pipes = Pipes::new();
        let mut l = Link::new("a".into(), 0, 1, 8e6, 500, &QueueSpec::Unlimited, Rng::new(1));
        let mut m = Link::new("m".into(), 0, 1, 8e6, 500, &QueueSpec::Unlimited, Rng::new(1));
        assert!(push(&mut l, &mut pipes, 1_000_500, packet(0)));
        let mut sacked = Packet::ack(0, 5, 40, 7);
        sacked.sack[0] = (6, 8);
        sacked.nsack = 1;
        assert!(push(&mut m, &mut pipes, 1_000_600, sacked));
        assert!(!push(&mut l, &mut pipes, 2_000_500, packet(1)));
        let (p, nxt) = pop::<false>(&mut l, &mut pipes);
        assert_eq!((p.seq, nxt), (0, Some(2_000_500)));
        // each link keeps its own order
        assert!(!push(&mut l, &mut pipes, 3_000_500, packet(2)));
        assert_eq!(pipes.chunks.len(), 2);
        let (a, nxt) = pop::<false>(&mut m, &mut pipes);
        assert_eq!((a.seq, a.sack_blocks(), nxt), (5, &[(6, 8)][..], None));
        assert_eq!(pop::<false>(&mut l, &mut pipes).0.seq, 1);
        let (p, nxt) = pop::<false>(&mut l, &mut pipes);
        assert_eq!((p.seq, nxt), (2, None));
        // chunks are freed and reused; a long backlog spans several
        for k in 0..3 * CHUNK as u32 + 1 {
            assert_eq!(push(&mut l, &mut pipes, 4_000_000 + k as Time, packet(k)), k == 0);
        }
        assert_eq!(pipes.chunks.len(), 4);
        for k in 0..3 * CHUNK as u32 + 1 {
            // (the prefetching pop returns the same)
            let (p, nxt) = pop::<true>(&mut l, &mut pipes);
            assert_eq!((p.seq, nxt), (k, (k < 3 * CHUNK as u32).then_some(4_000_000 + k as Time + 1)));
        }
        // the chunk freed last is taken first (its lines are the likeliest to be cached)
        let last_freed = *pipes.free.last().unwrap();
        assert!(push(&mut l, &mut pipes, 5_000_000, packet(0)));
        assert_eq!((pipes.chunks.len(), l.h.head), (4, last_freed));
    }

    #[test]
    fn utilisation_and_queue_integrals() {
        let mut l = Link::new("b".into(), 0, 1, 8e6, 0, &QueueSpec::DropTail { limit: 10 }, Rng::new(1));
        let mut p = pkt(0);
        l.admit(0, &mut p);
        l.admit(0, &mut p);
        assert_eq!(l.queue_len_at(500_000), 1);
        // half-way through the second packet
        let mid = l.snapshot(1_500_000);
        assert_eq!((mid.busy_ns, mid.departures), (1_500_000, 2));
        let end = l.snapshot(4_000_000);
        assert_eq!(end.busy_ns, 2_000_000);
        // one packet waited for 1 ms
        assert_eq!(end.queue_area, 1_000_000);
        assert_eq!(end.minus(&mid).busy_ns, 500_000);
        assert_eq!(l.queue_len_at(1_500_000), 0);
    }

    #[test]
    fn bytes_sent_at_counts_the_waiting_packets_that_have_started() {
        // 1000-byte packets at 8 Mb/s: 1 ms each; three arrive at once, two wait
        let mut l = Link::new("b".into(), 0, 1, 8e6, 0, &QueueSpec::DropTail { limit: 10 }, Rng::new(1));
        let mut p = pkt(0);
        for _ in 0..3 {
            l.admit(0, &mut p);
        }
        let size = p.size() as u64;
        // nothing has brought the waiting queue up to date: the counter has the first only
        assert_eq!(l.stats.bytes_sent, size);
        assert_eq!(l.bytes_sent_at(999_999), size);
        assert_eq!(l.bytes_sent_at(1_000_000), 2 * size);
        assert_eq!(l.bytes_sent_at(5_000_000), 3 * size);
        // reading it changes nothing; a snapshot at the same instant agrees
        assert_eq!(l.stats.bytes_sent, size);
        assert_eq!(l.snapshot(1_000_000).bytes_sent, l.bytes_sent_at(1_000_000));
    }
}
