//! What the trainer jobs share ([`super::slm_training`], [`super::ruber_training`],
//! [`super::fine_tuning`]): how they show progress, and the held-out test of a trained model.

use dialeval_common::roc_auc;
use dialeval_datasets::pairs::{PairKind, TrainingPair};
use dialeval_slm_model::separation::auc_against;
use serde::Serialize;

use crate::error::{Error, Result};

/// How a trainer job shows its progress.
pub struct TrainingObserver<'a> {
    /// A line for people (the data's sizes and coverage, negatives retrieved or dropped).
    pub say: &'a dyn Fn(&str),
    /// Sentence vectors or token states computed: `done, total`.
    pub encoding: &'a dyn Fn(usize, usize),
    /// Training: `epoch (or round), step, steps`.
    pub epochs: &'a dyn Fn(usize, usize, usize),
}

/// ROC AUC of a trained model on held-out pairs (the mix's test split: the 100 annotated
/// DailyDialog++ test contexts), positives against every negative and against each kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestAuc {
    /// Pairs scored.
    pub pairs: usize,
    /// Against every negative.
    pub auc: Option<f64>,
    /// Against the random negatives.
    pub auc_random: Option<f64>,
    /// Against the adversarial negatives.
    pub auc_adversarial: Option<f64>,
}

impl TestAuc {
    /// The separation of `pairs` by `scores` (one per pair).
    pub fn of(pairs: &[TrainingPair], scores: &[f64]) -> Self {
        let labels: Vec<u8> = pairs.iter().map(TrainingPair::label).collect();
        let auc = |kind| auc_against(pairs, scores, kind).ok();
        Self { pairs: pairs.len(), auc: roc_auc(scores, &labels).ok(), auc_random: auc(PairKind::RandomNegative), auc_adversarial: auc(PairKind::AdversarialNegative) }
    }
}

/// Writes `value` as pretty JSON to `path`.
///
/// # Errors
/// [`Error::Json`], [`Error::Io`] naming the file.
pub fn write_json(path: &std::path::Path, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| Error::json(path, e))?;
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}
