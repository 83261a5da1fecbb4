//! Parameter schemas, validation and canonical forms shared by every controller family.

use serde::Serialize;
use crate::error::show_num;
use serde_json::{Map, Value};

/// A bad parameter: which one (`alpha`), or an empty field when the algorithm itself is
/// unknown, and what is allowed.
pub type ParamError = crate::error::FieldError;

/// What kind of value a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// A finite number within `[min, max]`.
    Number,
    /// An expression over the controller's variables (see `cc::formula`), given as a string.
    Formula,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
}

impl ParamKind {
    pub fn name(&self) -> &'static str {
        match self {
            ParamKind::Number => "number",
            ParamKind::Formula => "formula",
            ParamKind::Choice(_) => "choice",
        }
    }
}

/// One parameter of an algorithm.
#[derive(Clone, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    /// Default of a number (None: required, unless the kind is `Formula`, which is optional and
    /// checked by the algorithm's own rule).
    pub default: Option<f64>,
    /// Default of a choice.
    pub default_text: Option<&'static str>,
    /// Allowed range; `min_open`/`max_open` say whether the bound itself is excluded.
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub min_open: bool,
    pub max_open: bool,
    pub unit: &'static str,
    pub doc: &'static str,
}

/// A number parameter with no bounds and no default; fill the rest with struct-update syntax:
/// `ParamSpec { name: "alpha", default: Some(1.0), ..ParamSpec::NUMBER }`.
impl ParamSpec {
    pub const NUMBER: ParamSpec = ParamSpec {
        name: "",
        kind: ParamKind::Number,
        default: None,
        default_text: None,
        min: None,
        max: None,
        min_open: false,
        max_open: false,
        unit: "",
        doc: "",
    };

    /// A fraction in the open interval (0, 1): a part of the window removed or kept, a
    /// probability. Set `unit` afterwards where it is not a plain fraction.
    pub const fn fraction(name: &'static str, default: f64, doc: &'static str) -> ParamSpec {
        ParamSpec { name, default: Some(default), min: Some(0.0), max: Some(1.0), min_open: true, max_open: true, unit: "fraction", doc, ..ParamSpec::NUMBER }
    }
}

impl Serialize for ParamSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("name", self.name)?;
        m.serialize_entry("kind", self.kind.name())?;
        match (self.default, self.default_text) {
            (Some(v), _) => m.serialize_entry("default", &v)?,
            (None, Some(t)) => m.serialize_entry("default", t)?,
            (None, None) => m.serialize_entry("default", &Option::<f64>::None)?,
        }
        m.serialize_entry("min", &self.min)?;
        m.serialize_entry("max", &self.max)?;
        m.serialize_entry("min_open", &self.min_open)?;
        m.serialize_entry("max_open", &self.max_open)?;
        if let ParamKind::Choice(c) = self.kind {
            m.serialize_entry("choices", c)?;
        }
        m.serialize_entry("unit", self.unit)?;
        m.serialize_entry("doc", self.doc)?;
        m.end()
    }
}

impl ParamSpec {
    pub fn range_text(&self) -> String {
        let lo = match self.min {
            Some(v) => format!("{}{}", if self.min_open { "(" } else { "[" }, show_num(v)),
            None => "(-inf".into(),
        };
        let hi = match self.max {
            Some(v) => format!("{}{}", show_num(v), if self.max_open { ")" } else { "]" }),
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
            Err(ParamError::new(self.name, format!("must be in {} ({}); got {}", self.range_text(), self.doc, show_num(v))))
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

/// A rule over the whole parameter set, run after each field passed its own check: rejects
/// combinations (naming the field to blame) and may add warnings to `Params::warnings`.
pub type CheckFn = fn(&mut Params) -> Result<(), ParamError>;

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
    /// Whether any other key naming a number is accepted as a named constant (formula
    /// controllers: `params = { increase = "a/w", a = 0.3 }`).
    pub named_numbers: bool,
    #[serde(skip)]
    pub check: Option<CheckFn>,
}

/// An alternative way of giving a parameter, e.g. `keep` for `beta` (beta = 1 − keep).
#[derive(Clone, Debug)]
pub struct Alias {
    pub name: &'static str,
    pub canonical: &'static str,
    pub spec: ParamSpec,
    pub to_canonical: fn(f64) -> f64,
}

/// Words of an on/off choice parameter.
pub const ON_OFF: &[&str] = &["on", "off"];

/// The `keep` alias of the removed-fraction parameter `canonical` (`canonical = 1 − keep`):
/// yang2000's and ns-2's kept fraction, as REFERENCE.md §1 asks every family to accept.
pub fn keep_alias(canonical: &'static str, doc: &'static str) -> Alias {
    let spec = ParamSpec { default: None, ..ParamSpec::fraction("keep", 0.0, doc) };
    Alias { name: "keep", canonical, spec, to_canonical: |k| 1.0 - k }
}

/// Validated parameters in canonical form. Every parameter of the schema has a slot, so a
/// lookup of a name the schema does not have is an error, never a silent NaN.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub algorithm: String,
    /// Number parameters, in schema order.
    pub values: Vec<(&'static str, f64)>,
    /// Formula and choice parameters, in schema order: the value given (or the default), or
    /// None for an optional formula that was not given.
    pub texts: Vec<(&'static str, Option<String>)>,
    /// User-named constants (algorithms with `named_numbers`), sorted by name.
    pub named: Vec<(String, f64)>,
    /// Valid but questionable settings (e.g. a binomial control that is not TCP-friendly);
    /// the scenario layer reports them to the user.
    pub warnings: Vec<String>,
}

impl Params {
    /// Parameters of an algorithm with no schema (a controller defined outside the registry,
    /// whose parameters are passed through as given).
    pub fn opaque(algorithm: &str) -> Params {
        Params { algorithm: algorithm.to_string(), values: vec![], texts: vec![], named: vec![], warnings: vec![] }
    }

    fn unknown(&self, name: &str, what: &str) -> ParamError {
        ParamError::new(name, format!("'{}' has no {what} parameter of this name", self.algorithm))
    }

    /// A number parameter; an error for a name that is not a number parameter of the schema.
    pub fn get(&self, name: &str) -> Result<f64, ParamError> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).ok_or_else(|| self.unknown(name, "number"))
    }

    /// A formula or choice parameter (None: an optional formula that was not given); an error
    /// for a name that is not a formula or choice parameter of the schema.
    pub fn text(&self, name: &str) -> Result<Option<&str>, ParamError> {
        self.texts.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_deref()).ok_or_else(|| self.unknown(name, "formula or choice"))
    }

    /// Canonical form as a JSON object (what every output prints).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        for (k, v) in &self.values {
            m.insert((*k).to_string(), number(*v));
        }
        for (k, v) in &self.texts {
            if let Some(v) = v {
                m.insert((*k).to_string(), Value::String(v.clone()));
            }
        }
        for (k, v) in &self.named {
            m.insert(k.clone(), number(*v));
        }
        Value::Object(m)
    }
}

/// A JSON number (integers stay integers for readability).
pub fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map(Value::Number).unwrap_or(Value::Null)
}

/// Whether `s` can name a constant in a formula: a letter or `_`, then letters, digits, `_`.
pub fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_') && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

impl AlgorithmInfo {
    /// Validate user parameters against the schema, fill defaults, convert aliases, then run
    /// the algorithm's own rule over the whole set.
    pub fn validate(&self, given: &Map<String, Value>) -> Result<Params, ParamError> {
        let mut values: Vec<(&'static str, Option<f64>)> = self.params.iter().filter(|p| p.kind == ParamKind::Number).map(|p| (p.name, None)).collect();
        let mut texts: Vec<(&'static str, Option<String>)> = self.params.iter().filter(|p| p.kind != ParamKind::Number).map(|p| (p.name, None)).collect();
        let mut named: Vec<(String, f64)> = Vec::new();
        for (key, val) in given {
            type Target<'s> = (&'s ParamSpec, &'static str, Option<fn(f64) -> f64>);
            let (spec, canonical, conv): Target =
                if let Some(p) = self.params.iter().find(|p| p.name == key) {
                    (p, p.name, None)
                } else if let Some(a) = self.aliases.iter().find(|a| a.name == key) {
                    (&a.spec, a.canonical, Some(a.to_canonical))
                } else if self.named_numbers {
                    if !is_identifier(key) {
                        return Err(ParamError::new(key, "a named constant must be a name (letters, digits, _; not starting with a digit)"));
                    }
                    let v = val.as_f64().ok_or_else(|| ParamError::new(key, format!("a named constant must be a number; got {val}")))?;
                    if !v.is_finite() {
                        return Err(ParamError::new(key, format!("must be finite; got {}", show_num(v))));
                    }
                    named.push((key.clone(), v));
                    continue;
                } else {
                    let mut names: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                    names.extend(self.aliases.iter().map(|a| a.name));
                    let allowed = if names.is_empty() { "none".to_string() } else { names.join(", ") };
                    return Err(ParamError::new(key, format!("unknown parameter for '{}' (allowed: {allowed})", self.name)));
                };
            match spec.kind {
                ParamKind::Number => {
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
                ParamKind::Formula => {
                    let t = val.as_str().ok_or_else(|| ParamError::new(key, format!("must be a formula in a string, e.g. \"log(w)/w\"; got {val}")))?;
                    let t = t.trim();
                    if t.is_empty() {
                        return Err(ParamError::new(key, "is an empty formula"));
                    }
                    texts.iter_mut().find(|(n, _)| *n == canonical).unwrap().1 = Some(t.to_string());
                }
                ParamKind::Choice(choices) => {
                    let t = val.as_str().filter(|t| choices.contains(t)).ok_or_else(|| ParamError::new(key, format!("must be one of {}; got {val}", choices.join(", "))))?;
                    texts.iter_mut().find(|(n, _)| *n == canonical).unwrap().1 = Some(t.to_string());
                }
            }
        }
        let mut out = Vec::with_capacity(values.len());
        let mut out_texts = Vec::with_capacity(texts.len());
        for spec in &self.params {
            match spec.kind {
                ParamKind::Number => {
                    let v = values.iter().find(|(n, _)| *n == spec.name).unwrap().1;
                    match v.or(spec.default) {
                        Some(v) => out.push((spec.name, v)),
                        None => return Err(ParamError::new(spec.name, format!("is required for '{}' ({})", self.name, spec.doc))),
                    }
                }
                ParamKind::Formula | ParamKind::Choice(_) => {
                    let v = texts.iter_mut().find(|(n, _)| *n == spec.name).unwrap().1.take();
                    match v.or(spec.default_text.map(str::to_string)) {
                        Some(v) => out_texts.push((spec.name, Some(v))),
                        None if spec.kind == ParamKind::Formula => out_texts.push((spec.name, None)),
                        None => return Err(ParamError::new(spec.name, format!("is required for '{}' ({})", self.name, spec.doc))),
                    }
                }
            }
        }
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let mut p = Params { algorithm: self.name.to_string(), values: out, texts: out_texts, named, warnings: Vec::new() };
        if let Some(check) = self.check {
            check(&mut p)?;
        }
        Ok(p)
    }
}
