//! The synthetic sentence vectors of the channel tests (`knowledge.rs`, `turns.rs`): a table of
//! unit vectors by text, topics and vectors near them, and the helpers both tests score with.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Mutex;

use dialeval_common::{SplitMix64, roc_auc};
use dialeval_datasets::pairs::TrainingPair;
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::{Mode, TextEncoderKind};
use dialeval_slm_model::scorer::Scorer;
use dialeval_slm_model::sentence_vectors::SentenceVectors;

/// burn's device seed is process-wide: the trainings of a test binary run one at a time.
pub static SERIAL: Mutex<()> = Mutex::new(());

/// The vectors' width.
pub const DIM: usize = 16;

/// Sentence vectors held in memory.
#[derive(Default)]
pub struct Table(pub HashMap<String, Vec<f32>>);

impl SentenceVectors for Table {
    fn dim(&self) -> usize {
        DIM
    }
    fn encoder_id(&self) -> &str {
        "synthetic"
    }
    fn vector(&self, text: &str) -> Option<Vec<f32>> {
        self.0.get(text).cloned()
    }
    /// A text of `1 + len % 3` tokens, each its vector scaled differently: texts of several
    /// lengths, so batches are padded.
    fn token_states(&self, text: &str) -> Option<Vec<half::f16>> {
        let v = self.0.get(text)?;
        let tokens = 1 + text.len() % 3;
        Some((0..tokens).flat_map(|t| v.iter().map(move |x| half::f16::from_f32(x * (1.0 + 0.25 * t as f32)))).collect())
    }
}

/// `v` scaled to unit length.
pub fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.into_iter().map(|x| x / n).collect()
}

/// A random unit vector.
pub fn random(rng: &mut SplitMix64) -> Vec<f32> {
    unit((0..DIM).map(|_| rng.unit() as f32 * 2.0 - 1.0).collect())
}

/// A unit vector near `topic`.
pub fn near(topic: &[f32], rng: &mut SplitMix64) -> Vec<f32> {
    unit(topic.iter().map(|t| t + 0.35 * (rng.unit() as f32 * 2.0 - 1.0)).collect())
}

/// A fresh temporary folder for the run `name` of the test `test`.
pub fn temp(test: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dialeval-slm-{test}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// ROC AUC of `scorer` on `pairs` with `table`'s vectors.
pub fn auc(scorer: &Scorer, pairs: &[TrainingPair], table: &Table) -> f64 {
    let scores = scorer.score(pairs, Some(table)).unwrap_or_else(|e| panic!("{e}"));
    roc_auc(&scores, &pairs.iter().map(TrainingPair::label).collect::<Vec<_>>()).unwrap_or_else(|e| panic!("{e}"))
}

/// The small gated model over the table's vectors that the channel tests train (12 epochs; each
/// test sets its channel).
pub fn small_config() -> TrainConfig {
    TrainConfig {
        mode: Mode::Gated,
        epochs: 12,
        batch_size: 16,
        lr: 3e-3,
        patience: 12,
        seed: 3,
        d_model: 32,
        layers: 1,
        max_len: 32,
        max_nodes: 8,
        max_path: 2,
        text_encoder: TextEncoderKind::Pretrained,
        dropout: 0.0,
        ..TrainConfig::default()
    }
}
