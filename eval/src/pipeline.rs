//! The pipeline: families run in order over a corpus, each result cached as soon as it is
//! finished, into one [`ScoreTable`].

use std::time::Instant;

use dialeval_datasets::DialogueItem;
use serde::{Deserialize, Serialize};

use crate::cache::{CacheKey, FamilyCache, Lookup};
use crate::digest::items_digest;
use crate::error::Result;
use crate::family::{ErasedFamily, FamilyOutput, MetricFamily};
use crate::table::ScoreTable;

/// What the pipeline reports while it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event<'a> {
    /// A family's columns came from the cache.
    Cached {
        /// The family.
        family: &'a str,
        /// Its metrics.
        metrics: usize,
    },
    /// `done` of `total` (metric, quality) cells of the analysis (correlations, intervals,
    /// system level) are finished.
    Analysis {
        /// Cells done.
        done: usize,
        /// Cells in all.
        total: usize,
    },
    /// A family starts computing.
    Started {
        /// The family.
        family: &'a str,
    },
    /// `done` of `total` units of a family's work.
    Progress {
        /// The family.
        family: &'a str,
        /// Units done.
        done: usize,
        /// Units in all.
        total: usize,
    },
    /// A family finished.
    Finished {
        /// The family.
        family: &'a str,
        /// Wall-clock seconds.
        seconds: f64,
    },
    /// A family left out, and why.
    Skipped {
        /// The family.
        family: &'a str,
        /// Why.
        reason: &'a str,
    },
    /// A note of a family (see [`FamilyScores::notes`](crate::FamilyScores::notes)).
    Note {
        /// The family.
        family: &'a str,
        /// The note.
        text: &'a str,
    },
}

/// How one family went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyRun {
    /// The family.
    pub family: String,
    /// What happened.
    pub status: FamilyStatus,
    /// Wall-clock seconds (the cache lookup's when cached).
    pub seconds: f64,
    /// Notes for the report.
    pub notes: Vec<String>,
}

/// What happened to a family.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FamilyStatus {
    /// Computed now (and cached when complete).
    Computed {
        /// Metrics it added.
        metrics: usize,
        /// Whether it was complete and therefore cached.
        cached_for_next_run: bool,
    },
    /// Read from the cache.
    Cached {
        /// Metrics it added.
        metrics: usize,
    },
    /// Left out.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// The scores and how each family went.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// Items × metrics.
    pub table: ScoreTable,
    /// One entry per family, in order.
    pub runs: Vec<FamilyRun>,
}

/// Metric families to run over a corpus, with an optional cache.
#[derive(Default)]
pub struct Pipeline {
    families: Vec<Entry>,
    cache: Option<FamilyCache>,
}

/// A family to run, or one recorded as left out (kept in order for the report).
enum Entry {
    Run(Box<dyn ErasedFamily>),
    Skip { family: String, reason: String },
}

impl Entry {
    fn name(&self) -> &str {
        match self {
            Self::Run(f) => f.name(),
            Self::Skip { family, .. } => family,
        }
    }
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline").field("families", &self.families.iter().map(Entry::name).collect::<Vec<_>>()).field("cache", &self.cache).finish()
    }
}

impl Pipeline {
    /// A pipeline without families or cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Caches every family's result in `cache`.
    #[must_use]
    pub fn with_cache(mut self, cache: FamilyCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Adds a family (run in the order added).
    pub fn add(&mut self, family: impl MetricFamily + 'static) -> &mut Self {
        self.families.push(Entry::Run(Box::new(family)));
        self
    }

    /// Records a family that is not run (left out by the user, or unavailable here), so that
    /// reports list it with the reason.
    pub fn skip(&mut self, family: &str, reason: impl Into<String>) -> &mut Self {
        self.families.push(Entry::Skip { family: family.to_owned(), reason: reason.into() });
        self
    }

    /// Runs every family over `items`, taking each from the cache when its key matches (a
    /// damaged entry is quarantined, noted and recomputed: see [`crate::cache`]).
    ///
    /// # Errors
    /// The first family error, a cache entry that cannot be moved aside or written, or a family
    /// column that does not fit the table (wrong length, non-finite value, a metric name already
    /// taken).
    pub fn run(&self, items: &[DialogueItem], observe: &(dyn Fn(Event<'_>) + Sync)) -> Result<Scored> {
        let digest = items_digest(items)?;
        let mut table = ScoreTable::new(items.len());
        let mut runs = Vec::new();
        for entry in &self.families {
            let f = match entry {
                Entry::Run(f) => f,
                Entry::Skip { family, reason } => {
                    observe(Event::Skipped { family, reason });
                    runs.push(FamilyRun { family: family.clone(), status: FamilyStatus::Skipped { reason: reason.clone() }, seconds: 0.0, notes: Vec::new() });
                    continue;
                }
            };
            let name = f.name();
            let start = Instant::now();
            let settings = f.settings_json()?;
            let version = f.version();
            let key = CacheKey::new(name, version, &settings, &digest)?;
            let mut damage = Vec::new();
            match self.cache.as_ref().map(|c| c.load(name, &key, items.len())).transpose()?.unwrap_or(Lookup::Miss) {
                Lookup::Hit(cached) => {
                    observe(Event::Cached { family: name, metrics: cached.columns.len() });
                    let metrics = cached.columns.len();
                    for c in cached.columns {
                        table.push(c)?;
                    }
                    runs.push(FamilyRun { family: name.to_owned(), status: FamilyStatus::Cached { metrics }, seconds: start.elapsed().as_secs_f64(), notes: cached.notes });
                    continue;
                }
                Lookup::Damaged { path, quarantined, problem } => {
                    let note = format!("the cache entry {} was damaged ({problem}): moved to {} and recomputed", path.display(), quarantined.display());
                    observe(Event::Note { family: name, text: &note });
                    damage.push(note);
                }
                Lookup::Miss => {}
            }
            observe(Event::Started { family: name });
            let output = f.compute(items, &|done, total| observe(Event::Progress { family: name, done, total }))?;
            let seconds = start.elapsed().as_secs_f64();
            match output {
                FamilyOutput::Scored(scores) => {
                    for note in &scores.notes {
                        observe(Event::Note { family: name, text: note });
                    }
                    // Checked by the table before anything is cached: a bad column ends the run.
                    for c in &scores.columns {
                        table.push(c.clone())?;
                    }
                    if scores.complete
                        && let Some(cache) = &self.cache
                    {
                        cache.store(name, version, &key, &settings, &scores.columns, &scores.notes)?;
                    }
                    observe(Event::Finished { family: name, seconds });
                    let status = FamilyStatus::Computed { metrics: scores.columns.len(), cached_for_next_run: scores.complete && self.cache.is_some() };
                    damage.extend(scores.notes);
                    runs.push(FamilyRun { family: name.to_owned(), status, seconds, notes: damage });
                }
                FamilyOutput::Skipped(reason) => {
                    observe(Event::Skipped { family: name, reason: &reason });
                    runs.push(FamilyRun { family: name.to_owned(), status: FamilyStatus::Skipped { reason }, seconds, notes: damage });
                }
            }
        }
        Ok(Scored { table, runs })
    }
}
