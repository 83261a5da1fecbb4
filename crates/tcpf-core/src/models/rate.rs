//! Sending-rate formulas: Padhye et al.'s TCP throughput equation, its special cases, and
//! yang2000's GAIMD sending rate (approximate eq. 2 and full eq. 55).
//!
//! yang2000 writes β for the fraction of the window KEPT on a triple-duplicate loss; the GAIMD
//! functions here call it `keep` (β removed = 1 − keep). Rates are in packets per second.

/// Padhye et al. (1998) TCP sending rate in packets per second, for loss probability `p`,
/// round-trip time `rtt` (s), retransmission timeout `t0` (s) and `b` packets per ACK:
/// `1 / (RTT·√(2bp/3) + T0·min(1, 3·√(3bp/8))·p·(1 + 32p²))`.
pub fn padhye(p: f64, rtt: f64, t0: f64, b: f64) -> f64 {
    let td = rtt * (2.0 * b * p / 3.0).sqrt();
    let to = t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    1.0 / (td + to)
}

/// Mathis et al.'s square-root law, packets per second: `√(3/(2bp)) / RTT`.
pub fn mathis(p: f64, rtt: f64, b: f64) -> f64 {
    (3.0 / (2.0 * b * p)).sqrt() / rtt
}

/// yang2000 eq. 3: the triple-duplicate term of eq. 2's denominator, `RTT·√(2b(1−β)p/(α(1+β)))`.
pub fn gaimd_td_term(alpha: f64, keep: f64, p: f64, rtt: f64, b: f64) -> f64 {
    rtt * (2.0 * b * (1.0 - keep) * p / (alpha * (1.0 + keep))).sqrt()
}

/// yang2000's Q: `min(1, 3·√((1−β²)·b·p/(2α)))`, the approximate probability that a loss
/// indication is a timeout (the middle factor of eq. 4).
pub fn gaimd_q(alpha: f64, keep: f64, p: f64, b: f64) -> f64 {
    (3.0 * ((1.0 - keep * keep) * b * p / (2.0 * alpha)).sqrt()).min(1.0)
}

/// yang2000 eq. 4: the timeout term of eq. 2's denominator, `T0·Q·p·(1 + 32p²)`.
pub fn gaimd_to_term(alpha: f64, keep: f64, p: f64, t0: f64, b: f64) -> f64 {
    t0 * gaimd_q(alpha, keep, p, b) * p * (1.0 + 32.0 * p * p)
}

/// yang2000 eq. 2: GAIMD(α, keep) sending rate, packets per second.
/// With α = 1, keep = 1/2 this is Padhye's formula; without the timeout term, Mathis's.
pub fn gaimd(alpha: f64, keep: f64, p: f64, rtt: f64, t0: f64, b: f64) -> f64 {
    1.0 / (gaimd_td_term(alpha, keep, p, rtt, b) + gaimd_to_term(alpha, keep, p, t0, b))
}

/// eq. 2 without the timeout term (all congestion indications are triple duplicates;
/// the leading term of eq. 34): `1 / (RTT·√(2b(1−β)p/(α(1+β))))`.
pub fn gaimd_td_only(alpha: f64, keep: f64, p: f64, rtt: f64, b: f64) -> f64 {
    1.0 / gaimd_td_term(alpha, keep, p, rtt, b)
}

/// yang2000 eq. 24: the mean window at the end of a TD period, E[W].
pub fn expected_window(alpha: f64, keep: f64, p: f64, b: f64) -> f64 {
    let a = (alpha + b * (1.0 - keep)) / (2.0 * b * (1.0 - keep * keep));
    a + (a * a + 2.0 * alpha / (b * (1.0 - keep * keep)) * (1.0 - p) / p).sqrt()
}

/// yang2000 eq. 28: the mean number of rounds in a TD period, E[X].
pub fn expected_rounds(alpha: f64, keep: f64, p: f64, b: f64) -> f64 {
    let a = (alpha + b * (1.0 - keep)) / (2.0 * alpha * (1.0 + keep));
    a + (a * a + 2.0 * b * (1.0 - keep) / (alpha * (1.0 + keep)) * (1.0 - p) / p).sqrt()
}

/// yang2000 eq. 45 (Padhye's Q̂): probability that a loss in a window of `w` packets is a
/// timeout, `min(1, (1−(1−p)³)(1 + (1−p)³(1−(1−p)^(w−3))) / (1−(1−p)^w))`; 1 for w ≤ 3 (eq. 44).
pub fn timeout_probability(w: f64, p: f64) -> f64 {
    if w <= 3.0 {
        return 1.0;
    }
    let q = 1.0 - p;
    let q3 = q * q * q;
    let num = (1.0 - q3) * (1.0 + q3 * (1.0 - q.powf(w - 3.0)));
    let den = 1.0 - q.powf(w);
    (num / den).min(1.0)
}

/// yang2000 eq. 56: `f(p) = 1 + p + 2p² + 4p³ + 8p⁴ + 16p⁵ + 32p⁶` (exponential back-off).
pub fn backoff_polynomial(p: f64) -> f64 {
    1.0 + p * (1.0 + p * (2.0 + p * (4.0 + p * (8.0 + p * (16.0 + p * 32.0)))))
}

/// The pieces of yang2000's full eq. 55.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaimdFull {
    /// Sending rate, packets per second (eq. 55).
    pub rate: f64,
    /// E[W], eq. 24.
    pub expected_window: f64,
    /// E[X], eq. 28.
    pub expected_rounds: f64,
    /// Q̂(E[W]), eq. 45 (the approximation Q ≈ Q̂(E[W]) of eq. 49).
    pub q_hat: f64,
    /// f(p), eq. 56.
    pub f: f64,
}

/// yang2000 eq. 55:
/// `T = ((1−p)/p + E[W] + Q̂(E[W])/(1−p)) / (RTT·(E[X] + 1) + Q̂(E[W])·T0·f(p)/(1−p))`.
pub fn gaimd_full_terms(alpha: f64, keep: f64, p: f64, rtt: f64, t0: f64, b: f64) -> GaimdFull {
    let ew = expected_window(alpha, keep, p, b);
    let ex = expected_rounds(alpha, keep, p, b);
    let q = timeout_probability(ew, p);
    let f = backoff_polynomial(p);
    let num = (1.0 - p) / p + ew + q / (1.0 - p);
    let den = rtt * (ex + 1.0) + q * t0 * f / (1.0 - p);
    GaimdFull { rate: num / den, expected_window: ew, expected_rounds: ex, q_hat: q, f }
}

/// yang2000 eq. 55, packets per second.
pub fn gaimd_full(alpha: f64, keep: f64, p: f64, rtt: f64, t0: f64, b: f64) -> f64 {
    gaimd_full_terms(alpha, keep, p, rtt, t0, b).rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padhye_reduces_to_mathis_without_timeouts() {
        let p = 1e-4;
        let ratio = padhye(p, 0.1, 0.0, 1.0) / mathis(p, 0.1, 1.0);
        assert!((ratio - 1.0).abs() < 1e-12);
        // timeouts only lower the rate
        assert!(padhye(0.05, 0.1, 0.4, 1.0) < mathis(0.05, 0.1, 1.0));
    }

    #[test]
    fn gaimd_tcp_is_padhye_and_mathis() {
        for &p in &[1e-5, 1e-3, 0.01, 0.05, 0.2, 0.5] {
            for &b in &[1.0, 2.0] {
                let g = gaimd(1.0, 0.5, p, 0.1, 0.4, b);
                let t = padhye(p, 0.1, 0.4, b);
                assert!((g / t - 1.0).abs() < 1e-12, "p={p} b={b}: {g} vs {t}");
                let m = gaimd_td_only(1.0, 0.5, p, 0.1, b) / mathis(p, 0.1, b);
                assert!((m - 1.0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn expected_rounds_is_b_one_minus_keep_over_alpha_times_window() {
        // eq. 27: E[X] = b(1−β)/α · E[W]
        let (a, k, p, b) = (0.31, 0.875, 0.02, 1.0);
        let lhs = expected_rounds(a, k, p, b);
        let rhs = b * (1.0 - k) / a * expected_window(a, k, p, b);
        assert!((lhs / rhs - 1.0).abs() < 1e-12);
    }

    #[test]
    fn timeout_probability_tends_to_three_over_w() {
        // eq. 46
        let q = timeout_probability(30.0, 1e-7);
        assert!((q - 0.1).abs() < 1e-4, "{q}");
        assert_eq!(timeout_probability(2.5, 0.1), 1.0);
    }

    #[test]
    fn full_formula_tends_to_square_root_law() {
        // eq. 34: T ≈ √(α(1+β)/(2b(1−β)p)) / RTT for small p
        let (a, k, p) = (0.31, 0.875, 1e-6);
        let r = gaimd_full(a, k, p, 0.1, 0.4, 1.0) / gaimd_td_only(a, k, p, 0.1, 1.0);
        assert!((r - 1.0).abs() < 0.01, "{r}");
    }
}
