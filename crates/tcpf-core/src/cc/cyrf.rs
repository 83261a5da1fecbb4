//! CYRF ("Choose Your Response Function", sastry2005): per RTT `x ← x + x/f(x)`, per loss
//! event `x ← x − x·g(x)`. This file holds
//! - the two protocols sastry2005 designs with it, LOG (§V-C) and SIGMOID (§VI-C), and
//! - `classify`, which decides numerically over a window range whether a pair (f, g) is CYRF
//!   (step-wise convergent, Theorem 7), 1-CYRF (epoch-wise convergent, Theorem 8), TCP-friendly
//!   (`f·g ∝ x`, Corollary 13) and TCP-compatible (`f = x(2 − g)/(3g)`, Corollary 15), with the
//!   evidence (where monotonicity or a bound fails).
//!
//! Mappings (sastry2005 §IV-B): TCP f = x, g = 1/2; GAIMD f = x/α, g = β; binomial
//! f = x^(k+1)/α, g = β·x^(l−1).

use super::formula::{FormulaError, Program};
use super::params::{AlgorithmInfo, ParamSpec, Params, ParamError};
use super::{Ack, Controller, LossEvent, Window, MIN_SSTHRESH};
use serde::Serialize;

// ----- classification --------------------------------------------------------------------------

/// Where and how finely `classify` looks.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CyrfOptions {
    /// Window range checked, packets. The default starts at 2, the smallest window congestion
    /// avoidance can have here (a decrease never leaves less).
    pub x_min: f64,
    pub x_max: f64,
    /// Grid points, spaced geometrically.
    pub points: usize,
    /// 1-CYRF asks f·g > 1 "beyond a small window" (sastry2005 §IV-A); this is how small.
    pub small_window: f64,
    /// Relative tolerance for "constant" (f·g/x) and "equal" (Corollary 15).
    pub tolerance: f64,
}

impl Default for CyrfOptions {
    fn default() -> Self {
        CyrfOptions { x_min: 2.0, x_max: 1000.0, points: 2000, small_window: 4.0, tolerance: 0.02 }
    }
}

/// Verdicts on a pair (f, g) and the evidence for them.
#[derive(Clone, Debug, Serialize)]
pub struct CyrfReport {
    /// "CYRF", "1-CYRF" or "neither" (CYRF pairs that are also 1-CYRF report "CYRF").
    pub class: &'static str,
    /// f > 0, 0 < g ≤ 1, both non-decreasing, at least one strictly increasing (Theorem 7).
    pub cyrf: bool,
    /// f·g non-decreasing, and > 1 beyond `small_window` (Theorem 8).
    pub one_cyrf: bool,
    /// f·g/x constant (within `tolerance`) over the whole range (Corollary 13).
    pub tcp_friendly: bool,
    /// The smallest window from which f·g/x stays within `tolerance` of its value at `x_max`
    /// (None: not even at the top of the range).
    pub tcp_friendly_from: Option<f64>,
    /// f·g/x at the ends of the range.
    pub fg_over_x: [f64; 2],
    /// f = x(2 − g)/(3g) within `tolerance` over the whole range (Corollary 15).
    pub tcp_compatible: bool,
    /// 3·f·g / (x·(2 − g)) at the ends of the range (1 = TCP-compatible; below 1 the protocol
    /// is more aggressive than TCP for its loss rate).
    pub compatibility: [f64; 2],
    /// The smallest window beyond which f·g > 1 (1-responsiveness, eq. 7), if any.
    pub one_responsive_from: Option<f64>,
    /// Ranges where each function decreases ([from, to]), where a bound fails, where a value
    /// is not finite.
    pub f_decreasing: Option<[f64; 2]>,
    pub g_decreasing: Option<[f64; 2]>,
    pub fg_decreasing: Option<[f64; 2]>,
    pub f_not_positive: Option<f64>,
    pub g_out_of_range: Option<f64>,
    pub not_finite: Option<f64>,
    /// One sentence per finding.
    pub evidence: Vec<String>,
    pub options: CyrfOptions,
}

/// The first run over which `v` decreases (relative slack 1e-12), as [x_from, x_to].
fn first_decrease(xs: &[f64], v: &[f64]) -> Option<[f64; 2]> {
    let drops = |i: usize| v[i + 1] < v[i] - 1e-12 * v[i].abs().max(1e-300);
    let i = (0..v.len() - 1).find(|&i| drops(i))?;
    let mut j = i;
    while j + 1 < v.len() - 1 && drops(j + 1) {
        j += 1;
    }
    Some([xs[i], xs[j + 1]])
}

/// Classify the pair (f, g) over `opts`' window range.
// `!(v > 0.0)` on purpose: NaN fails the bound too.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub fn classify(f: impl Fn(f64) -> f64, g: impl Fn(f64) -> f64, opts: CyrfOptions) -> CyrfReport {
    let n = opts.points.max(3);
    let ratio = (opts.x_max / opts.x_min).powf(1.0 / (n - 1) as f64);
    let xs: Vec<f64> = (0..n).map(|i| if i == n - 1 { opts.x_max } else { opts.x_min * ratio.powi(i as i32) }).collect();
    let fv: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
    let gv: Vec<f64> = xs.iter().map(|&x| g(x)).collect();
    let fg: Vec<f64> = fv.iter().zip(&gv).map(|(a, b)| a * b).collect();
    let mut ev = Vec::new();
    let fmt = |x: f64| format!("{x:.4}");

    let not_finite = xs.iter().zip(fv.iter().zip(&gv)).find(|(_, (a, b))| !a.is_finite() || !b.is_finite()).map(|(x, _)| *x);
    if let Some(x) = not_finite {
        ev.push(format!("f or g is not finite at x = {}", fmt(x)));
    }
    let f_not_positive = xs.iter().zip(&fv).find(|(_, v)| !(**v > 0.0)).map(|(x, _)| *x);
    if let Some(x) = f_not_positive {
        ev.push(format!("f(x) > 0 fails at x = {} (f = {})", fmt(x), f(x)));
    }
    let g_out_of_range = xs.iter().zip(&gv).find(|(_, v)| !(**v > 0.0 && **v <= 1.0)).map(|(x, _)| *x);
    if let Some(x) = g_out_of_range {
        ev.push(format!("0 < g(x) <= 1 fails at x = {} (g = {})", fmt(x), g(x)));
    }
    let f_decreasing = first_decrease(&xs, &fv);
    if let Some([a, b]) = f_decreasing {
        ev.push(format!("f decreases on [{}, {}] (f({}) = {:.6}, f({}) = {:.6})", fmt(a), fmt(b), fmt(a), f(a), fmt(b), f(b)));
    }
    let g_decreasing = first_decrease(&xs, &gv);
    if let Some([a, b]) = g_decreasing {
        ev.push(format!("g decreases on [{}, {}] (g({}) = {:.6}, g({}) = {:.6})", fmt(a), fmt(b), fmt(a), g(a), fmt(b), g(b)));
    }
    let fg_decreasing = first_decrease(&xs, &fg);
    if let Some([a, b]) = fg_decreasing {
        ev.push(format!("f*g decreases on [{}, {}]", fmt(a), fmt(b)));
    }
    let finite = not_finite.is_none();
    let strictly = fv[n - 1] > fv[0] * (1.0 + 1e-12) || gv[n - 1] > gv[0] * (1.0 + 1e-12);
    if finite && !strictly {
        ev.push("neither f nor g increases strictly over the range".into());
    }
    let cyrf = finite && f_not_positive.is_none() && g_out_of_range.is_none() && f_decreasing.is_none() && g_decreasing.is_none() && strictly;

    // 1-responsiveness: f·g > 1 from some window on.
    let one_responsive_from = if finite {
        match fg.iter().rposition(|v| !(*v > 1.0)) {
            None => Some(xs[0]),
            Some(i) if i + 1 < n => Some(xs[i + 1]),
            Some(_) => None,
        }
    } else {
        None
    };
    let small = matches!(one_responsive_from, Some(x) if x <= opts.small_window);
    match one_responsive_from {
        Some(x) if small => ev.push(format!("f*g > 1 for x >= {} (1-responsive)", fmt(x))),
        Some(x) => ev.push(format!("f*g > 1 only from x = {}, beyond the small window {}", fmt(x), opts.small_window)),
        None => ev.push("f*g <= 1 at the top of the range: not 1-responsive".into()),
    }
    let one_cyrf = finite && fg_decreasing.is_none() && small;

    // TCP-friendliness: f·g/x constant.
    let r: Vec<f64> = fg.iter().zip(&xs).map(|(v, x)| v / x).collect();
    let r_ref = r[n - 1];
    let close = |v: f64| finite && r_ref.is_finite() && r_ref != 0.0 && (v / r_ref - 1.0).abs() <= opts.tolerance;
    let tcp_friendly_from = match r.iter().rposition(|v| !close(*v)) {
        None => Some(xs[0]),
        Some(i) if i + 1 < n => Some(xs[i + 1]),
        Some(_) => None,
    };
    let tcp_friendly = tcp_friendly_from == Some(xs[0]);
    match tcp_friendly_from {
        Some(_) if tcp_friendly => ev.push(format!("f*g/x stays within {}% of {:.6} over the range (TCP-friendly)", opts.tolerance * 100.0, r_ref)),
        Some(x) => ev.push(format!("f*g/x is within {}% of its large-window value {:.6} only for x >= {} (f*g/x = {:.6} at x = {})", opts.tolerance * 100.0, r_ref, fmt(x), r[0], fmt(xs[0]))),
        None => ev.push(format!("f*g/x is not constant even at the top of the range (TCP-unfriendly): {:.6} .. {:.6}", r[0], r_ref)),
    }

    // TCP-compatibility (Corollary 15): 3·f·g = x·(2 − g).
    let q: Vec<f64> = xs.iter().zip(fg.iter().zip(&gv)).map(|(x, (p, gg))| 3.0 * p / (x * (2.0 - gg))).collect();
    let tcp_compatible = finite && q.iter().all(|v| (v - 1.0).abs() <= opts.tolerance);

    let class = if cyrf {
        "CYRF"
    } else if one_cyrf {
        "1-CYRF"
    } else {
        "neither"
    };
    CyrfReport {
        class,
        cyrf,
        one_cyrf,
        tcp_friendly,
        tcp_friendly_from,
        fg_over_x: [r[0], r_ref],
        tcp_compatible,
        compatibility: [q[0], q[n - 1]],
        one_responsive_from,
        f_decreasing,
        g_decreasing,
        fg_decreasing,
        f_not_positive,
        g_out_of_range,
        not_finite,
        evidence: ev,
        options: opts,
    }
}

/// Classify formulas for f and g in `w` (or `x`), with named constants.
/// Errors name the formula: `("f", error)`.
pub fn classify_formulas(f: &str, g: &str, consts: &[(String, f64)], opts: CyrfOptions) -> Result<CyrfReport, (&'static str, FormulaError)> {
    let pf = Program::compile(f, &["w"], consts).map_err(|e| ("f", e))?;
    let pg = Program::compile(g, &["w"], consts).map_err(|e| ("g", e))?;
    Ok(classify(|x| pf.eval(&[x]), |x| pg.eval(&[x]), opts))
}

/// Classify an (increase per RTT, removal per loss event) pair: f = x/increase, g = removal/x.
pub fn classify_increase_decrease(increase: impl Fn(f64) -> f64, decrease: impl Fn(f64) -> f64, opts: CyrfOptions) -> CyrfReport {
    classify(|x| x / increase(x), |x| decrease(x) / x, opts)
}

// ----- LOG and SIGMOID -------------------------------------------------------------------------

/// LOG's increase and decrease use the window floored at this many packets: log(1) = 0 would
/// stall the increase at W = 1 (sastry2005 leaves tiny windows open). Congestion avoidance here
/// never runs below 2 packets (a decrease leaves at least `MIN_SSTHRESH`), so the floor only
/// matters to callers that drive the law below it.
pub const LOG_MIN_WINDOW: f64 = MIN_SSTHRESH;

const LOG_C: ParamSpec = ParamSpec {
    name: "c",
    default: Some(0.5),
    min: Some(0.0),
    max: Some(std::f64::consts::E),
    min_open: true,
    unit: "",
    doc: "decrease constant: W <- W - c*ln(W) per loss event (sastry2005 ran 0.5; c <= e keeps g <= 1)",
    ..ParamSpec::NUMBER
};

pub fn log_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "log",
        family: "cyrf",
        summary: "LOG: +ln(W)/W per RTT, W <- W - c*ln(W) per loss event (natural log)",
        source: "sastry2005 §V-C eq. 23 (c = 0.5 as run there)",
        params: vec![LOG_C],
        aliases: vec![],
        taxonomy: None,
        notes: "1-CYRF and TCP-friendly (f*g = c*x). The paper does not give the log base: natural log is used. Windows below 2 packets grow and shrink as at 2 (log(1) = 0 would stall). Corollary 15 makes LOG TCP-compatible at c = 2/3 (the paper's footnote says 0.3). Not in ns-2 2.35.",
        named_numbers: false,
        check: None,
    }
}

const SIG_C: ParamSpec = ParamSpec {
    name: "c",
    default: Some(0.5),
    min: Some(0.0),
    max: Some(1.0),
    min_open: true,
    unit: "fraction",
    doc: "largest fraction removed per loss event (the sigmoid's height)",
    ..ParamSpec::NUMBER
};

const SIG_A: ParamSpec = ParamSpec {
    name: "a",
    default: Some(0.5),
    min: Some(0.0),
    min_open: true,
    unit: "1/packets",
    doc: "steepness of the knee",
    ..ParamSpec::NUMBER
};

const SIG_K: ParamSpec = ParamSpec {
    name: "k",
    default: Some(10.0),
    min: Some(0.0),
    unit: "packets",
    doc: "knee window (used when s = 0)",
    ..ParamSpec::NUMBER
};

const SIG_S: ParamSpec = ParamSpec {
    name: "s",
    default: Some(0.0),
    min: Some(0.0),
    unit: "fraction",
    doc: "if > 0, the knee is s*ssthresh at each loss event instead of k (sastry2005's rule of thumb: s = 0.1)",
    ..ParamSpec::NUMBER
};

pub fn sigmoid_info() -> AlgorithmInfo {
    AlgorithmInfo {
        name: "sigmoid",
        family: "cyrf",
        summary: "SIGMOID: +1 per RTT, W <- W - c*W/(1 + exp(-a*(W - k))) per loss event",
        source: "sastry2005 §VI-C eq. 24-25 (c = 0.5, a = 0.5, k = 10 as Fig. 9)",
        params: vec![SIG_C, SIG_A, SIG_K, SIG_S],
        aliases: vec![],
        taxonomy: None,
        notes: "CYRF; like TCP well above the knee, almost no decrease below it (a minimum rate). With s > 0 the knee follows s*ssthresh. Not in ns-2 2.35.",
        named_numbers: false,
        check: None,
    }
}

/// The two CYRF protocols of sastry2005.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CyrfLaw {
    /// LOG with decrease constant c.
    Log { c: f64 },
    /// SIGMOID: height c, steepness a, knee k, or s·ssthresh when s > 0.
    Sigmoid { c: f64, a: f64, k: f64, s: f64 },
}

impl CyrfLaw {
    /// Packets added per RTT at window `w`.
    #[inline]
    pub fn increase_per_rtt(&self, w: f64) -> f64 {
        match *self {
            CyrfLaw::Log { .. } => {
                let x = w.max(LOG_MIN_WINDOW);
                libm::log(x) / x
            }
            CyrfLaw::Sigmoid { .. } => 1.0,
        }
    }

    /// Packets removed by a loss event at window `w` (`ssthresh` for SIGMOID's s rule).
    #[inline]
    pub fn decrease(&self, w: f64, ssthresh: f64) -> f64 {
        match *self {
            CyrfLaw::Log { c } => c * libm::log(w.max(LOG_MIN_WINDOW)),
            CyrfLaw::Sigmoid { c, a, k, s } => {
                let knee = if s > 0.0 { s * ssthresh } else { k };
                c * w / (1.0 + libm::exp(-a * (w - knee)))
            }
        }
    }

    /// sastry2005's f and g for this law (SIGMOID with its fixed knee k).
    pub fn f(&self, x: f64) -> f64 {
        x / self.increase_per_rtt(x)
    }

    pub fn g(&self, x: f64) -> f64 {
        self.decrease(x, f64::NAN) / x
    }
}

/// LOG or SIGMOID with the shared slow-start and timeout rules (the loss that ends slow start
/// halves the window, as ns-2 does).
#[derive(Clone, Debug)]
pub struct Cyrf {
    pub law: CyrfLaw,
    w: Window,
}

impl Cyrf {
    pub fn new(law: CyrfLaw, initial_window: f64, cap: f64) -> Self {
        Cyrf { law, w: Window::new(initial_window, cap) }
    }

    pub fn from_params(p: &Params, initial_window: f64, cap: f64) -> Result<Self, ParamError> {
        let law = match p.algorithm.as_str() {
            "log" => CyrfLaw::Log { c: p.get("c")? },
            _ => CyrfLaw::Sigmoid { c: p.get("c")?, a: p.get("a")?, k: p.get("k")?, s: p.get("s")? },
        };
        Ok(Self::new(law, initial_window, cap))
    }

    #[cfg(test)]
    pub(crate) fn window_mut(&mut self) -> &mut Window {
        &mut self.w
    }
}

impl Controller for Cyrf {
    fn on_ack(&mut self, _ack: &Ack) {
        if self.w.in_slow_start() {
            self.w.slow_start();
        } else {
            let w = self.w.cwnd;
            let inc = self.law.increase_per_rtt(w) / w;
            self.w.grow(inc);
        }
    }

    fn on_loss_event(&mut self, ev: &LossEvent) {
        let target = if self.w.in_slow_start() { ev.window * 0.5 } else { ev.window - self.law.decrease(ev.window, self.w.ssthresh) };
        self.w.reduce_to(target);
    }

    window_in_field!(standard_timeout);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testkit::*;

    fn in_ca(law: CyrfLaw, w: f64) -> Cyrf {
        let mut c = Cyrf::new(law, 2.0, f64::INFINITY);
        c.window_mut().ssthresh = 1.0;
        c.window_mut().cwnd = w;
        c
    }

    #[test]
    fn log_decrements_and_increments_at_several_windows() {
        let law = CyrfLaw::Log { c: 0.5 };
        for w in [4.0, 10.0, 30.0, 100.0, 500.0] {
            let mut c = in_ca(law, w);
            c.on_loss_event(&loss(w));
            let expect = w - 0.5 * w.ln();
            println!("LOG W={w}: after loss {:.4} (W - 0.5 ln W = {expect:.4})", c.window());
            assert!((c.window() - expect).abs() < 1e-12);
            if w >= 10.0 {
                // (At smaller windows the per-ACK steps change too much within one RTT.)
                let mut c = in_ca(law, w);
                let inc = one_rtt(&mut c);
                assert!((inc / (w.ln() / w) - 1.0).abs() < 0.02, "W={w}: +{inc}");
            }
        }
    }

    #[test]
    fn log_small_window_rule() {
        // At W = 1 ln(W) = 0 would stall: LOG grows as at 2 packets.
        let mut c = in_ca(CyrfLaw::Log { c: 0.5 }, 1.0);
        c.window_mut().ssthresh = 0.5;
        c.on_ack(&ack());
        assert!((c.window() - (1.0 + 2f64.ln() / 2.0)).abs() < 1e-12, "{}", c.window());
        // Above 2 packets the floor changes nothing.
        assert_eq!(CyrfLaw::Log { c: 0.5 }.increase_per_rtt(2.5), libm::log(2.5) / 2.5);
        // A decrease never leaves less than 2 packets.
        let mut c = in_ca(CyrfLaw::Log { c: 0.5 }, 2.2);
        c.on_loss_event(&loss(2.2));
        assert_eq!(c.window(), 2.0);
    }

    #[test]
    fn sigmoid_decrements_at_several_windows() {
        let law = CyrfLaw::Sigmoid { c: 0.5, a: 0.5, k: 10.0, s: 0.0 };
        for (w, expect_frac) in [(4.0, 0.5 / (1.0 + 3f64.exp())), (10.0, 0.25), (20.0, 0.5 / (1.0 + (-5f64).exp())), (60.0, 0.5 / (1.0 + (-25f64).exp()))] {
            let mut c = in_ca(law, w);
            c.on_loss_event(&loss(w));
            let removed = w - c.window();
            println!("SIGMOID W={w}: removed {removed:.5} = {:.5} of W", removed / w);
            assert!((removed - expect_frac * w).abs() < 1e-12 || c.window() == 2.0);
        }
        // Well above the knee it halves like TCP; far below it keeps the window.
        let mut c = in_ca(law, 100.0);
        c.on_loss_event(&loss(100.0));
        assert!((c.window() - 50.0).abs() < 1e-9);
        let mut c = in_ca(law, 3.0);
        c.on_loss_event(&loss(3.0));
        assert!(c.window() > 3.0 * 0.985, "{}", c.window());
        // +1 per RTT.
        let mut c = in_ca(law, 40.0);
        assert!((one_rtt(&mut c) - 1.0).abs() < 0.02);
        // Knee at s·ssthresh: with ssthresh 4 and s = 1 the knee is 4 (k = 99 is ignored), so a
        // loss at W = 4 removes c/2 of the window.
        let mut c = in_ca(CyrfLaw::Sigmoid { c: 0.5, a: 0.5, k: 99.0, s: 1.0 }, 4.0);
        c.window_mut().ssthresh = 4.0;
        c.on_loss_event(&loss(4.0));
        assert!((c.window() - 3.0).abs() < 1e-12, "{}", c.window());
    }

    #[test]
    fn classification_of_known_pairs() {
        let o = CyrfOptions::default();
        let tcp = classify(|x| x, |_| 0.5, o);
        assert_eq!(tcp.class, "CYRF");
        assert!(tcp.one_cyrf && tcp.tcp_friendly && tcp.tcp_compatible, "{tcp:?}");
        let log = classify(|x| CyrfLaw::Log { c: 0.5 }.f(x), |x| CyrfLaw::Log { c: 0.5 }.g(x), o);
        assert_eq!(log.class, "1-CYRF", "{:?}", log.evidence);
        assert!(log.tcp_friendly && !log.tcp_compatible);
        let [a, _] = log.g_decreasing.unwrap();
        assert!((a - std::f64::consts::E).abs() < 0.01, "g = 0.5 ln x / x peaks at e: {a}");
        // Corollary 15 (f = x(2 − g)/(3g)) holds for LOG at c ≈ 2/3 once g ≪ 2, i.e. at large x.
        let log23 = classify(|x| x * x / x.ln(), |x| 2.0 / 3.0 * x.ln() / x, o);
        assert!((log23.compatibility[1] - 1.0).abs() < 0.01, "{:?}", log23.compatibility);
    }
}
