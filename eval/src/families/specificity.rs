//! `NIDF`: the response's specificity as See et al. (2019) measure it, the mean normalised IDF of
//! its words over the DailyDialog train split ([`dialeval_metrics::specificity`]). Reference-
//! and context-free; a part of [`crate::combination::COMBINED`].

use std::sync::Arc;

use dialeval_datasets::DialogueItem;
use dialeval_metrics::specificity::IdfTable;
use serde::Serialize;

use crate::digest::sha256;
use crate::error::Result;
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, Note, blank_response, empty_response_note};
use crate::table::Column;

/// The name of the specificity column.
pub const NIDF: &str = "NIDF";

/// What NIDF depends on: the table (by name and the sha256 of its text) and the tokeniser.
#[derive(Debug, Clone, Serialize)]
pub struct SpecificitySettings {
    /// Where the table came from.
    pub table: String,
    /// sha256 of the table's text.
    pub sha256: String,
    /// How a response is cut into words.
    pub words: &'static str,
}

/// The specificity family: one column, [`NIDF`]. A blank response, or one without a word
/// (only punctuation), is an empty cell named in the notes.
#[derive(Debug, Clone)]
pub struct SpecificityFamily {
    table: Arc<IdfTable>,
    settings: SpecificitySettings,
}

impl SpecificityFamily {
    /// Over the bundled DailyDialog train table ([`IdfTable::dailydialog`]).
    ///
    /// # Errors
    /// None in practice (the bundled table is tested).
    pub fn new() -> Result<Self> {
        Ok(Self::with_table(IdfTable::dailydialog()?, "dailydialog-train.df.tsv (bundled)", IdfTable::dailydialog_text()))
    }

    /// Over another table: `name` and `text` (the table as read) identify it in the cache key.
    pub fn with_table(table: IdfTable, name: &str, text: &str) -> Self {
        let settings = SpecificitySettings { table: name.to_owned(), sha256: sha256(text.as_bytes()), words: "rouge-score tokens, unstemmed" };
        Self { table: Arc::new(table), settings }
    }
}

impl MetricFamily for SpecificityFamily {
    type Settings = SpecificitySettings;

    fn name(&self) -> &str {
        "specificity"
    }

    fn version(&self) -> &'static str {
        "specificity/1"
    }

    fn settings(&self) -> SpecificitySettings {
        self.settings.clone()
    }

    fn compute(&self, items: &[DialogueItem], _progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let values: Vec<Option<f64>> = dialeval_common::par_map(items, |i| i.response.as_ref().filter(|_| !blank_response(i)).and_then(|r| self.table.nidf(&r.text)));
        let wordless: Vec<&str> = items.iter().zip(&values).filter(|(i, v)| v.is_none() && i.response.is_some() && !blank_response(i)).map(|(i, _)| i.id.as_str()).collect();
        let notes = vec![empty_response_note(items), Note::items("{n} items whose response has no word are not scored: {names}", &wordless, 10, ", ")];
        if values.iter().all(Option::is_none) {
            return Ok(FamilyOutput::NoneScored { reason: "no response has a word".into(), notes });
        }
        let mut scores = FamilyScores::new(vec![Column::new(NIDF, values)]);
        scores.notes = notes;
        Ok(FamilyOutput::Scored(scores))
    }
}
