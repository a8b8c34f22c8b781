//! Test helpers shared by the dialeval crates (a dev-dependency only).
//!
//! Tests find the golden vectors and corpora in `../shared` beside the workspace root (override
//! with `DIALEVAL_SHARED`). When it is absent, [`shared_dir`] prints `SKIPPED` and returns
//! `None`, unless `DIALEVAL_REQUIRE_SHARED=1` (set by `.ci/run`), in which case it panics.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // test support fails loudly

pub mod http;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The directory of the package whose test or bench is running: `CARGO_MANIFEST_DIR` as cargo
/// sets it when it runs the binary, else `compiled` (the caller's `env!("CARGO_MANIFEST_DIR")`,
/// for a binary run by hand). The value at run time names the checkout being tested; the one
/// compiled in names the checkout that built the binary, which is another one when checkouts
/// share a target directory and cargo reuses a binary whose sources are older than it.
pub fn package_dir(compiled: &str) -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).filter(|d| d.is_dir()).unwrap_or_else(|| PathBuf::from(compiled))
}

/// The workspace root (every package sits one level below it).
pub fn workspace_dir() -> PathBuf {
    package_dir(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `$DIALEVAL_SHARED`, or `../shared` beside the workspace root.
///
/// # Panics
/// When the folder is missing and `DIALEVAL_REQUIRE_SHARED=1`.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("DIALEVAL_SHARED").map_or_else(|| workspace_dir().join("..").join("shared"), PathBuf::from);
    if dir.join("golden").is_dir() {
        return Some(dir);
    }
    assert!(std::env::var("DIALEVAL_REQUIRE_SHARED").as_deref() != Ok("1"), "DIALEVAL_REQUIRE_SHARED=1 but {} has no golden/ folder", dir.display());
    eprintln!("SKIPPED: {} not found; full-corpus parity tests need ../shared", dir.display());
    None
}

/// `dir` when it holds `file`; otherwise prints `SKIPPED` and gives `None`, unless the
/// environment variable `require` is `1` (set by `.ci/run`), in which case it panics.
///
/// # Panics
/// When `dir/file` is missing and `require=1`.
pub fn optional_dir(dir: PathBuf, file: &str, require: &str) -> Option<PathBuf> {
    if dir.join(file).is_file() {
        return Some(dir);
    }
    assert!(std::env::var(require).as_deref() != Ok("1"), "{require}=1 but {} has no {file}", dir.display());
    eprintln!("SKIPPED: {} has no {file} (set {require}=1 to require it)", dir.display());
    None
}

/// The local LLM server's URL, `$DIALEVAL_LLM_URL` (e.g. `http://127.0.0.1:8089/v1`, which
/// `scripts/llm_server.sh` serves); when it is unset or empty, prints `SKIPPED` and gives `None`,
/// unless `DIALEVAL_REQUIRE_LLM=1` (set by `.ci/run`), in which case it panics.
///
/// # Panics
/// When the URL is missing and `DIALEVAL_REQUIRE_LLM=1`.
pub fn llm_url() -> Option<String> {
    if let Some(url) = std::env::var("DIALEVAL_LLM_URL").ok().filter(|u| !u.is_empty()) {
        return Some(url);
    }
    assert!(std::env::var("DIALEVAL_REQUIRE_LLM").as_deref() != Ok("1"), "DIALEVAL_REQUIRE_LLM=1 but DIALEVAL_LLM_URL is not set");
    eprintln!("SKIPPED: set DIALEVAL_LLM_URL to a running OpenAI-compatible server (scripts/llm_server.sh starts one)");
    None
}

/// Reads a JSON-lines file.
///
/// # Panics
/// On I/O or JSON errors, naming the file and line.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().enumerate().map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1))).collect()
}

/// Reads a JSON file.
///
/// # Panics
/// On I/O or JSON errors, naming the file.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A golden float: a JSON number, or `"NaN"`, `"Infinity"`, `"-Infinity"`.
///
/// # Panics
/// On anything else.
pub fn float(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap(),
        Value::String(s) if s == "NaN" => f64::NAN,
        Value::String(s) if s == "Infinity" => f64::INFINITY,
        Value::String(s) if s == "-Infinity" => f64::NEG_INFINITY,
        other => panic!("not a golden float: {other}"),
    }
}

/// A golden float array.
///
/// # Panics
/// On anything but an array of golden floats.
pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}")).iter().map(float).collect()
}

/// `(n0 / thing :ARG0 (n1 / thing :ARG0 (… (n{n-1} / thing))))`: a PENMAN graph of `n` nodes
/// nested `n` levels deep (`n` ≥ 1), for the tests of the graph size limits.
pub fn penman_chain(n: usize) -> String {
    let mut s: String = (0..n).map(|i| format!("(n{i} / thing :ARG0 ")).collect();
    s.truncate(s.len().saturating_sub(" :ARG0 ".len()));
    s + &")".repeat(n)
}

/// `(n0 / thing :ARG1 (n1 / thing) … :ARG1 (n{n-1} / thing))`: a PENMAN graph of `n` nodes two
/// levels deep.
pub fn penman_star(n: usize) -> String {
    let edges: String = (1..n).map(|i| format!(" :ARG1 (n{i} / thing)")).collect();
    format!("(n0 / thing{edges})")
}
