//! liu2008 §4: the stochastic matrix model of general AIMD, as a seeded Monte-Carlo simulator.
//!
//! At congestion event k the rates just before the event, x[k] (Σ x_i = C, eq. 6), move to
//! `x[k+1] = A(D[k])·x[k]` (eqs. 16–18) with
//! `A = diag(1 − β̂·D_i) + γ·β̂·Dᵀ`, `γ_i = (T̃_i·T̂_i)⁻¹ / Σ_j (T̃_j·T̂_j)⁻¹` (eq. 15).
//! Assumption 2: M packets are dropped at each event, M uniform on {1, …, M_max}, and each
//! dropped packet belongs to flow i with probability x_i/C; D_i = 1 if flow i lost at least one.
//! liu2008's Figs. 2–7: light congestion M_max = N/2, medium N, heavy 2N; 50 runs, N = 4..10,
//! random x[0] and RTTs, 1000 events averaged after convergence.
//!
//! Assumptions recorded here (the paper does not give them): T̃_i = T̂_i = T_i (queueing delay
//! small against propagation); RTTs uniform on [rtt_min, rtt_max], by default 60–120 ms, the
//! range of liu2008's own heterogeneous-RTT experiment (§6.2: 60, 80, 100, 120 ms); x[0]
//! uniform on the simplex by normalising uniform draws; M_max = max(1, ⌊N/2⌋) for light
//! congestion; `warmup` events are discarded before the `events` that are averaged. C = 1.

use crate::sim::Rng;

/// How many packets a congestion event drops (liu2008 Figs. 2–7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// M uniform on [1, N/2].
    Light,
    /// M uniform on [1, N].
    Medium,
    /// M uniform on [1, 2N].
    Heavy,
}

impl Congestion {
    pub fn parse(s: &str) -> Option<Congestion> {
        match s {
            "light" => Some(Congestion::Light),
            "medium" => Some(Congestion::Medium),
            "heavy" => Some(Congestion::Heavy),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Congestion::Light => "light",
            Congestion::Medium => "medium",
            Congestion::Heavy => "heavy",
        }
    }

    /// Largest number of packets dropped at one event for `n` flows.
    pub fn m_max(self, n: usize) -> usize {
        match self {
            Congestion::Light => (n / 2).max(1),
            Congestion::Medium => n.max(1),
            Congestion::Heavy => (2 * n).max(1),
        }
    }
}

/// Settings of the Monte-Carlo runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MarkovConfig {
    pub n: usize,
    pub congestion: Congestion,
    pub runs: usize,
    /// Events discarded before averaging.
    pub warmup: usize,
    /// Events averaged.
    pub events: usize,
    /// β̂, the fraction removed on a loss event (TCP: 1/2).
    pub beta: f64,
    pub rtt_min: f64,
    pub rtt_max: f64,
    pub seed: u64,
}

impl Default for MarkovConfig {
    fn default() -> Self {
        MarkovConfig { n: 4, congestion: Congestion::Light, runs: 50, warmup: 1000, events: 1000, beta: 0.5, rtt_min: 0.06, rtt_max: 0.12, seed: 1 }
    }
}

/// One sample path.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkovRun {
    /// T_i, seconds.
    pub rtts: Vec<f64>,
    /// x̄_i (C = 1).
    pub mean: Vec<f64>,
    /// Std(x_i).
    pub std: Vec<f64>,
    /// x_i* assuming (27) with μ = 0: all users share the same window, x_i* ∝ 1/T_i.
    pub fair: Vec<f64>,
    /// Least-squares slope of log x̄_i against log T_i (= −(1 + μ)).
    pub slope: f64,
}

/// Every run plus the summary the paper plots.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkovResult {
    pub config: MarkovConfig,
    pub runs: Vec<MarkovRun>,
}

fn ls_slope(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// Simulate one sample path (run index `run` of the seeded family).
pub fn simulate_run(cfg: &MarkovConfig, run: usize) -> MarkovRun {
    let n = cfg.n;
    let mut rng = Rng::stream(cfg.seed, "models.markov", run as u64);
    let rtts: Vec<f64> = (0..n).map(|_| rng.range(cfg.rtt_min, cfg.rtt_max)).collect();
    let inv: Vec<f64> = rtts.iter().map(|t| 1.0 / (t * t)).collect();
    let inv_sum: f64 = inv.iter().sum();
    let gamma: Vec<f64> = inv.iter().map(|v| v / inv_sum).collect();
    let mut x: Vec<f64> = (0..n).map(|_| rng.uniform() + 1e-9).collect();
    let s: f64 = x.iter().sum();
    x.iter_mut().for_each(|v| *v /= s);
    let m_max = cfg.congestion.m_max(n);
    let mut d = vec![false; n];
    let mut sum = vec![0.0; n];
    let mut sum2 = vec![0.0; n];
    for k in 0..cfg.warmup + cfg.events {
        if k >= cfg.warmup {
            for i in 0..n {
                sum[i] += x[i];
                sum2[i] += x[i] * x[i];
            }
        }
        let m = 1 + ((rng.uniform() * m_max as f64) as usize).min(m_max - 1);
        d.iter_mut().for_each(|v| *v = false);
        let total: f64 = x.iter().sum();
        for _ in 0..m {
            let mut u = rng.uniform() * total;
            let mut pick = n - 1;
            for (i, xi) in x.iter().enumerate() {
                if u < *xi {
                    pick = i;
                    break;
                }
                u -= xi;
            }
            d[pick] = true;
        }
        let shed: f64 = (0..n).filter(|&i| d[i]).map(|i| cfg.beta * x[i]).sum();
        for i in 0..n {
            if d[i] {
                x[i] *= 1.0 - cfg.beta;
            }
            x[i] += gamma[i] * shed;
        }
        let s: f64 = x.iter().sum();
        x.iter_mut().for_each(|v| *v /= s);
    }
    let ne = cfg.events as f64;
    let mean: Vec<f64> = sum.iter().map(|s| s / ne).collect();
    let std: Vec<f64> = sum2.iter().zip(&mean).map(|(s2, m)| (s2 / ne - m * m).max(0.0).sqrt()).collect();
    let inv_t: Vec<f64> = rtts.iter().map(|t| 1.0 / t).collect();
    let inv_t_sum: f64 = inv_t.iter().sum();
    let fair: Vec<f64> = inv_t.iter().map(|v| v / inv_t_sum).collect();
    let lx: Vec<f64> = rtts.iter().map(|t| t.ln()).collect();
    let ly: Vec<f64> = mean.iter().map(|m| m.ln()).collect();
    let slope = ls_slope(&lx, &ly);
    MarkovRun { rtts, mean, std, fair, slope }
}

/// All runs.
pub fn simulate(cfg: &MarkovConfig) -> MarkovResult {
    MarkovResult { config: *cfg, runs: (0..cfg.runs).map(|r| simulate_run(cfg, r)).collect() }
}

/// Summary statistics over every user of every run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MarkovSummary {
    pub ratio_min: f64,
    pub ratio_max: f64,
    pub ratio_mean: f64,
    pub cov_max: f64,
    pub cov_mean: f64,
    /// Mean over runs of −slope = 1 + μ.
    pub one_plus_mu: f64,
    pub one_plus_mu_min: f64,
    pub one_plus_mu_max: f64,
    /// M_max, the largest number of packets dropped at one event.
    pub m_max: f64,
}

impl MarkovResult {
    pub fn summary(&self) -> MarkovSummary {
        let mut ratios = Vec::new();
        let mut covs = Vec::new();
        for r in &self.runs {
            for i in 0..r.mean.len() {
                ratios.push(r.mean[i] / r.fair[i]);
                covs.push(r.std[i] / r.mean[i]);
            }
        }
        let slopes: Vec<f64> = self.runs.iter().map(|r| -r.slope).collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let min = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = |v: &[f64]| v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        MarkovSummary {
            ratio_min: min(&ratios),
            ratio_max: max(&ratios),
            ratio_mean: mean(&ratios),
            cov_max: max(&covs),
            cov_mean: mean(&covs),
            one_plus_mu: mean(&slopes),
            one_plus_mu_min: min(&slopes),
            one_plus_mu_max: max(&slopes),
            m_max: self.config.congestion.m_max(self.config.n) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_stay_on_the_simplex_and_runs_are_reproducible() {
        let cfg = MarkovConfig { runs: 2, warmup: 50, events: 100, ..Default::default() };
        let a = simulate(&cfg);
        let b = simulate(&cfg);
        assert_eq!(a, b);
        for r in &a.runs {
            assert!((r.mean.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            assert!((r.fair.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn single_drop_per_event_gives_window_equality() {
        // M ≡ 1 (N = 2 or 3 under light congestion): f(x) = x/C exactly, so μ = 0 (eq. 27).
        let cfg = MarkovConfig { n: 3, runs: 5, warmup: 2000, events: 20000, ..Default::default() };
        let s = simulate(&cfg).summary();
        assert!((s.one_plus_mu - 1.0).abs() < 0.1, "{s:?}");
    }
}
