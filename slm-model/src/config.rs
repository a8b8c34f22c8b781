//! The SLM's training settings ([`TrainConfig`], saved as `train.json` with every checkpoint)
//! and the model they describe with a featuriser.

use serde::{Deserialize, Serialize};

use crate::compute::Compute;
use crate::data::Featurizer;
use crate::model::{CrossEncoderConfig, GraphEncoderConfig, Mode, PretrainedHeadConfig, SlmConfig, TextEncoderConfig, TextEncoderKind};
use crate::texts::KnowledgeUnit;

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
    /// Keep every epoch's model as a run directory of its own, `epochs/<epoch>`, which scores
    /// like the run's best (`evaluate --slm RUN/epochs/2`), so a run can be judged after each
    /// epoch and not only on the dev AUC that picks `best/`. Not saved with the run: it changes
    /// what is written, never what is trained, and may be turned on or off when resuming.
    #[serde(skip)]
    pub keep_epochs: bool,
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
    pub fn vector_inputs(&self) -> crate::texts::VectorInputs {
        crate::texts::VectorInputs { knowledge: self.knowledge.then_some(self.knowledge_unit), turns: self.turns }
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
            keep_epochs: false,
        }
    }
}

/// The model a featuriser and these settings describe (what training builds and loading
/// rebuilds before the saved parameters go in).
pub(crate) fn model_config(f: &Featurizer, c: &TrainConfig) -> SlmConfig {
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
