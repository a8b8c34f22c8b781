//! DailyDialog++ (Sai et al. 2020): per context 5 positive, 5 random-negative and 5
//! adversarial-negative responses (`dev.json`, `test.json`), or positives only
//! (`data_positives.json`, keyed `dialog_id`). JSON Lines, read as a stream.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Place, Result};
use crate::item::{Corpus, DialogueItem, Turn};
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
        let text = crate::lines::read_text(path)?;
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
/// The context ids of a `*.context-ids.json` file: a JSON list of DailyDialog++ `id`s, the way
/// the silver AMR sets name the contexts they cover.
///
/// # Errors
/// [`Error::Io`] for an unreadable file, [`Error::Json`] for anything but a list of
/// non-negative integers (both naming the file).
pub fn context_ids(path: &Path) -> Result<Vec<u64>> {
    serde_json::from_value(crate::json::read_json(path)?).map_err(|source| Error::Json { path: path.to_owned(), place: Place::File, source })
}

/// One response of [`leave_one_out`]: an item whose references are other positives of its
/// context, and whether the response is a positive (else an adversarial negative).
#[derive(Debug, Clone, PartialEq)]
pub struct LeaveOneOut {
    /// The context, the response and its references.
    pub item: DialogueItem,
    /// A positive response (`true`) or an adversarial negative (`false`).
    pub positive: bool,
}

/// DailyDialog++'s positives as references for each other: for the k-th positive of a context,
/// an item whose references are the next `references` positives in cyclic order (k+1, k+2, …,
/// never itself), and an item for the k-th adversarial negative with the same references, so
/// both classes are scored against identical reference sets. Contexts give
/// min(positives, adversarial negatives) pairs. Item ids are `<context id>/<k>/pos` and `…/adv`.
///
/// # Errors
/// [`Error::Config`] when `references` is 0 or a context has no more than `references`
/// positives (naming the context).
pub fn leave_one_out(contexts: &[DdppContext], references: usize) -> Result<Vec<LeaveOneOut>> {
    if references == 0 {
        return Err(Error::Config("leave-one-out needs at least one reference".into()));
    }
    let mut out = Vec::new();
    for c in contexts {
        let n = c.positives.len();
        if n <= references {
            return Err(Error::Config(format!("context {} has {n} positives: too few for {references} references besides the response", c.id)));
        }
        let context: Vec<Turn> = c.context.iter().map(Turn::new).collect();
        for k in 0..n.min(c.adversarial_negatives.len()) {
            let refs: Vec<String> = (1..=references).map(|d| c.positives[(k + d) % n].clone()).collect();
            for (positive, response, tag) in [(true, &c.positives[k], "pos"), (false, &c.adversarial_negatives[k], "adv")] {
                let item = DialogueItem {
                    id: format!("{}/{k}/{tag}", c.id),
                    corpus: Corpus::DailyDialogPlusPlus,
                    context: context.clone(),
                    response: Some(Turn::new(response.clone())),
                    references: refs.clone(),
                    knowledge: None,
                    system: None,
                    annotators: Vec::new(),
                    ratings: Vec::new(),
                };
                out.push(LeaveOneOut { item, positive });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leave_one_out_never_uses_the_response_and_shares_references_across_classes() {
        let c = DdppContext {
            id: 7,
            context: vec!["hi".into()],
            positives: (0..5).map(|k| format!("p{k}")).collect(),
            random_negatives: Vec::new(),
            adversarial_negatives: (0..5).map(|k| format!("a{k}")).collect(),
        };
        let items = leave_one_out(std::slice::from_ref(&c), 4).unwrap_or_default();
        assert_eq!(items.len(), 10);
        for pair in items.chunks(2) {
            let (pos, adv) = (&pair[0], &pair[1]);
            assert!(pos.positive && !adv.positive);
            assert_eq!(pos.item.references, adv.item.references);
            let response = pos.item.response.as_ref().map(|r| r.text.clone()).unwrap_or_default();
            assert_eq!(pos.item.references.len(), 4);
            assert!(!pos.item.references.contains(&response), "{response} is its own reference");
        }
        assert_eq!(items[2].item.references, vec!["p2", "p3", "p4", "p0"]);
        let one = leave_one_out(std::slice::from_ref(&c), 1).unwrap_or_default();
        assert_eq!(one[8].item.references, vec!["p0"]);
        let err = leave_one_out(&[c], 5).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("context 7"), "{err}");
    }

    #[test]
    fn context_ids_read_a_list_and_name_a_bad_file() {
        let dir = dialeval_testkit::workspace_dir().join("data/silver-amr");
        let ids = context_ids(&dir.join("dailydialog-plusplus-dev200.context-ids.json")).unwrap_or_default();
        assert_eq!(ids.len(), 200);
        let bad = std::env::temp_dir().join(format!("dialeval-context-ids-{}.json", std::process::id()));
        std::fs::write(&bad, "[1, -2]").unwrap_or_default();
        let err = context_ids(&bad).map(|_| ()).unwrap_err().to_string();
        let _ = std::fs::remove_file(&bad);
        assert!(err.contains("dialeval-context-ids") && err.contains("invalid JSON"), "{err}");
    }
}
