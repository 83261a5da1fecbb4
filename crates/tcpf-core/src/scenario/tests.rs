use super::*;
use serde_json::json;

fn base() -> Value {
    json!({
        "duration": 20, "seed": 7,
        "bottleneck": {"rate": "5Mbps", "delay": "20ms", "queue": "red", "limit": "2.5bdp"},
        "flows": [
            {"count": 4, "algorithm": "tcp", "recovery": "sack", "access_delay": "1ms..5ms", "start": "0..1"},
            {"count": 4, "algorithm": "gaimd", "params": {"alpha": 0.31, "keep": 0.875}}
        ]
    })
}

fn error_of(v: Value) -> ScenarioError {
    Scenario::from_value(&v).unwrap_err()
}

#[test]
fn defaults_are_filled_and_normalisation_is_idempotent() {
    let s = Scenario::from_value(&base()).unwrap();
    let n = s.normalized();
    assert_eq!(n["bottleneck"]["rate"], json!(5e6));
    assert_eq!(n["flows"][1]["params"], json!({"alpha": 0.31, "beta": 0.125}));
    assert_eq!(n["tcp"]["tick"], json!(0.01));
    let again = Scenario::from_value(&n).unwrap().normalized();
    assert_eq!(n, again);
}

#[test]
fn bdp_uses_mean_forward_rtt() {
    let s = Scenario::from_value(&base()).unwrap();
    // forward RTTs: group 0 spread 1..5 ms (mean 3 ms), group 1 at 1 ms: mean access 2 ms
    // RTT = 2·(2 ms + 20 ms) = 44 ms; BDP = 5e6·0.044/8000 = 27.5 packets
    assert!((s.bdp_pkts - 27.5).abs() < 1e-9, "{}", s.bdp_pkts);
    assert_eq!(s.limit_pkts, 69);
    let red = s.red.unwrap();
    assert!((red.min_th - 0.15 * 69.0).abs() < 1e-9);
}

#[test]
fn errors_name_the_field() {
    let mut v = base();
    v["flows"][1]["algorithm"] = json!("no-such-algorithm");
    let e = error_of(v);
    assert_eq!(e.field, "flows[1].algorithm");
    assert!(e.message.contains("unknown algorithm"));

    let mut v = base();
    v["flows"][1]["params"]["keep"] = json!(1.5);
    let e = error_of(v);
    assert_eq!(e.field, "flows[1].params.keep");

    let mut v = base();
    v["bottleneck"]["rate"] = json!("-3Mbps");
    assert_eq!(error_of(v).field, "bottleneck.rate");

    let mut v = base();
    v["bottleneck"].as_object_mut().unwrap().remove("delay");
    let e = error_of(v);
    assert_eq!((e.field.as_str(), e.message.as_str()), ("bottleneck.delay", "is required"));

    let mut v = base();
    v["bottlenek"] = json!({});
    assert_eq!(error_of(v).field, "bottlenek");

    let mut v = base();
    v["flows"][0]["params"] = json!({"beta": 0.5});
    assert_eq!(error_of(v).field, "flows[0].params.beta");
}

#[test]
fn starts_are_seeded_and_spread() {
    let s = Scenario::from_value(&base()).unwrap();
    let e1 = s.expanded();
    let e2 = Scenario::from_value(&base()).unwrap().expanded();
    assert_eq!(e1, e2);
    let starts: Vec<f64> = (0..4).map(|i| e1["flows"][i]["start_s"].as_f64().unwrap()).collect();
    assert!(starts.iter().all(|s| (0.0..1.0).contains(s)));
    assert!(starts.windows(2).any(|w| w[0] != w[1]));
    let delays: Vec<f64> = (0..4).map(|i| e1["flows"][i]["access_delay_s"].as_f64().unwrap()).collect();
    assert!((delays[0] - 0.001).abs() < 1e-12 && (delays[3] - 0.005).abs() < 1e-12);
}
