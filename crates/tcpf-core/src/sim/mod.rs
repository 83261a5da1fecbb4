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

/// Seconds (f64, non-negative) to nanoseconds, rounded to the nearest nanosecond.
#[inline]
pub fn secs(s: f64) -> Time {
    // Adding one half and truncating rounds like `f64::round` for non-negative values, without
    // a libm call on targets that lack a rounding instruction.
    (s * NS_PER_SEC + 0.5) as Time
}

/// Nanoseconds to seconds.
#[inline]
pub fn to_secs(t: Time) -> f64 {
    t as f64 / NS_PER_SEC
}
