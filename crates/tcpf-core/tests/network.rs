//! Loss models, cross traffic, flow dynamics, topologies and RTT noise, each in a full
//! simulation (run with `--release`; each prints what it checks).

use serde_json::{json, Value};
use tcpf_core::api;

fn run(s: &Value, timeseries: Option<f64>) -> Value {
    serde_json::from_str(&api::run(&s.to_string(), None, timeseries).expect("valid scenario")).unwrap()
}

fn col(v: &Value, name: &str) -> Vec<f64> {
    v[name].as_array().unwrap().iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect()
}

/// Mean of a flow's sampled rate over samples with time in (a, b].
fn mean_rate(ts: &Value, flow: u64, a: f64, b: f64) -> f64 {
    let f = &ts["flows"];
    let (t, id, r) = (col(f, "time"), col(f, "flow"), col(f, "rate_bps"));
    let xs: Vec<f64> = (0..t.len()).filter(|&i| id[i] as u64 == flow && t[i] > a && t[i] <= b).map(|i| r[i]).collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

#[test]
fn tsao2007_s3_two_state_losses_follow_the_schedule() {
    // One drop per second, one per 5 s during 100–800 s; RTT ≈ 140 ms; max window 200.
    let s = json!({
        "duration": 1000, "seed": 2, "max_window": 200, "loss_log": true,
        "bottleneck": {"rate": "100Mbps", "delay": "69ms", "queue": "droptail", "limit": 10000,
            "loss": {"model": "schedule", "phases": [
                {"from": 0, "model": "periodic", "interval": 1},
                {"from": 100, "model": "periodic", "interval": 5},
                {"from": 800, "model": "periodic", "interval": 1}]}},
        "flows": [{"count": 1, "access_delay": "1ms"}]
    });
    let r = run(&s, Some(1.0));
    let log = &r["loss_events"];
    let times = col(log, "time");
    let count = |a: f64, b: f64| times.iter().filter(|&&t| t >= a && t < b).count();
    println!("loss events: 0-100 s {}, 200-800 s {}, 850-1000 s {}", count(0.0, 100.0), count(200.0, 800.0), count(850.0, 1000.0));
    assert!((118..=121).contains(&count(200.0, 800.0)), "{}", count(200.0, 800.0));
    assert!((145..=151).contains(&count(850.0, 1000.0)), "{}", count(850.0, 1000.0));
    // In the slow phase every reduction follows a drop instant (multiples of 5 s) within 1 s.
    for &t in times.iter().filter(|&&t| (105.0..795.0).contains(&t)) {
        assert!(t % 5.0 < 1.0, "loss event at {t} s is not right after a scheduled drop");
    }
    let ts = &r["timeseries"];
    let (low1, high, low2) = (mean_rate(ts, 0, 0.0, 100.0), mean_rate(ts, 0, 200.0, 800.0), mean_rate(ts, 0, 850.0, 1000.0));
    println!("throughput: 0-100 s {:.0} b/s, 200-800 s {:.0} b/s, 850-1000 s {:.0} b/s (ratios {:.2}, {:.2})", low1, high, low2, high / low1, high / low2);
    assert!(high > 1.8 * low1 && high > 1.8 * low2);
}

#[test]
fn jin2001_square_wave_cbr_and_tcp_alternate() {
    // C = 1.5 Mb/s, CBR at γ = 0.5 of C, 30 s on / 30 s off, one TCP flow, RTT ≈ 100 ms.
    let s = json!({
        "duration": 240, "seed": 1,
        "bottleneck": {"rate": "1.5Mbps", "delay": "40ms", "queue": "red"},
        "flows": [
            {"count": 1, "access_delay": "2ms"},
            {"count": 1, "algorithm": "cbr", "rate": "0.5x", "on": 30, "off": 30}
        ]
    });
    let r = run(&s, Some(5.0));
    let ts = &r["timeseries"];
    for k in 1..4 {
        let on = 60.0 * k as f64;
        let (cbr_on, cbr_off) = (mean_rate(ts, 1, on, on + 30.0), mean_rate(ts, 1, on + 30.0, on + 60.0));
        let (tcp_on, tcp_off) = (mean_rate(ts, 0, on + 5.0, on + 30.0), mean_rate(ts, 0, on + 35.0, on + 60.0));
        println!("cycle {k}: CBR {:.3} / {:.3} of C, TCP {:.3} / {:.3} of C (CBR on / off)", cbr_on / 1.5e6, cbr_off / 1.5e6, tcp_on / 1.5e6, tcp_off / 1.5e6);
        // Off bins still see the packets that were in flight when the source stopped.
        assert!((cbr_on / 1.5e6 - 0.5).abs() < 0.03 && cbr_off / 1.5e6 < 0.01);
        assert!(tcp_on / 1.5e6 < 0.55 && tcp_off / 1.5e6 > 0.8, "TCP does not follow the inverse");
    }
}

#[test]
fn yang2000_pareto_on_off_offered_load() {
    let s = json!({
        "duration": 600, "seed": 4,
        "bottleneck": {"rate": "100Mbps", "delay": "10ms", "queue": "droptail", "limit": 1000},
        "flows": [{"count": 40, "algorithm": "pareto", "rate": "500kbps", "on": 1, "off": 2, "shape": 1.5}]
    });
    let r = run(&s, None);
    let offered: f64 = r["flows"].as_array().unwrap().iter().map(|f| f["throughput_bps"].as_f64().unwrap()).sum();
    println!("40 Pareto ON/OFF sources offered {:.3} Mb/s (expected 6.667)", offered / 1e6);
    assert!((offered - 6.667e6).abs() / 6.667e6 < 0.10);
}

/// jin2001 Fig. 20 chain b1–b2–b3–b4, Exp. 1 (c1 = 15, c2 = 0, x = y = 6 Mb/s), 500-byte
/// packets, RED per Table 4 on every link, background flows stop at 400 s. The figure's other
/// values are not in the text; inferred: (b2,b3) = 4.5 Mb/s so that W ≈ 110 packets at
/// RTT ≈ 0.1 s; delays b1–b2 10 ms, b2–b3 30 ms, b3–b4 10 ms; access 1 ms for the tagged
/// flows and 10 ms for the background flows (with 1 ms, TCP's RTT bias gives the short
/// background flows more and W1 ≈ 5; with 10 ms, W1 ≈ 7 as the paper says). Tagged flow 1 runs b1→b2→b3 and
/// shares (b1,b2) with the 15 background flows; tagged flow 2 runs b2→b3→b4. (The text says
/// flow 1's bottleneck moves from (b3,b4), which contradicts c2 = 0; Exp. 2's description
/// places flow 1 on (b1,b2).)
fn jin2001_chain(alg: &str) -> Value {
    json!({
        "duration": 900, "seed": 1, "packet_size": 500, "max_window": 128,
        "tcp": {"tick": 0.1},
        "links": [
            {"from": "b1", "to": "b2", "rate": "6Mbps", "delay": "10ms", "queue": "red"},
            {"from": "b2", "to": "b3", "rate": "4.5Mbps", "delay": "30ms", "queue": "red"},
            {"from": "b3", "to": "b4", "rate": "6Mbps", "delay": "10ms", "queue": "red"}
        ],
        "flows": [
            {"count": 1, "algorithm": alg, "path": ["b1", "b2", "b3"], "start": "0..1"},
            {"count": 1, "algorithm": alg, "path": ["b2", "b3", "b4"], "start": "0..1"},
            {"count": 15, "algorithm": alg, "path": ["b1", "b2"], "start": "0..2", "stop": 400, "access_delay": "10ms"}
        ]
    })
}

#[test]
fn jin2001_chain_exp1_windows_then_sharing() {
    let r = run(&jin2001_chain("tcp"), Some(1.0));
    let f = &r["timeseries"]["flows"];
    let (t, id, w) = (col(f, "time"), col(f, "flow"), col(f, "cwnd"));
    let mean_w = |flow: u64, a: f64, b: f64| {
        let xs: Vec<f64> = (0..t.len()).filter(|&i| id[i] as u64 == flow && t[i] > a && t[i] <= b).map(|i| w[i]).collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    let (w1, w2) = (mean_w(0, 200.0, 400.0), mean_w(1, 200.0, 400.0));
    let (v1, v2) = (mean_w(0, 600.0, 900.0), mean_w(1, 600.0, 900.0));
    let (g1, g2) = (mean_rate(&r["timeseries"], 0, 600.0, 900.0), mean_rate(&r["timeseries"], 1, 600.0, 900.0));
    println!("before 400 s: W1 {w1:.1}, W2 {w2:.1} (paper: 7 and 100); after: W1 {v1:.1}, W2 {v2:.1}, goodput share of flow 1 {:.3}", g1 / (g1 + g2));
    assert!((w1 - 7.0).abs() <= 0.3 * 7.0, "W1 {w1}");
    assert!((w2 - 100.0).abs() <= 0.3 * 100.0, "W2 {w2}");
    assert!((0.4..=0.6).contains(&(g1 / (g1 + g2))), "flows do not share (b2,b3) after 400 s");
}

#[test]
fn rtt_noise_changes_samples_not_timing() {
    let base = |sigma: &str| {
        json!({
            "duration": 60, "seed": 3,
            "bottleneck": {"rate": "10Mbps", "delay": "30ms", "queue": "red"},
            "flows": [{"count": 2, "rtt_noise": sigma, "access_delay": "1ms..3ms"}]
        })
    };
    let (a, b) = (run(&base("0ms"), None), run(&base("20ms"), None));
    for (fa, fb) in a["flows"].as_array().unwrap().iter().zip(b["flows"].as_array().unwrap()) {
        for k in ["packets_sent", "packets_delivered", "retransmissions", "loss_events", "timeouts", "mean_cwnd", "mean_rtt_s"] {
            assert_eq!(fa[k], fb[k], "{k} changed with RTT noise");
        }
        let rise = fb["mean_rtt_sample_s"].as_f64().unwrap() - fa["mean_rtt_sample_s"].as_f64().unwrap();
        println!("flow {}: mean RTT sample rises by {:.2} ms", fa["id"], rise * 1e3);
        assert!((rise - 0.020).abs() < 0.001);
    }
    assert_eq!(a["links"], b["links"]);
}

#[test]
fn three_routers_two_bottlenecks_route_each_flow_on_its_path() {
    let s = json!({
        "duration": 60, "seed": 5,
        "nodes": [{"name": "r1"}, {"name": "r2"}, {"name": "r3"}],
        "links": [
            {"from": "r1", "to": "r2", "rate": "10Mbps", "delay": "10ms", "queue": "red"},
            {"from": "r2", "to": "r3", "rate": "5Mbps", "delay": "10ms", "queue": "droptail"}
        ],
        "flows": [
            {"count": 2, "from": "r1", "to": "r3"},
            {"count": 2, "from": "r1", "to": "r2"},
            {"count": 2, "from": "r2", "to": "r3"}
        ]
    });
    let r = run(&s, None);
    assert_eq!(r["scenario"]["flows"][0]["path"], json!(["r1", "r2", "r3"]));
    let flows = r["flows"].as_array().unwrap();
    let sent = |g: u64| flows.iter().filter(|f| f["group"] == g).map(|f| f["packets_sent"].as_f64().unwrap()).sum::<f64>();
    let delivered = |g: u64| flows.iter().filter(|f| f["group"] == g).map(|f| f["packets_delivered"].as_f64().unwrap()).sum::<f64>();
    let link = |n: &str| r["links"].as_array().unwrap().iter().find(|l| l["name"] == n).unwrap().clone();
    let (l12, l23) = (link("r1-r2"), link("r2-r3"));
    let a12 = l12["arrivals"].as_f64().unwrap();
    let a23 = l23["arrivals"].as_f64().unwrap();
    println!("r1-r2: {a12} arrivals, utilisation {:.3}; r2-r3: {a23} arrivals, utilisation {:.3}", l12["utilization"], l23["utilization"]);
    // Every data packet of groups 0 and 1 enters r1-r2 (less those still on an access link).
    assert!(a12 <= sent(0) + sent(1) && a12 >= sent(0) + sent(1) - 20.0);
    // r2-r3 carries group 2 and what group 0 got through r1-r2.
    assert!(a23 >= sent(2) - 20.0 + delivered(0) && a23 <= sent(2) + sent(0));
    assert!(l12["utilization"].as_f64().unwrap() > 0.85 && l23["utilization"].as_f64().unwrap() > 0.9);
    assert_eq!(link("r1-r2_reverse")["drops"], json!(0));
}
