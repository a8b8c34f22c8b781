//! # dialeval-datasets
//!
//! Typed, validated loaders for the corpora of dialogue evaluation, and builders of training
//! pairs. Every error names the file and the line or JSON path that was wrong; a bad record is
//! reported, never skipped or zero-filled.
//!
//! - [`item`]: the data model ([`DialogueItem`], per-annotator [`Rating`]s mapped onto the shared
//!   [`Criterion`] vocabulary);
//! - loaders: [`usr`], [`fed`], [`ddpp`] (DailyDialog++), [`topical`] (Topical-Chat),
//!   [`grade`], [`jsonl`] (a documented format for your own data), [`dailydialog`] (the
//!   DailyDialog train split, for training);
//! - [`format`]: one name per rated corpus format ([`CorpusFormat`]) and one loader for all;
//! - [`amr`]: PENMAN side files attached to turns by sentence text or id;
//! - [`pairs`]: DailyDialog++, Topical-Chat and Diplomacy training pairs (uniform or
//!   length-matched negatives), deterministic splits;
//! - [`mix`]: the training mix of the reference-free scorers, evaluation sets kept out;
//! - [`negatives`]: negatives retrieved by shared words or sentence vectors for any pairs, and
//!   ablation by kind of negative.
//!
//! ```no_run
//! use dialeval_datasets::{usr, Criterion};
//! let items = usr::load("pc_usr_data.json".as_ref())?;
//! let overall: Vec<f64> = items.iter().filter_map(|i| i.mean(Criterion::Overall)).collect();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod amr;
pub mod dailydialog;
pub mod ddpp;
mod error;
pub mod fed;
pub mod format;
pub mod grade;
pub mod item;
mod json;
pub mod jsonl;
mod lines;
pub mod mix;
pub mod negatives;
pub mod pairs;
pub mod sniff;
pub mod topical;
pub mod usr;

pub use dialeval_common::Criterion;
pub use error::{Error, Place, Result};
pub use format::{CorpusFormat, LoadedCorpus, Selection};
pub use item::{Corpus, DialogueItem, Rating, Turn};
