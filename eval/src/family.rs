//! Metric families: metrics computed together from the same inputs and cached together.

use dialeval_datasets::DialogueItem;
use serde::Serialize;

use crate::error::Result;
use crate::table::Column;

/// A family of metrics (BLEU + ROUGE-L + METEOR, the embedding metrics, …).
///
/// [`MetricFamily::settings`] returns everything the scores depend on besides the items
/// themselves: configurations, the identities of the files and models read (sha256 digests,
/// encoder fingerprints), resources found or missing (WordNet), seeds. The
/// [`Pipeline`](crate::Pipeline) keys its cache by a hash of the items and this value, so a
/// result is never reused after any of them changed.
pub trait MetricFamily {
    /// What the scores depend on besides the items.
    type Settings: Serialize;

    /// The family's name (`lexical`, `embedding`, …): its cache folder and its line in reports.
    fn name(&self) -> &str;

    /// The version of the family's own computation (`"lexical/2"`): part of every cache key, so
    /// a change to how the scores are computed (tokenisation, a search, a featuriser, which items
    /// are left out) must bump it, or old scores would be served for the new code. Required:
    /// a family cannot leave it out.
    fn version(&self) -> &'static str;

    /// See the trait docs.
    fn settings(&self) -> Self::Settings;

    /// Scores `items` (context, response, references and graphs attached), calling
    /// `progress(done, total)` on long work.
    ///
    /// # Errors
    /// Whatever stops the family as a whole; an item the family cannot score is a `None` cell,
    /// and a family that cannot run here at all returns [`FamilyOutput::Skipped`].
    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput>;
}

/// What a family produced.
#[derive(Debug, Clone, PartialEq)]
pub enum FamilyOutput {
    /// Scores.
    Scored(FamilyScores),
    /// Nothing, and why (no references, no model, no endpoint).
    Skipped(String),
}

/// A family's columns and what a reader of the report should know about them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FamilyScores {
    /// One column per metric.
    pub columns: Vec<Column>,
    /// Notes for the report (items left unscored and why, a metric left out).
    pub notes: Vec<String>,
    /// `false` when some items failed for a reason that may pass (a timed-out LLM call): the
    /// scores are used but not cached, so the next run tries those items again.
    pub complete: bool,
}

impl FamilyScores {
    /// Complete scores without notes.
    pub fn new(columns: Vec<Column>) -> Self {
        Self { columns, notes: Vec::new(), complete: true }
    }

    /// Adds a note.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// The object-safe form of [`MetricFamily`] the pipeline holds: settings as canonical JSON.
pub(crate) trait ErasedFamily {
    fn name(&self) -> &str;
    fn version(&self) -> &'static str;
    fn settings_json(&self) -> Result<serde_json::Value>;
    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput>;
}

impl<F: MetricFamily> ErasedFamily for F {
    fn name(&self) -> &str {
        MetricFamily::name(self)
    }

    fn version(&self) -> &'static str {
        MetricFamily::version(self)
    }

    fn settings_json(&self) -> Result<serde_json::Value> {
        serde_json::to_value(self.settings()).map_err(|e| crate::Error::json(format!("<settings of {}>", MetricFamily::name(self)), e))
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        MetricFamily::compute(self, items, progress)
    }
}

/// Why an item cannot be scored against its references.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unreferenced {
    /// No response (a dialogue-level item).
    NoResponse,
    /// No reference (a corpus's ground-truth rows).
    NoReference,
    /// A reference that is empty or blank.
    EmptyReference,
    /// A response that is empty or blank.
    EmptyResponse,
}

impl Unreferenced {
    /// The reason in words.
    pub fn name(self) -> &'static str {
        match self {
            Self::NoResponse => "no response",
            Self::NoReference => "no reference",
            Self::EmptyResponse => "empty response",
            Self::EmptyReference => "empty reference",
        }
    }

    /// Whether the item's own text is at fault (named in the notes), not a missing field.
    pub fn is_empty_text(self) -> bool {
        matches!(self, Self::EmptyResponse | Self::EmptyReference)
    }
}

/// Why `item` cannot be scored against its references, or `None` when it can.
pub fn unreferenced_reason(item: &DialogueItem) -> Option<Unreferenced> {
    match &item.response {
        None => Some(Unreferenced::NoResponse),
        Some(r) if r.text.trim().is_empty() => Some(Unreferenced::EmptyResponse),
        Some(_) if item.references.is_empty() => Some(Unreferenced::NoReference),
        Some(_) if item.references.iter().any(|r| r.trim().is_empty()) => Some(Unreferenced::EmptyReference),
        Some(_) => None,
    }
}

/// The first `shown` of `names` joined by `sep`, then `, … (N in all)` (with `sep`'s
/// punctuation) when there are more: how notes name the items they are about.
pub fn named_list(names: &[impl AsRef<str>], shown: usize, sep: &str) -> String {
    let listed: Vec<&str> = names.iter().take(shown).map(AsRef::as_ref).collect();
    let more = if names.len() > shown { format!("{} … ({} in all)", sep.trim_end(), names.len()) } else { String::new() };
    format!("{}{more}", listed.join(sep))
}

/// The items a referenced metric scores: a non-empty response and references, none of them
/// empty ([`unreferenced_reason`]).
pub fn referenced_items(items: &[DialogueItem]) -> Vec<usize> {
    (0..items.len()).filter(|&i| unreferenced_reason(&items[i]).is_none()).collect()
}

/// The notes of a referenced family: how many items have no response or no reference (a
/// corpus's ground-truth rows), and, by name, the items whose response or a reference is
/// empty. Empty when every item is scored.
pub fn unscored_notes(items: &[DialogueItem]) -> Vec<String> {
    let mut missing = 0;
    let mut empty: std::collections::BTreeMap<Unreferenced, Vec<&str>> = std::collections::BTreeMap::new();
    for item in items {
        match unreferenced_reason(item) {
            Some(why) if why.is_empty_text() => empty.entry(why).or_default().push(&item.id),
            Some(_) => missing += 1,
            None => {}
        }
    }
    let mut notes = Vec::new();
    if missing > 0 {
        notes.push(format!("{missing} of {} items have no response or no reference and are not scored", items.len()));
    }
    for (why, ids) in empty {
        notes.push(format!("{} items with an {} are not scored: {}", ids.len(), why.name(), named_list(&ids, 10, ", ")));
    }
    notes
}

/// The response text of an item (empty for dialogue-level items).
pub fn response(item: &DialogueItem) -> &str {
    item.response.as_ref().map_or("", |r| r.text.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_lists_show_the_first_names_and_the_count() {
        assert_eq!(named_list(&["a", "b"], 5, ", "), "a, b");
        assert_eq!(named_list(&["a", "b", "c"], 2, ", "), "a, b, … (3 in all)");
        assert_eq!(named_list(&["x: bad", "y: bad", "z: bad"], 1, "; "), "x: bad; … (3 in all)");
    }
}
