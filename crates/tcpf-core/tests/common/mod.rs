//! Shared by the integration tests: TOML files of the repository as JSON values, and the
//! scenarios of the experiments home (`experiments/<paper>/<experiment>/scenario.toml`), the
//! one place a paper's setup is defined (`tcpf reproduce` and these tests read the same file).
#![allow(dead_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub fn toml_value(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => json!(s.value()),
        T::Integer(i) => json!(*i.value()),
        T::Float(f) => json!(*f.value()),
        T::Boolean(b) => json!(*b.value()),
        T::Datetime(d) => json!(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(toml_value).collect()),
        T::InlineTable(t) => Value::Object(t.iter().map(|(k, v)| (k.to_string(), toml_value(v))).collect()),
    }
}

pub fn toml_item(i: &toml_edit::Item) -> Value {
    use toml_edit::Item as I;
    match i {
        I::None => Value::Null,
        I::Value(v) => toml_value(v),
        I::Table(t) => Value::Object(t.iter().map(|(k, v)| (k.to_string(), toml_item(v))).collect()),
        I::ArrayOfTables(a) => Value::Array(a.iter().map(|t| Value::Object(t.iter().map(|(k, v)| (k.to_string(), toml_item(v))).collect())).collect()),
    }
}

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A TOML file as JSON (panics with the path on a read or parse error).
pub fn toml_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml_item(toml_edit::Document::parse(text).unwrap_or_else(|e| panic!("{}: {e}", path.display())).as_item())
}

/// `experiments/<paper>/<id>/scenario.toml` as JSON.
pub fn experiment_scenario(paper: &str, id: &str) -> Value {
    toml_file(&root().join("experiments").join(paper).join(id).join("scenario.toml"))
}
