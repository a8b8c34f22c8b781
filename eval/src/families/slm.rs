//! The AMR-gated small model (SLM) of the AMR-enhanced evaluator: `P(good continuation)` of the
//! response given the last two context turns, with their AMR graphs where attached.

use std::sync::Arc;

use dialeval_datasets::DialogueItem;
use dialeval_datasets::pairs::TrainingPair;
use dialeval_slm_model::bert::PretrainedEncoder;
use dialeval_slm_model::scorer::Scorer;
use serde::Serialize;

use crate::error::Result;
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, ModelUse, Note, empty_context_note, empty_response_note, responding_items};
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
    /// Items are cut to the context turns the model was trained on ([`Scorer::context_turns`]).
    pub fn new(scorer: Scorer, checkpoint: CheckpointIdentity, encoder: Option<(Arc<PretrainedEncoder>, Arc<SharedCache>)>) -> Self {
        let context_turns = scorer.context_turns();
        Self { scorer, checkpoint, encoder, context_turns }
    }
}

impl MetricFamily for SlmFamily {
    type Settings = SlmSettings;

    fn name(&self) -> &str {
        "slm"
    }

    /// 2: unreadable response graphs are named and not counted as graphs. 3: a blank response
    /// is an empty cell, an empty context is counted; graphs beyond the reader's limits are
    /// unreadable graphs. 4: each item scored on its own (not in batches), so that no score
    /// depends on how the corpus was cut.
    fn version(&self) -> &'static str {
        "slm/4"
    }

    fn settings(&self) -> SlmSettings {
        let encoder = self.scorer.featurizer().encoder.as_ref().and(self.encoder.as_ref()).map(|(e, _)| e.fingerprint().to_owned());
        SlmSettings { checkpoint: self.checkpoint.clone(), encoder, context_turns: self.context_turns }
    }

    fn models(&self) -> Vec<ModelUse> {
        let encoder = self.scorer.featurizer().encoder.as_ref().and(self.encoder.as_ref()).map(|(e, _)| ModelUse::encoder(e.name(), e.fingerprint()));
        encoder.into_iter().chain([self.checkpoint.model_use()]).collect()
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let at = responding_items(items);
        if at.is_empty() {
            return Ok(FamilyOutput::NoneScored { reason: "no responses".into(), notes: vec![empty_response_note(items)] });
        }
        let pairs: Vec<TrainingPair> = at.iter().map(|&i| slm_pair(&items[i], self.context_turns)).collect();
        let encoder = self.encoder.as_ref().map(|(e, c)| (e.as_ref(), c.as_ref()));
        let scores = score_slm_pairs(&self.scorer, &pairs, encoder, progress)?;
        // A response graph counts only when the model can read it; one that does not parse is
        // scored as a missing graph (the model's learned input for it) and named here.
        let (mut with_graphs, mut unreadable) = (0, Vec::new());
        for (p, &i) in pairs.iter().zip(&at) {
            match p.response_amr.as_deref() {
                // Parsed only (the reader's size limits included), not laid out as a path matrix.
                Some(g) if dialeval_amr_graph::AmrGraph::decode(g).is_ok() => with_graphs += 1,
                Some(_) => unreadable.push(items[i].id.as_str()),
                None => {}
            }
        }
        let column = Column::spread("SLM", items.len(), &at, &scores)?;
        let out = FamilyScores::new(vec![column]).with_note(Note::count("{0} items scored, {1} with a response graph", &[scores.len(), with_graphs])).with_note(Note::items(
            "{n} response graphs do not parse and were scored as missing graphs: {names}",
            &unreadable,
            10,
            ", ",
        ));
        let out = out.with_note(empty_response_note(items)).with_note(empty_context_note(items));
        Ok(FamilyOutput::Scored(out))
    }
}
