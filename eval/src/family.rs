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

/// Why `item` cannot be scored against its references: no response, an empty (blank)
/// response, no reference, or an empty reference. `None` when it can.
pub fn unreferenced_reason(item: &DialogueItem) -> Option<&'static str> {
    match &item.response {
        None => Some("no response"),
        Some(r) if r.text.trim().is_empty() => Some("empty response"),
        Some(_) if item.references.is_empty() => Some("no reference"),
        Some(_) if item.references.iter().any(|r| r.trim().is_empty()) => Some("empty reference"),
        Some(_) => None,
    }
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
    let mut empty: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for item in items {
        match unreferenced_reason(item) {
            Some(why @ ("empty response" | "empty reference")) => empty.entry(why).or_default().push(&item.id),
            Some(_) => missing += 1,
            None => {}
        }
    }
    let mut notes = Vec::new();
    if missing > 0 {
        notes.push(format!("{missing} of {} items have no response or no reference and are not scored", items.len()));
    }
    for (why, ids) in empty {
        const SHOWN: usize = 10;
        let more = if ids.len() > SHOWN { format!(", … ({} in all)", ids.len()) } else { String::new() };
        notes.push(format!("{} items with an {why} are not scored: {}{more}", ids.len(), ids[..ids.len().min(SHOWN)].join(", ")));
    }
    notes
}

/// The response text of an item (empty for dialogue-level items).
pub fn response(item: &DialogueItem) -> &str {
    item.response.as_ref().map_or("", |r| r.text.as_str())
}
