//! The token-state cache of a pretrained encoder ([`dialeval_slm_model::vectors`]) as a run
//! uses it: one file per encoder, opened on first use and shared by the families.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use dialeval_slm_model::bert::PretrainedEncoder;
use dialeval_slm_model::vectors::EmbeddingCache;

use crate::error::{Error, Result};

/// The token-state cache of `encoder` in `dir`: `dir/<fingerprint>.bin`, keyed by the
/// encoder's files (two encoders never share one, whatever their folders are called).
///
/// # Errors
/// The cache cannot be created or read.
pub fn encoder_cache(encoder: &PretrainedEncoder, dir: &Path) -> Result<EmbeddingCache> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    Ok(EmbeddingCache::open(&cache_path(encoder, dir), encoder.hidden_size())?.with_encoder_id(encoder.fingerprint()))
}

/// `dir/<fingerprint>.bin`: the token-state cache file of `encoder`.
fn cache_path(encoder: &PretrainedEncoder, dir: &Path) -> PathBuf {
    dir.join(format!("{}.bin", encoder.fingerprint()))
}

/// The token-state cache of one encoder, shared by the families of a run and opened on first
/// use (a run whose learned families all come from the family cache never reads it).
#[derive(Debug)]
pub struct SharedCache {
    path: PathBuf,
    dim: usize,
    encoder_id: String,
    cache: Mutex<Option<EmbeddingCache>>,
}

impl SharedCache {
    /// The cache of `encoder` in `dir` (`dir/<fingerprint>.bin`), not opened yet.
    pub fn new(encoder: &PretrainedEncoder, dir: &Path) -> Self {
        Self { path: cache_path(encoder, dir), dim: encoder.hidden_size(), encoder_id: encoder.fingerprint().to_owned(), cache: Mutex::new(None) }
    }

    /// Runs `f` on the cache, opening it first if needed.
    ///
    /// # Errors
    /// The cache cannot be opened, or `f`'s error.
    pub fn with<R>(&self, f: impl FnOnce(&mut EmbeddingCache) -> Result<R>) -> Result<R> {
        let mut guard = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            }
            *guard = Some(EmbeddingCache::open(&self.path, self.dim)?.with_encoder_id(&self.encoder_id));
        }
        match guard.as_mut() {
            Some(cache) => f(cache),
            None => Err(Error::Config(format!("{}: cache not open", self.path.display()))),
        }
    }
}

/// `~/.cache/dialeval/embeddings`, where the examples keep token-state caches.
pub fn default_cache_dir() -> PathBuf {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".cache/dialeval/embeddings")
}
