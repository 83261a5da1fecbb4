//! yang2000 §3: the TCP-friendly (α, β) curves of GAIMD.
//!
//! All functions take `keep`, yang2000's β (the fraction of the window kept on a loss);
//! β removed = 1 − keep. With β removed, the TD curve reads α = 3β/(2 − β) (jin2001).
//!
//! - TD curve (eq. 6): match the triple-duplicate term of eq. 2: `α = 3(1 − keep)/(1 + keep)`.
//! - TO curve (eq. 7): match the timeout term: `α = 4(1 − keep²)/3`.
//! - Error-minimising curve (eq. 8): `α* = argmin_α ∫₀¹ w(p)·|T_{α,keep}(p)/T_{1,½}(p) − 1| dp`
//!   with the step weight w(p) = 1 for p below a threshold and 0 above (Fig. 8); the rates are
//!   eq. 2 with T0 = 4·RTT (the paper's Fig. 9 setting) and b = 1 by default.

use super::rate::gaimd;

/// Which TCP-friendly curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    /// Match the triple-duplicate term (eq. 6).
    Td,
    /// Match the timeout term (eq. 7).
    To,
    /// Minimise the weighted relative error (eq. 8).
    Min,
}

impl Curve {
    pub fn parse(s: &str) -> Option<Curve> {
        match s {
            "td" => Some(Curve::Td),
            "to" => Some(Curve::To),
            "min" => Some(Curve::Min),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Curve::Td => "td",
            Curve::To => "to",
            Curve::Min => "min",
        }
    }
}

/// Settings of the error-minimising curve (eq. 8).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorWeight {
    /// Loss rates below this get weight 1, above it weight 0 (Fig. 8).
    pub threshold: f64,
    /// T0 / RTT (yang2000 Fig. 9: 4).
    pub t0_rtt: f64,
    /// Packets acknowledged per ACK.
    pub b: f64,
    /// Midpoint-rule panels over [0, threshold].
    pub panels: usize,
}

impl Default for ErrorWeight {
    fn default() -> Self {
        ErrorWeight { threshold: 0.3, t0_rtt: 4.0, b: 1.0, panels: 2000 }
    }
}

/// eq. 6: α on the TD curve for kept fraction `keep`.
pub fn td_alpha(keep: f64) -> f64 {
    3.0 * (1.0 - keep) / (1.0 + keep)
}

/// eq. 7: α on the TO curve for kept fraction `keep`.
pub fn to_alpha(keep: f64) -> f64 {
    4.0 * (1.0 - keep * keep) / 3.0
}

/// eq. 8: the error integral E_β(α) (RTT = 1, T0 = t0_rtt).
pub fn error_integral(alpha: f64, keep: f64, w: &ErrorWeight) -> f64 {
    let n = w.panels.max(1);
    let h = w.threshold / n as f64;
    let mut sum = 0.0;
    for i in 0..n {
        let p = (i as f64 + 0.5) * h;
        let ratio = gaimd(alpha, keep, p, 1.0, w.t0_rtt, w.b) / gaimd(1.0, 0.5, p, 1.0, w.t0_rtt, w.b);
        sum += (ratio - 1.0).abs();
    }
    sum * h
}

/// eq. 8: α* minimising the error integral for `keep` (grid search, then golden section).
pub fn min_error_alpha(keep: f64, w: &ErrorWeight) -> f64 {
    // The minimum lies between the TD and TO values' neighbourhood; search a generous range.
    let hi = 2.0 * td_alpha(keep).max(to_alpha(keep)).max(1e-6) + 0.5;
    let lo = 1e-6_f64;
    let grid = 120;
    let (llo, lhi) = (lo.ln(), hi.ln());
    let xs: Vec<f64> = (0..=grid).map(|i| (llo + (lhi - llo) * i as f64 / grid as f64).exp()).collect();
    let es: Vec<f64> = xs.iter().map(|&a| error_integral(a, keep, w)).collect();
    let mut best = 0;
    for i in 1..es.len() {
        if es[i] < es[best] {
            best = i;
        }
    }
    let mut a = xs[best.saturating_sub(1)];
    let mut b = xs[(best + 1).min(grid)];
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let mut fc = error_integral(c, keep, w);
    let mut fd = error_integral(d, keep, w);
    for _ in 0..80 {
        if (b - a).abs() < 1e-9 * (1.0 + b.abs()) {
            break;
        }
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = error_integral(c, keep, w);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = error_integral(d, keep, w);
        }
    }
    (a + b) / 2.0
}

/// α for `keep` on the chosen curve.
pub fn friendly_alpha(curve: Curve, keep: f64, w: &ErrorWeight) -> f64 {
    match curve {
        Curve::Td => td_alpha(keep),
        Curve::To => to_alpha(keep),
        Curve::Min => min_error_alpha(keep, w),
    }
}

/// The whole curve: α for each kept fraction in `keeps` (yang2000 Fig. 10).
pub fn friendly_curve(curve: Curve, keeps: &[f64], w: &ErrorWeight) -> Vec<f64> {
    keeps.iter().map(|&k| friendly_alpha(curve, k, w)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_is_on_every_curve() {
        assert!((td_alpha(0.5) - 1.0).abs() < 1e-15);
        assert!((to_alpha(0.5) - 1.0).abs() < 1e-15);
        let a = min_error_alpha(0.5, &ErrorWeight { panels: 400, ..Default::default() });
        assert!((a - 1.0).abs() < 1e-4, "{a}");
    }

    #[test]
    fn td_in_removed_beta_is_three_beta_over_two_minus_beta() {
        for &beta in &[1.0 / 16.0, 0.125, 0.3, 0.5] {
            assert!((td_alpha(1.0 - beta) - 3.0 * beta / (2.0 - beta)).abs() < 1e-14);
        }
    }
}
