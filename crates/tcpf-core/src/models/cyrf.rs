//! sastry2005 (CYRF): increase `x ← x + x/f(x)` per RTT, decrease `x ← x − x·g(x)`.
//!
//! - Corollary 15 (TCP-compatibility): `f(X) = X·(2 − g(X)) / (3·g(X))`.
//! - Corollary 13 (TCP-friendliness of smooth flows): `f(x)·g(x) ∝ x`.
//! - Theorem 4, eq. 13 (n-flow fairness): a step Δx improves (does not worsen) fairness iff
//!   `Σx_i² · ΣΔx_i ≥ Σx_i · Σx_iΔx_i`.
//!
//! The classification of a user-defined (f, g) pair (CYRF / 1-CYRF / TCP-friendly /
//! TCP-compatible) lives with the controller library (`cc::cyrf::classify`), and formulas are
//! compiled by `cc::formula::Program`; `analyse` combines them with the two checks here.

use crate::cc::cyrf::{classify, CyrfOptions, CyrfReport};
use crate::cc::formula::{FormulaError, Program};

/// Corollary 15: the TCP-compatible f(X) for a decrease fraction g(X).
pub fn tcp_compatible_f(x: f64, g: f64) -> f64 {
    x * (2.0 - g) / (3.0 * g)
}

/// Both sides of eq. 13 for windows `x` and steps `dx`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FairnessCheck {
    /// Σx² · ΣΔx
    pub lhs: f64,
    /// Σx · ΣxΔx
    pub rhs: f64,
    /// Jain's index before the step.
    pub jain_before: f64,
    /// Jain's index after the step (x + Δx).
    pub jain_after: f64,
}

impl FairnessCheck {
    /// eq. 13 holds (fairness does not decrease, to first order).
    pub fn holds(&self) -> bool {
        self.lhs >= self.rhs - 1e-12 * self.lhs.abs().max(self.rhs.abs()).max(1.0)
    }

    /// eq. 13 holds strictly.
    pub fn strict(&self) -> bool {
        self.lhs > self.rhs + 1e-12 * self.lhs.abs().max(self.rhs.abs()).max(1.0)
    }
}

/// eq. 13 on windows `x` and steps `dx` (same length).
pub fn fairness_condition(x: &[f64], dx: &[f64]) -> FairnessCheck {
    let s1: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    let sd: f64 = dx.iter().sum();
    let sxd: f64 = x.iter().zip(dx).map(|(a, b)| a * b).sum();
    let after: Vec<f64> = x.iter().zip(dx).map(|(a, b)| a + b).collect();
    FairnessCheck { lhs: s2 * sd, rhs: s1 * sxd, jain_before: super::chiu_jain::jain_index(x), jain_after: super::chiu_jain::jain_index(&after) }
}

/// A user-defined pair (f, g) analysed: the classification, Corollary 15's f for the given g,
/// and eq. 13 for an increase step (Δx = x/f(x)) and a decrease step (Δx = −x·g(x)) on `windows`.
#[derive(Clone, Debug)]
pub struct CyrfAnalysis {
    pub report: CyrfReport,
    /// (x, f(x), g(x), Corollary 15's f(x)) on a grid over the classification range.
    pub grid: Vec<[f64; 4]>,
    pub increase: Option<FairnessCheck>,
    pub decrease: Option<FairnessCheck>,
}

/// Compile f and g (variable `w`, or `x`; named constants `consts`) and analyse them.
/// Errors name the formula (`"f"` or `"g"`).
pub fn analyse(f: &str, g: &str, consts: &[(String, f64)], opts: CyrfOptions, windows: Option<&[f64]>) -> Result<CyrfAnalysis, (&'static str, FormulaError)> {
    let pf = Program::compile(f, &["w"], consts).map_err(|e| ("f", e))?;
    let pg = Program::compile(g, &["w"], consts).map_err(|e| ("g", e))?;
    let fx = |x: f64| pf.eval(&[x]);
    let gx = |x: f64| pg.eval(&[x]);
    let report = classify(fx, gx, opts);
    let n = 100;
    let ratio = (opts.x_max / opts.x_min).powf(1.0 / (n - 1) as f64);
    let grid = (0..n)
        .map(|i| {
            let x = opts.x_min * ratio.powi(i);
            [x, fx(x), gx(x), tcp_compatible_f(x, gx(x))]
        })
        .collect();
    let (increase, decrease) = match windows {
        Some(ws) => {
            let inc: Vec<f64> = ws.iter().map(|&x| x / fx(x)).collect();
            let dec: Vec<f64> = ws.iter().map(|&x| -x * gx(x)).collect();
            (Some(fairness_condition(ws, &inc)), Some(fairness_condition(ws, &dec)))
        }
        None => (None, None),
    };
    Ok(CyrfAnalysis { report, grid, increase, decrease })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corollary15_gives_gaimd_and_tcp() {
        // TCP: g = 1/2 → f(X) = X·1.5/1.5 = X (α = 1)
        assert!((tcp_compatible_f(37.0, 0.5) - 37.0).abs() < 1e-12);
        // GAIMD f = x/α, g = β → α = 3β/(2 − β) (yang2000 eq. 6 / REFERENCE TD curve)
        let beta = 0.125;
        let alpha = 30.0 / tcp_compatible_f(30.0, beta);
        assert!((alpha - 3.0 * beta / (2.0 - beta)).abs() < 1e-12);
        // LOG: g = 0.5·log(x)/x, Corollary 15 gives ≈ 0.3·log x... for the decrease (footnote 4):
        // with f = x²/log(x), g = X(2−g)/(3f) ≈ 2 log(X)/(3X) for small g.
    }

    #[test]
    fn eq13_aimd_increase_improves_decrease_keeps() {
        let x = [8.0, 10.0, 20.0];
        let inc = fairness_condition(&x, &[1.0, 1.0, 1.0]);
        assert!(inc.strict() && inc.jain_after > inc.jain_before);
        let dec = fairness_condition(&x, &[-4.0, -5.0, -10.0]);
        assert!(dec.holds() && !dec.strict());
        let bad = fairness_condition(&x, &[0.0, 0.0, 3.0]);
        assert!(!bad.holds() && bad.jain_after < bad.jain_before);
    }

    #[test]
    fn analyse_tcp_log_and_iiad() {
        let o = CyrfOptions::default();
        let tcp = analyse("w", "0.5", &[], o, Some(&[8.0, 10.0])).unwrap();
        assert!(tcp.report.cyrf && tcp.report.tcp_friendly && tcp.report.tcp_compatible);
        assert!(tcp.increase.unwrap().strict() && tcp.decrease.unwrap().holds());
        // LOG (f = x²/log x, g = 0.5·log(x)/x): 1-CYRF, not CYRF; its decrease worsens fairness
        let log = analyse("x^2/log(x)", "0.5*log(x)/x", &[], o, Some(&[8.0, 10.0])).unwrap();
        assert!(!log.report.cyrf && log.report.one_cyrf, "{:?}", log.report.evidence);
        assert!(!log.decrease.unwrap().holds());
        // Corollary 15's f for TCP's g is x
        assert!(tcp.grid.iter().all(|r| (r[3] - r[0]).abs() < 1e-9 * r[0]));
        let e = analyse("w +", "0.5", &[], o, None).unwrap_err();
        assert_eq!(e.0, "f");
    }
}
