//! Sending-rate formulas: Padhye et al.'s TCP throughput equation and its special cases.

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
}
