//! RED (Floyd & Jacobson 1993), with the `gentle` and `wait` refinements and ECN marking,
//! following ns-2 2.35's semantics so that differential runs start equal.

use super::{Admission, Arrival, Discipline};
use crate::net::packet::{ecn, Wire};
use crate::sim::{ns_f64, Rng, Time, TIME_MAX};
use crate::error::show_num;

/// RED parameters, thresholds in packets (packet mode).
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    /// EWMA weight of the average queue.
    pub q_weight: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// Probability rises from max_p to 1 between max_th and 2·max_th instead of jumping to 1.
    pub gentle: bool,
    /// Spread drops out: no drop until about 1/p packets since the last one.
    pub wait: bool,
    /// Mark ECN-capable packets instead of dropping them (early drops only).
    pub ecn: bool,
    /// ns-2's `mark_p_`: mark only while the unmodified probability is below this; above it,
    /// even ECN-capable packets are dropped. `1.0` marks whenever marking is allowed.
    pub mark_p: f64,
    /// Mean packet size in bytes, used to age the average over idle periods.
    pub mean_pkt_size: u32,
}

impl RedParams {
    pub fn validate(&self) -> Result<(), String> {
        if !self.min_th.is_finite() || self.min_th < 0.0 {
            return Err(format!("min_th: must be >= 0 packets; got {}", show_num(self.min_th)));
        }
        if !(self.max_th.is_finite() && self.max_th > self.min_th) {
            return Err(format!("max_th: must be greater than min_th ({}); got {}", show_num(self.min_th), show_num(self.max_th)));
        }
        if !(self.q_weight > 0.0 && self.q_weight <= 1.0) {
            return Err(format!("q_weight: must be in (0, 1]; got {}", show_num(self.q_weight)));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("max_p: must be in (0, 1]; got {}", show_num(self.max_p)));
        }
        if self.mark_p.is_nan() || self.mark_p <= 0.0 {
            return Err(format!("mark_p: must be > 0; got {}", show_num(self.mark_p)));
        }
        Ok(())
    }
}

/// RED's running state.
#[derive(Clone, Debug)]
pub struct Red {
    pub p: RedParams,
    pub limit: u32,
    /// Average queue (packets).
    pub avg: f64,
    count: i64,
    old: bool,
    /// Packets per second at the link rate (for idle-time aging).
    ptc: f64,
    rng: Rng,
    /// The shortest idle span (ns) that ages the average (`aging_threshold`).
    age_from: Time,
    /// `1.0 - q_weight` (the value the update computed each time).
    keep: f64,
    /// The average from which every packet is dropped: `2·max_th` if gentle, else `max_th`.
    forced_th: f64,
}

/// `ptc·(idle·1e-9)`: the small packets that could have gone by in an idle span (`m` is its
/// truncation).
#[inline]
fn idle_packets(ptc: f64, idle: Time) -> f64 {
    ptc * (ns_f64(idle) * 1e-9)
}

/// Whether an idle span ages the average (m > 0).
#[inline]
fn ages(ptc: f64, idle: Time) -> bool {
    idle_packets(ptc, idle) >= 1.0
}

/// The shortest idle span `ages` holds for (`Time::MAX` if none up to `TIME_MAX`): the
/// products are rounded monotonically, so `ages(ptc, d)` is false below it and true from it
/// on, and comparing the span with it gives the same answer as the floating-point test.
fn aging_threshold(ptc: f64) -> Time {
    if !ages(ptc, TIME_MAX) {
        return Time::MAX;
    }
    let (mut lo, mut hi) = (0, TIME_MAX);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if ages(ptc, mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

impl Red {
    pub fn new(limit: u32, p: RedParams, rate_bps: f64, rng: Rng) -> Self {
        let ptc = rate_bps / (8.0 * p.mean_pkt_size as f64);
        Red { limit, avg: 0.0, count: 0, old: false, ptc, rng, age_from: aging_threshold(ptc), keep: 1.0 - p.q_weight, forced_th: if p.gentle { 2.0 * p.max_th } else { p.max_th }, p }
    }

    /// Drop probability for the current average (before the count correction).
    fn base_probability(&self) -> f64 {
        let p = &self.p;
        let v = if self.avg >= p.max_th {
            if p.gentle {
                // max_p at max_th rising linearly to 1 at 2·max_th.
                (1.0 - p.max_p) / p.max_th * self.avg + 2.0 * p.max_p - 1.0
            } else {
                1.0
            }
        } else {
            p.max_p * (self.avg - p.min_th) / (p.max_th - p.min_th)
        };
        v.min(1.0)
    }

    /// Probability corrected by the number of packets since the last drop.
    fn modified_probability(&self, p: f64) -> f64 {
        let c = self.count as f64;
        let m = if self.p.wait {
            if c * p < 1.0 {
                0.0
            } else if c * p < 2.0 {
                p / (2.0 - c * p)
            } else {
                1.0
            }
        } else if c * p < 1.0 {
            p / (1.0 - c * p)
        } else {
            1.0
        };
        m.min(1.0)
    }

    /// Decide for a packet arriving at `now` while `waiting` packets wait; `idle_since` is
    /// when the link went idle if it is idle now.
    pub fn admit(&mut self, now: Time, waiting: u32, ect: bool, idle_since: Option<Time>) -> Admission {
        // Age the average over an idle period as if `m` small packets had gone by.
        let w = self.p.q_weight;
        if let Some(since) = idle_since {
            let idle = now.saturating_sub(since);
            // m = trunc(ptc·idle_s) > 0 exactly for the spans from `age_from` on.
            debug_assert_eq!(idle >= self.age_from, ages(self.ptc, idle));
            if idle >= self.age_from {
                let m = idle_packets(self.ptc, idle) as i64;
                self.avg *= libm::pow(self.keep, m as f64);
            }
        }
        debug_assert_eq!(self.keep.to_bits(), (1.0 - w).to_bits());
        self.avg = self.avg * self.keep + w * waiting as f64;
        self.count += 1;

        let mut decision = Admission::Enqueue;
        if self.avg >= self.p.min_th && waiting > 1 {
            if self.avg >= self.forced_th {
                decision = Admission::ForcedDrop;
            } else if !self.old {
                self.count = 1;
                self.old = true;
            } else {
                let p1 = self.base_probability();
                let p = self.modified_probability(p1);
                if self.rng.uniform() <= p {
                    self.count = 0;
                    decision = if self.p.ecn && ect && p1 < self.p.mark_p { Admission::Mark } else { Admission::EarlyDrop };
                }
            }
        } else {
            self.old = false;
        }
        if decision != Admission::ForcedDrop && decision != Admission::EarlyDrop && waiting >= self.limit {
            decision = Admission::ForcedDrop;
        }
        if decision == Admission::ForcedDrop {
            self.count = 0;
        }
        decision
    }
}

impl Discipline for Red {
    #[inline]
    fn on_arrival(&mut self, a: &Arrival, pkt: &Wire) -> Admission {
        let idle_since = if a.busy || a.waiting > 0 { None } else { Some(a.busy_until) };
        self.admit(a.at, a.waiting, pkt.ecn() & ecn::ECT != 0, idle_since)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> RedParams {
        RedParams { min_th: 5.0, max_th: 15.0, q_weight: 0.002, max_p: 0.1, gentle: true, wait: true, ecn: false, mark_p: 1.0, mean_pkt_size: 1000 }
    }

    #[test]
    fn probability_is_linear_then_gentle() {
        let mut r = Red::new(100, params(), 10e6, Rng::new(1));
        r.avg = 10.0;
        assert!((r.base_probability() - 0.05).abs() < 1e-12);
        r.avg = 15.0;
        assert!((r.base_probability() - 0.1).abs() < 1e-12);
        r.avg = 22.5;
        assert!((r.base_probability() - 0.55).abs() < 1e-12);
        r.avg = 40.0;
        assert_eq!(r.base_probability(), 1.0);
    }

    #[test]
    fn wait_spreads_drops() {
        let r = Red::new(100, params(), 10e6, Rng::new(1));
        let mut r2 = r.clone();
        r2.count = 5;
        assert_eq!(r2.modified_probability(0.1), 0.0);
        r2.count = 15;
        assert!((r2.modified_probability(0.1) - 0.1 / 0.5).abs() < 1e-12);
        r2.count = 25;
        assert_eq!(r2.modified_probability(0.1), 1.0);
    }

    #[test]
    fn average_tracks_persistent_queue_and_ages_when_idle() {
        let mut r = Red::new(1000, params(), 10e6, Rng::new(1));
        for i in 0..5000u64 {
            r.admit(i * 1000, 3, false, None);
        }
        assert!((r.avg - 3.0).abs() < 0.01, "avg {}", r.avg);
        // One second idle at 1250 packets/s ages the average by (1-w)^1250 ≈ 0.08.
        r.admit(1_005_000_000, 0, false, Some(5_000_000));
        assert!(r.avg < 0.3, "avg {}", r.avg);
    }

    #[test]
    fn aging_threshold_matches_the_floating_point_test() {
        for rate in [1e3, 64e3, 1.5e6, 10e6, 60e6, 1e9, 1e12, 3.7e13] {
            for size in [40u32, 500, 1000, 1500] {
                let ptc = rate / (8.0 * size as f64);
                let t = aging_threshold(ptc);
                assert!(ages(ptc, t) && (t == 0 || !ages(ptc, t - 1)), "rate {rate} size {size}");
                for d in [t.saturating_sub(3), t.saturating_sub(1), t, t + 1, t + 1000] {
                    assert_eq!(d >= t, ages(ptc, d));
                }
            }
        }
        assert_eq!(aging_threshold(0.0), Time::MAX);
        assert_eq!(aging_threshold(f64::INFINITY), 1);
    }

    #[test]
    fn full_buffer_forces_drop() {
        let mut r = Red::new(10, params(), 10e6, Rng::new(1));
        assert_eq!(r.admit(0, 10, false, None), Admission::ForcedDrop);
    }
}
