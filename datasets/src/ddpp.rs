//! DailyDialog++ (Sai et al. 2020): per context 5 positive, 5 random-negative and 5
//! adversarial-negative responses (`dev.json`, `test.json`), or positives only
//! (`data_positives.json`, keyed `dialog_id`). JSON Lines, read as a stream.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Place, Result};
use crate::json::Doc;
use crate::lines::JsonLines;

/// One DailyDialog++ context with its responses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdppContext {
    /// `id` (or `dialog_id` in the positives-only file).
    pub id: u64,
    /// Utterances, oldest first.
    pub context: Vec<String>,
    /// Relevant responses.
    pub positives: Vec<String>,
    /// Responses taken from other dialogues.
    pub random_negatives: Vec<String>,
    /// Irrelevant responses written to reuse context words.
    pub adversarial_negatives: Vec<String>,
}

/// Streams a DailyDialog++ file.
///
/// # Errors
/// Opening fails; each item is an error when its line is not JSON or lacks a field.
pub fn read(path: &Path) -> Result<impl Iterator<Item = Result<DdppContext>>> {
    let lines = JsonLines::open(path)?;
    let path = lines.path().to_owned();
    Ok(lines.map(move |item| {
        let (line, v) = item?;
        let doc = Doc { path: &path, line: Some(line) };
        let id = v.get("id").or_else(|| v.get("dialog_id")).ok_or_else(|| doc.err("$", "missing field `id` (or `dialog_id`)"))?;
        let id = id.as_u64().ok_or_else(|| doc.err("$.id", "expected a non-negative integer"))?;
        let list = |key: &str, required: bool| -> Result<Vec<String>> {
            match v.get(key) {
                Some(x) => doc.strings(x, &format!("$.{key}")),
                None if required => Err(doc.err("$", format!("missing field `{key}`"))),
                None => Ok(Vec::new()),
            }
        };
        let context = list("context", true)?;
        if context.is_empty() {
            return Err(doc.err("$.context", "empty context"));
        }
        let full = v.get("random_negative_responses").is_some() || v.get("adversarial_negative_responses").is_some();
        Ok(DdppContext {
            id,
            context,
            positives: list("positive_responses", true)?,
            random_negatives: list("random_negative_responses", full)?,
            adversarial_negatives: list("adversarial_negative_responses", full)?,
        })
    }))
}

/// Reads a whole DailyDialog++ file.
///
/// # Errors
/// As [`read`]; the first bad record.
pub fn load(path: &Path) -> Result<Vec<DdppContext>> {
    read(path)?.collect()
}

/// `overlap_exclude_ids.tsv`: the `(file, id)` pairs to keep out of training.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExcludeList {
    entries: HashSet<(String, u64)>,
}

impl ExcludeList {
    /// Reads the TSV (`file<TAB>id`, with a header line).
    ///
    /// # Errors
    /// I/O, a missing header, or a line without a file and an integer id.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, header)) if header.trim() == "file\tid" => {}
            _ => return Err(Error::record(path, Place::Line(1), "expected the header `file<TAB>id`")),
        }
        let mut entries = HashSet::new();
        for (i, line) in lines.filter(|(_, l)| !l.trim().is_empty()) {
            let bad = || Error::record(path, Place::Line(i + 1), format!("expected `file<TAB>id`, found {line:?}"));
            let (file, id) = line.split_once('\t').ok_or_else(bad)?;
            entries.insert((file.to_owned(), id.trim().parse().map_err(|_| bad())?));
        }
        Ok(Self { entries })
    }

    /// Whether `id` of `file` (a name such as `dev.json`) is excluded.
    pub fn contains(&self, file: &str, id: u64) -> bool {
        self.entries.contains(&(file.to_owned(), id))
    }

    /// Number of excluded entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is excluded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Excluded entries of one file.
    pub fn count_for(&self, file: &str) -> usize {
        self.entries.iter().filter(|(f, _)| f == file).count()
    }
}
