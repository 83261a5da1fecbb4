//! Formula-defined LOG against the built-in LOG preset:
//! `cargo run --release -p tcpf-core --example formula_vs_builtin [duration_s] [repeats]`.
//!
//! 1. Simulation: jin2001's reference dumbbell (60 Mbps / 50 ms, RED with Table 4 settings,
//!    max window 128) with 16 LOG + 16 TCP SACK flows; the same scenario and seed run with
//!    `algorithm = "log"` and with `algorithm = "formula"`, `increase = "log(w)/w"`,
//!    `decrease = "0.5*log(w)"`. Prints wall times (best of `repeats`, alternating), the ratio,
//!    and whether every per-flow counter is identical.
//! 2. Controller alone: the same synthetic ACK/loss sequence driven through both controllers,
//!    ns per event — the evaluator's own overhead, which the simulation dilutes.

use serde_json::{json, Value};
use std::time::Instant;
use tcpf_core::cc::{self, Ack, LossEvent};
use tcpf_core::registry;

fn scenario(algorithm: &str, params: Value, duration: f64) -> String {
    json!({
        "duration": duration, "seed": 1, "max_window": 128,
        "bottleneck": {"rate": "60Mbps", "delay": "50ms", "queue": "red", "limit": "2.5bdp",
                       "red": {"min_th": "0.15limit", "max_th": "0.5limit", "q_weight": 0.002, "max_p": 0.1, "gentle": true, "wait": true}},
        "tcp": {"tick": 0.1},
        "flows": [{"count": 16, "algorithm": algorithm, "params": params, "access_delay": "1ms..10ms", "start": "0..1"},
                  {"count": 16, "algorithm": "tcp", "access_delay": "1ms..10ms", "start": "0..1"}]
    })
    .to_string()
}

fn counters(out: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(out).unwrap();
    v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.as_object_mut().unwrap().remove("algorithm");
            f.as_object_mut().unwrap().remove("params");
            f
        })
        .collect()
}

fn controller_ns_per_event(params: &cc::Params) -> f64 {
    let mut c = registry::build_window(params, 2.0, 1e9).expect("a registered controller");
    let n = 20_000_000u64;
    let t = Instant::now();
    let mut now = 0.0;
    for i in 0..n {
        now += 1e-4;
        if i % 500 == 499 {
            let w = c.window();
            c.on_loss_event(&LossEvent { now, window: w, in_flight: 0, ecn: false });
        } else {
            c.on_rtt_sample(now, 0.1);
            c.on_ack(&Ack { now, acked: 1, rtt: Some(0.1), min_rtt: 0.1, in_flight: 0 });
        }
    }
    std::hint::black_box(c.window());
    t.elapsed().as_secs_f64() * 1e9 / n as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let duration: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200.0);
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let formula = json!({"increase": "log(w)/w", "decrease": "0.5*log(w)"});
    let (sa, sb) = (scenario("log", json!({}), duration), scenario("formula", formula.clone(), duration));
    let (mut ta, mut tb) = (f64::INFINITY, f64::INFINITY);
    let (mut oa, mut ob) = (String::new(), String::new());
    for _ in 0..repeats {
        let t = Instant::now();
        oa = tcpf_core::api::run(&sa, None, None).unwrap();
        ta = ta.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        ob = tcpf_core::api::run(&sb, None, None).unwrap();
        tb = tb.min(t.elapsed().as_secs_f64());
    }
    let same = counters(&oa) == counters(&ob);
    let delivered: u64 = counters(&oa).iter().map(|f| f["packets_delivered"].as_u64().unwrap_or(0)).sum();
    println!("simulation: 16 LOG + 16 TCP, 60 Mbps RED, {duration} s simulated, {delivered} packets delivered");
    println!("  built-in log  {ta:.3} s (best of {repeats})");
    println!("  formula log   {tb:.3} s (best of {repeats})");
    println!("  ratio formula/built-in {:.3}; every per-flow counter identical: {same}", tb / ta);

    let pa = registry::validate_window("log", json!({}).as_object().unwrap()).unwrap();
    let pb = registry::validate_window("formula", formula.as_object().unwrap()).unwrap();
    let (ca, cb) = (controller_ns_per_event(&pa), controller_ns_per_event(&pb));
    println!("controller alone (20 M synthetic events, 1 loss per 500):");
    println!("  built-in log {ca:.1} ns/event, formula log {cb:.1} ns/event, ratio {:.2}", cb / ca);
}
