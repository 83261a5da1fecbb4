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


/// Resource limits (issue 17, item 3; docs/scenario.md "Resource limits").
mod resources {
    use serde_json::{json, Value};
    use tcpf_core::api::{self, RunError};

    fn dumbbell(flows: Value) -> Value {
        json!({"duration": 20, "bottleneck": {"rate": "15Mbps", "delay": "20ms"}, "flows": flows})
    }

    fn run(v: &Value) -> Result<Value, RunError> {
        api::run(&v.to_string(), None, None).map(|s| serde_json::from_str(&s).unwrap())
    }

    /// alpha = 1e308 and history k = 12 used to grow the window (and the memory) without end.
    #[test]
    fn a_runaway_window_stops_at_the_default_cap() {
        for params in [json!({"alpha": 1e308, "beta": 0.5}), json!({"k": 12, "l": 1})] {
            let alg = if params.get("k").is_some() { "history" } else { "gaimd" };
            let r = run(&dumbbell(json!([{"algorithm": alg, "params": params}]))).unwrap();
            let cwnd = r["flows"][0]["mean_cwnd"].as_f64().unwrap();
            assert!(cwnd > 1000.0 && cwnd <= (1 << 20) as f64, "{alg}: {cwnd}");
            assert!(r["scenario"]["max_window"].is_null() && r["scenario"].get("limits").is_none());
        }
        // The scenario's own max_window still rules.
        let mut s = dumbbell(json!([{"algorithm": "gaimd", "params": {"alpha": 1e308, "beta": 0.5}}]));
        s["max_window"] = json!(100);
        assert!(run(&s).unwrap()["flows"][0]["mean_cwnd"].as_f64().unwrap() <= 100.0);
    }

    #[test]
    fn the_memory_guard_names_its_setting() {
        let mut s = dumbbell(json!([{"algorithm": "cbr", "count": 4, "rate": "1Gbps"}]));
        s["duration"] = json!(3);
        s["limits"] = json!({"memory": "8MiB"});
        match run(&s) {
            Err(RunError::Scenario(e)) => {
                assert_eq!(e.field, "limits.memory");
                assert!(e.message.starts_with("the run outgrew its memory limit of 8 MiB at t = "), "{}", e.message);
                assert!(e.message.contains("most of it packets queued and in flight"), "{}", e.message);
            }
            other => panic!("{other:?}"),
        }
        // The same flood with a small access queue runs to the end.
        s["limits"]["access_queue"] = json!(1000);
        let r = run(&s).unwrap();
        assert_eq!(r["scenario"]["limits"], json!({"memory": 8 << 20, "access_queue": 1000}));
    }

    #[test]
    fn limits_are_validated_naming_the_field() {
        let base = dumbbell(json!([{"algorithm": "tcp"}]));
        let bad = |key: &str, v: Value| {
            let mut s = base.clone();
            if key == "max_window" {
                s["max_window"] = v;
            } else {
                s["limits"] = json!({key: v});
            }
            api::normalize(&s.to_string()).unwrap_err().to_string()
        };
        assert_eq!(bad("memory", json!("1000GB")), "limits.memory: must be in [1048576, 68719476736] bytes (1 MiB to 64 GiB); got '1000GB'");
        assert!(bad("memory", json!("3 furlongs")).starts_with("limits.memory: unknown memory unit 'furlongs'"));
        assert_eq!(bad("memory", json!(1e300)), "limits.memory: must be in [1048576, 68719476736] bytes (1 MiB to 64 GiB); got 1e+300");
        assert!(bad("access_queue", json!(0)).starts_with("limits.access_queue: must be a whole number in [1, 16777216]"));
        assert!(bad("window", json!(5)).starts_with("limits.window: "));
        assert!(bad("max_window", json!(1u64 << 25)).starts_with("max_window: must be a whole number in [1, 16777216]"));
        let mut s = base.clone();
        s["limits"] = json!({"memory": "1.5GiB"});
        let n: Value = serde_json::from_str(&api::normalize(&s.to_string()).unwrap()).unwrap();
        assert_eq!(n["limits"], json!({"memory": 1610612736u64, "access_queue": 1 << 20}));
        assert_eq!(api::normalize(&n.to_string()).unwrap(), n.to_string());
    }

    /// 10^7 samples were accepted (10^6 over 4 flows took 2.5 GB): rows are counted up front.
    #[test]
    fn too_many_timeseries_rows_are_refused() {
        let mut s = dumbbell(json!([{"algorithm": "tcp", "count": 4}]));
        s["duration"] = json!(100);
        s["timeseries"] = json!(1e-4);
        let e = api::normalize(&s.to_string()).unwrap_err();
        assert_eq!(e.field, "timeseries");
        assert_eq!(e.message, "interval 0.0001 s gives 1000000 samples x (4 flows + 2 links) = 6000000 rows, more than 2000000: use an interval of at least 0.0003 s");
        s["timeseries"] = json!(3e-4);
        assert!(api::normalize(&s.to_string()).is_ok());
    }
}
