//! # dialeval-slm-model
//!
//! The small model (SLM) of the AMR-enhanced evaluator on burn 0.22: a text Transformer and a
//! relation-path Graph Transformer fused by a gate, trained with cross-entropy plus a
//! contrastive term that aligns sentence and graph representations ([`model`]).
//!
//! Backends are runtime devices: `Device::flex()` (CPU, the default and what the tests use) or,
//! with the `wgpu` feature, a GPU device; modules carry no backend type.
//!
//! - [`data`]: a WordPiece tokenizer trained on the training text (`tokenizers` crate), amr-graph's concept sequences and
//!   relation-path matrices (context turns merged block-diagonally), padded batches;
//! - [`train`]: Adam with clipping, decay on plateau, early stopping on dev ROC AUC, a checkpoint
//!   every epoch from which a restarted run continues exactly, a JSONL log; [`train::Scorer`].
//!
//! Benches: `cargo bench -p dialeval-benches --bench slm`.

pub mod bert;
pub mod bundle;
pub mod data;
mod error;
pub mod model;
pub mod ruber;
pub mod train;

pub use error::{Error, Result};

pub use model::{GraphBatch, GraphEncoder, GraphEncoderConfig, Mode, Slm, SlmBatch, SlmConfig, SlmOutput, TextEncoder, TextEncoderConfig, contrastive_loss};
