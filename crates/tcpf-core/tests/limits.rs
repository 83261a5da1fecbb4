//! Time arithmetic cannot overflow silently (issue 17, item 5).
use serde_json::json;
use tcpf_core::sim::{secs, to_secs, TIME_MAX};

#[test]
fn secs_rounds_and_saturates() {
    assert_eq!(secs(0.0), 0);
    assert_eq!(secs(1.5e-9), 2);
    assert_eq!(secs(0.05), 50_000_000);
    assert_eq!(secs(1e7), 10_000_000_000_000_000);
    assert_eq!(to_secs(secs(123.456789)), 123.456789);
    // 1e12 s used to become u64::MAX ns, and `now + it` wrapped around to a time in the past.
    for huge in [4.7e9, 1e12, 1e300, f64::INFINITY] {
        assert_eq!(secs(huge), TIME_MAX, "{huge}");
        assert!(secs(1e7).checked_add(3 * secs(huge)).is_some());
    }
    assert_eq!(secs(-1.0), 0);
}

/// A formula over the limits (cc::formula) is a scenario error naming its field.
#[test]
fn a_too_long_formula_is_a_scenario_error_naming_the_field() {
    let sc = |inc: &str| json!({"duration": 1, "bottleneck": {"rate": "1Mbps", "delay": "10ms"}, "flows": [{"algorithm": "formula", "params": {"increase": inc, "decrease": "1"}}]}).to_string();
    let e = tcpf_core::api::normalize(&sc(&vec!["w"; 30_000].join("+"))).unwrap_err().to_string();
    assert_eq!(e, "flows[0].params.increase: formula too long (59999 characters, max 10000) at column 10001");
    let e = tcpf_core::api::normalize(&sc(&format!("{}w{}", "(".repeat(300), ")".repeat(300)))).unwrap_err().to_string();
    assert_eq!(e, "flows[0].params.increase: formula is nested too deeply (max 200 levels) at column 201");
}

