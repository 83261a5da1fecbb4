//! Fuzzing the engine (issue 17): small random valid scenarios — every registered algorithm
//! with random parameters inside their documented ranges, UDP sources, DropTail or RED, loss
//! models, a dumbbell or a three-node graph, reverse traffic, staggered starts and stops —
//! run twice. The run must not panic, must be byte-identical the second time, and no flow may
//! deliver more packets than it sent.
//!
//! Cases: `TCPF_FUZZ_CASES` (default 1000, a few seconds in a release build), e.g.
//! `TCPF_FUZZ_CASES=5000 cargo test --release -p tcpf-core --test fuzz_engine` (see
//! docs/testing.md).

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{json, Value};
use std::sync::OnceLock;
use tcpf_core::api;

fn config(default: u32) -> Config {
    let cases = std::env::var("TCPF_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    Config { cases, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), ..Config::default() }
}

/// The registry's controllers (window and rate kinds; UDP sources are drawn separately and
/// aliases are their canonical entries again): (name, is a window controller,
/// [(param, default, min, max)] for the numeric parameters).
type Algo = (String, bool, Vec<(String, Option<f64>, Option<f64>, Option<f64>)>);

fn registry() -> &'static [Algo] {
    static R: OnceLock<Vec<Algo>> = OnceLock::new();
    R.get_or_init(|| {
        let list: Value = serde_json::from_str(&api::algorithms()).unwrap();
        list.as_array()
            .unwrap()
            .iter()
            .filter(|a| (a["kind"] == "window" || a["kind"] == "rate") && a.get("alias_of").is_none())
            .map(|a| {
                let params = a["params"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|p| p["kind"] == "number")
                    .map(|p| (p["name"].as_str().unwrap().to_string(), p["default"].as_f64(), p["min"].as_f64(), p["max"].as_f64()))
                    .collect();
                (a["name"].as_str().unwrap().to_string(), a["kind"] == "window", params)
            })
            .collect()
    })
}

/// Parameters for `algo`: each numeric one, with probability 1/2, drawn in its range near its
/// default (a factor 1/4 to 4, clipped inside open bounds); required ones (binomial's and
/// history's k and l) always, in (0, 1]. The window is capped by `max_window`, so the laws stay
/// modest in memory.
fn params(algo: &Algo, draws: &[(bool, f64)]) -> Value {
    let mut m = serde_json::Map::new();
    if algo.0 == "formula" {
        let pairs = [("a*w^0.5/w + 1/w", "b*w"), ("1", "0.5*w"), ("log(w+1)", "max(1, w/8)"), ("exp(-t) + 0.2", "w - w0 + 1"), ("min(w_max, 4)/w", "0.3*w*rtt/min_rtt")];
        let (i, d) = pairs[(draws[0].1 * pairs.len() as f64) as usize % pairs.len()];
        m.insert("increase".into(), json!(i));
        m.insert("decrease".into(), json!(d));
        m.insert("a".into(), json!(1.0 + draws[1].1));
        m.insert("b".into(), json!(0.1 + 0.4 * draws[2].1));
        return Value::Object(m);
    }
    for (k, (name, default, lo, hi)) in algo.2.iter().enumerate() {
        let (take, u) = draws[k % draws.len()];
        let x = match default {
            Some(d) if !take => continue,
            Some(d) if *d != 0.0 => d * 4f64.powf(2.0 * u - 1.0),
            _ => 0.05 + 0.95 * u,
        };
        let eps = 1e-6;
        let x = match (lo, hi) {
            (Some(l), Some(h)) => x.clamp(l + eps * (h - l).max(1.0), h - eps * (h - l).max(1.0)),
            (Some(l), None) => x.max(l + eps),
            (None, Some(h)) => x.min(h - eps),
            _ => x,
        };
        // Keep the window laws modest: memory bounds are a validation concern, not this fuzzer's.
        m.insert(name.clone(), json!(x));
    }
    Value::Object(m)
}

/// A flow group: algorithm, count, reversed, the draws of its knobs, start and stop.
type Group = (Index, u32, bool, Vec<(bool, f64)>, f64, Option<f64>);

#[derive(Debug, Clone)]
struct Knobs {
    duration: f64,
    rate_mbps: f64,
    delay_ms: f64,
    red: bool,
    limit: f64,
    graph: bool,
    loss: u8,
    groups: Vec<Group>,
    udp: u8,
    seed: u64,
    delayed_ack: bool,
    recovery: Index,
    timeseries: bool,
}

fn knobs() -> impl Strategy<Value = Knobs> {
    let group = (any::<Index>(), 1u32..4, prop::bool::weighted(0.15), prop::collection::vec((any::<bool>(), 0.0f64..1.0), 8), 0.0f64..1.0, prop::option::of(1.0f64..3.0));
    (
        (0.5f64..3.0, 0.5f64..20.0, 1.0f64..80.0, any::<bool>(), 0.5f64..4.0, prop::bool::weighted(0.3), 0u8..6),
        (prop::collection::vec(group, 1..4), 0u8..4, 0u64..1000, any::<bool>(), any::<Index>(), prop::bool::weighted(0.2)),
    )
        .prop_map(|((duration, rate_mbps, delay_ms, red, limit, graph, loss), (groups, udp, seed, delayed_ack, recovery, timeseries))| Knobs {
            duration,
            rate_mbps,
            delay_ms,
            red,
            limit,
            graph,
            loss,
            groups,
            udp,
            seed,
            delayed_ack,
            recovery,
            timeseries,
        })
}

fn scenario(k: &Knobs) -> Value {
    let reg = registry();
    let loss = match k.loss {
        0 => json!({"model": "bernoulli", "p": 0.01}),
        1 => json!({"model": "periodic", "packets": 50}),
        2 => json!({"model": "general_exponential", "mean": 0.3, "cv": 1.5}),
        3 => json!({"model": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.3, "loss_bad": 0.5}),
        _ => Value::Null,
    };
    let mut link = json!({"rate": format!("{}Mbps", k.rate_mbps), "delay": format!("{}ms", k.delay_ms), "queue": if k.red { "red" } else { "droptail" }, "limit": format!("{}bdp", k.limit)});
    if !loss.is_null() {
        link["loss"] = loss;
    }
    let mut flows = vec![];
    for (i, (algo, count, reverse, draws, start, stop)) in k.groups.iter().enumerate() {
        let a = &reg[algo.index(reg.len())];
        let mut f = json!({"count": count, "algorithm": a.0, "params": params(a, draws), "start": format!("0..{}", start * k.duration * 0.5)});
        if a.1 {
            f["recovery"] = json!(["reno", "newreno", "newreno-impatient", "sack", "linux"][k.recovery.index(5)]);
        }
        if *reverse && !k.graph {
            f["direction"] = json!("reverse");
        }
        if let Some(s) = stop {
            f["stop"] = json!(k.duration * 0.5 + s * k.duration * 0.15);
        }
        if k.graph {
            f["path"] = if i % 2 == 0 { json!(["a", "b", "c"]) } else { json!(["b", "c"]) };
        }
        flows.push(f);
    }
    let udp_path = |f: &mut Value| {
        if k.graph {
            f["path"] = json!(["a", "b", "c"]);
        }
    };
    match k.udp {
        1 => flows.push(json!({"algorithm": "cbr", "rate": format!("{}Mbps", k.rate_mbps * 0.3), "on": 0.4, "off": 0.3, "phase": 0.1})),
        2 => flows.push(json!({"algorithm": "pareto", "rate": format!("{}Mbps", k.rate_mbps * 0.5), "on": 0.2, "off": 0.4, "shape": 1.2})),
        3 => flows.push(json!({"algorithm": "cbr", "steps": [[0, "1Mbps"], [0.3, 0], [0.6, format!("{}Mbps", k.rate_mbps * 2.0)]], "repeat": 1.0})),
        _ => {}
    }
    if k.udp > 0 {
        udp_path(flows.last_mut().unwrap());
    }
    let mut s = json!({"duration": k.duration, "seed": k.seed, "max_window": 256, "tcp": {"delayed_ack": k.delayed_ack}, "flows": flows, "loss_log": true});
    if k.timeseries {
        s["timeseries"] = json!(k.duration / 7.0);
    }
    if k.graph {
        let mut second = link.clone();
        second["rate"] = json!(format!("{}Mbps", k.rate_mbps * 1.5));
        link["from"] = json!("a");
        link["to"] = json!("b");
        second["from"] = json!("b");
        second["to"] = json!("c");
        s["links"] = json!([link, second]);
    } else {
        s["bottleneck"] = link;
    }
    s
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn random_small_scenarios_run_deterministically(k in knobs()) {
        let mut s = scenario(&k);
        // Parameters drawn one by one may break a rule between them (illinois' alpha_min <
        // alpha_max, …): then that group keeps only its required parameters.
        for _ in 0..4 {
            match api::normalize(&s.to_string()) {
                Ok(_) => break,
                Err(e) => {
                    let g: usize = e.field.strip_prefix("flows[").and_then(|r| r.split(']').next()).and_then(|n| n.parse().ok()).ok_or_else(|| TestCaseError::fail(format!("the generator made an invalid scenario: {e}\n{s}")))?;
                    let algo = s["flows"][g]["algorithm"].as_str().unwrap().to_string();
                    let keep = ["k", "l", "increase", "decrease", "a", "b"];
                    let p = &mut s["flows"][g]["params"];
                    prop_assert!(p.is_object() && algo != "formula", "the generator made an invalid scenario: {}\n{}", e, s);
                    p.as_object_mut().unwrap().retain(|name, _| keep.contains(&name.as_str()) && ["binomial", "history"].contains(&algo.as_str()));
                }
            }
        }
        let text = s.to_string();
        if let Err(e) = api::normalize(&text) {
            return Err(TestCaseError::fail(format!("the generator made an invalid scenario: {e}\n{text}")));
        }
        // A run may end in an error (a formula evaluating to NaN), never in a panic, and the
        // same way twice.
        let a = api::run(&text, None, None).map_err(|e| e.to_string());
        let b = api::run(&text, None, None).map_err(|e| e.to_string());
        prop_assert_eq!(&a, &b, "not deterministic: {}", text);
        if let Ok(out) = a {
            let r: Value = serde_json::from_str(&out).unwrap();
            for f in r["flows"].as_array().unwrap() {
                let (sent, got) = (f["packets_sent"].as_u64().unwrap(), f["packets_delivered"].as_u64().unwrap());
                prop_assert!(got <= sent, "flow {} delivered {} of {} sent: {}", f["id"], got, sent, text);
            }
        }
    }
}
