//! Artificial loss models applied to packets entering a link.

use crate::sim::{Rng, Time};
use serde::{Deserialize, Serialize};

/// Declarative form of a loss model (what a scenario says).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LossSpec {
    /// Each packet is dropped independently with probability `p`.
    Bernoulli { p: f64 },
}

impl LossSpec {
    pub fn validate(&self) -> Result<(), String> {
        match self {
            LossSpec::Bernoulli { p } => {
                if !(p.is_finite() && (0.0..=1.0).contains(p)) {
                    return Err(format!("p: must be a probability in [0, 1]; got {p}"));
                }
            }
        }
        Ok(())
    }
}

/// A loss model with its own random stream.
#[derive(Clone, Debug)]
pub struct LossModel {
    spec: LossSpec,
    rng: Rng,
    /// Which packets it applies to: data only (the default) or every packet.
    pub data_only: bool,
}

impl LossModel {
    pub fn new(spec: LossSpec, rng: Rng) -> Self {
        LossModel { spec, rng, data_only: true }
    }

    /// Decide whether the packet entering the link at `now` is lost.
    #[inline]
    pub fn drops(&mut self, _now: Time) -> bool {
        match self.spec {
            LossSpec::Bernoulli { p } => p > 0.0 && self.rng.bernoulli(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bernoulli_rate() {
        let mut m = LossModel::new(LossSpec::Bernoulli { p: 0.05 }, Rng::new(3));
        let n = 100_000;
        let lost = (0..n).filter(|_| m.drops(0)).count();
        let rate = lost as f64 / n as f64;
        assert!((rate - 0.05).abs() < 0.004, "rate {rate}");
    }

    #[test]
    fn rejects_bad_probability() {
        assert!(LossSpec::Bernoulli { p: 1.5 }.validate().is_err());
        assert!(LossSpec::Bernoulli { p: f64::NAN }.validate().is_err());
        assert!(LossSpec::Bernoulli { p: 0.0 }.validate().is_ok());
    }
}
