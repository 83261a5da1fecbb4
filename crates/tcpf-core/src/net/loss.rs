//! Artificial loss models applied to packets entering a link.
//!
//! Packet-driven models (Bernoulli, every N packets, Gilbert–Elliott) decide per packet.
//! Time-driven models (every T seconds, general-exponential inter-loss times) schedule loss
//! instants; the first packet to reach the link at or after an instant is dropped (tsao2007's
//! "an artificial link drops one packet every T s"). A schedule switches models at given
//! times (tsao2007 S3). A model can be restricted to some flows.

use crate::sim::{secs, Rng, Time};
use crate::error::show_num;
use serde::Serialize;

/// Declarative form of a loss model (what a scenario says).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LossSpec {
    /// Each packet is dropped independently with probability `p`.
    Bernoulli { p: f64 },
    /// Every `packets`-th packet, or one packet every `interval` seconds.
    Periodic { packets: Option<u64>, interval: Option<f64> },
    /// One packet at instants whose gaps have the given mean (s) and coefficient of variation:
    /// 0 = periodic, (0, 1] = shifted exponential, 1 = exponential, > 1 = two-phase
    /// hyperexponential with balanced means.
    GeneralExponential { mean: f64, cv: f64 },
    /// Two-state Markov chain evaluated per packet: Good → Bad with `p_gb`, Bad → Good with
    /// `p_bg`; loss probability `loss_good` / `loss_bad` in each state.
    GilbertElliott { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64 },
    /// Piecewise in time: each phase's model applies from its start until the next phase.
    Schedule { phases: Vec<Phase> },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Phase {
    pub from: f64,
    pub loss: LossSpec,
}

fn prob(name: &str, p: f64) -> Result<(), String> {
    if p.is_finite() && (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(format!("{name}: must be a probability in [0, 1]; got {}", show_num(p)))
    }
}

impl LossSpec {
    pub fn validate(&self) -> Result<(), String> {
        match self {
            LossSpec::Bernoulli { p } => prob("p", *p),
            LossSpec::Periodic { packets, interval } => match (packets, interval) {
                (Some(n), None) if *n >= 1 => Ok(()),
                (Some(n), None) => Err(format!("packets: must be at least 1; got {n}")),
                (None, Some(t)) if t.is_finite() && *t > 0.0 => Ok(()),
                (None, Some(t)) => Err(format!("interval: must be a positive time; got {}", show_num(*t))),
                _ => Err("give exactly one of packets (every N packets) or interval (every T seconds)".into()),
            },
            LossSpec::GeneralExponential { mean, cv } => {
                if !(mean.is_finite() && *mean > 0.0) {
                    return Err(format!("mean: must be a positive time; got {}", show_num(*mean)));
                }
                if !(cv.is_finite() && *cv >= 0.0 && *cv <= 10.0) {
                    return Err(format!("cv: must be in [0, 10]; got {}", show_num(*cv)));
                }
                Ok(())
            }
            LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                prob("p_gb", *p_gb)?;
                prob("p_bg", *p_bg)?;
                prob("loss_good", *loss_good)?;
                prob("loss_bad", *loss_bad)
            }
            LossSpec::Schedule { phases } => {
                if phases.is_empty() {
                    return Err("phases: needs at least one phase".into());
                }
                let mut last = f64::NEG_INFINITY;
                for (i, ph) in phases.iter().enumerate() {
                    if !(ph.from.is_finite() && ph.from >= 0.0 && ph.from > last) {
                        return Err(format!("phases[{i}].from: must be >= 0 and after the previous phase; got {}", show_num(ph.from)));
                    }
                    if matches!(ph.loss, LossSpec::Schedule { .. }) {
                        return Err(format!("phases[{i}]: a schedule cannot contain a schedule"));
                    }
                    ph.loss.validate().map_err(|m| format!("phases[{i}].loss.{m}"))?;
                    last = ph.from;
                }
                Ok(())
            }
        }
    }
}

/// Draws gaps (ns) between loss instants.
#[derive(Clone, Debug)]
enum Gaps {
    Constant(Time),
    GeneralExponential { mean: f64, cv: f64 },
}

impl Gaps {
    fn draw(&self, rng: &mut Rng) -> Time {
        match *self {
            Gaps::Constant(t) => t,
            Gaps::GeneralExponential { mean, cv } => {
                let s = if cv <= 1.0 {
                    mean * (1.0 - cv) + if cv > 0.0 { rng.exponential(mean * cv) } else { 0.0 }
                } else {
                    let c2 = cv * cv;
                    let p1 = 0.5 * (1.0 + ((c2 - 1.0) / (c2 + 1.0)).sqrt());
                    if rng.uniform() < p1 {
                        rng.exponential(mean / (2.0 * p1))
                    } else {
                        rng.exponential(mean / (2.0 * (1.0 - p1)))
                    }
                };
                secs(s).max(1)
            }
        }
    }
}

#[derive(Clone, Debug)]
enum State {
    Bernoulli(f64),
    EveryPackets { n: u64, seen: u64 },
    Timed { gaps: Gaps, next: Time },
    Gilbert { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64, bad: bool },
    Schedule { phases: Vec<(Time, State)>, current: usize },
}

impl State {
    fn new(spec: &LossSpec, start: Time, rng: &mut Rng) -> State {
        match spec {
            LossSpec::Bernoulli { p } => State::Bernoulli(*p),
            LossSpec::Periodic { packets: Some(n), .. } => State::EveryPackets { n: *n, seen: 0 },
            LossSpec::Periodic { interval, .. } => {
                let t = secs(interval.unwrap_or(1.0)).max(1);
                State::Timed { gaps: Gaps::Constant(t), next: start + t }
            }
            LossSpec::GeneralExponential { mean, cv } => {
                let gaps = Gaps::GeneralExponential { mean: *mean, cv: *cv };
                let next = start + gaps.draw(rng);
                State::Timed { gaps, next }
            }
            LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                State::Gilbert { p_gb: *p_gb, p_bg: *p_bg, loss_good: *loss_good, loss_bad: *loss_bad, bad: false }
            }
            LossSpec::Schedule { phases } => {
                let phases = phases.iter().map(|ph| (secs(ph.from), State::new(&ph.loss, secs(ph.from), rng))).collect();
                State::Schedule { phases, current: 0 }
            }
        }
    }

    fn drops(&mut self, at: Time, rng: &mut Rng) -> bool {
        match self {
            State::Bernoulli(p) => *p > 0.0 && rng.bernoulli(*p),
            State::EveryPackets { n, seen } => {
                *seen += 1;
                if *seen >= *n {
                    *seen = 0;
                    true
                } else {
                    false
                }
            }
            State::Timed { gaps, next } => {
                if at < *next {
                    return false;
                }
                // One drop per instant; instants that fell in an idle period are skipped.
                while *next <= at {
                    *next += gaps.draw(rng);
                }
                true
            }
            State::Gilbert { p_gb, p_bg, loss_good, loss_bad, bad } => {
                let flip = if *bad { *p_bg } else { *p_gb };
                if rng.bernoulli(flip) {
                    *bad = !*bad;
                }
                let p = if *bad { *loss_bad } else { *loss_good };
                p > 0.0 && rng.bernoulli(p)
            }
            State::Schedule { phases, current } => {
                while *current + 1 < phases.len() && at >= phases[*current + 1].0 {
                    *current += 1;
                }
                let (from, st) = &mut phases[*current];
                if at < *from {
                    return false;
                }
                st.drops(at, rng)
            }
        }
    }
}

/// A loss model as attached to a link: the model, the flows it applies to (None: all), and
/// whether ACKs are subject to it too.
#[derive(Clone, Debug, PartialEq)]
pub struct LossAttach {
    pub spec: LossSpec,
    pub flows: Option<Vec<bool>>,
    pub include_acks: bool,
}

/// A loss model with its own random stream.
#[derive(Clone, Debug)]
pub struct LossModel {
    state: State,
    rng: Rng,
    /// Which packets it applies to: data only (the default) or ACKs too.
    pub data_only: bool,
    /// If set, only packets of these flows (indexed by flow id) are subject to it.
    pub flows: Option<Vec<bool>>,
}

impl LossModel {
    pub fn new(spec: LossSpec, mut rng: Rng) -> Self {
        let state = State::new(&spec, 0, &mut rng);
        LossModel { state, rng, data_only: true, flows: None }
    }

    /// Decide whether a packet of `flow` entering the link at `at` is lost.
    #[inline]
    pub fn drops(&mut self, at: Time, flow: u32) -> bool {
        if let Some(f) = &self.flows {
            if !f.get(flow as usize).copied().unwrap_or(false) {
                return false;
            }
        }
        self.state.drops(at, &mut self.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bernoulli_rate() {
        let mut m = LossModel::new(LossSpec::Bernoulli { p: 0.05 }, Rng::new(3));
        let n = 100_000;
        let lost = (0..n).filter(|_| m.drops(0, 0)).count();
        let rate = lost as f64 / n as f64;
        assert!((rate - 0.05).abs() < 0.004, "rate {rate}");
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(LossSpec::Bernoulli { p: 1.5 }.validate().is_err());
        assert!(LossSpec::Bernoulli { p: f64::NAN }.validate().is_err());
        assert!(LossSpec::Bernoulli { p: 0.0 }.validate().is_ok());
        assert!(LossSpec::Periodic { packets: None, interval: None }.validate().is_err());
        assert!(LossSpec::GeneralExponential { mean: 5.0, cv: -1.0 }.validate().is_err());
    }

    #[test]
    fn every_n_packets() {
        let mut m = LossModel::new(LossSpec::Periodic { packets: Some(4), interval: None }, Rng::new(1));
        let pattern: Vec<bool> = (0..8).map(|_| m.drops(0, 0)).collect();
        assert_eq!(pattern, vec![false, false, false, true, false, false, false, true]);
    }

    /// Loss instants of a time-driven model seen by a packet every millisecond.
    fn instants(spec: LossSpec, n: usize, seed: u64) -> Vec<f64> {
        let mut m = LossModel::new(spec, Rng::new(seed));
        let mut out = vec![];
        let mut t: Time = 0;
        while out.len() < n {
            if m.drops(t, 0) {
                out.push(t as f64 * 1e-9);
            }
            t += 1_000_000;
        }
        out
    }

    #[test]
    fn general_exponential_mean_and_cv() {
        // Issue #6 acceptance: over 10 000 gaps, mean within 3% and CV within 5%.
        for cv in [0.0, 0.25, 0.5, 1.0, 2.0] {
            let t = instants(LossSpec::GeneralExponential { mean: 5.0, cv }, 10_001, 11);
            let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
            let n = gaps.len() as f64;
            let mean = gaps.iter().sum::<f64>() / n;
            let sd = (gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / n).sqrt();
            let got_cv = sd / mean;
            println!("cv {cv}: mean {mean:.4} s, cv {got_cv:.4}");
            assert!((mean - 5.0).abs() / 5.0 < 0.03, "cv {cv}: mean {mean}");
            if cv == 0.0 {
                assert!(got_cv < 0.01, "cv {got_cv}");
            } else {
                assert!((got_cv - cv).abs() / cv < 0.05, "cv {cv}: got {got_cv}");
            }
        }
    }

    #[test]
    fn schedule_switches_rate() {
        // tsao2007 S3: one drop per second, one per 5 s during 100–800 s.
        let spec = LossSpec::Schedule {
            phases: vec![
                Phase { from: 0.0, loss: LossSpec::Periodic { packets: None, interval: Some(1.0) } },
                Phase { from: 100.0, loss: LossSpec::Periodic { packets: None, interval: Some(5.0) } },
                Phase { from: 800.0, loss: LossSpec::Periodic { packets: None, interval: Some(1.0) } },
            ],
        };
        spec.validate().unwrap();
        let t = instants(spec, 400, 1);
        let in_phase = |a: f64, b: f64| t.iter().filter(|&&x| x >= a && x < b).count();
        // Each phase's first loss comes one interval after the phase starts.
        assert_eq!(in_phase(0.0, 100.0), 99);
        assert_eq!(in_phase(100.0, 800.0), 139);
        assert_eq!(in_phase(800.0, 900.0), 99);
        assert!(t.contains(&105.0) && t.contains(&795.0) && t.contains(&801.0));
    }

    #[test]
    fn gilbert_elliott_long_run_rate() {
        let spec = LossSpec::GilbertElliott { p_gb: 0.01, p_bg: 0.1, loss_good: 0.0, loss_bad: 0.5 };
        let mut m = LossModel::new(spec, Rng::new(5));
        let n = 400_000;
        let lost = (0..n).filter(|_| m.drops(0, 0)).count() as f64 / n as f64;
        // stationary P(bad) = 0.01 / 0.11
        let expect = 0.5 * 0.01 / 0.11;
        assert!((lost - expect).abs() / expect < 0.1, "{lost} vs {expect}");
    }

    #[test]
    fn flow_filter() {
        let mut m = LossModel::new(LossSpec::Bernoulli { p: 1.0 }, Rng::new(1));
        m.flows = Some(vec![false, true]);
        assert!(!m.drops(0, 0));
        assert!(m.drops(0, 1));
        assert!(!m.drops(0, 7));
    }
}
