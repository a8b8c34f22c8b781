//! The pipeline: a corpus read chunk by chunk ([`ItemSource`]), every family run in order over
//! each chunk, each chunk's result cached as soon as it is finished, into one [`ScoreTable`].
//!
//! **Chunks.** Only one chunk of items is in memory at a time (with what the report keeps of
//! every item: [`ItemRows`], [`HumanScores`], the score table). A family's cache entry holds one
//! chunk, keyed by that chunk's items, so a killed run resumes at the chunk it was in, inside
//! every family. A family scores each item on its own ([`MetricFamily::compute`]), so the
//! scores do not depend on the chunk size; what is relative to the corpus is done once, over
//! the whole, in [`MetricFamily::finish`] (which also decides corpus-level conditions, such as
//! whether enough items have a reference for BERT-RUBER's hybrids). The notes of the chunks add
//! up to those of the whole ([`Note`]). `tests/chunks.rs` checks that a corpus scored in chunks
//! of 3 writes the files of one scored whole, byte for byte, and `tests/invariance.rs` checks
//! every chunk size and shard count on random corpora and with the learned families.

use std::time::Instant;

use dialeval_datasets::DialogueItem;
use serde::{Deserialize, Serialize};

use crate::analysis::{HumanScores, HumanScoresBuilder};
use crate::cache::{CacheKey, Computed, FamilyCache, Lookup, Stored};
use crate::digest::ItemsDigest;
use crate::error::{Error, Result};
use crate::family::{ErasedFamily, FamilyOutput, MetricFamily, ModelUse, Note, Whole, merge_notes, shown_notes};
use crate::rows::ItemRows;
use crate::source::ItemSource;
use crate::table::{Column, MetricName, ScoreTable};

/// Items per chunk unless told otherwise: large enough that per-chunk costs (a cache file, a
/// model call) vanish, small enough that a chunk's inputs and intermediate states stay far below
/// a gigabyte.
pub const DEFAULT_CHUNK_ITEMS: usize = 10_000;

/// What the pipeline reports while it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event<'a> {
    /// A chunk of the corpus is read and about to be scored.
    Chunk {
        /// 0-based.
        index: usize,
        /// Items before it.
        first_item: usize,
        /// Items in it.
        items: usize,
        /// Items in the corpus, when known before reading it ([`ItemSource::len_hint`]).
        total: Option<usize>,
    },
    /// A family's columns came from the cache (for the chunk at hand).
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
    /// A family starts computing (the chunk at hand).
    Started {
        /// The family.
        family: &'a str,
    },
    /// `done` of `total` units of a family's work on the chunk at hand.
    Progress {
        /// The family.
        family: &'a str,
        /// Units done.
        done: usize,
        /// Units in all.
        total: usize,
    },
    /// A family finished the chunk at hand.
    Finished {
        /// The family.
        family: &'a str,
        /// Wall-clock seconds.
        seconds: f64,
    },
    /// A family left out, and why (once, at the end, when it could run on no chunk).
    Skipped {
        /// The family.
        family: &'a str,
        /// Why.
        reason: &'a str,
    },
    /// A note of a family (see [`FamilyScores::notes`](crate::FamilyScores::notes)): a damaged
    /// cache entry as it is found, the family's own notes of the whole corpus at the end.
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
    /// Notes for the report: [`FamilyRun::events`], then the shown [`FamilyRun::family_notes`].
    pub notes: Vec<String>,
    /// What happened during this run (a damaged cache entry moved aside and recomputed).
    #[serde(default)]
    pub events: Vec<String>,
    /// The family's own notes of the whole corpus, typed and all of them (shown or not), so
    /// that the runs of a corpus's shards add up to one run's ([`crate::shard::merge`]).
    #[serde(default)]
    pub family_notes: Vec<Note>,
    /// Skipped because these items held nothing it scores (none with a reference, say), not
    /// because it could not run: a shard's such run merges with the other shards' that scored
    /// (its notes still count its items).
    #[serde(default)]
    pub nothing_to_score: bool,
    /// What produced the family's scores (its computation's version and its settings: the
    /// checkpoints with their sha256, the encoder's fingerprint, WordNet's digest, …), so that a
    /// report says what it was made with; `None` for a family left out before it was built.
    #[serde(default)]
    pub provenance: Option<FamilyProvenance>,
    /// The metrics the family gave the table, in order (what a merge of shards checks each
    /// shard's table against).
    #[serde(default)]
    pub metric_names: Vec<MetricName>,
}

/// What produced a family's scores: [`MetricFamily::version`] and [`MetricFamily::settings`]
/// (the value its cache key is made from), as the report writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyProvenance {
    /// The version of the family's computation (`"slm/4"`).
    pub version: String,
    /// Everything the scores depend on besides the items.
    pub settings: serde_json::Value,
    /// The models the scores come from, named ([`crate::MetricFamily::models`]).
    #[serde(default)]
    pub models: Vec<ModelUse>,
}

impl FamilyRun {
    /// A run without notes.
    pub fn new(family: impl Into<String>, status: FamilyStatus, seconds: f64) -> Self {
        Self { family: family.into(), status, seconds, notes: Vec::new(), events: Vec::new(), family_notes: Vec::new(), nothing_to_score: false, provenance: None, metric_names: Vec::new() }
    }

    /// The run with `events` and `family_notes`, its [`FamilyRun::notes`] made from them.
    #[must_use]
    pub fn with_notes(mut self, events: Vec<String>, family_notes: Vec<Note>) -> Self {
        self.set_notes(events, family_notes);
        self
    }

    /// Replaces the run's `events` and `family_notes`, its [`FamilyRun::notes`] made from them.
    pub fn set_notes(&mut self, events: Vec<String>, family_notes: Vec<Note>) {
        self.notes = events.clone();
        self.notes.extend(shown_notes(&family_notes));
        self.events = events;
        self.family_notes = family_notes;
    }
}

/// What happened to a family.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FamilyStatus {
    /// Computed now (and cached when complete), wholly or in part.
    Computed {
        /// Metrics it added.
        metrics: usize,
        /// Whether it was complete and therefore cached.
        cached_for_next_run: bool,
        /// Chunks of the corpus taken from the cache (a resumed run) …
        #[serde(default)]
        chunks_from_cache: usize,
        /// … of this many.
        #[serde(default)]
        chunks: usize,
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

/// The scores, how each family went, and what the report keeps of the items.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// Items × metrics.
    pub table: ScoreTable,
    /// One entry per family, in order.
    pub runs: Vec<FamilyRun>,
    /// Id, system, response and length of every item.
    pub rows: ItemRows,
    /// The items' human scores.
    pub human: HumanScores,
    /// [`items_digest`](crate::digest::items_digest) of all the items read.
    pub digest: String,
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

    /// Runs every family over `items` in chunks of [`DEFAULT_CHUNK_ITEMS`]: see
    /// [`Pipeline::run_source`].
    ///
    /// # Errors
    /// As [`Pipeline::run_source`].
    pub fn run(&self, items: &[DialogueItem], observe: &(dyn Fn(Event<'_>) + Sync)) -> Result<Scored> {
        self.run_source(&items, DEFAULT_CHUNK_ITEMS, observe)
    }

    /// Runs every family over the items of `source`, `chunk_items` at a time, taking each chunk
    /// of each family from the cache when its key matches (a damaged entry is quarantined,
    /// noted and recomputed: see [`crate::cache`]) and storing each chunk computed as soon as
    /// it is finished.
    ///
    /// # Errors
    /// [`Error::Setting`] for a chunk of 0 items; the first read or family error, a cache entry
    /// that cannot be moved aside or written, or a family column that does not fit (wrong length, non-finite value, a metric name taken
    /// twice).
    pub fn run_source(&self, source: &dyn ItemSource, chunk_items: usize, observe: &(dyn Fn(Event<'_>) + Sync)) -> Result<Scored> {
        crate::settings::check_chunk(chunk_items)?;
        let mut states: Vec<Option<State>> = self
            .families
            .iter()
            .map(|e| match e {
                Entry::Run(f) => Ok(Some(State::new(f.settings_json()?))),
                Entry::Skip { .. } => Ok(None),
            })
            .collect::<Result<_>>()?;
        let (mut rows, mut human, mut digest) = (ItemRows::default(), HumanScoresBuilder::default(), ItemsDigest::new());
        let total = source.len_hint();
        let chunks = std::cell::Cell::new(0);
        let mut chunk = |items: &[DialogueItem]| -> Result<()> {
            let index = chunks.get();
            observe(Event::Chunk { index, first_item: rows.len(), items: items.len(), total });
            rows.add(items);
            human.add(items);
            let chunk_digest = digest.add_chunk(items)?;
            for (entry, state) in self.families.iter().zip(&mut states) {
                if let (Entry::Run(f), Some(state)) = (entry, state) {
                    self.run_chunk(f.as_ref(), state, items, &chunk_digest, observe)?;
                }
            }
            chunks.set(index + 1);
            Ok(())
        };
        source.for_each_chunk(chunk_items, &mut chunk)?;
        if chunks.get() == 0 {
            // No items: every family still says what it makes of none (most: skipped).
            chunk(&[])?;
        }
        let mut table = ScoreTable::new(rows.len());
        let mut runs = Vec::new();
        for (entry, state) in self.families.iter().zip(states) {
            match (entry, state) {
                (Entry::Run(f), Some(state)) => runs.push(state.finish(f.as_ref(), &mut table, self.cache.is_some(), observe)?),
                (Entry::Skip { family, reason }, _) => {
                    observe(Event::Skipped { family, reason });
                    runs.push(FamilyRun::new(family.clone(), FamilyStatus::Skipped { reason: reason.clone() }, 0.0));
                }
                (Entry::Run(_), None) => {}
            }
        }
        // A part's family ran when it was added (not left out), even if it scored no item.
        let table = crate::combination::with_combinations(table, |family| self.families.iter().any(|e| matches!(e, Entry::Run(f) if f.name() == family)))?;
        Ok(Scored { table, runs, rows, human: human.finish(), digest: digest.finish() })
    }

    /// One family over one chunk: from the cache, or computed (and stored when complete).
    fn run_chunk(&self, f: &dyn ErasedFamily, state: &mut State, items: &[DialogueItem], chunk_digest: &str, observe: &(dyn Fn(Event<'_>) + Sync)) -> Result<()> {
        // A stop asked for (Ctrl-C in Python) ends the run between families; the chunks and
        // families finished are in the cache.
        if dialeval_common::interrupt::requested() {
            return Err(Error::Interrupted);
        }
        let name = f.name();
        let start = Instant::now();
        let version = f.version();
        let key = CacheKey::new(name, version, &state.settings, chunk_digest)?;
        state.chunks += 1;
        match self.cache.as_ref().map(|c| c.load(name, &key, items.len())).transpose()?.unwrap_or(Lookup::Miss) {
            Lookup::Hit(cached) => {
                observe(Event::Cached { family: name, metrics: cached.columns.len() });
                state.from_cache += 1;
                state.add(cached.columns, cached.notes, items.len())?;
                state.seconds += start.elapsed().as_secs_f64();
                return Ok(());
            }
            Lookup::Damaged { path, quarantined, problem } => {
                let note = format!("the cache entry {} was damaged ({problem}): moved to {} and recomputed", path.display(), quarantined.display());
                observe(Event::Note { family: name, text: &note });
                state.damage.push(note);
            }
            Lookup::Miss => {}
        }
        observe(Event::Started { family: name });
        let output = f.compute(items, &|done, total| observe(Event::Progress { family: name, done, total }))?;
        state.computed += 1;
        match output {
            FamilyOutput::Scored(scores) => {
                // Checked before anything is cached: a bad column ends the run.
                let mut check = ScoreTable::new(items.len());
                for c in &scores.columns {
                    check.push(c.clone())?;
                }
                if scores.complete
                    && let Some(cache) = &self.cache
                {
                    cache.store(&Computed { family: name, version, settings: &state.settings }, &key, &Stored { columns: &scores.columns, notes: &scores.notes })?;
                }
                state.complete &= scores.complete;
                state.add(scores.columns, scores.notes, items.len())?;
            }
            FamilyOutput::NoneScored { reason, notes } => {
                state.add(Vec::new(), notes, items.len())?;
                state.none_scored.get_or_insert(reason);
            }
            FamilyOutput::Skipped(reason) => state.skip(reason, items.len()),
        }
        let seconds = start.elapsed().as_secs_f64();
        state.seconds += seconds;
        observe(Event::Finished { family: name, seconds });
        Ok(())
    }
}

/// A family's columns and notes as its chunks come in.
struct State {
    settings: serde_json::Value,
    columns: Vec<Column>,
    /// Items added so far (every column has this many cells).
    items: usize,
    notes: Vec<Note>,
    damage: Vec<String>,
    seconds: f64,
    chunks: usize,
    from_cache: usize,
    computed: usize,
    complete: bool,
    /// The first reason a chunk was skipped, and the items of skipped chunks.
    skipped: Option<(String, usize)>,
    /// Why the first chunk with nothing to score had none.
    none_scored: Option<String>,
}

impl State {
    fn new(settings: serde_json::Value) -> Self {
        Self { settings, columns: Vec::new(), items: 0, notes: Vec::new(), damage: Vec::new(), seconds: 0.0, chunks: 0, from_cache: 0, computed: 0, complete: true, skipped: None, none_scored: None }
    }

    /// A scored chunk of `n` items: its columns appended by metric name (a metric first seen
    /// now has no values for the items before; one the chunk lacks has none for its items).
    fn add(&mut self, columns: Vec<Column>, notes: Vec<Note>, n: usize) -> Result<()> {
        let before = self.items;
        for c in columns {
            if c.values.len() != n {
                return Err(Error::Column { metric: c.metric.to_string(), problem: format!("{} values for a chunk of {n} items", c.values.len()) });
            }
            match self.columns.iter_mut().find(|have| have.metric == c.metric) {
                Some(have) if have.values.len() == before => have.values.extend(c.values),
                Some(_) => return Err(Error::Column { metric: c.metric.to_string(), problem: "given twice by one chunk".into() }),
                None => {
                    let mut values = vec![None; before];
                    values.extend(c.values);
                    self.columns.push(Column::new(c.metric, values));
                }
            }
        }
        self.items += n;
        for have in &mut self.columns {
            have.values.resize(self.items, None);
        }
        merge_notes(&mut self.notes, notes);
        Ok(())
    }

    /// A chunk of `n` items the family could not score.
    fn skip(&mut self, reason: String, n: usize) {
        self.items += n;
        for have in &mut self.columns {
            have.values.resize(self.items, None);
        }
        match &mut self.skipped {
            Some((_, items)) => *items += n,
            None => self.skipped = Some((reason, n)),
        }
    }

    /// The family's run, its columns (put through [`MetricFamily::finish`]) in `table`.
    fn finish(self, f: &dyn ErasedFamily, table: &mut ScoreTable, cached: bool, observe: &(dyn Fn(Event<'_>) + Sync)) -> Result<FamilyRun> {
        let family = f.name().to_owned();
        let events = self.damage;
        let provenance = Some(FamilyProvenance { version: f.version().to_owned(), settings: self.settings, models: f.models() });
        if self.columns.is_empty()
            && let Some(reason) = self.skipped.as_ref().map(|(r, _)| r.clone()).or(self.none_scored)
        {
            observe(Event::Skipped { family: &family, reason: &reason });
            let mut run = FamilyRun::new(family, FamilyStatus::Skipped { reason }, self.seconds).with_notes(events, Vec::new());
            run.provenance = provenance;
            if self.skipped.is_none() {
                // Nothing to score anywhere: the report shows only why, but the notes are kept
                // typed, so that a shard's run adds its items to the other shards' notes.
                run.nothing_to_score = true;
                run.family_notes = self.notes;
            }
            return Ok(run);
        }
        let mut own = self.notes;
        if let Some((reason, items)) = self.skipped {
            own.push(Note::count(format!("{{0}} items are in chunks of the corpus where the family could not run ({reason}) and are not scored"), &[items]));
        }
        let Whole { columns, notes: own } = f.finish(Whole { columns: self.columns, notes: own })?;
        for note in shown_notes(&own) {
            observe(Event::Note { family: &family, text: &note });
        }
        let metrics = columns.len();
        let metric_names = columns.iter().map(|c| c.metric.clone()).collect();
        for c in columns {
            table.push(c)?;
        }
        let status = if self.computed == 0 {
            FamilyStatus::Cached { metrics }
        } else {
            FamilyStatus::Computed { metrics, cached_for_next_run: self.complete && cached, chunks_from_cache: self.from_cache, chunks: self.chunks }
        };
        Ok(FamilyRun { provenance, metric_names, ..FamilyRun::new(family, status, self.seconds) }.with_notes(events, own))
    }
}
