//! A corpus split across machines: each of `n` shards scores the items whose id hashes to it
//! ([`Shard`]), leaves its score table in `shard.json` ([`ShardScores`]), and [`merge`] puts
//! the tables back together in corpus order, so that the merged report is the one a single
//! machine would have written. Each shard carries its items' rows; the main job's shards also
//! say where their items are in the corpus file and carry their ratings ([`Placement`]), so
//! that its merge ([`merge_placed`]) reads the shards and only the bytes of the corpus, never
//! parses it: the merge on one machine stays small beside shards on many.
//!
//! **Exactness.** A family whose score of an item depends on that item alone (length,
//! lexical, Smatch, the embedding metrics, BERT-RUBER's unreferenced and referenced scores, the
//! SLM, the LLM judge) gives the same bits in a shard as in a whole run, and the analysis of
//! the merged table is the same computation on the same numbers: `scores.jsonl`, `scores.csv`,
//! `correlations.md` and `correlations.json` are byte for byte those of a single run
//! (`tests/shard.rs`). BERT-RUBER's hybrids are normalised over the corpus, so the merge
//! recomputes them from the merged unreferenced and referenced columns, and whether there are
//! enough items for them at all is decided over the merged corpus too
//! ([`crate::families::ruber::recompute_hybrids`]). MiniLM batches only sentences of equal
//! token length, so a sentence's states do not depend on its batch neighbours, and the learned
//! scorers (the SLM, BERT-RUBER's unreferenced model, the fine-tuned encoder) score one item at
//! a time, so no padding or batch shape depends on the cut. `tests/invariance.rs` checks every
//! chunk size and 1 to 5 shards on random corpora with and without references, and the
//! learned families on real turns; `scripts/check_examples.py` merges the bundled
//! USR-PersonaChat from 3 shards. `report.md` is a single run's too, but for the seconds of its
//! family table (the shards' times added: a measurement, never the same twice): the families'
//! notes are kept typed in `shard.json` and added up as a single run adds up its chunks'.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use dialeval_datasets::{CorpusFormat, DialogueItem, Rating};
use serde::{Deserialize, Serialize};

use crate::analysis::HumanScores;
use crate::error::{Error, Result};
use crate::family::{Note, merge_notes};
use crate::pipeline::{FamilyRun, FamilyStatus};
use crate::rows::ItemRows;
use crate::table::{Column, MetricName, ScoreTable};

/// Shard `index` (1-based) of `of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1 ..= `of`.
    pub index: usize,
    /// Shards in all.
    pub of: usize,
}

impl Shard {
    /// Whether the item `id` belongs to this shard: FNV-1a (64 bit) of the id, modulo `of`; the
    /// same on every machine and independent of the item's position in the file.
    pub fn contains(&self, id: &str) -> bool {
        Self::holding(id, self.of).index == self.index
    }

    /// The shard of `of` (at least 1) that holds the item `id` ([`Shard::contains`]).
    pub fn holding(id: &str, of: usize) -> Self {
        let of = of.max(1);
        let h = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        Self { index: (h % of as u64) as usize + 1, of }
    }

    /// This shard's items, in corpus order.
    pub fn select(&self, items: &[DialogueItem]) -> Vec<DialogueItem> {
        items.iter().filter(|i| self.contains(&i.id)).cloned().collect()
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

impl FromStr for Shard {
    type Err = Error;

    /// `k/n` with 1 ≤ k ≤ n.
    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::Config(format!("shard {s:?}: expected k/n with 1 <= k <= n (e.g. 2/8)"));
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, of) = (k.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
        if index == 0 || index > of {
            return Err(bad());
        }
        Ok(Self { index, of })
    }
}

/// What a shard's run leaves for [`merge`] (`shard.json` in its output folder).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardScores {
    /// Which shard.
    pub shard: Shard,
    /// [`items_digest`](crate::digest::items_digest) of the shard's items (graphs attached), which
    /// [`merge`] checks against the same items of the corpus it is given (the main job's
    /// [`merge_placed`] checks the corpus file's bytes instead: [`ShardScores::placement`]).
    /// Empty in a `shard.json` of an earlier version (which held the whole corpus's digest
    /// instead): the merge asks for the shard to be scored again.
    #[serde(default)]
    pub digest: String,
    /// The shard's item ids, in corpus order (one row of `columns` each).
    pub ids: Vec<String>,
    /// Each item's system, where named (the run's [`ItemRows::systems`]).
    #[serde(default)]
    pub systems: Vec<Option<String>>,
    /// Each item's response text, `None` for a dialogue-level item (the run's
    /// [`ItemRows::responses`]).
    #[serde(default)]
    pub responses: Vec<Option<String>>,
    /// Its score table.
    pub columns: Vec<Column>,
    /// How each family went.
    pub runs: Vec<FamilyRun>,
    /// Where its items are in the corpus file, and their ratings: with the rows above, what
    /// lets [`merge_placed`] merge without reading the corpus again. Written by
    /// the main job's shards; `None` for a shard of items in memory ([`ShardScores::of`]) and
    /// in a `shard.json` of an earlier version.
    #[serde(default)]
    pub placement: Option<Placement>,
}

/// Where a shard's items are in the corpus file it was cut from, and their ratings
/// ([`ShardScores::placement`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// The corpus file: the sha256 of its bytes and its number of items (all shards').
    pub corpus: CorpusPrint,
    /// The sha256 of each AMR file the items' graphs were read from, in the order given.
    pub amr: Vec<String>,
    /// Each item's place among the corpus's items (0-based), ascending; one per id.
    pub positions: Vec<usize>,
    /// Each item's human ratings.
    pub ratings: Vec<Vec<Rating>>,
}

/// The identity of a corpus file for a merge: its format, the sha256 of its bytes and its
/// items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusPrint {
    /// The format it was read in (one file reads as other items in another: FED's turns or
    /// dialogues).
    pub format: CorpusFormat,
    /// sha256 of the file's bytes, hex.
    pub sha256: String,
    /// Items in the file.
    pub items: usize,
}

impl Placement {
    /// No items yet, of the corpus file `corpus` (its item count as far as it has been read),
    /// with graphs from the AMR files of sha256 `amr`.
    pub fn new(corpus: CorpusPrint, amr: Vec<String>) -> Self {
        Self { corpus, amr, positions: Vec::new(), ratings: Vec::new() }
    }

    /// Adds the ratings of `items`, the next of the shard (their positions are added to
    /// [`Placement::positions`] as they are found; their rows are the run's).
    pub fn add(&mut self, items: &[DialogueItem]) {
        self.ratings.extend(items.iter().map(|i| i.ratings.clone()));
    }
}

/// The file name of a shard's scores in its output folder.
pub const SHARD_FILE: &str = "shard.json";

impl ShardScores {
    /// The scores of `shard`'s items (in corpus order, as [`Shard::contains`] picked them),
    /// from the `report` of their run; `digest` is the
    /// [`items_digest`](crate::digest::items_digest) of those items (as scored: graphs attached).
    ///
    /// # Errors
    /// [`Error::Column`] when the table does not have one row per item.
    pub fn of(shard: Shard, digest: &str, report: &crate::Report) -> Result<Self> {
        Self::from_parts(shard, digest, &report.rows, &report.table, &report.runs)
    }

    /// [`ShardScores::of`] the scores of a run that was not analysed (what the main job's
    /// `MainJob::score_shard` keeps), with the digest of the items the run read.
    ///
    /// # Errors
    /// [`Error::Column`] when the table does not have one row per item.
    pub fn of_scored(shard: Shard, scored: &crate::Scored) -> Result<Self> {
        Self::from_parts(shard, &scored.digest, &scored.rows, &scored.table, &scored.runs)
    }

    fn from_parts(shard: Shard, digest: &str, rows: &ItemRows, table: &crate::ScoreTable, runs: &[crate::FamilyRun]) -> Result<Self> {
        if table.items() != rows.len() {
            return Err(Error::Column { metric: "<table>".into(), problem: format!("{} rows for the {} items of shard {shard}", table.items(), rows.len()) });
        }
        Ok(Self {
            shard,
            digest: digest.to_owned(),
            ids: rows.ids.clone(),
            systems: rows.systems.clone(),
            responses: rows.responses.clone(),
            columns: table.columns().to_vec(),
            runs: runs.to_vec(),
            placement: None,
        })
    }

    /// These scores with `placement`, the place of their items in the corpus file.
    ///
    /// # Errors
    /// [`Error::Column`] when `placement` does not have one entry per item.
    pub fn placed(mut self, placement: Placement) -> Result<Self> {
        let n = self.ids.len();
        let lengths = [placement.positions.len(), placement.ratings.len()];
        if lengths.iter().any(|&l| l != n) {
            return Err(Error::Column { metric: "<placement>".into(), problem: format!("{lengths:?} entries for the {n} items of shard {}", self.shard) });
        }
        self.placement = Some(placement);
        Ok(self)
    }

    /// Writes `dir/shard.json`.
    ///
    /// # Errors
    /// [`Error::Io`], [`Error::Json`].
    pub fn write(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(SHARD_FILE);
        crate::cache::write_atomic_with(&path, |w| serde_json::to_writer(w, self).map_err(std::io::Error::other))
    }

    /// Reads `dir/shard.json`.
    ///
    /// # Errors
    /// [`Error::Io`], [`Error::Json`] naming the file.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(SHARD_FILE);
        let file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| Error::json(&path, e))
    }
}

/// The [`items_digest`](crate::digest::items_digest) of each shard's items of a corpus read a
/// chunk at a time: what each shard's [`ShardScores::digest`] must be for [`merge`].
#[derive(Debug, Clone)]
pub struct ShardDigests {
    digests: Vec<crate::digest::ItemsDigest>,
}

impl ShardDigests {
    /// For a split into `of` shards (at least 1).
    pub fn new(of: usize) -> Self {
        Self { digests: vec![crate::digest::ItemsDigest::new(); of.max(1)] }
    }

    /// Adds the next items of the corpus, each to its shard's digest.
    ///
    /// # Errors
    /// As [`crate::digest::ItemsDigest::add`].
    pub fn add(&mut self, items: &[DialogueItem]) -> Result<()> {
        let of = self.digests.len();
        for item in items {
            self.digests[Shard::holding(&item.id, of).index - 1].add(std::slice::from_ref(item))?;
        }
        Ok(())
    }

    /// The digests, shard 1 first.
    pub fn finish(self) -> Vec<String> {
        self.digests.into_iter().map(crate::digest::ItemsDigest::finish).collect()
    }

    /// The digests of `items` (a whole corpus) cut into `of` shards.
    ///
    /// # Errors
    /// As [`crate::digest::ItemsDigest::add`].
    pub fn of_items(items: &[DialogueItem], of: usize) -> Result<Vec<String>> {
        let mut digests = Self::new(of);
        digests.add(items)?;
        Ok(digests.finish())
    }
}

/// The score table of the corpus with item ids `ids` (in its order, from a
/// [`Pipeline`](crate::Pipeline) run without families over it: [`crate::Scored`]) and
/// per-shard item digests `digests` ([`ShardDigests`] over the same pass, shard 1 first), from
/// the tables of all its shards, and the family runs (seconds added, the families' notes added
/// up as one run's, each shard's events prefixed with the shard). The merge of shards of items
/// in memory; the main job's shards, which know where their items are in the corpus file,
/// merge without it ([`merge_placed`]).
///
/// # Errors
/// [`Error::Config`] when the shards are not exactly 1..=n of one split of this corpus (a
/// shard's items differ from the corpus's items of that shard: another corpus, other AMR, or a
/// `shard.json` of an earlier version), an item
/// is in no shard or in two, or a family could not run in one shard but ran in another (a
/// metric that a shard lacks only because its items have nothing for it, BERT-RUBER-ref in a
/// shard without references, is empty there, as in a single run).
pub fn merge(ids: &[String], digests: &[String], shards: &[ShardScores]) -> Result<(ScoreTable, Vec<FamilyRun>)> {
    let of = check_split(shards)?;
    if digests.len() != of {
        return Err(Error::Config(format!("merge: {} item digests for a split into {of} shards", digests.len())));
    }
    for s in shards {
        if s.digest.is_empty() {
            return Err(Error::Config(format!("merge: shard {}'s shard.json was written by an earlier version of dialeval (it has no digest of its items): score the shard again", s.shard)));
        }
        if s.digest != digests[s.shard.index - 1] {
            return Err(Error::Config(format!("merge: shard {} was cut from another corpus (or other AMR) than the one given: its items differ from the corpus's items of that shard", s.shard)));
        }
    }
    merge_tables(ids, shards)
}

/// What [`merge_placed`] puts back together: a whole run's rows, human scores, score table and
/// family runs.
#[derive(Debug)]
pub struct Merged {
    /// Id, system, response and length of every item of the corpus, in its order.
    pub rows: ItemRows,
    /// The items' human scores.
    pub human: HumanScores,
    /// Items × metrics.
    pub table: ScoreTable,
    /// One entry per family, as [`merge`] gives them.
    pub runs: Vec<FamilyRun>,
}

/// The whole corpus's rows, human scores, score table and family runs from its shards'
/// [`Placement`]s, without reading the corpus: what [`merge`] gives, with the rows and human
/// scores a run over the corpus file gives. `corpus_sha256` is the sha256 of the corpus file's
/// bytes, read in `format` (every shard must have been cut from that file, read so) and `amr`
/// the sha256 of each AMR file given (every shard's graphs must come from those). The shards'
/// positions must cover the corpus's items exactly once.
///
/// # Errors
/// As [`merge`]; [`Error::Config`] when a shard has no placement (a `shard.json` of an earlier
/// version), was cut from another corpus file or scored with other AMR files, or the shards'
/// items are not each of the corpus's items once.
pub fn merge_placed(format: CorpusFormat, corpus_sha256: &str, amr: &[String], shards: &[ShardScores]) -> Result<Merged> {
    check_split(shards)?;
    let mut placed = Vec::with_capacity(shards.len());
    for s in shards {
        let Some(p) = &s.placement else {
            return Err(Error::Config(format!(
                "merge: shard {}'s shard.json was written by an earlier version of dialeval (it does not say where its items are in the corpus): score the shard again",
                s.shard
            )));
        };
        if p.corpus.format != format {
            return Err(Error::Config(format!("merge: shard {} read the corpus as {} (--corpus), the merge as {format}", s.shard, p.corpus.format)));
        }
        if p.corpus.sha256 != corpus_sha256 {
            return Err(Error::Config(format!("merge: shard {} was cut from another corpus than the one given (the file's bytes differ)", s.shard)));
        }
        if p.amr != amr {
            return Err(Error::Config(format!(
                "merge: shard {} was scored with other AMR files ({} of them) than the {} given to the merge (give the merge the shards' --amr files, in their order)",
                s.shard,
                p.amr.len(),
                amr.len()
            )));
        }
        let n = s.ids.len();
        if [p.positions.len(), p.ratings.len(), s.systems.len(), s.responses.len()].iter().any(|&l| l != n) || p.positions.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::Config(format!("merge: shard {}'s placement does not fit its {n} items (a damaged shard.json?)", s.shard)));
        }
        placed.push(p);
    }
    let items = placed[0].corpus.items;
    if let Some((s, _)) = shards.iter().zip(&placed).find(|(_, p)| p.corpus.items != items) {
        return Err(Error::Config(format!("merge: shard {} counts another number of items in the corpus than shard {} (a damaged shard.json?)", s.shard, shards[0].shard)));
    }
    // As many items as the corpus has (which also bounds what a damaged count could allocate),
    // then each corpus position's (shard, row): every position once.
    let held: usize = placed.iter().map(|p| p.positions.len()).sum();
    if held != items {
        return Err(Error::Config(format!("merge: the shards hold {held} items, the corpus {items}")));
    }
    let mut at: Vec<Option<(usize, usize)>> = vec![None; items];
    for (k, p) in placed.iter().enumerate() {
        for (row, &position) in p.positions.iter().enumerate() {
            match at.get_mut(position) {
                Some(slot @ None) => *slot = Some((k, row)),
                Some(Some((other, _))) => return Err(Error::Config(format!("merge: item {} of the corpus is in shard {} and in shard {}", position + 1, shards[*other].shard, shards[k].shard))),
                None => return Err(Error::Config(format!("merge: shard {} places an item at {} of a corpus of {items} items (a damaged shard.json?)", shards[k].shard, position + 1))),
            }
        }
    }
    let (mut rows, mut human) = (ItemRows::default(), crate::analysis::HumanScoresBuilder::default());
    for (position, slot) in at.iter().enumerate() {
        let Some((k, row)) = *slot else {
            return Err(Error::Config(format!("merge: item {} of the corpus is in no shard", position + 1)));
        };
        let s = &shards[k];
        rows.push(s.ids[row].clone(), s.systems[row].clone(), s.responses[row].clone());
        human.add_ratings(&placed[k].ratings[row]);
    }
    let (table, runs) = merge_tables(&rows.ids, shards)?;
    Ok(Merged { rows, human: human.finish(), table, runs })
}

/// The checks every merge makes of its shards: one split, each of its shards once, tables
/// that fit their items, families run alike. The number of shards in the split.
fn check_split(shards: &[ShardScores]) -> Result<usize> {
    let Some(first) = shards.first() else { return Err(Error::Config("merge: no shards given".into())) };
    let of = first.shard.of;
    let mut seen = vec![false; of];
    for s in shards {
        if s.shard.of != of {
            return Err(Error::Config(format!("merge: shard {} is of another split than {}", s.shard, first.shard)));
        }
        if s.shard.index == 0 || s.shard.index > of {
            return Err(Error::Config(format!("merge: a shard numbered {} (a damaged shard.json?)", s.shard)));
        }
        if std::mem::replace(&mut seen[s.shard.index - 1], true) {
            return Err(Error::Config(format!("merge: shard {} given twice", s.shard)));
        }
        if let Some(c) = s.columns.iter().find(|c| c.values.len() != s.ids.len()) {
            return Err(Error::Config(format!("merge: shard {} has {} values of {} for its {} items (a damaged shard.json?)", s.shard, c.values.len(), c.metric, s.ids.len())));
        }
    }
    // A shard without items (a corpus smaller than its split) scored nothing and has no
    // columns: the others make the table and the runs.
    let scoring: Vec<&ShardScores> = shards.iter().filter(|s| !s.ids.is_empty()).collect();
    // A family that could not run in one shard (no endpoint there) but ran in another would
    // leave that shard's items without scores a single run gives them. One that only found
    // nothing to score in a shard's items (none with a reference) is the data, not the run.
    for s in &scoring {
        for r in s.runs.iter().filter(|r| matches!(r.status, FamilyStatus::Skipped { .. }) && !r.nothing_to_score) {
            if let Some(other) = scoring.iter().find(|o| o.runs.iter().any(|q| q.family == r.family && !matches!(q.status, FamilyStatus::Skipped { .. }))) {
                return Err(Error::Config(format!("merge: family {} was skipped in shard {} but ran in shard {} (the shards were scored with other settings?)", r.family, s.shard, other.shard)));
            }
        }
    }
    // Each shard's table holds the metrics its families say they gave (and the combinations),
    // no other: a renamed or foreign column is a damaged shard.json, not a metric. (A
    // shard.json of an earlier version names no metrics and is not checked.)
    for s in &scoring {
        let declared: Vec<&MetricName> = s.runs.iter().flat_map(|r| &r.metric_names).collect();
        if declared.is_empty() {
            continue;
        }
        if let Some(c) = s.columns.iter().find(|c| !crate::combination::is_combination(c.metric.as_str()) && !declared.contains(&&c.metric)) {
            return Err(Error::Config(format!("merge: shard {} has a column {} that none of its families gave (a damaged shard.json?)", s.shard, c.metric)));
        }
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        return Err(Error::Config(format!("merge: shard {}/{of} is missing", missing + 1)));
    }
    Ok(of)
}

/// The table and runs of the corpus with item ids `ids` from its shards' (checked by
/// [`check_split`]).
fn merge_tables(ids: &[String], shards: &[ShardScores]) -> Result<(ScoreTable, Vec<FamilyRun>)> {
    let scoring: Vec<&ShardScores> = shards.iter().filter(|s| !s.ids.is_empty()).collect();
    // Where each item's row is: (shard, row).
    let mut at: HashMap<&str, (usize, usize)> = HashMap::new();
    for (k, s) in shards.iter().enumerate() {
        for (row, id) in s.ids.iter().enumerate() {
            if at.insert(id.as_str(), (k, row)).is_some() {
                return Err(Error::Config(format!("merge: item {id:?} is in two shards")));
            }
        }
    }
    let rows: Vec<(usize, usize)> = ids.iter().map(|id| at.get(id.as_str()).copied().ok_or_else(|| Error::Config(format!("merge: item {id:?} is in no shard")))).collect::<Result<_>>()?;
    if at.len() != ids.len() {
        return Err(Error::Config(format!("merge: the shards hold {} items, the corpus {}", at.len(), ids.len())));
    }
    // Every metric any shard has (one whose items are all in other shards is missing from a
    // shard: BERT-RUBER-ref where a shard has no reference), in the order a single run gives.
    let metrics = metric_order(&scoring);
    let mut table = ScoreTable::new(ids.len());
    for metric in &metrics {
        // Each shard's column of the metric, if it has one.
        let of_shard: Vec<Option<&Column>> = shards.iter().map(|s| s.columns.iter().find(|c| &c.metric == metric)).collect();
        let values = rows.iter().map(|&(k, row)| of_shard[k].and_then(|c| c.values.get(row).copied().flatten())).collect();
        table.push(Column::new(metric.clone(), values))?;
    }
    #[allow(unused_mut)] // the corpus-level notes are BERT-RUBER's (feature slm)
    let mut runs = merged_runs(ids, &scoring);
    #[cfg(feature = "slm")]
    let table = {
        use crate::families::ruber::{hybrid_note, is_hybrid_note, recompute_hybrids};
        let table = recompute_hybrids(table)?;
        if let Some(run) = runs.iter_mut().find(|r| r.family == "bert_ruber" && !matches!(r.status, FamilyStatus::Skipped { .. })) {
            let mut notes = std::mem::take(&mut run.family_notes);
            notes.retain(|n| !is_hybrid_note(n));
            notes.extend(hybrid_note(&table));
            let events = std::mem::take(&mut run.events);
            run.set_notes(events, notes);
        }
        table
    };
    // The shards' pipelines decided which combinations apply (every part's family run); they
    // are computed again over the whole corpus.
    let table = crate::combination::combine(table, |name| metrics.iter().any(|m| m.as_str() == name))?;
    Ok((table, runs))
}

/// The metrics of the shards' tables, each after the metric it follows in the first shard that
/// has it: the order of a single run, whose families add their columns in a fixed order.
fn metric_order(shards: &[&ShardScores]) -> Vec<MetricName> {
    let mut order: Vec<MetricName> = Vec::new();
    for s in shards {
        let mut at = 0;
        for c in &s.columns {
            match order.iter().position(|m| *m == c.metric) {
                Some(k) => at = k + 1,
                None => {
                    order.insert(at, c.metric.clone());
                    at += 1;
                }
            }
        }
    }
    order
}

/// Each family's runs over the shards: seconds added, the first shard's status (or skipped,
/// with its reason, when any shard skipped the family), each shard's events prefixed with the
/// shard, and the family's notes added up as a single run adds up its chunks' (counts summed,
/// the items named first in corpus order: `ids`), so that they read as a single run's.
fn merged_runs(ids: &[String], shards: &[&ShardScores]) -> Vec<FamilyRun> {
    let mut ordered: Vec<&ShardScores> = shards.to_vec();
    ordered.sort_by_key(|s| s.shard.index);
    let position: HashMap<&str, usize> = ids.iter().enumerate().map(|(k, id)| (id.as_str(), k)).collect();
    let mut merged: Vec<FamilyRun> = Vec::new();
    for s in ordered {
        for r in &s.runs {
            let events = r.events.iter().map(|n| format!("shard {}: {n}", s.shard));
            // A shard.json of an earlier version has the notes as text only: kept, labelled.
            let family_notes = if r.family_notes.is_empty() && r.events.is_empty() { r.notes.iter().map(|n| Note::text(format!("shard {}: {n}", s.shard))).collect() } else { r.family_notes.clone() };
            match merged.iter_mut().find(|m| m.family == r.family) {
                Some(m) => {
                    m.seconds += r.seconds;
                    m.events.extend(events);
                    add_shard_notes(&mut m.family_notes, family_notes);
                    // Skipped where it could not run anywhere; a shard with nothing to score
                    // gives way to one that scored.
                    let skipped = |x: &FamilyRun| matches!(x.status, FamilyStatus::Skipped { .. });
                    if (skipped(r) && !r.nothing_to_score) || (skipped(m) && m.nothing_to_score && !skipped(r)) {
                        m.status = r.status.clone();
                        m.nothing_to_score = r.nothing_to_score;
                    }
                }
                None => {
                    // The shards' settings are one run's (the merge checked the corpus; the
                    // families' settings are the first shard's).
                    let run = FamilyRun { nothing_to_score: r.nothing_to_score, provenance: r.provenance.clone(), ..FamilyRun::new(r.family.clone(), r.status.clone(), r.seconds) };
                    merged.push(run.with_notes(events.collect(), family_notes));
                }
            }
        }
    }
    // The notes shown are made again from the merged ones (a skipped family's: only the events,
    // as a single run shows them).
    merged
        .into_iter()
        .map(|mut run| {
            run.family_notes.iter_mut().for_each(|n| n.order_names(|name| item_position(name, &position)));
            let (events, family_notes) = (std::mem::take(&mut run.events), std::mem::take(&mut run.family_notes));
            if matches!(run.status, FamilyStatus::Skipped { .. }) {
                let mut skipped = run.with_notes(events, Vec::new());
                if skipped.nothing_to_score {
                    skipped.family_notes = family_notes;
                }
                return skipped;
            }
            run.with_notes(events, family_notes)
        })
        .collect()
}

/// `notes` of one shard added into `into`: as [`merge_notes`] adds a chunk's, but a note naming
/// items keeps every shard's names (each shard's first ones) until they are put in corpus order
/// ([`Note::order_names`]).
fn add_shard_notes(into: &mut Vec<Note>, notes: Vec<Note>) {
    for note in notes {
        if let Note::Items { template, names, total, sep, .. } = &note
            && let Some(Note::Items { names: have, total: count, .. }) = into.iter_mut().find(|n| matches!(n, Note::Items { template: t, sep: s, .. } if t == template && s == sep))
        {
            have.extend(names.iter().cloned());
            *count += total;
            continue;
        }
        merge_notes(into, vec![note]);
    }
}

/// Where the item a note names (`id`, `id: why`, `id (criterion)`) is in the corpus;
/// `usize::MAX` for a name that is no item's.
fn item_position(name: &str, position: &HashMap<&str, usize>) -> usize {
    if let Some(&k) = position.get(name) {
        return k;
    }
    [": ", " ("].iter().filter_map(|sep| name.find(sep)).filter_map(|at| position.get(&name[..at]).copied()).min().unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_partition_ids() {
        assert_eq!("2/8".parse::<Shard>().ok(), Some(Shard { index: 2, of: 8 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let ids: Vec<String> = (0..1000).map(|k| format!("item-{k}")).collect();
        let shards: Vec<Shard> = (1..=4).map(|index| Shard { index, of: 4 }).collect();
        for id in &ids {
            assert_eq!(shards.iter().filter(|s| s.contains(id)).count(), 1, "{id}");
        }
        let sizes: Vec<usize> = shards.iter().map(|s| ids.iter().filter(|id| s.contains(id)).count()).collect();
        assert!(sizes.iter().all(|&n| n > 200), "{sizes:?}");
    }
}
