//! The family cache: one JSON file per computed result, `DIR/<family>/<key>.json`, holding
//! the columns, the notes and the key they were computed under. Any number of keyed entries
//! live side by side, so two corpora (or two instances of a family with other settings)
//! evaluated in turn both hit.
//!
//! **Pruning.** Entries are never removed by a run. [`FamilyCache::prune`] deletes those not
//! used for a given time (a hit refreshes an entry's modification time); deleting
//! `DIR/<family>/` (or all of `DIR`) is always safe: what is missing is recomputed.
//!
//! **Damage.** An entry that cannot be read, is not valid JSON, belongs to another key or holds
//! a column of another length than the items is *quarantined*: renamed to
//! `<key>.json.damaged`, reported on stderr and in the run's notes (with the file and what was
//! wrong), and recomputed. Valid entries are never touched.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::digest::sha256;
use crate::error::{Error, Result};
use crate::family::Note;
use crate::table::Column;

/// The layout of an entry's file, part of every key: entries written by an older layout miss
/// rather than read as damaged. 2: a chunk of items per entry, structured notes.
pub const FORMAT: &str = "entry/2";

/// What a cached result was computed from: a sha256 of the entry [`FORMAT`], the items' digest
/// (of the chunk of the corpus the entry holds), the family's name, the version of its
/// computation and its settings (canonical JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CacheKey(String);

impl CacheKey {
    /// The key of `family` at `version` ([`MetricFamily::version`](crate::MetricFamily::version))
    /// with `settings` over items with digest `items`
    /// ([`items_digest`](crate::digest::items_digest)).
    ///
    /// # Errors
    /// Never in practice (a JSON value always serialises).
    pub fn new(family: &str, version: &str, settings: &serde_json::Value, items: &str) -> Result<Self> {
        let settings = serde_json::to_string(settings).map_err(|e| Error::json(format!("<settings of {family}>"), e))?;
        Ok(Self(sha256(format!("{FORMAT}\n{family}\n{version}\n{items}\n{settings}").as_bytes())))
    }

    /// The key as hex.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    family: String,
    version: String,
    key: CacheKey,
    /// Kept for a reader of the file: what the key was made of.
    settings: serde_json::Value,
    columns: Vec<Column>,
    notes: Vec<Note>,
}

/// An entry as it is written (the fields of [`Entry`], borrowed).
#[derive(Serialize)]
struct EntryRef<'a> {
    family: &'a str,
    version: &'a str,
    key: &'a CacheKey,
    settings: &'a serde_json::Value,
    columns: &'a [Column],
    notes: &'a [Note],
}

/// What a cached result was computed by: the family, the version of its computation and its
/// settings (what its [`CacheKey`] hashes, with the items).
#[derive(Debug, Clone, Copy)]
pub struct Computed<'a> {
    /// The family's name.
    pub family: &'a str,
    /// [`MetricFamily::version`](crate::MetricFamily::version).
    pub version: &'a str,
    /// The family's settings as JSON.
    pub settings: &'a serde_json::Value,
}

/// A result to store: a family's columns over a chunk, and its notes.
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    /// The columns.
    pub columns: &'a [Column],
    /// The notes.
    pub notes: &'a [Note],
}

/// A cached family result.
#[derive(Debug, Clone, PartialEq)]
pub struct Cached {
    /// The columns.
    pub columns: Vec<Column>,
    /// The notes the family gave when it computed them.
    pub notes: Vec<Note>,
}

/// What [`FamilyCache::load`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// An entry under the key.
    Hit(Cached),
    /// None.
    Miss,
    /// A damaged entry, moved aside to `quarantined`: recompute.
    Damaged {
        /// Where the entry was.
        path: PathBuf,
        /// Where it is now.
        quarantined: PathBuf,
        /// What was wrong.
        problem: String,
    },
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

    /// The file of `family`'s entry under `key`.
    pub fn path(&self, family: &str, key: &CacheKey) -> PathBuf {
        self.dir.join(family).join(format!("{}.json", key.as_str()))
    }

    /// The entry of `family` under `key` for `items` items: a hit, a miss, or a damaged entry
    /// (quarantined, see the module docs).
    ///
    /// # Errors
    /// [`Error::Io`] only when a damaged entry cannot be moved aside.
    pub fn load(&self, family: &str, key: &CacheKey, items: usize) -> Result<Lookup> {
        let path = self.path(family, key);
        let problem = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lookup::Miss),
            Err(e) => format!("unreadable: {e}"),
            Ok(text) => match serde_json::from_str::<Entry>(&text) {
                Err(e) => format!("not a cache entry: {e}"),
                Ok(entry) if entry.family != family || &entry.key != key => format!("holds {} under key {}", entry.family, entry.key.as_str()),
                Ok(entry) => match entry.columns.iter().find(|c| c.values.len() != items) {
                    Some(c) => format!("column {} has {} values for {items} items", c.metric, c.values.len()),
                    None => {
                        // A hit counts as a use for pruning.
                        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
                            let _ = f.set_modified(SystemTime::now());
                        }
                        return Ok(Lookup::Hit(Cached { columns: entry.columns, notes: entry.notes }));
                    }
                },
            },
        };
        let quarantined = path.with_extension("json.damaged");
        std::fs::rename(&path, &quarantined).map_err(|e| Error::io(&path, e))?;
        Ok(Lookup::Damaged { path, quarantined, problem })
    }

    /// Stores `result` under `key` (atomically: a killed run leaves no entry or a whole one),
    /// with what the key was made of (`of`: family, version, settings) for a reader of the file.
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Json`].
    pub fn store(&self, of: &Computed<'_>, key: &CacheKey, result: &Stored<'_>) -> Result<()> {
        let Computed { family, version, settings } = *of;
        let entry = EntryRef { family, version, key, settings, columns: result.columns, notes: result.notes };
        let path = self.path(family, key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        let text = serde_json::to_string(&entry).map_err(|e| Error::json(&path, e))?;
        write_atomic(&path, &text)
    }

    /// Deletes the entries (and quarantined files) not used for `unused_for`; returns how many.
    ///
    /// # Errors
    /// [`Error::Io`] when the folder cannot be listed or a file cannot be deleted.
    pub fn prune(&self, unused_for: Duration) -> Result<usize> {
        let now = SystemTime::now();
        let mut removed = 0;
        let list = |dir: &Path| -> Result<Vec<PathBuf>> { std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?.map(|e| e.map(|e| e.path()).map_err(|e| Error::io(dir, e))).collect() };
        for family in list(&self.dir)?.into_iter().filter(|p| p.is_dir()) {
            for file in list(&family)? {
                let age = std::fs::metadata(&file).and_then(|m| m.modified()).ok().and_then(|t| now.duration_since(t).ok());
                if age.is_some_and(|a| a >= unused_for) {
                    std::fs::remove_file(&file).map_err(|e| Error::io(&file, e))?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }
}

/// Writes `text` to `path` through a temporary file and a rename.
///
/// # Errors
/// [`Error::Io`].
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    write_atomic_with(path, |w| w.write_all(text.as_bytes()))
}

/// As [`write_atomic`], streaming: `write` fills a buffered writer of the temporary file, so a
/// large file is never held in memory whole.
///
/// # Errors
/// [`Error::Io`] naming the temporary file or `path`.
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> Result<()> {
    use std::io::Write as _;
    let tmp = path.with_extension(format!("{}.tmp", path.extension().and_then(|e| e.to_str()).unwrap_or("")));
    let file = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let mut w = std::io::BufWriter::new(file);
    write(&mut w).and_then(|()| w.flush()).map_err(|e| Error::io(&tmp, e))?;
    drop(w);
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn hit(l: Lookup) -> Cached {
        match l {
            Lookup::Hit(c) => c,
            other => panic!("expected a hit, got {other:?}"),
        }
    }

    #[test]
    fn entries_live_side_by_side_under_their_keys_with_their_notes() {
        let dir = std::env::temp_dir().join(format!("dialeval-eval-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = FamilyCache::open(&dir).unwrap();
        let settings = serde_json::json!({"seed": 1});
        let key = CacheKey::new("f", "f/1", &settings, "items").unwrap();
        let other = CacheKey::new("f", "f/1", &serde_json::json!({"seed": 2}), "items").unwrap();
        assert_ne!(key, other);
        assert_ne!(key, CacheKey::new("f", "f/1", &settings, "other items").unwrap());
        assert_ne!(key, CacheKey::new("f", "f/2", &settings, "items").unwrap(), "a new version of the code is a new key");
        assert_eq!(cache.load("f", &key, 2).unwrap(), Lookup::Miss);
        let columns = vec![Column::new("m", vec![Some(0.5), None])];
        let notes = vec![Note::count("{0} of {1} items have no reference", &[1, 2])];
        cache.store(&Computed { family: "f", version: "f/1", settings: &settings }, &key, &Stored { columns: &columns, notes: &notes }).unwrap();
        let columns_b = vec![Column::new("m", vec![Some(0.1), Some(0.2)])];
        cache.store(&Computed { family: "f", version: "f/1", settings: &settings }, &other, &Stored { columns: &columns_b, notes: &[] }).unwrap();
        // Both entries hit, in any order: a second corpus does not evict the first.
        for _ in 0..2 {
            assert_eq!(hit(cache.load("f", &key, 2).unwrap()), Cached { columns: columns.clone(), notes: notes.clone() });
            assert_eq!(hit(cache.load("f", &other, 2).unwrap()).columns, columns_b);
        }
        // Pruning by age: nothing is older than an hour, everything is older than zero.
        assert_eq!(cache.prune(Duration::from_secs(3600)).unwrap(), 0);
        assert_eq!(cache.prune(Duration::ZERO).unwrap(), 2);
        assert_eq!(cache.load("f", &key, 2).unwrap(), Lookup::Miss);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_entry_is_quarantined_and_named() {
        let dir = std::env::temp_dir().join(format!("dialeval-eval-cache-damaged-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = FamilyCache::open(&dir).unwrap();
        let settings = serde_json::json!({});
        let key = CacheKey::new("f", "f/1", &settings, "items").unwrap();
        let good = CacheKey::new("f", "f/1", &settings, "other items").unwrap();
        cache.store(&Computed { family: "f", version: "f/1", settings: &settings }, &good, &Stored { columns: &[Column::new("m", vec![Some(1.0)])], notes: &[] }).unwrap();
        let columns = vec![Column::new("m", vec![Some(0.5), None])];
        cache.store(&Computed { family: "f", version: "f/1", settings: &settings }, &key, &Stored { columns: &columns, notes: &[] }).unwrap();
        // Asked for 3 items: the 2-value column cannot be theirs.
        match cache.load("f", &key, 3).unwrap() {
            Lookup::Damaged { path, quarantined, problem } => {
                assert_eq!(path, cache.path("f", &key));
                assert!(quarantined.is_file() && !path.exists());
                assert!(problem.contains("column m has 2 values for 3 items"), "{problem}");
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(cache.path("f", &key), "{not json").unwrap();
        assert!(matches!(cache.load("f", &key, 2).unwrap(), Lookup::Damaged { problem, .. } if problem.contains("not a cache entry")));
        assert_eq!(cache.load("f", &key, 2).unwrap(), Lookup::Miss, "then recomputed");
        assert_eq!(hit(cache.load("f", &good, 1).unwrap()).columns.len(), 1, "the valid entry beside it is untouched");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
