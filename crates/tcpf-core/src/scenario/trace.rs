//! The `[trace]` table (docs/see-it.md, "Packet traces"): format, file, flows, links, max_bytes.

use super::table::{err, Table};
use super::units;
use super::ScenarioError;
use crate::trace::{TraceFormat, TraceSpec};
use serde_json::{json, Map, Value};
use crate::error::show_names;
use std::collections::HashMap;

/// A validated `[trace]` table (link names checked against the topology by the caller).
#[derive(Clone, Debug)]
pub struct TraceTable {
    pub format: TraceFormat,
    /// Where the front end writes the trace (the engine never opens it).
    pub file: Option<String>,
    pub flows: Option<Vec<u32>>,
    pub links: Option<Vec<String>>,
    pub max_bytes: u64,
}

pub(super) fn trace_table(v: Option<&Value>, nflows: u64) -> Result<Option<TraceTable>, ScenarioError> {
    let Some(v) = v else { return Ok(None) };
    let t = Table::new("trace", v)?;
    t.only(&["format", "file", "flows", "links", "max_bytes"])?;
    let file = match t.get("file") {
        None => None,
        Some(Value::String(s)) if !s.is_empty() && s.len() <= 4096 && !s.contains('\0') => Some(s.clone()),
        Some(other) => return err("trace.file", format!("must be a file name (1 to 4096 characters, no NUL); got {other}")),
    };
    // The default format follows the file name: pcap for `*.pcap`, ns-2 otherwise.
    let guess = if file.as_deref().is_some_and(|f| f.to_ascii_lowercase().ends_with(".pcap")) { "pcap" } else { "ns2" };
    let format = match t.string("format", guess, &["pcap", "ns2"])?.as_str() {
        "pcap" => TraceFormat::Pcap,
        _ => TraceFormat::Ns2,
    };
    let flows = match t.get("flows") {
        None => None,
        Some(Value::Array(a)) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, x) in a.iter().enumerate() {
                match x.as_u64() {
                    Some(n) if n < nflows => out.push(n as u32),
                    _ => return err(format!("trace.flows[{i}]"), format!("must be a flow number in [0, {}] (flows are numbered from 0 in group order); got {x}", nflows - 1)),
                }
            }
            Some(out)
        }
        Some(other) => return err("trace.flows", format!("must be a list of flow numbers; got {other}")),
    };
    let links = match t.get("links") {
        None => None,
        Some(Value::Array(a)) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, x) in a.iter().enumerate() {
                match x.as_str() {
                    Some(s) => out.push(s.to_string()),
                    None => return err(format!("trace.links[{i}]"), format!("must be a link name; got {x}")),
                }
            }
            Some(out)
        }
        Some(other) => return err("trace.links", format!("must be a list of link names; got {other}")),
    };
    let max_bytes = t.with("max_bytes", Some(TraceSpec::MAX_BYTES), |v| units::bytes(v, TraceSpec::MIN_MAX_BYTES, TraceSpec::MAX_MAX_BYTES))?;
    Ok(Some(TraceTable { format, file, flows, links, max_bytes }))
}

impl TraceTable {
    /// Check the link names against the run's links (`names`, in engine order) and give the
    /// engine's spec.
    pub fn spec(&self, names: &[&str]) -> Result<TraceSpec, ScenarioError> {
        let links = match &self.links {
            None => None,
            Some(want) => {
                let mut out = Vec::with_capacity(want.len());
                // the first link of each name (names are unique: the scenario checks them)
                let mut index: HashMap<&str, u32> = HashMap::with_capacity(names.len());
                for (k, n) in names.iter().enumerate() {
                    index.entry(n).or_insert(k as u32);
                }
                for (i, w) in want.iter().enumerate() {
                    match index.get(w.as_str()) {
                        Some(&k) => out.push(k),
                        None => return err(format!("trace.links[{i}]"), format!("no link named '{w}' (links: {})", show_names(names))),
                    }
                }
                Some(out)
            }
        };
        Ok(TraceSpec { format: self.format, flows: self.flows.clone(), links, max_bytes: self.max_bytes })
    }

    pub fn normalized(&self) -> Value {
        let mut m = Map::new();
        m.insert("format".into(), json!(self.format.name()));
        if let Some(f) = &self.file {
            m.insert("file".into(), json!(f));
        }
        if let Some(f) = &self.flows {
            m.insert("flows".into(), json!(f));
        }
        if let Some(l) = &self.links {
            m.insert("links".into(), json!(l));
        }
        m.insert("max_bytes".into(), json!(self.max_bytes));
        Value::Object(m)
    }
}
