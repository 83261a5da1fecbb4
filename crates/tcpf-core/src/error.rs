//! The one error type for bad input: which field, and what is wrong with it. Controller
//! parameters (`cc::ParamError`), scenarios (`scenario::ScenarioError`) and analytic models
//! (`models::ModelError`) are all this type; front ends read `field` and `message` directly
//! (the Python bindings pass both to `tcpfriendly.ScenarioError`).

use std::fmt;

/// A number as an error message shows a value it refuses or a bound it states: plain decimals
/// for 1e-4 <= |x| < 1e16 (`0.25`, `1500`), otherwise the shortest exponent form that reads
/// back as the same number (`1e-300`, `2.5e20`) instead of hundreds of digits. Non-finite
/// values read `inf`, `-inf`, `NaN`.
pub fn show_num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e16).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// An amount of memory as a message shows it, in the largest binary unit it reaches (B, KiB,
/// MiB, GiB) with at most one decimal, so that no size rounds to zero: `512 B`, `1 KiB`,
/// `61 MiB` (64 MB), `1.5 GiB`.
pub fn show_bytes(b: u64) -> String {
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if b >= unit {
            let x = format!("{:.1}", b as f64 / unit as f64);
            return format!("{} {name}", x.strip_suffix(".0").unwrap_or(&x));
        }
    }
    format!("{b} B")
}

/// Names a message offers to choose from (nodes, links), the first eight and how many there
/// are when there are more: `a, b, c` or `n0, n1, ..., n7, ... (66001 in all)`, so that a
/// graph of many thousands of routers does not make a message of hundreds of kilobytes.
pub fn show_names<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 8;
    let mut out = names.iter().take(SHOWN).map(|n| n.as_ref()).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        out.push_str(&format!(", ... ({} in all)", names.len()));
    }
    out
}

/// A bad input value: the dotted path of the field (`flows[1].params.keep`, `beta`; empty when
/// the error is about the input as a whole) and what is wrong with it, including the allowed
/// range. Messages never name command-line options: a front end adds that context.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), message: message.into() }
    }

    /// The same error with its field placed under `prefix` (`params` + `beta` =
    /// `params.beta`; an empty field becomes `prefix` itself).
    pub fn under(self, prefix: &str) -> Self {
        let field = if self.field.is_empty() { prefix.to_string() } else { format!("{prefix}.{}", self.field) };
        FieldError { field, message: self.message }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for FieldError {}

/// Why a run did not produce results.
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// The scenario is invalid, or the run outgrew one of its resource limits (`limits.memory`):
    /// the user's input, exit code 2 at the CLI.
    Scenario(FieldError),
    /// The run failed while simulating, e.g. a user formula evaluated to NaN.
    Runtime(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Scenario(e) => e.fmt(f),
            RunError::Runtime(m) => f.write_str(m),
        }
    }
}

impl From<FieldError> for RunError {
    fn from(e: FieldError) -> Self {
        RunError::Scenario(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_back_and_stay_short() {
        assert_eq!(show_num(1e-300), "1e-300");
        assert_eq!(show_num(-2.5e300), "-2.5e300");
        assert_eq!(show_num(1e16), "1e16");
        assert_eq!(show_num(9999999999999998.0), "9999999999999998");
        assert_eq!(show_num(0.0001), "0.0001");
        assert_eq!(show_num(0.00009), "9e-5");
        assert_eq!(show_num(0.1), "0.1");
        assert_eq!(show_num(-3.0), "-3");
        assert_eq!(show_num(0.0), "0");
        assert_eq!(show_num(f64::INFINITY), "inf");
        assert_eq!(show_num(f64::NAN), "NaN");
        assert_eq!(show_num(f64::MIN_POSITIVE / 4.0), "5.562684646268003e-309");
        for x in [1e-300, 1.234567890123e-7, 3.3e250, f64::MAX, 5e-324, 0.3, 123456.789] {
            assert_eq!(show_num(x).parse::<f64>().unwrap(), x, "{x} reads back");
            assert!(show_num(x).len() <= 24, "{}", show_num(x));
        }
    }

    #[test]
    fn sizes_never_round_to_zero() {
        assert_eq!(show_bytes(0), "0 B");
        assert_eq!(show_bytes(1023), "1023 B");
        assert_eq!(show_bytes(1024), "1 KiB");
        assert_eq!(show_bytes(1536), "1.5 KiB");
        assert_eq!(show_bytes(1 << 20), "1 MiB");
        assert_eq!(show_bytes(64_000_000), "61 MiB");
        assert_eq!(show_bytes(1 << 30), "1 GiB");
        assert_eq!(show_bytes(3 << 29), "1.5 GiB");
        assert_eq!(show_bytes(64 << 30), "64 GiB");
    }
}
