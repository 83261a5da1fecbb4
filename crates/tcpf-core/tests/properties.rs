//! Property tests: invariants that must hold for any input, checked on random cases.

use proptest::prelude::*;
use serde_json::{json, Value};
use tcpf_core::api;
use tcpf_core::net::link::Link;
use tcpf_core::net::queue::QueueSpec;
use tcpf_core::net::Packet;
use tcpf_core::scenario::Scenario;
use tcpf_core::sim::Rng;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A DropTail link never holds more than `limit` packets, delivers in FIFO order, never
    /// delivers before the transmission and propagation time, and is never busy longer than
    /// the time that passed.
    #[test]
    fn droptail_link_invariants(limit in 1u32..20, gaps in prop::collection::vec(0u64..3_000_000, 1..200), sizes in prop::collection::vec(40u32..1500, 200)) {
        let rate = 8e6; // 1 byte per µs
        let mut l = Link::new("l".into(), 0, 1, rate, 5_000_000, &QueueSpec::DropTail { limit }, Rng::new(1));
        let mut t = 0u64;
        let mut accepted: Vec<(u64, u64, u32)> = vec![]; // (arrival at link, arrival at far end, size)
        for (i, g) in gaps.iter().enumerate() {
            t += g;
            let mut p = Packet::data(0, i as u32, sizes[i], t, 0).split().0;
            // packets in the system at t: accepted ones whose transmission has not ended
            let in_system = accepted.iter().filter(|(_, far, _)| far - 5_000_000 > t).count() as u32;
            match l.admit(t, &mut p) {
                Some(far) => {
                    prop_assert!(in_system < limit, "admitted with {} in system (limit {})", in_system, limit);
                    let tx = (sizes[i] as u64 * 1000).max(1);
                    prop_assert!(far >= t + tx + 5_000_000);
                    if let Some(&(_, prev, _)) = accepted.last() {
                        prop_assert!(far >= prev + tx, "not FIFO");
                    }
                    accepted.push((t, far, sizes[i]));
                }
                None => prop_assert!(in_system >= limit, "dropped with {} in system (limit {})", in_system, limit),
            }
        }
        let end = accepted.last().map_or(t, |a| a.1).max(t);
        let s = l.snapshot(end);
        prop_assert!(s.busy_ns <= end as u128);
        let bytes: u64 = accepted.iter().map(|a| a.2 as u64).sum();
        prop_assert_eq!(s.busy_ns, bytes as u128 * 1000);
        prop_assert_eq!(s.drops + accepted.len() as u64, gaps.len() as u64);
    }

    /// Normalising a valid scenario gives a fixed point.
    #[test]
    fn normalisation_is_idempotent(
        rate in 1.0f64..1000.0, delay in 0.1f64..200.0, queue in prop::sample::select(vec!["droptail", "red"]),
        limit in 0.3f64..5.0, n1 in 1u32..10, n2 in 0u32..10, alg in prop::sample::select(vec!["tcp", "gaimd", "iiad", "sqrt", "simd", "log", "tfrc", "aiad_h"]),
        lo in 0.0f64..20.0, spread in 0.0f64..20.0, seed in 0u64..1000,
    ) {
        let s = json!({
            "duration": 10, "seed": seed,
            "bottleneck": {"rate": format!("{rate}Mbps"), "delay": format!("{delay}ms"), "queue": queue, "limit": format!("{limit}bdp")},
            "flows": [{"count": n1, "algorithm": alg, "access_delay": format!("{lo}ms..{}ms", lo + spread), "start": "0..1"},
                      {"count": n2, "algorithm": "tcp", "direction": "reverse"}]
        });
        let a = Scenario::from_value(&s).unwrap().normalized();
        let b = Scenario::from_value(&a).unwrap().normalized();
        prop_assert_eq!(a, b);
    }
}

/// Runs scenario `s` twice: the two outputs must be byte-identical and no flow may deliver more
/// packets than it sent. Returns the result.
fn run_checked(s: &str) -> Result<Value, TestCaseError> {
    let out = api::run(s, None, None).unwrap();
    prop_assert_eq!(&out, &api::run(s, None, None).unwrap());
    let r: Value = serde_json::from_str(&out).unwrap();
    for f in r["flows"].as_array().unwrap() {
        let (sent, got) = (f["packets_sent"].as_u64().unwrap(), f["packets_delivered"].as_u64().unwrap());
        prop_assert!(got <= sent, "flow {} delivered {} of {} sent", f["id"], got, sent);
    }
    Ok(r)
}

/// A 30-s run of 3 flows of `alg` with `recovery` and one TCP SACK flow over an 8 Mb/s, 20 ms
/// bottleneck losing each packet with probability `p` (`tcp`: the `[tcp]` table), checked by
/// [`run_checked`]; then the first `n` flows must each deliver in the second half (no stall).
fn never_stalls(alg: &str, recovery: &str, queue: &str, p: f64, seed: u64, tcp: Value, n: usize) -> Result<(), TestCaseError> {
    let scenario = |measure: Value| json!({
        "duration": 30, "seed": seed, "max_window": 200, "measure": measure, "tcp": tcp,
        "bottleneck": {"rate": "8Mbps", "delay": "20ms", "queue": queue, "limit": 30, "loss": {"model": "bernoulli", "p": p}},
        "flows": [{"count": 3, "algorithm": alg, "recovery": recovery, "access_delay": "1ms..8ms", "start": "0..1"},
                  {"count": 1, "algorithm": "tcp", "recovery": "sack", "start": "0..1"}]
    }).to_string();
    run_checked(&scenario(json!({"from": 0, "to": 30})))?;
    let late: Value = serde_json::from_str(&api::run(&scenario(json!({"from": 15, "to": 30})), None, None).unwrap()).unwrap();
    for f in late["flows"].as_array().unwrap().iter().take(n) {
        let got = f["packets_delivered"].as_u64().unwrap();
        prop_assert!(got > 0, "flow {} ({alg}/{recovery}, tcp {tcp}) delivered nothing in 15-30 s at p = {p}", f["id"]);
    }
    Ok(())
}

/// A small mixed run: 3 flows of `alg` (loss recovery `recovery`, None: the default), TCP in
/// reverse and an on/off CBR, with `[tcp] ns2_agent` as given.
fn small(alg: &str, queue: &str, seed: u64, recovery: Option<&str>, ns2_agent: bool) -> Value {
    let mut forward = json!({"count": 3, "algorithm": alg, "access_delay": "1ms..8ms", "start": "0..1"});
    if let Some(r) = recovery {
        forward["recovery"] = json!(r);
    }
    json!({
        "duration": 8, "seed": seed, "max_window": 64, "tcp": {"ns2_agent": ns2_agent},
        "bottleneck": {"rate": "4Mbps", "delay": "15ms", "queue": queue, "loss": {"model": "bernoulli", "p": 0.005}},
        "flows": [forward,
                  {"count": 2, "algorithm": "tcp", "direction": "reverse", "start": "0..1"},
                  {"count": 1, "algorithm": "cbr", "rate": "0.1x", "on": 1, "off": 1}]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any run: nothing is delivered that was not sent, counters are consistent, the link is
    /// never more than fully used, and the same seed gives the same bytes.
    #[test]
    fn runs_conserve_packets_and_are_deterministic(
        alg in prop::sample::select(vec!["tcp", "gaimd", "binomial_iiad", "simd", "log", "illinois", "tfrc", "tear"]),
        queue in prop::sample::select(vec!["droptail", "red"]), seed in 0u64..10_000,
        recovery in prop::sample::select(vec![None, Some("reno"), Some("newreno"), Some("newreno-impatient"), Some("sack")]),
        ns2_agent in any::<bool>(),
    ) {
        let alg = if alg == "binomial_iiad" { "iiad" } else { alg };
        // rate-based flows have no loss recovery to choose
        let recovery = if matches!(alg, "tfrc" | "tear") { None } else { recovery };
        let r = run_checked(&small(alg, queue, seed, recovery, ns2_agent).to_string())?;
        for f in r["flows"].as_array().unwrap() {
            if f["algorithm"] == "cbr" {
                // a UDP source has no loss events (null), whatever it lost
                prop_assert!(f["loss_events"].is_null() && f["loss_event_rate"].is_null());
            } else {
                prop_assert!(f["loss_events"].as_u64().unwrap() >= f["timeouts"].as_u64().unwrap());
            }
            prop_assert!(f["packets_delivered"].as_u64().unwrap() <= f["packets_sent"].as_u64().unwrap());
            prop_assert!(f["goodput_bps"].as_f64().unwrap() <= f["throughput_bps"].as_f64().unwrap() + 1e-9);
        }
        for l in r["links"].as_array().unwrap() {
            let u = l["utilization"].as_f64().unwrap();
            prop_assert!((0.0..=1.0 + 1e-9).contains(&u), "{} utilisation {}", l["name"], u);
            prop_assert!(l["drops"].as_u64().unwrap() <= l["arrivals"].as_u64().unwrap());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// SACK recovery, RFC 6675 or ns-2's Sack1 (`[tcp] ns2_agent = true`: a `pipe_` count that
    /// an ACK burst can drive below zero, holes repaired on one SACKed packet above them, only
    /// duplicate ACKs with new SACK information counted) under random loss up to 5 %, with the
    /// laws of ns-2's own agents: no panic, the same bytes for the same seed, nothing delivered
    /// that was not sent, and no stall in the second half of a 30-s run (as below).
    #[test]
    fn sack_recovery_conserves_packets_and_never_stalls(
        alg in prop::sample::select(vec!["tcp", "gaimd", "sqrt", "iiad", "simd", "aiad_h"]),
        p in 0.0f64..0.05, queue in prop::sample::select(vec!["droptail", "red"]), seed in 0u64..10_000,
        ns2_agent in any::<bool>(),
    ) {
        never_stalls(alg, "sack", queue, p, seed, json!({"ns2_agent": ns2_agent}), 4)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Linux-style recovery under random loss up to 5 % (FACK marking, lost retransmissions,
    /// rate halving, timeouts that keep SACK state), with every Linux-module controller: no
    /// panic, the same bytes for the same seed, nothing delivered that was not sent, and no
    /// stall: every Linux-recovery flow still delivers in the second half of a 30-s run (a
    /// silent 15 s would take a retransmission lost four times in a row, p^4 < 1e-5).
    #[test]
    fn linux_recovery_conserves_packets_and_never_stalls(
        alg in prop::sample::select(vec!["tcp", "bic", "compound", "vegas", "scalable", "hstcp", "illinois_linux", "cubic", "htcp"]),
        p in 0.0f64..0.05, queue in prop::sample::select(vec!["droptail", "red"]), seed in 0u64..10_000,
    ) {
        never_stalls(alg, "linux", queue, p, seed, json!({}), 3)?;
    }
}
