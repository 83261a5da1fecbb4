//! liu2008 §4: the stochastic matrix model of general AIMD, as a seeded Monte-Carlo simulator.
//!
//! At congestion event k the rates just before the event, x[k] (Σ x_i = C, eq. 6), move to
//! `x[k+1] = A(D[k])·x[k]` (eqs. 16–18) with
//! `A = diag(1 − β̂·D_i) + γ·β̂·Dᵀ`, `γ_i = (T̃_i·T̂_i)⁻¹ / Σ_j (T̃_j·T̂_j)⁻¹` (eq. 15).
//! Assumption 2: M packets are dropped at each event, M uniform on {1, …, M_max}, and each
//! dropped packet belongs to flow i with probability x_i/C; D_i = 1 if flow i lost at least one.
//! liu2008's Figs. 2–7: light congestion M_max = N/2, medium N, heavy 2N; 50 runs, N = 4..10,
//! random x[0] and RTTs, 1000 events averaged after convergence. Thm 4.3 (eq. 20): under the
//! invariant distribution T̂_i·T̃_i·E[x_i·q_i(x)] is the same for every user; each run reports
//! the time average of x_i[k]·D_i[k] (its empirical E[x_i·q_i]) and T_i² times it.
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
    /// The time average of x_i[k]·D_i[k] over the averaged events (x[k] just before event k,
    /// D_i[k] = 1 when user i backs off at it): E[x_i·q_i(x)] under the invariant distribution,
    /// since E[D_i[k] | x[k]] = q_i(x[k]) (Thm 4.1's ergodicity).
    pub xd_mean: Vec<f64>,
    /// T̂_i·T̃_i·E[x_i·q_i(x)] = T_i²·`xd_mean` (T̃_i = T̂_i = T_i here): Thm 4.3, eq. 20, says it
    /// is the same constant C1 for every user. The time averages obey eq. 22 on every sample
    /// path up to the boundary term: summing eq. 16 over the K averaged events gives
    /// `(x_i[end] − x_i[start])/K = −β̂·xd_i + γ_i·β̂·Σ_j xd_j`, so `xd_i/γ_i` (∝ `c1_i`) differs
    /// between users by O(1/(K·β̂·γ_i)) only.
    pub c1: Vec<f64>,
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
    let mut xd_sum = vec![0.0; n];
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
        if k >= cfg.warmup {
            for i in 0..n {
                if d[i] {
                    xd_sum[i] += x[i];
                }
            }
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
    let xd_mean: Vec<f64> = xd_sum.iter().map(|s| s / ne).collect();
    let c1: Vec<f64> = xd_mean.iter().zip(&rtts).map(|(xd, t)| t * t * xd).collect();
    MarkovRun { rtts, mean, std, fair, slope, xd_mean, c1 }
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
    /// Thm 4.3 (eq. 20): the largest relative deviation of a user's T_i²·E[x_i·q_i] from the
    /// mean over its run's users, max |c1_i / mean_j c1_j − 1|, over every run.
    pub c1_dev_max: f64,
    /// The same deviation, mean over every user of every run.
    pub c1_dev_mean: f64,
}

impl MarkovResult {
    pub fn summary(&self) -> MarkovSummary {
        let mut ratios = Vec::new();
        let mut covs = Vec::new();
        let mut c1_devs = Vec::new();
        for r in &self.runs {
            let c1_mean = r.c1.iter().sum::<f64>() / r.c1.len() as f64;
            c1_devs.extend(r.c1.iter().map(|c| (c / c1_mean - 1.0).abs()));
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
            c1_dev_max: max(&c1_devs),
            c1_dev_mean: mean(&c1_devs),
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
    fn thm_4_3_backoff_weighted_rates_are_equal_across_heterogeneous_users() {
        // eq. 20: T_i²·E[x_i·q_i(x)] = C1 for every user, whatever the RTTs and the congestion;
        // E[x_i·q_i] is the time average of x_i·D_i, and the rates themselves are far from equal.
        // The time averages obey eq. 22 up to a boundary term of order 1/(K·β̂·γ_i) (K events,
        // see `MarkovRun::c1`): here below 1e-3, while a γ that does not match T̂_i·T̃_i (1/T_i
        // instead of 1/T_i²) would leave the ratio T_i of the RTTs (up to 5) between users.
        for congestion in [Congestion::Light, Congestion::Heavy] {
            let cfg = MarkovConfig { n: 4, congestion, runs: 3, warmup: 2000, events: 100_000, rtt_min: 0.04, rtt_max: 0.2, ..Default::default() };
            let res = simulate(&cfg);
            let s = res.summary();
            assert!(s.c1_dev_max < 1e-3, "{congestion:?}: {s:?}");
            assert!(s.c1_dev_mean <= s.c1_dev_max);
            for r in &res.runs {
                let spread = r.mean.iter().cloned().fold(0.0, f64::max) / r.mean.iter().cloned().fold(1.0, f64::min);
                assert!(spread > 1.5, "the RTTs should spread the rates: {r:?}");
                for i in 0..cfg.n {
                    // a user backs off at some events only: 0 < E[x_i·D_i] < E[x_i]
                    assert!(r.xd_mean[i] > 0.0 && r.xd_mean[i] < r.mean[i], "{r:?}");
                    assert!((r.c1[i] - r.rtts[i] * r.rtts[i] * r.xd_mean[i]).abs() < 1e-15);
                }
            }
        }
        // homogeneous RTTs: T_i² is common, so E[x_i·q_i] itself is equal (with Thm 4.2)
        let cfg = MarkovConfig { n: 3, runs: 2, warmup: 1000, events: 100_000, rtt_min: 0.1, rtt_max: 0.1, ..Default::default() };
        assert!(simulate(&cfg).summary().c1_dev_max < 1e-3);
    }

    #[test]
    fn single_drop_per_event_gives_window_equality() {
        // M ≡ 1 (N = 2 or 3 under light congestion): f(x) = x/C exactly, so μ = 0 (eq. 27).
        let cfg = MarkovConfig { n: 3, runs: 5, warmup: 2000, events: 20000, ..Default::default() };
        let s = simulate(&cfg).summary();
        assert!((s.one_plus_mu - 1.0).abs() < 0.1, "{s:?}");
    }
}
