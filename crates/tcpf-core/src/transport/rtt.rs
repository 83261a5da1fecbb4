//! RTT estimation and the retransmission timeout (RFC 6298), measured with a clock of
//! configurable granularity as BSD and ns-2 do: samples are counted in ticks, SRTT and RTTVAR
//! are kept in fixed point (1/8 and 1/4 tick), RTO = SRTT + 4·RTTVAR ticks, at least the
//! minimum RTO, doubled per backoff (up to a cap), at most the maximum RTO.

use crate::sim::{secs, Time};

#[derive(Clone, Debug)]
pub struct RttEstimator {
    tick: f64,
    min_rto: f64,
    max_rto: f64,
    max_backoff: u32,
    /// SRTT in 1/8 ticks (0 = no sample yet).
    srtt8: i64,
    /// RTTVAR in 1/4 ticks.
    rttvar4: i64,
    /// SRTT + 4·RTTVAR in seconds (before clamping and backoff).
    rto_base: f64,
    backoff: u32,
    /// Phase of the coarse clock: it ticks at phase + k·tick.
    phase: f64,
    /// The current timeout (`rto()`), seconds, and in nanoseconds: kept up to date by `sample`
    /// and `back_off`, the only changes to what it depends on, since the sender reads it on
    /// every ACK.
    rto: f64,
    rto_ns: Time,
}

impl RttEstimator {
    pub fn new(tick: f64, min_rto: f64, max_rto: f64, initial_rto: f64, max_backoff: u32, phase: f64) -> Self {
        let mut e = RttEstimator { tick, min_rto, max_rto, max_backoff, srtt8: 0, rttvar4: 0, rto_base: initial_rto, backoff: 1, phase, rto: 0.0, rto_ns: 0 };
        e.update_rto();
        e
    }

    /// Compute the timeout from the base, the clamps and the backoff.
    fn update_rto(&mut self) {
        let t = self.rto_base.max(self.min_rto) * self.backoff as f64;
        self.rto = t.min(self.max_rto).max(2.0 * self.tick);
        self.rto_ns = secs(self.rto);
    }

    /// Take a sample of `rtt` seconds for a segment sent at `sent_at` seconds.
    pub fn sample(&mut self, rtt: f64, sent_at: f64) {
        // Ticks elapsed on a clock that ticks every `tick` seconds since time zero.
        let offset = (sent_at + self.phase) % self.tick;
        let ticks = (((rtt + offset) / self.tick) as i64).max(1);
        if self.srtt8 != 0 {
            let mut delta = ticks - (self.srtt8 >> 3);
            self.srtt8 += delta;
            if self.srtt8 <= 0 {
                self.srtt8 = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta -= self.rttvar4 >> 2;
            self.rttvar4 += delta;
            if self.rttvar4 <= 0 {
                self.rttvar4 = 1;
            }
        } else {
            self.srtt8 = ticks << 3;
            self.rttvar4 = ticks << 1;
        }
        // (SRTT + 4·RTTVAR) in ticks, in the same fixed point as SRTT.
        let rto_ticks = ((self.rttvar4 << 3) + self.srtt8) >> 3;
        self.rto_base = rto_ticks as f64 * self.tick;
        self.backoff = 1;
        self.update_rto();
    }

    /// Smoothed RTT in seconds (0 before the first sample).
    pub fn srtt(&self) -> f64 {
        (self.srtt8 as f64 / 8.0) * self.tick
    }

    /// Current timeout in seconds.
    #[inline]
    pub fn rto(&self) -> f64 {
        self.rto
    }

    /// Current timeout in nanoseconds (`secs(rto())`).
    #[inline]
    pub fn rto_ns(&self) -> Time {
        self.rto_ns
    }

    /// Double the timeout after it fired: while the multiplier is below `max_backoff`, and
    /// past it while the backed-off timeout is still below the maximum RTO (RFC 6298 §5.5 caps
    /// the timeout, not the multiplier; ns-2 2.35's `rtt_backoff` with `rfc2988_`). Past 8
    /// backoffs the SRTT is presumed stale, as in BSD and ns-2: it is folded into RTTVAR and
    /// cleared, so the next sample starts the estimator afresh (SRTT = the sample, RTTVAR half
    /// of it); the timeout in force is unchanged until then.
    pub fn back_off(&mut self) {
        if self.backoff < self.max_backoff || self.rto() < self.max_rto {
            self.backoff = self.backoff.saturating_mul(2);
        }
        if self.backoff > 8 {
            self.rttvar4 += self.srtt8 >> 3;
            self.srtt8 = 0;
        }
        self.update_rto();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_gives_three_rtt_and_min_rto_applies() {
        let mut e = RttEstimator::new(0.01, 0.2, 60.0, 3.0, 64, 0.0);
        assert_eq!(e.rto(), 3.0);
        e.sample(0.1, 0.0);
        // srtt 10 ticks, rttvar 5 ticks: 10 + 4·5 = 30 ticks.
        assert!((e.rto() - 0.3).abs() < 1e-9, "{}", e.rto());
        let mut f = RttEstimator::new(0.01, 0.5, 60.0, 3.0, 64, 0.0);
        f.sample(0.1, 0.0);
        assert_eq!(f.rto(), 0.5);
    }

    #[test]
    fn backoff_goes_past_max_backoff_until_the_rto_cap_and_clears_a_stale_srtt() {
        // min RTO 0.2 s, max 60 s: 64x is 12.8 s, so doubling goes on to 256x (51.2 s) and once
        // more (512x, capped at 60 s); then it stops (ns-2 2.35's rtt_backoff with rfc2988_).
        let mut e = RttEstimator::new(0.01, 0.2, 60.0, 3.0, 64, 0.0);
        e.sample(0.1, 0.0); // srtt 10 ticks, rttvar 5 ticks: RTO 0.3 s
        let mut seen = vec![];
        for _ in 0..12 {
            e.back_off();
            seen.push((e.backoff, e.rto()));
        }
        assert_eq!(seen[5], (64, 0.3 * 64.0));
        assert_eq!(seen[7].0, 256);
        assert!((seen[7].1 - 60.0).abs() < 1e-9 && seen[6].1 < 60.0, "{seen:?}");
        assert!(seen[8..].iter().all(|&(b, r)| b == 256 && (r - 60.0).abs() < 1e-9), "{seen:?}");
        // SRTT was cleared at the 4th backoff (16x): its 10 ticks went into RTTVAR (4x5 + 10 = 30
        // quarter ticks), and the next sample initialises the estimator afresh.
        assert_eq!(e.srtt(), 0.0);
        assert_eq!(e.rttvar4, 20 + 10);
        e.sample(0.2, 100.0);
        assert_eq!(e.backoff, 1);
        assert!((e.srtt() - 0.2).abs() < 1e-9 && (e.rto() - 0.6).abs() < 1e-9, "{}", e.rto());
        // Within 8 backoffs SRTT stays.
        let mut f = RttEstimator::new(0.01, 0.2, 60.0, 3.0, 64, 0.0);
        f.sample(0.1, 0.0);
        for _ in 0..3 {
            f.back_off();
        }
        assert_eq!((f.backoff, f.srtt()), (8, 0.1));
        // A smaller max_backoff still lets the timeout grow to the cap.
        let mut g = RttEstimator::new(0.01, 0.2, 60.0, 3.0, 4, 0.0);
        g.sample(0.1, 0.0);
        for _ in 0..20 {
            g.back_off();
        }
        assert!((g.rto() - 60.0).abs() < 1e-9);
    }

    #[test]
    fn converges_to_srtt_for_constant_samples() {
        let mut e = RttEstimator::new(0.01, 0.0, 60.0, 3.0, 64, 0.0);
        for i in 0..200 {
            e.sample(0.1, i as f64 * 0.1);
        }
        assert!((e.srtt() - 0.1).abs() < 0.011, "srtt {}", e.srtt());
        // With integer arithmetic RTTVAR stops decaying at 3/4 tick, so RTO settles at
        // SRTT + 3 ticks.
        assert!((e.rto() - 0.13).abs() < 1e-9, "rto {}", e.rto());
    }

    #[test]
    fn backoff_doubles_to_cap_and_sample_resets() {
        let mut e = RttEstimator::new(0.01, 0.2, 60.0, 1.0, 64, 0.0);
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.backoff, 64);
        assert_eq!(e.rto(), 60.0);
        e.sample(0.1, 0.0);
        assert_eq!(e.backoff, 1);
    }
}
