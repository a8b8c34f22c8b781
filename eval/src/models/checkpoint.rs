//! Which model a learned family runs: a checkpoint's identity in cache keys, and where the
//! checkpoint comes from (given, shipped, or trained here).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::digest::{FileDigest, sha256};
use crate::error::{Error, Result};

/// What identifies a checkpoint directory in a cache key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointIdentity {
    /// The directory.
    pub dir: PathBuf,
    /// The sha256 of its `SHA256SUMS` (a shipped checkpoint, verified), or of the sha256s of
    /// its top-level `*.json` files and everything in `best/`.
    pub sha256: String,
}

impl CheckpointIdentity {
    /// Verifies (a shipped checkpoint) or hashes the checkpoint in `dir`.
    ///
    /// # Errors
    /// A file that differs from its manifest, or an unreadable directory.
    pub fn of(dir: &Path) -> Result<Self> {
        if let Some(manifest) = dialeval_slm_model::bundle::verify(dir)? {
            return Ok(Self { dir: dir.to_owned(), sha256: manifest });
        }
        let mut files = Vec::new();
        for sub in [dir.to_owned(), dir.join("best")] {
            for entry in std::fs::read_dir(&sub).map_err(|e| Error::io(&sub, e))? {
                let path = entry.map_err(|e| Error::io(&sub, e))?.path();
                let in_best = sub != dir;
                if path.is_file() && (in_best || path.extension().is_some_and(|e| e == "json")) {
                    files.push(path);
                }
            }
        }
        files.sort();
        let mut all = String::new();
        for f in &files {
            let relative = f.strip_prefix(dir).unwrap_or(f);
            all.push_str(&format!("{}={}\n", relative.display(), FileDigest::of(f)?.sha256));
        }
        Ok(Self { dir: dir.to_owned(), sha256: sha256(all.as_bytes()) })
    }
}

/// Where a learned family's model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// A directory the user named.
    Given(PathBuf),
    /// The checkpoint shipped in the repository's `models/`, verified by its `SHA256SUMS`.
    Bundled(PathBuf),
    /// Trained here by a [`RetrainData`] recipe into this directory (one per seed).
    Retrain(PathBuf),
}

/// Whether [`ModelSource::resolve`] may use a shipped checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retrain {
    /// Train only when no checkpoint is shipped.
    IfNotShipped,
    /// Train even when one is (`--retrain`).
    Always,
}

impl ModelSource {
    /// `given` when set; else the shipped `models/<name>` unless [`Retrain::Always`] or it is
    /// missing; else `out/models/<name>-seed<seed>`.
    pub fn resolve(given: Option<&Path>, models: &Path, name: &str, retrain: Retrain, out: &Path, seed: u64) -> Self {
        if let Some(dir) = given {
            return Self::Given(dir.to_owned());
        }
        let bundled = models.join(name);
        if retrain == Retrain::IfNotShipped && bundled.join(dialeval_slm_model::bundle::MANIFEST).is_file() {
            return Self::Bundled(bundled);
        }
        Self::Retrain(out.join(format!("models/{name}-seed{seed}")))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        match self {
            Self::Given(d) | Self::Bundled(d) | Self::Retrain(d) => d,
        }
    }
}

impl std::fmt::Display for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Given(d) => write!(f, "model {}", d.display()),
            Self::Bundled(d) => write!(f, "shipped checkpoint {} (SHA256SUMS verified on load)", d.display()),
            Self::Retrain(d) => write!(f, "trained here into {}", d.display()),
        }
    }
}
