//! BERT-RUBER's settings: the design space (embeddings, representation, objective), the
//! spans of token states read, and the training triples.

use serde::{Deserialize, Serialize};

use crate::compute::Compute;

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

pub(super) fn default_knowledge_tokens() -> usize {
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
    pub(super) fn range(self, len: usize) -> std::ops::Range<usize> {
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

/// What [`super::train_unreferenced`] saves beside the weights (`ruber.json`), and what a
/// loaded checkpoint is checked against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct RuberMeta {
    pub(super) config: RuberConfig,
    pub(super) encoder_dim: usize,
    pub(super) vocab: usize,
    /// The encoder whose token states the model was trained on (runs before it was recorded:
    /// `None`, unchecked).
    #[serde(default)]
    pub(super) encoder_id: Option<String>,
}

impl crate::runs::RunMeta for RuberMeta {
    const FILE: &'static str = "ruber.json";
    const DIFFERS: &'static str = "other settings";

    /// More epochs or patience, or another device, may be given to a resumed run; nothing else
    /// may change.
    fn comparable(&self) -> Self {
        Self { config: RuberConfig { epochs: 0, patience: 0, compute: Compute::Cpu, ..self.config.clone() }, ..self.clone() }
    }
}
