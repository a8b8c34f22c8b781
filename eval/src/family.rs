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

    /// The family's name (`lexical`, `embedding`, …): its cache file and its line in reports.
    fn name(&self) -> &str;

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
    fn settings_json(&self) -> Result<serde_json::Value>;
    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput>;
}

impl<F: MetricFamily> ErasedFamily for F {
    fn name(&self) -> &str {
        MetricFamily::name(self)
    }

    fn settings_json(&self) -> Result<serde_json::Value> {
        serde_json::to_value(self.settings()).map_err(|e| crate::Error::json(format!("<settings of {}>", MetricFamily::name(self)), e))
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        MetricFamily::compute(self, items, progress)
    }
}

/// Items that have a response and at least one reference, by index.
pub fn referenced_items(items: &[DialogueItem]) -> Vec<usize> {
    (0..items.len()).filter(|&i| items[i].response.is_some() && !items[i].references.is_empty()).collect()
}

/// The note a referenced family adds when `scored` of `items` items had a response and a
/// reference (`None` when all had).
pub fn unscored_note(items: usize, scored: usize) -> Option<String> {
    (scored < items).then(|| format!("{} of {items} items have no response or no reference and are not scored", items - scored))
}

/// The response text of an item (empty for dialogue-level items).
pub fn response(item: &DialogueItem) -> &str {
    item.response.as_ref().map_or("", |r| r.text.as_str())
}
