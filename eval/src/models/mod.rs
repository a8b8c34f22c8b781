//! The learned scorers' plumbing (feature `slm`), one module per job:
//!
//! - [`bundle`]: the encoder, memo and cache loaded once, and the families built on them;
//! - [`checkpoint`]: a checkpoint's identity in cache keys and where it comes from;
//! - [`vectors`]: the shared token-state cache of a pretrained encoder;
//! - [`inputs`]: SLM inputs from corpus items, scored with the vectors they need;
//! - [`recipes`]: the main job's retraining recipes;
//! - [`mix`]: the training mix of the trainer commands from a `../shared` folder, the held-out
//!   graph test, a run's data-settings record;
//! - [`slm_training`], [`ruber_training`], [`fine_tuning`]: the trainer commands' jobs
//!   (`train-slm`, `train-ruber`, `fine-tune`), each from one typed settings value, and
//!   [`training`], what they share;
//! - [`job`]: the main job's families chosen by name, each added or skipped with its reason;
//! - [`main_job`] (feature `llm` too): the main job in one place, from one typed settings value.
//!
//! Their items are re-exported here, with [`Compute`], the device choice of every model.

pub mod bundle;
pub mod checkpoint;
pub mod fine_tuning;
pub mod inputs;
pub mod job;
#[cfg(feature = "llm")]
pub mod main_job;
pub mod mix;
pub mod recipes;
pub mod ruber_training;
pub mod slm_training;
pub mod training;
pub mod vectors;

pub use bundle::{Built, EncoderSide, ModelBundle, ModelSettings};
pub use checkpoint::{CheckpointIdentity, ModelRequest, ModelSource, Retrain, shipped};
pub use dialeval_slm_model::compute::Compute;
pub use inputs::{fill_pair_texts, score_items, score_slm_pairs, slm_pair, trained_encoder};
pub use job::{FamilyName, JobFamilies, JobObserver, add_families};
pub use recipes::{DdppSlmPairs, RetrainData, SlmPairing, ddpp_slm_pairs, mix_triples, positives_triples, random_negative_triples, retrieved_triples, sampled_triples, split_contexts};
pub use vectors::{SharedCache, default_cache_dir, encoder_cache};
