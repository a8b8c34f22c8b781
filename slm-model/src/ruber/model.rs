//! BERT-RUBER's unreferenced model: pooled or Bi-GRU sentence vectors, RUBER's bilinear head
//! and MLP, the optional knowledge channel.

use burn::module::Param;
use burn::nn::gru::{Gru, GruConfig};
use burn::nn::loss::CrossEntropyLoss;
use burn::nn::{Embedding, EmbeddingConfig, Linear, LinearConfig};
use burn::prelude::*;

use super::config::{Embeddings, Objective, Representation, RuberConfig};

/// A padded batch of sentences, built by a [`Collator`] for one [`Embeddings`] kind.
#[derive(Debug, Clone)]
pub struct Sentences {
    /// Frozen states `[batch, seq, dim]` (BERT embeddings).
    pub(super) states: Option<Tensor<3>>,
    /// Word-piece ids `[batch, seq]` (static embeddings).
    pub(super) ids: Option<Tensor<2, Int>>,
    /// `[batch, seq]`, true at padding.
    pub(super) pad: Tensor<2, Bool>,
    /// Tokens per sentence.
    pub(super) lengths: Vec<usize>,
    /// `[batch, 1]`, 1 where the sentence was given and 0 where it is absent (a triple without
    /// knowledge); `None` when every one was given.
    pub(super) present: Option<Tensor<2>>,
}

/// The knowledge channel of [`Unreferenced`].
#[derive(Module, Debug)]
pub struct KnowledgeBranch {
    /// Bilinear match of knowledge and response.
    pub(super) bilinear: Param<Tensor<2>>,
    /// The learned "no knowledge" vector.
    pub(super) none: Param<Tensor<1>>,
}

/// The unreferenced model.
#[derive(Module, Debug)]
pub struct Unreferenced {
    pub(super) words: Option<Embedding>,
    pub(super) forward_gru: Option<Gru>,
    pub(super) backward_gru: Option<Gru>,
    pub(super) bilinear: Param<Tensor<2>>,
    pub(super) knowledge: Option<KnowledgeBranch>,
    pub(super) hidden1: Linear,
    pub(super) hidden2: Linear,
    pub(super) hidden3: Linear,
    pub(super) output: Linear,
    #[module(skip)]
    pub(super) representation: Representation,
    #[module(skip)]
    pub(super) objective: Objective,
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
pub(super) fn unreachable_input(pad: &Tensor<2, Bool>) -> Tensor<3> {
    let [b, s] = pad.dims();
    Tensor::zeros([b, s, 1], &pad.device())
}
