//! The fine-tuned text encoder ([`dialeval_slm_model::finetune`]): `P(good continuation)` of
//! the response read together with the last context turns as one input.

use dialeval_datasets::DialogueItem;
use dialeval_datasets::pairs::TrainingPair;
use dialeval_slm_model::finetune::FineTunedScorer;
use serde::Serialize;

use crate::error::Result;
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, ModelUse, Note, empty_context_note, empty_response_note, responding_items};
use crate::models::{CheckpointIdentity, slm_pair};
use crate::table::Column;

/// The `Fine-tuned` column.
pub struct FineTunedFamily {
    scorer: FineTunedScorer,
    checkpoint: CheckpointIdentity,
}

/// What the fine-tuned scores depend on: the checkpoint (its settings name the encoder it was
/// trained from, which loading checks) and the pretrained encoder's fingerprint.
#[derive(Debug, Clone, Serialize)]
pub struct FineTunedSettings {
    /// The model.
    pub checkpoint: CheckpointIdentity,
    /// The pretrained encoder under it.
    pub encoder: String,
    /// Context turns read.
    pub context_turns: usize,
}

impl FineTunedFamily {
    /// The family over a loaded model from `checkpoint`.
    pub fn new(scorer: FineTunedScorer, checkpoint: CheckpointIdentity) -> Self {
        Self { scorer, checkpoint }
    }
}

impl MetricFamily for FineTunedFamily {
    type Settings = FineTunedSettings;

    fn name(&self) -> &str {
        "fine_tuned"
    }

    /// 2: each item scored on its own (not in batches of 32), so that no score depends on how
    /// the corpus was cut.
    fn version(&self) -> &'static str {
        "fine_tuned/2"
    }

    fn settings(&self) -> FineTunedSettings {
        FineTunedSettings { checkpoint: self.checkpoint.clone(), encoder: self.scorer.encoder_id().to_owned(), context_turns: self.scorer.config.context_turns }
    }

    fn models(&self) -> Vec<ModelUse> {
        let id = self.scorer.encoder_id();
        let name = dialeval_slm_model::bert::known_encoder_name(id).unwrap_or("pretrained encoder");
        vec![ModelUse::encoder(name, id), self.checkpoint.model_use()]
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let at = responding_items(items);
        if at.is_empty() {
            return Ok(FamilyOutput::NoneScored { reason: "no responses".into(), notes: vec![empty_response_note(items)] });
        }
        let pairs: Vec<TrainingPair> = at.iter().map(|&i| slm_pair(&items[i], self.scorer.config.context_turns)).collect();
        let mut scores = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(256) {
            scores.extend(self.scorer.score(chunk)?);
            progress(scores.len(), pairs.len());
        }
        let column = Column::spread("Fine-tuned", items.len(), &at, &scores)?;
        let out = FamilyScores::new(vec![column]).with_note(Note::count("{0} items scored", &[scores.len()]));
        Ok(FamilyOutput::Scored(out.with_note(empty_response_note(items)).with_note(empty_context_note(items))))
    }
}
