//! Rate-based senders: TFRC's TCP-friendliness on a lossy link, and sanity of
//! TFRCP and TEAR sharing a RED bottleneck with TCP.

use serde_json::{json, Value};
use tcpf_core::api;

fn run(s: &Value) -> Value {
    serde_json::from_str(&api::run(&s.to_string(), None, None).expect("valid scenario")).unwrap()
}

fn lossy(alg: &str, p: f64, seed: u64) -> Value {
    json!({
        "duration": 600, "seed": seed, "measure": {"from": 50, "to": 600}, "max_window": 1000,
        "bottleneck": {"rate": "100Mbps", "delay": "50ms", "queue": "droptail", "limit": 10000,
                       "loss": {"model": "bernoulli", "p": p}},
        "flows": [{"count": 1, "algorithm": alg, "access_delay": "1ms"}]
    })
}

#[test]
fn tfrc_is_tcp_friendly_on_a_bernoulli_loss_link() {
    for p in [0.01, 0.05] {
        let mean = |alg: &str| (1..=3).map(|seed| run(&lossy(alg, p, seed))["flows"][0]["goodput_bps"].as_f64().unwrap()).sum::<f64>() / 3.0;
        let (tcp, tfrc) = (mean("tcp"), mean("tfrc"));
        println!("p = {p}: TCP SACK {tcp:.0} b/s, TFRC {tfrc:.0} b/s, ratio {:.3}", tfrc / tcp);
        assert!((tfrc / tcp - 1.0).abs() <= 0.20, "p = {p}: ratio {}", tfrc / tcp);
    }
}

#[test]
fn rate_based_schemes_share_a_red_bottleneck_with_tcp() {
    for alg in ["tfrc", "tfrcp", "tear"] {
        let s = json!({
            "duration": 200, "seed": 1, "measure": {"from": 60, "to": 200}, "max_window": 128,
            "bottleneck": {"rate": "15Mbps", "delay": "50ms", "queue": "red"},
            "flows": [{"count": 4, "algorithm": alg, "access_delay": "1ms..10ms", "start": "0..2"},
                      {"count": 4, "access_delay": "1ms..10ms", "start": "0..2"}]
        });
        let r = run(&s);
        let g = |grp: u64| r["flows"].as_array().unwrap().iter().filter(|f| f["group"] == grp).map(|f| f["goodput_bps"].as_f64().unwrap()).sum::<f64>();
        let share = g(0) / (g(0) + g(1));
        let util = r["links"][0]["utilization"].as_f64().unwrap();
        println!("{alg} vs TCP on RED: {alg} share {share:.3}, utilisation {util:.3}, {alg} loss events {}", r["flows"][0]["loss_events"]);
        assert!(util > 0.9, "{alg}: utilisation {util}");
        assert!((0.2..=0.8).contains(&share), "{alg}: share {share}");
    }
}

#[test]
fn a_rate_based_receivers_loss_events_are_in_the_loss_log() {
    // With `loss_log`, every loss event a rate-based receiver counts is a record of kind
    // "rate_loss_event" (no window: null), in time order; without it there is no log.
    for alg in ["tfrc", "tfrcp", "tear"] {
        let mut s = lossy(alg, 0.02, 1);
        s["duration"] = json!(60);
        s["measure"] = json!({"from": 0, "to": 60});
        s["loss_log"] = json!(true);
        let r = run(&s);
        let log = &r["loss_events"];
        let times: Vec<f64> = log["time"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let counted = r["flows"][0]["loss_events"].as_u64().unwrap();
        assert!(counted > 10, "{alg}: {counted} loss events");
        assert_eq!(times.len() as u64, counted, "{alg}: the log has every loss event the receiver counted");
        assert!(times.windows(2).all(|w| w[0] <= w[1]) && times.iter().all(|&t| t > 0.0 && t <= 60.0));
        assert!(log["kind"].as_array().unwrap().iter().all(|k| k == "rate_loss_event"));
        assert!(log["window_before"].as_array().unwrap().iter().all(Value::is_null));
        s["loss_log"] = json!(false);
        assert!(run(&s).get("loss_events").is_none(), "{alg}: no log unless asked");
    }
}
