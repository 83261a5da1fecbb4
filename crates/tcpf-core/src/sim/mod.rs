//! Discrete-event core: integer-nanosecond clock, a priority queue with deterministic
//! tie-breaking, and seeded random streams.
//!
//! Nothing here knows about packets or TCP; `engine` builds the simulation on top.

mod queue;
mod rng;

pub use queue::{EventQueue, Scheduled};
pub use rng::{stream_seed, Rng};

/// Simulated time in integer nanoseconds.
pub type Time = u64;

pub const NS_PER_SEC: f64 = 1e9;

/// The latest time `secs` returns: 2^62 ns, about 146 years. A run lasts at most 1e7 s
/// (`scenario::units::MAX_SECONDS`, 1e16 ns), so "now + a few saturated spans" cannot overflow
/// a `Time` (2^64 ns): a span this long is simply never reached.
pub const TIME_MAX: Time = 1 << 62;

/// Seconds (f64, non-negative) to nanoseconds, rounded to the nearest nanosecond, saturating
/// at `TIME_MAX` (e.g. a heavy-tailed Pareto draw or a rate sender's gap at a tiny rate) and at
/// 0 for negative values. NaN is a bug in the caller (debug builds stop on it).
#[inline]
pub fn secs(s: f64) -> Time {
    debug_assert!(!s.is_nan(), "secs(NaN)");
    // Adding one half and truncating rounds like `f64::round` for non-negative values, without
    // a libm call on targets that lack a rounding instruction. `min` keeps the result at most
    // TIME_MAX (exactly representable); the cast saturates negatives to 0.
    (s * NS_PER_SEC + 0.5).min(TIME_MAX as f64) as Time
}

/// A clock reading or measured span (at most `TIME_MAX` < 2^63: every time of a run, not a
/// saturated deadline past it) as f64 nanoseconds, converted as a signed integer: the same
/// value as `t as f64`, in one instruction where the unsigned conversion takes several.
#[inline(always)]
pub fn ns_f64(t: Time) -> f64 {
    debug_assert!(t <= TIME_MAX);
    (t as i64) as f64
}

/// `to_secs` for a clock reading or measured span (see `ns_f64`): the same value, faster; for
/// the per-ACK paths.
#[inline(always)]
pub fn clock_secs(t: Time) -> f64 {
    ns_f64(t) / NS_PER_SEC
}

/// Nanoseconds to seconds.
#[inline]
pub fn to_secs(t: Time) -> f64 {
    t as f64 / NS_PER_SEC
}
