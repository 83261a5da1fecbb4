//! JSON in, JSON out: `call(name, params)` runs one model and returns a JSON object whose
//! top-level entries are named numbers (the flat summary `tcpf model … --json` prints; flags
//! are 0/1, "not reached" is -1, undefined values are left out) plus an optional `series`
//! object of arrays (for plots and the Python API) and, for `cyrf`, a `details` object of text.
//!
//! Parameter names are the `tcpf model` option names without dashes (`beta`, `keep`, `p`,
//! `W1`, …); every error names the offending one. β is the fraction removed; `keep` is
//! accepted instead (never both) and every output shows both.

use super::{chiu_jain, cyrf, friendly, illinois, markov, rate, spectrum, ModelError};
use serde_json::{json, Map, Value};
use crate::error::show_num;
use std::collections::BTreeSet;

type R<T> = Result<T, ModelError>;

/// The models `call` knows.
pub const MODELS: &[&str] = &[
    "rate",
    "friendly_alpha",
    "spectrum",
    "convergence",
    "convergence_map",
    "tradeoff",
    "cyrf",
    "fairness",
    "illinois",
    "vegas",
    "markov",
    "chiu_jain",
];

/// Run model `name` on `params` (a JSON object).
pub fn call(name: &str, params: &Value) -> R<Value> {
    let empty = Map::new();
    let map = match params {
        Value::Object(m) => m,
        Value::Null => &empty,
        _ => return Err(ModelError::new("", "parameters must be a JSON object")),
    };
    let mut a = Args { map, used: BTreeSet::new() };
    let out = match name {
        "rate" => rate_model(&mut a),
        "friendly_alpha" => friendly_model(&mut a),
        "spectrum" => spectrum_model(&mut a),
        "convergence" => convergence_model(&mut a),
        "convergence_map" => convergence_map_model(&mut a),
        "tradeoff" => tradeoff_model(&mut a),
        "cyrf" => cyrf_model(&mut a),
        "fairness" => fairness_model(&mut a),
        "illinois" => illinois_model(&mut a),
        "vegas" => vegas_model(&mut a),
        "markov" => markov_model(&mut a),
        "chiu_jain" => chiu_jain_model(&mut a),
        other => return Err(ModelError::new("", format!("unknown model '{other}' (known: {})", MODELS.join(", ")))),
    }?;
    a.finish()?;
    // undefined quantities (NaN) are left out of the summary rather than printed as null
    let mut out = out;
    if let Value::Object(m) = &mut out {
        m.retain(|_, v| !v.is_null());
    }
    Ok(out)
}

/// `call` with JSON text in and out (what the Python bindings use).
pub fn call_json(name: &str, params_json: &str) -> R<String> {
    let v: Value = serde_json::from_str(params_json).map_err(|e| ModelError::new("", format!("parameters are not valid JSON: {e}")))?;
    Ok(call(name, &v)?.to_string())
}

// ----- argument parsing -----------------------------------------------------------------------

struct Args<'a> {
    map: &'a Map<String, Value>,
    used: BTreeSet<String>,
}

/// An allowed range: (min, min_open, max, max_open).
#[derive(Clone, Copy)]
struct Range(Option<f64>, bool, Option<f64>, bool);

const POS: Range = Range(Some(0.0), true, None, false);
const NONNEG: Range = Range(Some(0.0), false, None, false);
const UNIT_OPEN: Range = Range(Some(0.0), true, Some(1.0), true);
const ANY: Range = Range(None, false, None, false);

impl Range {
    fn text(&self) -> String {
        let lo = match self.0 {
            Some(v) => format!("{}{}", if self.1 { "(" } else { "[" }, show_num(v)),
            None => "(-inf".into(),
        };
        let hi = match self.2 {
            Some(v) => format!("{}{}", show_num(v), if self.3 { ")" } else { "]" }),
            None => "inf)".into(),
        };
        format!("{lo}, {hi}")
    }

    fn check(&self, name: &str, v: f64) -> R<f64> {
        let lo = self.0.is_none_or(|m| if self.1 { v > m } else { v >= m });
        let hi = self.2.is_none_or(|m| if self.3 { v < m } else { v <= m });
        if v.is_finite() && lo && hi {
            Ok(v)
        } else {
            Err(ModelError::new(name, format!("must be in {}; got {}", self.text(), fmt(v))))
        }
    }
}

fn fmt(v: f64) -> String {
    if v.is_finite() {
        show_num(v)
    } else {
        "a non-finite number".into()
    }
}

impl<'a> Args<'a> {
    fn raw(&mut self, name: &str) -> Option<&'a Value> {
        match self.map.get(name) {
            Some(Value::Null) | None => None,
            Some(v) => {
                self.used.insert(name.to_string());
                Some(v)
            }
        }
    }

    fn opt(&mut self, name: &str, range: Range) -> R<Option<f64>> {
        match self.raw(name) {
            None => Ok(None),
            Some(v) => {
                let x = v.as_f64().ok_or_else(|| ModelError::new(name, format!("must be a number; got {v}")))?;
                range.check(name, x).map(Some)
            }
        }
    }

    fn num(&mut self, name: &str, default: Option<f64>, range: Range) -> R<f64> {
        match self.opt(name, range)? {
            Some(v) => Ok(v),
            None => default.ok_or_else(|| ModelError::new(name, "is required")),
        }
    }

    fn int(&mut self, name: &str, default: Option<u64>, min: u64, max: u64) -> R<u64> {
        match self.raw(name) {
            None => default.ok_or_else(|| ModelError::new(name, "is required")),
            Some(v) => {
                let x = v.as_f64().ok_or_else(|| ModelError::new(name, format!("must be an integer; got {v}")))?;
                if x.fract() != 0.0 || x < min as f64 || x > max as f64 {
                    return Err(ModelError::new(name, format!("must be an integer in [{min}, {max}]; got {}", fmt(x))));
                }
                Ok(x as u64)
            }
        }
    }

    fn flag(&mut self, name: &str) -> R<bool> {
        match self.raw(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => v.as_f64().map(|x| x != 0.0).ok_or_else(|| ModelError::new(name, format!("must be true or false; got {v}"))),
        }
    }

    fn string(&mut self, name: &str, default: Option<&str>, allowed: &[&str]) -> R<String> {
        let s = match self.raw(name) {
            None => default.map(str::to_string).ok_or_else(|| ModelError::new(name, "is required"))?,
            Some(Value::String(s)) => s.clone(),
            Some(v) => return Err(ModelError::new(name, format!("must be a string; got {v}"))),
        };
        if !allowed.is_empty() && !allowed.contains(&s.as_str()) {
            return Err(ModelError::new(name, format!("must be one of {}; got '{s}'", allowed.join(", "))));
        }
        Ok(s)
    }

    fn list(&mut self, name: &str, range: Range) -> R<Option<Vec<f64>>> {
        match self.raw(name) {
            None => Ok(None),
            Some(Value::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for it in items {
                    let x = it.as_f64().ok_or_else(|| ModelError::new(name, format!("must be a list of numbers; got {it}")))?;
                    out.push(range.check(name, x)?);
                }
                Ok(Some(out))
            }
            Some(v) => Err(ModelError::new(name, format!("must be a list of numbers; got {v}"))),
        }
    }

    fn object(&mut self, name: &str) -> R<Map<String, Value>> {
        match self.raw(name) {
            None => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(v) => Err(ModelError::new(name, format!("must be an object of parameters; got {v}"))),
        }
    }

    /// β given as removed (`beta`) or kept (`keep`); returns (beta, keep).
    fn beta_keep(&mut self, default_beta: Option<f64>) -> R<(f64, f64)> {
        let b = self.opt("beta", UNIT_OPEN)?;
        let k = self.opt("keep", UNIT_OPEN)?;
        match (b, k) {
            (Some(_), Some(_)) => Err(ModelError::new("beta", "give only one of beta (fraction removed) and keep (fraction kept)")),
            (Some(b), None) => Ok((b, 1.0 - b)),
            (None, Some(k)) => Ok((1.0 - k, k)),
            (None, None) => match default_beta {
                Some(b) => Ok((b, 1.0 - b)),
                None => Err(ModelError::new("beta", "is required: give beta (fraction removed) or keep (fraction kept)")),
            },
        }
    }

    fn finish(&self) -> R<()> {
        for k in self.map.keys() {
            if !self.used.contains(k) && !self.map[k].is_null() {
                return Err(ModelError::new(k, "unknown parameter for this model"));
            }
        }
        Ok(())
    }
}

fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v).map(Value::Number).unwrap_or(Value::Null)
}

fn b01(b: bool) -> Value {
    json!(if b { 1 } else { 0 })
}

fn logspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..n).map(|i| (lo.ln() + (hi.ln() - lo.ln()) * i as f64 / (n - 1) as f64).exp()).collect()
}

fn linspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..n).map(|i| lo + (hi - lo) * i as f64 / (n - 1) as f64).collect()
}

fn finite(v: Vec<f64>) -> Value {
    Value::Array(v.into_iter().map(num).collect())
}

// ----- yang2000 -------------------------------------------------------------------------------

fn rate_model(a: &mut Args) -> R<Value> {
    let alpha = a.num("alpha", None, POS)?;
    let (beta, keep) = a.beta_keep(None)?;
    let p = a.num("p", None, UNIT_OPEN)?;
    let rtt = a.num("rtt", None, POS)?;
    let t0 = a.num("t0", Some(4.0 * rtt), NONNEG)?;
    let b = a.num("b", Some(1.0), POS)?;
    let full = a.flag("full")?;
    let eq2 = rate::gaimd(alpha, keep, p, rtt, t0, b);
    let f = rate::gaimd_full_terms(alpha, keep, p, rtt, t0, b);
    let pad = rate::padhye(p, rtt, t0, b);
    let ps = logspace(1e-4, 0.5, 120);
    let series = json!({
        "p": finite(ps.clone()),
        "gaimd_eq2": finite(ps.iter().map(|&q| rate::gaimd(alpha, keep, q, rtt, t0, b)).collect()),
        "gaimd_eq55": finite(ps.iter().map(|&q| rate::gaimd_full(alpha, keep, q, rtt, t0, b)).collect()),
        "gaimd_td_only": finite(ps.iter().map(|&q| rate::gaimd_td_only(alpha, keep, q, rtt, b)).collect()),
        "padhye": finite(ps.iter().map(|&q| rate::padhye(q, rtt, t0, b)).collect()),
        "mathis": finite(ps.iter().map(|&q| rate::mathis(q, rtt, b)).collect()),
    });
    let headline = if full { f.rate } else { eq2 };
    Ok(json!({
        "alpha": num(alpha), "beta": num(beta), "keep": num(keep), "p": num(p), "rtt": num(rtt),
        "t0": num(t0), "b": num(b), "full": b01(full),
        "rate": num(headline),
        "rate_eq2": num(eq2),
        "rate_eq55": num(f.rate),
        "rate_td_only": num(rate::gaimd_td_only(alpha, keep, p, rtt, b)),
        "ratio_eq55_to_eq2": num(f.rate / eq2),
        "padhye": num(pad),
        "mathis": num(rate::mathis(p, rtt, b)),
        "ratio_to_padhye": num(headline / pad),
        "td_term": num(rate::gaimd_td_term(alpha, keep, p, rtt, b)),
        "to_term": num(rate::gaimd_to_term(alpha, keep, p, t0, b)),
        "q": num(rate::gaimd_q(alpha, keep, p, b)),
        "expected_window": num(f.expected_window),
        "expected_rounds": num(f.expected_rounds),
        "q_hat": num(f.q_hat),
        "f_p": num(f.f),
        "series": series,
    }))
}

fn friendly_model(a: &mut Args) -> R<Value> {
    let (beta, keep) = a.beta_keep(None)?;
    let curve_s = a.string("curve", Some("td"), &["td", "to", "min"])?;
    let curve = friendly::Curve::parse(&curve_s).expect("checked");
    let threshold = a.num("threshold", Some(0.3), Range(Some(0.0), true, Some(1.0), false))?;
    let t0_rtt = a.num("t0_rtt", Some(4.0), NONNEG)?;
    let b = a.num("b", Some(1.0), POS)?;
    let with_series = a.flag("series")?;
    let w = friendly::ErrorWeight { threshold, t0_rtt, b, panels: 2000 };
    let td = friendly::td_alpha(keep);
    let to = friendly::to_alpha(keep);
    let mn = friendly::min_error_alpha(keep, &w);
    let alpha = match curve {
        friendly::Curve::Td => td,
        friendly::Curve::To => to,
        friendly::Curve::Min => mn,
    };
    let mut out = json!({
        "beta": num(beta), "keep": num(keep),
        "curve": json!(match curve { friendly::Curve::Td => 0, friendly::Curve::To => 1, friendly::Curve::Min => 2 }),
        "alpha": num(alpha),
        "alpha_td": num(td), "alpha_to": num(to), "alpha_min": num(mn),
        "threshold": num(threshold), "t0_rtt": num(t0_rtt), "b": num(b),
        "error_integral": num(friendly::error_integral(alpha, keep, &w)),
    });
    if with_series {
        let wc = friendly::ErrorWeight { panels: 400, ..w };
        let keeps = linspace(0.05, 0.95, 37);
        let alphas = linspace(0.0, 2.0 * td.max(to).max(mn) + 0.05, 101).into_iter().skip(1).collect::<Vec<_>>();
        let ps = logspace(1e-3, 0.5, 100);
        let tcp = |q: f64| rate::gaimd(1.0, 0.5, q, 1.0, t0_rtt, b);
        let ratio = |al: f64| finite(ps.iter().map(|&q| rate::gaimd(al, keep, q, 1.0, t0_rtt, b) / tcp(q)).collect());
        out["series"] = json!({
            "keep": finite(keeps.clone()),
            "td": finite(friendly::friendly_curve(friendly::Curve::Td, &keeps, &wc)),
            "to": finite(friendly::friendly_curve(friendly::Curve::To, &keeps, &wc)),
            "min": finite(friendly::friendly_curve(friendly::Curve::Min, &keeps, &wc)),
            "alpha_grid": finite(alphas.clone()),
            "error": finite(alphas.iter().map(|&al| friendly::error_integral(al, keep, &wc)).collect()),
            "p": finite(ps.clone()),
            "ratio_td": ratio(td), "ratio_to": ratio(to), "ratio_min": ratio(mn),
        });
    }
    Ok(out)
}

// ----- jin2001 --------------------------------------------------------------------------------

fn spectrum_model(a: &mut Args) -> R<Value> {
    let k = a.num("k", None, Range(Some(-1.0), true, None, false))?;
    let l = a.num("l", None, Range(None, false, Some(1.0), false))?;
    let (beta, _) = a.beta_keep(None)?;
    let wmax = a.num("wmax", None, POS)?;
    let approx = a.flag("approx")?;
    // Appendix B (eq. 14): the bounded overshoot and undershoot, fractions of the capacity
    let delta_i = a.opt("delta_i", NONNEG)?;
    let delta_d = a.opt("delta_d", Range(Some(0.0), false, Some(1.0), true))?;
    if delta_i.is_some() != delta_d.is_some() {
        let missing = if delta_i.is_none() { "delta_i" } else { "delta_d" };
        return Err(ModelError::new(missing, "is required with the other of delta_i, delta_d (Appendix B's eq. 14 needs both)"));
    }
    let w0 = wmax - beta * wmax.powf(l);
    if w0 <= 0.0 {
        return Err(ModelError::new("beta", format!("the decrease β·w_max^l = {} would leave no window (w0 = {} ≤ 0)", beta * wmax.powf(l), w0)));
    }
    let corr = 1.0 - beta * wmax.powf(l - 1.0) / (k + 2.0);
    let alpha = spectrum::alpha(k, l, beta, wmax, approx);
    let c = spectrum::c(k, l, beta, wmax, approx);
    let u = 1.0 / (k + 1.0);
    // periodic-loss epoch: the window climbs back by β·w_max^l in T = (β w_max^l / c)^(1/u) RTTs
    let epoch = (beta * wmax.powf(l) / c).powf(1.0 / u);
    let ts = linspace(0.0, epoch, 100);
    let app_b = delta_i.zip(delta_d).map(|(i, d)| spectrum::app_b_check(i, d, 60));
    Ok(json!({
        "k": num(k), "l": num(l), "beta": num(beta), "keep": num(1.0 - beta), "wmax": num(wmax), "approx": b01(approx),
        "alpha": num(alpha), "c": num(c), "u": num(u),
        "alpha_eq4": num(spectrum::alpha(k, l, beta, wmax, false)),
        "alpha_eq6": num(spectrum::alpha(k, l, beta, wmax, true)),
        "c_eq5": num(spectrum::c(k, l, beta, wmax, false)),
        "c_eq7": num(spectrum::c(k, l, beta, wmax, true)),
        // Appendix A: periodic losses (eq. 10; `approx` drops the correction as eq. 7 does)
        "c_eq10": num(spectrum::c_periodic(k, l, beta, wmax, approx)),
        "alpha_eq10": num(spectrum::alpha_periodic(k, l, beta, wmax, approx)),
        "gamma_u1": num(spectrum::gamma_factor(k)),
        "c_eq10_over_eq5": num(spectrum::c_periodic(k, l, beta, wmax, approx) / c),
        // Appendix B: the (k, l) eq. 14 is derived for, and eq. 14 itself when Δ_I, Δ_D are given
        "app_b_covers": b01(spectrum::app_b_covers(k, l)),
        "eq14_lhs": delta_i.zip(delta_d).map_or(Value::Null, |(i, d)| num(i + 3.0 * d)),
        "eq14_holds": delta_i.zip(delta_d).map_or(Value::Null, |(i, d)| b01(spectrum::eq14_holds(i, d))),
        "app_b_crossing": app_b.map_or(Value::Null, |r| json!(r.crossing)),
        "app_b_fairer": app_b.map_or(Value::Null, |r| json!(r.fairer)),
        "app_b_min_window": app_b.map_or(Value::Null, |r| if r.crossing > 0 { num(r.min_window) } else { Value::Null }),
        "friendliness_correction": num(corr),
        "w0": num(w0),
        "epoch_rtt": num(epoch),
        "region_exponent": num(l - u),
        "in_convergence_region": b01(spectrum::in_convergence_region(k, l)),
        "series": {"t": finite(ts.clone()), "w": finite(ts.iter().map(|t| w0 + c * t.powf(u)).collect())},
    }))
}

fn alg_beta(a: &mut Args, allowed: &[&str]) -> R<(spectrum::Alg, f64)> {
    let s = a.string("alg", None, allowed)?;
    let alg = spectrum::Alg::parse(&s).expect("checked");
    let (beta, _) = a.beta_keep(Some(alg.default_beta()))?;
    if alg == spectrum::Alg::Tcp && a.used.contains("beta") && (beta - 0.5).abs() > 1e-12 {
        return Err(ModelError::new("beta", "tcp is AIMD(1, 1/2): its beta is fixed at 0.5 (use alg = aimd)"));
    }
    if alg == spectrum::Alg::Tcp && a.used.contains("keep") && (beta - 0.5).abs() > 1e-12 {
        return Err(ModelError::new("keep", "tcp is AIMD(1, 1/2): its keep is fixed at 0.5 (use alg = aimd)"));
    }
    if alg == spectrum::Alg::Simd && beta >= 0.5 {
        return Err(ModelError::new("beta", format!("SIMD's fairness factor 1 − 2β needs beta < 0.5; got {}", show_num(beta))));
    }
    Ok((alg, beta))
}

fn convergence_json(c: &spectrum::Convergence) -> Value {
    json!({"t1": num(c.t1), "delta": num(c.delta), "t2": num(c.t2), "t2_epochs": num(c.t2_epochs),
           "epoch_rtt": num(c.epoch_rtt), "shrink": num(c.shrink), "total": num(c.total())})
}

fn convergence_model(a: &mut Args) -> R<Value> {
    let (alg, beta) = alg_beta(a, &["tcp", "aimd", "iiad", "simd"])?;
    let w = a.num("W", None, POS)?;
    let w1 = a.num("W1", None, POS)?;
    let w2 = a.num("W2", None, POS)?;
    let eps = a.num("eps", None, POS)?;
    if w1 + w2 > w {
        return Err(ModelError::new("W2", format!("the start (W1, W2) must lie on or below the efficiency line: W1 + W2 = {} > W = {w}", w1 + w2)));
    }
    if alg == spectrum::Alg::Iiad && 2.0 * beta >= w {
        return Err(ModelError::new("beta", "IIAD needs 2·beta < W"));
    }
    let c = spectrum::convergence(alg, beta, w, w1, w2, eps);
    let mut out = json!({"beta": num(beta), "keep": num(1.0 - beta), "W": num(w), "W1": num(w1), "W2": num(w2), "eps": num(eps),
                         "t2_is_lower_bound": b01(alg == spectrum::Alg::Iiad)});
    for (k, v) in convergence_json(&c).as_object().unwrap() {
        out[k] = v.clone();
    }
    // the four algorithms side by side (each with its jin2001 default β, except the chosen one)
    let mut all = Map::new();
    for other in [spectrum::Alg::Tcp, spectrum::Alg::Aimd, spectrum::Alg::Iiad, spectrum::Alg::Simd] {
        let b = if other == alg { beta } else { other.default_beta() };
        all.insert(other.name().into(), convergence_json(&spectrum::convergence(other, b, w, w1, w2, eps)));
    }
    out["series"] = Value::Object(all);
    Ok(out)
}

fn convergence_map_model(a: &mut Args) -> R<Value> {
    let beta = a.num("beta", Some(1.0 / 16.0), Range(Some(0.0), true, Some(0.5), true))?;
    let iiad_beta = a.num("iiad_beta", Some(2.0 / 3.0), POS)?;
    let w = a.num("W", Some(100.0), POS)?;
    let eps = a.num("eps", Some(1.0), POS)?;
    let step = a.num("step", Some(1.0), POS)?;
    if w / step > 2000.0 {
        return Err(ModelError::new("step", "too fine a grid (W/step must be at most 2000)"));
    }
    let m = spectrum::region_map(beta, iiad_beta, w, eps, step);
    let n = m.points.len().max(1) as f64;
    let col = |j: usize| finite(m.points.iter().map(|p| p[j]).collect());
    Ok(json!({
        "beta": num(beta), "keep": num(1.0 - beta), "iiad_beta": num(iiad_beta), "W": num(w), "eps": num(eps), "step": num(step),
        "points": json!(m.points.len()),
        "simd_faster": json!(m.simd_faster),
        "fraction_simd_faster": num(m.simd_faster as f64 / n),
        "fraction_iiad_slowest": num(m.iiad_slowest as f64 / n),
        "series": {"W1": col(0), "W2": col(1), "simd": col(2), "aimd": col(3), "iiad": col(4)},
    }))
}

fn tradeoff_model(a: &mut Args) -> R<Value> {
    let (alg, beta) = alg_beta(a, &["tcp", "aimd", "iiad", "simd", "aiad"])?;
    let w = a.num("W", None, POS)?;
    let m = a.num("m", None, Range(Some(1.0), true, None, false))?;
    let w_down = a.num("w_down", Some(w), POS)?;
    let t = spectrum::tradeoff(alg, beta, w, m, w_down);
    // Figs. 5/6: each algorithm's (CoV, 1/aggr.) and (CoV, 1/resp.) as β varies with W and m fixed.
    let mut curves = Map::new();
    for other in [spectrum::Alg::Aimd, spectrum::Alg::Iiad, spectrum::Alg::Simd, spectrum::Alg::Aiad] {
        let betas = match other {
            spectrum::Alg::Iiad | spectrum::Alg::Aiad => logspace(0.05, 0.9 * w, 60),
            _ => logspace(0.005, 0.45, 60),
        };
        let pts: Vec<spectrum::Tradeoff> = betas.iter().map(|&b| spectrum::tradeoff(other, b, w, m, w_down)).collect();
        curves.insert(other.name().into(), json!({
            "beta": finite(betas.clone()),
            "cov": finite(pts.iter().map(|p| p.cov).collect()),
            "inv_aggressiveness": finite(pts.iter().map(|p| p.inv_aggressiveness).collect()),
            "inv_responsiveness": finite(pts.iter().map(|p| p.inv_responsiveness).collect()),
        }));
    }
    Ok(json!({
        "beta": num(beta), "keep": num(1.0 - beta), "W": num(w), "m": num(m), "w_down": num(w_down),
        "cov": num(t.cov),
        "inv_aggressiveness": num(t.inv_aggressiveness),
        "inv_responsiveness": num(t.inv_responsiveness),
        "series": Value::Object(curves),
    }))
}

// ----- sastry2005 -----------------------------------------------------------------------------

fn cyrf_model(a: &mut Args) -> R<Value> {
    let f = a.string("f", None, &[])?;
    let g = a.string("g", None, &[])?;
    let consts_map = a.object("consts")?;
    let mut consts = Vec::new();
    for (k, v) in &consts_map {
        let x = v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| ModelError::new("const", format!("{k} must be a finite number; got {v}")))?;
        consts.push((k.clone(), x));
    }
    let windows = a.list("windows", POS)?;
    let d = crate::cc::cyrf::CyrfOptions::default();
    let x_min = a.num("x_min", Some(d.x_min), POS)?;
    let x_max = a.num("x_max", Some(d.x_max), POS)?;
    if x_max <= x_min {
        return Err(ModelError::new("x_max", format!("must exceed x_min ({x_min})")));
    }
    let tolerance = a.num("tolerance", Some(d.tolerance), POS)?;
    let x = a.opt("x", POS)?;
    if let Some(w) = &windows {
        if w.len() < 2 {
            return Err(ModelError::new("windows", "give at least two windows"));
        }
    }
    let opts = crate::cc::cyrf::CyrfOptions { x_min, x_max, tolerance, ..d };
    let an = cyrf::analyse(&f, &g, &consts, opts, windows.as_deref()).map_err(|(which, e)| ModelError::new(which, format!("{e} in '{}'", if which == "f" { &f } else { &g })))?;
    let r = &an.report;
    let opt = |v: Option<f64>| num(v.unwrap_or(-1.0));
    let mut out = json!({
        "class": json!(if r.cyrf { 2 } else if r.one_cyrf { 1 } else { 0 }),
        "cyrf": b01(r.cyrf), "one_cyrf": b01(r.one_cyrf),
        "tcp_friendly": b01(r.tcp_friendly), "tcp_friendly_from": opt(r.tcp_friendly_from),
        "tcp_compatible": b01(r.tcp_compatible),
        "fg_over_x_low": num(r.fg_over_x[0]), "fg_over_x_high": num(r.fg_over_x[1]),
        "compatibility_low": num(r.compatibility[0]), "compatibility_high": num(r.compatibility[1]),
        "one_responsive_from": opt(r.one_responsive_from),
        "x_min": num(x_min), "x_max": num(x_max), "tolerance": num(tolerance),
    });
    if let Some(xv) = x {
        let pf = crate::cc::formula::Program::compile(&f, &["w"], &consts).expect("compiled above");
        let pg = crate::cc::formula::Program::compile(&g, &["w"], &consts).expect("compiled above");
        out["x"] = num(xv);
        out["f_at_x"] = num(pf.eval(&[xv]));
        out["g_at_x"] = num(pg.eval(&[xv]));
        out["compatible_f_at_x"] = num(cyrf::tcp_compatible_f(xv, pg.eval(&[xv])));
    }
    for (name, c) in [("increase", an.increase), ("decrease", an.decrease)] {
        if let Some(c) = c {
            out[format!("{name}_holds")] = b01(c.holds());
            out[format!("{name}_strict")] = b01(c.strict());
            out[format!("{name}_margin")] = num(c.lhs - c.rhs);
            out[format!("{name}_jain_before")] = num(c.jain_before);
            out[format!("{name}_jain_after")] = num(c.jain_after);
        }
    }
    let col = |j: usize| finite(an.grid.iter().map(|r| r[j]).collect());
    out["series"] = json!({"x": col(0), "f": col(1), "g": col(2), "compatible_f": col(3)});
    out["details"] = json!({"class": r.class, "evidence": r.evidence, "f": f, "g": g});
    Ok(out)
}

fn fairness_model(a: &mut Args) -> R<Value> {
    let x = a.list("windows", POS)?.ok_or_else(|| ModelError::new("windows", "is required"))?;
    let dx = a.list("steps", ANY)?.ok_or_else(|| ModelError::new("steps", "is required"))?;
    if x.len() < 2 {
        return Err(ModelError::new("windows", "give at least two windows"));
    }
    if dx.len() != x.len() {
        return Err(ModelError::new("steps", format!("give one step per window ({} windows, {} steps)", x.len(), dx.len())));
    }
    let c = cyrf::fairness_condition(&x, &dx);
    Ok(json!({
        "n": json!(x.len()), "lhs": num(c.lhs), "rhs": num(c.rhs), "margin": num(c.lhs - c.rhs),
        "holds": b01(c.holds()), "strict": b01(c.strict()),
        "jain_before": num(c.jain_before), "jain_after": num(c.jain_after),
    }))
}

// ----- liu2008 --------------------------------------------------------------------------------

fn illinois_params(a: &mut Args) -> R<illinois::IllinoisParams> {
    let d = illinois::IllinoisParams::PAPER;
    let p = illinois::IllinoisParams {
        alpha_max: a.num("alpha_max", Some(d.alpha_max), POS)?,
        alpha_min: a.num("alpha_min", Some(d.alpha_min), POS)?,
        beta_max: a.num("beta_max", Some(d.beta_max), Range(Some(0.0), true, Some(0.5), false))?,
        beta_min: a.num("beta_min", Some(d.beta_min), Range(Some(0.0), true, Some(0.5), false))?,
        eta1: a.num("eta1", Some(d.eta1), Range(Some(0.0), false, Some(1.0), true))?,
        eta2: a.num("eta2", Some(d.eta2), Range(Some(0.0), false, Some(1.0), false))?,
        eta3: a.num("eta3", Some(d.eta3), Range(Some(0.0), false, Some(1.0), false))?,
        ..d
    };
    if p.alpha_min > 1.0 || p.alpha_max < 1.0 || p.alpha_min >= p.alpha_max {
        return Err(ModelError::new("alpha_min", format!("liu2008 needs 0 < alpha_min <= 1 <= alpha_max with alpha_min < alpha_max; got {} and {}", show_num(p.alpha_min), show_num(p.alpha_max))));
    }
    if p.beta_min > p.beta_max {
        return Err(ModelError::new("beta_min", format!("must not exceed beta_max ({})", p.beta_max)));
    }
    if p.eta2 > p.eta3 {
        return Err(ModelError::new("eta2", format!("must not exceed eta3 ({})", p.eta3)));
    }
    Ok(p)
}

fn illinois_model(a: &mut Args) -> R<Value> {
    let p = illinois_params(a)?;
    let dm = a.num("dm", Some(0.04), POS)?;
    let da = a.opt("da", NONNEG)?;
    let [d1, d2, d3] = p.thresholds(dm);
    let [k1, k2, k3, k4] = p.kappas(dm);
    let ds = linspace(0.0, dm, 201);
    let mut out = json!({
        "alpha_max": num(p.alpha_max), "alpha_min": num(p.alpha_min), "beta_max": num(p.beta_max), "beta_min": num(p.beta_min),
        "eta1": num(p.eta1), "eta2": num(p.eta2), "eta3": num(p.eta3), "dm": num(dm),
        "d1": num(d1), "d2": num(d2), "d3": num(d3),
        "kappa1": num(k1), "kappa2": num(k2), "kappa3": num(k3), "kappa4": num(k4),
        "lossy_bound": num(illinois::lossy_bound(p.alpha_max, p.beta_min)),
        "series": {
            "da": finite(ds.clone()),
            "alpha": finite(ds.iter().map(|&d| p.alpha(d, dm)).collect()),
            "beta": finite(ds.iter().map(|&d| p.beta(d, dm)).collect()),
        },
    });
    if let Some(d) = da {
        out["da"] = num(d);
        out["alpha_at_da"] = num(p.alpha(d, dm));
        out["beta_at_da"] = num(p.beta(d, dm));
    }
    Ok(out)
}

fn vegas_model(a: &mut Args) -> R<Value> {
    let gamma = a.num("gamma", Some(2.0), POS)?;
    let capacity = a.num("capacity", Some(1250.0), POS)?;
    let tp = a.num("tp", Some(0.06), POS)?;
    let sigma = a.num("sigma", Some(0.0), NONNEG)?;
    let noisy = a.string("noisy", Some("both"), &["both", "one", "none"])?;
    let n = a.int("n", Some(2), 1, 10_000)? as usize;
    let users_for = |s: f64, mode: &str| -> Vec<illinois::VegasUser> {
        (0..n)
            .map(|i| {
                let noise = match mode {
                    "both" => s,
                    "one" if i == 0 => s,
                    _ => 0.0,
                };
                illinois::VegasUser { gamma, tp, noise }
            })
            .collect()
    };
    let eq = illinois::vegas_equilibrium(&users_for(sigma, &noisy), capacity);
    let sig = logspace(1e-5, 20.0 * eq.noise_free_delay.max(1e-6), 80);
    let sweep = |mode: &str| -> (Vec<f64>, Vec<f64>) {
        let mut noisy_x = Vec::new();
        let mut clean_x = Vec::new();
        for &s in &sig {
            let e = illinois::vegas_equilibrium(&users_for(s, mode), capacity);
            noisy_x.push(e.rates[0]);
            clean_x.push(if mode == "one" && n > 1 { e.rates[1] } else { e.rates[0] });
        }
        (noisy_x, clean_x)
    };
    let (both_x, _) = sweep("both");
    let (one_noisy, one_clean) = sweep("one");
    Ok(json!({
        "gamma": num(gamma), "capacity": num(capacity), "tp": num(tp), "sigma": num(sigma), "n": json!(n),
        "noisy_users": json!(match noisy.as_str() { "both" => n, "one" => 1, _ => 0 }),
        "d_star": num(eq.noise_free_delay),
        "threshold_sigma": num(eq.noise_free_delay),
        "d_a": num(eq.queueing_delay),
        "utilization": num(eq.utilization),
        "fair_share": num(capacity / n as f64),
        "x_first": num(eq.rates[0]), "w_first": num(eq.windows[0]),
        "x_last": num(eq.rates[n - 1]), "w_last": num(eq.windows[n - 1]),
        "w_star": num(gamma * (eq.noise_free_delay + tp) / eq.noise_free_delay),
        "series": {"sigma": finite(sig), "both": finite(both_x), "one_noisy": finite(one_noisy), "one_clean": finite(one_clean)},
    }))
}

fn markov_model(a: &mut Args) -> R<Value> {
    let n = a.int("n", None, 2, 1000)? as usize;
    let cong_s = a.string("congestion", None, &["light", "medium", "heavy"])?;
    let congestion = markov::Congestion::parse(&cong_s).expect("checked");
    let runs = a.int("runs", Some(50), 1, 100_000)? as usize;
    let events = a.int("events", Some(1000), 10, 10_000_000)? as usize;
    let warmup = a.int("warmup", Some(1000), 0, 10_000_000)? as usize;
    let (beta, keep) = a.beta_keep(Some(0.5))?;
    let rtt_min = a.num("rtt_min", Some(0.06), POS)?;
    let rtt_max = a.num("rtt_max", Some(0.12), POS)?;
    if rtt_max < rtt_min {
        return Err(ModelError::new("rtt_max", format!("must be at least rtt_min ({rtt_min})")));
    }
    let seed = a.int("seed", Some(1), 0, u64::MAX)?;
    if (runs as u128) * ((events + warmup) as u128) * (n as u128) > 2_000_000_000 {
        return Err(ModelError::new("runs", "too much work: runs × (events + warmup) × n must be at most 2e9"));
    }
    let cfg = markov::MarkovConfig { n, congestion, runs, warmup, events, beta, rtt_min, rtt_max, seed };
    let res = markov::simulate(&cfg);
    let s = res.summary();
    let mut rtt = Vec::new();
    let mut ratio = Vec::new();
    let mut cov = Vec::new();
    let mut mean = Vec::new();
    let mut xd = Vec::new();
    let mut c1 = Vec::new();
    let mut run_id = Vec::new();
    for (ri, r) in res.runs.iter().enumerate() {
        for i in 0..n {
            rtt.push(r.rtts[i]);
            ratio.push(r.mean[i] / r.fair[i]);
            cov.push(r.std[i] / r.mean[i]);
            mean.push(r.mean[i]);
            xd.push(r.xd_mean[i]);
            c1.push(r.c1[i]);
            run_id.push(ri as f64);
        }
    }
    Ok(json!({
        "n": json!(n), "runs": json!(runs), "events": json!(events), "warmup": json!(warmup),
        "beta": num(beta), "keep": num(keep), "rtt_min": num(rtt_min), "rtt_max": num(rtt_max), "seed": json!(seed),
        "m_max": num(s.m_max),
        "ratio_min": num(s.ratio_min), "ratio_max": num(s.ratio_max), "ratio_mean": num(s.ratio_mean),
        "cov_max": num(s.cov_max), "cov_mean": num(s.cov_mean),
        "slope": num(-s.one_plus_mu), "one_plus_mu": num(s.one_plus_mu), "mu": num(s.one_plus_mu - 1.0),
        "one_plus_mu_min": num(s.one_plus_mu_min), "one_plus_mu_max": num(s.one_plus_mu_max),
        "c1_dev_max": num(s.c1_dev_max), "c1_dev_mean": num(s.c1_dev_mean),
        "series": {"run": finite(run_id), "rtt": finite(rtt), "ratio": finite(ratio), "cov": finite(cov), "mean": finite(mean),
                   "xd": finite(xd), "c1": finite(c1)},
    }))
}

// ----- Chiu–Jain ------------------------------------------------------------------------------

/// Every flow's algorithm and parameter object, and the number of flows.
type FlowLaws = (Vec<String>, Vec<Map<String, Value>>, usize);

/// `alg` and `params` of the Chiu–Jain model: one algorithm (a string) and one parameter object
/// for every flow, or a list of each with one entry per flow (mixed algorithms, sastry2005 §III's
/// "different protocols"; jin2001 Fig. 3 compares SIMD with AIMD). Returns (algorithms, params,
/// n) with n taken from the lists when `n` is not given.
fn chiu_jain_flows(a: &mut Args) -> R<FlowLaws> {
    let per_flow = |name: &str, v: &Value| -> R<Vec<Value>> {
        match v {
            Value::Array(items) if items.is_empty() => Err(ModelError::new(name, "must not be an empty list")),
            Value::Array(items) => Ok(items.clone()),
            other => Ok(vec![other.clone()]),
        }
    };
    let algs: Vec<String> = match a.raw("alg") {
        None => return Err(ModelError::new("alg", "is required")),
        Some(v) => per_flow("alg", v)?
            .into_iter()
            .map(|x| match x {
                Value::String(s) => Ok(s),
                other => Err(ModelError::new("alg", format!("must be an algorithm name or a list of names (one per flow); got {other}"))),
            })
            .collect::<R<_>>()?,
    };
    let params: Vec<Map<String, Value>> = match a.raw("params") {
        None => vec![Map::new()],
        Some(v) => per_flow("params", v)?
            .into_iter()
            .map(|x| match x {
                Value::Object(m) => Ok(m),
                Value::Null => Ok(Map::new()),
                other => Err(ModelError::new("params", format!("must be an object of parameters or a list of them (one per flow); got {other}"))),
            })
            .collect::<R<_>>()?,
    };
    let listed = algs.len().max(params.len());
    let n = match a.raw("n") {
        None if listed > 1 => listed,
        _ => a.int("n", Some(2), 1, 1000)? as usize,
    };
    for (name, len) in [("alg", algs.len()), ("params", params.len())] {
        if len != 1 && len != n {
            return Err(ModelError::new(name, format!("give one entry for every flow or one for all ({n} flows, {len} entries)")));
        }
    }
    let pick = |i: usize, len: usize| if len == 1 { 0 } else { i };
    let algs = (0..n).map(|i| algs[pick(i, algs.len())].clone()).collect();
    let params = (0..n).map(|i| params[pick(i, params.len())].clone()).collect();
    Ok((algs, params, n))
}

fn chiu_jain_model(a: &mut Args) -> R<Value> {
    let (algs, params, n) = chiu_jain_flows(a)?;
    let w = a.num("W", None, POS)?;
    let init = match a.list("init", POS)? {
        Some(v) => {
            if v.len() != n {
                return Err(ModelError::new("init", format!("give one initial window per flow ({n} flows, {} windows)", v.len())));
            }
            v
        }
        // spread below the efficiency line: W·(i+1)/(n(n+1)), summing to W/2
        None => (0..n).map(|i| w * (i + 1) as f64 / (n * (n + 1)) as f64).collect(),
    };
    let rounds = a.int("rounds", Some(2000), 1, 2_000_000)? as usize;
    let eps = a.num("eps", Some(1.0), POS)?;
    let rtt = a.num("rtt", Some(0.1), POS)?;
    let target = a.num("jain_target", Some(0.99), Range(Some(0.0), true, Some(1.0), true))?;
    if (rounds as f64) * w * (n as f64).max(1.0) > 5e9 {
        return Err(ModelError::new("rounds", "too much work: rounds × W must be at most 5e9"));
    }
    let flows: Vec<chiu_jain::FlowSpec> = init
        .iter()
        .zip(algs.iter().zip(&params))
        .map(|(&x, (alg, p))| chiu_jain::FlowSpec { algorithm: alg.clone(), params: p.clone(), initial: x })
        .collect();
    let cfg = chiu_jain::ChiuJainConfig { flows, capacity: w, rounds, eps, rtt, jain_target: target };
    let r = chiu_jain::run(&cfg)?;
    let opt = |v: Option<usize>| json!(v.map_or(-1, |x| x as i64));
    let mut out = json!({
        "n": json!(n), "W": num(w), "rounds": json!(rounds), "eps": num(eps), "rtt": num(rtt), "jain_target": num(target),
        "t1": opt(r.t1),
        "delta_t1": num(r.delta_t1.unwrap_or(-1.0)),
        "t2": opt(r.t2),
        "t2_epochs": opt(r.t2_epochs),
        "t1_plus_t2": json!(match (r.t1, r.t2) { (Some(a), Some(b)) => (a + b) as i64, _ => -1 }),
        "rounds_to_jain": opt(r.rounds_to_jain),
        "converged": b01(r.rounds_to_jain.is_some()),
        "jain_initial": num(r.jain[0]),
        "jain_final": num(*r.jain.last().unwrap()),
        "efficiency": num(if r.efficiency.is_finite() { r.efficiency } else { -1.0 }),
        "loss_events": json!(r.loss_events),
    });
    let mixed = algs.iter().any(|x| x != &algs[0]) || r.params.iter().any(|p| p != &r.params[0]);
    if !mixed {
        if let Some(Value::Object(p)) = r.params.first() {
            for (k, v) in p {
                out[format!("param_{k}")] = v.clone();
            }
        }
    } else {
        // one flat, named entry per flow: alg_1, param_1_beta, ... (canonical parameters)
        for (i, (alg, p)) in algs.iter().zip(&r.params).enumerate() {
            out[format!("alg_{}", i + 1)] = json!(alg);
            if let Value::Object(p) = p {
                for (k, v) in p {
                    out[format!("param_{}_{k}", i + 1)] = v.clone();
                }
            }
        }
    }
    let per_flow: Vec<Value> = (0..n).map(|i| finite(r.windows.iter().map(|w| w[i]).collect())).collect();
    out["series"] = json!({
        "windows": per_flow,
        "jain": finite(r.jain.clone()),
        "feedback": r.feedback.iter().map(|&b| json!(if b { 1 } else { 0 })).collect::<Vec<_>>(),
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_parameter() {
        let e = call("rate", &json!({"alpha": 1, "beta": 1.5, "p": 0.01, "rtt": 0.1})).unwrap_err();
        assert_eq!(e.field, "beta");
        let e = call("rate", &json!({"alpha": 1, "beta": 0.5, "p": 0.0, "rtt": 0.1})).unwrap_err();
        assert_eq!(e.field, "p");
        let e = call("spectrum", &json!({"k": -1, "l": 1, "beta": 0.1, "wmax": 10})).unwrap_err();
        assert_eq!(e.field, "k");
        let e = call("rate", &json!({"alpha": 1, "beta": 0.5, "keep": 0.5, "p": 0.1, "rtt": 0.1})).unwrap_err();
        assert!(e.message.contains("only one"));
        let e = call("rate", &json!({"alpha": 1, "beta": 0.5, "p": 0.1, "rtt": 0.1, "bogus": 1})).unwrap_err();
        assert_eq!(e.field, "bogus");
    }

    #[test]
    fn spectrum_has_eq10_and_eq14() {
        // SIMD, β = 1/16, w_max = 50: eq. 10's c is Γ(3) = 2 times eq. 5's.
        let v = call("spectrum", &json!({"k": -0.5, "l": 1, "beta": 0.0625, "wmax": 50})).unwrap();
        let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {}", v[k]));
        assert!((f("c_eq10") / f("c_eq5") - 2.0).abs() < 1e-12 && (f("c_eq10_over_eq5") - 2.0).abs() < 1e-12);
        assert!((f("gamma_u1") - 2.0).abs() < 1e-12 && (f("alpha_eq10") / f("alpha_eq4") - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(f("app_b_covers"), 0.0);
        assert!(v.get("eq14_holds").is_none(), "eq. 14's keys only with delta_i and delta_d");
        // AIAD (0, 0), App. B's extreme case, with Δ_I = 0.9, Δ_D = 0.3: 1.8 < 2.
        let v = call("spectrum", &json!({"k": 0, "l": 0, "beta": 0.67, "wmax": 30, "delta_i": 0.9, "delta_d": 0.3})).unwrap();
        assert_eq!((v["app_b_covers"].as_f64(), v["eq14_holds"].as_f64()), (Some(1.0), Some(1.0)));
        assert!((v["eq14_lhs"].as_f64().unwrap() - 1.8).abs() < 1e-12);
        assert_eq!(v["app_b_fairer"], v["app_b_crossing"]);
        let e = call("spectrum", &json!({"k": 0, "l": 0, "beta": 0.67, "wmax": 30, "delta_i": 0.9})).unwrap_err();
        assert_eq!(e.field, "delta_d");
        let e = call("spectrum", &json!({"k": 0, "l": 0, "beta": 0.67, "wmax": 30, "delta_i": 0.9, "delta_d": 1.0})).unwrap_err();
        assert_eq!(e.field, "delta_d");
    }

    #[test]
    fn summaries_are_flat_numbers() {
        let v = call("rate", &json!({"alpha": 0.31, "keep": 0.875, "p": 0.01, "rtt": 0.1})).unwrap();
        for (k, x) in v.as_object().unwrap() {
            if k != "series" {
                assert!(x.is_number(), "{k}: {x}");
            }
        }
    }
}
