//! The pipeline as one call: `Evaluation::of(&items).family(..).cache(dir)?.run()?` scores the
//! items, correlates every metric with the human ratings the items carry, and returns a
//! [`Report`] that can be read or written. The human scores, the systems and the response
//! lengths are taken from the items; nothing is derived by hand at the call site. The items
//! may be a slice or any [`ItemSource`] (a JSONL file streamed chunk by chunk: `of_source`).

use std::path::Path;

use dialeval_datasets::DialogueItem;
use dialeval_metrics::report::ReportConfig;

use crate::analysis::{Analysis, AnalysisInput, HumanScores};
use crate::cache::FamilyCache;
use crate::error::Result;
use crate::family::MetricFamily;
use crate::pipeline::{DEFAULT_CHUNK_ITEMS, Event, FamilyRun, Pipeline, Scored};
use crate::rows::ItemRows;
use crate::settings::RunSettings;
use crate::shard::Merged;
use crate::source::ItemSource;
use crate::table::ScoreTable;
use crate::write::Written;

/// The items of an [`Evaluation`].
enum Source<'a> {
    Slice(&'a [DialogueItem]),
    Dyn(&'a dyn ItemSource),
}

/// An evaluation of a corpus being set up; [`Evaluation::run`] runs it.
pub struct Evaluation<'a> {
    source: Source<'a>,
    chunk_items: usize,
    pipeline: Pipeline,
    config: ReportConfig,
    /// The settings given whole ([`Evaluation::settings`]), checked when it runs.
    checked: Option<RunSettings>,
    observe: Box<dyn Fn(Event<'_>) + Sync + 'a>,
}

impl<'a> Evaluation<'a> {
    /// An evaluation of `items` (AMR attached where wanted) with no family yet, no cache, and
    /// the default analysis (1,000 bootstrap resamples, seeded).
    pub fn of(items: &'a [DialogueItem]) -> Self {
        Self::new(Source::Slice(items))
    }

    /// An evaluation of the items of `source`, read a chunk at a time
    /// ([`DEFAULT_CHUNK_ITEMS`] unless [`Evaluation::chunk_items`] says otherwise).
    pub fn of_source(source: &'a dyn ItemSource) -> Self {
        Self::new(Source::Dyn(source))
    }

    fn new(source: Source<'a>) -> Self {
        Self { source, chunk_items: DEFAULT_CHUNK_ITEMS, pipeline: Pipeline::new(), config: ReportConfig::default(), checked: None, observe: Box::new(|_| {}) }
    }

    /// The families (and cache) of `pipeline` instead of those added so far.
    #[must_use]
    pub fn pipeline(mut self, pipeline: Pipeline) -> Self {
        self.pipeline = pipeline;
        self
    }

    /// Items per chunk: each family scores and caches this many at a time (the scores are the
    /// same for any size; memory and the work a killed run loses grow with it). At least 1:
    /// [`Evaluation::run`] refuses 0 ([`crate::Error::Setting`]).
    #[must_use]
    pub fn chunk_items(mut self, n: usize) -> Self {
        self.chunk_items = n;
        self
    }

    /// The chunk size and analysis of `settings` ([`RunSettings`], checked when the evaluation
    /// runs).
    #[must_use]
    pub fn settings(mut self, settings: &RunSettings) -> Self {
        self.chunk_items = settings.chunk;
        self.config = settings.unchecked_report_config();
        self.checked = Some(*settings);
        self
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
        self.checked = None;
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
    /// [`crate::Error::Setting`] for a bad setting, before any item is read; otherwise as
    /// [`Pipeline::run`] and [`Analysis::of`].
    pub fn run(self) -> Result<Report> {
        match &self.checked {
            Some(settings) => settings.check()?,
            None => crate::settings::check_report(&self.config)?,
        }
        crate::settings::check_chunk(self.chunk_items)?;
        let source: &dyn ItemSource = match &self.source {
            Source::Slice(items) => items,
            Source::Dyn(source) => *source,
        };
        let scored = self.pipeline.run_source(source, self.chunk_items, &*self.observe)?;
        Report::analyse(scored, &self.config, &*self.observe)
    }
}

impl Report {
    /// The report of a score table computed elsewhere (the shards' tables put back together by
    /// [`crate::shard::merge`], with the rows and human scores of the corpus): the same
    /// analysis [`Evaluation::run`] does.
    ///
    /// # Errors
    /// [`crate::Error::Setting`] for a bad configuration; otherwise as [`Analysis::of`].
    pub fn analyse(scored: Scored, config: &ReportConfig, observe: &(dyn Fn(Event<'_>) + Sync)) -> Result<Self> {
        let Scored { table, runs, rows, human, .. } = scored;
        Self::of_parts(table, runs, rows, human, config, observe)
    }

    /// [`Report::analyse`] of the whole corpus put back together from its shards by
    /// [`crate::shard::merge_placed`].
    ///
    /// # Errors
    /// As [`Report::analyse`].
    pub fn analyse_merged(merged: Merged, config: &ReportConfig, observe: &(dyn Fn(Event<'_>) + Sync)) -> Result<Self> {
        let Merged { rows, human, table, runs } = merged;
        Self::of_parts(table, runs, rows, human, config, observe)
    }

    fn of_parts(table: ScoreTable, runs: Vec<FamilyRun>, rows: ItemRows, human: HumanScores, config: &ReportConfig, observe: &(dyn Fn(Event<'_>) + Sync)) -> Result<Self> {
        crate::settings::check_report(config)?;
        let analysis = Analysis::of_with_progress(AnalysisInput::of(&table, &human, &rows), config, &|done, total| observe(Event::Analysis { done, total }))?;
        Ok(Self { rows, table, runs, human, analysis })
    }
}

/// What an [`Evaluation`] produced.
#[derive(Debug)]
pub struct Report {
    /// Id, system, response and length of the items evaluated.
    pub rows: ItemRows,
    /// Items × metrics.
    pub table: ScoreTable,
    /// How each family went (status, time, notes).
    pub runs: Vec<FamilyRun>,
    /// The human scores of the items.
    pub human: HumanScores,
    /// Agreement of every metric with them.
    pub analysis: Analysis,
}

impl Report {
    /// Writes the report files into `dir` ([`crate::write::write_all`]).
    ///
    /// # Errors
    /// As [`crate::write::write_all`].
    pub fn write(&self, dir: &Path) -> Result<Written> {
        crate::write::write_all(dir, self)
    }
}
