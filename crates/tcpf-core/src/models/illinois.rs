//! liu2008: TCP-Illinois's α(d_a), β(d_a) curves, the lossy-link bound, and TCP Vegas's
//! equilibrium under RTT noise.
//!
//! - eqs. 2–3: `α = α_max` if d_a ≤ d1 else `κ1/(κ2 + d_a)`; `β = β_min` if d_a ≤ d2,
//!   `κ3 + κ4·d_a` if d2 < d_a < d3, `β_max` otherwise; d_i = η_i·d_m.
//! - eq. 4: κ1..κ4 from continuity at d1, d2, d3 and α(d_m) = α_min.
//! - eq. 31: on a lossy link, W_Illinois/W_Reno ≤ √(α_max/(2β_min)).
//! - eqs. 32–33: Vegas's equilibrium window `W = γ(d_a + T_p + n)/(d_a + n)`.
//!
//! β here is the fraction removed (liu2008's convention). The curves and κ's are
//! `cc::illinois::IllinoisParams::{kappas, alpha, beta}` (shared with the controller).

/// TCP-Illinois's parameters and the α(d_a), β(d_a) curves (eqs. 2–4) live with the controller
/// (`cc::illinois`); the model uses them as they are, so Fig. 1 shows what the controller runs.
pub use crate::cc::illinois::IllinoisParams;

/// eq. 31: the lossy-link bound on W_Illinois / W_Reno, `√(α_max/(2β_min))`.
pub fn lossy_bound(alpha_max: f64, beta_min: f64) -> f64 {
    (alpha_max / (2.0 * beta_min)).sqrt()
}

/// One Vegas user in eqs. 32–33.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasUser {
    /// γ (Vegas's α = β = γ in liu2008), packets.
    pub gamma: f64,
    /// Propagation RTT T_p, seconds.
    pub tp: f64,
    /// Mean of the RTT noise n̄ = σ (noise uniform on [0, 2σ]), seconds.
    pub noise: f64,
}

/// Vegas's equilibrium (eqs. 32–33) on a link of `capacity` packets/s.
#[derive(Clone, Debug, PartialEq)]
pub struct VegasEquilibrium {
    /// Average queueing delay d_a, seconds (0 when the link is under-utilised).
    pub queueing_delay: f64,
    /// Per-user equilibrium windows W_i, packets (eq. 33 with time averages).
    pub windows: Vec<f64>,
    /// Per-user throughputs x_i = W_i/(T_p + d_a + n̄_i) = γ_i/(d_a + n̄_i), packets/s.
    pub rates: Vec<f64>,
    /// Σ x_i / capacity.
    pub utilization: f64,
    /// The noise-free equilibrium queueing delay d_a* (eq. 32): Σ γ_i / d* = C.
    pub noise_free_delay: f64,
}

/// Solve eqs. 32–33. The noise is an extra delay (liu2008 §6.4: "an extra delay due to reasons
/// other than propagation and queueing") that also lengthens the real RTT, so user i sends at
/// `W_i/(T_p + d_a + n̄_i) = γ_i/(d_a + n̄_i)`; d_a ≥ 0 is the common queueing delay that makes
/// the rates fill the link, or 0 when even d_a = 0 leaves it under-utilised (the noise
/// threshold). BaseRTT stays T_p because the noise can be zero.
pub fn vegas_equilibrium(users: &[VegasUser], capacity: f64) -> VegasEquilibrium {
    let total = |d: f64| users.iter().map(|u| u.gamma / (d + u.noise)).sum::<f64>();
    let d_star = users.iter().map(|u| u.gamma).sum::<f64>() / capacity;
    let all_noisy = users.iter().all(|u| u.noise > 0.0);
    let d = if all_noisy && total(0.0) <= capacity {
        0.0
    } else {
        // total(d) decreases in d; bracket and bisect.
        let (mut lo, mut hi) = (0.0_f64, d_star.max(1e-12));
        while total(hi) > capacity {
            hi *= 2.0;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if total(mid) > capacity {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let rates: Vec<f64> = users.iter().map(|u| u.gamma / (d + u.noise)).collect();
    let windows: Vec<f64> = users.iter().map(|u| u.gamma * (d + u.tp + u.noise) / (d + u.noise)).collect();
    let utilization = rates.iter().sum::<f64>() / capacity;
    VegasEquilibrium { queueing_delay: d, windows, rates, utilization, noise_free_delay: d_star }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_are_continuous_and_hit_alpha_min_at_dm() {
        let p = IllinoisParams::PAPER;
        let dm = 0.1;
        let [d1, d2, d3] = p.thresholds(dm);
        let e = 1e-12;
        assert!((p.alpha(d1 + e, dm) - p.alpha_max).abs() < 1e-6);
        assert!((p.alpha(dm, dm) - p.alpha_min).abs() < 1e-12);
        assert!((p.beta(d2 + e, dm) - p.beta_min).abs() < 1e-6);
        assert!((p.beta(d3 - e, dm) - p.beta_max).abs() < 1e-6);
    }

    #[test]
    fn lossy_bound_is_sqrt_40() {
        let b = lossy_bound(10.0, 0.125);
        assert!((b - 40f64.sqrt()).abs() < 1e-12);
        assert!((b - 6.32).abs() < 0.005);
    }

    #[test]
    fn vegas_noise_free_shares_equally() {
        let u = VegasUser { gamma: 2.0, tp: 0.06, noise: 0.0 };
        let eq = vegas_equilibrium(&[u, u], 1250.0);
        assert!((eq.queueing_delay - 4.0 / 1250.0).abs() < 1e-9);
        assert!((eq.rates[0] - 625.0).abs() < 1e-6);
        // eq. 32: W* = γ(d* + T_p)/d*
        let d = eq.queueing_delay;
        assert!((eq.windows[0] - 2.0 * (d + 0.06) / d).abs() < 1e-6);
    }

    #[test]
    fn vegas_noise_above_threshold_underutilises() {
        let n = |s| VegasUser { gamma: 2.0, tp: 0.06, noise: s };
        let below = vegas_equilibrium(&[n(0.002), n(0.002)], 1250.0);
        assert!((below.utilization - 1.0).abs() < 1e-9);
        let above = vegas_equilibrium(&[n(0.01), n(0.01)], 1250.0);
        assert_eq!(above.queueing_delay, 0.0);
        assert!(above.utilization < 0.5);
        // one noisy user gets less than the clean one
        let one = vegas_equilibrium(&[n(0.01), n(0.0)], 1250.0);
        assert!(one.rates[0] < one.rates[1]);
        assert!((one.utilization - 1.0).abs() < 1e-9);
    }
}
