//! Training with Adam, gradient clipping, learning-rate decay on plateau and early stopping on
//! the dev ROC AUC; a checkpoint every epoch (model, optimiser, tokenizer and vocabularies,
//! configs, loop state) from which [`train`] resumes; a JSONL log; and the [`Scorer`].
//!
//! Reproducibility: the shuffle of epoch `e` and the device seed are derived from `seed + e`, so
//! a run resumed from the checkpoint of epoch `e − 1` takes the same steps as an uninterrupted
//! one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::grad_clipping::GradientClippingConfig;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use burn::store::ModuleRecord;
use dialeval_common::SplitMix64;
use dialeval_datasets::pairs::{PairKind, TrainingPair};
use serde::{Deserialize, Serialize};

use crate::compute::{Compute, materialized};
use crate::data::{Example, Featurizer, KnowledgeUnit, SentenceVectors, Withheld};
use crate::error::{Error, Result};
use crate::model::{CrossEncoderConfig, GraphEncoderConfig, Mode, PretrainedHeadConfig, Slm, SlmConfig, TextEncoderConfig, TextEncoderKind};

/// Training settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// Which encoders the classifier sees.
    pub mode: Mode,
    /// Most epochs.
    pub epochs: usize,
    /// Pairs per step.
    pub batch_size: usize,
    /// Initial learning rate.
    pub lr: f64,
    /// Multiply the learning rate by this when the dev AUC does not improve.
    pub lr_decay: f64,
    /// Stop after this many epochs without a better dev AUC.
    pub patience: usize,
    /// Gradient-norm clipping.
    pub clip_norm: f32,
    /// Seed of shuffling, initialisation and dropout.
    pub seed: u64,
    /// Model width.
    pub d_model: usize,
    /// Layers of each encoder.
    pub layers: usize,
    /// Longest token sequence.
    pub max_len: usize,
    /// Most nodes per graph.
    pub max_nodes: usize,
    /// Labels per relation path.
    pub max_path: usize,
    /// Weight of the contrastive term (0: the "no contrastive loss" ablation).
    #[serde(default = "default_contrastive_weight")]
    pub contrastive_weight: f64,
    /// Where `H_S` comes from: the scratch Transformer or the head over pretrained sentence
    /// vectors (which [`train`] then needs).
    #[serde(default)]
    pub text_encoder: TextEncoderKind,
    /// Probability that a training pair's graphs are withheld for a step (replaced by the "no
    /// graph" input), so that the gated model learns to score pairs with partial or no AMR.
    #[serde(default)]
    pub graph_dropout: f64,
    /// Dropout in the text encoder and the pretrained head (0 makes a run's arithmetic the same
    /// on every device up to float summation order).
    #[serde(default = "default_dropout")]
    pub dropout: f64,
    /// Context turns the model reads: the last ones. Training pairs come cut to them (the
    /// mix's `max_context_turns`), and a scorer's callers cut their items to
    /// [`Scorer::context_turns`]. Models trained before it was recorded read two.
    #[serde(default = "default_context_turns")]
    pub context_turns: usize,
    /// The pretrained head's knowledge channel: each pair's knowledge or persona
    /// ([`TrainingPair::knowledge`]) is read through its sentence vector, which `vectors` must
    /// then hold; a pair without reads the learned "no knowledge" input.
    #[serde(default)]
    pub knowledge: bool,
    /// Probability that a training pair's knowledge is withheld for a step (it reads the "no
    /// knowledge" input), so the context–response path keeps learning on grounded pairs.
    #[serde(default)]
    pub knowledge_dropout: f64,
    /// What of the knowledge the channel reads: the whole text's vector or its sentence nearest
    /// the response ([`KnowledgeUnit`]). Models trained before the choice existed read the whole.
    #[serde(default)]
    pub knowledge_unit: KnowledgeUnit,
    /// The pretrained head's turn channel ([`crate::data::Featurizer::turns`]): the last turn
    /// read apart from the joined context, and a learned residual on the zero-shot cosines of
    /// the response with the last turn and the last two. `vectors` must then hold each pair's
    /// last two turns.
    #[serde(default)]
    pub turns: bool,
    /// Graphs are read only where a pair has all of them (the response's and every context
    /// turn's); a pair with some reads none, in training and in scoring. Otherwise which of a
    /// pair's graphs exist can tell its class: a Topical-Chat negative drawn from a conversation
    /// without silver AMR lacks the response graph that its positive has. Runs saved before the
    /// rule kept partial graphs.
    #[serde(default)]
    pub complete_graphs: bool,
    /// Under [`Mode::Residual`], the weight of the penalty on the graph term's mean square over
    /// the items with graphs (0: none).
    #[serde(default)]
    pub graph_term_penalty: f64,
    /// Where training runs (and the dev predictions of each epoch). Not saved with the run: a
    /// checkpoint resumes on any device ([`crate::compute`] states the tolerance).
    #[serde(skip)]
    pub compute: Compute,
}

fn default_contrastive_weight() -> f64 {
    0.5
}

fn default_dropout() -> f64 {
    0.1
}

fn default_context_turns() -> usize {
    2
}

impl TrainConfig {
    /// What of each pair a run with these settings reads through sentence vectors (the texts
    /// `vectors` must hold), for the pretrained text sides.
    pub fn vector_inputs(&self) -> crate::data::VectorInputs {
        crate::data::VectorInputs { knowledge: self.knowledge.then_some(self.knowledge_unit), turns: self.turns }
    }
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            mode: Mode::Gated,
            epochs: 5,
            batch_size: 16,
            lr: 1e-3,
            lr_decay: 0.5,
            patience: 2,
            clip_norm: 1.0,
            seed: 0,
            d_model: 64,
            layers: 2,
            max_len: 96,
            max_nodes: 48,
            max_path: 4,
            contrastive_weight: 0.5,
            text_encoder: TextEncoderKind::Scratch,
            graph_dropout: 0.0,
            dropout: default_dropout(),
            context_turns: default_context_turns(),
            knowledge: false,
            knowledge_dropout: 0.0,
            knowledge_unit: KnowledgeUnit::Whole,
            turns: false,
            complete_graphs: true,
            graph_term_penalty: 0.0,
            compute: Compute::Cpu,
        }
    }
}

/// One line of `log.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochLog {
    /// 1-based epoch.
    pub epoch: usize,
    /// Mean training loss.
    pub train_loss: f64,
    /// Dev accuracy at threshold 0.5.
    pub dev_accuracy: f64,
    /// Dev ROC AUC.
    pub dev_auc: f64,
    /// Learning rate used.
    pub lr: f64,
    /// Wall time of the epoch.
    pub seconds: f64,
    /// The turn channel's weights of the two zero-shot cosines in the positive logit after the
    /// epoch (absent without the channel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cosine_weights: Option<[f32; 2]>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LoopState {
    pub(crate) epoch: usize,
    pub(crate) lr: f64,
    pub(crate) best_auc: f64,
    pub(crate) bad_epochs: usize,
}

impl LoopState {
    /// The state before the first epoch.
    pub(crate) fn new(lr: f64) -> Self {
        Self { epoch: 0, lr, best_auc: f64::NEG_INFINITY, bad_epochs: 0 }
    }

    /// The next epoch to run, unless `epochs` are done or the patience is spent.
    pub(crate) fn next_epoch(&self, epochs: usize, patience: usize) -> Option<usize> {
        (self.epoch < epochs && self.bad_epochs < patience).then_some(self.epoch + 1)
    }

    /// Records the dev AUC of `epoch`: a better one resets the patience count (and the caller
    /// saves the best model); otherwise the count grows and the rate decays by `lr_decay`.
    /// Returns whether the epoch was the best so far.
    pub(crate) fn finish_epoch(&mut self, epoch: usize, auc: f64, lr_decay: f64) -> bool {
        self.epoch = epoch;
        if auc > self.best_auc {
            self.best_auc = auc;
            self.bad_epochs = 0;
            true
        } else {
            self.bad_epochs += 1;
            self.lr *= lr_decay;
            false
        }
    }
}

/// The per-epoch checkpoint of a training run, in `<run>/checkpoint`: `model-<epoch>` and
/// `optim-<epoch>` (burn records), then `state.json` naming that epoch, written last and
/// atomically, so a run killed at any moment resumes from its last complete epoch.
pub(crate) struct Checkpoint {
    dir: PathBuf,
}

impl Checkpoint {
    /// The checkpoint directory of the run in `run_dir` (created).
    pub(crate) fn open(run_dir: &Path) -> Result<Self> {
        let dir = run_dir.join("checkpoint");
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Self { dir })
    }

    /// Whether an epoch has been saved.
    pub(crate) fn exists(&self) -> bool {
        self.dir.join("state.json").is_file()
    }

    /// The record of `name` at `epoch` (runs written before epoch-numbered files: `name`).
    fn record_path(&self, name: &str, epoch: usize) -> PathBuf {
        let numbered = self.dir.join(format!("{name}-{epoch}"));
        if numbered.with_extension("bpk").is_file() { numbered } else { self.dir.join(name) }
    }

    /// Loads the last saved epoch into `model` and `optim`.
    pub(crate) fn load<M: Module>(&self, model: M, optim: ModuleOptimizer) -> Result<(M, ModuleOptimizer, LoopState)> {
        let state: LoopState = read_json(&self.dir.join("state.json"))?;
        let path = self.record_path("model", state.epoch);
        let model = load_module(model, &path)?;
        let path = self.record_path("optim", state.epoch);
        let optim = optim.load(&path).map_err(|e| record_error(&path, e))?;
        Ok((model, optim, state))
    }

    /// Saves the epoch `state.epoch`, then removes the records of earlier epochs.
    pub(crate) fn save<M: Module>(&self, model: &M, optim: &ModuleOptimizer, state: &LoopState) -> Result<()> {
        let path = self.dir.join(format!("model-{}", state.epoch));
        model.clone().into_record().save(&path).map_err(|e| record_error(&path, e))?;
        let path = self.dir.join(format!("optim-{}", state.epoch));
        optim.save(&path).map_err(|e| record_error(&path, e))?;
        write_json(&self.dir.join("state.json"), state)?;
        let current = [format!("model-{}.bpk", state.epoch), format!("optim-{}.bpk", state.epoch)];
        let entries = std::fs::read_dir(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".bpk") && !current.contains(&name) {
                std::fs::remove_file(entry.path()).map_err(|e| Error::io(&entry.path(), e))?;
            }
        }
        Ok(())
    }
}

/// The settings a training run records beside its checkpoint, which a resumed run must match.
pub(crate) trait RunMeta: PartialEq + Serialize + for<'de> Deserialize<'de> {
    /// The file in the run's folder.
    const FILE: &'static str;
    /// What differs when they do not match, for the error.
    const DIFFERS: &'static str;
    /// The settings with what a resumed run may change (more epochs, another device) blanked.
    fn comparable(&self) -> Self;
}

/// Opens the checkpoint of the run in `dir` and records the run's settings `meta`. A run that
/// resumes (a checkpoint exists) must have been started with the same settings, but for what
/// [`RunMeta::comparable`] blanks; otherwise [`Error::Config`]. Returns the checkpoint and
/// whether the run resumes.
pub(crate) fn open_run<M: RunMeta>(dir: &Path, meta: &M) -> Result<(Checkpoint, bool)> {
    let checkpoint = Checkpoint::open(dir)?;
    let resume = checkpoint.exists();
    if resume {
        let saved: M = read_json(&dir.join(M::FILE))?;
        if saved.comparable() != meta.comparable() {
            return Err(Error::Config(format!("{}: the checkpoint was trained with {}; use a fresh directory", dir.display(), M::DIFFERS)));
        }
    }
    write_json(&dir.join(M::FILE), meta)?;
    Ok((checkpoint, resume))
}

/// Saves `model` as the best one so far, `<run>/best/model`.
pub(crate) fn save_best<M: Module>(run_dir: &Path, model: M) -> Result<()> {
    let best = run_dir.join("best");
    std::fs::create_dir_all(&best).map_err(|e| Error::io(&best, e))?;
    let path = best.join("model");
    model.into_record().save(&path).map_err(|e| record_error(&path, e))
}

/// Seeds `device` for `epoch` and returns that epoch's order of the `n` training items (both
/// derived from `seed` and the epoch, so a resumed run repeats them).
pub(crate) fn begin_epoch(device: &Device, n: usize, seed: u64, epoch: usize) -> Vec<usize> {
    device.seed(seed.wrapping_add(epoch as u64));
    epoch_order(n, seed, epoch)
}

/// The order of `n` training items in `epoch`: a shuffle derived from `seed` and the epoch, so a
/// resumed run repeats it.
pub(crate) fn epoch_order(n: usize, seed: u64, epoch: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    shuffle(&mut order, &mut SplitMix64(seed ^ (epoch as u64).wrapping_mul(0x9E37_79B9)));
    order
}

/// Fisher–Yates shuffle of `items` with `rng` (the same permutation for the same seed on every
/// platform).
pub(crate) fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

/// Appends one JSON line to the log at `path`.
pub(crate) fn append_log(path: &Path, line: &impl Serialize) -> Result<()> {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::io(path, e))?;
    let text = serde_json::to_string(line).map_err(|e| Error::Format(format!("{}: {e}", path.display())))?;
    writeln!(file, "{text}").map_err(|e| Error::io(path, e))
}

pub use dialeval_common::{AucError, roc_auc};

/// Share of scores on the right side of 0.5 for their 0/1 labels; `None` for no scores.
pub fn accuracy(scores: &[f64], labels: &[u8]) -> Option<f64> {
    let correct = scores.iter().zip(labels).filter(|(s, l)| (**s >= 0.5) == (**l == 1)).count();
    (!scores.is_empty()).then(|| correct as f64 / scores.len() as f64)
}

/// The scores and labels of the positive pairs and of the negatives of one `kind`.
pub fn scores_against(pairs: &[TrainingPair], scores: &[f64], kind: PairKind) -> (Vec<f64>, Vec<u8>) {
    pairs.iter().zip(scores).filter(|(p, _)| p.kind == PairKind::Positive || p.kind == kind).map(|(p, s)| (*s, p.label())).unzip()
}

/// ROC AUC of the positive pairs against the negatives of one `kind`.
///
/// # Errors
/// [`AucError::LengthMismatch`] when there is not one score per pair, [`AucError::OneClass`]
/// when the positives or the negatives of `kind` are missing.
pub fn auc_against(pairs: &[TrainingPair], scores: &[f64], kind: PairKind) -> std::result::Result<f64, AucError> {
    if pairs.len() != scores.len() {
        return Err(AucError::LengthMismatch { scores: scores.len(), labels: pairs.len() });
    }
    let (s, l) = scores_against(pairs, scores, kind);
    roc_auc(&s, &l)
}

/// A dev set fit to choose checkpoints: ROC AUC picks the best epoch and drives early
/// stopping, so both classes must be there.
///
/// # Errors
/// [`Error::DevSet`] naming the class counts.
pub fn check_dev_labels(labels: &[u8]) -> Result<()> {
    dialeval_common::both_classes(labels).map(|_| ()).map_err(Error::DevSet)
}

fn model_config(f: &Featurizer, c: &TrainConfig) -> SlmConfig {
    SlmConfig::new(
        TextEncoderConfig::new(f.tokenizer.len()).with_d_model(c.d_model).with_d_ff(2 * c.d_model).with_n_layers(c.layers).with_max_len(c.max_len).with_dropout(c.dropout),
        GraphEncoderConfig::new(f.concepts.len(), f.labels.len()).with_d_model(c.d_model).with_n_layers(c.layers),
    )
    .with_pretrained(f.encoder.as_ref().map(|(_, dim)| PretrainedHeadConfig::new(*dim, c.d_model).with_dropout(c.dropout).with_knowledge(f.knowledge).with_turns(f.turns)))
    .with_cross(f.encoder.as_ref().filter(|_| f.cross.is_some()).map(|(_, dim)| CrossEncoderConfig::new(*dim, c.d_model).with_width(c.d_model).with_dropout(c.dropout)))
    .with_contrastive_weight(c.contrastive_weight)
    .with_graph_residual(c.mode == Mode::Residual)
    .with_graph_term_penalty(c.graph_term_penalty)
}

/// Featurises `pairs` (with their pretrained pair features when the featuriser uses them).
fn featurize(featurizer: &Featurizer, pairs: &[TrainingPair], vectors: Option<&dyn SentenceVectors>) -> Result<Vec<Example>> {
    pairs.iter().map(|p| featurizer.example_with(p, vectors)).collect()
}

/// The batches of an epoch: the shuffled `order` split into pairs with and without AMR, each
/// cut into batches, and the batches shuffled together (seeded by `seed` and `epoch`). A batch
/// is padded to its largest graph, so one graph among text-only pairs made the whole batch pay
/// for it; kept apart, the text-only batches cost almost nothing in the graph encoder.
fn batches_by_graph(order: &[usize], examples: &[Example], batch_size: usize, seed: u64, epoch: usize) -> Vec<Vec<usize>> {
    let (with, without): (Vec<usize>, Vec<usize>) = order.iter().partition(|&&i| examples[i].has_graph);
    let mut batches: Vec<Vec<usize>> = with.chunks(batch_size).chain(without.chunks(batch_size)).map(<[usize]>::to_vec).collect();
    shuffle(&mut batches, &mut SplitMix64(seed ^ 0xBA7C_4E55 ^ (epoch as u64).wrapping_mul(0x9E37_79B9)));
    batches
}

/// Where a seeded draw of a training run happens: a resumed run makes the same draws.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DrawAt {
    pub(crate) seed: u64,
    pub(crate) epoch: usize,
    pub(crate) step: usize,
}

/// Which examples of a step have their graphs withheld: a seeded draw per example from
/// `at`, so a resumed run withholds the same ones.
pub(crate) fn withheld(n: usize, p: f64, at: DrawAt) -> Vec<bool> {
    withheld_salted(n, p, 0x5EED_6A7F, at)
}

/// As [`withheld`], for the knowledge (its own stream, so graphs and knowledge are withheld
/// independently).
fn knowledge_withheld(n: usize, p: f64, at: DrawAt) -> Vec<bool> {
    withheld_salted(n, p, 0x0C0F_FEE5_4B1D, at)
}

fn withheld_salted(n: usize, p: f64, salt: u64, at: DrawAt) -> Vec<bool> {
    if p <= 0.0 {
        return Vec::new();
    }
    let mut rng = SplitMix64((at.seed ^ salt) ^ ((at.epoch as u64) << 32) ^ at.step as u64);
    (0..n).map(|_| rng.unit() < p).collect()
}

pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let text = serde_json::to_string_pretty(value).map_err(|e| Error::Format(format!("{}: {e}", path.display())))?;
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Format(format!("{}: {e}", path.display())))
}

pub(crate) fn record_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Format(format!("{}: {e}", path.display()))
}

/// `module` with the parameters saved at `path` (a burnpack record).
///
/// # Errors
/// An unreadable record ([`Error::Format`]); [`Error::RecordMismatch`] when its tensors do not
/// fit `module` (missing, unexpected or differently shaped), which burn's `load_record` would
/// panic on.
pub(crate) fn load_module<M: Module>(module: M, path: &Path) -> Result<M> {
    let record = ModuleRecord::load(path).map_err(|e| record_error(path, e))?;
    module.try_load_record(record).map_err(|e| Error::RecordMismatch { path: path.to_owned(), detail: e.to_string() })
}

/// A model with its featuriser and mode on a device (no autodiff): what scoring examples takes.
struct Predictor<'a> {
    model: &'a Slm,
    featurizer: &'a Featurizer,
    mode: Mode,
    device: &'a Device,
    /// Examples per forward pass.
    batch: usize,
}

/// Examples per forward pass when training measures its dev set.
const DEV_BATCH: usize = 64;

/// Examples per forward pass when a [`Scorer`] scores: one, so that an example is computed with
/// the same shapes (its own lengths, no padding) whatever else is scored with it, and its score
/// never depends on how a corpus was cut into chunks or shards (batched, the last bits would).
const SCORE_BATCH: usize = 1;

impl Predictor<'_> {
    /// Scores examples, [`Predictor::batch`] at a time; under [`Graphs::Withhold`] every graph
    /// is replaced by the "no graph" input.
    fn predict(&self, examples: &[Example], vectors: Option<&dyn SentenceVectors>, graphs: Graphs) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(examples.len());
        for chunk in examples.chunks(self.batch.max(1)) {
            let refs: Vec<&Example> = chunk.iter().collect();
            let withheld = vec![graphs == Graphs::Withhold; refs.len()];
            let p: Vec<f32> = self
                .model
                .probability(&self.featurizer.collate_withholding(&refs, Withheld { graphs: &withheld, knowledge: &[] }, vectors, self.device)?, self.mode)
                .into_data()
                .convert::<f32>()
                .try_into_vec::<f32>()
                .map_err(|e| Error::Format(format!("model output: {e:?}")))?;
            if p.len() != refs.len() {
                return Err(Error::Format(format!("model output: {} scores for {} pairs", p.len(), refs.len())));
            }
            out.extend(p.into_iter().map(f64::from));
        }
        Ok(out)
    }
}

/// What [`train`] learns from: training and dev pairs and, for the pretrained text sides,
/// the sentence vectors of their texts.
#[derive(Clone, Copy)]
pub struct TrainingData<'a> {
    /// The training pairs.
    pub train: &'a [TrainingPair],
    /// The dev pairs (early stopping, the best model).
    pub dev: &'a [TrainingPair],
    /// The sentence vectors (`None` for the scratch text encoder).
    pub vectors: Option<&'a dyn SentenceVectors>,
}

impl std::fmt::Debug for TrainingData<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrainingData").field("train", &self.train.len()).field("dev", &self.dev.len()).field("vectors", &self.vectors.is_some()).finish()
    }
}

/// Trains (or resumes training) into `dir` on `data`, calling `progress(epoch, step, steps)`.
/// The best model by dev AUC is kept in `dir/best`. With
/// [`TextEncoderKind::Pretrained`], `data.vectors` must hold the sentence vector of every context
/// ([`crate::data::context_text`]) and response, with [`TrainConfig::knowledge`] of every
/// pair's knowledge, and with [`TrainConfig::turns`] of its last two turns: every text of
/// [`crate::data::VectorInputs::texts`] of [`TrainConfig::vector_inputs`].
///
/// # Errors
/// Empty data, invalid settings, missing or mismatched sentence vectors, or files that cannot
/// be written or read back.
pub fn train(data: &TrainingData, config: &TrainConfig, dir: &Path, progress: &dyn Fn(usize, usize, usize)) -> Result<Vec<EpochLog>> {
    let TrainingData { train: train_pairs, dev: dev_pairs, vectors } = *data;
    if train_pairs.is_empty() || dev_pairs.is_empty() || config.batch_size == 0 || !config.d_model.is_multiple_of(4) {
        return Err(Error::Config("need training and dev pairs, batch_size > 0 and d_model divisible by 4".into()));
    }
    if !(0.0..1.0).contains(&config.graph_dropout) {
        return Err(Error::Config(format!("graph_dropout must be in [0, 1), got {}", config.graph_dropout)));
    }
    if !(config.graph_term_penalty >= 0.0 && config.graph_term_penalty.is_finite()) || (config.graph_term_penalty > 0.0 && config.mode != Mode::Residual) {
        return Err(Error::Config(format!("graph_term_penalty must be finite, at least 0, and above 0 only with mode residual; got {} with {:?}", config.graph_term_penalty, config.mode)));
    }
    if !(0.0..1.0).contains(&config.knowledge_dropout) {
        return Err(Error::Config(format!("knowledge_dropout must be in [0, 1), got {}", config.knowledge_dropout)));
    }
    if config.knowledge && config.text_encoder == TextEncoderKind::Scratch {
        return Err(Error::Config("the knowledge channel reads the pretrained encoder's vectors (text_encoder: pretrained or cross)".into()));
    }
    if config.turns && config.text_encoder == TextEncoderKind::Scratch {
        return Err(Error::Config("the turn channel reads the pretrained encoder's vectors (text_encoder: pretrained or cross)".into()));
    }
    let checkpoint = Checkpoint::open(dir)?;
    let resume = checkpoint.exists();
    let featurizer: Featurizer = if resume {
        let saved: TrainConfig = read_json(&dir.join("train.json"))?;
        if saved != (TrainConfig { epochs: saved.epochs, compute: saved.compute, ..config.clone() }) {
            return Err(Error::Config(format!("{} holds a run with other settings (only --epochs may change); resume it with the same settings or train into a new directory", dir.display())));
        }
        read_json(&dir.join("featurizer.json"))?
    } else {
        let mut f = Featurizer::fit(train_pairs, config.max_len, config.max_nodes, config.max_path)?;
        if config.text_encoder != TextEncoderKind::Scratch {
            let Some(v) = vectors else { return Err(Error::Config("the pretrained text encoder needs sentence vectors".into())) };
            f = if config.text_encoder == TextEncoderKind::Cross { f.with_cross(v, crate::data::CrossSpans::default()) } else { f.with_pretrained(v) };
            if config.knowledge {
                f = f.with_knowledge()?.with_knowledge_unit(config.knowledge_unit);
            }
            if config.turns {
                f = f.with_turns()?;
            }
        }
        if config.complete_graphs {
            f = f.with_complete_graphs();
        }
        write_json(&dir.join("featurizer.json"), &f)?;
        write_json(&dir.join("train.json"), config)?;
        f
    };
    featurizer.check_vectors(vectors)?;
    let device = config.compute.device()?.autodiff();
    let plain = device.clone().without_autodiff();
    // Drawn on the CPU under the seed, then moved to the device: the same initial weights on
    // every device (each backend has its own random stream, and burn draws a parameter lazily,
    // on the device it lives on at first use, so it is materialised before the move).
    let init_device = Device::flex().autodiff();
    init_device.seed(config.seed);
    device.seed(config.seed);
    let model_config = model_config(&featurizer, config);
    let mut model = materialized(model_config.init(&init_device)).fork(&device);
    let mut optim = AdamConfig::new().with_weight_decay(Some(WeightDecayConfig::new(1e-5))).with_grad_clipping(Some(GradientClippingConfig::Norm(config.clip_norm))).init();
    let mut state = LoopState::new(config.lr);
    if resume {
        (model, optim, state) = checkpoint.load(model, optim)?;
    }
    let train_examples = featurize(&featurizer, train_pairs, vectors)?;
    let dev_examples = featurize(&featurizer, dev_pairs, vectors)?;
    let dev_labels: Vec<u8> = dev_examples.iter().map(|e| e.label).collect();
    check_dev_labels(&dev_labels)?;
    let mut logs = Vec::new();
    let log_path = dir.join("log.jsonl");
    while let Some(epoch) = state.next_epoch(config.epochs, config.patience) {
        let started = Instant::now();
        let order = begin_epoch(&device, train_examples.len(), config.seed, epoch);
        let batches = batches_by_graph(&order, &train_examples, config.batch_size, config.seed, epoch);
        let steps = batches.len();
        let mut total = 0.0;
        for (step, chunk) in batches.iter().enumerate() {
            let refs: Vec<&Example> = chunk.iter().map(|&i| &train_examples[i]).collect();
            let at = DrawAt { seed: config.seed, epoch, step };
            let graphs_out = withheld(refs.len(), config.graph_dropout, at);
            let knowledge_out = knowledge_withheld(refs.len(), config.knowledge_dropout, at);
            let batch = featurizer.collate_withholding(&refs, Withheld { graphs: &graphs_out, knowledge: &knowledge_out }, vectors, &device)?;
            let (loss, _) = model.loss(&batch, config.mode);
            total += f64::from(loss.clone().into_scalar::<f32>());
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(state.lr, model, grads);
            progress(epoch, step + 1, steps);
        }
        let valid = model.valid();
        let scores = Predictor { model: &valid, featurizer: &featurizer, mode: config.mode, device: &plain, batch: DEV_BATCH }.predict(&dev_examples, vectors, Graphs::Use)?;
        let auc = roc_auc(&scores, &dev_labels).map_err(Error::DevSet)?;
        let log = EpochLog {
            epoch,
            train_loss: total / steps as f64,
            dev_accuracy: accuracy(&scores, &dev_labels).unwrap_or(0.0),
            dev_auc: auc,
            lr: state.lr,
            seconds: started.elapsed().as_secs_f64(),
            cosine_weights: valid.cosine_weights(),
        };
        if state.finish_epoch(epoch, auc, config.lr_decay) {
            save_best(dir, valid)?;
            write_json(&dir.join("best/mode.json"), &config.mode)?;
        }
        checkpoint.save(&model, &optim, &state)?;
        append_log(&log_path, &log)?;
        logs.push(log);
    }
    Ok(logs)
}

/// Whether [`Scorer::score_with`] reads the items' graphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Graphs {
    /// The graphs the pairs carry.
    Use,
    /// None: every graph withheld, as for items without AMR.
    Withhold,
}

/// A trained model loaded once for scoring.
pub struct Scorer {
    model: Slm,
    featurizer: Featurizer,
    mode: Mode,
    context_turns: usize,
    device: Device,
}

impl Scorer {
    /// Loads `dir/best` (written by [`train`]) on `device`, after checking the files of a
    /// shipped checkpoint against its `SHA256SUMS` ([`crate::bundle::verify`]).
    ///
    /// # Errors
    /// Missing or unreadable files, [`Error::Checksum`], [`Error::RecordMismatch`] when the saved
    /// parameters do not fit the model `train.json` and `featurizer.json` describe.
    pub fn load(dir: &Path, device: Device) -> Result<Self> {
        crate::bundle::verify(dir)?;
        let featurizer: Featurizer = read_json(&dir.join("featurizer.json"))?;
        let config: TrainConfig = read_json(&dir.join("train.json"))?;
        let mode: Mode = read_json(&dir.join("best/mode.json"))?;
        let path: PathBuf = dir.join("best/model");
        let model = load_module(model_config(&featurizer, &config).init(&device), &path)?;
        Ok(Self { model, featurizer, mode, context_turns: config.context_turns, device })
    }

    /// `P(good continuation)` per pair, in order, one at a time (a pair's
    /// score does not depend on the others scored with it). A model with the pretrained
    /// text head needs the sentence vectors of every context and response (and, with the
    /// knowledge channel, of each pair's knowledge), from the encoder it was trained with.
    ///
    /// # Errors
    /// [`Error::EncoderMismatch`], [`Error::MissingVector`], or an unreadable model output.
    pub fn score(&self, pairs: &[TrainingPair], vectors: Option<&dyn SentenceVectors>) -> Result<Vec<f64>> {
        self.score_with(pairs, vectors, Graphs::Use)
    }

    /// As [`Scorer::score`], with every graph withheld under [`Graphs::Withhold`] (what the
    /// model gives the same items without AMR).
    ///
    /// # Errors
    /// As [`Scorer::score`].
    pub fn score_with(&self, pairs: &[TrainingPair], vectors: Option<&dyn SentenceVectors>, graphs: Graphs) -> Result<Vec<f64>> {
        let examples = featurize(&self.featurizer, pairs, vectors)?;
        Predictor { model: &self.model, featurizer: &self.featurizer, mode: self.mode, device: &self.device, batch: SCORE_BATCH }.predict(&examples, vectors, graphs)
    }

    /// The device it scores on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Whether the checkpoint in `dir` reads the vectors of encoder `id` of width `dim` (or no
    /// encoder at all), without loading it: only its `featurizer.json` is read. What choosing
    /// among shipped checkpoints asks of each.
    ///
    /// # Errors
    /// A missing or unreadable `featurizer.json`.
    pub fn fits_encoder(dir: &Path, id: &str, dim: usize) -> Result<bool> {
        let featurizer: Featurizer = read_json(&dir.join("featurizer.json"))?;
        Ok(featurizer.check_encoder(id, dim).is_ok())
    }

    /// The featuriser (vocabularies, the encoder the model expects).
    pub fn featurizer(&self) -> &Featurizer {
        &self.featurizer
    }

    /// The mode the model was trained in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// How many context turns (the last ones) the model was trained to read.
    pub fn context_turns(&self) -> usize {
        self.context_turns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_by_hand() {
        assert_eq!(roc_auc(&[0.1, 0.4, 0.35, 0.8], &[0, 0, 1, 1]), Ok(0.75));
        assert_eq!(roc_auc(&[0.5, 0.5], &[0, 1]), Ok(0.5));
        assert_eq!(roc_auc(&[0.5], &[1]), Err(AucError::OneClass { positives: 1, negatives: 0 }));
        assert_eq!(roc_auc(&[0.5, 0.1], &[1]), Err(AucError::LengthMismatch { scores: 2, labels: 1 }));
        assert!(matches!(check_dev_labels(&[1, 1, 1]), Err(Error::DevSet(AucError::OneClass { positives: 3, negatives: 0 }))));
        assert!(check_dev_labels(&[1, 0]).is_ok());
    }

    #[test]
    fn accuracy_by_hand() {
        assert_eq!(accuracy(&[0.1, 0.5, 0.7, 0.2], &[0, 1, 0, 1]), Some(0.5));
        assert_eq!(accuracy(&[], &[]), None);
    }
}
