//! The one error type for bad input: which field, and what is wrong with it. Controller
//! parameters (`cc::ParamError`), scenarios (`scenario::ScenarioError`) and analytic models
//! (`models::ModelError`) are all this type; front ends read `field` and `message` directly
//! (the Python bindings pass both to `tcpfriendly.ScenarioError`).

use std::fmt;

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
