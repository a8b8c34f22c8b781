//! # dialeval-eval
//!
//! The evaluation pipeline as a library: score a corpus with metric families and see how each
//! metric agrees with people.
//!
//! ```text
//! items (in memory, or a JSONL stream: ItemSource), chunk by chunk
//!   └─ Pipeline: MetricFamily × n ──(FamilyCache, per chunk, keyed by items + settings)──► ScoreTable
//!        └─ Analysis::of(AnalysisInput { table, human, systems, lengths }) ──► Report::write: Markdown, JSON, CSV, plots
//! ```
//!
//! - [`ScoreTable`]: items × metrics, `Option<f64>` cells, every value finite, metric names as
//!   [`MetricName`].
//! - [`MetricFamily`]: a name, a serialisable settings value holding everything the scores
//!   depend on (configurations, file and checkpoint digests, WordNet found or not, seeds), and
//!   `compute`. The families of the main job are in [`families`]: length, lexical (BLEU, ROUGE,
//!   METEOR), embedding (over any [`TokenEmbedder`](dialeval_common::TokenEmbedder)), Smatch,
//!   the LLM judge (feature `llm`), BERT-RUBER and the SLM (feature `slm`, on burn).
//! - [`Pipeline`]: reads the corpus a chunk at a time ([`ItemSource`]: a slice, or
//!   [`JsonlSource`] streaming a file) and runs the families in order over each chunk, each
//!   chunk taken from or stored in a [`FamilyCache`] under a [`CacheKey`] hashed from the
//!   chunk's items (context, response, references, graphs) and the settings, so a stale result
//!   is never reused and a killed run resumes at the chunk it was in.
//! - [`combination`]: after the families, the fixed `Combined` score (mean of the corpus ranks
//!   of the SLM, BERT-RUBER-unref, Greedy Matching and NIDF; chosen once, fitted to no rating)
//!   and one composite per quality family (`Combined-Coherence`, `Combined-Engagement`).
//! - [`Analysis`]: turn-level Pearson/Spearman/Kendall with p-values and intervals,
//!   system-level correlations, the best metric per criterion, Williams' test against it, and
//!   every metric's Spearman with response length.
//! - [`write`]: the report files; [`plot`] (feature `plots`): heat map and scatter grids.
//! - `parse` (feature `amr-parse`): graphs for the utterances the AMR files do not cover.
//!
//! ```
//! use dialeval_datasets::{Corpus, DialogueItem, Rating, Turn};
//! use dialeval_eval::families::{LengthFamily, LexicalFamily};
//! use dialeval_eval::{Analysis, AnalysisInput, HumanScores, Pipeline};
//!
//! let responses = ["i like cats", "cats are great pets i think", "no", "i have two cats at home", "the weather"];
//! let overall = [3.0, 4.0, 1.0, 5.0, 2.0];
//! let items: Vec<DialogueItem> = responses
//!     .iter()
//!     .zip(overall)
//!     .enumerate()
//!     .map(|(i, (r, o))| DialogueItem {
//!         id: i.to_string(),
//!         corpus: Corpus::Jsonl,
//!         context: vec![Turn::new("do you have pets?")],
//!         response: Some(Turn::new(*r)),
//!         references: vec!["yes , i have two cats".to_owned()],
//!         knowledge: None,
//!         system: None,
//!         annotators: Vec::new(),
//!         ratings: vec![Rating { quality: "Overall".into(), criterion: Some(dialeval_common::Criterion::Overall), scores: vec![Some(o)] }],
//!     })
//!     .collect();
//! let mut pipeline = Pipeline::new();
//! pipeline.add(LengthFamily).add(LexicalFamily::new()?);
//! let scored = pipeline.run(&items, &|_| {})?;
//! assert!(scored.table.column(&"BLEU-4".into()).is_some());
//! let human = HumanScores::of(&items);
//! let config = dialeval_metrics::report::ReportConfig { bootstrap: None, ..Default::default() };
//! let analysis = Analysis::of(AnalysisInput::of(&scored.table, &human, &scored.rows), &config)?;
//! println!("{}", dialeval_eval::write::summary_markdown(&analysis));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod analysis;
pub mod cache;
pub mod combination;
pub mod digest;
mod error;
pub mod evaluation;
pub mod families;
pub mod family;
pub mod lock;
#[cfg(feature = "slm")]
pub mod models;
#[cfg(feature = "amr-parse")]
pub mod parse;
pub mod pipeline;
#[cfg(feature = "plots")]
pub mod plot;
pub mod rows;
pub mod separation;
pub mod settings;
pub mod shard;
pub mod source;
pub mod table;
pub mod write;

pub use analysis::{Analysis, AnalysisInput, HumanScores, HumanScoresBuilder, Quality};
pub use cache::{CacheKey, Cached, Computed, FamilyCache, Lookup, Stored};
pub use error::{Error, Result};
pub use evaluation::{Evaluation, Report};
pub use family::{FamilyOutput, FamilyScores, MetricFamily, ModelKind, ModelUse, Note};
pub use pipeline::{DEFAULT_CHUNK_ITEMS, Event, FamilyRun, FamilyStatus, Pipeline, Scored};
pub use rows::ItemRows;
pub use settings::RunSettings;
pub use source::{ItemSource, JsonlSource};
pub use table::{Column, MetricName, ScoreTable};

#[cfg(test)]
pub(crate) mod tests {
    use dialeval_datasets::{Corpus, DialogueItem, Turn};

    /// An item with these context turns, response and references.
    pub fn item(id: &str, context: &[&str], response: &str, references: &[&str]) -> DialogueItem {
        DialogueItem {
            id: id.to_owned(),
            corpus: Corpus::Jsonl,
            context: context.iter().map(|t| Turn::new(*t)).collect(),
            response: Some(Turn::new(response)),
            references: references.iter().map(|r| (*r).to_owned()).collect(),
            knowledge: None,
            system: None,
            annotators: Vec::new(),
            ratings: Vec::new(),
        }
    }
}
