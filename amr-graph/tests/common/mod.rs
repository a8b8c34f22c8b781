//! Locating `../shared` (the golden vectors and corpora) from the workspace root.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly
#![allow(dead_code)]

use std::path::PathBuf;

/// `$DIALEVAL_SHARED`, or `../shared` beside the workspace root. `None` (with a message) when
/// absent, unless `DIALEVAL_REQUIRE_SHARED=1`, in which case the test fails: CI sets it.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("DIALEVAL_SHARED").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("..").join("shared")
    });
    if dir.join("golden").is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("DIALEVAL_REQUIRE_SHARED").as_deref() != Ok("1"),
        "DIALEVAL_REQUIRE_SHARED=1 but {} has no golden/ folder",
        dir.display()
    );
    eprintln!("SKIPPED: {} not found; full-corpus parity tests need ../shared", dir.display());
    None
}

/// Reads a JSON-lines file into values.
pub fn read_jsonl(path: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1)))
        .collect()
}
