//! Unreliable (UDP) sources: constant bit rate with an optional on/off square wave or a list
//! of rate steps, and Pareto ON/OFF sources (exponential-free, heavy-tailed bursts as in
//! yang2000's background traffic). Packets go to a sink that only counts them.

use crate::cc::params::AlgorithmInfo;
use serde::Serialize;
use crate::net::packet::Packet;
use crate::sim::{secs, Rng, Time};

/// The registry's entry for constant-bit-rate sources (constant, square wave or steps).
pub fn cbr_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "cbr",
        family: "udp",
        summary: "Constant bit rate: a constant rate, an on/off square wave (rate, on, off, phase) or a list of rate steps (steps, repeat)",
        source: "ns-2 Application/Traffic/CBR; on/off and stepped CBR as in jin2001 Fig. 19, sastry2005 Table I and tsao2007 S4",
        params: vec![],
        aliases: vec![],
        taxonomy: None,
        notes: "No params table: the pattern is given by the flow group's rate, on, off, phase, steps and repeat keys.",
        named_numbers: false,
        check: None,
    }
}

/// The registry's entry for Pareto ON/OFF sources.
pub fn pareto_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "pareto",
        family: "udp",
        summary: "Pareto ON/OFF: bursts at rate with Pareto-distributed ON and OFF periods (means on, off; shape)",
        source: "ns-2 Application/Traffic/Pareto; yang2000's background traffic (shape 1.5)",
        params: vec![],
        aliases: vec![],
        taxonomy: None,
        notes: "No params table: the source is given by the flow group's rate, on, off and shape keys.",
        named_numbers: false,
        check: None,
    }
}

/// Mean ON time of a Pareto source when the group does not give `on` (seconds).
pub const PARETO_MEAN_ON: f64 = 1.0;
/// Mean OFF time of a Pareto source when the group does not give `off` (seconds).
pub const PARETO_MEAN_OFF: f64 = 2.0;
/// Pareto shape when not given: yang2000's background traffic (§4: shape 1.5).
pub const PARETO_SHAPE: f64 = 1.5;

/// A key of a UDP flow group. UDP sources take no `params` table: the group's own keys
/// (`rate`, `on`, `off`, ...) give the pattern. `tcpf algorithms` lists them from here.
#[derive(Clone, Debug, Serialize)]
pub struct SourceKey {
    pub name: &'static str,
    /// The default, a number of the key's unit; None when the key is required (or optional
    /// with no default).
    pub default: Option<f64>,
    pub unit: &'static str,
    pub doc: &'static str,
}

fn key(name: &'static str, default: Option<f64>, unit: &'static str, doc: &'static str) -> SourceKey {
    SourceKey { name, default, unit, doc }
}

const RATE_UNIT: &str = "b/s (\"2Mbps\") or \"Nx\" (a multiple of the bottleneck's or first link's rate)";
const PACKET_SIZE_DOC: &str = "bytes per datagram, the whole packet on the wire, in [40, 65535] (default: the scenario's packet_size; ns-2's CBR and Pareto applications default to 210)";

/// The flow-group keys of a UDP source `name` (`cbr` or `pareto`); empty for any other name.
pub fn source_keys(name: &str) -> Vec<SourceKey> {
    match name {
        "cbr" => vec![
            key("rate", None, RATE_UNIT, "the sending rate (while on); required unless steps is given"),
            key("on", None, "s", "with off: send for on seconds, then stay silent for off seconds (a square wave)"),
            key("off", None, "s", "the silent part of the square wave (needs on)"),
            key("phase", Some(0.0), "s", "how far into its on/off cycle the source starts (needs on and off)"),
            key("steps", None, "[[s, rate], ...]", "instead of rate: rate steps [time since the flow's start, rate], the first at 0, times increasing; a rate of 0 is silence"),
            key("repeat", None, "s", "with steps: the period after which the steps start over (longer than the last step's time)"),
            key("packet_size", None, "bytes", PACKET_SIZE_DOC),
        ],
        "pareto" => vec![
            key("rate", None, RATE_UNIT, "the sending rate while ON; required"),
            key("on", Some(PARETO_MEAN_ON), "s", "mean ON time (positive; ns-2's burst_time_)"),
            key("off", Some(PARETO_MEAN_OFF), "s", "mean OFF time (positive; ns-2's idle_time_)"),
            key("shape", Some(PARETO_SHAPE), "", "Pareto shape of both periods, in (1, 100] (ns-2's shape_; yang2000 used 1.5)"),
            key("packet_size", None, "bytes", PACKET_SIZE_DOC),
        ],
        _ => vec![],
    }
}

/// On for `on` seconds, off for `off` seconds; `phase` seconds into the cycle at the start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnOff {
    pub on: f64,
    pub off: f64,
    pub phase: f64,
}

/// How a UDP source's rate varies.
#[derive(Clone, Debug, PartialEq)]
pub enum UdpPattern {
    /// Constant rate (bits/s).
    Constant { rate: f64 },
    /// Constant rate while on, nothing while off.
    SquareWave { rate: f64, wave: OnOff },
    /// Rate steps: `(seconds since start, bits/s)`, the first at 0; optionally repeated with
    /// the given period (seconds). A rate of 0 is silence.
    Steps { steps: Vec<(f64, f64)>, repeat: Option<f64> },
    /// ON and OFF periods drawn from Pareto distributions with these means and shape; sends
    /// at `rate` while on.
    ParetoOnOff { rate: f64, mean_on: f64, mean_off: f64, shape: f64 },
}

impl UdpPattern {
    /// Long-run mean rate (bits/s), for documentation and tests.
    pub fn mean_rate(&self) -> f64 {
        match self {
            UdpPattern::Constant { rate } => *rate,
            UdpPattern::SquareWave { rate, wave } => rate * wave.on / (wave.on + wave.off),
            UdpPattern::Steps { steps, repeat } => match repeat {
                Some(p) => {
                    let mut total = 0.0;
                    for (i, (t, r)) in steps.iter().enumerate() {
                        let end = steps.get(i + 1).map_or(*p, |s| s.0);
                        total += r * (end - t);
                    }
                    total / p
                }
                None => steps.last().map_or(0.0, |s| s.1),
            },
            UdpPattern::ParetoOnOff { rate, mean_on, mean_off, .. } => rate * mean_on / (mean_on + mean_off),
        }
    }
}

pub struct UdpSource {
    pub flow: u32,
    pub size: u32,
    pattern: UdpPattern,
    start: Time,
    stopped: bool,
    seq: u32,
    rng: Rng,
    /// Pareto: end of the current ON period.
    on_until: Time,
    /// Steps: each step's time since the start (increasing), converted once.
    step_at: Vec<Time>,
}

impl UdpSource {
    pub fn new(flow: u32, size: u32, pattern: UdpPattern, rng: Rng) -> Self {
        let step_at = match &pattern {
            UdpPattern::Steps { steps, .. } => steps.iter().map(|s| secs(s.0)).collect(),
            _ => vec![],
        };
        UdpSource { flow, size, pattern, start: 0, stopped: false, seq: 0, rng, on_until: 0, step_at }
    }

    /// Start at `now`; returns when to fire first.
    pub fn start(&mut self, now: Time) -> Time {
        self.start = now;
        if let UdpPattern::ParetoOnOff { mean_on, shape, .. } = self.pattern {
            self.on_until = now + secs(self.rng.pareto(mean_on, shape));
        }
        now
    }

    pub fn stop(&mut self) {
        self.stopped = true;
    }

    #[inline]
    fn gap(&self, rate: f64) -> Time {
        secs(self.size as f64 * 8.0 / rate).max(1)
    }

    fn emit(&mut self, now: Time, out: &mut Vec<Packet>) {
        out.push(Packet::datagram(self.flow, self.seq, self.size, now));
        self.seq = self.seq.wrapping_add(1);
    }

    /// Emit the packet due at `now` (if any) and return when to fire next.
    pub fn fire(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.stopped {
            return None;
        }
        match &self.pattern {
            UdpPattern::Constant { rate } => {
                let next = now + self.gap(*rate);
                self.emit(now, out);
                Some(next)
            }
            UdpPattern::SquareWave { rate, wave } => {
                let (on, period) = (secs(wave.on), secs(wave.on + wave.off));
                let offset = secs(wave.phase) % period.max(1);
                let pos = (now - self.start + offset) % period;
                let gap = self.gap(*rate);
                if pos < on {
                    self.emit(now, out);
                }
                let npos = pos + gap;
                Some(if npos % period < on && npos < period { now + gap } else { now + (period - pos) })
            }
            UdpPattern::Steps { steps, repeat } => {
                let rel = now - self.start;
                let (cycle_start, pos) = match repeat {
                    Some(p) => {
                        let p = secs(*p).max(1);
                        (rel - rel % p, rel % p)
                    }
                    None => (0, rel),
                };
                // the last step begun (times increase: a binary search, not a scan per packet)
                let i = self.step_at.partition_point(|&t| t <= pos).saturating_sub(1);
                let rate = steps[i].1;
                let boundary = match (self.step_at.get(i + 1), repeat) {
                    (Some(&t), _) => Some(self.start + cycle_start + t),
                    (None, Some(p)) => Some(self.start + cycle_start + secs(*p)),
                    (None, None) => None,
                };
                if rate > 0.0 {
                    let next = now + self.gap(rate);
                    self.emit(now, out);
                    Some(match boundary {
                        Some(b) if b < next => b,
                        _ => next,
                    })
                } else {
                    boundary
                }
            }
            UdpPattern::ParetoOnOff { rate, mean_on, mean_off, shape } => {
                let (rate, mean_on, mean_off, shape) = (*rate, *mean_on, *mean_off, *shape);
                if now < self.on_until {
                    self.emit(now, out);
                    let next = now + self.gap(rate);
                    if next < self.on_until {
                        return Some(next);
                    }
                }
                // OFF period, then a new ON period.
                let off = secs(self.rng.pareto(mean_off, shape));
                let begin = self.on_until.max(now) + off;
                self.on_until = begin + secs(self.rng.pareto(mean_on, shape)).max(1);
                Some(begin)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(mut src: UdpSource, until: f64) -> usize {
        let mut out = Vec::new();
        let mut t = Some(src.start(0));
        while let Some(now) = t {
            if now >= secs(until) {
                break;
            }
            t = src.fire(now, &mut out);
        }
        out.len()
    }

    #[test]
    fn square_wave_sends_half_the_time() {
        let p = UdpPattern::SquareWave { rate: 8e5, wave: OnOff { on: 1.0, off: 1.0, phase: 0.0 } };
        let n = count(UdpSource::new(0, 1000, p, Rng::new(1)), 10.0);
        // 100 packets/s while on, on half of 10 s
        assert!((n as i64 - 500).abs() <= 2, "{n}");
    }

    #[test]
    fn square_wave_phase_shifts_the_cycle() {
        // Starting half-way through the on period: on 0–0.5 s, off 0.5–1.5 s, on 1.5–2 s.
        let p = UdpPattern::SquareWave { rate: 8e5, wave: OnOff { on: 1.0, off: 1.0, phase: 0.5 } };
        let n = count(UdpSource::new(0, 1000, p, Rng::new(1)), 1.5);
        assert!((n as i64 - 50).abs() <= 1, "{n}");
    }

    #[test]
    fn steps_follow_the_schedule() {
        // 14 Mb/s for 1 s, 9 Mb/s for 1 s, repeated (tsao2007 S4 shape).
        let p = UdpPattern::Steps { steps: vec![(0.0, 14e6), (1.0, 9e6)], repeat: Some(2.0) };
        assert!((p.mean_rate() - 11.5e6).abs() < 1.0);
        let n = count(UdpSource::new(0, 1000, p, Rng::new(1)), 4.0);
        let expect = (2.0 * 14e6 + 2.0 * 9e6) / 8000.0;
        assert!((n as f64 - expect).abs() / expect < 0.002, "{n} vs {expect}");
    }

    #[test]
    fn many_steps_send_at_the_rate_of_the_last_step_begun() {
        // 2 000 random steps (some silent, some shorter than a packet's gap), repeated: every
        // packet is sent at the times the step in force gives, the step found as the last one
        // whose time has come (as a scan from the end would find it)
        let mut rng = Rng::new(3);
        let mut t = 0.0;
        let steps: Vec<(f64, f64)> = (0..2000)
            .map(|i| {
                let s = (t, if rng.uniform() < 0.2 { 0.0 } else { 1e5 + 9e6 * rng.uniform() });
                t += if i % 7 == 0 { 1e-5 } else { 0.002 * rng.uniform() + 1e-6 };
                s
            })
            .collect();
        let period = t + 0.01;
        let p = UdpPattern::Steps { steps: steps.clone(), repeat: Some(period) };
        let mut src = UdpSource::new(0, 1000, p, Rng::new(1));
        let (mut out, mut now, mut sent) = (Vec::new(), Some(src.start(0)), 0usize);
        while let Some(n) = now.filter(|&n| n < secs(2.5 * period)) {
            let before = out.len();
            now = src.fire(n, &mut out);
            let pos = n % secs(period);
            let i = steps.iter().rposition(|s| secs(s.0) <= pos).unwrap_or(0);
            assert_eq!(out.len() - before, (steps[i].1 > 0.0) as usize, "at {n} ns, step {i}");
            sent += out.len() - before;
        }
        assert!(sent > 1000, "{sent}");
    }

    #[test]
    fn pareto_on_off_mean_rate() {
        let p = UdpPattern::ParetoOnOff { rate: 5e5, mean_on: 1.0, mean_off: 2.0, shape: 1.5 };
        let mut total = 0usize;
        for s in 0..40 {
            total += count(UdpSource::new(s, 1000, p.clone(), Rng::stream(7, "udp", s as u64)), 600.0);
        }
        let offered = total as f64 * 8000.0 / 600.0;
        println!("40 Pareto sources offered {:.3} Mb/s", offered / 1e6);
        assert!((offered - 6.667e6).abs() / 6.667e6 < 0.10, "{offered}");
    }
}
