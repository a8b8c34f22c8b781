//! Smatch of the response's AMR graph against the references'.

use std::sync::atomic::{AtomicUsize, Ordering};

use dialeval_amr_graph::smatch::{Smatch, SmatchConfig, SmatchTriples};
use dialeval_common::MultiRef;
use dialeval_datasets::DialogueItem;
use dialeval_datasets::amr::AmrIndex;
use serde::Serialize;

use crate::digest::FileDigest;
use crate::error::Result;
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, Note, blank_response, empty_response_note};
use crate::table::Column;

/// Smatch F1 (smatch 1.0.4's hill climbing) between the response graph attached to an item and
/// the graphs of its references, looked up by sentence text in the AMR files the family was
/// given: the best F1 over the references that have a graph ([`Smatch::score_best`]), or the
/// mean F1 with [`MultiRef::Mean`].
pub struct SmatchFamily {
    smatch: Smatch,
    config: SmatchConfig,
    references: AmrIndex,
    files: Vec<FileDigest>,
    rule: MultiRef,
}

/// What the Smatch scores depend on.
#[derive(Debug, Clone, Serialize)]
pub struct SmatchSettings {
    /// The search settings (restarts, seed).
    pub config: SmatchConfig,
    /// The AMR files the reference graphs come from.
    pub files: Vec<FileDigest>,
    /// How the F1 against several reference graphs is combined.
    pub references: MultiRef,
}

impl SmatchFamily {
    /// The family with the reference graphs of `index`, read from `files`.
    ///
    /// # Errors
    /// An invalid configuration or an unreadable file.
    pub fn new(index: &AmrIndex, files: &[std::path::PathBuf], config: SmatchConfig) -> Result<Self> {
        let files = files.iter().map(|f| FileDigest::of(f)).collect::<Result<_>>()?;
        Ok(Self { smatch: Smatch::new(config)?, config, references: index.clone(), files, rule: MultiRef::Max })
    }

    /// The family with another multi-reference rule.
    #[must_use]
    pub fn with_references(self, rule: MultiRef) -> Self {
        Self { rule, ..self }
    }
}

/// One item's Smatch: a value, no graph on a side, or a graph that does not parse (the item
/// is an empty cell, named in a note; the other items are scored).
enum ItemSmatch {
    Scored(Option<f64>),
    Blank,
    NoGraph,
    Malformed(String),
}

impl SmatchFamily {
    /// The item's score, [`ItemSmatch::NoGraph`] without a response graph or a reference graph.
    fn item(&self, item: &DialogueItem) -> ItemSmatch {
        if blank_response(item) {
            return ItemSmatch::Blank;
        }
        let Some(test) = item.response.as_ref().and_then(|r| r.amr.as_deref()) else { return ItemSmatch::NoGraph };
        let mut golds = Vec::new();
        for (k, g) in item.references.iter().enumerate().filter_map(|(k, r)| Some((k, self.references.by_text(r)?))) {
            match SmatchTriples::parse(&g.penman) {
                Ok(t) => golds.push(t),
                Err(e) => return ItemSmatch::Malformed(format!("reference {} graph: {e}", k + 1)),
            }
        }
        if golds.is_empty() {
            return ItemSmatch::NoGraph;
        }
        let test = match SmatchTriples::parse(test) {
            Ok(t) => t,
            Err(e) => return ItemSmatch::Malformed(format!("response graph: {e}")),
        };
        let golds: Vec<&SmatchTriples> = golds.iter().collect();
        ItemSmatch::Scored(match self.rule {
            MultiRef::Max => self.smatch.score_best(&test, &golds).map(|s| s.f1()),
            MultiRef::Mean => MultiRef::Mean.combine(golds.iter().map(|g| self.smatch.score(&test, g).f1())),
        })
    }
}

impl MetricFamily for SmatchFamily {
    type Settings = SmatchSettings;

    fn name(&self) -> &str {
        "smatch"
    }

    /// 2: malformed graphs are empty cells with a note; one graph per side. 3: a blank
    /// response is named; graphs beyond the reader's size limits are malformed.
    fn version(&self) -> &'static str {
        "smatch/3"
    }

    fn settings(&self) -> SmatchSettings {
        SmatchSettings { config: self.config, files: self.files.clone(), references: self.rule }
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let done = AtomicUsize::new(0);
        let values = dialeval_common::par_map(items, |item| {
            let value = self.item(item);
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, items.len());
            value
        });
        let (mut no_graph, mut malformed) = (0, Vec::new());
        let values: Vec<Option<f64>> = values
            .into_iter()
            .zip(items)
            .map(|(v, item)| match v {
                ItemSmatch::Scored(v) => v,
                ItemSmatch::NoGraph => {
                    no_graph += 1;
                    None
                }
                ItemSmatch::Blank => None,
                ItemSmatch::Malformed(why) => {
                    malformed.push(format!("{}: {why}", item.id));
                    None
                }
            })
            .collect();
        let found = values.iter().filter(|v| v.is_some()).count();
        let mut notes = Vec::new();
        if !self.references.malformed.is_empty() {
            let bad: Vec<String> = self.references.malformed.iter().map(ToString::to_string).collect();
            notes.push(Note::text(format!("{} malformed blocks of the AMR files were skipped (their sentences have no graph): {}", bad.len(), bad.join("; "))));
        }
        notes.push(empty_response_note(items));
        notes.push(Note::count("{0} of {1} items lack a response or reference graph and are not scored", &[no_graph, items.len()]));
        notes.push(Note::items("{n} items with a malformed graph are not scored: {names}", &malformed, 5, "; "));
        if found == 0 && malformed.is_empty() {
            return Ok(FamilyOutput::NoneScored { reason: "no item has both a response graph and a reference graph".into(), notes });
        }
        let mut scores = FamilyScores::new(vec![Column::new("Smatch", values)]);
        scores.notes = notes;
        Ok(FamilyOutput::Scored(scores))
    }
}
