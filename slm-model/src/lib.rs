//! # dialeval-slm-model
//!
//! The small model (SLM) of the AMR-enhanced evaluator on burn 0.22: a text Transformer and a
//! relation-path Graph Transformer fused by a gate, trained with cross-entropy plus a
//! contrastive term that aligns sentence and graph representations ([`model`]).
//!
//! Backends are runtime devices: `Device::flex()` (CPU, the default and what the tests use) or,
//! with the `wgpu` feature, a GPU device; modules carry no backend type.
//!
//! Status: the model, its loss and a seeded training step exist and are tested on flex; the
//! data pipeline (tokenizer, AMR batching), the training loop with checkpoints and the wgpu tests
//! are the next steps (see the issue tracker).

pub mod data;
mod error;
pub mod model;
pub mod train;

pub use error::{Error, Result};

pub use model::{GraphBatch, GraphEncoder, GraphEncoderConfig, Mode, Slm, SlmBatch, SlmConfig, SlmOutput, TextEncoder, TextEncoderConfig, contrastive_loss};
