//! Parsing of quantities with units: rates ("15Mbps"), times ("50ms"), ranges ("1ms..10ms"),
//! buffer sizes ("2.5bdp") and thresholds ("0.15limit").

use serde_json::Value;

/// Split "12.5Mbps" into (12.5, "mbps").
fn split_number(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || *c == '.' || ((*c == '-' || *c == '+') && *i == 0) || *c == 'e' && *i > 0 && s[..*i].chars().all(|d| d.is_ascii_digit() || d == '.')))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let num: f64 = s[..end].trim().parse().ok()?;
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
    if !(r.is_finite() && r > 0.0) {
        return Err(format!("must be a positive rate; got {}", show(v)));
    }
    Ok(r)
}

/// A duration in seconds: a number, or a string with s/ms/us/ns.
pub fn seconds(v: &Value) -> Result<f64, String> {
    let t = match v {
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
    };
    if !(t.is_finite() && t >= 0.0) {
        return Err(format!("must be a non-negative time; got {}", show(v)));
    }
    Ok(t)
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
            return Ok(m * base);
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
    }

    #[test]
    fn times_and_ranges() {
        assert!((seconds(&json!("50ms")).unwrap() - 0.05).abs() < 1e-15);
        assert_eq!(seconds(&json!(2.5)).unwrap(), 2.5);
        assert_eq!(seconds_range(&json!("1ms..10ms")).unwrap(), (0.001, 0.01));
        assert_eq!(seconds_range(&json!("0..2")).unwrap(), (0.0, 2.0));
        assert_eq!(seconds_range(&json!("1..10ms")).unwrap(), (0.001, 0.01));
        assert_eq!(seconds_range(&json!([0.5, 1])).unwrap(), (0.5, 1.0));
        assert!(seconds_range(&json!("5..1")).is_err());
        assert!(seconds(&json!("-1s")).is_err());
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
