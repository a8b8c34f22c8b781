//! Shipped checkpoints: a directory with a `SHA256SUMS` manifest (`<sha256>  <relative path>`
//! per line, as `sha256sum` writes it), verified before a model is loaded from it, so a
//! corrupt, truncated or edited file is an error instead of garbage scores.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// The manifest's file name.
pub const MANIFEST: &str = "SHA256SUMS";

/// The sha256 of a file, in lower-case hex.
///
/// # Errors
/// [`Error::Io`] when the file cannot be read.
pub fn sha256_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    Ok(Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks every file listed in `dir/SHA256SUMS` and returns the manifest's own sha256 (what
/// identifies the checkpoint in cache keys). A directory without a manifest is not a shipped
/// checkpoint: `Ok(None)`.
///
/// # Errors
/// [`Error::Checksum`] for a file whose content differs; [`Error::Format`] for a malformed
/// manifest line (named by number) or a path leaving the directory; [`Error::Io`] for a listed
/// file that is missing.
pub fn verify(dir: &Path) -> Result<Option<String>> {
    let manifest = dir.join(MANIFEST);
    if !manifest.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&manifest).map_err(|e| Error::io(&manifest, e))?;
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = |what: &str| Error::Format(format!("{} line {}: {what}: {line:?}", manifest.display(), n + 1));
        let (hash, name) = line.split_once("  ").ok_or_else(|| bad("expected `<sha256>  <path>`"))?;
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("not a sha256"));
        }
        let relative = PathBuf::from(name.trim());
        if relative.is_absolute() || relative.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
            return Err(bad("the path must stay inside the directory"));
        }
        let path = dir.join(&relative);
        let found = sha256_file(&path)?;
        if !found.eq_ignore_ascii_case(hash) {
            return Err(Error::Checksum { path, expected: hash.to_owned(), found });
        }
    }
    sha256_file(&manifest).map(Some)
}

/// Writes `dir/SHA256SUMS` over `files` (paths relative to `dir`, in the given order).
///
/// # Errors
/// [`Error::Io`] when a file cannot be read or the manifest written.
pub fn write_manifest(dir: &Path, files: &[&str]) -> Result<()> {
    let mut text = String::new();
    for f in files {
        text.push_str(&format!("{}  {f}\n", sha256_file(&dir.join(f))?));
    }
    let path = dir.join(MANIFEST);
    std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_a_bad_line_and_an_escaping_path_are_errors() {
        let dir = std::env::temp_dir().join(format!("dialeval-bundle-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("best")).unwrap();
        std::fs::write(dir.join("a.json"), "{}").unwrap();
        std::fs::write(dir.join("best/model.bpk"), [1_u8, 2, 3]).unwrap();
        assert_eq!(verify(&dir).unwrap(), None, "no manifest, nothing to check");
        write_manifest(&dir, &["a.json", "best/model.bpk"]).unwrap();
        let id = verify(&dir).unwrap().unwrap();
        assert_eq!(id.len(), 64);
        std::fs::write(dir.join("best/model.bpk"), [1_u8, 2, 4]).unwrap();
        assert!(matches!(verify(&dir), Err(Error::Checksum { .. })));
        std::fs::write(dir.join(MANIFEST), "abc  a.json\n").unwrap();
        assert!(matches!(verify(&dir), Err(Error::Format(m)) if m.contains("line 1")));
        std::fs::write(dir.join(MANIFEST), format!("{}  ../a.json\n", "0".repeat(64))).unwrap();
        assert!(matches!(verify(&dir), Err(Error::Format(m)) if m.contains("inside")));
        std::fs::write(dir.join(MANIFEST), format!("{}  gone.json\n", "0".repeat(64))).unwrap();
        assert!(matches!(verify(&dir), Err(Error::Io { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
