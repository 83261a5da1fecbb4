//! Parsing of quantities with units: rates ("15Mbps"), times ("50ms"), ranges ("1ms..10ms"),
//! buffer sizes ("2.5bdp") and thresholds ("0.15limit").
//!
//! Every time a scenario gives (duration, delays, start and stop times, timers, loss-model and
//! CBR times, …) is read here and must lie in [0, `MAX_SECONDS`]; every rate in
//! [`MIN_RATE`, `MAX_RATE`]. So the run's clock (integer nanoseconds, `sim::Time`, good to
//! 1.8e10 s) stays far from its range: a sum of a few validated times is below 1e8 s, and the
//! longest serialisation (64 kB at 1 b/s) is 5.3e5 s.

use crate::error::show_bytes;
use serde_json::Value;

/// Longest time or duration a scenario may give, in seconds (about 116 days).
pub const MAX_SECONDS: f64 = 1e7;
/// Slowest rate a scenario may give, in bits per second.
pub const MIN_RATE: f64 = 1.0;
/// Fastest rate a scenario may give, in bits per second (1 Tb/s).
pub const MAX_RATE: f64 = 1e12;

/// `r` (bits/s) if it is within [`MIN_RATE`, `MAX_RATE`].
fn bounded_rate(r: f64, v: &Value) -> Result<f64, String> {
    if r.is_finite() && (MIN_RATE..=MAX_RATE).contains(&r) {
        Ok(r)
    } else {
        Err(format!("must be a rate in [1 b/s, 1e12 b/s] (\"1bps\" to \"1000Gbps\"); got {}", show(v)))
    }
}

/// Split "12.5Mbps" into (12.5, "mbps"): an optional sign, digits and dots, then an exponent
/// ("e" or "E", an optional sign, digits) when one follows, so "1e-9s" and "2.5E+3ms" read as
/// the numbers 1e-9 and 2.5e3 do; the rest (trimmed, lower case) is the unit.
fn split_number(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let b = s.as_bytes();
    let digits = |mut i: usize, dot: bool| {
        while i < b.len() && (b[i].is_ascii_digit() || (dot && b[i] == b'.')) {
            i += 1;
        }
        i
    };
    let sign = |i: usize| if i < b.len() && (b[i] == b'+' || b[i] == b'-') { i + 1 } else { i };
    let mut end = digits(sign(0), true);
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let start = sign(end + 1);
        let exp_end = digits(start, false);
        if exp_end > start {
            end = exp_end;
        }
    }
    let num: f64 = s[..end].parse().ok()?;
    Some((num, s[end..].trim().to_ascii_lowercase()))
}

/// A rate in bits per second: a number, or a string with bps/kbps/Mbps/Gbps (also "Mb/s", "Mb").
pub fn rate(v: &Value) -> Result<f64, String> {
    let r = match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => {
            let (x, unit) = split_number(s).ok_or_else(|| format!("cannot read '{s}' as a rate (e.g. \"15Mbps\")"))?;
            let mult = match unit.replace("/s", "ps").as_str() {
                "" | "bps" | "b" => 1.0,
                "kbps" | "kb" | "k" => 1e3,
                "mbps" | "mb" | "m" => 1e6,
                "gbps" | "gb" | "g" => 1e9,
                other => return Err(format!("unknown rate unit '{other}' in '{s}' (use bps, kbps, Mbps or Gbps)")),
            };
            x * mult
        }
        other => return Err(format!("must be a rate such as \"15Mbps\" or a number of bits/s; got {other}")),
    };
    bounded_rate(r, v)
}

/// An amount of memory in bytes: a whole number, or a string with B/kB/MB/GB (powers of 1000)
/// or KiB/MiB/GiB (powers of 1024), e.g. "512MB", "1GiB"; in [`lo`, `hi`] bytes.
pub fn bytes(v: &Value, lo: u64, hi: u64) -> Result<u64, String> {
    let b = match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => {
            let (x, unit) = split_number(s).ok_or_else(|| format!("cannot read '{s}' as an amount of memory (e.g. \"512MB\")"))?;
            let mult = match unit.as_str() {
                "" | "b" => 1.0,
                "kb" => 1e3,
                "mb" => 1e6,
                "gb" => 1e9,
                "kib" => 1024.0,
                "mib" => 1024.0 * 1024.0,
                "gib" => 1024.0 * 1024.0 * 1024.0,
                other => return Err(format!("unknown memory unit '{other}' in '{s}' (use B, kB, MB, GB, KiB, MiB or GiB)")),
            };
            x * mult
        }
        other => return Err(format!("must be an amount of memory such as \"512MB\" or a number of bytes; got {other}")),
    };
    if b.is_finite() && b >= lo as f64 && b <= hi as f64 {
        Ok(b.round() as u64)
    } else {
        Err(format!("must be in [{lo}, {hi}] bytes ({} to {}); got {}", show_bytes(lo), show_bytes(hi), show(v)))
    }
}

/// A duration in seconds: a number, or a string with s/ms/us/ns, in [0, 1e7].
pub fn seconds(v: &Value) -> Result<f64, String> {
    let t = time_value(v)?;
    if !(t.is_finite() && (0.0..=MAX_SECONDS).contains(&t)) {
        return Err(format!("must be a time in [0, 1e7] s; got {}", show(v)));
    }
    Ok(t)
}

/// A duration that must be positive: as `seconds`, in (0, 1e7]. `what` says what it is; the
/// message states the same range for a zero, a negative or a too large value.
pub fn positive_seconds(v: &Value, what: &str) -> Result<f64, String> {
    let t = time_value(v)?;
    if !(t.is_finite() && t > 0.0 && t <= MAX_SECONDS) {
        return Err(format!("must be a positive time in (0, 1e7] s ({what}); got {}", show(v)));
    }
    Ok(t)
}

/// The number of seconds a time states (any sign, possibly not finite): a number, or a string
/// with s/ms/us/ns.
fn time_value(v: &Value) -> Result<f64, String> {
    Ok(match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => {
            let (x, unit) = split_number(s).ok_or_else(|| format!("cannot read '{s}' as a time (e.g. \"50ms\")"))?;
            let mult = match unit.as_str() {
                "" | "s" | "sec" => 1.0,
                "ms" => 1e-3,
                "us" | "µs" => 1e-6,
                "ns" => 1e-9,
                other => return Err(format!("unknown time unit '{other}' in '{s}' (use s, ms, us or ns)")),
            };
            x * mult
        }
        other => return Err(format!("must be a time such as \"50ms\" or a number of seconds; got {other}")),
    })
}

/// A time or a range of times: "5ms", 0.005, "1ms..10ms", [0.001, 0.01].
pub fn seconds_range(v: &Value) -> Result<(f64, f64), String> {
    let (lo, hi) = match v {
        Value::String(s) if s.contains("..") => {
            let (a, b) = s.split_once("..").unwrap();
            let lo = seconds(&Value::String(a.to_string()))?;
            // "1..10ms": the unit of the upper bound applies to a bare lower bound.
            let b_unit = split_number(b).map(|(_, u)| u).unwrap_or_default();
            let a_has_unit = split_number(a).map(|(_, u)| !u.is_empty()).unwrap_or(false);
            let lo = if !a_has_unit && !b_unit.is_empty() { seconds(&Value::String(format!("{}{}", a.trim(), b_unit)))? } else { lo };
            (lo, seconds(&Value::String(b.to_string()))?)
        }
        Value::Array(a) if a.len() == 2 => (seconds(&a[0])?, seconds(&a[1])?),
        Value::Array(_) => return Err("a range needs exactly two values [low, high]".into()),
        _ => {
            let t = seconds(v)?;
            (t, t)
        }
    };
    if hi < lo {
        return Err(format!("range upper bound {hi} is below the lower bound {lo}"));
    }
    Ok((lo, hi))
}

/// A buffer size: packets (100, "100") or a multiple of the BDP ("2.5bdp").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    Packets(f64),
    Bdp(f64),
}

pub fn size(v: &Value) -> Result<Size, String> {
    match v {
        Value::Number(n) => Ok(Size::Packets(n.as_f64().unwrap_or(f64::NAN))),
        Value::String(s) => {
            let (x, unit) = split_number(s).ok_or_else(|| format!("cannot read '{s}' (packets, or a multiple of the BDP such as \"2.5bdp\")"))?;
            match unit.as_str() {
                "" | "p" | "pkts" | "packets" => Ok(Size::Packets(x)),
                "bdp" | "xbdp" => Ok(Size::Bdp(x)),
                other => Err(format!("unknown unit '{other}' in '{s}' (use packets or bdp)")),
            }
        }
        other => Err(format!("must be packets or a multiple of the BDP such as \"2.5bdp\"; got {other}")),
    }
}

/// A RED threshold: packets, or a fraction of the limit ("0.15limit").
pub fn threshold(v: &Value, limit: f64) -> Result<f64, String> {
    match v {
        Value::Number(n) => Ok(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => {
            let (x, unit) = split_number(s).ok_or_else(|| format!("cannot read '{s}' (packets, or a fraction of the limit such as \"0.15limit\")"))?;
            match unit.as_str() {
                "" | "p" | "pkts" | "packets" => Ok(x),
                "limit" | "xlimit" => Ok(x * limit),
                other => Err(format!("unknown unit '{other}' in '{s}' (use packets or limit)")),
            }
        }
        other => Err(format!("must be packets or a fraction of the limit such as \"0.15limit\"; got {other}")),
    }
}

/// An access rate: bits/s or a multiple of the bottleneck ("10x").
pub fn rate_or_multiple(v: &Value, base: f64) -> Result<f64, String> {
    if let Value::String(s) = v {
        let t = s.trim();
        if let Some(x) = t.strip_suffix('x').or_else(|| t.strip_suffix('X')) {
            let m: f64 = x.trim().parse().map_err(|_| format!("cannot read '{s}' as a multiple of the bottleneck rate (e.g. \"10x\")"))?;
            if !(m.is_finite() && m > 0.0) {
                return Err(format!("must be a positive multiple; got '{s}'"));
            }
            return bounded_rate(m * base, v);
        }
    }
    rate(v)
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rates() {
        assert_eq!(rate(&json!("15Mbps")).unwrap(), 15e6);
        assert_eq!(rate(&json!("1.5 Mb/s")).unwrap(), 1.5e6);
        assert_eq!(rate(&json!("500kbps")).unwrap(), 5e5);
        assert_eq!(rate(&json!(1000)).unwrap(), 1000.0);
        assert!(rate(&json!("-5Mbps")).is_err());
        assert!(rate(&json!("5 furlongs")).is_err());
        assert_eq!(rate_or_multiple(&json!("10x"), 15e6).unwrap(), 150e6);
        // Bounds: [1 b/s, 1e12 b/s] (issue 17: 1e-300 b/s delivered ~1 Mb/s through an
        // overflowed clock).
        assert_eq!(rate(&json!(1)).unwrap(), 1.0);
        assert_eq!(rate(&json!("1000Gbps")).unwrap(), 1e12);
        for bad in [json!(1e-300), json!(0.5), json!("0.9bps"), json!(0), json!("1e15bps"), json!(1.000001e12), json!("1e400bps")] {
            let e = rate(&bad).unwrap_err();
            assert!(e.starts_with("must be a rate in [1 b/s, 1e12 b/s]"), "{bad}: {e}");
        }
        assert!(rate_or_multiple(&json!("1e-9x"), 15e6).unwrap_err().contains("[1 b/s, 1e12 b/s]"));
        assert!(rate_or_multiple(&json!("1e6x"), 15e6).unwrap_err().contains("[1 b/s, 1e12 b/s]"));
    }

    #[test]
    fn times_and_ranges() {
        // an exponent with a sign reads as the number does (it used to be "cannot read")
        for (text, want) in [("1e-9", 1e-9), ("1e-3s", 1e-3), ("2.5E+3ms", 2.5), ("5e1ms", 0.05), ("+1e+0", 1.0)] {
            assert_eq!(seconds(&json!(text)), Ok(want), "{text}");
        }
        assert_eq!(rate(&json!("1.5e-3Gbps")), Ok(1.5e6));
        assert!(seconds(&json!("1e")).unwrap_err().contains("unknown time unit 'e'"));
        assert!(seconds(&json!("1e-")).unwrap_err().contains("unknown time unit 'e-'"));
        assert!(seconds(&json!("-1e-3")).unwrap_err().contains("must be a time in [0, 1e7] s"));
        assert!((seconds(&json!("50ms")).unwrap() - 0.05).abs() < 1e-15);
        assert_eq!(seconds(&json!(2.5)).unwrap(), 2.5);
        assert_eq!(seconds_range(&json!("1ms..10ms")).unwrap(), (0.001, 0.01));
        assert_eq!(seconds_range(&json!("0..2")).unwrap(), (0.0, 2.0));
        assert_eq!(seconds_range(&json!("1..10ms")).unwrap(), (0.001, 0.01));
        assert_eq!(seconds_range(&json!([0.5, 1])).unwrap(), (0.5, 1.0));
        assert!(seconds_range(&json!("5..1")).is_err());
        assert!(seconds(&json!("-1s")).is_err());
        // Bounds: [0, 1e7] s (issue 17: a delay of 1e12 s overflowed the nanosecond clock).
        assert_eq!(seconds(&json!(1e7)).unwrap(), 1e7);
        assert_eq!(seconds(&json!("1e10ms")).unwrap(), 1e7);
        for bad in [json!(1e12), json!(1.0000001e7), json!("1e11ms"), json!(-1e-9), json!(f64::MAX)] {
            assert_eq!(seconds(&bad).unwrap_err(), format!("must be a time in [0, 1e7] s; got {}", show(&bad)));
        }
        assert!(seconds_range(&json!("0..2e7")).is_err());
        assert!(seconds_range(&json!([0, 1e12])).is_err());
    }

    /// A time that must be positive states (0, 1e7] for a zero, a negative and a too large
    /// value alike (a negative one used to be told "[0, 1e7]", which admits the zero it refuses).
    #[test]
    fn positive_times_state_their_range() {
        assert_eq!(positive_seconds(&json!("20ms"), "x"), Ok(0.02));
        assert_eq!(positive_seconds(&json!(1e7), "x"), Ok(1e7));
        for bad in [json!(0), json!(-1), json!("-5ms"), json!(2e7), json!("0s")] {
            assert_eq!(positive_seconds(&bad, "the simulated time").unwrap_err(),
                       format!("must be a positive time in (0, 1e7] s (the simulated time); got {}", show(&bad)));
        }
        assert!(positive_seconds(&json!("5 parsecs"), "x").unwrap_err().starts_with("unknown time unit"));
        let e = |v: serde_json::Value| crate::api::normalize(&v.to_string()).unwrap_err().to_string();
        let net = json!({"rate": "5Mbps", "delay": "1ms"});
        for d in [json!(0), json!(-1)] {
            assert_eq!(e(json!({"duration": d, "bottleneck": net, "flows": [{"algorithm": "tcp"}]})),
                       format!("duration: must be a positive time in (0, 1e7] s (the simulated time); got {}", show(&d)));
        }
        assert!(e(json!({"duration": 5, "tcp": {"tick": -1}, "bottleneck": net, "flows": [{"algorithm": "tcp"}]}))
            .starts_with("tcp.tick: must be a positive time in (0, 1e7] s (RTO clock granularity); got -1"));
    }

    /// Regression (issue 17, item 5): out-of-range times and rates are validation errors naming
    /// the field, where they used to run with an overflowed clock.
    #[test]
    fn scenarios_with_absurd_times_or_rates_fail_naming_the_field() {
        let e = |v: serde_json::Value| crate::api::normalize(&v.to_string()).unwrap_err().to_string();
        let tcp = |flow: serde_json::Value, delay: serde_json::Value| json!({"duration": 5, "bottleneck": {"rate": "5Mbps", "delay": delay}, "flows": [flow]});
        assert_eq!(e(tcp(json!({"algorithm": "tcp"}), json!(1e12))), "bottleneck.delay: must be a time in [0, 1e7] s; got 1000000000000.0");
        assert_eq!(e(tcp(json!({"algorithm": "tcp", "access_rate": 1e-300}), json!("20ms"))), "flows[0].access_rate: must be a rate in [1 b/s, 1e12 b/s] (\"1bps\" to \"1000Gbps\"); got 1e-300");
        assert!(e(tcp(json!({"algorithm": "tcp", "stop": 2e7}), json!("20ms"))).starts_with("flows[0].stop: must be a time in [0, 1e7] s"));
        assert!(e(tcp(json!({"algorithm": "cbr", "rate": "1Mbps", "on": 1, "off": 1e9}), json!("20ms"))).starts_with("flows[0].off: must be a time in [0, 1e7] s"));
        assert!(e(json!({"duration": 5, "tcp": {"max_rto": 1e300}, "bottleneck": {"rate": "5Mbps", "delay": "1ms"}, "flows": [{"algorithm": "tcp"}]})).starts_with("tcp.max_rto: must be a positive time in (0, 1e7] s (RTO ceiling)"));
        assert!(e(json!({"duration": 5, "links": [{"from": "a", "to": "b", "rate": "1e15bps", "delay": "1ms"}], "flows": [{"algorithm": "tcp", "path": ["a", "b"]}]})).starts_with("links[0].rate: must be a rate in [1 b/s, 1e12 b/s]"));
    }

    #[test]
    fn sizes_and_thresholds() {
        assert!(matches!(size(&json!("2.5bdp")).unwrap(), Size::Bdp(x) if x == 2.5));
        assert!(matches!(size(&json!(100)).unwrap(), Size::Packets(x) if x == 100.0));
        assert!(matches!(size(&json!("100")).unwrap(), Size::Packets(x) if x == 100.0));
        assert_eq!(threshold(&json!("0.5limit"), 200.0).unwrap(), 100.0);
        assert_eq!(threshold(&json!(45), 200.0).unwrap(), 45.0);
    }
}
