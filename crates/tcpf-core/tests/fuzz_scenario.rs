//! Fuzzing the scenario parser and validator (issue 17): `api::normalize` on arbitrary text, on
//! random JSON values built from the scenario vocabulary, and on random mutations of every
//! scenario of the ns-2 bank, the examples and the identity mixes. It must never panic, and
//! every error must say what is wrong.
//!
//! Cases per property: `TCPF_FUZZ_CASES` (default 5000, a few seconds in a release build), e.g.
//! `TCPF_FUZZ_CASES=100000 cargo test --release -p tcpf-core --test fuzz_scenario` (see
//! docs/testing.md).

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tcpf_core::api;

fn config(default: u32) -> Config {
    let cases = std::env::var("TCPF_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    Config { cases, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), ..Config::default() }
}

// ----- the corpus: every scenario file of the repository, as JSON ----------------------------

mod common;
use common::toml_item;

/// The scenarios (not sweep specs) under validation/ns2, examples and scripts/identity.
fn corpus() -> &'static [(String, Value)] {
    static C: OnceLock<Vec<(String, Value)>> = OnceLock::new();
    C.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut out = vec![];
        for dir in ["validation/ns2", "examples", "scripts/identity"] {
            let mut files: Vec<_> = std::fs::read_dir(root.join(dir)).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "toml")).collect();
            files.sort();
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                let v = toml_item(toml_edit::Document::parse(text).unwrap_or_else(|e| panic!("{}: {e}", f.display())).as_item());
                if v.get("flows").is_some() {
                    out.push((f.display().to_string(), v));
                }
            }
        }
        assert!(out.len() >= 40, "found only {} scenarios", out.len());
        out
    })
}

/// Object keys and string values seen in the corpus, plus some every scenario could use.
fn vocabulary() -> &'static (Vec<String>, Vec<String>) {
    static V: OnceLock<(Vec<String>, Vec<String>)> = OnceLock::new();
    V.get_or_init(|| {
        fn walk(v: &Value, keys: &mut Vec<String>, strings: &mut Vec<String>) {
            match v {
                Value::Object(m) => {
                    for (k, x) in m {
                        keys.push(k.clone());
                        walk(x, keys, strings);
                    }
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, keys, strings)),
                Value::String(s) => strings.push(s.clone()),
                _ => {}
            }
        }
        let (mut keys, mut strings) = (vec![], vec![]);
        for (_, v) in corpus() {
            walk(v, &mut keys, &mut strings);
        }
        keys.extend(["bottleneck", "links", "nodes", "flows", "tcp", "measure", "loss", "params", "steps", "phases", "path", "direction", "stop", "on", "off", "phase", "repeat", "shape", "f", "g", "increase", "decrease", "name", "x"].map(String::from));
        strings.extend(["cbr", "pareto", "formula", "tfrc", "tfrcp", "tear", "reverse", "bernoulli", "periodic", "general_exponential", "gilbert_elliott", "phased", "w+w", "1e12s", "1e-300bps", "10x", "0x", "-1ms", "5..1", "1..", "..", "1e400", "nan", "inf", ""].map(String::from));
        keys.sort();
        keys.dedup();
        strings.sort();
        strings.dedup();
        (keys, strings)
    })
}

// ----- values and mutations ----------------------------------------------------------------

/// A leaf a user (or an attacker) might write anywhere.
fn leaf() -> impl Strategy<Value = Value> {
    let numbers = prop::sample::select(vec![
        0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 100.0, 1e7, 1.0000001e7, 1e12, 1.1e12, 1e15, 1e-9, 1e-300, 5e-324, 1e308, -1e308, 9007199254740993.0,
        1.8446744073709552e19, 4294967296.0, 65536.0, 0.999999, 1e-3,
    ]);
    let (_, strings) = vocabulary();
    prop_oneof![
        3 => numbers.prop_map(|x| json!(x)),
        2 => any::<i64>().prop_map(|x| json!(x)),
        1 => any::<u64>().prop_map(|x| json!(x)),
        4 => any::<Index>().prop_map(move |i| json!(i.get(strings))),
        2 => "[0-9.e+\\-]{1,8}(|s|ms|us|ns|bps|kbps|Mbps|Gbps|Mb/s|x|bdp|limit|p|packets|\\.\\.[0-9]{1,3}(ms)?)".prop_map(|s| json!(s)),
        1 => ".{0,30}".prop_map(|s| json!(s)),
        1 => any::<bool>().prop_map(|b| json!(b)),
        1 => Just(Value::Null),
        1 => (0usize..3, 1usize..5000).prop_map(|(c, n)| json!(["w+", "(", "1"][c].repeat(n))),
    ]
}

/// A random JSON value over the scenario's vocabulary.
fn value() -> impl Strategy<Value = Value> {
    let (keys, _) = vocabulary();
    leaf().prop_recursive(5, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((any::<Index>(), inner), 0..8).prop_map(move |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.get(keys).clone(), v)).collect::<Map<_, _>>())),
        ]
    })
}

#[derive(Clone, Debug)]
enum Mutation {
    Replace(Index, Value),
    Remove(Index),
    Insert(Index, Index, Value),
    Duplicate(Index),
    Scale(Index, f64),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<Index>(), prop_oneof![4 => leaf(), 1 => value()]).prop_map(|(i, v)| Mutation::Replace(i, v)),
        2 => any::<Index>().prop_map(Mutation::Remove),
        2 => (any::<Index>(), any::<Index>(), leaf()).prop_map(|(i, k, v)| Mutation::Insert(i, k, v)),
        1 => any::<Index>().prop_map(Mutation::Duplicate),
        2 => (any::<Index>(), prop::sample::select(vec![0.0, -1.0, 1e-6, 0.5, 2.0, 1e3, 1e6, 1e12])).prop_map(|(i, f)| Mutation::Scale(i, f)),
    ]
}

/// JSON pointers of every node below the root.
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(x, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(x, &p, out);
            }
        }
        _ => {}
    }
}

fn apply(v: &mut Value, m: &Mutation) {
    let mut ptrs = vec![];
    pointers(v, "", &mut ptrs);
    if ptrs.is_empty() {
        return;
    }
    let (keys, _) = vocabulary();
    let pick = |i: &Index| ptrs[i.index(ptrs.len())].clone();
    match m {
        Mutation::Replace(i, x) => *v.pointer_mut(&pick(i)).unwrap() = x.clone(),
        Mutation::Remove(i) | Mutation::Duplicate(i) => {
            let p = pick(i);
            let (parent, last) = p.rsplit_once('/').unwrap();
            let last = last.replace("~1", "/").replace("~0", "~");
            match v.pointer_mut(parent).unwrap() {
                Value::Object(o) if matches!(m, Mutation::Remove(_)) => {
                    o.remove(&last);
                }
                Value::Array(a) => {
                    let k: usize = last.parse().unwrap();
                    if matches!(m, Mutation::Remove(_)) {
                        a.remove(k);
                    } else {
                        let x = a[k].clone();
                        a.push(x);
                    }
                }
                _ => {}
            }
        }
        Mutation::Insert(i, k, x) => {
            if let Value::Object(o) = v.pointer_mut(&pick(i)).unwrap() {
                o.insert(k.get(keys).clone(), x.clone());
            } else if let Value::Object(o) = v {
                o.insert(k.get(keys).clone(), x.clone());
            }
        }
        Mutation::Scale(i, f) => {
            let target = v.pointer_mut(&pick(i)).unwrap();
            if let Some(x) = target.as_f64() {
                *target = json!(x * f);
            }
        }
    }
}

/// Validation must return (not panic), quickly, and an error must name what is wrong.
fn check(text: &str) -> Result<(), TestCaseError> {
    let t0 = Instant::now();
    let r = api::normalize(text);
    prop_assert!(t0.elapsed() < Duration::from_secs(2), "validation took {:?}", t0.elapsed());
    if let Err(e) = r {
        prop_assert!(!e.message.trim().is_empty(), "an error without a message (field '{}')", e.field);
        prop_assert!(!e.to_string().contains('\n'), "a multi-line error: {}", e);
    }
    Ok(())
}

#[test]
fn the_corpus_validates() {
    for (name, v) in corpus() {
        api::normalize(&v.to_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

proptest! {
    #![proptest_config(config(5000))]

    /// Text that may not even be JSON.
    #[test]
    fn any_text_is_validated_cleanly(text in prop_oneof![".{0,200}", "[\\[\\]{}:,\"0-9a-z ]{0,80}"]) {
        check(&text)?;
    }

    /// Random JSON values over the scenario's keys and typical strings.
    #[test]
    fn any_json_is_validated_cleanly(v in value()) {
        check(&v.to_string())?;
        // The same value as a scenario's top level, with the keys a scenario needs.
        if let Value::Object(mut m) = v {
            m.entry("duration").or_insert(json!(10));
            m.entry("flows").or_insert(json!([{"algorithm": "tcp"}]));
            check(&Value::Object(m).to_string())?;
        }
    }

    /// A scenario of the repository with one to six random changes.
    #[test]
    fn mutated_scenarios_are_validated_cleanly(which in any::<Index>(), muts in prop::collection::vec(mutation(), 1..6)) {
        let corpus = corpus();
        let mut v = corpus[which.index(corpus.len())].1.clone();
        for m in &muts {
            apply(&mut v, m);
        }
        check(&v.to_string())?;
    }
}
