//! The AMR-gated small model (SLM) of the AMR-enhanced evaluator: `P(good continuation)` of the
//! response given the last two context turns, with their AMR graphs where attached.

use std::sync::Arc;

use dialeval_datasets::DialogueItem;
use dialeval_datasets::pairs::TrainingPair;
use dialeval_slm_model::bert::PretrainedEncoder;
use dialeval_slm_model::train::Scorer;
use serde::Serialize;

use crate::error::Result;
use crate::family::{FamilyOutput, FamilyScores, MetricFamily};
use crate::models::{CheckpointIdentity, SharedCache, score_slm_pairs, slm_pair};
use crate::table::Column;

/// The `SLM` column.
pub struct SlmFamily {
    scorer: Scorer,
    checkpoint: CheckpointIdentity,
    encoder: Option<(Arc<PretrainedEncoder>, Arc<SharedCache>)>,
    context_turns: usize,
}

/// What the SLM scores depend on.
#[derive(Debug, Clone, Serialize)]
pub struct SlmSettings {
    /// The model.
    pub checkpoint: CheckpointIdentity,
    /// The sentence encoder's fingerprint, when the model reads pretrained vectors.
    pub encoder: Option<String>,
    /// Context turns given to the model.
    pub context_turns: usize,
}

impl SlmFamily {
    /// The family with a loaded model (from `checkpoint`) and, for a model with the pretrained
    /// text head, its encoder and that encoder's token-state cache.
    pub fn new(scorer: Scorer, checkpoint: CheckpointIdentity, encoder: Option<(Arc<PretrainedEncoder>, Arc<SharedCache>)>) -> Self {
        Self { scorer, checkpoint, encoder, context_turns: 2 }
    }
}

impl MetricFamily for SlmFamily {
    type Settings = SlmSettings;

    fn name(&self) -> &str {
        "slm"
    }

    /// 1: the first versioned computation.
    fn version(&self) -> &'static str {
        "slm/1"
    }

    fn settings(&self) -> SlmSettings {
        let encoder = self.scorer.featurizer().encoder.as_ref().and(self.encoder.as_ref()).map(|(e, _)| e.fingerprint().to_owned());
        SlmSettings { checkpoint: self.checkpoint.clone(), encoder, context_turns: self.context_turns }
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let at: Vec<usize> = (0..items.len()).filter(|&i| items[i].response.is_some()).collect();
        if at.is_empty() {
            return Ok(FamilyOutput::Skipped("no responses".into()));
        }
        let pairs: Vec<TrainingPair> = at.iter().map(|&i| slm_pair(&items[i], self.context_turns)).collect();
        let encoder = self.encoder.as_ref().map(|(e, c)| (e.as_ref(), c.as_ref()));
        let scores = score_slm_pairs(&self.scorer, &pairs, encoder, progress)?;
        let with_graphs = pairs.iter().filter(|p| p.response_amr.is_some()).count();
        let column = Column::spread("SLM", items.len(), &at, &scores)?;
        Ok(FamilyOutput::Scored(FamilyScores::new(vec![column]).with_note(format!("{} items scored, {with_graphs} with a response graph", scores.len()))))
    }
}
