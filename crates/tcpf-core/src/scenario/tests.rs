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
    let Net::Dumbbell { queue, .. } = &s.net else { panic!("dumbbell expected") };
    assert!((queue.bdp_pkts - 27.5).abs() < 1e-9, "{}", queue.bdp_pkts);
    assert_eq!(queue.spec.limit(), 69);
    let red = queue.spec.red().unwrap();
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
    assert_eq!(e.field, "bottleneck.delay");
    assert!(e.message.starts_with("is required: a one-way propagation delay such as \"20ms\""), "{}", e.message);

    // a required field without a default says what to give
    let mut v = base();
    v["flows"][1] = json!({"count": 1, "algorithm": "cbr"});
    let e = error_of(v);
    assert_eq!(e.field, "flows[1].rate");
    assert!(e.message.contains("sending rate") && e.message.contains("steps"), "{}", e.message);
    let mut v = base();
    v["flows"][1] = json!({"count": 1, "algorithm": "pareto"});
    let e = error_of(v);
    assert!(e.message.starts_with("is required: the Pareto source's sending rate"), "{}", e.message);
    let mut v = base();
    v.as_object_mut().unwrap().remove("duration");
    let e = error_of(v);
    assert_eq!((e.field.as_str(), e.message.as_str()), ("duration", "is required: the simulated time in seconds, in (0, 1e7]"));

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

fn chain() -> Value {
    json!({
        "duration": 10,
        "links": [
            {"from": "b1", "to": "b2", "rate": "10Mbps", "delay": "10ms", "queue": "red", "limit": "2.5bdp"},
            {"from": "b2", "to": "b3", "rate": "5Mbps", "delay": "20ms",
             "loss": {"model": "periodic", "interval": 1, "groups": [1]}},
            {"from": "b3", "to": "b4", "rate": "10Mbps", "delay": "10ms"}
        ],
        "flows": [
            {"count": 2, "path": ["b1", "b2"]},
            {"count": 2, "from": "b1", "to": "b4", "start": [0, 0.5]},
            {"count": 1, "algorithm": "cbr", "rate": "0.5x", "on": 1, "off": 1, "path": ["b3", "b4"]}
        ]
    })
}

#[test]
fn graph_routes_and_bdp() {
    let s = Scenario::from_value(&chain()).unwrap();
    let n = s.normalized();
    assert_eq!(n["flows"][1]["path"], json!(["b1", "b2", "b3", "b4"]));
    assert_eq!(n["flows"][2]["rate"], json!(5e6));
    assert_eq!(n["flows"][1]["start"], json!([0.0, 0.5]));
    // b1-b2 carries groups 0 (RTT 2·(1+10) ms) and 1 (2·(1+40) ms): mean 52 ms → 65 packets
    let Net::Graph { queues, .. } = &s.net else { panic!() };
    assert!((queues[0].0.bdp_pkts - 65.0).abs() < 1e-9, "{}", queues[0].0.bdp_pkts);
    assert_eq!(queues[0].0.spec.limit(), 163);
    assert_eq!(Scenario::from_value(&n).unwrap().normalized(), n);
    let cfg = s.to_config();
    // 6 router links (duplex) + 4 access links per flow
    assert_eq!(cfg.topology.links.len(), 6 + 4 * 5);
    for f in &cfg.flows {
        cfg.topology.check_route(&f.route).unwrap();
    }
    assert_eq!(cfg.flows[2].route.fwd.len(), 5);
    assert!(cfg.flows[4].route.rev.is_empty());
    let loss = cfg.topology.links[2].loss.as_ref().unwrap();
    assert_eq!(loss.flows.as_deref(), Some(&[false, false, true, true, false][..]));
}

#[test]
fn graph_errors_name_the_field() {
    let mut v = chain();
    v["flows"][0]["path"] = json!(["b1", "b3"]);
    let e = error_of(v);
    assert_eq!(e.field, "flows[0].path");
    assert!(e.message.contains("no link from 'b1' to 'b3'"), "{}", e.message);
    let mut v = chain();
    v["links"][1]["duplex"] = json!(false);
    assert_eq!(error_of(v).field, "flows[1].path");
    let mut v = chain();
    v["links"][1]["loss"]["groups"] = json!([7]);
    assert_eq!(error_of(v).field, "links[1].loss.groups");
    let mut v = chain();
    v["bottleneck"] = json!({"rate": "1Mbps", "delay": "1ms"});
    assert_eq!(error_of(v).field, "links");
    let mut v = base();
    v["flows"][0]["path"] = json!(["a", "b"]);
    assert_eq!(error_of(v).field, "flows[0].path");
}

#[test]
fn loss_models_parse_and_validate() {
    let mut v = base();
    v["bottleneck"]["loss"] = json!({"model": "schedule", "phases": [
        {"from": 0, "model": "periodic", "interval": 1},
        {"from": 100, "model": "general_exponential", "mean": 5, "cv": 0.5}]});
    let s = Scenario::from_value(&v).unwrap();
    let n = s.normalized();
    assert_eq!(n["bottleneck"]["loss"]["phases"][1], json!({"from": 100.0, "model": "general_exponential", "mean": 5.0, "cv": 0.5}));
    assert_eq!(Scenario::from_value(&n).unwrap().normalized(), n);
    v["bottleneck"]["loss"]["phases"][1]["cv"] = json!(-1);
    assert_eq!(error_of(v.clone()).field, "bottleneck.loss.phases[1].cv");
    v["bottleneck"]["loss"] = json!({"model": "periodic"});
    assert_eq!(error_of(v.clone()).field, "bottleneck.loss.model");
    v["bottleneck"]["loss"] = json!({"model": "gilbert_elliott", "p_gb": 0.1, "p_bg": 2});
    assert_eq!(error_of(v).field, "bottleneck.loss.p_bg");
}

#[test]
fn flow_lists_and_udp_kinds() {
    let mut v = base();
    v["flows"][0]["start"] = json!([0, 1, 2]);
    assert_eq!(error_of(v.clone()).field, "flows[0].start");
    v["flows"][0]["start"] = json!([0, 1, 2, 3]);
    v["flows"][0]["stop"] = json!(2.5);
    assert_eq!(error_of(v.clone()).field, "flows[0].stop");
    v["flows"][0]["stop"] = json!([5, 5, 5, 5]);
    Scenario::from_value(&v).unwrap();
    v["flows"].as_array_mut().unwrap().push(json!({"algorithm": "cbr", "steps": [[0, "14Mbps"], [10, "9Mbps"]], "repeat": 20}));
    v["flows"].as_array_mut().unwrap().push(json!({"count": 40, "algorithm": "pareto", "rate": "500kbps"}));
    let n = Scenario::from_value(&v).unwrap().normalized();
    assert_eq!(n["flows"][2]["steps"], json!([[0.0, 14e6], [10.0, 9e6]]));
    assert_eq!(n["flows"][3]["shape"], json!(1.5));
    v["flows"][2]["recovery"] = json!("sack");
    assert_eq!(error_of(v).field, "flows[2].recovery");
}

/// `tcpf algorithms cbr|pareto` lists the flow-group keys of a UDP source: the defaults it
/// shows are the ones the parser fills, every key it lists is accepted, and a `params` table
/// on a UDP source is refused with those keys named.
#[test]
fn udp_source_keys_are_what_the_parser_reads() {
    use crate::transport::udp::source_keys;
    let mut v = base();
    v["flows"].as_array_mut().unwrap().push(json!({"algorithm": "pareto", "rate": "1Mbps"}));
    let n = Scenario::from_value(&v).unwrap().normalized();
    let keys = source_keys("pareto");
    for (name, shown) in [("on", "on"), ("off", "off"), ("shape", "shape")] {
        let k = keys.iter().find(|k| k.name == name).unwrap();
        assert_eq!(n["flows"][2][shown].as_f64(), k.default, "pareto {name}");
    }
    let cbr = source_keys("cbr");
    assert_eq!(cbr.iter().find(|k| k.name == "phase").unwrap().default, Some(0.0));
    // Every listed key is one the parser reads (an unknown key would be refused).
    let mut w = base();
    w["flows"].as_array_mut().unwrap().push(json!({"algorithm": "pareto", "rate": "1Mbps", "on": 0.5, "off": 1, "shape": 1.2, "packet_size": 210}));
    w["flows"].as_array_mut().unwrap().push(json!({"algorithm": "cbr", "rate": "1Mbps", "on": 1, "off": 1, "phase": 0.5, "packet_size": 500}));
    w["flows"].as_array_mut().unwrap().push(json!({"algorithm": "cbr", "steps": [[0, "1Mbps"], [2, 0]], "repeat": 4}));
    Scenario::from_value(&w).unwrap();
    assert_eq!(keys.len() + cbr.len(), 12);
    assert!(source_keys("tcp").is_empty());
    v["flows"][2]["params"] = json!({"rate": "1Mbps"});
    let e = error_of(v);
    assert_eq!(e.field, "flows[2].params");
    assert!(e.message.contains("rate, on, off, shape, packet_size as keys of the flow group"), "{}", e.message);
}

#[test]
fn node_and_link_names_are_identifiers() {
    // A name reaches the exported ns-2 (Tcl) script: brackets would run a command there.
    let mut v = chain();
    v["links"][0]["name"] = json!("x[exec touch p]");
    let e = error_of(v);
    assert_eq!(e.field, "links[0].name");
    assert!(e.message.contains("a letter or '_'"), "{}", e.message);
    for bad in ["b 1", "1b", "", "b$x", "b;x", "b\"x", "b{x}", "bé"] {
        let mut v = chain();
        v["links"][2]["to"] = json!(bad);
        assert_eq!(error_of(v).field, "links[2].to", "{bad:?}");
    }
    let mut v = chain();
    v["links"][1]["from"] = json!(7);
    assert_eq!(error_of(v).field, "links[1].from");
    let mut v = chain();
    v["nodes"] = json!(["b1", "b2", "b3", "b 4"]);
    assert_eq!(error_of(v).field, "nodes[3]");
    let mut v = chain();
    v["nodes"] = json!([{"name": "b1"}, {"name": "b2"}, {"name": "b3"}, {"name": "[b4]"}]);
    assert_eq!(error_of(v).field, "nodes[3].name");
    let long = "a".repeat(network::MAX_NAME_LEN + 1);
    let mut v = chain();
    v["links"][0]["name"] = json!(long);
    assert_eq!(error_of(v).field, "links[0].name");
    // The longest name, and every allowed character, are accepted.
    let mut v = chain();
    v["links"][0]["name"] = json!("a".repeat(network::MAX_NAME_LEN));
    v["links"][1]["name"] = json!("_Core.link-2_b");
    Scenario::from_value(&v).unwrap();
}

#[test]
fn a_link_name_may_not_collide_with_a_reverse_direction() {
    // b1-b2 is duplex: its reverse direction is reported as "b1-b2_reverse".
    let mut v = chain();
    v["links"][1]["name"] = json!("b1-b2_reverse");
    let e = error_of(v);
    assert_eq!(e.field, "links[1].name");
    assert!(e.message.contains("reverse direction"), "{}", e.message);
    // The other order: a later duplex link whose reverse name is taken.
    let mut v = chain();
    v["links"][0]["name"] = json!("core_reverse");
    v["links"][2]["name"] = json!("core");
    assert_eq!(error_of(v).field, "links[2].name");
    // Without a reverse direction there is nothing to collide with.
    let mut v = chain();
    v["links"][0]["duplex"] = json!(false);
    v["links"][1]["name"] = json!("b1-b2_reverse");
    v["links"][1].as_object_mut().unwrap().remove("loss");
    v["flows"] = json!([{"algorithm": "cbr", "rate": "1Mbps", "path": ["b1", "b2"]}]);
    let s = Scenario::from_value(&v).unwrap();
    let names: Vec<String> = s.to_config().topology.links.iter().filter(|l| l.report).map(|l| l.name.clone()).collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(names.len(), unique.len(), "{names:?}");
}

/// A UDP group's own `packet_size`: a CBR of rate R with N-byte datagrams sends R/(8N)
/// packets/s; the scenario's size stays every other flow's (and the default).
#[test]
fn udp_groups_may_have_their_own_packet_size() {
    let v = json!({
        "duration": 10, "packet_size": 1000,
        "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
        "flows": [
            {"algorithm": "tcp", "count": 1},
            {"algorithm": "cbr", "rate": "1Mbps"},
            {"algorithm": "cbr", "rate": "1Mbps", "packet_size": 200},
            {"algorithm": "pareto", "rate": "500kbps", "packet_size": 210},
        ]
    });
    let s = Scenario::from_value(&v).unwrap();
    let sizes: Vec<Option<u32>> = s.to_config().flows.iter().map(|f| if let FlowKind::Udp { size, .. } = f.kind { Some(size) } else { None }).collect();
    assert_eq!(sizes, vec![None, Some(1000), Some(200), Some(210)]);
    // Normalised: shown only where given (a scenario without it normalises as before), and
    // normalising again keeps it.
    let n = s.normalized();
    assert!(n["flows"][1].get("packet_size").is_none());
    assert_eq!(n["flows"][2]["packet_size"], json!(200));
    assert_eq!(Scenario::from_value(&n).unwrap().normalized(), n);
    // Expanded (what the ns-2 exporter reads): every UDP flow's resolved size.
    let x = s.expanded();
    assert_eq!(x["flows"][1]["cbr"]["packet_size"], json!(1000));
    assert_eq!(x["flows"][2]["cbr"]["packet_size"], json!(200));
    assert_eq!(x["flows"][3]["pareto"]["packet_size"], json!(210));

    let out = crate::api::run_scenario(&s).unwrap();
    let sent = |i: usize| out["flows"][i]["packets_sent"].as_u64().unwrap();
    // 1 Mb/s for 10 s: 1250 packets of 1000 bytes, 6250 of 200 bytes (± the first/last one)
    assert!(sent(1).abs_diff(1250) <= 1, "{}", sent(1));
    assert!(sent(2).abs_diff(6250) <= 1, "{}", sent(2));
    // Same bit rate: the same throughput in bits/s, counted with each flow's own size.
    let bps = |i: usize| out["flows"][i]["throughput_bps"].as_f64().unwrap();
    assert!((bps(2) / bps(1) - 1.0).abs() < 0.01, "{} {}", bps(1), bps(2));
}

#[test]
fn a_udp_packet_size_is_checked_and_refused_elsewhere() {
    let mut v = base();
    v["flows"].as_array_mut().unwrap().push(json!({"algorithm": "cbr", "rate": "1Mbps", "packet_size": 20}));
    let e = error_of(v.clone());
    assert_eq!(e.field, "flows[2].packet_size");
    assert!(e.message.contains("[40, 65535]"), "{}", e.message);
    v["flows"][2]["packet_size"] = json!(210.5);
    assert_eq!(error_of(v.clone()).field, "flows[2].packet_size");
    // The scenario's own packet_size has the same range (one check).
    let mut w = base();
    w["packet_size"] = json!(20);
    let g = error_of(w);
    assert_eq!(g.field, "packet_size");
    assert_eq!(g.message, e.message);
    // Window-based and rate-based flows send the scenario's size.
    for (gi, algorithm) in [(0, "tcp"), (1, "gaimd")] {
        let mut v = base();
        v["flows"][gi]["packet_size"] = json!(500);
        let e = error_of(v);
        assert_eq!(e.field, format!("flows[{gi}].packet_size"));
        assert!(e.message.contains("UDP sources") && e.message.contains(algorithm), "{}", e.message);
    }
    let mut v = base();
    v["flows"][1] = json!({"algorithm": "tfrc", "packet_size": 500});
    assert_eq!(error_of(v).field, "flows[1].packet_size");
}

/// `access_delay` and `receiver_delay` take the same forms through the same parser.
const DELAY_KEYS: [&str; 2] = ["access_delay", "receiver_delay"];

fn delays_of(s: &Scenario, key: &str, group: usize) -> Vec<f64> {
    let e = s.expanded();
    e["flows"].as_array().unwrap().iter().filter(|f| f["group"] == json!(group)).map(|f| f[format!("{key}_s").as_str()].as_f64().unwrap()).collect()
}

#[test]
fn delays_take_a_time_a_range_or_a_list() {
    for key in DELAY_KEYS {
        let mut v = base();
        v["flows"][1][key] = json!("3ms");
        let s = Scenario::from_value(&v).unwrap();
        assert_eq!(delays_of(&s, key, 1), vec![0.003; 4], "{key}");
        assert_eq!(s.normalized()["flows"][1][key], json!(0.003), "{key}");

        v["flows"][1][key] = json!("0ms..30ms");
        let s = Scenario::from_value(&v).unwrap();
        let d = delays_of(&s, key, 1);
        let want = [0.0, 0.01, 0.02, 0.03];
        assert!(d.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12), "{key}: {d:?}");
        let n = s.normalized();
        assert_eq!(n["flows"][1][key], json!("0..0.03"), "{key}");
        assert_eq!(Scenario::from_value(&n).unwrap().normalized(), n, "{key}");

        v["flows"][1][key] = json!(["4ms", 0.001, "2ms", "0ms"]);
        let s = Scenario::from_value(&v).unwrap();
        assert_eq!(delays_of(&s, key, 1), vec![0.004, 0.001, 0.002, 0.0], "{key}");
        assert_eq!(s.normalized()["flows"][1][key], json!([0.004, 0.001, 0.002, 0.0]), "{key}");

        // One flow of a range gets its midpoint.
        v["flows"][1]["count"] = json!(1);
        v["flows"][1][key] = json!("10ms..20ms");
        let s = Scenario::from_value(&v).unwrap();
        assert!((delays_of(&s, key, 1)[0] - 0.015).abs() < 1e-12, "{key}");
    }
}

#[test]
fn receiver_delays_reach_the_links_and_the_bdp() {
    let mut v = base();
    v["flows"][1]["receiver_delay"] = json!("0ms..30ms");
    let s = Scenario::from_value(&v).unwrap();
    // group 0: access 1..5 ms (mean 3), receiver 0; group 1: access 1 ms, receiver 0..30 ms
    // (mean 15): mean one-way edge delay (3 + 16) / 2 = 9.5 ms; RTT = 2·(9.5 + 20) ms = 59 ms;
    // BDP = 5e6·0.059/8000 = 36.875 packets
    let Net::Dumbbell { queue, .. } = &s.net else { panic!("dumbbell expected") };
    assert!((queue.bdp_pkts - 36.875).abs() < 1e-9, "{}", queue.bdp_pkts);
    let cfg = s.to_config();
    for (k, want) in [0.0, 0.01, 0.02, 0.03].into_iter().enumerate() {
        let id = 4 + k;
        let l = cfg.topology.links.iter().find(|l| l.name == format!("d{id}_down")).unwrap();
        assert_eq!(l.delay, secs(want), "flow {id}");
    }

    // On a graph too: group 0 of the chain (2 flows on b1-b2) gets 0 and 10 ms.
    let mut v = chain();
    v["flows"][0]["receiver_delay"] = json!("0..10ms");
    let s = Scenario::from_value(&v).unwrap();
    assert_eq!(delays_of(&s, "receiver_delay", 0), vec![0.0, 0.01]);
    let cfg = s.to_config();
    let l = cfg.topology.links.iter().find(|l| l.name == "d1_up").unwrap();
    assert_eq!(l.delay, secs(0.01));
}

#[test]
fn delay_errors_name_the_field_and_the_forms() {
    for key in DELAY_KEYS {
        let field = format!("flows[1].{key}");
        let bad: [(Value, &str); 5] = [
            (json!("5xs"), "unknown time unit 'xs'"),
            (json!("-1ms"), "[0, 1e7] s"),
            (json!(["1ms", "2ms", "3ms"]), "a list needs one value per flow (4); got 3"),
            (json!("10ms..1ms"), "upper bound 0.001 is below the lower bound 0.01"),
            (json!(true), "must be a time"),
        ];
        for (value, says) in bad {
            let mut v = base();
            v["flows"][1][key] = value.clone();
            let e = error_of(v);
            assert_eq!(e.field, field, "{value}");
            assert!(e.message.contains(says), "{key} = {value}: {}", e.message);
            assert!(e.message.contains("\"1ms..10ms\"") && e.message.contains("one time per flow"), "{key} = {value}: {}", e.message);
        }
    }
}

/// The default access rate is 10× the bottleneck's, capped at the largest rate a scenario may
/// state, so that the normalised scenario of a very fast bottleneck is valid input again
/// (found by tests/python/test_fuzz_cli.py: a 126.7 Gb/s bottleneck normalised to an access
/// rate of 1.267e12 b/s, which the round trip refused).
#[test]
fn the_default_access_rate_round_trips_at_any_bottleneck_rate() {
    for (rate, want) in [("5Mbps", 5e7), ("100Gbps", 1e12), ("126.7015352310Gbps", 1e12), ("1000Gbps", 1e12)] {
        let mut v = base();
        v["bottleneck"]["rate"] = json!(rate);
        let n = Scenario::from_value(&v).unwrap().normalized();
        assert_eq!(n["flows"][0]["access_rate"], json!(want), "{rate}");
        assert_eq!(Scenario::from_value(&n).unwrap().normalized(), n, "{rate}");
    }
    // an explicit multiple beyond the range is still refused, naming the field
    let mut v = base();
    v["bottleneck"]["rate"] = json!("200Gbps");
    v["flows"][0]["access_rate"] = json!("10x");
    assert_eq!(error_of(v).field, "flows[0].access_rate");
}

/// Refused values and stated bounds print readably whatever their magnitude: a number in its
/// shortest exponent form rather than hundreds of digits, a size in a unit where it does not
/// round to zero (`crate::error::show_num`, `show_bytes`).
#[test]
fn messages_show_extreme_numbers_and_sizes_readably() {
    let with = |key: &str, v: Value| {
        let mut s = base();
        s[key] = v;
        error_of(s).to_string()
    };
    assert_eq!(with("timeseries", json!(1e-300)), "timeseries: interval 1e-300 s gives more than 1e7 samples over 20 s");
    let mut s = base();
    s["duration"] = json!(1e-300);
    assert_eq!(error_of(s).to_string(), "flows[0].start: must be before the end of the run (1e-300 s); got up to 1 s");
    assert_eq!(with("measure", json!({"from": 1, "to": 1e-300})), "measure.to: must be after measure.from (1 s); got 1e-300 s");
    assert_eq!(
        with("trace", json!({"max_bytes": 10})),
        "trace.max_bytes: must be in [1024, 2147483648] bytes (1 KiB to 2 GiB); got 10"
    );
    assert_eq!(
        with("limits", json!({"memory": "1KiB"})),
        "limits.memory: must be in [1048576, 68719476736] bytes (1 MiB to 64 GiB); got '1KiB'"
    );
    let mut s = base();
    s["bottleneck"]["red"] = json!({"mark_p": 1e-300});
    let e = error_of(s).to_string();
    assert!(e.starts_with("bottleneck.red.mark_p: must be in [1e-9, 1] (") && e.ends_with("; got 1e-300"), "{e}");
    let mut s = base();
    s["flows"][1]["params"]["alpha"] = json!(-1e-300);
    let e = error_of(s).to_string();
    assert!(e.starts_with("flows[1].params.alpha: must be in ") && e.ends_with("; got -1e-300"), "{e}");
    assert!(e.len() < 200, "{e}");
}

/// A queue limit is kept as given or refused, never changed: an explicit limit of 1 packet used
/// to become 2 and 1e300 packets 4294967295, both silently (the echoed scenario showed it).
#[test]
fn a_queue_limit_is_kept_or_refused_never_changed() {
    let limit_of = |l: Value| {
        let mut s = base();
        s["bottleneck"]["limit"] = l;
        Scenario::from_value(&s).map(|s| s.normalized()["bottleneck"]["limit"].clone()).map_err(|e| e.to_string())
    };
    assert_eq!(limit_of(json!(2)), Ok(json!(2)));
    assert_eq!(limit_of(json!(4294967295u64)), Ok(json!(4294967295u64)));
    for bad in [json!(1), json!(1.5), json!(4294967296u64), json!(1e300), json!(0)] {
        assert_eq!(
            limit_of(bad.clone()),
            Err(format!("bottleneck.limit: must be a whole number of packets in [2, 4294967295]; got {}", crate::scenario::show_num(bad.as_f64().unwrap())))
        );
    }
    // a multiple of the BDP: a tiny one is raised to the smallest limit (docs/scenario.md), a
    // huge one refused with the packets it comes to
    assert_eq!(limit_of(json!("0.0001bdp")), Ok(json!(2)));
    let e = limit_of(json!("1e9bdp")).unwrap_err();
    assert!(e.starts_with("bottleneck.limit: 1000000000 BDP is ") && e.ends_with("above the largest limit, 4294967295"), "{e}");
}

/// A formula whose constant part is not a finite number is refused at validation, naming the
/// flow group's parameter; it used to be accepted and stop the run.
#[test]
fn a_non_finite_constant_formula_is_refused_naming_the_field() {
    let mut s = base();
    s["flows"][1] = json!({"algorithm": "formula", "params": {"increase": "1/0", "decrease": "0.5*w"}});
    assert_eq!(error_of(s).to_string(), "flows[1].params.increase: constant part '1/0' must be a finite number; it evaluates to inf at column 1");
    let mut s = base();
    s["flows"][1] = json!({"algorithm": "formula", "params": {"f": "w", "g": "sqrt(c - 1)", "c": 0}});
    assert_eq!(error_of(s).to_string(), "flows[1].params.g: constant part 'sqrt(c - 1)' must be a finite number; it evaluates to NaN at column 1");
    let mut s = base();
    s["flows"][1] = json!({"algorithm": "formula", "params": {"increase": "1/(w - 20)", "decrease": "0.5*w"}});
    assert!(Scenario::from_value(&s).is_ok(), "a formula with a variable is judged at run time");
}

#[test]
fn external_controllers_may_not_take_a_registry_name() {
    let mut v = base();
    v["flows"] = json!([{ "algorithm": "mine", "params": { "alpha": 2 } }, { "algorithm": "tcp" }]);
    let s = Scenario::from_value_with(&v, &["mine".to_string()]).unwrap();
    assert_eq!(s.normalized()["flows"][0]["params"], json!({ "alpha": 2 }));
    // a name of the registry (or an alias) would replace that algorithm, e.g. the TCP a law is
    // judged against, or silently lose to it (a rate-based or UDP name)
    for taken in ["tcp", "cbr", "tfrc", "aimd"] {
        let e = Scenario::from_value_with(&v, &["mine".to_string(), taken.to_string()]).unwrap_err();
        assert_eq!(e.field, "controllers");
        assert!(e.message.contains(&format!("'{taken}' is a built-in algorithm")), "{}", e.message);
    }
}

/// The expanded scenario's `ecn` (what the ns-2 export sets as each agent's `ecn_`) says what
/// the engine builds: TCP flows on a path with an ECN queue are ECN-capable; TFRC and CBR flows
/// on the same path are not (they were reported ECN-capable, and ns-2 then marked their packets
/// where the engine dropped them).
#[test]
fn only_tcp_flows_on_an_ecn_path_are_ecn_capable() {
    let mut v = base();
    v["bottleneck"]["ecn"] = json!(true);
    v["flows"][1] = json!({"count": 2, "algorithm": "tfrc"});
    v["flows"].as_array_mut().unwrap().push(json!({"count": 1, "algorithm": "cbr", "rate": "1Mbps"}));
    let s = Scenario::from_value(&v).unwrap();
    let ecn: Vec<(String, bool)> = s.expanded()["flows"].as_array().unwrap().iter().map(|f| (f["algorithm"].as_str().unwrap().to_string(), f["ecn"].as_bool().unwrap())).collect();
    assert_eq!(ecn.iter().filter(|(a, e)| a == "tcp" && *e).count(), 4, "{ecn:?}");
    assert!(ecn.iter().all(|(a, e)| a == "tcp" || !e), "{ecn:?}");
    let cfg = s.to_config();
    for (f, (alg, e)) in cfg.flows.iter().zip(&ecn) {
        let engine_ecn = match &f.kind {
            crate::config::FlowKind::Tcp { tcp, .. } => tcp.ecn,
            _ => false,
        };
        assert_eq!(engine_ecn, *e, "{alg}");
    }
    // the run says so: a warning per group that is not ECN-capable on an ECN path
    assert_eq!(s.warnings(), vec![
        "flows[1]: 'tfrc' is not ECN-capable (only TCP flows are): the ECN queue on its path drops its packets where it marks TCP's".to_string(),
        "flows[2]: 'cbr' is not ECN-capable (only TCP flows are): the ECN queue on its path drops its packets where it marks TCP's".to_string(),
    ]);
    v["bottleneck"]["ecn"] = json!(false);
    let s = Scenario::from_value(&v).unwrap();
    assert!(s.expanded()["flows"].as_array().unwrap().iter().all(|f| f["ecn"] == json!(false)));
    assert!(s.warnings().is_empty());
}

/// A small deterministic generator for the random graphs below.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// The route rule as first written (settle the unsettled node of least (hops, delay), the
/// lowest index among equals, by scanning them all): the oracle for the heap version.
fn shortest_path_by_scan(def: &GraphDef, a: usize, b: usize) -> Option<Vec<usize>> {
    let n = def.nodes.len();
    let mut out = vec![vec![]; n];
    for (i, l) in def.links.iter().enumerate() {
        out[l.from].push((l.to, i));
        if l.duplex {
            out[l.to].push((l.from, i));
        }
    }
    let mut best: Vec<Option<(usize, f64)>> = vec![None; n];
    let mut prev = vec![usize::MAX; n];
    let mut done = vec![false; n];
    best[a] = Some((0, 0.0));
    loop {
        let mut u: Option<(usize, (usize, f64))> = None;
        for i in 0..n {
            if let (false, Some(c)) = (done[i], best[i]) {
                if u.is_none_or(|(_, cu)| c.0 < cu.0 || (c.0 == cu.0 && c.1 < cu.1)) {
                    u = Some((i, c));
                }
            }
        }
        let Some((u, (hops, delay))) = u else { break };
        done[u] = true;
        if u == b {
            break;
        }
        for &(v, li) in &out[u] {
            let c = (hops + 1, delay + def.links[li].delay);
            if !done[v] && best[v].is_none_or(|o| c.0 < o.0 || (c.0 == o.0 && c.1 < o.1)) {
                best[v] = Some(c);
                prev[v] = u;
            }
        }
    }
    best[b]?;
    let mut path = vec![b];
    while *path.last().unwrap() != a {
        path.push(prev[*path.last().unwrap()]);
    }
    path.reverse();
    Some(path)
}

/// The BDP rule as first written (per link, the list of the crossing flows' round trips):
/// the oracle for `graph_rtts` + `graph_bdp`.
fn graph_bdp_by_lists(def: &GraphDef, groups: &[Group], li: usize, reversed: bool, packet_size: u32) -> f64 {
    let edge = |a: usize, b: usize| {
        def.links.iter().enumerate().find_map(|(i, l)| {
            if (l.from, l.to) == (a, b) {
                Some((i, false))
            } else if l.duplex && (l.from, l.to) == (b, a) {
                Some((i, true))
            } else {
                None
            }
        })
    };
    let crosses = |p: &[usize], rev: bool| p.windows(2).any(|w| edge(w[0], w[1]) == Some((li, rev)));
    let path_delay = |p: &[usize]| p.windows(2).map(|w| def.links[edge(w[0], w[1]).unwrap().0].delay).sum::<f64>();
    let mean = |rev: bool| {
        let mut rtts = vec![];
        for g in groups.iter().filter(|g| matches!(g.kind, GroupKind::Tcp { .. } | GroupKind::Rate { .. })) {
            if let RouteDef::Path(p) = &g.route {
                if crosses(p, rev) {
                    rtts.extend((0..g.count).map(|k| edge_rtt(g, k) + 2.0 * path_delay(p)));
                }
            }
        }
        if rtts.is_empty() { None } else { Some(rtts.iter().sum::<f64>() / rtts.len() as f64) }
    };
    let l = &def.links[li];
    let rtt = mean(reversed).or_else(|| mean(!reversed)).unwrap_or(2.0 * l.delay);
    l.rate * rtt / (8.0 * packet_size as f64)
}

#[test]
fn graph_routes_and_bdps_match_the_first_rules_on_random_graphs() {
    let mut r = Lcg(11);
    let mut checked = (0, 0);
    for case in 0..600 {
        let n = 3 + r.below(12) as usize;
        let mut links = vec![];
        let mut pairs = std::collections::HashSet::new();
        for _ in 0..(n + r.below(2 * n as u64) as usize) {
            let (a, b) = (r.below(n as u64) as usize, r.below(n as u64) as usize);
            let duplex = r.below(6) != 0;
            if a == b || pairs.contains(&(a, b)) || (duplex && pairs.contains(&(b, a))) {
                continue;
            }
            pairs.insert((a, b));
            if duplex {
                pairs.insert((b, a));
            }
            // delays from a small set, so that equal hop counts often tie on delay too
            let delay = ["0ms", "1ms", "2ms", "3ms"][r.below(4) as usize];
            links.push(json!({"from": format!("r{a}"), "to": format!("r{b}"), "rate": "10Mbps", "delay": delay, "duplex": duplex}));
        }
        if links.is_empty() {
            continue;
        }
        let flows: Vec<Value> = (0..1 + r.below(4))
            .map(|_| {
                let (a, b) = (r.below(n as u64), r.below(n as u64));
                let kind = if r.below(5) == 0 { "cbr" } else { "tcp" };
                let mut f = json!({"count": 1 + r.below(3), "algorithm": kind, "from": format!("r{a}"), "to": format!("r{b}"),
                                   "access_delay": format!("{}ms..{}ms", r.below(3), 3 + r.below(5))});
                if kind == "cbr" {
                    f["rate"] = json!("1Mbps");
                }
                f
            })
            .collect();
        let v = json!({"duration": 1, "seed": case, "links": links, "flows": flows});
        let Ok(s) = Scenario::from_value(&v) else { continue };
        let Net::Graph { def, queues } = &s.net else { panic!() };
        for (gi, g) in s.groups.iter().enumerate() {
            let RouteDef::Path(p) = &g.route else { panic!() };
            let (a, b) = (def.node(v["flows"][gi]["from"].as_str().unwrap()).unwrap(), def.node(v["flows"][gi]["to"].as_str().unwrap()).unwrap());
            assert_eq!(Some(p.clone()), shortest_path_by_scan(def, a, b), "case {case}, group {gi}");
            checked.0 += 1;
        }
        for (li, (fwd, rev)) in queues.iter().enumerate() {
            let want = graph_bdp_by_lists(def, &s.groups, li, false, s.packet_size);
            assert_eq!(fwd.bdp_pkts.to_bits(), want.to_bits(), "case {case}, link {li}");
            if let Some(rev) = rev {
                let want = graph_bdp_by_lists(def, &s.groups, li, true, s.packet_size);
                assert_eq!(rev.bdp_pkts.to_bits(), want.to_bits(), "case {case}, link {li} reversed");
            }
            checked.1 += 1;
        }
    }
    // most random cases are valid scenarios
    assert!(checked.0 > 400 && checked.1 > 2000, "{checked:?}");
}

#[test]
fn graph_link_names_and_pairs_clash_with_the_earliest_link() {
    let with = |links: Value| {
        let v = json!({"duration": 1, "links": links, "flows": [{"algorithm": "cbr", "rate": "1Mbps", "path": ["a", "b"]}]});
        Scenario::from_value(&v).map(|_| ()).map_err(|e| format!("{}: {}", e.field, e.message))
    };
    let l = |from: &str, to: &str, name: &str, duplex: bool| json!({"from": from, "to": to, "name": name, "duplex": duplex, "rate": "1Mbps", "delay": "1ms"});
    assert_eq!(with(json!([l("a", "b", "x", true), l("b", "c", "x", true)])), Err("links[1].name: 'x' is used by another link".into()));
    assert_eq!(with(json!([l("a", "b", "x", true), l("b", "c", "x_reverse", false)])),
               Err("links[1].name: 'x_reverse' is the name of the reverse direction of link 'x'".into()));
    assert_eq!(with(json!([l("a", "b", "x_reverse", false), l("b", "c", "x", true)])),
               Err("links[1].name: the reverse direction of 'x' would be named 'x_reverse', which is used by another link".into()));
    // not duplex: its reverse direction has no name to clash
    assert_eq!(with(json!([l("a", "b", "x_reverse", false), l("b", "c", "x", false)])), Ok(()));
    // two clashes: the earlier link's is reported
    assert_eq!(with(json!([l("a", "b", "y_reverse", false), l("b", "c", "y", true), l("c", "d", "y", true)])),
               Err("links[1].name: the reverse direction of 'y' would be named 'y_reverse', which is used by another link".into()));
    assert_eq!(with(json!([l("a", "b", "p", true), l("a", "c", "q_reverse", false), l("c", "d", "q", false), l("b", "d", "q_reverse_reverse", false)])), Ok(()));
    assert_eq!(with(json!([l("a", "b", "p", true), l("b", "c", "p_reverse_reverse", false), l("c", "d", "p_reverse", true)])),
               Err("links[2].name: 'p_reverse' is the name of the reverse direction of link 'p'".into()));
    // a second link between the same routers, either way round when the first is duplex
    assert_eq!(with(json!([l("a", "b", "x", true), l("b", "a", "y", false)])), Err("links[1]: a link from 'b' to 'a' already exists".into()));
    assert_eq!(with(json!([l("a", "b", "x", false), l("b", "a", "y", false)])), Ok(()));
    // (as first written: only a pair an earlier link joins is refused, not the new link's own reverse)
    assert_eq!(with(json!([l("a", "b", "x", false), l("b", "a", "y", true)])), Ok(()));
}

#[test]
fn long_chains_resolve_and_a_route_longer_than_a_hop_count_is_refused() {
    let chain = |n: usize, to: usize| {
        let links: Vec<Value> = (0..n).map(|i| json!({"from": format!("n{i}"), "to": format!("n{}", i + 1), "rate": "1Gbps", "delay": "1us"})).collect();
        json!({"duration": 1, "links": links, "flows": [{"count": 2, "from": "n0", "to": format!("n{to}"), "access_delay": 0, "receiver_delay": 0}]})
    };
    // 20 000 routers: the route, the BDPs and the name checks each took minutes when every
    // lookup scanned the links (the BDPs were links x path length x links)
    let s = Scenario::from_value(&chain(20_000, 20_000)).unwrap();
    let Net::Graph { queues, .. } = &s.net else { panic!() };
    let RouteDef::Path(p) = &s.groups[0].route else { panic!() };
    assert_eq!(p.len(), 20_001);
    // every link carries both flows: RTT 2 x 20 000 us (access links of 0 ms)
    assert!((queues[7].0.bdp_pkts - 1e9 * 0.04 / 8000.0).abs() < 1e-6, "{}", queues[7].0.bdp_pkts);
    assert_eq!(s.to_config().flows[1].route.fwd.len(), 20_002);
    let max = crate::net::MAX_ROUTE_LINKS - 2;
    Scenario::from_value(&chain(max, max)).unwrap();
    let e = error_of(chain(max + 1, max + 1));
    assert_eq!(e.field, "flows[0].to");
    assert_eq!(e.message, format!("a route crosses at most {max} links between routers (with the flow's two access links, 65535); this one crosses {}", max + 1));
    // a shorter route on the same long graph is fine
    Scenario::from_value(&chain(max + 1, 5)).unwrap();
    // from and to the same router: refused (it panicked: a route of no link)
    let e = error_of(chain(3, 0));
    assert_eq!((e.field.as_str(), e.message.as_str()), ("flows[0].to", "must be another router than from ('n0'): a flow crosses at least one link"));
}

#[test]
fn messages_about_names_show_eight_of_many() {
    assert_eq!(crate::error::show_names(&["a", "b"]), "a, b");
    let many: Vec<String> = (0..20_001).map(|i| format!("n{i}")).collect();
    assert_eq!(crate::error::show_names(&many), "n0, n1, n2, n3, n4, n5, n6, n7, ... (20001 in all)");
    // an unknown router among 20 001 declared ones, on a link and on a flow's path; an
    // unknown link among 40 004 (both directions, and the flow's four access links) for the trace
    let links: Vec<Value> = (0..20_000).map(|i| json!({"from": format!("n{i}"), "to": format!("n{}", i + 1), "rate": "1Gbps", "delay": "1us"})).collect();
    let mut v = json!({"duration": 1, "nodes": many, "links": links, "flows": [{"path": ["n0", "n1"]}],
                       "trace": {"links": ["n19998-n19999", "n0-n1_reverse"]}});
    Scenario::from_value(&v).unwrap();
    v["trace"]["links"][1] = json!("n0-n2");
    let e = error_of(v.clone());
    assert_eq!((e.field.as_str(), e.message.as_str()), ("trace.links[1]", "no link named 'n0-n2' (links: n0-n1, n0-n1_reverse, n1-n2, n1-n2_reverse, n2-n3, n2-n3_reverse, n3-n4, n3-n4_reverse, ... (40004 in all))"));
    v["flows"][0]["path"] = json!(["n0", "x"]);
    let e = error_of(v.clone());
    assert_eq!(e.message, "unknown node 'x' (nodes: n0, n1, n2, n3, n4, n5, n6, n7, ... (20001 in all))");
    v["links"][5]["to"] = json!("y");
    let e = error_of(v);
    assert_eq!((e.field.as_str(), e.message.as_str()), ("links[5].to", "unknown node 'y' (declared: n0, n1, n2, n3, n4, n5, n6, n7, ... (20001 in all))"));
}
