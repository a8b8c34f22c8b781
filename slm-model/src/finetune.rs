//! Fine-tuning the text encoder, as the paper's SLM does: a pretrained encoder (MiniLM, MPNet)
//! reads a context and a response as one input (`[CLS] context [SEP] response [SEP]` for BERT,
//! `<s> context </s></s> response </s>` for MPNet: the tokenizer's own pair template), a linear
//! head on the mean of its last states gives the logit of "a good continuation", and the top
//! [`FineTuneConfig::trainable_layers`] layers (every layer and the embeddings: full
//! fine-tuning) are trained with the head on positives against negatives, binary
//! cross-entropy, Adam.
//!
//! The layers below the trained ones run without autodiff (their parameters require no
//! gradient), so a partial fine-tune pays the backward pass of its top layers only.
//!
//! A training run goes in **rounds** of [`FineTuneConfig::pairs_per_round`] pairs (a pass over
//! the shuffled data cut into pieces): each round ends with the dev AUC and a checkpoint, as an
//! epoch of [`crate::train`] does, so a run stopped at any point resumes from its last round and
//! loses at most one. Each round logs its pairs per second, from which a run is sized.

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::grad_clipping::GradientClippingConfig;
use burn::nn::{Initializer, Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::TensorData;
use dialeval_datasets::pairs::TrainingPair;
use serde::{Deserialize, Serialize};
use tokenizers::{Tokenizer, TruncationDirection};

use crate::bert::{Bert, BertConfig, PretrainedEncoder, window_prefix};
use crate::compute::Compute;
use crate::error::{Error, Result};
use crate::runs::{LoopState, append_log, load_module, open_run, read_json};
use burn::module::Param;
use dialeval_common::SentenceEmbedder;
use dialeval_common::roc_auc;

/// Settings of a fine-tuning run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FineTuneConfig {
    /// How many of the encoder's top layers are trained (at least one); as many as it has, or
    /// more: every layer and the embeddings (full fine-tuning).
    pub trainable_layers: usize,
    /// Context turns read, the last ones.
    pub context_turns: usize,
    /// Word pieces kept of the context: its last ones.
    pub context_tokens: usize,
    /// Word pieces kept of the response: its first ones.
    pub response_tokens: usize,
    /// Pairs per step.
    pub batch_size: usize,
    /// Adam's learning rate.
    pub lr: f64,
    /// Decay of the rate after a round without a better dev AUC.
    pub lr_decay: f64,
    /// Pairs per round (a round ends with the dev AUC and a checkpoint).
    pub pairs_per_round: usize,
    /// Whether a round's pairs are grouped by length into batches (the batches then shuffled):
    /// a batch is padded to its longest pair, so mixed lengths pay for padding. Runs from
    /// before it was an option read `false`.
    #[serde(default)]
    pub length_buckets: bool,
    /// Whether the logit adds `w · [cos(l, r); cos(m, r)]`: the zero-shot cosines of the
    /// response with the last turn and with the mean of the last two, from the pretrained
    /// encoder's sentence vectors (`w` learned from 2.0, as the SLM's turn channel): training
    /// starts from what the encoder knows and learns a residual on it. Runs from before it was
    /// an option read `false`.
    #[serde(default)]
    pub cosine_residual: bool,
    /// The most rounds a run takes.
    pub rounds: usize,
    /// Rounds without a better dev AUC before the run stops.
    pub patience: usize,
    /// Seeds the order of the pairs.
    pub seed: u64,
    /// Where the model runs (not part of what a resumed run must match).
    #[serde(default)]
    pub compute: Compute,
}

impl Default for FineTuneConfig {
    fn default() -> Self {
        Self {
            trainable_layers: 2,
            context_turns: 2,
            context_tokens: 96,
            response_tokens: 48,
            batch_size: 16,
            lr: 3e-5,
            lr_decay: 0.5,
            pairs_per_round: 4096,
            length_buckets: true,
            cosine_residual: true,
            rounds: 40,
            patience: 4,
            seed: 0,
            compute: Compute::Cpu,
        }
    }
}

/// One round of [`fine_tune`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundLog {
    /// 1-based round.
    pub round: usize,
    /// Passes over the training pairs so far (fractional).
    pub passes: f64,
    /// Mean training loss of the round.
    pub train_loss: f64,
    /// Dev ROC AUC after the round.
    pub dev_auc: f64,
    /// Learning rate used.
    pub lr: f64,
    /// Wall time of the round's training steps (the dev scoring not included).
    pub seconds: f64,
    /// Training pairs per second of the round.
    pub pairs_per_second: f64,
}

/// What [`fine_tune`] saves beside the weights: the settings and the encoder they apply to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct FineTuneMeta {
    config: FineTuneConfig,
    /// [`crate::bert::PretrainedEncoder::fingerprint`]-style digest of the encoder's files.
    encoder_id: String,
    encoder: BertConfig,
}

impl crate::runs::RunMeta for FineTuneMeta {
    const FILE: &'static str = "finetune.json";
    const DIFFERS: &'static str = "other settings or another encoder";

    /// More rounds or patience, or another device, may be given to a resumed run.
    fn comparable(&self) -> Self {
        Self { config: FineTuneConfig { rounds: 0, patience: 0, compute: Compute::Cpu, ..self.config.clone() }, ..self.clone() }
    }
}

/// Context–response inputs in the encoder's pair template, padded into a batch.
#[derive(Debug, Clone)]
pub struct PairBatch {
    tokens: Tensor<2, Int>,
    types: Tensor<2, Int>,
    /// `[batch, seq]`, true at padding.
    pad: Tensor<2, Bool>,
    /// `[batch, 2]`: the zero-shot cosines, for a model with the cosine residual.
    cosines: Option<Tensor<2>>,
}

/// The tokenizer side: one pair of texts into the encoder's pair template.
#[derive(Clone)]
pub struct PairTokenizer {
    tokenizer: Tokenizer,
    context_turns: usize,
    context_tokens: usize,
    response_tokens: usize,
}

impl std::fmt::Debug for PairTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairTokenizer").field("context_tokens", &self.context_tokens).field("response_tokens", &self.response_tokens).finish_non_exhaustive()
    }
}

impl PairTokenizer {
    /// `dir/tokenizer.json`, cutting pairs as `config` says.
    ///
    /// # Errors
    /// A missing or unreadable tokenizer.
    pub fn load(dir: &Path, config: &FineTuneConfig) -> Result<Self> {
        let path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&path).map_err(|e| Error::Format(format!("{}: {e}", path.display())))?;
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| Error::Format(format!("{}: {e}", path.display())))?;
        Ok(Self { tokenizer, context_turns: config.context_turns, context_tokens: config.context_tokens, response_tokens: config.response_tokens })
    }

    /// Token ids and type ids of `pair`: the last context turns (their last word pieces) and the
    /// response (its first), in the tokenizer's pair template.
    ///
    /// # Errors
    /// [`Error::Format`] when the tokenizer fails.
    pub fn encode(&self, pair: &TrainingPair) -> Result<(Vec<u32>, Vec<u32>)> {
        let turns = &pair.context[pair.context.len().saturating_sub(self.context_turns)..];
        let context = turns.join(" ");
        // Only the tail of a long context and the head of a long response can be kept: the
        // tokenizer reads no more text than that needs.
        let tail_start = context.char_indices().rev().nth(self.context_tokens * 16).map_or(0, |(at, _)| at);
        let fail = |e| Error::Format(format!("tokenizer: {e}"));
        let mut first = self.tokenizer.encode(&context[tail_start..], false).map_err(fail)?;
        let mut second = self.tokenizer.encode(window_prefix(&pair.response, self.response_tokens), false).map_err(fail)?;
        first.truncate(self.context_tokens, 0, TruncationDirection::Left);
        second.truncate(self.response_tokens, 0, TruncationDirection::Right);
        let joined = self.tokenizer.post_process(first, Some(second), true).map_err(fail)?;
        Ok((joined.get_ids().to_vec(), joined.get_type_ids().to_vec()))
    }
}

/// Encoded pairs padded into a batch on `device`.
fn pad(encoded: &[(Vec<u32>, Vec<u32>)], device: &Device) -> PairBatch {
    let (b, seq) = (encoded.len(), encoded.iter().map(|(ids, _)| ids.len()).max().unwrap_or(1).max(1));
    let (mut tokens, mut types, mut pad) = (vec![0_i64; b * seq], vec![0_i64; b * seq], vec![true; b * seq]);
    for (i, (ids, type_ids)) in encoded.iter().enumerate() {
        for (j, (&id, &t)) in ids.iter().zip(type_ids).enumerate() {
            tokens[i * seq + j] = i64::from(id);
            types[i * seq + j] = i64::from(t);
            pad[i * seq + j] = false;
        }
    }
    let int = |v: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(v, [b, seq]), device);
    PairBatch { tokens: int(tokens), types: int(types), pad: Tensor::from_data(TensorData::new(pad, [b, seq]), device), cosines: None }
}

/// The batches of a round: `order` cut into batches of `size` as it comes, or with
/// `length_buckets` sorted by `lengths` (stable, so ties keep the round's order), cut, and the
/// batches shuffled under `(seed, round)`. Positions into `order`.
fn round_batches(lengths: &[usize], size: usize, length_buckets: bool, seed: u64, round: usize) -> Vec<Vec<usize>> {
    let mut positions: Vec<usize> = (0..lengths.len()).collect();
    if !length_buckets {
        return positions.chunks(size).map(<[usize]>::to_vec).collect();
    }
    positions.sort_by_key(|&k| lengths[k]);
    let mut batches: Vec<Vec<usize>> = positions.chunks(size).map(<[usize]>::to_vec).collect();
    crate::runs::shuffle(&mut batches, &mut dialeval_common::SplitMix64(seed ^ 0x0B0C_4E75 ^ (round as u64).wrapping_mul(0x9E37_79B9)));
    batches
}

/// The head's output is multiplied by this: Adam moves each parameter by about the learning
/// rate per step whatever its gradient, so the head (which starts at zero) learns this many times
/// faster than the encoder's layers under one rate (about 1e-3 against 3e-5).
const HEAD_SCALE: f64 = 32.0;

/// The fine-tuned encoder and its head.
#[derive(Module, Debug)]
pub struct CrossScorer {
    encoder: Bert,
    head: Linear,
    /// The weights of the zero-shot cosines ([`FineTuneConfig::cosine_residual`]).
    residual: Option<Param<Tensor<1>>>,
}

impl CrossScorer {
    /// The logit of "a good continuation" per pair, `[batch]`.
    pub fn logits(&self, batch: &PairBatch) -> Tensor<1> {
        let states = self.encoder.forward(batch.tokens.clone(), batch.types.clone(), batch.pad.clone());
        let [b, seq, h] = states.dims();
        let keep = batch.pad.clone().bool_not().float().reshape([b, seq, 1]);
        let pooled = (states * keep.clone()).sum_dim(1) / keep.sum_dim(1);
        let logits = self.head.forward(pooled.reshape([b, h])).reshape([b]).mul_scalar(HEAD_SCALE);
        match (&self.residual, &batch.cosines) {
            (Some(w), Some(cosines)) => logits + (cosines.clone() * w.val().reshape([1, 2])).sum_dim(1).reshape([b]),
            _ => logits,
        }
    }

    /// Binary cross-entropy of `labels` (1 good, 0 negative) against the logits.
    fn loss(&self, batch: &PairBatch, labels: Tensor<1>) -> Tensor<1> {
        let z = self.logits(batch);
        // softplus(z) − y·z, written stably: max(z, 0) − y·z + ln(1 + e^{−|z|}).
        let stable = z.clone().clamp_min(0.0) - z.clone() * labels + z.abs().neg().exp().add_scalar(1.0).log();
        stable.mean()
    }
}

/// What a partial fine-tune changes, all a checkpoint of it needs beside the pretrained
/// encoder: the trained top layers and the head (`best/top`; about 7 MB a MiniLM layer in f32).
#[derive(Module, Debug)]
struct TunedTop {
    layers: Vec<crate::bert::BertLayer>,
    head: Linear,
    residual: Option<Param<Tensor<1>>>,
}

/// Saves the best model: only its trained top layers and head after a partial fine-tune
/// (`best/top`), the whole model after a full one (`best/model`); the other file goes.
fn save_tuned(dir: &Path, model: CrossScorer, trainable: usize) -> Result<()> {
    let best = dir.join("best");
    std::fs::create_dir_all(&best).map_err(|e| Error::io(&best, e))?;
    let (keep, other) = if trainable < model.encoder.layer_count() { ("top", "model") } else { ("model", "top") };
    let path = best.join(keep);
    let record = if keep == "top" { TunedTop { layers: model.encoder.top_layers(trainable), head: model.head, residual: model.residual }.into_record() } else { model.into_record() };
    record.save(&path).map_err(|e| crate::runs::record_error(&path, e))?;
    let stale = best.join(other).with_extension("bpk");
    if stale.is_file() {
        std::fs::remove_file(&stale).map_err(|e| Error::io(&stale, e))?;
    }
    Ok(())
}

/// The model saved by [`save_tuned`] in `dir` over `model` (the pretrained encoder and a head).
fn load_tuned(dir: &Path, model: CrossScorer, trainable: usize) -> Result<CrossScorer> {
    let top = dir.join("best/top");
    if !top.with_extension("bpk").is_file() {
        return load_module(model, &dir.join("best/model"));
    }
    let template = TunedTop { layers: model.encoder.top_layers(trainable), head: model.head.clone(), residual: model.residual.clone() };
    let tuned = load_module(template, &top)?;
    Ok(CrossScorer { encoder: model.encoder.with_top_layers(tuned.layers)?, head: tuned.head, residual: tuned.residual })
}

/// What [`fine_tune`] learns from: labelled pairs and the pretrained encoder's folder
/// (`config.json`, `model.safetensors`, `tokenizer.json`).
#[derive(Debug, Clone, Copy)]
pub struct FineTuneData<'a> {
    /// Training pairs (positives and negatives).
    pub train: &'a [TrainingPair],
    /// Dev pairs, scored after each round (early stopping, the best model).
    pub dev: &'a [TrainingPair],
    /// The pretrained encoder.
    pub encoder: &'a Path,
}

fn encoder_files(dir: &Path) -> [PathBuf; 3] {
    [dir.join("config.json"), dir.join("model.safetensors"), dir.join("tokenizer.json")]
}

/// The digest fine-tunes of an earlier version recorded of their encoder: its files with the
/// model's position count instead of its window. A checkpoint that carries it is accepted for
/// the same files; new fine-tunes record [`PretrainedEncoder::fingerprint`], which a run's
/// loaded encoder already holds.
fn legacy_id(dir: &Path, config: &BertConfig) -> Result<String> {
    crate::bert::fingerprint_files(&encoder_files(dir), config.max_tokens())
}

/// The pretrained encoder of `dir` under a head at zero (every pair starts at 0.5, or at the
/// zero-shot cosines' residual with `residual`), on `device`.
fn pretrained(dir: &Path, residual: bool, device: &Device) -> Result<(CrossScorer, BertConfig)> {
    for (file, path) in ["config.json", "model.safetensors", "tokenizer.json"].into_iter().zip(encoder_files(dir)) {
        if !path.is_file() {
            return Err(Error::MissingModel { dir: dir.to_owned(), file });
        }
    }
    let config = BertConfig::load(&dir.join("config.json"))?;
    let head = LinearConfig::new(config.hidden_size, 1).with_initializer(Initializer::Zeros).init(device);
    let encoder = Bert::load(&config, &dir.join("model.safetensors"), device)?;
    let residual = residual.then(|| Param::from_tensor(Tensor::full([2], crate::model::COSINE_RESIDUAL_INIT, device)));
    Ok((CrossScorer { encoder, head, residual }, config))
}

/// The order of the training pairs in `round`: pass after pass over the pairs, each pass a
/// seeded shuffle, cut into rounds of `per_round`; the same on a resumed run.
fn round_order(n: usize, per_round: usize, seed: u64, round: usize) -> Vec<usize> {
    let start = (round - 1) * per_round;
    let mut out = Vec::with_capacity(per_round);
    let mut pass = usize::MAX;
    let mut order = Vec::new();
    for global in start..start + per_round {
        if global / n != pass {
            pass = global / n;
            order = crate::runs::epoch_order(n, seed, pass + 1);
        }
        out.push(order[global % n]);
    }
    out
}

/// The zero-shot side of [`FineTuneConfig::cosine_residual`]: the pretrained encoder's sentence
/// vectors (mean-pooled, normalised), on the plain device. The encoder is frozen, so a text's
/// vector is computed once and kept (the dev pairs are scored every round).
struct ZeroShot {
    encoder: std::sync::Arc<PretrainedEncoder>,
    memo: std::sync::Mutex<std::collections::HashMap<String, Vec<f32>>>,
}

impl ZeroShot {
    fn new(encoder: std::sync::Arc<PretrainedEncoder>) -> Self {
        Self { encoder, memo: std::sync::Mutex::default() }
    }

    /// `[batch, 2]`: each pair's cosines of the response with its last turn and with the mean of
    /// its last two ([`crate::sentence_vectors::turn_features`]; zeros without a turn).
    fn cosines(&self, pairs: &[&TrainingPair], device: &Device) -> Result<Tensor<2>> {
        let mut memo = self.memo.lock().map_err(|_| Error::Format("zero-shot vectors: a thread panicked while holding them".into()))?;
        let mut missing: Vec<&str> = pairs.iter().flat_map(|p| crate::texts::turn_texts(p).into_iter().chain([p.response.as_str()])).filter(|t| !memo.contains_key(*t)).collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let vectors = self.encoder.embed_sentences(&missing).map_err(|e| Error::Format(format!("zero-shot sentence vectors: {e}")))?;
            memo.extend(missing.iter().map(|t| (*t).to_owned()).zip(vectors));
        }
        let vector = |t: &str| memo.get(t).cloned().unwrap_or_default();
        let mut out = Vec::with_capacity(pairs.len() * 2);
        for p in pairs {
            let turns: Vec<Vec<f32>> = crate::texts::turn_texts(p).into_iter().map(vector).collect();
            let features = crate::sentence_vectors::turn_features(&turns, &vector(&p.response));
            out.extend_from_slice(&features[features.len() - 2..]);
        }
        Ok(Tensor::from_data(TensorData::new(out, [pairs.len(), 2]), device))
    }
}

/// `pairs` (already encoded as `encoded`) as a batch, with their zero-shot cosines when
/// `zero_shot` is given.
fn batch_of(encoded: &[(Vec<u32>, Vec<u32>)], pairs: &[&TrainingPair], zero_shot: Option<&ZeroShot>, device: &Device) -> Result<PairBatch> {
    let mut batch = pad(encoded, device);
    if let Some(z) = zero_shot {
        batch.cosines = Some(z.cosines(pairs, device)?);
    }
    Ok(batch)
}

/// Scores `pairs` with `model` (no autodiff), 32 at a time: `P(good continuation)`.
/// Pairs per forward pass when training measures its dev set (a pair's score may differ in
/// the last bits with its batch mates: padding, kernel shapes).
const DEV_BATCH: usize = 32;

/// Pairs per forward pass when a [`FineTunedScorer`] scores: one, so that a pair's score never
/// depends on the others scored with it, nor on how a corpus was cut into chunks or shards.
const SCORE_BATCH: usize = 1;

fn score(model: &CrossScorer, tokenizer: &PairTokenizer, zero_shot: Option<&ZeroShot>, pairs: &[TrainingPair], (device, batch): (&Device, usize)) -> Result<Vec<f64>> {
    let mut out = Vec::with_capacity(pairs.len());
    for chunk in pairs.chunks(batch.max(1)) {
        let refs: Vec<&TrainingPair> = chunk.iter().collect();
        let encoded: Vec<(Vec<u32>, Vec<u32>)> = refs.iter().map(|p| tokenizer.encode(p)).collect::<Result<_>>()?;
        let logits = model.logits(&batch_of(&encoded, &refs, zero_shot, device)?).into_data().convert::<f32>().try_into_vec::<f32>().map_err(|e| Error::Format(format!("scores: {e:?}")))?;
        out.extend(logits.into_iter().map(|l| 1.0 / (1.0 + (-f64::from(l)).exp())));
    }
    Ok(out)
}

/// Fine-tunes (or resumes fine-tuning) into `dir` on `data`; the best model by dev AUC is kept in
/// `dir/best` (its trained top layers and head only, after a partial fine-tune), the settings in `dir/finetune.json`; `progress(round, step, steps)` after each step.
///
/// # Errors
/// Empty data or invalid settings ([`Error::Config`]), a checkpoint of other settings or of
/// another encoder, a missing encoder, files that cannot be written or read, a dev set of one
/// class.
pub fn fine_tune(data: &FineTuneData, config: &FineTuneConfig, dir: &Path, progress: &dyn Fn(usize, usize, usize)) -> Result<Vec<RoundLog>> {
    if data.train.is_empty() || data.dev.is_empty() || config.batch_size == 0 || config.pairs_per_round == 0 || config.trainable_layers == 0 {
        return Err(Error::Config("need training and dev pairs, and batch_size, pairs_per_round and trainable_layers above 0".into()));
    }
    let device = config.compute.device()?.autodiff();
    let plain = device.clone().without_autodiff();
    let (model, encoder) = pretrained(data.encoder, config.cosine_residual, &device)?;
    let mut encoder_id = crate::bert::fingerprint_of(data.encoder)?;
    // A run started by an earlier version recorded the legacy digest: it resumes under it.
    if let Ok(old) = read_json::<FineTuneMeta>(&dir.join("finetune.json"))
        && old.encoder_id != encoder_id
        && old.encoder_id == legacy_id(data.encoder, &encoder)?
    {
        encoder_id = old.encoder_id;
    }
    // The pair template adds at most four special tokens (MPNet's `<s> … </s></s> … </s>`).
    if config.context_tokens + config.response_tokens + 4 > encoder.max_tokens() {
        return Err(Error::Config(format!("{} context and {} response word pieces do not fit the encoder's {} positions", config.context_tokens, config.response_tokens, encoder.max_tokens())));
    }
    let meta = FineTuneMeta { config: config.clone(), encoder_id, encoder };
    let (checkpoint, resume) = open_run(dir, &meta)?;
    let tokenizer = PairTokenizer::load(data.encoder, config)?;
    let zero_shot = if config.cosine_residual { Some(ZeroShot::new(std::sync::Arc::new(PretrainedEncoder::load(data.encoder, &plain)?))) } else { None };
    let mut model = CrossScorer { encoder: model.encoder.with_trainable_top(config.trainable_layers), ..model };
    let mut optim = AdamConfig::new().with_grad_clipping(Some(GradientClippingConfig::Norm(1.0))).init();
    let mut state = LoopState::new(config.lr);
    if resume {
        (model, optim, state) = checkpoint.load(model, optim)?;
        // A loaded record does not carry which parameters are frozen.
        model = CrossScorer { encoder: model.encoder.with_trainable_top(config.trainable_layers), ..model };
    }
    let dev_labels: Vec<u8> = data.dev.iter().map(TrainingPair::label).collect();
    let mut logs = Vec::new();
    let log_path = dir.join("log.jsonl");
    while let Some(round) = state.next_epoch(config.rounds, config.patience) {
        let started = Instant::now();
        let order = round_order(data.train.len(), config.pairs_per_round, config.seed, round);
        let encoded: Vec<(Vec<u32>, Vec<u32>)> = order.iter().map(|&i| tokenizer.encode(&data.train[i])).collect::<Result<_>>()?;
        let lengths: Vec<usize> = encoded.iter().map(|(ids, _)| ids.len()).collect();
        let batches = round_batches(&lengths, config.batch_size, config.length_buckets, config.seed, round);
        let steps = batches.len();
        let mut total = 0.0;
        for (step, batch) in batches.iter().enumerate() {
            let inputs: Vec<(Vec<u32>, Vec<u32>)> = batch.iter().map(|&k| encoded[k].clone()).collect();
            let pairs: Vec<&TrainingPair> = batch.iter().map(|&k| &data.train[order[k]]).collect();
            let labels: Vec<f32> = pairs.iter().map(|p| f32::from(p.label())).collect();
            let n = labels.len();
            let loss = model.loss(&batch_of(&inputs, &pairs, zero_shot.as_ref(), &device)?, Tensor::from_data(TensorData::new(labels, [n]), &device));
            total += f64::from(loss.clone().into_scalar::<f32>());
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(state.lr, model, grads);
            progress(round, step + 1, steps);
        }
        let seconds = started.elapsed().as_secs_f64();
        let valid = model.valid();
        let scores = score(&valid, &tokenizer, zero_shot.as_ref(), data.dev, (&plain, DEV_BATCH))?;
        let auc = roc_auc(&scores, &dev_labels).map_err(Error::DevSet)?;
        let log = RoundLog {
            round,
            passes: (round * config.pairs_per_round) as f64 / data.train.len() as f64,
            train_loss: total / steps as f64,
            dev_auc: auc,
            lr: state.lr,
            seconds,
            pairs_per_second: order.len() as f64 / seconds,
        };
        if state.finish_epoch(round, auc, config.lr_decay) {
            save_tuned(dir, valid, config.trainable_layers)?;
        }
        checkpoint.save(&model, &optim, &state)?;
        append_log(&log_path, &log)?;
        logs.push(log);
    }
    Ok(logs)
}

/// A fine-tuned model loaded for scoring.
pub struct FineTunedScorer {
    model: CrossScorer,
    tokenizer: PairTokenizer,
    zero_shot: Option<ZeroShot>,
    device: Device,
    encoder_id: String,
    /// The settings it was trained with.
    pub config: FineTuneConfig,
}

impl std::fmt::Debug for FineTunedScorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FineTunedScorer").field("config", &self.config).finish_non_exhaustive()
    }
}

impl FineTunedScorer {
    /// Loads `dir/best` (written by [`fine_tune`]) over `encoder`, the run's loaded encoder,
    /// which must be the one it was trained from: its weights are read once more for the tuned
    /// copy, its fingerprint is not computed again, and the zero-shot cosines read it as it is.
    ///
    /// # Errors
    /// Missing or unreadable files; [`Error::EncoderMismatch`] for another encoder;
    /// [`Error::RecordMismatch`] when the saved parameters do not fit.
    pub fn load(dir: &Path, encoder: &std::sync::Arc<PretrainedEncoder>, device: Device) -> Result<Self> {
        crate::bundle::verify(dir)?;
        let meta: FineTuneMeta = read_json(&dir.join("finetune.json"))?;
        let (model, config) = pretrained(encoder.dir(), meta.config.cosine_residual, &device)?;
        if meta.encoder_id != encoder.fingerprint() && meta.encoder_id != legacy_id(encoder.dir(), &config)? {
            return Err(Error::EncoderMismatch { expected: meta.encoder_id, found: encoder.fingerprint().to_owned() });
        }
        let model = load_tuned(dir, model, meta.config.trainable_layers)?;
        let tokenizer = PairTokenizer::load(encoder.dir(), &meta.config)?;
        let zero_shot = meta.config.cosine_residual.then(|| ZeroShot::new(std::sync::Arc::clone(encoder)));
        Ok(Self { model, tokenizer, zero_shot, device, config: meta.config, encoder_id: meta.encoder_id })
    }

    /// The fingerprint of the pretrained encoder it was fine-tuned from (and reads).
    pub fn encoder_id(&self) -> &str {
        &self.encoder_id
    }

    /// `P(good continuation)` per pair, in order, one at a time (a pair's score does not depend
    /// on the others scored with it).
    ///
    /// # Errors
    /// A tokenizer failure or an unreadable model output.
    pub fn score(&self, pairs: &[TrainingPair]) -> Result<Vec<f64>> {
        score(&self.model, &self.tokenizer, self.zero_shot.as_ref(), pairs, (&self.device, SCORE_BATCH))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_buckets_group_similar_lengths_and_keep_every_pair_once() {
        let lengths = [9, 3, 7, 3, 12, 5, 8, 1, 4, 6];
        let plain = round_batches(&lengths, 3, false, 1, 1);
        assert_eq!(plain, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7, 8], vec![9]]);
        let buckets = round_batches(&lengths, 3, true, 1, 1);
        let mut seen: Vec<usize> = buckets.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        // Sorted by length, cut, shuffled: the batches are [1 3 3], [4 5 6], [7 8 9], [12].
        let mut by_length: Vec<Vec<usize>> = buckets.iter().map(|b| b.iter().map(|&k| lengths[k]).collect()).collect();
        by_length.sort();
        assert_eq!(by_length, vec![vec![1, 3, 3], vec![4, 5, 6], vec![7, 8, 9], vec![12]]);
        let padding = |batches: &[Vec<usize>]| batches.iter().map(|b| b.iter().map(|&k| lengths[k]).max().unwrap_or(0) * b.len()).sum::<usize>();
        assert!(padding(&buckets) < padding(&plain), "{} against {}", padding(&buckets), padding(&plain));
        assert_eq!(round_batches(&lengths, 3, true, 1, 1), buckets, "the same round, the same batches");
    }
}
