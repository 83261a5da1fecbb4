//! Reading nested tables with errors that name the field.

use super::ScenarioError;
use crate::error::show_num;
use serde_json::{Map, Value};

pub(crate) fn err<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError { field: field.into(), message: message.into() })
}

/// A table being read: remembers its path and rejects keys it does not know.
pub(crate) struct Table<'a> {
    pub path: String,
    pub map: &'a Map<String, Value>,
}

impl<'a> Table<'a> {
    pub fn new(path: &str, v: &'a Value) -> Result<Self, ScenarioError> {
        match v {
            Value::Object(map) => Ok(Table { path: path.to_string(), map }),
            other => err(path, format!("must be a table; got {other}")),
        }
    }

    pub fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn only(&self, allowed: &[&str]) -> Result<(), ScenarioError> {
        for k in self.map.keys() {
            if !allowed.contains(&k.as_str()) {
                return err(self.field(k), format!("unknown field (allowed here: {})", allowed.join(", ")));
            }
        }
        Ok(())
    }

    pub fn with<T>(&self, key: &str, default: Option<T>, f: impl Fn(&Value) -> Result<T, String>) -> Result<T, ScenarioError> {
        match self.get(key) {
            Some(v) => f(v).map_err(|m| ScenarioError { field: self.field(key), message: m }),
            None => match default {
                Some(d) => Ok(d),
                None => err(self.field(key), "is required"),
            },
        }
    }

    /// A field without a default: `with(key, None, f)`, whose error when it is missing says
    /// what to give (`hint`, e.g. "a rate such as \"10Mbps\"").
    pub fn need<T>(&self, key: &str, hint: &str, f: impl Fn(&Value) -> Result<T, String>) -> Result<T, ScenarioError> {
        match self.get(key) {
            Some(_) => self.with(key, None, f),
            None => err(self.field(key), format!("is required: {hint}")),
        }
    }

    pub fn number(&self, key: &str, default: Option<f64>, lo: f64, hi: f64, what: &str) -> Result<f64, ScenarioError> {
        self.with(key, default, |v| {
            let x = v.as_f64().ok_or_else(|| format!("must be a number ({what}); got {v}"))?;
            if x.is_finite() && x >= lo && x <= hi {
                Ok(x)
            } else {
                Err(format!("must be in [{}, {}] ({what}); got {}", show_num(lo), show_num(hi), show_num(x)))
            }
        })
    }

    pub fn integer(&self, key: &str, default: Option<u64>, lo: u64, hi: u64, what: &str) -> Result<u64, ScenarioError> {
        self.with(key, default, |v| {
            let x = v.as_f64().ok_or_else(|| format!("must be a whole number ({what}); got {v}"))?;
            if x.fract() != 0.0 || x < lo as f64 || x > hi as f64 {
                return Err(format!("must be a whole number in [{lo}, {hi}] ({what}); got {v}"));
            }
            Ok(x as u64)
        })
    }

    pub fn boolean(&self, key: &str, default: bool) -> Result<bool, ScenarioError> {
        self.with(key, Some(default), |v| v.as_bool().ok_or_else(|| format!("must be true or false; got {v}")))
    }

    pub fn string(&self, key: &str, default: &str, allowed: &[&str]) -> Result<String, ScenarioError> {
        self.with(key, Some(default.to_string()), |v| {
            let s = v.as_str().ok_or_else(|| format!("must be one of {}; got {v}", allowed.join(", ")))?;
            if allowed.contains(&s) {
                Ok(s.to_string())
            } else {
                Err(format!("must be one of {}; got '{s}'", allowed.join(", ")))
            }
        })
    }
}

