//! The Chiu–Jain synchronous binary-feedback model (jin2001 §4, sastry2005 §III), driving any
//! registered controller through the `cc::Controller` trait.
//!
//! Time advances in rounds of one RTT. At the start of round r the windows are w_i(r); the
//! network feeds back one bit to every flow at once: 1 if Σ w_i(r) > W (the efficiency line is
//! crossed), else 0. On a 1 every controller gets one loss event (`on_loss_event` with its
//! current window); on a 0 each flow gets one ACK per packet of its window (`on_ack`, plus
//! `on_rtt_sample` with a constant RTT), so per-RTT increase rules apply exactly as they do
//! in the packet simulator. Fractional windows carry their fraction of an ACK to the next
//! round. There are no timeouts and no slow start: each controller is first *primed* into
//! congestion avoidance so that it starts a congestion epoch at its initial window W_i —
//! built with a larger window X, taken out of slow start by one loss event and then given a
//! second loss event at its window, with X chosen (by bisection) so that the window after the
//! second decrease is W_i. History-based controls (SIMD) so start with w0 = W_i and
//! w_max = the window before that decrease, which is what jin2001's Appendix C assumes.
//!
//! Measured quantities (jin2001 Table 2's definitions, for n flows):
//! - T1: rounds until the first 1 bit (the trajectory reaches the efficiency line);
//!   Δ = max_i w_i − min_i w_i in that round.
//! - T2: rounds after T1 until max − min stays below ε for the rest of the run, and the
//!   number of congestion epochs (1 bits) in between.
//! - Jain's index F = (Σw)²/(n·Σw²) per round, and the first round after which F stays above
//!   the target (0.99 by default).

use crate::cc::{self, Ack, Controller, LossEvent};
use crate::registry;
use serde_json::{Map, Value};

use super::ModelError;

/// One flow: an algorithm name from the registry (`crate::registry`), its parameters, and its initial window.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub algorithm: String,
    pub params: Map<String, Value>,
    pub initial: f64,
}

#[derive(Clone, Debug)]
pub struct ChiuJainConfig {
    pub flows: Vec<FlowSpec>,
    /// W, the capacity in packets (the efficiency line Σ w = W).
    pub capacity: f64,
    pub rounds: usize,
    /// ε of T2, packets.
    pub eps: f64,
    /// The constant RTT reported with each ACK, seconds.
    pub rtt: f64,
    /// Jain-index target (jin2001/acceptance: 0.99).
    pub jain_target: f64,
}

#[derive(Clone, Debug)]
pub struct ChiuJainResult {
    /// Canonical parameters of each flow's controller.
    pub params: Vec<Value>,
    /// windows[r][i]: window of flow i at the start of round r (rounds + 1 rows).
    pub windows: Vec<Vec<f64>>,
    /// feedback[r]: the bit sent at the end of round r.
    pub feedback: Vec<bool>,
    /// Jain's index at the start of each round.
    pub jain: Vec<f64>,
    pub t1: Option<usize>,
    pub delta_t1: Option<f64>,
    pub t2: Option<usize>,
    pub t2_epochs: Option<usize>,
    pub rounds_to_jain: Option<usize>,
    pub loss_events: usize,
    /// Mean Σw/W over the rounds from T1 on (NaN if the line is never reached).
    pub efficiency: f64,
}

/// Jain's fairness index (Σx)²/(n·Σx²).
pub fn jain_index(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (x.len() as f64 * s2)
    }
}

fn loss(now: f64, w: f64) -> LossEvent {
    LossEvent { now, window: w, in_flight: w.max(0.0).round() as u32, ecn: false }
}

/// Build a controller for `params` that starts a congestion epoch at window `target`.
fn primed(params: &cc::Params, target: f64, cap: f64) -> Result<Box<dyn Controller>, String> {
    let after = |x: f64| -> Result<Box<dyn Controller>, String> {
        let mut c = registry::build_window(params, 2.0 * x, cap).map_err(|e| e.to_string())?;
        let w = c.window();
        c.on_loss_event(&loss(0.0, w));
        let w = c.window();
        c.on_loss_event(&loss(0.0, w));
        Ok(c)
    };
    let (mut lo, mut hi) = (target, 2.0 * target + 1.0);
    let mut tries = 0;
    while after(hi)?.window() < target {
        lo = hi;
        hi *= 2.0;
        tries += 1;
        if tries > 60 {
            return Err(format!("no window decreases to {target}"));
        }
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if after(mid)?.window() < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let c = after(hi)?;
    if (c.window() - target).abs() > 1e-6 * target.max(1.0) {
        return Err(format!("a decrease cannot leave this controller at {target} packets (it reaches {:.6})", c.window()));
    }
    Ok(c)
}

/// Validate every flow's algorithm and parameters (`registry::validate_window`).
pub fn validate_flows(flows: &[FlowSpec]) -> Result<Vec<cc::Params>, ModelError> {
    flows
        .iter()
        .map(|f| {
            registry::validate_window(&f.algorithm, &registry::coerce_untyped(&f.algorithm, &f.params)).map_err(|e| {
                if e.field.is_empty() {
                    ModelError::new("alg", e.message)
                } else {
                    ModelError::new("param", e.to_string())
                }
            })
        })
        .collect()
}

pub fn run(cfg: &ChiuJainConfig) -> Result<ChiuJainResult, ModelError> {
    let params = validate_flows(&cfg.flows)?;
    let cap = f64::INFINITY;
    let mut ctrls: Vec<Box<dyn Controller>> = Vec::with_capacity(cfg.flows.len());
    for (f, p) in cfg.flows.iter().zip(&params) {
        ctrls.push(primed(p, f.initial, cap).map_err(|m| ModelError::new("init", m))?);
    }
    let n = ctrls.len();
    let mut credit = vec![0.0; n];
    let mut windows = Vec::with_capacity(cfg.rounds + 1);
    let mut feedback = Vec::with_capacity(cfg.rounds);
    let mut jain = Vec::with_capacity(cfg.rounds + 1);
    let mut loss_events = 0;
    for r in 0..=cfg.rounds {
        let w: Vec<f64> = ctrls.iter().map(|c| c.window()).collect();
        jain.push(jain_index(&w));
        windows.push(w.clone());
        if r == cfg.rounds {
            break;
        }
        let now = r as f64 * cfg.rtt;
        let congested = w.iter().sum::<f64>() > cfg.capacity;
        feedback.push(congested);
        if congested {
            loss_events += 1;
            for (c, wi) in ctrls.iter_mut().zip(&w) {
                c.on_loss_event(&loss(now, *wi));
            }
        } else {
            for i in 0..n {
                credit[i] += w[i];
                let acks = credit[i].floor().max(0.0) as usize;
                credit[i] -= acks as f64;
                for a in 0..acks {
                    let t = now + cfg.rtt * (a as f64 + 1.0) / (acks as f64 + 1.0);
                    ctrls[i].on_rtt_sample(t, cfg.rtt);
                    ctrls[i].on_ack(&Ack { now: t, acked: 1, rtt: Some(cfg.rtt), min_rtt: cfg.rtt, in_flight: (acks - a - 1) as u32 });
                }
            }
        }
        for c in &ctrls {
            if let Some(e) = c.error() {
                return Err(ModelError::new("alg", format!("the controller stopped in round {r}: {e}")));
            }
        }
    }
    let spread = |w: &Vec<f64>| {
        let mx = w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mn = w.iter().cloned().fold(f64::INFINITY, f64::min);
        mx - mn
    };
    let t1 = feedback.iter().position(|&b| b);
    let delta_t1 = t1.map(|r| spread(&windows[r]));
    // first round from which the spread stays below ε (after T1)
    let settled_from = |ok: &dyn Fn(usize) -> bool| -> Option<usize> {
        let mut first = None;
        for r in (0..windows.len()).rev() {
            if ok(r) {
                first = Some(r);
            } else {
                break;
            }
        }
        first
    };
    let t2_abs = settled_from(&|r| spread(&windows[r]) < cfg.eps);
    let (t2, t2_epochs) = match (t1, t2_abs) {
        (Some(a), Some(b)) => {
            let b = b.max(a);
            (Some(b - a), Some(feedback[a..b.min(feedback.len())].iter().filter(|&&x| x).count()))
        }
        _ => (None, None),
    };
    let rounds_to_jain = settled_from(&|r| jain[r] > cfg.jain_target);
    let efficiency = match t1 {
        Some(a) => {
            let s: f64 = windows[a..].iter().map(|w| w.iter().sum::<f64>() / cfg.capacity).sum();
            s / (windows.len() - a) as f64
        }
        None => f64::NAN,
    };
    Ok(ChiuJainResult {
        params: params.iter().map(|p| p.to_json()).collect(),
        windows,
        feedback,
        jain,
        t1,
        delta_t1,
        t2,
        t2_epochs,
        rounds_to_jain,
        loss_events,
        efficiency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flows(alg: &str, params: Value, init: &[f64]) -> Vec<FlowSpec> {
        init.iter().map(|&w| FlowSpec { algorithm: alg.into(), params: params.as_object().unwrap().clone(), initial: w }).collect()
    }

    #[test]
    fn jain_index_bounds() {
        assert!((jain_index(&[5.0, 5.0, 5.0]) - 1.0).abs() < 1e-15);
        assert!((jain_index(&[1.0, 0.0]) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn tcp_matches_table2_t1_and_delta() {
        let cfg = ChiuJainConfig { flows: flows("tcp", json!({}), &[10.0, 30.0]), capacity: 110.0, rounds: 400, eps: 10.0, rtt: 0.1, jain_target: 0.99 };
        let r = run(&cfg).unwrap();
        assert!((r.windows[0][0] - 10.0).abs() < 1e-6 && (r.windows[0][1] - 30.0).abs() < 1e-6);
        // Table 2: T1 = (W − W1 − W2)/2 = 35 RTTs (+1 for the round that crosses), Δ = 20
        let t1 = r.t1.unwrap();
        assert!((35..=37).contains(&t1), "{t1}");
        assert!((r.delta_t1.unwrap() - 20.0).abs() < 0.5);
        assert!(*r.jain.last().unwrap() > 0.99);
    }
}
