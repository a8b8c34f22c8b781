//! The AMR-gated dual encoder of the AMR-enhanced evaluator
//! (`../shared/papers/amr-llm-dialogue-evaluation.txt`, "SLM"):
//!
//! - the sentence side `H_S`, one of two [`TextEncoderKind`]s: a [`TextEncoder`] trained from
//!   scratch (a Transformer over `[CLS] context [SEP] response [SEP]` with token, position and
//!   segment embeddings; `H_S` is the `[CLS]` output), or a [`PretrainedHead`] over the frozen
//!   sentence vectors of a pretrained encoder (all-MiniLM-L6-v2): `H_S` from
//!   `[c; r; c ⊙ r; |c − r|]` of the context and response vectors;
//! - [`GraphEncoder`]: a Graph Transformer (Zhu et al. 2019, structure-aware self-attention): the
//!   relation path between every node pair, embedded as the mean of its label embeddings, is
//!   added to the attention keys and values in every layer; context and response graphs share it;
//!   `H_A` is a projection of the two mean-pooled graphs;
//! - [`Slm`]: the gate `g = σ(W_G[H_S; H_A] + b_G)`, `Ĥ = g ⊙ H_S + (1 − g) ⊙ H_A`, a linear layer
//!   and softmax giving `P(positive)`; plus the loss: cross-entropy and the contrastive term.
//!   [`Mode::Residual`] instead adds the graphs as a term on the text side's logit, which can
//!   only move the score of an item that has graphs.

use burn::module::Param;
use burn::nn::loss::CrossEntropyLoss;
use burn::nn::transformer::{TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput};
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::{log_softmax, sigmoid, softmax};
use serde::{Deserialize, Serialize};

/// Which encoders feed the classifier (the paper's model and its ablations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Text and graph, fused by the gate.
    Gated,
    /// Text encoder only.
    TextOnly,
    /// Graph encoder only.
    GraphOnly,
    /// Text and graph concatenated and projected (the gate's ablation).
    Concat,
    /// The text side's logits plus a graph term: `v · tanh(W [H_S; H_A] + b)` added to the
    /// positive logit of an item with graphs, nothing for one without. `v` starts at zero, so
    /// training starts from the text-only model; `H_S` enters the term and the contrastive loss
    /// detached, so the graph side cannot reshape the text representation, and an item without
    /// graphs is scored by the text side alone. (A model built without the term's layers,
    /// [`SlmConfig::graph_residual`], scores as [`Mode::TextOnly`] here.)
    Residual,
}

/// Where the sentence representation `H_S` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextEncoderKind {
    /// A small Transformer trained from scratch on the training pairs ([`TextEncoder`]).
    #[default]
    Scratch,
    /// A trainable [`PretrainedHead`] over frozen sentence vectors of a pretrained encoder.
    Pretrained,
    /// The paper's cross-encoding `[CLS] context [SEP] response [SEP]`, over frozen token states:
    /// a [`CrossEncoder`] (Transformer layers trained here) attends jointly over the pretrained
    /// encoder's token states of the context, the response and the knowledge, beside the
    /// [`PretrainedHead`]: `H_S = tanh(W [head; cross])`. (Joint layers alone, trained from
    /// scratch, stayed at chance for a whole epoch of the training mix: attention must first
    /// discover the token alignment, which the head's `c ⊙ r` terms give from the start.)
    Cross,
}

/// Settings of the head over frozen pretrained sentence vectors.
#[derive(Config, Debug)]
pub struct PretrainedHeadConfig {
    /// Width of the pretrained sentence vectors (384 for all-MiniLM-L6-v2).
    pub input: usize,
    /// Output width (the model width).
    pub d_model: usize,
    /// Dropout on the input features.
    #[config(default = 0.1)]
    pub dropout: f64,
    /// The knowledge channel: the response's relation to the item's knowledge or persona
    /// (`[k ⊙ r; |k − r|]` of their sentence vectors) enters the head too, and an item without
    /// knowledge reads a learned "no knowledge" vector in place of `k`.
    #[config(default = false)]
    pub knowledge: bool,
    /// The turn channel: the input goes on with the last turn's features and the two zero-shot
    /// cosines (`crate::sentence_vectors::turn_features`), and a learned multiple of the cosines is added to
    /// the positive class's logit (a residual on what the encoder knows without training).
    #[config(default = false)]
    pub turns: bool,
}

/// Initial weight of each zero-shot cosine in the positive logit (the turn channel): an
/// untrained head ranks by the cosines, whose spread between a related and an unrelated
/// response (about 0.3 for MiniLM) then moves the logit by about 1.
pub const COSINE_RESIDUAL_INIT: f32 = 2.0;

/// `H_S = tanh(W₂ gelu(W₁ [c; r; c ⊙ r; |c − r|]))` over the frozen context vector `c` and
/// response vector `r`: the interaction terms let a linear layer express the cosine the
/// pretrained encoder was trained for, and the head learns what else matters. With the
/// knowledge channel the input is `[c; r; c ⊙ r; |c − r|; k ⊙ r; |k − r|]`, `k` the knowledge
/// vector or, for an item without knowledge, the learned `none`. With the turn channel it goes
/// on with `[l ⊙ r; |l − r|; cos(l, r); cos(m, r)]` (`l` the last turn, `m` the last two) and
/// the head also gives `w · [cos(l, r); cos(m, r)]`, which [`Slm`] adds to the positive logit.
#[derive(Module, Debug)]
pub struct PretrainedHead {
    hidden: Linear,
    output: Linear,
    dropout: burn::nn::Dropout,
    /// The learned "no knowledge" vector (`None`: the head has no knowledge channel).
    none: Option<Param<Tensor<1>>>,
    /// The weights `w` of the zero-shot cosines in the positive logit (`None`: the head has no
    /// turn channel).
    residual: Option<Param<Tensor<1>>>,
    /// Width of the pretrained vectors.
    input: usize,
}

/// The knowledge of a batch, for a head with the knowledge channel.
#[derive(Debug, Clone)]
pub struct KnowledgeBatch {
    /// `[batch, input]` the knowledge sentence vectors (zeros where absent).
    pub vectors: Tensor<2>,
    /// `[batch, 1]` 1 where the item has knowledge, 0 where it reads the "no knowledge" vector.
    pub present: Tensor<2>,
}

impl PretrainedHeadConfig {
    /// Builds the head on `device`.
    pub fn init(&self, device: &Device) -> PretrainedHead {
        let scale = (1.0 / self.input as f64).sqrt();
        let width = if self.knowledge { 6 } else { 4 } * self.input + if self.turns { crate::sentence_vectors::turn_width(self.input) } else { 0 };
        PretrainedHead {
            hidden: LinearConfig::new(width, 2 * self.d_model).init(device),
            output: LinearConfig::new(2 * self.d_model, self.d_model).init(device),
            dropout: burn::nn::DropoutConfig::new(self.dropout).init(),
            none: self.knowledge.then(|| Param::from_tensor(Tensor::random([self.input], burn::tensor::Distribution::Uniform(-scale, scale), device))),
            residual: self.turns.then(|| Param::from_tensor(Tensor::full([2], COSINE_RESIDUAL_INIT, device))),
            input: self.input,
        }
    }
}

impl PretrainedHead {
    /// `knowledge` is read by a head with the knowledge channel (absent: every item reads the
    /// "no knowledge" vector) and ignored by one without. Gives `H_S` and, with the turn
    /// channel, the cosine residual of each item.
    ///
    /// # Shapes
    /// - `features`: `[batch, 4 × input]` (`[c; r; c ⊙ r; |c − r|]`, see [`pair_features`]),
    ///   with the turn channel `[batch, 4 × input + turn_width(input)]`
    /// - output: `[batch, d_model]` and `[batch]`
    pub fn forward(&self, features: Tensor<2>, knowledge: Option<&KnowledgeBatch>) -> (Tensor<2>, Option<Tensor<1>>) {
        let [batch, width] = features.dims();
        let input = self.input;
        let (pair, turns) =
            if self.residual.is_some() && width > 4 * input { (features.clone().slice([0..batch, 0..4 * input]), Some(features.slice([0..batch, 4 * input..width]))) } else { (features, None) };
        let mut parts = vec![pair.clone()];
        if let Some(none) = &self.none {
            let r = pair.slice([0..batch, input..2 * input]);
            let none = none.val().reshape([1, input]);
            let k = match knowledge {
                Some(kb) => kb.vectors.clone() * kb.present.clone() + none * kb.present.clone().neg().add_scalar(1.0),
                None => none.repeat_dim(0, batch),
            };
            parts.push(k.clone() * r.clone());
            parts.push((k - r).abs());
        }
        let residual = match (&self.residual, turns) {
            (Some(w), Some(turns)) => {
                let [_, turn_width] = turns.dims();
                let cosines = turns.clone().slice([0..batch, turn_width - 2..turn_width]);
                parts.push(turns);
                Some((cosines * w.val().reshape([1, 2])).sum_dim(1).reshape([batch]))
            }
            _ => None,
        };
        let x = self.dropout.forward(Tensor::cat(parts, 1));
        (self.output.forward(burn::tensor::activation::gelu(self.hidden.forward(x))).tanh(), residual)
    }

    /// The weights of the two zero-shot cosines in the positive logit (`None`: no turn channel).
    pub fn cosine_weights(&self) -> Option<[f32; 2]> {
        let w: Vec<f32> = self.residual.as_ref()?.val().into_data().convert::<f32>().try_into_vec::<f32>().ok()?;
        Some([*w.first()?, *w.get(1)?])
    }
}

/// The head's input for one pair: `[c; r; c ⊙ r; |c − r|]` (length `4 × c.len()`).
pub fn pair_features(context: &[f32], response: &[f32]) -> Vec<f32> {
    let mut out = Vec::with_capacity(4 * context.len());
    out.extend_from_slice(context);
    out.extend_from_slice(response);
    out.extend(context.iter().zip(response).map(|(a, b)| a * b));
    out.extend(context.iter().zip(response).map(|(a, b)| (a - b).abs()));
    out
}

/// Settings of the [`CrossEncoder`].
#[derive(Config, Debug)]
pub struct CrossEncoderConfig {
    /// Width of the pretrained token states (384 for all-MiniLM-L6-v2).
    pub input: usize,
    /// Output width (the model width).
    pub d_model: usize,
    /// Width of the joint layers.
    #[config(default = 128)]
    pub width: usize,
    /// Attention heads.
    #[config(default = 4)]
    pub n_heads: usize,
    /// Joint layers.
    #[config(default = 2)]
    pub n_layers: usize,
    /// Dropout.
    #[config(default = 0.1)]
    pub dropout: f64,
}

/// Segment ids of a [`CrossBatch`]: which part of the joint sequence a token state belongs to.
pub mod segment {
    /// The `[CLS]` slot whose output is `H_S` (a zero state: its input is the segment embedding).
    pub const CLS: i64 = 0;
    /// A context token.
    pub const CONTEXT: i64 = 1;
    /// A response token.
    pub const RESPONSE: i64 = 2;
    /// A knowledge token.
    pub const KNOWLEDGE: i64 = 3;
    /// The one slot of an item without knowledge (the learned "no knowledge" input).
    pub const NO_KNOWLEDGE: i64 = 4;
    /// Segment ids in all.
    pub const COUNT: usize = 5;
}

/// `H_S` by cross-encoding: the frozen token states of context, response and knowledge (each
/// encoded on its own by the pretrained encoder, so the states carry their positions within
/// their sentence) are projected, given a segment embedding, joined behind a `[CLS]` slot and
/// read by pre-norm Transformer layers that attend across them; the output is
/// `tanh(W [CLS output])`. The joint layers stand for the top layers the paper's fine-tuning
/// adapts; the pretrained layers below stay frozen, so their states are computed once and
/// cached. [`Slm`] puts it beside the [`PretrainedHead`] (see [`TextEncoderKind::Cross`]).
#[derive(Module, Debug)]
pub struct CrossEncoder {
    input: Linear,
    segments: Embedding,
    norm: LayerNorm,
    encoder: TransformerEncoder,
    output: Linear,
}

impl CrossEncoderConfig {
    /// Builds the encoder on `device`.
    pub fn init(&self, device: &Device) -> CrossEncoder {
        CrossEncoder {
            input: LinearConfig::new(self.input, self.width).init(device),
            segments: EmbeddingConfig::new(segment::COUNT, self.width).init(device),
            norm: LayerNormConfig::new(self.width).init(device),
            encoder: TransformerEncoderConfig::new(self.width, 2 * self.width, self.n_heads, self.n_layers).with_dropout(self.dropout).with_norm_first(true).init(device),
            output: LinearConfig::new(self.width, self.d_model).init(device),
        }
    }
}

/// The joint token sequences of a batch, for the [`CrossEncoder`].
#[derive(Debug, Clone)]
pub struct CrossBatch {
    /// `[batch, seq, input]` token states (zeros at the `[CLS]` slot, the no-knowledge slot and
    /// padding).
    pub states: Tensor<3>,
    /// `[batch, seq]` [`segment`] ids.
    pub segments: Tensor<2, Int>,
    /// `[batch, seq]` true at padding.
    pub pad: Tensor<2, Bool>,
}

impl CrossEncoder {
    /// # Shapes
    /// - output: `[batch, d_model]`
    pub fn forward(&self, batch: &CrossBatch) -> Tensor<2> {
        let [b, _, _] = batch.states.dims();
        let x = self.norm.forward(self.input.forward(batch.states.clone()) + self.segments.forward(batch.segments.clone()));
        let x = self.encoder.forward(TransformerEncoderInput::new(x).mask_pad(batch.pad.clone()));
        let [_, _, width] = x.dims();
        self.output.forward(x.slice([0..b, 0..1, 0..width]).reshape([b, width])).tanh()
    }
}

/// Settings of the text encoder.
#[derive(Config, Debug)]
pub struct TextEncoderConfig {
    /// Token vocabulary size.
    pub vocab_size: usize,
    /// Model width.
    #[config(default = 128)]
    pub d_model: usize,
    /// Feed-forward width.
    #[config(default = 256)]
    pub d_ff: usize,
    /// Attention heads.
    #[config(default = 4)]
    pub n_heads: usize,
    /// Layers.
    #[config(default = 2)]
    pub n_layers: usize,
    /// Longest input in tokens.
    #[config(default = 128)]
    pub max_len: usize,
    /// Dropout.
    #[config(default = 0.1)]
    pub dropout: f64,
}

/// The text encoder.
#[derive(Module, Debug)]
pub struct TextEncoder {
    tokens: Embedding,
    positions: Embedding,
    segments: Embedding,
    encoder: TransformerEncoder,
    norm: LayerNorm,
}

impl TextEncoderConfig {
    /// Builds the encoder on `device`.
    pub fn init(&self, device: &Device) -> TextEncoder {
        TextEncoder {
            tokens: EmbeddingConfig::new(self.vocab_size, self.d_model).init(device),
            positions: EmbeddingConfig::new(self.max_len, self.d_model).init(device),
            segments: EmbeddingConfig::new(2, self.d_model).init(device),
            encoder: TransformerEncoderConfig::new(self.d_model, self.d_ff, self.n_heads, self.n_layers).with_dropout(self.dropout).init(device),
            norm: LayerNormConfig::new(self.d_model).init(device),
        }
    }
}

impl TextEncoder {
    /// `H_S`, the `[CLS]` (first position) output.
    ///
    /// # Shapes
    /// - `tokens`, `segments`: `[batch, seq]` (seq ≤ `max_len`)
    /// - `pad`: `[batch, seq]`, true at padding
    /// - output: `[batch, d_model]`
    pub fn forward(&self, tokens: Tensor<2, Int>, segments: Tensor<2, Int>, pad: Tensor<2, Bool>) -> Tensor<2> {
        let [batch, seq] = tokens.dims();
        let device = tokens.device();
        let positions = Tensor::<1, Int>::arange(0..seq as i64, &device).reshape([1, seq]).repeat_dim(0, batch);
        let x = self.tokens.forward(tokens) + self.positions.forward(positions) + self.segments.forward(segments);
        let x = self.encoder.forward(TransformerEncoderInput::new(self.norm.forward(x)).mask_pad(pad));
        let [_, _, d_model] = x.dims();
        x.slice([0..batch, 0..1, 0..d_model]).reshape([batch, d_model])
    }
}

/// Settings of the graph encoder.
#[derive(Config, Debug)]
pub struct GraphEncoderConfig {
    /// Concept vocabulary size.
    pub concept_vocab: usize,
    /// Path-label vocabulary size.
    pub label_vocab: usize,
    /// Model width.
    #[config(default = 128)]
    pub d_model: usize,
    /// Attention heads.
    #[config(default = 4)]
    pub n_heads: usize,
    /// Layers.
    #[config(default = 2)]
    pub n_layers: usize,
}

/// One structure-aware self-attention layer with a feed-forward block.
#[derive(Module, Debug)]
pub struct GraphLayer {
    query: Linear,
    key: Linear,
    value: Linear,
    rel_key: Linear,
    rel_value: Linear,
    output: Linear,
    ff_in: Linear,
    ff_out: Linear,
    norm1: LayerNorm,
    norm2: LayerNorm,
    n_heads: usize,
}

/// The Graph Transformer.
#[derive(Module, Debug)]
pub struct GraphEncoder {
    concepts: Embedding,
    labels: Embedding,
    layers: Vec<GraphLayer>,
}

impl GraphEncoderConfig {
    /// Builds the encoder on `device`.
    pub fn init(&self, device: &Device) -> GraphEncoder {
        let d = self.d_model;
        let layers = (0..self.n_layers)
            .map(|_| GraphLayer {
                query: LinearConfig::new(d, d).init(device),
                key: LinearConfig::new(d, d).init(device),
                value: LinearConfig::new(d, d).init(device),
                rel_key: LinearConfig::new(d, d).init(device),
                rel_value: LinearConfig::new(d, d).init(device),
                output: LinearConfig::new(d, d).init(device),
                ff_in: LinearConfig::new(d, 2 * d).init(device),
                ff_out: LinearConfig::new(2 * d, d).init(device),
                norm1: LayerNormConfig::new(d).init(device),
                norm2: LayerNormConfig::new(d).init(device),
                n_heads: self.n_heads,
            })
            .collect();
        GraphEncoder { concepts: EmbeddingConfig::new(self.concept_vocab, d).init(device), labels: EmbeddingConfig::new(self.label_vocab, d).init(device), layers }
    }
}

/// A padded batch of graphs.
#[derive(Debug, Clone)]
pub struct GraphBatch {
    /// Concept ids, `[batch, nodes]` (0 = padding).
    pub concepts: Tensor<2, Int>,
    /// Path-label ids, `[batch, nodes, nodes, path_len]` (0 = padding).
    pub paths: Tensor<4, Int>,
    /// True at padding nodes, `[batch, nodes]`.
    pub pad: Tensor<2, Bool>,
}

/// The relation paths of a graph batch, prepared once for every layer: the batch's distinct
/// label paths and, for every node pair, which of them it has.
struct Relations {
    /// `[paths, d]` the mean label embedding of each distinct path (0 for a path of padding).
    means: Tensor<2>,
    /// `[batch · nodes · nodes]` the distinct path of each node pair.
    cell_path: Tensor<1, Int>,
    /// `[batch, nodes, nodes]`.
    shape: [usize; 3],
}

impl Relations {
    /// Finds the distinct label paths of `paths` (`[batch, nodes, nodes, path_len]`, read back
    /// to the host: they are inputs, never differentiated) and their mean label embeddings.
    fn new(paths: Tensor<4, Int>, labels: &Embedding) -> Self {
        let [batch, nodes, _, path_len] = paths.dims();
        let device = paths.device();
        let data = paths.into_data();
        let flat: Vec<i64> = data.iter::<i64>().collect();
        let mut index: std::collections::HashMap<&[i64], i64> = std::collections::HashMap::new();
        let mut table: Vec<i64> = Vec::new();
        let cell_path: Vec<i64> = flat
            .chunks(path_len.max(1))
            .map(|path| {
                *index.entry(path).or_insert_with(|| {
                    table.extend_from_slice(path);
                    (table.len() / path_len.max(1) - 1) as i64
                })
            })
            .collect();
        let distinct = table.len() / path_len.max(1);
        let table = Tensor::<2, Int>::from_data(TensorData::new(table, [distinct, path_len]), &device);
        let mask = table.clone().not_equal_elem(0).float().reshape([distinct, path_len, 1]);
        let counts = mask.clone().sum_dim(1).reshape([distinct, 1]).clamp_min(1.0);
        let [_, d] = labels.weight.dims();
        let means = (labels.forward(table) * mask).sum_dim(1).reshape([distinct, d]) / counts;
        let cells = cell_path.len();
        Self { means, cell_path: Tensor::<1, Int>::from_data(TensorData::new(cell_path, [cells]), &device), shape: [batch, nodes, nodes] }
    }

    /// `proj(r_ij)` for every node pair, `r_ij` being the mean label embedding of its path:
    /// projected once per distinct path of the batch (a few hundred rows) and gathered, instead
    /// of once per node pair (`batch × nodes²` rows, ~75% of the forward FLOPs before).
    ///
    /// # Shapes
    /// - output: `[batch, nodes, nodes, d]`
    fn project(&self, proj: &Linear) -> Tensor<4> {
        let [batch, nodes, _] = self.shape;
        let projected = proj.forward(self.means.clone()); // [paths, d]
        let [_, d] = projected.dims();
        projected.select(0, self.cell_path.clone()).reshape([batch, nodes, nodes, d])
    }
}

impl GraphLayer {
    /// # Shapes
    /// - `x`: `[batch, nodes, d]`, `pad`: `[batch, nodes]`
    /// - output: `[batch, nodes, d]`
    fn forward(&self, x: Tensor<3>, rel: &Relations, pad: Tensor<2, Bool>) -> Tensor<3> {
        self.forward_projected(x, rel.project(&self.rel_key), rel.project(&self.rel_value), pad)
    }

    /// The layer given the projected relations `rk = rel_key(r)`, `rv = rel_value(r)`, each
    /// `[batch, nodes, nodes, d]`.
    fn forward_projected(&self, x: Tensor<3>, rk: Tensor<4>, rv: Tensor<4>, pad: Tensor<2, Bool>) -> Tensor<3> {
        let [batch, nodes, d] = x.dims();
        let (h, dh) = (self.n_heads, d / self.n_heads);
        let heads = |t: Tensor<3>| t.reshape([batch, nodes, h, dh]).swap_dims(1, 2); // [b, h, n, dh]
        let rel_heads = |t: Tensor<4>| t.reshape([batch, nodes, nodes, h, dh]).permute([0, 3, 1, 2, 4]); // [b, h, n, n, dh]
        let q = heads(self.query.forward(x.clone()));
        let k = heads(self.key.forward(x.clone()));
        let v = heads(self.value.forward(x.clone()));
        let rk = rel_heads(rk);
        let rv = rel_heads(rv);
        // e_ij = q_i · (k_j + r_ij) / √dh
        let keys = k.unsqueeze_dim::<5>(2) + rk; // [b, h, n, n, dh]
        let logits = (q.unsqueeze_dim::<5>(3) * keys).sum_dim(4).reshape([batch, h, nodes, nodes]).div_scalar((dh as f64).sqrt());
        let key_pad = pad.reshape([batch, 1, 1, nodes]).repeat_dim(1, h).repeat_dim(2, nodes);
        let attn = softmax(logits.mask_fill(key_pad, -1.0e4), 3); // [b, h, n, n]
        // z_i = Σ_j α_ij (v_j + r_ij)
        let values = v.unsqueeze_dim::<5>(2) + rv; // [b, h, n, n, dh]
        let z = (attn.unsqueeze_dim::<5>(4) * values).sum_dim(3).reshape([batch, h, nodes, dh]);
        let z = z.swap_dims(1, 2).reshape([batch, nodes, d]);
        let x = self.norm1.forward(x + self.output.forward(z));
        let ff = self.ff_out.forward(burn::tensor::activation::gelu(self.ff_in.forward(x.clone())));
        self.norm2.forward(x + ff)
    }
}

impl GraphEncoder {
    /// Mean-pooled node states of each graph.
    ///
    /// # Shapes
    /// - output: `[batch, d_model]`
    pub fn forward(&self, g: GraphBatch) -> Tensor<2> {
        let [batch, nodes] = g.concepts.dims();
        let mut x = self.concepts.forward(g.concepts);
        let [_, _, d] = x.dims();
        // Relation embedding: the mean of the path's label embeddings (padding labels
        // excluded), per distinct path of the batch, projected per layer (`Relations::project`).
        let rel = Relations::new(g.paths, &self.labels);
        for layer in &self.layers {
            x = layer.forward(x, &rel, g.pad.clone());
        }
        let keep = g.pad.bool_not().float().reshape([batch, nodes, 1]);
        let total = (x * keep.clone()).sum_dim(1).reshape([batch, d]);
        total / keep.sum_dim(1).reshape([batch, 1]).clamp_min(1.0)
    }
}

/// Settings of the whole model.
#[derive(Config, Debug)]
pub struct SlmConfig {
    /// Text encoder (used with [`TextEncoderKind::Scratch`]).
    pub text: TextEncoderConfig,
    /// Head over pretrained sentence vectors (used instead of `text` when set).
    pub pretrained: Option<PretrainedHeadConfig>,
    /// Cross-encoder over pretrained token states (used instead of `text` when set).
    pub cross: Option<CrossEncoderConfig>,
    /// Graph encoder (its `d_model` must equal the text encoder's).
    pub graph: GraphEncoderConfig,
    /// Temperature of the contrastive term.
    #[config(default = 0.1)]
    pub temperature: f64,
    /// Weight of the contrastive term in the loss.
    #[config(default = 0.5)]
    pub contrastive_weight: f64,
    /// The layers of [`Mode::Residual`]'s graph term (models saved before it have none).
    #[config(default = false)]
    pub graph_residual: bool,
    /// Weight of [`Mode::Residual`]'s penalty on its graph term: the mean of the term's square
    /// over the items with graphs is added to the loss, so the graphs move a score only as far
    /// as they keep lowering the cross-entropy (0: no penalty).
    #[config(default = 0.0)]
    pub graph_term_penalty: f64,
}

/// The SLM.
#[derive(Module, Debug)]
pub struct Slm {
    text: Option<TextEncoder>,
    pretrained: Option<PretrainedHead>,
    cross: Option<CrossEncoder>,
    /// `H_S = tanh(W [head; cross])` when the joint layers sit beside the pretrained head.
    cross_mix: Option<Linear>,
    graph: GraphEncoder,
    graph_proj: Linear,
    gate: Linear,
    concat: Linear,
    classifier: Linear,
    /// [`Mode::Residual`]'s graph term: `W`, `b` and `v` (`v` zero at initialisation).
    graph_residual: Option<GraphResidual>,
    graph_term_penalty: f64,
    temperature: f64,
    contrastive_weight: f64,
}

impl SlmConfig {
    /// Builds the model on `device`.
    pub fn init(&self, device: &Device) -> Slm {
        let d = self.text.d_model;
        Slm {
            text: (self.pretrained.is_none() && self.cross.is_none()).then(|| self.text.init(device)),
            pretrained: self.pretrained.as_ref().map(|p| p.init(device)),
            cross: self.cross.as_ref().map(|c| c.init(device)),
            cross_mix: (self.cross.is_some() && self.pretrained.is_some()).then(|| LinearConfig::new(2 * d, d).init(device)),
            graph: self.graph.init(device),
            graph_proj: LinearConfig::new(2 * d, d).init(device),
            gate: LinearConfig::new(2 * d, d).init(device),
            concat: LinearConfig::new(2 * d, d).init(device),
            classifier: LinearConfig::new(d, 2).init(device),
            graph_residual: self
                .graph_residual
                .then(|| GraphResidual { hidden: LinearConfig::new(2 * d, d).init(device), out: LinearConfig::new(d, 1).with_initializer(burn::nn::Initializer::Zeros).init(device) }),
            graph_term_penalty: self.graph_term_penalty,
            temperature: self.temperature,
            contrastive_weight: self.contrastive_weight,
        }
    }
}

/// [`Mode::Residual`]'s graph term.
#[derive(Module, Debug)]
pub struct GraphResidual {
    hidden: Linear,
    out: Linear,
}

/// A training or scoring batch.
#[derive(Debug, Clone)]
pub struct SlmBatch {
    /// `[batch, seq]` token ids.
    pub tokens: Tensor<2, Int>,
    /// `[batch, seq]` 0 for context, 1 for response.
    pub segments: Tensor<2, Int>,
    /// `[batch, seq]` true at padding.
    pub pad: Tensor<2, Bool>,
    /// `[batch, 4 × input]` pair features of the pretrained head (`None` for the scratch text
    /// encoder).
    pub text_features: Option<Tensor<2>>,
    /// The items' knowledge, for a pretrained head with the knowledge channel.
    pub knowledge: Option<KnowledgeBatch>,
    /// The joint token sequences, for the cross-encoder.
    pub cross: Option<CrossBatch>,
    /// Context graphs (all context turns merged into one graph input).
    pub context_graph: GraphBatch,
    /// Response graphs.
    pub response_graph: GraphBatch,
    /// `[batch, 1]` 1 where an item reads its own graphs, 0 where it reads the "no graph"
    /// input (no AMR, or withheld).
    pub graph_present: Tensor<2>,
    /// `[batch]` 1 for a good continuation, 0 for a negative.
    pub labels: Tensor<1, Int>,
}

/// What a forward pass gives.
#[derive(Debug, Clone)]
pub struct SlmOutput {
    /// `[batch, 2]` class logits.
    pub logits: Tensor<2>,
    /// `[batch, d]` sentence representation `H_S` (zeros in graph-only mode).
    pub sentence: Tensor<2>,
    /// `[batch, d]` graph representation `H_A` (zeros in text-only mode).
    pub graph: Tensor<2>,
    /// `[batch, 1]` [`Mode::Residual`]'s graph term in the positive logit (0 for an item without
    /// graphs); `None` in the other modes.
    pub graph_term: Option<Tensor<2>>,
}

impl Slm {
    /// The weights of the zero-shot cosines in the positive logit, for a pretrained head with
    /// the turn channel.
    pub fn cosine_weights(&self) -> Option<[f32; 2]> {
        self.pretrained.as_ref()?.cosine_weights()
    }

    /// Logits and both representations.
    pub fn forward(&self, batch: &SlmBatch, mode: Mode) -> SlmOutput {
        // Each single-encoder mode skips the other encoder: an unused branch is never consumed by
        // backward, and burn's autodiff kept its graph alive (memory grew by ~45 MB per step).
        let [b, _] = batch.tokens.dims();
        let zeros = || Tensor::<2>::zeros([b, self.classifier.weight.dims()[0]], &batch.tokens.device());
        let mut residual = None;
        let sentence = match (&self.pretrained, &self.text, &batch.text_features) {
            _ if mode == Mode::GraphOnly => zeros(),
            (Some(head), _, Some(features)) => {
                let (pooled, cosines) = head.forward(features.clone(), batch.knowledge.as_ref());
                residual = cosines;
                match (&self.cross, &self.cross_mix, &batch.cross) {
                    (Some(cross), Some(mix), Some(sequences)) => mix.forward(Tensor::cat(vec![pooled, cross.forward(sequences)], 1)).tanh(),
                    _ => pooled,
                }
            }
            (None, None, _) => match (&self.cross, &batch.cross) {
                (Some(cross), Some(sequences)) => cross.forward(sequences),
                _ => zeros(),
            },
            (None, Some(text), _) => text.forward(batch.tokens.clone(), batch.segments.clone(), batch.pad.clone()),
            // A pretrained head without features (or neither encoder) cannot happen for batches
            // of the crate's featuriser, which fills what the model needs; zeros keep the shape.
            _ => zeros(),
        };
        let graph = if mode == Mode::TextOnly {
            zeros()
        } else {
            let pooled = vec![self.graph.forward(batch.context_graph.clone()), self.graph.forward(batch.response_graph.clone())];
            self.graph_proj.forward(Tensor::cat(pooled, 1))
        };
        let fused = match mode {
            Mode::TextOnly | Mode::Residual => sentence.clone(),
            Mode::GraphOnly => graph.clone(),
            Mode::Concat => self.concat.forward(Tensor::cat(vec![sentence.clone(), graph.clone()], 1)).tanh(),
            Mode::Gated => {
                let g = sigmoid(self.gate.forward(Tensor::cat(vec![sentence.clone(), graph.clone()], 1)));
                g.clone() * sentence.clone() + (g.neg() + 1.0) * graph.clone()
            }
        };
        let mut logits = self.classifier.forward(fused);
        // Into the positive class's logit only: [0, term].
        let positive = |term: Tensor<2>| Tensor::cat(vec![Tensor::<2>::zeros([b, 1], &term.device()), term], 1);
        if let Some(r) = residual {
            logits = logits + positive(r.reshape([b, 1]));
        }
        let mut graph_term = None;
        if let (Mode::Residual, Some(term)) = (mode, &self.graph_residual) {
            let hidden = term.hidden.forward(Tensor::cat(vec![sentence.clone().detach(), graph.clone()], 1)).tanh();
            let value = term.out.forward(hidden) * batch.graph_present.clone();
            logits = logits + positive(value.clone());
            graph_term = Some(value);
        }
        SlmOutput { logits, sentence, graph, graph_term }
    }

    /// `P(positive)` per item, `[batch]`.
    pub fn probability(&self, batch: &SlmBatch, mode: Mode) -> Tensor<1> {
        let [b, _] = batch.tokens.dims();
        softmax(self.forward(batch, mode).logits, 1).slice([0..b, 1..2]).reshape([b])
    }

    /// Cross-entropy plus `contrastive_weight` × the contrastive term (when both encoders run;
    /// a weight of 0 is the "no contrastive loss" ablation), plus, under [`Mode::Residual`],
    /// `graph_term_penalty` × the mean square of the graph term over the items with graphs.
    pub fn loss(&self, batch: &SlmBatch, mode: Mode) -> (Tensor<1>, SlmOutput) {
        let out = self.forward(batch, mode);
        let ce = CrossEntropyLoss::new(None, &out.logits.device()).forward(out.logits.clone(), batch.labels.clone());
        let loss = if matches!(mode, Mode::Gated | Mode::Concat | Mode::Residual) && self.contrastive_weight > 0.0 {
            // Under the residual mode the graph side aligns with the text, not the reverse.
            let sentence = if mode == Mode::Residual { out.sentence.clone().detach() } else { out.sentence.clone() };
            ce + contrastive_loss(sentence, out.graph.clone(), batch.labels.clone(), self.temperature).mul_scalar(self.contrastive_weight)
        } else {
            ce
        };
        let loss = match &out.graph_term {
            Some(term) if self.graph_term_penalty > 0.0 => {
                let present = batch.graph_present.clone().sum().clamp_min(1.0);
                loss + (term.clone().powf_scalar(2.0).sum() / present).mul_scalar(self.graph_term_penalty)
            }
            _ => loss,
        };
        (loss, out)
    }
}

/// The contrastive term: cosine similarities between every sentence and every graph
/// representation of the batch, divided by `temperature`; each positive pair's own graph must
/// win the softmax over the batch (multiple-negatives ranking loss, Henderson et al. 2017), so
/// positives are pulled together and pushed away from the other items' graphs. Items labelled
/// negative only serve as competitors. 0 when the batch has no positive.
///
/// # Shapes
/// - `sentence`, `graph`: `[batch, d]`; `labels`: `[batch]`; output: `[1]`
pub fn contrastive_loss(sentence: Tensor<2>, graph: Tensor<2>, labels: Tensor<1, Int>, temperature: f64) -> Tensor<1> {
    let [batch, _] = sentence.dims();
    let unit = |t: Tensor<2>| {
        let norm = t.clone().powf_scalar(2.0).sum_dim(1).sqrt().clamp_min(1e-8);
        t / norm
    };
    let sim = unit(sentence).matmul(unit(graph).transpose()).div_scalar(temperature); // [b, b]
    let log_probs = log_softmax(sim, 1);
    let device = log_probs.device();
    let eye = Tensor::<2>::eye(batch, &device);
    let diagonal = (log_probs * eye).sum_dim(1).reshape([batch]); // log p(own graph)
    let positive = labels.equal_elem(1).float();
    let count = positive.clone().sum().clamp_min(1.0);
    (diagonal * positive).sum().neg() / count
}

impl Slm {
    /// Sum of absolute gradients reaching the text encoder's token embedding (the pretrained
    /// head's first layer) and the graph
    /// encoder's concept embedding: how a test shows that a loss trains both encoders.
    pub fn embedding_grad_norms(&self, grads: &burn::optim::GradientsParams) -> (f32, f32) {
        let norm = |g: Option<Tensor<2>>| g.map_or(0.0, |t| t.abs().sum().into_scalar::<f32>());
        let text = match (&self.text, &self.pretrained, &self.cross) {
            (Some(t), _, _) => grads.get::<2>(t.tokens.weight.id),
            (None, Some(h), _) => grads.get::<2>(h.hidden.weight.id),
            (None, None, Some(c)) => grads.get::<2>(c.input.weight.id),
            (None, None, None) => None,
        };
        (norm(text), norm(grads.get::<2>(self.graph.concepts.weight.id)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The graph encoder as first written: the mean label embedding of every node pair, then
    /// the key/value projections of each of those `batch × nodes²` vectors.
    fn reference_forward(encoder: &GraphEncoder, g: GraphBatch) -> Tensor<2> {
        let [batch, nodes] = g.concepts.dims();
        let [_, _, _, path_len] = g.paths.dims();
        let mut x = encoder.concepts.forward(g.concepts);
        let [_, _, d] = x.dims();
        let flat = g.paths.clone().reshape([batch * nodes * nodes, path_len]);
        let label_mask = g.paths.not_equal_elem(0).float().reshape([batch * nodes * nodes, path_len, 1]);
        let summed = (encoder.labels.forward(flat) * label_mask.clone()).sum_dim(1).reshape([batch, nodes, nodes, d]);
        let counts = label_mask.sum_dim(1).reshape([batch, nodes, nodes, 1]).clamp_min(1.0);
        let rel = summed / counts;
        for layer in &encoder.layers {
            x = layer.forward_projected(x, layer.rel_key.forward(rel.clone()), layer.rel_value.forward(rel.clone()), g.pad.clone());
        }
        let keep = g.pad.bool_not().float().reshape([batch, nodes, 1]);
        let total = (x * keep.clone()).sum_dim(1).reshape([batch, d]);
        total / keep.sum_dim(1).reshape([batch, 1]).clamp_min(1.0)
    }

    #[test]
    fn projecting_distinct_paths_equals_projecting_every_pair() {
        let device = Device::flex();
        device.seed(5);
        let encoder = GraphEncoderConfig::new(30, 17).with_d_model(32).with_n_heads(4).with_n_layers(2).init(&device);
        let (batch, nodes, path) = (3, 7, 4);
        // Paths of every length 0..=path (0: all padding, as between padded nodes).
        let paths: Vec<i64> = (0..batch * nodes * nodes * path).map(|i| if (i % path) < (i / path) % (path + 1) { 1 + (i as i64 * 7) % 16 } else { 0 }).collect();
        let concepts: Vec<i64> = (0..batch * nodes).map(|i| if i % nodes == nodes - 1 && i / nodes == 1 { 0 } else { 1 + (i as i64 * 5) % 29 }).collect();
        let pad: Vec<bool> = concepts.iter().map(|&c| c == 0).collect();
        let g = GraphBatch {
            concepts: Tensor::<2, Int>::from_data(TensorData::new(concepts, [batch, nodes]), &device),
            paths: Tensor::<4, Int>::from_data(TensorData::new(paths, [batch, nodes, nodes, path]), &device),
            pad: Tensor::<2, Bool>::from_data(TensorData::new(pad, [batch, nodes]), &device),
        };
        let fast: Vec<f32> = encoder.forward(g.clone()).into_data().convert::<f32>().try_into_vec().unwrap();
        let slow: Vec<f32> = reference_forward(&encoder, g).into_data().convert::<f32>().try_into_vec().unwrap();
        assert_eq!(fast.len(), batch * 32);
        let worst = fast.iter().zip(&slow).map(|(a, b)| (a - b).abs()).fold(0.0_f32, f32::max);
        assert!(worst < 1e-5, "largest difference {worst}");
    }
}
