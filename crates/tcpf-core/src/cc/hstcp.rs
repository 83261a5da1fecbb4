//! HighSpeed TCP (RFC 3649): an AIMD whose increase `a(w)` grows and whose decrease `b(w)`
//! shrinks with the window, so that large windows need far fewer loss events than standard TCP.
//!
//! Per ACK `W ← W + a(W)/W`; per loss event `W ← W − b(W)·W`. At or below `Low_Window` (38
//! packets) a = 1 and b = 1/2, i.e. standard TCP. Above it, two ways to get a and b:
//!
//! - `response = "table"` (default): RFC 3649 Appendix B's table of window thresholds with the
//!   a(w) and b(w) that hold up to each, looked up as Linux's tcp_highspeed does (and so ns-2's
//!   `select_ca highspeed`): for `w_(i−1) < W ≤ w_i` the increase is `i + 1` packets per RTT and
//!   the decrease is the row's b. The table is for the default parameters only.
//! - `response = "formula"`: RFC 3649 §5's response function. `p(w)` interpolates log-linearly
//!   between (Low_Window, Low_P) and (High_Window, High_P), where Low_P is standard TCP's drop
//!   rate at Low_Window from `w = 1.2/√p` (RFC 3649 §1; ≈ 10⁻³ for 38);
//!   `b(w) = (High_Decrease − 1/2)·(ln w − ln Low_Window)/(ln High_Window − ln Low_Window) + 1/2`;
//!   `a(w) = w²·p(w)·2·b(w)/(2 − b(w))`. Just above Low_Window the formula gives a ≈ 0.96;
//!   the increase is floored at 1 so HS-TCP is never slower than standard TCP there.
//!
//! Slow start is the standard one. The loss that ends slow start, like every loss event, removes
//! b(W) (RFC 3649 applies its response function to every congestion event, as Linux does).
//! A timeout follows the shared rule (ssthresh = W/2, window 1): RFC 3649 leaves timeouts to
//! standard TCP. (Linux's module uses b(W) for the timeout's ssthresh as well.)

use crate::error::show_num;
use super::params::{AlgorithmInfo, ParamError, ParamKind, ParamSpec, Params, Taxonomy};
use super::{Ack, Controller, LossEvent, Window};

/// RFC 3649 Appendix B: the window up to which each row holds (packets) ...
pub const TABLE_W: [f64; 72] = [
    38.0, 118.0, 221.0, 347.0, 495.0, 663.0, 851.0, 1058.0, 1284.0, 1529.0, 1793.0, 2076.0, 2378.0, 2699.0, 3039.0, 3399.0, 3778.0, 4177.0, 4596.0, 5036.0,
    5497.0, 5979.0, 6483.0, 7009.0, 7558.0, 8130.0, 8726.0, 9346.0, 9991.0, 10661.0, 11358.0, 12082.0, 12834.0, 13614.0, 14424.0, 15265.0, 16137.0, 17042.0,
    17981.0, 18955.0, 19965.0, 21013.0, 22101.0, 23230.0, 24402.0, 25618.0, 26881.0, 28193.0, 29557.0, 30975.0, 32450.0, 33986.0, 35586.0, 37253.0, 38992.0,
    40808.0, 42707.0, 44694.0, 46776.0, 48961.0, 51258.0, 53677.0, 56230.0, 58932.0, 61799.0, 64851.0, 68113.0, 71617.0, 75401.0, 79517.0, 84035.0, 89053.0,
];

/// ... and its b(w), the fraction removed (two decimals, as the RFC prints it). Row i's a(w) is
/// i + 1.
pub const TABLE_B: [f64; 72] = [
    0.50, 0.44, 0.41, 0.38, 0.37, 0.35, 0.34, 0.33, 0.32, 0.31, 0.30, 0.29, 0.28, 0.28, 0.27, 0.27, 0.26, 0.26, 0.25, 0.25, 0.24, 0.24, 0.23, 0.23, 0.22, 0.22,
    0.22, 0.21, 0.21, 0.21, 0.20, 0.20, 0.20, 0.19, 0.19, 0.19, 0.19, 0.18, 0.18, 0.18, 0.17, 0.17, 0.17, 0.17, 0.16, 0.16, 0.16, 0.16, 0.15, 0.15, 0.15, 0.15,
    0.14, 0.14, 0.14, 0.14, 0.13, 0.13, 0.13, 0.13, 0.13, 0.12, 0.12, 0.12, 0.12, 0.11, 0.11, 0.11, 0.10, 0.10, 0.10, 0.10,
];

/// RFC 3649's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HsParams {
    pub low_window: f64,
    pub high_window: f64,
    pub high_p: f64,
    pub high_decrease: f64,
    /// RFC 3649 Appendix B's table (true) or §5's formulas.
    pub table: bool,
}

impl HsParams {
    pub const RFC3649: HsParams = HsParams { low_window: 38.0, high_window: 83000.0, high_p: 1e-7, high_decrease: 0.1, table: true };

    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(HsParams {
            low_window: p.get("low_window")?,
            high_window: p.get("high_window")?,
            high_p: p.get("high_p")?,
            high_decrease: p.get("high_decrease")?,
            table: p.text("response")? != Some("formula"),
        })
    }

    /// Standard TCP's drop rate at Low_Window (w = 1.2/√p).
    pub fn low_p(&self) -> f64 {
        let r = 1.2 / self.low_window;
        r * r
    }

    /// p(w) of RFC 3649 §5 (log-linear between the Low and High points).
    pub fn p_formula(&self, w: f64) -> f64 {
        let lw = libm::log(self.low_window);
        let s = (libm::log(self.high_p) - libm::log(self.low_p())) / (libm::log(self.high_window) - lw);
        self.low_p() * libm::exp(s * (libm::log(w) - lw))
    }

    /// b(w) of RFC 3649 §5 (no table, no Low_Window rule).
    pub fn b_formula(&self, w: f64) -> f64 {
        let lw = libm::log(self.low_window);
        (self.high_decrease - 0.5) * (libm::log(w) - lw) / (libm::log(self.high_window) - lw) + 0.5
    }

    /// a(w) of RFC 3649 §5 (no table, no Low_Window rule, no floor).
    pub fn a_formula(&self, w: f64) -> f64 {
        let b = self.b_formula(w);
        w * w * self.p_formula(w) * 2.0 * b / (2.0 - b)
    }

    /// Row of the table for window `w` (Linux's lookup: the first row whose window is ≥ w).
    pub fn table_row(w: f64) -> usize {
        TABLE_W.iter().position(|&t| w <= t).unwrap_or(TABLE_W.len() - 1)
    }

    /// The increase per RTT and the fraction removed at window `w`.
    pub fn a_b(&self, w: f64) -> (f64, f64) {
        if w <= self.low_window {
            return (1.0, 0.5);
        }
        if self.table {
            let i = Self::table_row(w);
            ((i + 1) as f64, TABLE_B[i])
        } else {
            (self.a_formula(w).max(1.0), self.b_formula(w))
        }
    }
}

const RESPONSES: &[&str] = &["table", "formula"];

fn specs() -> Vec<ParamSpec> {
    let d = HsParams::RFC3649;
    vec![
        ParamSpec { name: "low_window", default: Some(d.low_window), min: Some(1.0), unit: "packets", doc: "at or below this window HS-TCP is standard TCP (a = 1, b = 1/2)", ..ParamSpec::NUMBER },
        ParamSpec { name: "high_window", default: Some(d.high_window), min: Some(1.0), unit: "packets", doc: "window of the response function's upper point", ..ParamSpec::NUMBER },
        ParamSpec { unit: "probability", ..ParamSpec::fraction("high_p", d.high_p, "drop rate at which the response function reaches high_window") },
        ParamSpec {
            name: "high_decrease",
            default: Some(d.high_decrease),
            min: Some(0.0),
            max: Some(0.5),
            min_open: true,
            unit: "fraction",
            doc: "b(high_window): fraction removed on a loss event at the upper point",
            ..ParamSpec::NUMBER
        },
        ParamSpec {
            name: "response",
            kind: ParamKind::Choice(RESPONSES),
            default_text: Some("table"),
            doc: "a(w), b(w) from RFC 3649 Appendix B's table (Linux's lookup; default parameters only) or from §5's formulas",
            ..ParamSpec::NUMBER
        },
    ]
}

fn check(p: &mut Params) -> Result<(), ParamError> {
    if p.get("high_window")? <= p.get("low_window")? {
        return Err(ParamError::new("high_window", format!("must exceed low_window ({}); got {}", show_num(p.get("low_window")?), show_num(p.get("high_window")?))));
    }
    let d = HsParams::RFC3649;
    let hp = HsParams::from_params(p).unwrap();
    if hp.table {
        for (name, v, dv) in [("low_window", hp.low_window, d.low_window), ("high_window", hp.high_window, d.high_window), ("high_p", hp.high_p, d.high_p), ("high_decrease", hp.high_decrease, d.high_decrease)] {
            if v != dv {
                return Err(ParamError::new(name, format!("RFC 3649's table holds only for the default {name} = {dv}; set response = \"formula\" to use {v}")));
            }
        }
    }
    if hp.high_p >= hp.low_p() {
        return Err(ParamError::new("high_p", format!("must be below standard TCP's drop rate at low_window ({:.3e}); got {}", hp.low_p(), show_num(hp.high_p))));
    }
    Ok(())
}

pub fn hstcp_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "hstcp",
        family: "hstcp",
        summary: "HighSpeed TCP: +a(W)/W per ACK, W <- W - b(W)*W per loss event; standard TCP up to low_window",
        source: "RFC 3649 (§5 response function, Appendix B table; defaults Low_Window 38, High_Window 83000, High_P 1e-7, High_Decrease 0.1); table lookup as Linux net/ipv4/tcp_highspeed.c",
        params: specs(),
        aliases: vec![],
        taxonomy: Some(Taxonomy { fairness: "window-based", increase: "historical", curve: "superlinear", history: "variable" }),
        notes: "ns-2: Agent/TCP/Linux with select_ca highspeed runs Linux's table (no parameters). Taxonomy derived here from tsao2007's definitions (a(W) grows with W: convex curve); tsao2007 itself does not classify HS-TCP.",
        named_numbers: false,
        check: Some(check),
    }
}

/// HighSpeed TCP.
#[derive(Clone, Debug)]
pub struct HsTcp {
    pub p: HsParams,
    w: Window,
}

impl HsTcp {
    pub fn new(p: HsParams, initial_window: f64, cap: f64) -> Self {
        HsTcp { p, w: Window::new(initial_window, cap) }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        Ok(Self::new(HsParams::from_params(p)?, initial_window, cap))
    }
}

impl Controller for HsTcp {
    reno_min_cwnd!();

    fn on_ack(&mut self, _ack: &Ack) {
        if self.w.in_slow_start() {
            self.w.slow_start();
        } else {
            let w = self.w.cwnd;
            let (a, _) = self.p.a_b(w);
            self.w.grow(a / w);
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let (_, b) = self.p.a_b(ev.window);
        self.w.reduce_to(ev.window * (1.0 - b));
    }

    window_in_field!(standard_timeout);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;
    use serde_json::json;

    fn in_ca(p: HsParams, w: f64) -> HsTcp {
        let mut c = HsTcp::new(p, 2.0, f64::INFINITY);
        c.w.ssthresh = 1.0;
        c.w.cwnd = w;
        c
    }

    #[test]
    fn response_formula_reproduces_the_rfc_table() {
        let p = HsParams { table: false, ..HsParams::RFC3649 };
        // The RFC's response function: w = 0.12/p^0.835 (RFC 3649 §5).
        for w in [100.0, 1000.0, 83000.0] {
            let pw = p.p_formula(w);
            let w_rfc = 0.12 / libm::pow(pw, 0.835);
            assert!((w_rfc / w - 1.0).abs() < 0.02, "w {w}: 0.12/p^0.835 = {w_rfc}");
        }
        assert!((p.b_formula(38.0) - 0.5).abs() < 1e-12);
        assert!((p.b_formula(83000.0) - 0.1).abs() < 1e-12);
        assert!((p.p_formula(83000.0) - 1e-7).abs() < 1e-15);
        // The RFC rounds its response function to p(w) = 0.078/w^1.2 (w = 0.12/p^0.835) and
        // computed Appendix B from that: every row's a is then the integer a(w) and b its b(w)
        // to two decimals (this checks the transcription of the table).
        let a_rounded = |w: f64| {
            let b = p.b_formula(w);
            w * w * 0.078 / libm::pow(w, 1.2) * 2.0 * b / (2.0 - b)
        };
        let (mut worst_rounded, mut worst_general): (f64, f64) = (0.0, 0.0);
        for (i, (&w, &b)) in TABLE_W.iter().zip(TABLE_B.iter()).enumerate() {
            let a = (i + 1) as f64;
            let (ar, fa, fb) = (a_rounded(w), p.a_formula(w), p.b_formula(w));
            if i % 10 == 0 || i == 1 {
                println!("w = {w:>7}: a(w) = {ar:6.3} with p = 0.078/w^1.2, {fa:6.3} with the interpolated p (table {a}), b(w) = {fb:.4} (table {b:.2})");
            }
            assert!((fb - b).abs() <= 0.0051, "b({w}) = {fb} vs {b}");
            assert!((ar - a).abs() < 0.06, "a({w}) = {ar} vs {a}");
            worst_rounded = worst_rounded.max((ar - a).abs());
            // The exact log-linear interpolation differs from the rounded form by < 3 %.
            assert!((fa - a).abs() <= 0.03 * a + 0.05, "a({w}) = {fa} vs {a}");
            worst_general = worst_general.max((fa - a).abs() / a);
        }
        println!("largest |a(w) - row a|: {worst_rounded:.3} (rounded p), {:.1}% (interpolated p)", worst_general * 100.0);
    }

    #[test]
    fn per_rtt_increase_and_decrease_at_table_points() {
        // Table lookup (Linux): w_(i-1) < W <= w_i gives a = i + 1, b = b_i.
        let p = HsParams::RFC3649;
        assert_eq!(p.a_b(38.0), (1.0, 0.5));
        assert_eq!(p.a_b(38.5), (2.0, 0.44));
        assert_eq!(p.a_b(118.0), (2.0, 0.44));
        assert_eq!(p.a_b(100_000.0), (72.0, 0.10));
        for (w, a, b) in [(30.0, 1.0, 0.5), (100.0, 2.0, 0.44), (1000.0, 8.0, 0.33), (1350.0, 10.0, 0.31)] {
            assert_eq!(p.a_b(w), (a, b), "w = {w}");
            let mut c = in_ca(p, w);
            let inc = one_rtt(&mut c);
            // a/W per ACK over W ACKs: a, to first order (the window grows meanwhile).
            assert!((inc - a).abs() < 0.02 * a + 0.01, "W = {w}: increase {inc} per RTT, a = {a}");
            let mut c = in_ca(p, w);
            c.on_loss_event(&loss(w));
            assert!((c.window() - w * (1.0 - b)).abs() < 1e-9, "W = {w}: after loss {}", c.window());
            assert_eq!(c.ssthresh(), c.window());
        }
        // The formula variant: a(W)/W per ACK and b(W).
        let f = HsParams { table: false, ..HsParams::RFC3649 };
        let mut c = in_ca(f, 1000.0);
        let inc = one_rtt(&mut c);
        assert!((inc - f.a_formula(1000.0)).abs() < 0.05, "{inc} vs {}", f.a_formula(1000.0));
        let mut c = in_ca(f, 1000.0);
        c.on_loss_event(&loss(1000.0));
        assert!((c.window() - 1000.0 * (1.0 - f.b_formula(1000.0))).abs() < 1e-9);
        // Floor of 1 just above Low_Window.
        assert!(f.a_formula(39.0) < 1.0);
        assert_eq!(f.a_b(39.0).0, 1.0);
    }

    #[test]
    fn standard_slow_start_and_timeout() {
        let mut c = HsTcp::new(HsParams::RFC3649, 2.0, f64::INFINITY);
        for _ in 0..98 {
            c.on_ack(&ack());
        }
        assert_eq!(c.window(), 100.0);
        c.on_loss_event(&loss(100.0)); // ends slow start with b(100) = 0.44
        assert!((c.window() - 56.0).abs() < 1e-9);
        c.on_timeout(&timeout(56.0));
        assert_eq!((c.window(), c.ssthresh()), (1.0, 28.0));
    }

    #[test]
    fn validation() {
        let v = |j: serde_json::Value| hstcp_info().validate(j.as_object().unwrap());
        let p = v(json!({})).unwrap();
        assert_eq!(HsParams::from_params(&p).unwrap(), HsParams::RFC3649);
        assert_eq!(v(json!({"low_window": 50})).unwrap_err().field, "low_window");
        let p = v(json!({"low_window": 50, "response": "formula"})).unwrap();
        assert!(!HsParams::from_params(&p).unwrap().table);
        assert_eq!(v(json!({"high_window": 30, "response": "formula"})).unwrap_err().field, "high_window");
        assert_eq!(v(json!({"high_p": 0.01, "response": "formula"})).unwrap_err().field, "high_p");
        assert_eq!(v(json!({"response": "curve"})).unwrap_err().field, "response");
    }
}
