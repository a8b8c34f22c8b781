//! Which model a learned family runs: a checkpoint's identity in cache keys, and where the
//! checkpoint comes from (given, shipped, or trained here).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::digest::{FileDigest, sha256};
use crate::error::{Error, Result};
use crate::family::ModelUse;

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
    /// The checkpoint as a report names it.
    pub fn model_use(&self) -> ModelUse {
        ModelUse::checkpoint(&self.dir, &self.sha256)
    }

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
    /// Never train: with no shipped or given checkpoint for the encoder, the family is skipped
    /// with the reason (the Python package, which must not start a training run unasked).
    Never,
}

/// What a learned family asks [`ModelSource::resolve`] for.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The model's name: its shipped folder (`slm`, `bert-ruber`).
    pub name: &'a str,
    /// A directory the user named (`--slm`, `--ruber`): used as it is.
    pub given: Option<&'a Path>,
    /// The shipped checkpoints' root (`models/`); `None`: there are none.
    pub models: Option<&'a Path>,
    /// Whether a shipped checkpoint may be used.
    pub retrain: Retrain,
    /// The run's output folder (where a checkpoint trained here goes).
    pub out: &'a Path,
    /// Seed of a checkpoint trained here.
    pub seed: u64,
    /// The fingerprint of the sentence encoder in use, if any: a checkpoint trained here goes to
    /// a folder named by it, so two encoders' retrained models never share one.
    pub encoder: Option<&'a str>,
}

impl ModelSource {
    /// `given` when set; else the first shipped checkpoint of `name` (`models/<name>`, then
    /// `models/<dir>/<name>` in name order, each with a `SHA256SUMS`) that `fits` accepts (it
    /// reads this run's encoder), unless [`Retrain::Always`]; else
    /// `out/models/<name>[-<encoder>]-seed<seed>`, trained here.
    ///
    /// # Errors
    /// What `fits` returns: a shipped checkpoint that cannot be read is an error, never passed
    /// over for another.
    pub fn resolve(request: &ModelRequest<'_>, fits: &dyn Fn(&Path) -> Result<bool>) -> Result<Self> {
        if let Some(dir) = request.given {
            return Ok(Self::Given(dir.to_owned()));
        }
        if request.retrain != Retrain::Always {
            for dir in request.models.map(|m| shipped(m, request.name)).unwrap_or_default() {
                if fits(&dir)? {
                    return Ok(Self::Bundled(dir));
                }
            }
        }
        let encoder = request.encoder.map_or_else(String::new, |e| format!("-{e}"));
        Ok(Self::Retrain(request.out.join(format!("models/{}{encoder}-seed{}", request.name, request.seed))))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        match self {
            Self::Given(d) | Self::Bundled(d) | Self::Retrain(d) => d,
        }
    }
}

/// The shipped checkpoints of `name` under `models`: `models/<name>`, then `models/<dir>/<name>`
/// for each folder in name order (one per encoder: `models/all-mpnet-base-v2/slm`); only those
/// with a `SHA256SUMS`.
pub fn shipped(models: &Path, name: &str) -> Vec<PathBuf> {
    let mut nested: Vec<PathBuf> = std::fs::read_dir(models).into_iter().flatten().flatten().map(|e| e.path().join(name)).collect();
    nested.sort();
    std::iter::once(models.join(name)).chain(nested).filter(|d| d.join(dialeval_slm_model::bundle::MANIFEST).is_file()).collect()
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A fake shipped folder: a `SHA256SUMS` and the encoder it records in `encoder.txt`.
    fn ship(dir: &Path, encoder: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("encoder.txt"), encoder).unwrap();
        dialeval_slm_model::bundle::write_manifest(dir, &["encoder.txt"]).unwrap();
    }

    #[test]
    fn the_shipped_checkpoint_of_the_encoder_in_use_is_chosen_and_a_retrained_one_is_named_by_it() {
        let root = std::env::temp_dir().join(format!("dialeval-resolve-{}", std::process::id()));
        let models = root.join("models");
        ship(&models.join("slm"), "minilm");
        ship(&models.join("all-mpnet-base-v2/slm"), "mpnet");
        std::fs::create_dir_all(models.join("zz-unshipped/slm")).unwrap();
        assert_eq!(shipped(&models, "slm"), vec![models.join("slm"), models.join("all-mpnet-base-v2/slm")], "the top-level one first, only folders with a manifest");
        let recorded = |want: &'static str| move |dir: &Path| -> Result<bool> { Ok(std::fs::read_to_string(dir.join("encoder.txt")).map_err(|e| Error::io(dir, e))? == want) };
        let out = root.join("out");
        let request = ModelRequest { name: "slm", given: None, models: Some(&models), retrain: Retrain::IfNotShipped, out: &out, seed: 3, encoder: Some("ab12") };
        assert_eq!(ModelSource::resolve(&request, &recorded("minilm")).unwrap(), ModelSource::Bundled(models.join("slm")));
        assert_eq!(ModelSource::resolve(&request, &recorded("mpnet")).unwrap(), ModelSource::Bundled(models.join("all-mpnet-base-v2/slm")));
        assert_eq!(
            ModelSource::resolve(&request, &recorded("other")).unwrap(),
            ModelSource::Retrain(out.join("models/slm-ab12-seed3")),
            "no shipped one fits: trained here, in a folder of this encoder"
        );
        let always = ModelRequest { retrain: Retrain::Always, encoder: None, ..request };
        assert_eq!(ModelSource::resolve(&always, &recorded("minilm")).unwrap(), ModelSource::Retrain(out.join("models/slm-seed3")));
        let given = ModelRequest { given: Some(&root), ..request };
        assert_eq!(ModelSource::resolve(&given, &recorded("other")).unwrap(), ModelSource::Given(root.clone()), "a named directory is used as it is");
        let unreadable = |_: &Path| -> Result<bool> { Err(Error::io(Path::new("models/slm/best/model.bpk"), std::io::Error::other("checksum"))) };
        assert!(ModelSource::resolve(&request, &unreadable).is_err(), "a shipped checkpoint that cannot be read is an error, not passed over");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
