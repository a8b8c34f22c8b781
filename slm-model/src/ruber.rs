//! BERT-RUBER's unreferenced metric (`../shared/papers/bert-ruber-contextualized-embeddings.txt`)
//! over its whole design space:
//!
//! - **embeddings**: frozen contextual token states of a [`PretrainedEncoder`] (BERT/MiniLM), or
//!   a trainable static word-embedding table over the same word pieces (the word2vec row);
//! - **representation**: max or mean pooling over the tokens, or a Bi-GRU whose two final states
//!   (each read at the sentence's own last token, so padding never enters) are concatenated;
//! - **objective**: cross-entropy of a two-way classifier, or RUBER's ranking loss
//!   `max(0, Δ − s(q, r⁺) + s(q, r⁻))`, the score being `σ(s)`. Deviation: the margin is applied
//!   to the head's output before the sigmoid; on sigmoid scores the heads saturated within an
//!   epoch and stopped learning (dev AUC ≈ 0.5 for Bi-GRU in `tests/ruber.rs`);
//!
//! then RUBER's head: `[q; qᵀMr; r]` through an MLP with hidden sizes 256, 512, 128 and tanh.
//! Training uses (query, positive, negative) triples from negative sampling, Adam, decay on
//! plateau, early stopping on dev ROC AUC, and a checkpoint every epoch from which it resumes
//! exactly (as [`crate::train`]). Frozen token states come from an [`EmbeddingCache`]
//! ([`crate::vectors`], the cache the SLM's pretrained text side reads too), so the encoder runs
//! once per distinct sentence, across runs too.
//!
//! A resumed run reaches the same numbers as an uninterrupted one on CPU, as long as nothing
//! else in the process seeds or draws from burn's device RNG meanwhile (the seed is
//! process-wide).
//!
//! The referenced score (cosine of pooled embeddings) and the hybrids live in the metrics crate
//! (`referenced_score`, `min_max_normalize`, `hybrid`) and take the encoder through its traits.

use std::path::Path;
use std::time::Instant;

use burn::grad_clipping::GradientClippingConfig;
use burn::module::Param;
use burn::nn::gru::{Gru, GruConfig};
use burn::nn::loss::CrossEntropyLoss;
use burn::nn::{Embedding, EmbeddingConfig, Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::TensorData;
use serde::{Deserialize, Serialize};

use crate::compute::Compute;
use crate::error::{Error, Result};
use crate::train::{LoopState, accuracy, append_log, begin_epoch, load_module, open_run, read_json, roc_auc, save_best};
use crate::vectors::{CachedText, EmbeddingCache};

/// Where token vectors come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Embeddings {
    /// Frozen contextual states of the pretrained encoder.
    Bert,
    /// A trainable static table over the encoder's word pieces.
    Static,
}

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Representation {
    /// Element-wise maximum.
    MaxPool,
    /// Mean.
    MeanPool,
    /// Final states of a bidirectional GRU.
    BiGru,
}

/// The training objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// Two-way classifier with cross-entropy; the score is `P(related)`.
    CrossEntropy,
    /// RUBER's margin ranking loss (on the head's output; the score is its sigmoid).
    Ranking,
}

/// Settings of the unreferenced model and its training.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuberConfig {
    /// Token vectors.
    pub embeddings: Embeddings,
    /// Sentence encoder.
    pub representation: Representation,
    /// Loss.
    pub objective: Objective,
    /// Width of the static table.
    pub static_dim: usize,
    /// Hidden size of each GRU direction.
    pub gru_hidden: usize,
    /// Margin Δ of the ranking loss.
    pub margin: f64,
    /// Tokens kept per sentence (from the start; a query's may be its last ones instead,
    /// `query_last_tokens`).
    pub max_tokens: usize,
    /// Context turns that form the query (the last ones; RUBER uses 1).
    pub query_turns: usize,
    /// Read the query's last this many token states (the turns nearest the response) instead
    /// of its first `max_tokens`: a query of several turns keeps what was said last. `None` in
    /// models trained before it existed.
    #[serde(default)]
    pub query_last_tokens: Option<usize>,
    /// A knowledge channel: the pooled knowledge (persona, facts, a Wikipedia snippet) of a
    /// triple, matched against the response (a bilinear score and their elementwise product
    /// enter the MLP); a triple without knowledge reads a learned "no knowledge" vector.
    /// `false` in models trained before it existed.
    #[serde(default)]
    pub knowledge: bool,
    /// Token states read from a knowledge text (its first ones).
    #[serde(default = "default_knowledge_tokens")]
    pub knowledge_tokens: usize,
    /// Probability that a training triple's knowledge is withheld for a step (the model reads
    /// its "no knowledge" input instead), so that the query–response path keeps learning on
    /// grounded data and items without knowledge are scored as well as before.
    #[serde(default)]
    pub knowledge_dropout: f64,
    /// Epochs at most.
    pub epochs: usize,
    /// Triples per step.
    pub batch_size: usize,
    /// Adam learning rate.
    pub lr: f64,
    /// Factor applied to the rate after an epoch without dev improvement.
    pub lr_decay: f64,
    /// Epochs without improvement before stopping.
    pub patience: usize,
    /// Seed of initialisation and shuffling.
    pub seed: u64,
    /// Where training runs. Not saved with the run: a checkpoint resumes on any device
    /// ([`crate::compute`] states the tolerance).
    #[serde(skip)]
    pub compute: Compute,
}

impl Default for RuberConfig {
    fn default() -> Self {
        Self {
            embeddings: Embeddings::Bert,
            representation: Representation::MaxPool,
            objective: Objective::CrossEntropy,
            static_dim: 128,
            gru_hidden: 128,
            margin: 0.5,
            max_tokens: 64,
            query_turns: 1,
            query_last_tokens: None,
            knowledge: false,
            knowledge_tokens: default_knowledge_tokens(),
            knowledge_dropout: 0.0,
            epochs: 10,
            batch_size: 64,
            lr: 1e-3,
            lr_decay: 0.5,
            patience: 3,
            seed: 0,
            compute: Compute::Cpu,
        }
    }
}

fn default_knowledge_tokens() -> usize {
    128
}

impl RuberConfig {
    /// The query text of a context: its last `query_turns` turns joined by spaces.
    pub fn query(&self, context: &[impl AsRef<str>]) -> String {
        let from = context.len().saturating_sub(self.query_turns.max(1));
        context[from..].iter().map(AsRef::as_ref).collect::<Vec<&str>>().join(" ")
    }

    /// The token states a query is read from.
    pub fn query_span(&self) -> Span {
        self.query_last_tokens.map_or(Span::First(self.max_tokens), Span::Last)
    }

    /// The token states a response is read from.
    pub fn response_span(&self) -> Span {
        Span::First(self.max_tokens)
    }

    /// The token states a knowledge text is read from.
    pub fn knowledge_span(&self) -> Span {
        Span::First(self.knowledge_tokens)
    }
}

/// Which of a cached sentence's token states a [`Collator`] keeps (at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// The first this many (`[CLS]` …).
    First(usize),
    /// The last this many (… `[SEP]`).
    Last(usize),
}

impl Span {
    /// The kept range of a sentence of `len` tokens.
    fn range(self, len: usize) -> std::ops::Range<usize> {
        match self {
            Self::First(n) => 0..len.min(n.max(1)),
            Self::Last(n) => len.saturating_sub(n.max(1))..len,
        }
    }
}

/// A query with a good and a sampled bad response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Triple {
    /// The query (context).
    pub query: String,
    /// A relevant response.
    pub positive: String,
    /// A negative response.
    pub negative: String,
    /// What the response should be grounded in, when the source has it (read by a model with
    /// the knowledge channel, [`RuberConfig::knowledge`]).
    #[serde(default)]
    pub knowledge: Option<String>,
}

/// A padded batch of sentences, built by a [`Collator`] for one [`Embeddings`] kind.
#[derive(Debug, Clone)]
pub struct Sentences {
    /// Frozen states `[batch, seq, dim]` (BERT embeddings).
    states: Option<Tensor<3>>,
    /// Word-piece ids `[batch, seq]` (static embeddings).
    ids: Option<Tensor<2, Int>>,
    /// `[batch, seq]`, true at padding.
    pad: Tensor<2, Bool>,
    /// Tokens per sentence.
    lengths: Vec<usize>,
    /// `[batch, 1]`, 1 where the sentence was given and 0 where it is absent (a triple without
    /// knowledge); `None` when every one was given.
    present: Option<Tensor<2>>,
}

/// The knowledge channel of [`Unreferenced`].
#[derive(Module, Debug)]
pub struct KnowledgeBranch {
    /// Bilinear match of knowledge and response.
    bilinear: Param<Tensor<2>>,
    /// The learned "no knowledge" vector.
    none: Param<Tensor<1>>,
}

/// The unreferenced model.
#[derive(Module, Debug)]
pub struct Unreferenced {
    words: Option<Embedding>,
    forward_gru: Option<Gru>,
    backward_gru: Option<Gru>,
    bilinear: Param<Tensor<2>>,
    knowledge: Option<KnowledgeBranch>,
    hidden1: Linear,
    hidden2: Linear,
    hidden3: Linear,
    output: Linear,
    #[module(skip)]
    representation: Representation,
    #[module(skip)]
    objective: Objective,
}

impl RuberConfig {
    /// Builds the model for token vectors of width `encoder_dim` and a vocabulary of `vocab`.
    pub fn init(&self, encoder_dim: usize, vocab: usize, device: &Device) -> Unreferenced {
        let token_dim = match self.embeddings {
            Embeddings::Bert => encoder_dim,
            Embeddings::Static => self.static_dim,
        };
        let gru = || GruConfig::new(token_dim, self.gru_hidden, true).init(device);
        let bigru = self.representation == Representation::BiGru;
        let d = if bigru { 2 * self.gru_hidden } else { token_dim };
        let scale = (1.0 / d as f64).sqrt();
        Unreferenced {
            words: (self.embeddings == Embeddings::Static).then(|| EmbeddingConfig::new(vocab, self.static_dim).init(device)),
            forward_gru: bigru.then(gru),
            backward_gru: bigru.then(gru),
            bilinear: Param::from_tensor(Tensor::random([d, d], burn::tensor::Distribution::Uniform(-scale, scale), device)),
            knowledge: self.knowledge.then(|| KnowledgeBranch {
                bilinear: Param::from_tensor(Tensor::random([d, d], burn::tensor::Distribution::Uniform(-scale, scale), device)),
                none: Param::from_tensor(Tensor::random([d], burn::tensor::Distribution::Uniform(-scale, scale), device)),
            }),
            hidden1: LinearConfig::new(2 * d + 1 + if self.knowledge { d + 1 } else { 0 }, 256).init(device),
            hidden2: LinearConfig::new(256, 512).init(device),
            hidden3: LinearConfig::new(512, 128).init(device),
            output: LinearConfig::new(128, if self.objective == Objective::CrossEntropy { 2 } else { 1 }).init(device),
            representation: self.representation,
            objective: self.objective,
        }
    }
}

impl Unreferenced {
    /// Sentence vectors `[batch, d]`.
    pub fn encode(&self, s: &Sentences) -> Tensor<2> {
        let x = match (&self.words, &s.states, &s.ids) {
            (Some(words), _, Some(ids)) => words.forward(ids.clone()),
            (_, Some(states), _) => states.clone(),
            _ => unreachable_input(&s.pad),
        };
        let [batch, seq, d] = x.dims();
        match (self.representation, &self.forward_gru, &self.backward_gru) {
            (Representation::BiGru, Some(fw), Some(bw)) => {
                let device = x.device();
                // The backward GRU reads each sentence reversed within its own length, so both
                // directions end at position len − 1 and padding comes after.
                let mut reverse = Vec::with_capacity(batch * seq);
                let mut last = Vec::with_capacity(batch);
                for (b, &len) in s.lengths.iter().enumerate() {
                    let len = len.clamp(1, seq);
                    reverse.extend((0..seq).map(|j| (b * seq + if j < len { len - 1 - j } else { j }) as i64));
                    last.push((b * seq + len - 1) as i64);
                }
                let index = |v: Vec<i64>| Tensor::<1, Int>::from_data(TensorData::new(v.clone(), [v.len()]), &device);
                let reversed = x.clone().reshape([batch * seq, d]).select(0, index(reverse)).reshape([batch, seq, d]);
                let final_state = |out: Tensor<3>| {
                    let [_, _, h] = out.dims();
                    out.reshape([batch * seq, h]).select(0, index(last.clone()))
                };
                Tensor::cat(vec![final_state(fw.forward(x, None)), final_state(bw.forward(reversed, None))], 1)
            }
            (Representation::MeanPool, ..) => {
                let keep = s.pad.clone().bool_not().float().reshape([batch, seq, 1]);
                (x * keep.clone()).sum_dim(1).reshape([batch, d]) / keep.sum_dim(1).reshape([batch, 1]).clamp_min(1.0)
            }
            _ => x.mask_fill(s.pad.clone().reshape([batch, seq, 1]).repeat_dim(2, d), -1.0e9).max_dim(1).reshape([batch, d]),
        }
    }

    /// Raw outputs `[batch, 2]` (cross-entropy) or `[batch, 1]` (ranking). `knowledge` is read
    /// by a model with the knowledge channel (absent, or absent for a triple: the learned "no
    /// knowledge" vector) and ignored by one without.
    pub fn forward(&self, query: &Sentences, response: &Sentences, knowledge: Option<&Sentences>) -> Tensor<2> {
        let (q, r) = (self.encode(query), self.encode(response));
        let [batch, d] = q.dims();
        let quadratic = (q.clone().matmul(self.bilinear.val()) * r.clone()).sum_dim(1).reshape([batch, 1]);
        let mut parts = vec![q, quadratic, r.clone()];
        if let Some(branch) = &self.knowledge {
            let none = branch.none.val().reshape([1, d]);
            let k = match knowledge {
                Some(ks) => {
                    let encoded = self.encode(ks);
                    match &ks.present {
                        // Where a triple has no knowledge its (empty) encoding is replaced.
                        Some(present) => encoded * present.clone() + none * present.clone().neg().add_scalar(1.0),
                        None => encoded,
                    }
                }
                None => none.repeat_dim(0, batch),
            };
            let matched = (k.clone().matmul(branch.bilinear.val()) * r.clone()).sum_dim(1).reshape([batch, 1]);
            parts.push(matched);
            parts.push(k * r);
        }
        let h = Tensor::cat(parts, 1);
        let h = self.hidden3.forward(self.hidden2.forward(self.hidden1.forward(h).tanh()).tanh()).tanh();
        self.output.forward(h)
    }

    /// Relatedness logit per pair, `[batch]`: `l₁ − l₀` of the classifier (so that
    /// `σ(logit) = P(related)`) or the ranking head's output (its score is `σ(logit)`).
    /// Scores are computed from logits in f64 by [`score_pairs`], so saturated sigmoids do not
    /// turn into ties.
    pub fn logit(&self, query: &Sentences, response: &Sentences, knowledge: Option<&Sentences>) -> Tensor<1> {
        let out = self.forward(query, response, knowledge);
        let [batch, _] = out.dims();
        match self.objective {
            Objective::CrossEntropy => (out.clone().slice([0..batch, 1..2]) - out.slice([0..batch, 0..1])).reshape([batch]),
            Objective::Ranking => out.reshape([batch]),
        }
    }

    /// The loss of a batch of triples.
    pub fn loss(&self, batch: &TripleBatch, margin: f64) -> Tensor<1> {
        let TripleBatch { query, positive, negative, knowledge } = batch;
        let knowledge = knowledge.as_ref();
        match self.objective {
            Objective::CrossEntropy => {
                let logits = Tensor::cat(vec![self.forward(query, positive, knowledge), self.forward(query, negative, knowledge)], 0);
                let n = query.lengths.len();
                let device = logits.device();
                let labels = Tensor::<1, Int>::cat(vec![Tensor::ones([n], &device), Tensor::zeros([n], &device)], 0);
                CrossEntropyLoss::new(None, &device).forward(logits, labels)
            }
            Objective::Ranking => (self.logit(query, negative, knowledge) - self.logit(query, positive, knowledge)).add_scalar(margin).clamp_min(0.0).mean(),
        }
    }
}

/// A batch of (query, positive, negative) triples collated for [`Unreferenced::loss`];
/// `knowledge` as in [`Unreferenced::forward`].
#[derive(Debug, Clone)]
pub struct TripleBatch {
    /// The queries (contexts).
    pub query: Sentences,
    /// Their true responses.
    pub positive: Sentences,
    /// The sampled negative responses.
    pub negative: Sentences,
    /// Each triple's knowledge, for a model with the knowledge channel.
    pub knowledge: Option<Sentences>,
}

/// Only reached for a batch collated for static embeddings but fed to a model without a table,
/// which the public functions never do (they collate with the model's own settings).
fn unreachable_input(pad: &Tensor<2, Bool>) -> Tensor<3> {
    let [b, s] = pad.dims();
    Tensor::zeros([b, s, 1], &pad.device())
}

/// Turns texts into padded batches of their cached token states, as a model with `config`
/// reads them: queries, responses and knowledge each cut to their own span.
#[derive(Debug, Clone, Copy)]
pub struct Collator<'a> {
    cache: &'a EmbeddingCache,
    config: &'a RuberConfig,
    device: &'a Device,
}

impl<'a> Collator<'a> {
    /// Batches of `cache`'s states for a model with `config`, on `device`.
    pub fn new(cache: &'a EmbeddingCache, config: &'a RuberConfig, device: &'a Device) -> Self {
        Self { cache, config, device }
    }

    /// Queries, each cut to [`RuberConfig::query_span`].
    ///
    /// # Errors
    /// [`Error::Format`] naming the first text that is not cached.
    pub fn queries(&self, texts: &[&str]) -> Result<Sentences> {
        self.sentences(texts, self.config.query_span())
    }

    /// Responses, each cut to [`RuberConfig::response_span`].
    ///
    /// # Errors
    /// As [`Collator::queries`].
    pub fn responses(&self, texts: &[&str]) -> Result<Sentences> {
        self.sentences(texts, self.config.response_span())
    }

    /// Knowledge texts that may be absent, each cut to [`RuberConfig::knowledge_span`]: an
    /// absent one is an empty sentence, marked in [`Sentences`] so that the model reads its
    /// "absent" input there.
    ///
    /// # Errors
    /// As [`Collator::queries`].
    pub fn knowledge(&self, texts: &[Option<&str>]) -> Result<Sentences> {
        let entries: Vec<CachedText> = texts.iter().map(|t| t.map_or_else(|| Ok(CachedText { ids: Vec::new(), states: Vec::new() }), |t| self.cached(t))).collect::<Result<_>>()?;
        let present: Vec<f32> = texts.iter().map(|t| if t.is_some() { 1.0 } else { 0.0 }).collect();
        let n = present.len();
        Ok(self.pad(&entries, Some(Tensor::from_data(TensorData::new(present, [n, 1]), self.device)), self.config.knowledge_span()))
    }

    /// Texts that are all given, each cut to `span`.
    ///
    /// # Errors
    /// As [`Collator::queries`].
    pub fn sentences(&self, texts: &[&str], span: Span) -> Result<Sentences> {
        let entries: Vec<CachedText> = texts.iter().map(|t| self.cached(t)).collect::<Result<_>>()?;
        Ok(self.pad(&entries, None, span))
    }

    fn cached(&self, text: &str) -> Result<CachedText> {
        self.cache.get(text)?.ok_or_else(|| Error::Format(format!("not in the embedding cache: {text:?}")))
    }

    fn pad(&self, entries: &[CachedText], present: Option<Tensor<2>>, span: Span) -> Sentences {
        let (dim, device) = (self.cache.dim(), self.device);
        let kept: Vec<std::ops::Range<usize>> = entries.iter().map(|e| span.range(e.ids.len())).collect();
        // An empty entry (no tokens) still takes one padded-in slot, as before.
        let lengths: Vec<usize> = kept.iter().map(|r| r.len().max(1)).collect();
        let (b, seq) = (entries.len(), lengths.iter().copied().max().unwrap_or(1));
        let mut pad = vec![true; b * seq];
        for (i, &len) in lengths.iter().enumerate() {
            pad[i * seq..i * seq + len].fill(false);
        }
        let pad = Tensor::<2, Bool>::from_data(TensorData::new(pad, [b, seq]), device);
        match self.config.embeddings {
            Embeddings::Bert => {
                let mut states = vec![0.0_f32; b * seq * dim];
                for (i, (e, r)) in entries.iter().zip(&kept).enumerate() {
                    let from = e.states.get(r.start * dim..r.end * dim).unwrap_or_default();
                    for (slot, v) in states[i * seq * dim..].iter_mut().zip(from) {
                        *slot = v.to_f32();
                    }
                }
                Sentences { states: Some(Tensor::from_data(TensorData::new(states, [b, seq, dim]), device)), ids: None, pad, lengths, present }
            }
            Embeddings::Static => {
                let mut ids = vec![0_i64; b * seq];
                for (i, (e, r)) in entries.iter().zip(&kept).enumerate() {
                    for (slot, &id) in ids[i * seq..].iter_mut().zip(&e.ids[r.clone()]) {
                        *slot = i64::from(id);
                    }
                }
                Sentences { states: None, ids: Some(Tensor::from_data(TensorData::new(ids, [b, seq]), device)), pad, lengths, present }
            }
        }
    }
}

/// One epoch of [`train_unreferenced`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuberEpoch {
    /// 1-based epoch.
    pub epoch: usize,
    /// Mean training loss.
    pub train_loss: f64,
    /// Dev ROC AUC (positives vs negatives).
    pub dev_auc: f64,
    /// Dev accuracy at 0.5.
    pub dev_accuracy: f64,
    /// Learning rate used.
    pub lr: f64,
    /// Wall time.
    pub seconds: f64,
}

impl crate::train::RunMeta for RuberMeta {
    const FILE: &'static str = "ruber.json";
    const DIFFERS: &'static str = "other settings";

    /// More epochs or patience, or another device, may be given to a resumed run; nothing else
    /// may change.
    fn comparable(&self) -> Self {
        Self { config: RuberConfig { epochs: 0, patience: 0, compute: Compute::Cpu, ..self.config.clone() }, ..self.clone() }
    }
}

/// What [`train_unreferenced`] saves beside the weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RuberMeta {
    config: RuberConfig,
    encoder_dim: usize,
    vocab: usize,
    /// The encoder whose token states the model was trained on (runs before it was recorded:
    /// `None`, unchecked).
    #[serde(default)]
    encoder_id: Option<String>,
}

/// Scores (query, response) pairs with `model`, 256 at a time, collated by `collator` (whose
/// settings must be the model's); `knowledge` (one per pair, or empty for none) is read when
/// the model has the knowledge channel. What training measures its dev set with; a pair's
/// score may differ in the last bits with its batch mates (padding, kernel shapes), which
/// [`RuberScorer::score_grounded`] avoids.
///
/// # Errors
/// Texts missing from the cache; [`Error::Config`] for a `knowledge` of another length.
pub fn score_pairs(model: &Unreferenced, collator: &Collator, pairs: &[(&str, &str)], knowledge: &[Option<&str>]) -> Result<Vec<f64>> {
    score_batched(model, collator, (pairs, knowledge), 256)
}

/// [`score_pairs`], `batch` pairs at a time.
fn score_batched(model: &Unreferenced, collator: &Collator, (pairs, knowledge): (&[(&str, &str)], &[Option<&str>]), batch: usize) -> Result<Vec<f64>> {
    if !knowledge.is_empty() && knowledge.len() != pairs.len() {
        return Err(Error::Config(format!("{} knowledge texts for {} pairs", knowledge.len(), pairs.len())));
    }
    let mut out = Vec::with_capacity(pairs.len());
    // Empty when no pair has knowledge: then every batch reads the "no knowledge" input.
    let mut knowledge = knowledge.chunks(batch);
    for chunk in pairs.chunks(batch) {
        let (q, r): (Vec<&str>, Vec<&str>) = chunk.iter().copied().unzip();
        let (q, r) = (collator.queries(&q)?, collator.responses(&r)?);
        let k = match knowledge.next().filter(|_| collator.config.knowledge) {
            Some(texts) => Some(collator.knowledge(texts)?),
            None => None,
        };
        let logits = model.logit(&q, &r, k.as_ref()).into_data().convert::<f32>().try_into_vec::<f32>().map_err(|e| Error::Format(format!("scores: {e:?}")))?;
        out.extend(logits.into_iter().map(|l| 1.0 / (1.0 + (-f64::from(l)).exp())));
    }
    Ok(out)
}

/// What [`train_unreferenced`] learns from: (query, positive, negative) triples whose texts
/// are all in `cache`, and the encoder's vocabulary size (for the static table).
#[derive(Debug, Clone, Copy)]
pub struct RuberData<'a> {
    /// The training triples.
    pub train: &'a [Triple],
    /// The dev triples (early stopping, the best model).
    pub dev: &'a [Triple],
    /// The token states of every text of both.
    pub cache: &'a EmbeddingCache,
    /// The encoder's vocabulary size.
    pub vocab: usize,
}

/// Trains (or resumes) the unreferenced model into `dir` on `data`. The best model by dev AUC
/// is kept in `dir/best`; `progress(epoch, step, steps)` is called after each step.
///
/// # Errors
/// Empty data, texts missing from the cache, or files that cannot be written or read.
pub fn train_unreferenced(data: &RuberData, config: &RuberConfig, dir: &Path, progress: &dyn Fn(usize, usize, usize)) -> Result<Vec<RuberEpoch>> {
    let RuberData { train, dev, cache, vocab } = *data;
    if train.is_empty() || dev.is_empty() || config.batch_size == 0 {
        return Err(Error::Config("need training and dev triples and batch_size > 0".into()));
    }
    if !(0.0..1.0).contains(&config.knowledge_dropout) {
        return Err(Error::Config(format!("knowledge_dropout must be in [0, 1), got {}", config.knowledge_dropout)));
    }
    let meta = RuberMeta { config: config.clone(), encoder_dim: cache.dim(), vocab, encoder_id: cache.encoder_id().map(str::to_owned) };
    let (checkpoint, resume) = open_run(dir, &meta)?;
    let device = config.compute.device()?.autodiff();
    let plain = device.clone().without_autodiff();
    // Drawn on the CPU under the seed and materialised before the move, as the SLM is: the same
    // initial weights on every device (burn draws a parameter lazily, on the device it lives on
    // at first use, and each backend has its own random stream).
    let init_device = Device::flex().autodiff();
    init_device.seed(config.seed);
    device.seed(config.seed);
    let mut model = crate::compute::materialized(config.init(cache.dim(), vocab, &init_device)).fork(&device);
    let mut optim = AdamConfig::new().with_grad_clipping(Some(GradientClippingConfig::Norm(5.0))).init();
    let mut state = LoopState::new(config.lr);
    if resume {
        (model, optim, state) = checkpoint.load(model, optim)?;
    }
    let dev_pairs: Vec<(&str, &str)> = dev.iter().flat_map(|t| [(t.query.as_str(), t.positive.as_str()), (t.query.as_str(), t.negative.as_str())]).collect();
    let dev_knowledge: Vec<Option<&str>> = dev.iter().flat_map(|t| [t.knowledge.as_deref(); 2]).collect();
    let dev_labels: Vec<u8> = dev.iter().flat_map(|_| [1, 0]).collect();
    let (collator, dev_collator) = (Collator::new(cache, config, &device), Collator::new(cache, config, &plain));
    let mut logs = Vec::new();
    let log_path = dir.join("log.jsonl");
    while let Some(epoch) = state.next_epoch(config.epochs, config.patience) {
        let started = Instant::now();
        let order = begin_epoch(&device, train.len(), config.seed, epoch);
        let steps = order.len().div_ceil(config.batch_size);
        let mut total = 0.0;
        for (step, chunk) in order.chunks(config.batch_size).enumerate() {
            let pick = |f: fn(&Triple) -> &str| chunk.iter().map(|&i| f(&train[i])).collect::<Vec<&str>>();
            let batch = TripleBatch {
                query: collator.queries(&pick(|t| &t.query))?,
                positive: collator.responses(&pick(|t| &t.positive))?,
                negative: collator.responses(&pick(|t| &t.negative))?,
                knowledge: if config.knowledge {
                    let withheld = crate::train::withheld(chunk.len(), config.knowledge_dropout, crate::train::DrawAt { seed: config.seed, epoch, step });
                    let texts: Vec<Option<&str>> = chunk.iter().enumerate().map(|(j, &i)| train[i].knowledge.as_deref().filter(|_| !withheld.get(j).copied().unwrap_or(false))).collect();
                    Some(collator.knowledge(&texts)?)
                } else {
                    None
                },
            };
            let loss = model.loss(&batch, config.margin);
            total += f64::from(loss.clone().into_scalar::<f32>());
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(state.lr, model, grads);
            progress(epoch, step + 1, steps);
        }
        let valid = model.valid();
        let scores = score_pairs(&valid, &dev_collator, &dev_pairs, &dev_knowledge)?;
        let auc = roc_auc(&scores, &dev_labels).map_err(Error::DevSet)?;
        let log =
            RuberEpoch { epoch, train_loss: total / steps as f64, dev_auc: auc, dev_accuracy: accuracy(&scores, &dev_labels).unwrap_or(0.0), lr: state.lr, seconds: started.elapsed().as_secs_f64() };
        if state.finish_epoch(epoch, auc, config.lr_decay) {
            save_best(dir, valid)?;
        }
        checkpoint.save(&model, &optim, &state)?;
        append_log(&log_path, &log)?;
        logs.push(log);
    }
    Ok(logs)
}

/// A trained unreferenced model loaded for scoring.
#[derive(Debug)]
pub struct RuberScorer {
    model: Unreferenced,
    /// The settings it was trained with.
    pub config: RuberConfig,
    device: Device,
    /// The encoder id (when recorded) and width of the states it was trained on.
    encoder: (Option<String>, usize),
}

impl RuberScorer {
    /// Loads `dir/best` (written by [`train_unreferenced`]).
    ///
    /// # Errors
    /// Missing or unreadable files, [`Error::Checksum`], [`Error::RecordMismatch`] when the saved
    /// parameters do not fit the model `ruber.json` describes.
    pub fn load(dir: &Path, device: Device) -> Result<Self> {
        crate::bundle::verify(dir)?;
        let meta: RuberMeta = read_json(&dir.join("ruber.json"))?;
        let path = dir.join("best/model");
        let model = load_module(meta.config.init(meta.encoder_dim, meta.vocab, &device), &path)?;
        Ok(Self { model, config: meta.config, device, encoder: (meta.encoder_id, meta.encoder_dim) })
    }

    /// Relatedness of each (query, response) pair; every text must be in `cache`. A model with
    /// the knowledge channel reads its "no knowledge" input for every pair.
    ///
    /// # Errors
    /// Texts missing from the cache.
    pub fn score(&self, cache: &EmbeddingCache, pairs: &[(&str, &str)]) -> Result<Vec<f64>> {
        self.score_grounded(cache, pairs, &[])
    }

    /// As [`RuberScorer::score`], with each pair's knowledge (`None`: the pair has none; an
    /// empty slice: none has), read when the model has the knowledge channel
    /// ([`RuberConfig::knowledge`]); the knowledge texts must be in `cache` too.
    ///
    /// One pair at a time: a pair is computed with the same shapes (its own lengths, no
    /// padding) whatever else is scored with it, so its score never depends on how a corpus
    /// was cut into chunks or shards (batched, the last bits would).
    ///
    /// # Errors
    /// Texts missing from the cache, a knowledge slice of another length than `pairs`.
    pub fn score_grounded(&self, cache: &EmbeddingCache, pairs: &[(&str, &str)], knowledge: &[Option<&str>]) -> Result<Vec<f64>> {
        self.check_encoder(cache.encoder_id(), cache.dim())?;
        score_batched(&self.model, &Collator::new(cache, &self.config, &self.device), (pairs, knowledge), 1)
    }

    /// Whether the states of encoder `id` (its fingerprint, when known) of width `dim` are the
    /// ones the model was trained on: a caller can ask before encoding anything.
    ///
    /// # Errors
    /// [`Error::EncoderMismatch`] naming both encoders.
    pub fn check_encoder(&self, id: Option<&str>, dim: usize) -> Result<()> {
        let (trained, trained_dim) = &self.encoder;
        encoder_fits(trained.as_deref(), *trained_dim, id, dim)
    }

    /// [`RuberScorer::check_encoder`] for the checkpoint in `dir` without loading it (only its
    /// `ruber.json` is read): what choosing among shipped checkpoints asks of each.
    ///
    /// # Errors
    /// A missing or unreadable `ruber.json`.
    pub fn fits_encoder(dir: &Path, id: Option<&str>, dim: usize) -> Result<bool> {
        let meta: RuberMeta = read_json(&dir.join("ruber.json"))?;
        Ok(encoder_fits(meta.encoder_id.as_deref(), meta.encoder_dim, id, dim).is_ok())
    }
}

fn encoder_fits(trained: Option<&str>, trained_dim: usize, id: Option<&str>, dim: usize) -> Result<()> {
    if dim != trained_dim || matches!((trained, id), (Some(a), Some(b)) if a != b) {
        let name = |id: Option<&str>, dim: usize| format!("{} ({dim} dims)", id.unwrap_or("unrecorded"));
        return Err(Error::EncoderMismatch { expected: name(trained, trained_dim), found: name(id, dim) });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_span_keeps_the_first_or_the_last_token_states() {
        let dir = std::env::temp_dir().join(format!("dialeval-ruber-span-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut cache = EmbeddingCache::open(&dir.join("cache.bin"), 2).unwrap();
        // Token t of "long" has states (t, -t); "short" has two tokens; "empty" none.
        let states = |n: u32| (0..n).flat_map(|t| [half::f16::from_f32(t as f32), half::f16::from_f32(-(t as f32))]).collect();
        cache.insert("long", CachedText { ids: (0..6).collect(), states: states(6) }).unwrap();
        cache.insert("short", CachedText { ids: vec![0, 1], states: states(2) }).unwrap();
        cache.insert("empty", CachedText { ids: vec![], states: vec![] }).unwrap();
        let device = Device::flex();
        // The query reads its last tokens only when the config says so; old configs read the first.
        let old: RuberConfig = serde_json::from_str(r#"{"embeddings":"bert","representation":"mean_pool","objective":"cross_entropy","static_dim":128,"gru_hidden":128,"margin":0.5,"max_tokens":64,"query_turns":2,"epochs":10,"batch_size":64,"lr":0.001,"lr_decay":0.5,"patience":3,"seed":0}"#).unwrap();
        let table = RuberConfig { embeddings: Embeddings::Static, ..old.clone() };
        let read = |span| {
            let s = Collator::new(&cache, &old, &device).sentences(&["long", "short", "empty"], span).unwrap();
            let seq = s.lengths.iter().copied().max().unwrap();
            let v = s.states.unwrap().into_data().convert::<f32>().try_to_vec::<f32>().unwrap();
            let ids = Collator::new(&cache, &table, &device).sentences(&["long"], span).unwrap().ids.unwrap().into_data().convert::<i64>().try_to_vec::<i64>().unwrap();
            (s.lengths, v.chunks(2 * seq).map(|row| row.iter().step_by(2).copied().collect::<Vec<f32>>()).collect::<Vec<_>>(), ids)
        };
        let (lengths, rows, ids) = read(Span::First(3));
        assert_eq!(lengths, vec![3, 2, 1]);
        assert_eq!(rows, vec![vec![0.0, 1.0, 2.0], vec![0.0, 1.0, 0.0], vec![0.0; 3]]);
        assert_eq!(ids, vec![0, 1, 2]);
        let (lengths, rows, ids) = read(Span::Last(3));
        assert_eq!(lengths, vec![3, 2, 1]);
        assert_eq!(rows, vec![vec![3.0, 4.0, 5.0], vec![0.0, 1.0, 0.0], vec![0.0; 3]]);
        assert_eq!(ids, vec![3, 4, 5]);
        assert_eq!((old.query_span(), old.response_span()), (Span::First(64), Span::First(64)));
        let new = RuberConfig { query_last_tokens: Some(128), ..old };
        assert_eq!((new.query_span(), new.response_span()), (Span::Last(128), Span::First(64)));
        std::fs::remove_dir_all(&dir).ok();
    }
}
