//! The zero-shot reference-free baseline: how close the response is to the context in the
//! sentence encoder's space, with no training at all. Every learned reference-free score is
//! measured against it (a head that trails it has lost what the encoder already knew).

use std::sync::Arc;

use dialeval_datasets::DialogueItem;
use dialeval_slm_model::bert::PretrainedEncoder;
use dialeval_slm_model::sentence_vectors::SentenceVectors;
use dialeval_slm_model::vectors::CachedSentenceVectors;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, ModelUse, Note, empty_response_note, responding_items, response};
use crate::models::SharedCache;
use crate::table::Column;

/// The cosine of the response's sentence embedding with the last context turn's.
pub const CONTEXT_COSINE: &str = "Context-Cosine";
/// The cosine of the response's sentence embedding with the mean of the last two turns'.
pub const CONTEXT_COSINE_2: &str = "Context-Cosine-2";

/// [`CONTEXT_COSINE`] and [`CONTEXT_COSINE_2`] over the sentence embeddings of a pretrained
/// encoder (mean of the token states, `[CLS]` and `[SEP]` included, L2-normalised: the
/// sentence-transformers embedding), read through the run's shared token-state cache. The
/// turns are the last ones with text; an item with one such turn has the same value in both
/// columns, an item with none (a conversation opening) is not scored and is counted in a note.
pub struct ContextCosineFamily {
    encoder: Arc<PretrainedEncoder>,
    cache: Arc<SharedCache>,
}

/// What the context cosines depend on.
#[derive(Debug, Clone, Serialize)]
pub struct ContextCosineSettings {
    /// The encoder's fingerprint.
    pub encoder: String,
}

impl ContextCosineFamily {
    /// The family over `encoder` and its token-state cache (shared with the learned families).
    pub fn new(encoder: Arc<PretrainedEncoder>, cache: Arc<SharedCache>) -> Self {
        Self { encoder, cache }
    }
}

/// The last two turns of `item` that have text, the nearest first.
fn last_turns(item: &DialogueItem) -> Vec<&str> {
    item.context.iter().rev().map(|t| t.text.as_str()).filter(|t| !t.trim().is_empty()).take(2).collect()
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

/// The cosine of unit vector `r` with the mean of the unit vectors `turns` (1 or 2 of them).
fn cosine_with_mean(r: &[f32], turns: &[&[f32]]) -> f64 {
    let mean: Vec<f32> = (0..r.len()).map(|k| turns.iter().map(|t| t[k]).sum::<f32>()).collect();
    let norm = dot(&mean, &mean).sqrt();
    if norm > 0.0 { dot(r, &mean) / norm } else { 0.0 }
}

impl MetricFamily for ContextCosineFamily {
    type Settings = ContextCosineSettings;

    fn name(&self) -> &str {
        "context_cosine"
    }

    fn version(&self) -> &'static str {
        "context_cosine/1"
    }

    fn settings(&self) -> ContextCosineSettings {
        ContextCosineSettings { encoder: self.encoder.fingerprint().to_owned() }
    }

    fn models(&self) -> Vec<ModelUse> {
        vec![ModelUse::encoder(self.encoder.name(), self.encoder.fingerprint())]
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let (at, openings): (Vec<usize>, Vec<usize>) = responding_items(items).into_iter().partition(|&i| !last_turns(&items[i]).is_empty());
        let notes = || {
            let names: Vec<&str> = openings.iter().map(|&i| items[i].id.as_str()).collect();
            vec![Note::items("{n} items have no context turn with text and are not scored: {names}", &names, 10, ", "), empty_response_note(items)]
        };
        if at.is_empty() {
            return Ok(FamilyOutput::NoneScored { reason: "no item has a response and a context turn with text".into(), notes: notes() });
        }
        let texts: Vec<&str> = at.iter().flat_map(|&i| std::iter::once(response(&items[i])).chain(last_turns(&items[i]))).collect();
        let (last, two) = self.cache.with(|cache| {
            cache.fill(&self.encoder, &texts, &|done, total| progress(done, total))?;
            let vectors = CachedSentenceVectors::new(cache, self.encoder.fingerprint());
            let vector = |text: &str| vectors.vector(text).ok_or_else(|| Error::Config(format!("the token-state cache has no vector of {:.60?} just after encoding it", text)));
            let (mut last, mut two) = (Vec::with_capacity(at.len()), Vec::with_capacity(at.len()));
            for &i in &at {
                let r = vector(response(&items[i]))?;
                let turns = last_turns(&items[i]).into_iter().map(vector).collect::<Result<Vec<_>>>()?;
                last.push(dot(&r, &turns[0]));
                two.push(cosine_with_mean(&r, &turns.iter().map(Vec::as_slice).collect::<Vec<_>>()));
            }
            Ok((last, two))
        })?;
        let n = items.len();
        let mut scores = FamilyScores::new(vec![Column::spread(CONTEXT_COSINE, n, &at, &last)?, Column::spread(CONTEXT_COSINE_2, n, &at, &two)?]);
        scores.notes.extend(notes());
        Ok(FamilyOutput::Scored(scores))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_of_two_unit_vectors_is_normalised_before_the_cosine() {
        let r = [1.0_f32, 0.0];
        assert!((cosine_with_mean(&r, &[&[1.0, 0.0]]) - 1.0).abs() < 1e-12);
        // The mean of (1, 0) and (0, 1) points at 45°: cosine 1/√2 with (1, 0), not 1/2.
        assert!((cosine_with_mean(&r, &[&[1.0, 0.0], &[0.0, 1.0]]) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-7);
        assert!(cosine_with_mean(&r, &[&[1.0, 0.0], &[-1.0, 0.0]]).abs() < 1e-12, "opposite turns: no direction, 0");
    }
}
