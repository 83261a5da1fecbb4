//! Build script: fixes the engine's identity, `_core.engine_id()`, at build time.
//!
//! The id is a hash of every source that decides a simulation's results: the engine crate
//! (`crates/tcpf-core`: `src/**` and its `Cargo.toml`), these bindings (`crates/tcpf-py/src/**`
//! and `Cargo.toml`: the dependencies' features, such as serde_json's float formatting, are set
//! there), the workspace `Cargo.toml` (profiles) and `Cargo.lock` (the dependencies' versions).
//! The run caches of `tcpf sweep`, `tcpf evaluate` and `tcpf reproduce` include it in their keys,
//! so a rebuilt engine never reuses results of another build, while the same sources give the
//! same id on any machine: files are taken in the order of their sorted relative paths
//! ('/'-separated), each as its path and its length and contents (line ends normalised to
//! `\n`, so a checkout with CRLF line ends hashes alike), under FNV-1a, 64 bits (implemented
//! here: no dependency).

use std::fs;
use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits: offset basis and prime of the published definition.
struct Fnv1a(u64);

impl Fnv1a {
    fn new() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// A length-prefixed field, so that the concatenation of fields is unambiguous.
    fn field(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }
}

/// Every file under `dir` (recursively), as absolute paths; missing directories give none.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            files_under(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}

/// `path` relative to `root`, '/'-separated (the same text on every platform).
fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    // crates/tcpf-py -> the workspace root
    let root = manifest.parent().and_then(Path::parent).expect("crates/tcpf-py lies two levels below the workspace").to_path_buf();

    let mut files = Vec::new();
    for dir in ["crates/tcpf-core/src", "crates/tcpf-py/src"] {
        let dir = root.join(dir);
        println!("cargo:rerun-if-changed={}", dir.display());
        files_under(&dir, &mut files);
    }
    let mut listed: Vec<(String, Option<PathBuf>)> = files.into_iter().map(|p| (relative(&p, &root), Some(p))).collect();
    for file in ["crates/tcpf-core/Cargo.toml", "crates/tcpf-py/Cargo.toml", "Cargo.toml", "Cargo.lock"] {
        let path = root.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        // A missing file is hashed as missing (its name alone), not skipped silently.
        listed.push((file.to_string(), path.is_file().then_some(path)));
    }
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    listed.dedup_by(|a, b| a.0 == b.0);

    let mut h = Fnv1a::new();
    h.field(b"tcpf-engine-id 1");
    for (rel, path) in &listed {
        h.field(rel.as_bytes());
        match path {
            Some(path) => {
                let bytes = fs::read(path).unwrap_or_else(|e| panic!("engine id: cannot read {}: {e}", path.display()));
                h.write(&[1]);
                h.field(&normalise_line_ends(&bytes));
            }
            None => {
                println!("cargo:warning=engine id: {rel} not found; the id hashes it as missing");
                h.write(&[0]);
            }
        }
    }
    println!("cargo:rustc-env=TCPF_ENGINE_ID={:016x}", h.0);
    println!("cargo:rerun-if-changed=build.rs");
}

/// `\r\n` -> `\n`.
fn normalise_line_ends(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}
