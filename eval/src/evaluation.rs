//! The pipeline as one call: `Evaluation::of(&items).family(..).cache(dir)?.run()?` scores the
//! items, correlates every metric with the human ratings the items carry, and returns a
//! [`Report`] that can be read or written. The human scores, the systems and the response
//! lengths are taken from the items; nothing is derived by hand at the call site.

use std::path::Path;

use dialeval_datasets::DialogueItem;
use dialeval_metrics::report::ReportConfig;

use crate::analysis::{Analysis, HumanScores};
use crate::cache::FamilyCache;
use crate::error::Result;
use crate::family::MetricFamily;
use crate::pipeline::{Event, FamilyRun, Pipeline};
use crate::table::ScoreTable;
use crate::write::Written;

/// An evaluation of `items` being set up; [`Evaluation::run`] runs it.
pub struct Evaluation<'a> {
    items: &'a [DialogueItem],
    pipeline: Pipeline,
    config: ReportConfig,
    observe: Box<dyn Fn(Event<'_>) + Sync + 'a>,
}

impl<'a> Evaluation<'a> {
    /// An evaluation of `items` (AMR attached where wanted) with no family yet, no cache, and
    /// the default analysis (1,000 bootstrap resamples, seeded).
    pub fn of(items: &'a [DialogueItem]) -> Self {
        Self { items, pipeline: Pipeline::new(), config: ReportConfig::default(), observe: Box::new(|_| {}) }
    }

    /// An evaluation of `items` with the families (and cache) of a [`Pipeline`] assembled
    /// elsewhere, e.g. in a loop over user choices.
    pub fn with_pipeline(items: &'a [DialogueItem], pipeline: Pipeline) -> Self {
        Self { pipeline, ..Self::of(items) }
    }

    /// Adds a family (run in the order added).
    #[must_use]
    pub fn family(mut self, family: impl MetricFamily + 'static) -> Self {
        self.pipeline.add(family);
        self
    }

    /// Records a family left out, with the reason the report gives.
    #[must_use]
    pub fn skip(mut self, family: &str, reason: impl Into<String>) -> Self {
        self.pipeline.skip(family, reason);
        self
    }

    /// Caches every family's result in `dir` ([`FamilyCache`]).
    ///
    /// # Errors
    /// [`crate::Error::Io`] when the folder cannot be created.
    pub fn cache(mut self, dir: &Path) -> Result<Self> {
        self.pipeline = self.pipeline.with_cache(FamilyCache::open(dir)?);
        Ok(self)
    }

    /// The analysis settings (bootstrap resamples, confidence, seed).
    #[must_use]
    pub fn analysis(mut self, config: ReportConfig) -> Self {
        self.config = config;
        self
    }

    /// Calls `observe` with every event of the run (progress, notes, cache hits).
    #[must_use]
    pub fn observe(mut self, observe: impl Fn(Event<'_>) + Sync + 'a) -> Self {
        self.observe = Box::new(observe);
        self
    }

    /// Scores the items with every family and analyses the scores.
    ///
    /// # Errors
    /// As [`Pipeline::run`] and [`Analysis::of`].
    pub fn run(self) -> Result<Report<'a>> {
        let scored = self.pipeline.run(self.items, &*self.observe)?;
        Report::analyse(self.items, scored.table, scored.runs, &self.config, &*self.observe)
    }
}

impl<'a> Report<'a> {
    /// The report of a score table of `items` computed elsewhere (the shards' tables put back
    /// together by [`crate::shard::merge`]): the same analysis [`Evaluation::run`] does.
    ///
    /// # Errors
    /// As [`Analysis::of`].
    pub fn analyse(items: &'a [DialogueItem], table: ScoreTable, runs: Vec<FamilyRun>, config: &ReportConfig, observe: &(dyn Fn(Event<'_>) + Sync)) -> Result<Self> {
        let human = HumanScores::of(items);
        let systems: Vec<Option<String>> = items.iter().map(|i| i.system.clone()).collect();
        let lengths: Vec<Option<f64>> = items.iter().map(|i| i.response.as_ref().map(|r| dialeval_common::word_count(&r.text) as f64)).collect();
        let analysis = Analysis::of_with_progress(&table, &human, &systems, &lengths, config, &|done, total| observe(Event::Analysis { done, total }))?;
        Ok(Self { items, table, runs, human, analysis })
    }
}

/// What an [`Evaluation`] produced.
#[derive(Debug)]
pub struct Report<'a> {
    /// The items evaluated.
    pub items: &'a [DialogueItem],
    /// Items × metrics.
    pub table: ScoreTable,
    /// How each family went (status, time, notes).
    pub runs: Vec<FamilyRun>,
    /// The human scores of the items.
    pub human: HumanScores,
    /// Agreement of every metric with them.
    pub analysis: Analysis,
}

impl Report<'_> {
    /// Writes the report files into `dir` ([`crate::write::write_all`]).
    ///
    /// # Errors
    /// As [`crate::write::write_all`].
    pub fn write(&self, dir: &Path) -> Result<Written> {
        crate::write::write_all(dir, self.items, &self.table, &self.human, &self.analysis, &self.runs)
    }
}
