//! # dialeval-common
//!
//! The small vocabulary several dialeval crates must agree on, kept in one tiny crate so that no
//! crate has to depend on another's internals (see `ARCHITECTURE.md`), one topic per module and
//! every item re-exported here:
//!
//! - [`embed`]: [`SentenceEmbedder`] and [`TokenEmbedder`], what an encoder (the burn BERT of
//!   `dialeval-slm-model`, an ONNX model, a fixed table in a test) offers to the embedding
//!   metrics of `dialeval-metrics`;
//! - [`criterion`]: [`Criterion`], the evaluation criteria shared by datasets, prompts and
//!   reports;
//! - [`multiref`]: [`MultiRef`], how a referenced metric combines several references;
//! - [`parallel`]: [`par_map`], [`par_join`] and [`threads`] (rayon with the `parallel`
//!   feature, identical results on any number of threads);
//! - [`rng`]: [`SplitMix64`], the seedable generator behind every reproducible draw;
//! - [`auc`]: [`roc_auc`] and [`both_classes`] with [`AucError`];
//! - [`words`]: [`word_count`], the unit of every length figure;
//! - [`amr_limits`]: the size limits of one AMR graph every crate applies;
//! - [`interrupt`]: a cooperative stop for long work (Ctrl-C in Python).

pub mod amr_limits;
pub mod auc;
pub mod criterion;
pub mod embed;
pub mod interrupt;
pub mod multiref;
pub mod parallel;
pub mod rng;
pub mod words;

pub use auc::{AucError, both_classes, roc_auc};
pub use criterion::{Criterion, UnknownCriterion};
pub use embed::{EmbedError, SentenceEmbedder, TokenEmbedder, TokenEmbeddings};
pub use multiref::MultiRef;
pub use parallel::{par_join, par_map, threads};
pub use rng::SplitMix64;
pub use words::word_count;
