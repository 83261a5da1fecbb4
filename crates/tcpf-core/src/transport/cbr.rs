//! Constant-bit-rate UDP source with an optional on/off square wave.

use crate::net::packet::Packet;
use crate::sim::{secs, Time};

/// On for `on` seconds, off for `off` seconds, starting with an on period at the start time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnOff {
    pub on: f64,
    pub off: f64,
}

pub struct CbrSource {
    pub flow: u32,
    pub size: u32,
    interval: Time,
    on_off: Option<(Time, Time)>,
    start: Time,
    stopped: bool,
    seq: u32,
}

impl CbrSource {
    pub fn new(flow: u32, rate_bps: f64, size: u32, on_off: Option<OnOff>) -> Self {
        let interval = ((size as f64 * 8.0 / rate_bps) * 1e9).round().max(1.0) as Time;
        CbrSource { flow, size, interval, on_off: on_off.map(|o| (secs(o.on), secs(o.off))), start: 0, stopped: false, seq: 0 }
    }

    pub fn start(&mut self, now: Time) {
        self.start = now;
    }

    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Emit the packet due at `now` (if in an on period) and return when to fire next.
    pub fn fire(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        if self.stopped {
            return None;
        }
        let next = now + self.interval;
        match self.on_off {
            None => {
                out.push(Packet::datagram(self.flow, self.seq, self.size, now));
                self.seq += 1;
                Some(next)
            }
            Some((on, off)) => {
                let period = on + off;
                let pos = (now - self.start) % period;
                if pos < on {
                    out.push(Packet::datagram(self.flow, self.seq, self.size, now));
                    self.seq += 1;
                }
                let npos = (next - self.start) % period;
                if npos < on {
                    Some(next)
                } else {
                    // Skip to the start of the next on period.
                    Some(next - npos + period)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_wave_sends_half_the_time() {
        let mut c = CbrSource::new(0, 8e5, 1000, Some(OnOff { on: 1.0, off: 1.0 }));
        let mut out = Vec::new();
        let mut t = Some(0);
        while let Some(now) = t {
            if now >= secs(10.0) {
                break;
            }
            t = c.fire(now, &mut out);
        }
        // 100 packets/s while on, on half of 10 s
        assert!((out.len() as i64 - 500).abs() <= 1, "{}", out.len());
    }
}
