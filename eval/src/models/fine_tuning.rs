//! The fine-tuning job in one place (`dialeval fine-tune` only turns its flags into a
//! [`FineTuning`]): the training mix of a `../shared`-style folder, rounds of fine-tuning the
//! encoder's top layers over `[CLS] context [SEP] response [SEP]` with a checkpoint each
//! (resumable), then the best model's test on the mix's held-out pairs (`test.json`) and its
//! agreement with the human ratings of the sets given (`human.json`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use dialeval_datasets::mix::MixConfig;
use dialeval_datasets::pairs::TrainingPair;
use dialeval_datasets::{CorpusFormat, DialogueItem, Selection};
use dialeval_metrics::correlation::{Correlation, spearman};
use dialeval_slm_model::bert::{PretrainedEncoder, default_encoder_dir};
use dialeval_slm_model::finetune::{FineTuneConfig, FineTuneData, FineTunedScorer, RoundLog, fine_tune};

use crate::error::Result;
use crate::models::mix::training_mix;
use crate::models::slm_pair;
use crate::models::training::{TestAuc, TrainingObserver, write_json};

/// A human-judgement set the fine-tuned model is correlated with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanSet {
    /// Its name in `human.json`.
    pub name: String,
    /// Its format.
    pub format: CorpusFormat,
    /// Its file (a set whose file is missing is skipped, and said so).
    pub path: PathBuf,
}

/// A fine-tuning run: what `fine-tune`'s flags become.
#[derive(Debug, Clone)]
pub struct FineTuning {
    /// The shared data folder (`../shared`).
    pub shared: PathBuf,
    /// Checkpoints, log and results; a run restarted into it resumes from its last round.
    pub out: PathBuf,
    /// The training mix (its context turns at least the model's).
    pub mix: MixConfig,
    /// The model and its training.
    pub config: FineTuneConfig,
    /// The pretrained encoder (default: all-mpnet-base-v2).
    pub encoder: Option<PathBuf>,
    /// Dev pairs scored after each round: an even sample of the mix's dev pairs (0: all).
    pub dev_pairs: usize,
    /// The sets whose ratings the best model is correlated with.
    pub human_sets: Vec<HumanSet>,
}

/// Turn-level Spearman of a score with each quality a set rates (items without a rating of it
/// left out), and with the response's length in words (`length (words)`).
pub type HumanAgreement = BTreeMap<String, Correlation>;

/// What a [`FineTuning`] produced: the best model is in `out`.
#[derive(Debug)]
pub struct FineTuned {
    /// One entry per round run here.
    pub logs: Vec<RoundLog>,
    /// The best model on the mix's test split (also `out/test.json`).
    pub test: TestAuc,
    /// Its agreement with each human set found (also `out/human.json`).
    pub human: BTreeMap<String, HumanAgreement>,
}

impl FineTuning {
    /// Builds the mix, fine-tunes (resuming from `out`'s rounds), tests the best model and
    /// correlates it with the human sets.
    ///
    /// # Errors
    /// Unreadable data, a training failure, results that cannot be written.
    pub fn run(&self, observe: &TrainingObserver<'_>) -> Result<FineTuned> {
        let encoder = self.encoder.clone().unwrap_or_else(default_encoder_dir);
        let mix_config = MixConfig { max_context_turns: self.mix.max_context_turns.max(self.config.context_turns), ..self.mix };
        let mix = training_mix(&self.shared, &mix_config, &[], &|line| (observe.say)(&format!("mix: {line}")))?;
        let dev = even_sample(&mix.dev, self.dev_pairs);
        (observe.say)(&format!("{} training pairs, {} dev pairs (of {}), {} test pairs", mix.train.len(), dev.len(), mix.dev.len(), mix.test.len()));
        let logs = fine_tune(&FineTuneData { train: &mix.train, dev: &dev, encoder: &encoder }, &self.config, &self.out, observe.epochs)?;
        let device = self.config.compute.device()?;
        let pretrained = Arc::new(PretrainedEncoder::load(&encoder, &device)?);
        let scorer = FineTunedScorer::load(&self.out, &pretrained, device)?;
        let test = TestAuc::of(&mix.test, &scorer.score(&mix.test)?);
        write_json(&self.out.join("test.json"), &test)?;
        let mut human = BTreeMap::new();
        for set in &self.human_sets {
            if !set.path.is_file() {
                (observe.say)(&format!("{} not found: {} not scored", set.path.display(), set.name));
                continue;
            }
            let items: Vec<DialogueItem> = set.format.load(&set.path, &Selection::default())?.items.into_iter().filter(|i| i.response.as_ref().is_some_and(|r| !r.text.trim().is_empty())).collect();
            let pairs: Vec<TrainingPair> = items.iter().map(|i| slm_pair(i, self.config.context_turns)).collect();
            let agreement = human_agreement(&items, &scorer.score(&pairs)?)?;
            (observe.say)(&format!("{}: {}", set.name, agreement.iter().map(|(k, c)| format!("{k} {:.3} (p={:.2e}, n={})", c.statistic, c.pvalue, c.n)).collect::<Vec<_>>().join(", ")));
            human.insert(set.name.clone(), agreement);
        }
        write_json(&self.out.join("human.json"), &human)?;
        Ok(FineTuned { logs, test, human })
    }
}

/// Every `n / k`-th of `pairs` (all of them when `k` is 0 or at least `n`): an even sample
/// across contexts.
fn even_sample(pairs: &[TrainingPair], k: usize) -> Vec<TrainingPair> {
    let n = pairs.len();
    if k == 0 || k >= n {
        return pairs.to_vec();
    }
    (0..k).map(|i| pairs[i * n / k].clone()).collect()
}

/// Turn-level Spearman of `scores` with each quality the items rate, and with response length.
fn human_agreement(items: &[DialogueItem], scores: &[f64]) -> Result<HumanAgreement> {
    let mut qualities: Vec<&str> = Vec::new();
    for r in items.iter().flat_map(|i| &i.ratings) {
        if !qualities.contains(&r.quality.as_str()) {
            qualities.push(&r.quality);
        }
    }
    let mut out = BTreeMap::new();
    for quality in qualities {
        let (x, y): (Vec<f64>, Vec<f64>) = items.iter().zip(scores).filter_map(|(i, &s)| Some((s, i.quality(quality)?.mean()?))).unzip();
        out.insert(quality.to_owned(), spearman(&x, &y)?);
    }
    let lengths: Vec<f64> = items.iter().map(|i| i.response.as_ref().map_or(0, |r| r.text.split_whitespace().count()) as f64).collect();
    out.insert("length (words)".to_owned(), spearman(scores, &lengths)?);
    Ok(out)
}
