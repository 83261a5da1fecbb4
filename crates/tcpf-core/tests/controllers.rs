//! Issue #4's simulation-level acceptance checks for the controllers (run with `--release`;
//! each prints the numbers it checks).

use serde_json::{json, Value};
use std::time::Instant;
use tcpf_core::api;

mod common;
use tcpf_core::cc::cyrf::{classify, classify_formulas, CyrfLaw, CyrfOptions, CyrfReport};
use tcpf_core::registry::{self, validate_window as validate, Kind};

fn run(s: &Value) -> Value {
    serde_json::from_str(&api::run(&s.to_string(), None, None).expect("valid scenario")).unwrap()
}

// ----- jin2001 Fig. 7 --------------------------------------------------------------------------

/// jin2001 Fig. 7: one flow over a fast link that drops each packet with probability p;
/// Table 4's max window 128, TCP SACK, 0.1 s timer granularity.
/// jin2001 Fig. 7's scenario (experiments/jin2001/fig7-bernoulli/scenario.toml, the one home
/// of the setup) with the algorithm, p, seed and run length of this point.
fn fig7(algorithm: &str, params: &Value, p: f64, seed: u64, duration: f64) -> Value {
    let mut s = common::experiment_scenario("jin2001", "fig7-bernoulli");
    s["duration"] = json!(duration);
    s["seed"] = json!(seed);
    s["measure"]["to"] = json!(duration);
    s["bottleneck"]["loss"]["p"] = json!(p);
    s["flows"][0]["algorithm"] = json!(algorithm);
    s["flows"][0]["params"] = params.clone();
    s
}

/// Mean throughput (packets/s) and timeouts over seeds.
fn fig7_mean(algorithm: &str, params: &Value, p: f64, seeds: &[u64], duration: f64) -> (f64, f64) {
    let (mut x, mut to) = (0.0, 0.0);
    for &s in seeds {
        let r = run(&fig7(algorithm, params, p, s, duration));
        x += r["flows"][0]["throughput_bps"].as_f64().unwrap() / 8000.0;
        to += r["flows"][0]["timeouts"].as_f64().unwrap();
    }
    (x / seeds.len() as f64, to / seeds.len() as f64)
}

#[test]
fn jin2001_fig7_simd_is_tcp_friendly_under_bernoulli_loss() {
    let t0 = Instant::now();
    let ps = [0.005, 0.01, 0.02, 0.05, 0.10, 0.15];
    let algs = [
        ("SIMD(1/16)", "simd", json!({"beta": 0.0625})),
        ("SIMD(1/8)", "simd", json!({"beta": 0.125})),
        ("SIMD(1/4)", "simd", json!({"beta": 0.25})),
        ("AIMD(1/5,1/8)", "gaimd", json!({"alpha": 0.2, "beta": 0.125})),
    ];
    // 1000 s at RTT ≈ 0.102 s: ≈ 9600 RTTs measured per run; 8 seeds.
    let seeds: Vec<u64> = (1..=8).collect();
    let duration = 1000.0;
    println!("jin2001 Fig. 7: throughput normalised by TCP SACK's (same p, same seeds), mean of {} seeds x {} s", seeds.len(), duration - 20.0);
    println!("{:>6} {:>10} {:>8} | {}", "p", "TCP pkt/s", "TCP TOs", algs.iter().map(|a| format!("{:>14}", a.0)).collect::<Vec<_>>().join(""));
    let mut simd16 = vec![];
    for &p in &ps {
        let (tcp, tcp_to) = fig7_mean("tcp", &json!({}), p, &seeds, duration);
        let mut row = format!("{:>6.3} {:>10.2} {:>8.1} |", p, tcp, tcp_to);
        for (i, (_, a, par)) in algs.iter().enumerate() {
            let (x, _) = fig7_mean(a, par, p, &seeds, duration);
            row += &format!("{:>14.3}", x / tcp);
            if i == 0 {
                simd16.push((p, x / tcp));
            }
        }
        println!("{row}");
    }
    println!("({:.1} s)", t0.elapsed().as_secs_f64());
    for (p, r) in simd16 {
        assert!((0.75..=1.3).contains(&r), "SIMD(1/16) at p = {p}: {r}");
        if p <= 0.05 {
            assert!((0.85..=1.15).contains(&r), "SIMD(1/16) at p = {p}: {r}");
        }
    }
}

// ----- sastry2005 classification -----------------------------------------------------------

#[test]
fn cyrf_classification_reproduces_sastry2005() {
    let o = CyrfOptions::default();
    let log = CyrfLaw::Log { c: 0.5 };
    let sig = CyrfLaw::Sigmoid { c: 0.5, a: 0.5, k: 10.0, s: 0.0 };
    // Binomial: f = x^(k+1)/α, g = β·x^(l−1) (sastry2005 eq. 17).
    let binomial = |k: f64, l: f64, a: f64, b: f64| classify(move |x| x.powf(k + 1.0) / a, move |x| b * x.powf(l - 1.0), o);
    let rows: Vec<(&str, CyrfReport)> = vec![
        ("TCP", classify(|x| x, |_| 0.5, o)),
        ("GAIMD(0.2, 0.125)", classify(|x| x / 0.2, |_| 0.125, o)),
        ("GAIMD(0.31, 0.125)", classify(|x| x / 0.31, |_| 0.125, o)),
        ("IIAD(1, 0.67)", binomial(1.0, 0.0, 1.0, 0.67)),
        ("SQRT(1, 0.67)", binomial(0.5, 0.5, 1.0, 0.67)),
        ("binomial k=0.25 l=0.75", binomial(0.25, 0.75, 1.0, 0.5)),
        ("binomial k=1 l=0.5 (k+l!=1)", binomial(1.0, 0.5, 1.0, 0.67)),
        ("LOG", classify(|x| log.f(x), |x| log.g(x), o)),
        ("LOG as formulas", classify_formulas("w^2/log(w)", "0.5*log(w)/w", &[], o).unwrap()),
        ("SIGMOID(0.5, 0.5, 10)", classify(|x| sig.f(x), |x| sig.g(x), o)),
    ];
    println!("sastry2005 classification over windows [{}, {}] ({} points, tolerance {}%):", o.x_min, o.x_max, o.points, o.tolerance * 100.0);
    println!("{:<30} {:<8} {:>5} {:>7} {:>13} {:>15} {:>11}", "pair", "class", "CYRF", "1-CYRF", "TCP-friendly", "friendly from", "f*g/x");
    for (name, r) in &rows {
        println!(
            "{:<30} {:<8} {:>5} {:>7} {:>13} {:>15} {:>5.3}..{:.3}",
            name,
            r.class,
            r.cyrf,
            r.one_cyrf,
            r.tcp_friendly,
            r.tcp_friendly_from.map_or("never".to_string(), |x| format!("{x:.1}")),
            r.fg_over_x[0],
            r.fg_over_x[1]
        );
        for e in &r.evidence {
            println!("    {e}");
        }
    }
    let get = |n: &str| &rows.iter().find(|(m, _)| *m == n).unwrap().1;
    // Theorem 11 / §IV-B: TCP and GAIMD are CYRF; TCP-friendly binomial and LOG are 1-CYRF only.
    for n in ["TCP", "GAIMD(0.2, 0.125)", "GAIMD(0.31, 0.125)"] {
        assert_eq!(get(n).class, "CYRF", "{n}");
        assert!(get(n).one_cyrf, "{n}: smooth 1-responsive CYRF is also 1-CYRF (Theorem 11b)");
    }
    for n in ["IIAD(1, 0.67)", "SQRT(1, 0.67)", "binomial k=0.25 l=0.75", "LOG", "LOG as formulas"] {
        assert_eq!(get(n).class, "1-CYRF", "{n}");
        assert!(get(n).g_decreasing.is_some(), "{n}: g decreases, so not CYRF");
    }
    // §VI-C: SIGMOID is CYRF.
    assert_eq!(get("SIGMOID(0.5, 0.5, 10)").class, "CYRF");
    // Corollary 13: f·g ∝ x for TCP, GAIMD, TCP-friendly binomial and LOG.
    for n in ["TCP", "GAIMD(0.2, 0.125)", "GAIMD(0.31, 0.125)", "IIAD(1, 0.67)", "SQRT(1, 0.67)", "binomial k=0.25 l=0.75", "LOG", "LOG as formulas"] {
        assert!(get(n).tcp_friendly, "{n}");
    }
    assert!(!get("binomial k=1 l=0.5 (k+l!=1)").tcp_friendly);
    // SIGMOID only well above its knee (k = 10).
    let s = get("SIGMOID(0.5, 0.5, 10)");
    assert!(!s.tcp_friendly);
    let from = s.tcp_friendly_from.unwrap();
    assert!((15.0..25.0).contains(&from), "SIGMOID friendly from {from}");
    // Corollary 15: TCP and TD-curve GAIMD are TCP-compatible; GAIMD(0.31, 1/8) (TO curve) is not.
    assert!(get("TCP").tcp_compatible && get("GAIMD(0.2, 0.125)").tcp_compatible);
    assert!(!get("GAIMD(0.31, 0.125)").tcp_compatible);
}

// ----- formula-defined LOG against the built-in ------------------------------------------

fn log_scenario(algorithm: &str, params: Value, seed: u64) -> Value {
    json!({
        "duration": 60, "seed": seed,
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "queue": "red", "limit": "2.5bdp"},
        "tcp": {"tick": 0.1},
        "flows": [{"count": 16, "algorithm": algorithm, "params": params, "access_delay": "1ms..20ms", "start": "0..2"},
                  {"count": 4, "algorithm": "tcp", "access_delay": "1ms..20ms", "start": "0..2"}]
    })
}

/// Per-flow counters (everything but the algorithm's name and parameters).
fn counters(r: &Value) -> Vec<Value> {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let mut f = f.clone();
            let o = f.as_object_mut().unwrap();
            o.remove("algorithm");
            o.remove("params");
            f
        })
        .collect()
}

#[test]
fn formula_log_matches_builtin_log_counter_for_counter() {
    let formula = json!({"increase": "log(w)/w", "decrease": "0.5*log(w)"});
    for seed in [1, 2, 3] {
        let a = run(&log_scenario("log", json!({}), seed));
        let b = run(&log_scenario("formula", formula.clone(), seed));
        let (ca, cb) = (counters(&a), counters(&b));
        assert_eq!(ca.len(), 20);
        for (i, (x, y)) in ca.iter().zip(&cb).enumerate() {
            assert_eq!(x, y, "seed {seed}, flow {i}");
        }
        assert_eq!(a["links"], b["links"], "seed {seed}");
        let sent: u64 = ca.iter().take(16).map(|f| f["packets_sent"].as_u64().unwrap()).sum();
        let losses: u64 = ca.iter().take(16).map(|f| f["loss_events"].as_u64().unwrap()).sum();
        println!("seed {seed}: 16 LOG flows, built-in and formula identical: {sent} packets sent, {losses} loss events");
    }
    // Speed: the best of 3 alternating runs of each (printed, not asserted).
    let (sa, sb) = (log_scenario("log", json!({}), 7).to_string(), log_scenario("formula", formula, 7).to_string());
    let (mut ta, mut tb) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        let t = Instant::now();
        api::run(&sa, None, None).unwrap();
        ta = ta.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        api::run(&sb, None, None).unwrap();
        tb = tb.min(t.elapsed().as_secs_f64());
    }
    println!("wall time, best of 3: built-in log {:.3} s, formula log {:.3} s, ratio {:.3}", ta, tb, tb / ta);
}

// ----- every preset in a 32-flow dumbbell ---------------------------------------------------

/// Parameters that make each registered algorithm runnable (required ones filled in).
fn runnable_params(name: &str) -> Value {
    match name {
        "binomial" => json!({"k": 0.5, "l": 0.5}),
        "history" => json!({"k": -0.5, "l": 1}),
        "formula" => json!({"f": "w^2/log(w)", "g": "0.5*log(w)/w"}),
        _ => json!({}),
    }
}

#[test]
fn every_preset_runs_in_a_32_flow_dumbbell_for_10_seeds() {
    let t0 = Instant::now();
    let names: Vec<&str> = registry::names(Kind::Window);
    assert!(names.len() >= 16, "{names:?}");
    for name in &names {
        let params = runnable_params(name);
        let mut goodput = 0.0;
        let mut losses = 0u64;
        let mut timeouts = 0u64;
        for seed in 1..=10u64 {
            // Alternate DropTail and RED, and 1 and 10 Mbps bottlenecks, across seeds.
            let (queue, rate) = match seed % 4 {
                0 => ("droptail", "10Mbps"),
                1 => ("red", "10Mbps"),
                2 => ("droptail", "2Mbps"),
                _ => ("red", "2Mbps"),
            };
            let s = json!({
                "duration": 30, "seed": seed, "max_window": 128,
                "bottleneck": {"rate": rate, "delay": "20ms", "queue": queue},
                "tcp": {"tick": 0.1},
                "flows": [{"count": 32, "algorithm": name, "params": params, "access_delay": "1ms..30ms", "start": "0..2"}]
            });
            let r = run(&s);
            let flows = r["flows"].as_array().unwrap();
            assert_eq!(flows.len(), 32);
            for f in flows {
                let cwnd = f["mean_cwnd"].as_f64().unwrap();
                assert!((1.0..=128.0).contains(&cwnd), "{name} seed {seed}: mean cwnd {cwnd}");
                goodput += f["goodput_bps"].as_f64().unwrap();
                losses += f["loss_events"].as_u64().unwrap();
                timeouts += f["timeouts"].as_u64().unwrap();
            }
            let util = r["links"][0]["utilization"].as_f64().unwrap();
            assert!(util > 0.5, "{name} seed {seed}: utilisation {util}");
        }
        println!("{name:>15}: 10 seeds x 32 flows: mean goodput {:.1} kb/s per flow, {losses} loss events, {timeouts} timeouts", goodput / 320.0 / 1000.0);
    }
    println!("({:.1} s)", t0.elapsed().as_secs_f64());
}

// ----- parameters, warnings, the algorithms list ------------------------------------------

#[test]
fn warnings_and_errors_reach_the_caller() {
    let p = validate("binomial", json!({"k": 1, "l": 1}).as_object().unwrap()).unwrap();
    assert_eq!(p.warnings.len(), 1);
    println!("binomial(1, 1): warning: {}", p.warnings[0]);
    let e = validate("formula", json!({"increase": "log(w))", "decrease": "1"}).as_object().unwrap()).unwrap_err();
    println!("formula: {e}");
    assert_eq!(e.to_string(), "increase: unexpected ')' at column 7");
    // Through the scenario layer the field path is prefixed.
    let s = json!({"duration": 1, "bottleneck": {"rate": "1Mbps", "delay": "10ms"},
                   "flows": [{"count": 1, "algorithm": "formula", "params": {"increase": "log(w))", "decrease": "1"}}]});
    let e = api::run(&s.to_string(), None, None).unwrap_err();
    assert_eq!(e.to_string(), "flows[0].params.increase: unexpected ')' at column 7");
}

#[test]
fn algorithms_list_has_params_units_sources_and_taxonomy() {
    let list: Value = serde_json::from_str(&api::algorithms()).unwrap();
    let list = list.as_array().unwrap();
    for a in list {
        assert!(!a["source"].as_str().unwrap().is_empty(), "{}", a["name"]);
        for p in a["params"].as_array().unwrap() {
            assert!(p["kind"].is_string() && p["doc"].is_string(), "{p}");
        }
    }
    let tax = |n: &str| list.iter().find(|a| a["name"] == n).unwrap()["taxonomy"].clone();
    assert_eq!(tax("iiad"), json!({"fairness": "window-based", "increase": "historical", "curve": "sublinear", "history": "non-historical"}));
    assert_eq!(tax("sqrt")["history"], "variable");
    assert_eq!(tax("simd")["curve"], "superlinear");
    assert_eq!(tax("aiad_h")["curve"], "linear");
    assert_eq!(tax("gaimd")["increase"], "non-historical");
    let simd = list.iter().find(|a| a["name"] == "simd").unwrap();
    let rule = simd["params"].as_array().unwrap().iter().find(|p| p["name"] == "alpha_rule").unwrap();
    assert_eq!(rule["default"], "exact");
    assert_eq!(rule["choices"], json!(["exact", "approx"]));
    let f = list.iter().find(|a| a["name"] == "formula").unwrap();
    assert_eq!(f["named_numbers"], true);
}
