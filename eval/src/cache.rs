//! The family cache: one JSON file per family, `DIR/<family>.json`, holding the columns and the
//! key they were computed under.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::sha256;
use crate::error::{Error, Result};
use crate::table::Column;

/// What a cached result was computed from: a sha256 of the items' digest, the family's name
/// and its settings (canonical JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CacheKey(String);

impl CacheKey {
    /// The key of `family` with `settings` over items with digest `items`
    /// ([`items_digest`](crate::digest::items_digest)).
    ///
    /// # Errors
    /// Never in practice (a JSON value always serialises).
    pub fn new(family: &str, settings: &serde_json::Value, items: &str) -> Result<Self> {
        let settings = serde_json::to_string(settings).map_err(|e| Error::json(format!("<settings of {family}>"), e))?;
        Ok(Self(sha256(format!("{family}\n{items}\n{settings}").as_bytes())))
    }

    /// The key as hex.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    family: String,
    key: CacheKey,
    /// Kept for a reader of the file: what the key was made of.
    settings: serde_json::Value,
    columns: Vec<Column>,
}

/// A directory of cached family results.
#[derive(Debug, Clone)]
pub struct FamilyCache {
    dir: PathBuf,
}

impl FamilyCache {
    /// The cache in `dir` (created).
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be created.
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        Ok(Self { dir: dir.to_owned() })
    }

    /// The file of `family`.
    pub fn path(&self, family: &str) -> PathBuf {
        self.dir.join(format!("{family}.json"))
    }

    /// The columns cached for `family` under `key`, or `None` when there are none or they were
    /// computed under another key.
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Json`] when the file exists but cannot be read (a damaged
    /// cache is reported, not silently recomputed over).
    pub fn load(&self, family: &str, key: &CacheKey) -> Result<Option<Vec<Column>>> {
        let path = self.path(family);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        let entry: Entry = serde_json::from_str(&text).map_err(|e| Error::json(&path, e))?;
        Ok((entry.family == family && &entry.key == key).then_some(entry.columns))
    }

    /// Stores `columns` for `family` under `key` (atomically: a killed run leaves the old file
    /// or the new one, never half of one).
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Json`].
    pub fn store(&self, family: &str, key: &CacheKey, settings: &serde_json::Value, columns: &[Column]) -> Result<()> {
        let entry = Entry { family: family.to_owned(), key: key.clone(), settings: settings.clone(), columns: columns.to_vec() };
        let path = self.path(family);
        let text = serde_json::to_string(&entry).map_err(|e| Error::json(&path, e))?;
        write_atomic(&path, &text)
    }
}

/// Writes `text` to `path` through a temporary file and a rename.
///
/// # Errors
/// [`Error::Io`].
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!("{}.tmp", path.extension().and_then(|e| e.to_str()).unwrap_or("")));
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_returns_columns_only_under_their_key_and_reports_a_damaged_file() {
        let dir = std::env::temp_dir().join(format!("dialeval-eval-cache-{}", std::process::id()));
        let cache = FamilyCache::open(&dir).unwrap_or_else(|e| panic!("{e}"));
        let settings = serde_json::json!({"seed": 1});
        let key = CacheKey::new("f", &settings, "items").unwrap_or_else(|e| panic!("{e}"));
        let other = CacheKey::new("f", &serde_json::json!({"seed": 2}), "items").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(key, other);
        assert_ne!(key, CacheKey::new("f", &settings, "other items").unwrap_or_else(|e| panic!("{e}")));
        assert!(cache.load("f", &key).is_ok_and(|c| c.is_none()));
        let columns = vec![Column::new("m", vec![Some(0.5), None])];
        cache.store("f", &key, &settings, &columns).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cache.load("f", &key).ok().flatten(), Some(columns));
        assert!(cache.load("f", &other).is_ok_and(|c| c.is_none()), "another seed is a miss");
        std::fs::write(cache.path("f"), "{not json").unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(cache.load("f", &key), Err(Error::Json { .. })));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
