//! The duplicate-ACK skeleton Reno, NewReno and SACK recovery share: `dupthresh` duplicate
//! ACKs start fast retransmit (one window reduction per loss event), RFC 3042 limited
//! transmit before that, window growth outside recovery, go-back-N after a timeout. Each mode
//! fills in the [`DupAck`] hooks; the skeleton is monomorphised per mode.

use super::core::Core;
use crate::cc::{Ack, Controller as _};
use crate::net::packet::{ecn, Packet};
use crate::sim::{clock_secs as to_secs, Time};

/// What a duplicate-ACK recovery mode decides.
pub(super) trait DupAck {
    /// The mode is ns-2's `TcpAgent` duplicate-ACK code (Reno, NewReno), whose rules
    /// `TcpParams::ns2_agent` follows: the ACK that ends recovery grows the window, and limited
    /// transmit sends the next packet of a go-back-N. ns-2's Sack1 does neither.
    const TCP_AGENT: bool = true;

    /// An ACK carries SACK blocks (before its cumulative acknowledgement is applied); only
    /// SACK recovery reads them. Returns whether they SACKed a packet not SACKed before.
    #[inline]
    fn apply_sack(&mut self, _c: &mut Core, _pkt: &Packet) -> bool {
        false
    }

    /// Whether a duplicate ACK counts (`news`: its SACK blocks SACKed a new packet). Every one
    /// does but in ns-2's Sack1, where only one that adds SACK information does.
    #[inline]
    fn counts_dupack(&self, _c: &Core, _news: bool) -> bool {
        true
    }

    /// The packets below `ack` are about to leave the scoreboard.
    #[inline]
    fn on_cumulative_ack(&mut self, _c: &Core, _ack: u32) {}

    /// Window inflation added to the controller's window (Reno/NewReno fast recovery).
    #[inline]
    fn inflation(&self) -> f64 {
        0.0
    }

    /// Send what the window allows (the default: the controller's window plus the inflation).
    #[inline]
    fn send(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
        c.send_window(c.cc.window() + self.inflation(), now, out);
    }

    /// Start fast recovery: the sender has counted the loss event, retransmit and send.
    fn enter(&mut self, c: &mut Core, now: Time, out: &mut Vec<Packet>);

    /// A new ACK of `acked` packets that leaves recovery (`partial`: below the recovery point,
    /// which only NewReno and SACK stay in recovery for).
    fn on_new_ack(&mut self, c: &mut Core, now: Time, acked: u32, partial: bool, out: &mut Vec<Packet>);

    /// A duplicate ACK during recovery.
    #[inline]
    fn on_dupack_in_recovery(&mut self) {}

    /// Whether a new ACK restarts the retransmission timer (after `on_new_ack`; `in_recovery`:
    /// the ACK was partial). Every new ACK does, but in NewReno's "impatient" variant.
    #[inline]
    fn restarts_timer(&self, _in_recovery: bool) -> bool {
        true
    }

    /// The timer fired: forget recovery state (the skeleton then clears the scoreboard's flags).
    #[inline]
    fn on_timeout(&mut self) {}
}

/// Send what the window allows.
#[inline]
pub(super) fn send<M: DupAck>(m: &mut M, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
    m.send(c, now, out);
}

fn enter_recovery<M: DupAck>(m: &mut M, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
    if c.snd_una >= c.reduced_upto {
        c.loss_event(now, false);
    }
    c.stats.fast_retransmits += 1;
    // Abandon the RTT measurement in progress (BSD and ns-2 do): the timed packet may sit
    // above the hole and be acknowledged only after the repair.
    c.timed = None;
    c.in_recovery = true;
    c.recover = c.snd_max;
    m.enter(c, now, out);
    c.restart_timer(now);
}

/// Whether this sender follows ns-2's `TcpAgent` duplicate-ACK rules: the scenario asks for
/// them (`TcpParams::ns2_agent`) and the mode is one of that agent's (`DupAck::TCP_AGENT`).
#[inline(always)]
fn agent_rules<M: DupAck>(c: &Core) -> bool {
    M::TCP_AGENT && c.p.ns2_agent
}

/// Whether `dupthresh` duplicate ACKs may start a fast retransmit: not for a loss below the
/// recovery point `recover` (snd_max when the last recovery or timeout started), which belongs
/// to the loss event already handled. The engine's default lets the duplicate ACKs of a
/// cumulative ACK *at* the recovery point start one (what ns-2 calls the Less Careful variant;
/// its code notes that RFC 2582 recommends the Careful one). ns-2's agents (`bugFix_ 1`,
/// `lessCareful_ 0`) need the ACK to be above it
/// (`highest_ack_ > recover_`, in packet numbers: snd_una > recover). Reno's
/// `allow_fast_retransmit` exception holds only until the first new ACK, which ends its
/// recovery; Sack1 clears `recover_` when fast recovery ends (so does the engine's, `sack.rs`),
/// so there the test bites only after a timeout. So with `ns2_agent`, a Reno or NewReno sender
/// whose first packet sent after the fast retransmit is lost waits for the timeout, as ns-2's
/// does. `recover` starts at 0: the first fast retransmit needs packet 0 acknowledged (ns-2's
/// `recover_` starts at 0 too, and `bugfix_ss_` lets it repair packet 1), so a sender that
/// loses its very first packet times out there.
#[inline(always)]
fn may_fast_retransmit(c: &Core) -> bool {
    if c.p.ns2_agent {
        c.snd_una > c.recover
    } else {
        c.snd_una >= c.recover
    }
}

/// RFC 3042: one new packet per early duplicate ACK, within cwnd + dupacks.
fn limited_transmit<M: DupAck>(c: &mut Core, now: Time, out: &mut Vec<Packet>) {
    // ns-2's send_one sends t_seqno_, the next packet of a go-back-N after a timeout as well
    // as new data; RFC 3042 only new data.
    let go_back = agent_rules::<M>(c);
    let seq = if go_back { c.snd_nxt } else { c.snd_max };
    let wnd = (c.cc.window() + c.dupacks as f64).min(c.p.max_window) as u32;
    if (go_back || c.snd_nxt == c.snd_max) && seq < c.snd_una.saturating_add(wnd) && c.has_data(seq) {
        c.snd_nxt = seq + 1;
        c.transmit(now, seq, out);
    }
}

/// A new cumulative ACK of `ack`.
#[inline]
fn new_ack<M: DupAck>(m: &mut M, c: &mut Core, now: Time, pkt: &Packet, rtt: f64, out: &mut Vec<Packet>) {
    let ack = pkt.seq;
    let acked = ack - c.snd_una;
    c.sample_timed(now, ack);
    m.on_cumulative_ack(c, ack);
    // The acknowledged flags leave the scoreboard (usually one or two: popped one by one,
    // cheaper than a drain).
    if acked <= 4 {
        for _ in 0..acked {
            c.sb.pop_front();
        }
    } else {
        c.sb.drain(..acked as usize);
    }
    c.snd_una = ack;
    if c.snd_nxt < c.snd_una {
        c.snd_nxt = c.snd_una;
    }
    c.dupacks = 0;
    // Outside recovery a new ACK opens the window; so does the ACK that ends recovery in ns-2's
    // Reno and NewReno (recv_newack_helper calls opencwnd), not in RFC 5681 nor ns-2's Sack1.
    let opens = if c.in_recovery {
        m.on_new_ack(c, now, acked, ack < c.recover, out);
        agent_rules::<M>(c) && !c.in_recovery
    } else {
        true
    };
    // An ACK carrying an ECN echo never opens the window (RFC 3168 §6.1.2).
    if opens && pkt.ecn & ecn::ECE == 0 {
        let (in_flight, min_rtt) = (c.in_flight(), c.min_rtt);
        c.cc.on_ack_with(|| Ack { now: to_secs(now), acked, rtt: Some(rtt), min_rtt, in_flight });
    }
    if !c.in_recovery && pkt.ecn & ecn::ECE != 0 && ack > c.reduced_upto {
        c.loss_event(now, true);
    }
    if m.restarts_timer(c.in_recovery) {
        c.rearm_timer(now);
    }
    c.count_rto();
}

/// An ACK, its RTT sample (as the controller sees it) already taken.
#[inline]
pub(super) fn on_ack<M: DupAck>(m: &mut M, c: &mut Core, now: Time, pkt: &Packet, rtt: f64, out: &mut Vec<Packet>) {
    let ack = pkt.seq;
    let news = pkt.nsack > 0 && m.apply_sack(c, pkt);
    if ack > c.snd_una && ack <= c.snd_max {
        new_ack(m, c, now, pkt, rtt, out);
    } else if ack == c.snd_una && c.snd_max > c.snd_una {
        if !m.counts_dupack(c, news) {
            // Not counted (ns-2's Sack1): in recovery it still leaves the pipe; outside it sends
            // only if no duplicate ACK is pending, as any ACK would.
            if c.in_recovery {
                m.on_dupack_in_recovery();
            } else if c.dupacks > 0 {
                return;
            }
            m.send(c, now, out);
            return;
        }
        c.dupacks += 1;
        if c.in_recovery {
            m.on_dupack_in_recovery();
        } else if c.dupacks >= c.p.dupthresh && may_fast_retransmit(c) {
            enter_recovery(m, c, now, out);
            return;
        } else if c.p.limited_transmit && c.dupacks < c.p.dupthresh {
            limited_transmit::<M>(c, now, out);
            return;
        }
    }
    m.send(c, now, out);
}

/// The retransmission timer fired (the controller has been told): go back to snd_una.
pub(super) fn on_timeout<M: DupAck>(m: &mut M, c: &mut Core, now: Time, out: &mut Vec<Packet>) {
    m.on_timeout();
    for f in c.sb.iter_mut() {
        *f = 0;
    }
    c.snd_nxt = c.snd_una;
    m.send(c, now, out);
}

#[cfg(test)]
mod tests {
    use super::super::{test_ack, test_sender, test_sender_past_packet_0, Recovery, TcpSender};
    use crate::sim::secs;

    fn sender(recovery: Recovery, window: f64, ns2_agent: bool) -> TcpSender {
        test_sender(recovery, window, ns2_agent, true)
    }

    fn ack(s: &mut TcpSender, t: f64, n: u32) -> Vec<u32> {
        test_ack(s, t, n, None)
    }

    /// A sender of window 8 with limited transmit that has sent 0..10, packet 0 acknowledged.
    fn past_packet_0(recovery: Recovery, ns2: bool) -> TcpSender {
        test_sender_past_packet_0(recovery, 8.0, ns2, true)
    }

    /// ns-2's Reno and NewReno open the window on the ACK that ends fast recovery
    /// (`recv_newack_helper` calls `opencwnd`); RFC 5681 and ns-2's Sack1 leave it at ssthresh.
    #[test]
    fn the_ack_ending_recovery_grows_the_window_in_ns2_reno_and_newreno_only() {
        for (recovery, ns2, grown) in [
            (Recovery::Reno, true, true),
            (Recovery::NewReno, true, true),
            (Recovery::Sack, true, false),
            (Recovery::Reno, false, false),
        ] {
            let mut s = past_packet_0(recovery, ns2);
            for (i, t) in [0.2, 0.21, 0.22].into_iter().enumerate() {
                // Packet 1 lost: three duplicate ACKs (SACKing 2, 3, 4), fast retransmit.
                test_ack(&mut s, t, 1, Some((2, 3 + i as u32)));
            }
            assert_eq!(s.cwnd(), 4.5, "{recovery:?} in recovery");
            ack(&mut s, 0.3, 12); // 0-9 sent, limited transmit 10 and 11: all acknowledged
            let want = if grown { 4.5 + 1.0 / 4.5 } else { 4.5 };
            assert_eq!(s.cwnd(), want, "{recovery:?}, ns2_agent = {ns2}");
        }
    }

    /// ns-2's Reno and NewReno (`lessCareful_ 0`) start no fast retransmit from duplicate ACKs
    /// at the recovery point of the last fast recovery (Sack1 only after a timeout): the first
    /// packet sent after the fast retransmit, lost, waits for the timer.
    #[test]
    fn ns2_newreno_starts_no_fast_retransmit_at_the_recovery_point() {
        for (recovery, ns2, again) in [
            (Recovery::NewReno, true, false),
            (Recovery::NewReno, false, true),
            (Recovery::Reno, true, false),
            (Recovery::Reno, false, true),
        ] {
            let mut s = past_packet_0(recovery, ns2);
            // 1 lost: 2..9 arrive; limited transmit, then the fast retransmit of 1 (the
            // recovery point r is snd_max then), and the inflated window sends r and more.
            let mut sent = Vec::new();
            for i in 0..8 {
                sent.extend(ack(&mut s, 0.2 + 0.01 * i as f64, 1));
            }
            let r = s.c.recover;
            assert!(sent.contains(&1) && sent.contains(&r), "{recovery:?}: {sent:?}");
            // The retransmission arrives: every packet below the recovery point is acked.
            ack(&mut s, 0.4, r);
            assert_eq!(s.c.stats.fast_retransmits, 1);
            // r was lost: the packets after it bring duplicate ACKs of r.
            let mut dup = Vec::new();
            for i in 0..3 {
                dup.extend(ack(&mut s, 0.5 + 0.01 * i as f64, r));
            }
            assert_eq!(dup.contains(&r), again, "{recovery:?}, ns2_agent = {ns2}: {dup:?}");
            assert_eq!(s.c.stats.fast_retransmits, 1 + again as u64, "{recovery:?}, ns2_agent = {ns2}");
        }
    }

    /// After a timeout, a first duplicate ACK releases the next packet of the go-back-N in ns-2
    /// (`send_one` sends `t_seqno_`); RFC 3042 limited transmit only sends new data.
    #[test]
    fn limited_transmit_continues_a_go_back_n_in_ns2_reno() {
        for (ns2, want) in [(true, vec![1]), (false, vec![])] {
            let mut s = sender(Recovery::Reno, 8.0, ns2);
            s.start(0, &mut Vec::new());
            let mut out = Vec::new();
            s.on_timeout(secs(3.0), &mut out);
            assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0], "the timeout resends 0");
            assert_eq!(ack(&mut s, 3.2, 0), want, "ns2_agent = {ns2}");
        }
    }
}
