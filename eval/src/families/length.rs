//! Response length in words: the plain baseline every learned score is read against.

use dialeval_datasets::DialogueItem;

use crate::error::Result;
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, blank_response, empty_response_note};
use crate::table::Column;

/// The name of the length baseline's column.
pub const LENGTH: &str = "Length (words)";

/// `Length (words)`: whitespace-separated words of the response
/// ([`dialeval_common::word_count`]); a blank response is an empty cell, as in every family
/// ([`blank_response`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct LengthFamily;

impl MetricFamily for LengthFamily {
    type Settings = &'static str;

    fn name(&self) -> &str {
        "length"
    }

    /// 2: the version moved from the settings to `version`. 3: a blank response is an empty
    /// cell, named in the notes.
    fn version(&self) -> &'static str {
        "length/3"
    }

    fn settings(&self) -> Self::Settings {
        "whitespace words"
    }

    fn compute(&self, items: &[DialogueItem], _progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let values: Vec<Option<f64>> = items.iter().map(|i| i.response.as_ref().filter(|_| !blank_response(i)).map(|r| dialeval_common::word_count(&r.text) as f64)).collect();
        let notes = vec![empty_response_note(items)];
        if values.iter().all(Option::is_none) {
            return Ok(FamilyOutput::NoneScored { reason: "no responses".into(), notes });
        }
        let mut scores = FamilyScores::new(vec![Column::new(LENGTH, values)]);
        scores.notes = notes;
        Ok(FamilyOutput::Scored(scores))
    }
}
