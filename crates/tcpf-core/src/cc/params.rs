//! Parameter schemas, validation and canonical forms shared by every controller family.

use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;

/// A bad parameter: which one, and what is allowed.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// Parameter name (`alpha`), or empty when the algorithm itself is unknown.
    pub field: String,
    pub message: String,
}

impl ParamError {
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        ParamError { field: field.to_string(), message: message.into() }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

/// One parameter of an algorithm.
#[derive(Clone, Debug, Serialize)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: Option<f64>,
    /// Allowed range; `min_open`/`max_open` say whether the bound itself is excluded.
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub min_open: bool,
    pub max_open: bool,
    pub unit: &'static str,
    pub doc: &'static str,
}

impl ParamSpec {
    pub fn range_text(&self) -> String {
        let lo = match self.min {
            Some(v) => format!("{}{}", if self.min_open { "(" } else { "[" }, v),
            None => "(-inf".into(),
        };
        let hi = match self.max {
            Some(v) => format!("{}{}", v, if self.max_open { ")" } else { "]" }),
            None => "inf)".into(),
        };
        format!("{lo}, {hi}")
    }

    pub fn check(&self, v: f64) -> Result<f64, ParamError> {
        let ok_lo = match self.min {
            Some(m) => if self.min_open { v > m } else { v >= m },
            None => true,
        };
        let ok_hi = match self.max {
            Some(m) => if self.max_open { v < m } else { v <= m },
            None => true,
        };
        if v.is_finite() && ok_lo && ok_hi {
            Ok(v)
        } else {
            Err(ParamError::new(self.name, format!("must be in {} ({}); got {}", self.range_text(), self.doc, v)))
        }
    }
}

/// tsao2007 Table 3: fairness policy / increase step / curve / loss-history life cycle.
#[derive(Clone, Debug, Serialize)]
pub struct Taxonomy {
    pub fairness: &'static str,
    pub increase: &'static str,
    pub curve: &'static str,
    pub history: &'static str,
}

/// What `tcpf algorithms` shows about a controller.
#[derive(Clone, Debug, Serialize)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub family: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub params: Vec<ParamSpec>,
    /// Alternative spellings accepted for a parameter: (alias, canonical, how to convert).
    #[serde(skip)]
    pub aliases: Vec<Alias>,
    pub taxonomy: Option<Taxonomy>,
    pub notes: &'static str,
}

/// An alternative way of giving a parameter, e.g. `keep` for `beta` (beta = 1 − keep).
#[derive(Clone, Debug)]
pub struct Alias {
    pub name: &'static str,
    pub canonical: &'static str,
    pub spec: ParamSpec,
    pub to_canonical: fn(f64) -> f64,
}

/// Validated parameters in canonical form.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub algorithm: String,
    pub values: Vec<(&'static str, f64)>,
}

impl Params {
    pub fn get(&self, name: &str) -> f64 {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).unwrap_or(f64::NAN)
    }

    /// Canonical form as a JSON object (what every output prints).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        for (k, v) in &self.values {
            m.insert((*k).to_string(), number(*v));
        }
        Value::Object(m)
    }
}

/// A JSON number (integers stay integers for readability).
pub fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map(Value::Number).unwrap_or(Value::Null)
}

impl AlgorithmInfo {
    /// Validate user parameters against the schema, fill defaults, convert aliases.
    pub fn validate(&self, given: &Map<String, Value>) -> Result<Params, ParamError> {
        let mut values: Vec<(&'static str, Option<f64>)> = self.params.iter().map(|p| (p.name, None)).collect();
        for (key, val) in given {
            let (spec, canonical, conv): (&ParamSpec, &'static str, Option<fn(f64) -> f64>) =
                if let Some(p) = self.params.iter().find(|p| p.name == key) {
                    (p, p.name, None)
                } else if let Some(a) = self.aliases.iter().find(|a| a.name == key) {
                    (&a.spec, a.canonical, Some(a.to_canonical))
                } else {
                    let mut names: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                    names.extend(self.aliases.iter().map(|a| a.name));
                    let allowed = if names.is_empty() { "none".to_string() } else { names.join(", ") };
                    return Err(ParamError::new(key, format!("unknown parameter for '{}' (allowed: {allowed})", self.name)));
                };
            let v = val.as_f64().ok_or_else(|| ParamError::new(key, format!("must be a number; got {val}")))?;
            let v = spec.check(v)?;
            let v = conv.map_or(v, |f| f(v));
            let slot = values.iter_mut().find(|(n, _)| *n == canonical).unwrap();
            if slot.1.is_some() {
                let others: Vec<&str> = self.aliases.iter().filter(|a| a.canonical == canonical).map(|a| a.name).collect();
                return Err(ParamError::new(key, format!("give only one of {}, {}", canonical, others.join(", "))));
            }
            slot.1 = Some(v);
        }
        let mut out = Vec::with_capacity(values.len());
        for (spec, (name, v)) in self.params.iter().zip(values) {
            match v.or(spec.default) {
                Some(v) => out.push((name, v)),
                None => return Err(ParamError::new(name, format!("is required for '{}' ({})", self.name, spec.doc))),
            }
        }
        Ok(Params { algorithm: self.name.to_string(), values: out })
    }
}

/// Validate `params` for algorithm `name`.
pub fn validate(name: &str, given: &Map<String, Value>) -> Result<Params, ParamError> {
    match super::info(name) {
        Some(info) => info.validate(given),
        None => {
            let names: Vec<&str> = super::registry().iter().map(|a| a.name).collect();
            Err(ParamError::new("", format!("unknown algorithm '{name}' (known: {})", names.join(", "))))
        }
    }
}
