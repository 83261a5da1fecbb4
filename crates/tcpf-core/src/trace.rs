//! Packet traces (the scenario's `[trace]` table; docs/see-it.md, "Packet traces"): what the
//! engine saw, packet by packet, as an ns-2 trace (`+ - r d` lines, for the awk tooling of the
//! ns-2 era) or as a pcap file with synthesized Ethernet/IPv4/TCP headers (for tshark,
//! Wireshark and tcptrace).
//!
//! The engine calls [`Tracer::hop`] once per packet and link it enters, only when the run
//! traces (one well-predicted branch otherwise). A link computes a packet's whole passage when
//! it admits it, so the dequeue and receive times are known at once, ahead of the clock: the
//! records are kept with their times and sorted when the run ends; those after the end of the
//! run (packets still in flight) are left out. The trace is bounded: past `max_bytes` the
//! tracer records nothing more and the run fails with an error naming `trace.max_bytes`.

use crate::error::{show_bytes, FieldError};
use crate::net::packet::{ecn, Packet, PacketKind};
use crate::sim::{to_secs, Time};

/// The two trace formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// ns-2's trace lines: `event time from to type size flags fid src dst seq id`.
    Ns2,
    /// pcap (nanosecond timestamps, Ethernet link type), headers only (the payload is
    /// truncated as if by a snap length; the original length is recorded).
    Pcap,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Ns2 => "ns2",
            TraceFormat::Pcap => "pcap",
        }
    }
}

/// What a run traces, in engine terms.
#[derive(Clone, Debug)]
pub struct TraceSpec {
    pub format: TraceFormat,
    /// Flow indices to trace; None: all.
    pub flows: Option<Vec<u32>>,
    /// Link indices to trace; None: every link (ns-2) or the senders' hosts (pcap: data as
    /// it leaves the sender, ACKs as they reach it, as tcpdump on the sender would see them).
    pub links: Option<Vec<u32>>,
    /// Most bytes the trace may hold.
    pub max_bytes: u64,
}

impl TraceSpec {
    /// Default `trace.max_bytes`: 64 MiB.
    pub const MAX_BYTES: u64 = 64 << 20;
    /// Largest `trace.max_bytes`: 2 GiB.
    pub const MAX_MAX_BYTES: u64 = 2 << 30;
    /// Smallest `trace.max_bytes`: 1 KiB.
    pub const MIN_MAX_BYTES: u64 = 1 << 10;
}

/// How a link appears in a trace: its ends and timing.
#[derive(Clone, Copy, Debug)]
pub struct LinkInfo {
    pub from: u32,
    pub to: u32,
    pub delay: Time,
    pub ns_per_byte: f64,
}

/// How a flow appears in a trace.
#[derive(Clone, Copy, Debug)]
pub struct FlowInfo {
    /// Sender's and receiver's nodes.
    pub src: u32,
    pub dst: u32,
    /// Payload bytes per data packet (TCP sequence numbers advance by it).
    pub payload: u32,
    /// Links on the data path and the ACK path.
    pub fwd_len: u16,
    pub rev_len: u16,
}

/// A trace being recorded.
pub struct Tracer {
    format: TraceFormat,
    flow_on: Vec<bool>,
    link_on: Vec<bool>,
    /// pcap at the senders' hosts (no `links` given).
    at_sender: bool,
    links: Vec<LinkInfo>,
    flows: Vec<FlowInfo>,
    buf: Vec<u8>,
    /// (time, start in `buf`, length) per record.
    recs: Vec<(Time, u64, u32)>,
    max_bytes: u64,
    end: Time,
    /// When the trace first would have outgrown `max_bytes`.
    full_at: Option<Time>,
}

const NS2_FLAGS: usize = 7;

impl Tracer {
    pub fn new(spec: &TraceSpec, links: Vec<LinkInfo>, flows: Vec<FlowInfo>, end: Time) -> Self {
        let sel = |n: usize, which: &Option<Vec<u32>>| match which {
            None => vec![true; n],
            Some(v) => {
                let mut on = vec![false; n];
                for &i in v {
                    if let Some(x) = on.get_mut(i as usize) {
                        *x = true;
                    }
                }
                on
            }
        };
        Tracer {
            format: spec.format,
            flow_on: sel(flows.len(), &spec.flows),
            link_on: sel(links.len(), &spec.links),
            at_sender: spec.format == TraceFormat::Pcap && spec.links.is_none(),
            links,
            flows,
            buf: Vec::new(),
            recs: Vec::new(),
            max_bytes: spec.max_bytes,
            end,
            full_at: None,
        }
    }

    /// Packet `pkt` of flow `pkt.flow` entered link `l` at `at` as hop `hop` of its path
    /// (`ack`: the ACK path); `arrival`: when it reaches the far end, None if dropped there.
    /// Out of line and cold: the engine's packet path stays as small as without tracing.
    #[cold]
    #[inline(never)]
    pub fn hop(&mut self, l: u32, hop: usize, at: Time, pkt: &Packet, arrival: Option<Time>) {
        let f = pkt.flow as usize;
        if !self.flow_on[f] || self.full_at.is_some() {
            return;
        }
        match self.format {
            TraceFormat::Ns2 => {
                if !self.link_on[l as usize] {
                    return;
                }
                let li = self.links[l as usize];
                self.ns2(b'+', at, &li, pkt);
                match arrival {
                    None => self.ns2(b'd', at, &li, pkt),
                    Some(t) => {
                        let tx = ((pkt.size as f64 * li.ns_per_byte).ceil() as Time).max(1);
                        self.ns2(b'-', t - li.delay - tx, &li, pkt);
                        self.ns2(b'r', t, &li, pkt);
                    }
                }
            }
            TraceFormat::Pcap => {
                if self.at_sender {
                    let fi = self.flows[f];
                    let ack = pkt.kind == PacketKind::Ack;
                    if !ack && hop == 0 {
                        self.pcap(at, pkt);
                    } else if let (true, Some(t)) = (ack && hop + 1 == fi.rev_len as usize, arrival) {
                        self.pcap(t, pkt);
                    }
                } else if self.link_on[l as usize] {
                    self.pcap(at, pkt);
                }
            }
        }
    }

    fn room(&mut self, t: Time, n: usize) -> bool {
        if t > self.end {
            return false;
        }
        if self.buf.len() as u64 + n as u64 + self.header_len() as u64 > self.max_bytes {
            self.full_at = Some(t);
            return false;
        }
        true
    }

    fn header_len(&self) -> usize {
        match self.format {
            TraceFormat::Ns2 => 0,
            TraceFormat::Pcap => 24,
        }
    }

    fn push(&mut self, t: Time, start: usize) {
        self.recs.push((t, start as u64, (self.buf.len() - start) as u32));
    }

    fn ns2(&mut self, ev: u8, t: Time, li: &LinkInfo, pkt: &Packet) {
        use std::io::Write;
        if t > self.end {
            return;
        }
        let fi = self.flows[pkt.flow as usize];
        let (kind, src, dst) = match pkt.kind {
            PacketKind::Data => ("tcp", fi.src, fi.dst),
            PacketKind::Ack => ("ack", fi.dst, fi.src),
            PacketKind::Datagram => ("cbr", fi.src, fi.dst),
        };
        let mut flags = [b'-'; NS2_FLAGS];
        if pkt.ecn & ecn::ECE != 0 {
            flags[0] = b'C';
        }
        if pkt.ecn & ecn::CE != 0 {
            flags[3] = b'E';
        }
        if pkt.ecn & ecn::ECT != 0 {
            flags[4] = b'N';
        }
        if pkt.ecn & ecn::CWR != 0 {
            flags[5] = b'A';
        }
        let start = self.buf.len();
        let _ = write!(self.buf, "{} ", ev as char);
        write_time(&mut self.buf, t);
        let _ = writeln!(
            self.buf,
            " {} {} {kind} {} {} {} {src}.0 {dst}.0 {} {}",
            li.from,
            li.to,
            pkt.size,
            std::str::from_utf8(&flags).unwrap_or("-------"),
            pkt.flow,
            pkt.seq,
            pkt.seq
        );
        if self.buf.len() as u64 > self.max_bytes {
            self.buf.truncate(start);
            self.full_at = Some(t);
            return;
        }
        self.push(t, start);
    }

    fn pcap(&mut self, t: Time, pkt: &Packet) {
        let udp = pkt.kind == PacketKind::Datagram;
        let nsack = pkt.nsack as usize;
        let opt = 12 + if nsack > 0 { 4 + 8 * nsack } else { 0 };
        // A UDP source's datagram: IPv4 and UDP headers (its size on the wire is the IP
        // datagram's length, as ns-2's CBR packetSize_).
        let tcp_len = if udp { 8 } else { 20 + opt };
        let rec = 16 + 14 + 20 + tcp_len;
        if !self.room(t, rec) {
            return;
        }
        let fi = self.flows[pkt.flow as usize];
        let data = pkt.kind != PacketKind::Ack;
        let ip_len = if udp { fi.payload.max(28) } else { 20 + tcp_len as u32 + if data { fi.payload } else { 0 } };
        let start = self.buf.len();
        let b = &mut self.buf;
        // Record header: seconds, nanoseconds, captured length, original length.
        b.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((rec - 16) as u32).to_le_bytes());
        b.extend_from_slice(&(14 + ip_len).to_le_bytes());
        // Ethernet: locally administered addresses carrying the host numbers.
        let host = pkt.flow + 1;
        let (snd, rcv) = (addr(host, false), addr(host, true));
        let (s_ip, d_ip, s_port, d_port) = if data { (snd, rcv, 40000u16, 5001u16) } else { (rcv, snd, 5001, 40000) };
        for ip in [d_ip, s_ip] {
            b.extend_from_slice(&[0x02, 0x00]);
            b.extend_from_slice(&ip);
        }
        b.extend_from_slice(&[0x08, 0x00]);
        // IPv4.
        let ip_start = b.len();
        let tos = if pkt.ecn & ecn::CE != 0 {
            3
        } else if pkt.ecn & ecn::ECT != 0 {
            2
        } else {
            0
        };
        b.extend_from_slice(&[0x45, tos]);
        b.extend_from_slice(&(ip_len.min(65_535) as u16).to_be_bytes());
        // Identification: the record's number (a retransmission or a duplicate ACK is not a
        // copy of an earlier datagram: tcptrace reports equal ids as hardware duplicates).
        b.extend_from_slice(&(self.recs.len() as u16).to_be_bytes());
        b.extend_from_slice(&[0x40, 0x00, 64, if udp { 17 } else { 6 }, 0, 0]); // DF, TTL, UDP or TCP, checksum (below)
        b.extend_from_slice(&s_ip);
        b.extend_from_slice(&d_ip);
        let sum = checksum(&b[ip_start..ip_start + 20]);
        b[ip_start + 10..ip_start + 12].copy_from_slice(&sum.to_be_bytes());
        if udp {
            // UDP: length, no checksum (0: none computed, there is no payload to sum).
            b.extend_from_slice(&s_port.to_be_bytes());
            b.extend_from_slice(&d_port.to_be_bytes());
            b.extend_from_slice(&((ip_len - 20) as u16).to_be_bytes());
            b.extend_from_slice(&[0, 0]);
            self.push(t, start);
            return;
        }
        // TCP: sequence numbers in bytes from 1 (packet n carries bytes [1 + n·payload, ...)).
        let bytes = |n: u32| 1u32.wrapping_add(n.wrapping_mul(fi.payload));
        let (seq, ack) = if data { (bytes(pkt.seq), 1) } else { (1, bytes(pkt.seq)) };
        b.extend_from_slice(&s_port.to_be_bytes());
        b.extend_from_slice(&d_port.to_be_bytes());
        b.extend_from_slice(&seq.to_be_bytes());
        b.extend_from_slice(&ack.to_be_bytes());
        let mut flags = 0x10u8; // ACK
        if pkt.ecn & ecn::ECE != 0 {
            flags |= 0x40;
        }
        if pkt.ecn & ecn::CWR != 0 {
            flags |= 0x80;
        }
        b.extend_from_slice(&[((tcp_len / 4) as u8) << 4, flags, 0xff, 0xff, 0, 0, 0, 0]); // window, checksum (not computed: no payload), urgent
        // Timestamps (microseconds): data carries its send time; an ACK its own time and the
        // echoed send time of the data that triggered it.
        let us = |t: Time| ((t / 1000) as u32).to_be_bytes();
        let (tsval, tsecr) = if data { (us(pkt.stamp), [0; 4]) } else { (us(t), us(pkt.stamp)) };
        b.extend_from_slice(&[1, 1, 8, 10]);
        b.extend_from_slice(&tsval);
        b.extend_from_slice(&tsecr);
        if nsack > 0 {
            b.extend_from_slice(&[1, 1, 5, (2 + 8 * nsack) as u8]);
            for &(l, r) in pkt.sack_blocks() {
                b.extend_from_slice(&bytes(l).to_be_bytes());
                b.extend_from_slice(&bytes(r).to_be_bytes());
            }
        }
        self.push(t, start);
    }

    /// Bytes held (for the run's memory guard, `limits.memory`): the records and their index.
    pub fn held_bytes(&self) -> u64 {
        (self.buf.capacity() + self.recs.capacity() * std::mem::size_of::<(Time, u64, u32)>()) as u64
    }

    /// The error to fail the run with, if the trace outgrew its limit.
    pub fn check(&self) -> Result<(), FieldError> {
        match self.full_at {
            None => Ok(()),
            Some(t) => Err(FieldError::new(
                "trace.max_bytes",
                format!(
                    "the {} trace reached its limit of {} at t = {} s; raise trace.max_bytes (at most {}), trace fewer flows (trace.flows) or links (trace.links), or shorten the run",
                    self.format.name(),
                    show_bytes(self.max_bytes),
                    to_secs(t),
                    show_bytes(TraceSpec::MAX_MAX_BYTES)
                ),
            )),
        }
    }

    /// The finished trace: records in time order (ties in the order recorded).
    pub fn finish(mut self) -> Vec<u8> {
        self.recs.sort_unstable_by_key(|&(t, s, _)| (t, s));
        let mut out = Vec::with_capacity(self.buf.len() + self.header_len());
        if self.format == TraceFormat::Pcap {
            out.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond pcap
            out.extend_from_slice(&2u16.to_le_bytes());
            out.extend_from_slice(&4u16.to_le_bytes());
            out.extend_from_slice(&[0; 8]); // time zone, accuracy
            out.extend_from_slice(&65_535u32.to_le_bytes()); // snap length
            out.extend_from_slice(&1u32.to_le_bytes()); // Ethernet
        }
        for &(_, s, n) in &self.recs {
            out.extend_from_slice(&self.buf[s as usize..s as usize + n as usize]);
        }
        out
    }
}

/// IPv4 address of flow host `host` (from 1): senders 10.0.0.0/9, receivers 10.128.0.0/9.
fn addr(host: u32, receiver: bool) -> [u8; 4] {
    [10, (host >> 16) as u8 & 0x7f | if receiver { 0x80 } else { 0 }, (host >> 8) as u8, host as u8]
}

/// The Internet checksum of a header.
fn checksum(h: &[u8]) -> u16 {
    let mut s: u32 = h.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32).sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Seconds with up to nine decimals, exact (no trailing zeros).
fn write_time(b: &mut Vec<u8>, t: Time) {
    use std::io::Write;
    let (s, ns) = (t / 1_000_000_000, t % 1_000_000_000);
    if ns == 0 {
        let _ = write!(b, "{s}");
        return;
    }
    let frac = format!("{ns:09}");
    let _ = write!(b, "{s}.{}", frac.trim_end_matches('0'));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracer(format: TraceFormat, max: u64) -> Tracer {
        let spec = TraceSpec { format, flows: None, links: None, max_bytes: max };
        let links = vec![LinkInfo { from: 0, to: 1, delay: 10_000_000, ns_per_byte: 8.0 }];
        let flows = vec![FlowInfo { src: 0, dst: 1, payload: 1000, fwd_len: 1, rev_len: 1 }];
        Tracer::new(&spec, links, flows, 10_000_000_000)
    }

    #[test]
    fn ns2_lines_in_time_order() {
        let mut t = tracer(TraceFormat::Ns2, 1 << 20);
        let p = Packet::data(0, 7, 1040, 1_000_000_000, ecn::ECT);
        // transmission 1040 × 8 ns, then 10 ms.
        t.hop(0, 0, 1_000_000_000, &p, Some(1_000_000_000 + 8320 + 10_000_000));
        t.hop(0, 0, 1_000_000_000, &Packet::data(0, 8, 1040, 1_000_000_000, 0), None);
        let s = String::from_utf8(t.finish()).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "+ 1 0 1 tcp 1040 ----N-- 0 0.0 1.0 7 7");
        assert_eq!(lines[1], "- 1 0 1 tcp 1040 ----N-- 0 0.0 1.0 7 7");
        assert_eq!(lines[2], "+ 1 0 1 tcp 1040 ------- 0 0.0 1.0 8 8");
        assert_eq!(lines[3], "d 1 0 1 tcp 1040 ------- 0 0.0 1.0 8 8");
        assert_eq!(lines[4], "r 1.01000832 0 1 tcp 1040 ----N-- 0 0.0 1.0 7 7");
    }

    #[test]
    fn the_limit_stops_recording_and_names_the_field() {
        let mut t = tracer(TraceFormat::Ns2, 1024);
        for i in 0..100 {
            t.hop(0, 0, i * 1000, &Packet::data(0, i as u32, 1040, 0, 0), None);
        }
        let e = t.check().unwrap_err();
        assert_eq!(e.field, "trace.max_bytes");
        assert!(t.finish().len() <= 1024);
    }

    #[test]
    fn pcap_holds_a_udp_datagram_as_ipv4_and_udp_headers() {
        let mut t = tracer(TraceFormat::Pcap, 1 << 20);
        let d = Packet::datagram(0, 7, 1000, 2_000);
        t.hop(0, 0, 3_000, &d, Some(5_000));
        let b = t.finish();
        let r = &b[24..];
        let caplen = u32::from_le_bytes(r[8..12].try_into().unwrap()) as usize;
        assert_eq!(caplen, 14 + 20 + 8);
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 14 + 1000); // the datagram's size on the wire
        let ip = &r[16 + 14..];
        assert_eq!((ip[9], u16::from_be_bytes([ip[2], ip[3]])), (17, 1000));
        assert_eq!(checksum(&ip[..20]), 0);
        let udp = &ip[20..28];
        assert_eq!(u16::from_be_bytes([udp[0], udp[1]]), 40000);
        assert_eq!(u16::from_be_bytes([udp[2], udp[3]]), 5001);
        assert_eq!(u16::from_be_bytes([udp[4], udp[5]]), 980);
    }

    #[test]
    fn pcap_header_fields() {
        let mut t = tracer(TraceFormat::Pcap, 1 << 20);
        let mut a = Packet::ack(0, 5, 40, 2_000);
        a.sack[0] = (6, 8);
        a.nsack = 1;
        t.hop(0, 0, 3_000, &a, Some(5_000));
        let b = t.finish();
        assert_eq!(&b[..4], &0xa1b2_3c4du32.to_le_bytes());
        let r = &b[24..];
        let caplen = u32::from_le_bytes(r[8..12].try_into().unwrap()) as usize;
        assert_eq!(caplen, 14 + 20 + 20 + 12 + 12);
        let ip = &r[16 + 14..];
        assert_eq!(checksum(&ip[..20]), 0);
        let tcp = &ip[20..];
        assert_eq!(u32::from_be_bytes(tcp[8..12].try_into().unwrap()), 5001);
        assert_eq!(&tcp[32..36], &[1, 1, 5, 10]);
        assert_eq!(u32::from_be_bytes(tcp[36..40].try_into().unwrap()), 6001);
    }
}
