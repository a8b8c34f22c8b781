//! # dialeval-slm-model
//!
//! The small model (SLM) of the AMR-enhanced evaluator on burn 0.22: a text side and a
//! relation-path Graph Transformer fused by a gate, trained with cross-entropy plus a
//! contrastive term that aligns sentence and graph representations ([`model`]). The text side is
//! a trainable head over a pretrained encoder's frozen sentence vectors of context and response
//! (all-mpnet-base-v2 by default, or all-MiniLM-L6-v2; [`bert`])
//! (`TextEncoderKind::Pretrained`, what the shipped checkpoint uses) or a small Transformer trained
//! from scratch (`TextEncoderKind::Scratch`, the ablation). Fine-tuning MiniLM itself was
//! measured out of reach on a 2-core CPU: its forward pass runs at about 60 sentences per second
//! here, so forward + backward over 80,000 cross-encoded pairs would take hours per epoch, while
//! frozen vectors are computed once per distinct sentence (52,000 for the whole training mix, in
//! a cache BERT-RUBER shares).
//!
//! Backends are runtime devices: `Device::flex()` (CPU, the default and what the tests use) or,
//! with the `wgpu` feature, a GPU device; modules carry no backend type.
//!
//! - [`texts`]: which texts of a pair the model reads (joined context, last turns, knowledge);
//! - [`sentence_vectors`]: the frozen sentence vectors the pretrained head reads, and the turn
//!   channel's features from them;
//! - [`wordpiece`]: a WordPiece tokenizer trained on the training text (`tokenizers` crate), the
//!   scratch text side's input;
//! - [`data`]: the featuriser — amr-graph's concept sequences and relation-path matrices
//!   (context turns merged block-diagonally), the text side's inputs, padded batches;
//! - [`config`]: the training settings and the model they describe;
//! - [`train`]: Adam with clipping, decay on plateau, early stopping on dev ROC AUC, graphs
//!   withheld at random so that items without AMR are scored well, a JSONL log;
//! - `runs` (internal): a run's checkpoint every epoch, from which a restarted run continues exactly
//!   (shared with BERT-RUBER and fine-tuning);
//! - [`separation`]: accuracy and ROC AUC against each kind of negative;
//! - [`scorer`]: a trained model loaded once for scoring ([`scorer::Scorer`]);
//! - [`bundle`]: shipped checkpoints verified by their `SHA256SUMS`.
//!
//! Benches: `cargo bench -p dialeval-benches --bench slm`.

pub mod bert;
pub mod bundle;
pub mod compute;
pub mod config;
pub mod data;
mod error;
pub mod fast_gelu;
pub mod finetune;
mod le;
pub mod model;
pub mod ruber;
mod runs;
pub mod scorer;
pub mod sentence_vectors;
pub mod separation;
pub mod texts;
pub mod train;
pub mod vectors;
pub mod wordpiece;

pub use error::{Error, Result};

pub use model::{GraphBatch, GraphEncoder, GraphEncoderConfig, Mode, Slm, SlmBatch, SlmConfig, SlmOutput, TextEncoder, TextEncoderConfig, contrastive_loss};
