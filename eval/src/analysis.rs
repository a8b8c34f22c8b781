//! How each metric agrees with people: turn-level correlations with intervals, system-level
//! correlations, the best metric per human quality with Williams' test of every other against it,
//! and each metric's Spearman with response length.

use std::collections::BTreeMap;

use dialeval_common::Criterion;
use dialeval_datasets::{DialogueItem, Rating};
use dialeval_metrics::correlation::{CorrelationKind, spearman};
use dialeval_metrics::inference::{compare_metrics_by, system_level};
use dialeval_metrics::report::{CorrelationReport, ReportConfig, ReportRow};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::table::{Column, MetricName, ScoreTable};

/// A human quality the analysis correlates: one of the shared criteria, or a rating name of the
/// corpus that no loader maps to one (FED's `Interesting`, a user's `relevance`).
///
/// Serialised as a string: a criterion by its serde name (`overall`), a named quality verbatim.
/// [`HumanScores::of`] never yields a named quality whose name reads as a criterion, so the
/// string form is unambiguous.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quality {
    /// A shared criterion.
    Criterion(Criterion),
    /// A corpus's own rating name.
    Named(String),
}

impl Quality {
    /// The name used in reports: the criterion's name (`Overall`) or the rating's own.
    pub fn name(&self) -> &str {
        match self {
            Self::Criterion(c) => c.name(),
            Self::Named(n) => n,
        }
    }

    /// The criterion, for a criterion.
    pub fn criterion(&self) -> Option<Criterion> {
        match self {
            Self::Criterion(c) => Some(*c),
            Self::Named(_) => None,
        }
    }

    /// A file-name form of [`Quality::name`]: lower case ASCII letters and digits, every other
    /// run of characters one `_` (`Semantically appropriate` → `semantically_appropriate`).
    pub fn slug(&self) -> String {
        let mut out = String::new();
        for ch in self.name().chars() {
            if ch.is_ascii_alphanumeric() {
                out.push(ch.to_ascii_lowercase());
            } else if !out.ends_with('_') {
                out.push('_');
            }
        }
        let trimmed = out.trim_matches('_');
        if trimmed.is_empty() { "quality".to_owned() } else { trimmed.to_owned() }
    }
}

impl From<Criterion> for Quality {
    fn from(c: Criterion) -> Self {
        Self::Criterion(c)
    }
}

impl std::fmt::Display for Quality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Quality {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Self::Criterion(c) => c.serialize(serializer),
            Self::Named(n) => serializer.serialize_str(n),
        }
    }
}

impl<'de> Deserialize<'de> for Quality {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Ok(match serde_json::from_value::<Criterion>(serde_json::Value::String(name.clone())) {
            Ok(c) => Self::Criterion(c),
            Err(_) => Self::Named(name),
        })
    }
}

/// A rating name of the items that [`HumanScores::of`] does not correlate, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Uncorrelated {
    /// The corpus's name of the rating.
    pub name: String,
    /// Why it is left out.
    pub reason: String,
}

/// Items a quality needs: fewer rated items are listed in [`HumanScores::uncorrelated`].
pub const MIN_RATED_ITEMS: usize = 3;

/// Mean human score per item of every quality rated on at least [`MIN_RATED_ITEMS`] items: the
/// criteria in [`Criterion::ALL`] order, then the corpus's other rating names in the order they
/// first appear (`None` where an item has no rating of it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HumanScores {
    /// Qualities and their per-item means.
    pub qualities: Vec<(Quality, Vec<Option<f64>>)>,
    /// Rating names that are not correlated, with the reason (too few rated items, a name that
    /// reads as a criterion the loader did not map it to).
    #[serde(default)]
    pub uncorrelated: Vec<Uncorrelated>,
}

impl HumanScores {
    /// The human scores of `items`. A rating that a loader mapped to a criterion counts as that
    /// criterion; any other rating name is a quality of its own.
    pub fn of(items: &[DialogueItem]) -> Self {
        let mut builder = HumanScoresBuilder::default();
        builder.add(items);
        builder.finish()
    }

    /// Every quality as a named column with NaN where an item has no rating: what
    /// `dialeval_metrics::report::CorrelationReport::build` takes (its NaN policy then leaves
    /// the item out or propagates).
    pub fn nan_columns(&self) -> Vec<(String, Vec<f64>)> {
        self.qualities.iter().map(|(q, v)| (q.name().to_owned(), v.iter().map(|x| x.unwrap_or(f64::NAN)).collect())).collect()
    }
}

/// [`HumanScores::of`] fed a chunk of items at a time, for a corpus read as a stream.
#[derive(Debug, Clone)]
pub struct HumanScoresBuilder {
    items: usize,
    /// Per criterion of [`Criterion::ALL`]: the means, and whether any item rates it.
    criteria: Vec<(Vec<Option<f64>>, bool)>,
    /// The other rating names in the order they first appear, with their means.
    named: Vec<(String, Vec<Option<f64>>)>,
}

impl Default for HumanScoresBuilder {
    fn default() -> Self {
        Self { items: 0, criteria: Criterion::ALL.iter().map(|_| (Vec::new(), false)).collect(), named: Vec::new() }
    }
}

impl HumanScoresBuilder {
    /// Adds `items` (after those added before).
    pub fn add(&mut self, items: &[DialogueItem]) {
        for item in items {
            self.add_ratings(&item.ratings);
        }
    }

    /// Adds the next item by its ratings (a shard's items, put back in corpus order by the
    /// merge): as [`HumanScoresBuilder::add`] adds an item with these ratings.
    pub fn add_ratings(&mut self, ratings: &[Rating]) {
        for (c, (values, present)) in Criterion::ALL.iter().zip(&mut self.criteria) {
            let rating = ratings.iter().find(|r| r.criterion == Some(*c));
            values.push(rating.and_then(Rating::mean).filter(|v| v.is_finite()));
            *present |= rating.is_some();
        }
        for r in ratings.iter().filter(|r| r.criterion.is_none()) {
            if !self.named.iter().any(|(n, _)| *n == r.quality) {
                self.named.push((r.quality.clone(), vec![None; self.items]));
            }
        }
        for (name, values) in &mut self.named {
            values.push(ratings.iter().find(|r| r.criterion.is_none() && r.quality == *name).and_then(Rating::mean).filter(|v| v.is_finite()));
        }
        self.items += 1;
    }

    /// The human scores of the items added.
    pub fn finish(self) -> HumanScores {
        let mut qualities = Vec::new();
        let mut uncorrelated = Vec::new();
        let keep = |quality: Quality, values: Vec<Option<f64>>, present: bool, qualities: &mut Vec<_>, uncorrelated: &mut Vec<Uncorrelated>| {
            let rated = values.iter().flatten().count();
            if rated >= MIN_RATED_ITEMS {
                qualities.push((quality, values));
            } else if present {
                uncorrelated.push(Uncorrelated { name: quality.name().to_owned(), reason: format!("rated on {rated} item(s); a correlation needs at least {MIN_RATED_ITEMS}") });
            }
        };
        for (c, (values, present)) in Criterion::ALL.iter().zip(self.criteria) {
            keep(Quality::Criterion(*c), values, present, &mut qualities, &mut uncorrelated);
        }
        for (name, values) in self.named {
            if let Ok(c) = name.parse::<Criterion>() {
                uncorrelated.push(Uncorrelated { reason: format!("named like the criterion {c} but not mapped to it by the loader, so it would be read as that criterion"), name });
                continue;
            }
            keep(Quality::Named(name), values, true, &mut qualities, &mut uncorrelated);
        }
        HumanScores { qualities, uncorrelated }
    }
}

/// Spearman and Pearson of one metric with one quality.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Spearman's ρ.
    pub spearman: f64,
    /// Pearson's r.
    pub pearson: f64,
    /// Items used.
    pub n: usize,
    /// The best metric of the criterion by Spearman.
    pub best: bool,
    /// Significantly worse than the best (Williams' test, one-sided p < 0.05).
    pub worse_than_best: bool,
}

impl Cell {
    /// The cell's mark in tables and plots: ` ★` for the best metric of the criterion, ` ↓` for
    /// one significantly worse than it, nothing otherwise.
    pub fn marker(&self) -> &'static str {
        if self.best {
            " ★"
        } else if self.worse_than_best {
            " ↓"
        } else {
            ""
        }
    }
}

/// Spearman of a metric with response length in words.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LengthCorrelation {
    /// ρ.
    pub spearman: f64,
    /// Two-sided p-value.
    pub pvalue: f64,
    /// Items used.
    pub n: usize,
}

/// One metric's line of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    /// The metric.
    pub metric: MetricName,
    /// Items it scores.
    pub n: usize,
    /// One cell per quality of [`Analysis::qualities`] (`None`: fewer than 4 common items or
    /// an undefined coefficient).
    pub cells: Vec<Option<Cell>>,
    /// Its Spearman with response length.
    pub length: Option<LengthCorrelation>,
}

/// A system-level correlation (means per system).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemRow {
    /// The metric.
    pub metric: MetricName,
    /// The human quality.
    pub quality: Quality,
    /// Pearson or Spearman.
    pub kind: CorrelationKind,
    /// The coefficient (`None` when undefined).
    pub statistic: Option<f64>,
    /// Its p-value.
    pub pvalue: Option<f64>,
    /// Systems.
    pub systems: usize,
}

/// Williams' test of a metric against the best of a criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WilliamsRow {
    /// The human quality.
    pub quality: Quality,
    /// Its best metric by Spearman.
    pub best: MetricName,
    /// The metric compared with it.
    pub metric: MetricName,
    /// Items both score.
    pub n: usize,
    /// t statistic of Williams' test on the Spearman correlations (Pearson on the ranks of the
    /// common items), the coefficient that chose the best.
    pub t: Option<f64>,
    /// One-sided p-value for "the best correlates more strongly".
    pub pvalue_one_sided: Option<f64>,
    /// Why the test has no value (fewer than 4 common items, a perfect correlation, …).
    #[serde(default)]
    pub undefined: Option<String>,
}

/// Everything the report says about agreement with people.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The qualities rated on at least [`MIN_RATED_ITEMS`] items (see [`HumanScores`]).
    pub qualities: Vec<Quality>,
    /// One line per metric, in table order.
    pub metrics: Vec<MetricSummary>,
    /// Pearson, Spearman and Kendall with p-values and intervals per metric × criterion.
    pub turn_level: CorrelationReport,
    /// Correlations of system means, when the items come from several systems.
    pub system_level: Vec<SystemRow>,
    /// The best metric per quality by Spearman.
    pub best_by_spearman: BTreeMap<Quality, MetricName>,
    /// Williams' test of each metric against the best.
    pub williams_vs_best: Vec<WilliamsRow>,
    /// What the reader should know: items left out of the system level, a system level left
    /// out (fewer than 3 systems).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// System-level rows need at least this many systems (with 2, every coefficient is ±1).
pub const MIN_SYSTEMS: usize = 3;

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Metric and human values on the items where both are defined.
fn paired(metric: &[Option<f64>], human: &[Option<f64>]) -> (Vec<usize>, Vec<f64>, Vec<f64>) {
    let mut at = Vec::new();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for (i, (m, h)) in metric.iter().zip(human).enumerate() {
        if let (Some(m), Some(h)) = (m, h) {
            at.push(i);
            x.push(*m);
            y.push(*h);
        }
    }
    (at, x, y)
}

/// One (metric, criterion) cell of [`Analysis::of`]: the summary cell, its report rows and its
/// system-level rows.
struct CellWork {
    cell: Option<Cell>,
    rows: Vec<ReportRow>,
    system: Vec<SystemRow>,
}

impl CellWork {
    fn of(column: &Column, quality: &Quality, values: &[Option<f64>], systems: &[Option<String>], config: &ReportConfig) -> Result<Self> {
        let (at, x, y) = paired(&column.values, values);
        if x.len() < 4 {
            return Ok(Self { cell: None, rows: Vec::new(), system: Vec::new() });
        }
        let report = CorrelationReport::build(&[(column.metric.as_str(), &x)], &[(quality.name(), &y)], config)?;
        let stat = |kind: CorrelationKind| report.rows.iter().find(|r| r.kind == kind).and_then(|r| finite(r.statistic));
        let cell = match (stat(CorrelationKind::Spearman), stat(CorrelationKind::Pearson)) {
            (Some(spearman), Some(pearson)) => Some(Cell { spearman, pearson, n: x.len(), best: false, worse_than_best: false }),
            _ => None,
        };
        let mut system = Vec::new();
        // Items without a system are left out of the system level (the analysis notes it).
        let (mut sx, mut sy, mut sys) = (Vec::new(), Vec::new(), Vec::new());
        for (k, &i) in at.iter().enumerate() {
            if let Some(s) = systems.get(i).and_then(|s| s.as_deref()) {
                sx.push(x[k]);
                sy.push(y[k]);
                sys.push(s);
            }
        }
        let distinct = sys.iter().collect::<std::collections::BTreeSet<_>>().len();
        if distinct >= MIN_SYSTEMS {
            for kind in [CorrelationKind::Pearson, CorrelationKind::Spearman] {
                let r = system_level(kind, &sx, &sy, &sys)?;
                system.push(SystemRow { metric: column.metric.clone(), quality: quality.clone(), kind, statistic: finite(r.statistic), pvalue: finite(r.pvalue), systems: r.n });
            }
        }
        Ok(Self { cell, rows: report.rows, system })
    }
}

/// What an [`Analysis`] correlates: the scores, the human scores, and of each item (in table
/// order) its system (system-level rows need at least [`MIN_SYSTEMS`]; items without one are
/// left out of them) and its response length in words (`None` without a response; every
/// metric's Spearman with length).
#[derive(Debug, Clone, Copy)]
pub struct AnalysisInput<'a> {
    /// Items × metrics.
    pub table: &'a ScoreTable,
    /// The items' human scores.
    pub human: &'a HumanScores,
    /// Each item's system.
    pub systems: &'a [Option<String>],
    /// Each item's response length in words.
    pub lengths: &'a [Option<f64>],
}

impl<'a> AnalysisInput<'a> {
    /// The input of a table scored over `rows` (their systems and lengths).
    pub fn of(table: &'a ScoreTable, human: &'a HumanScores, rows: &'a crate::rows::ItemRows) -> Self {
        Self { table, human, systems: &rows.systems, lengths: &rows.lengths }
    }
}

impl Analysis {
    /// The best metric of `quality` by Spearman (`analysis.best(Criterion::Overall)`).
    pub fn best(&self, quality: impl Into<Quality>) -> Option<&MetricName> {
        self.best_by_spearman.get(&quality.into())
    }

    /// Correlates every metric of the input's table with every criterion of its human scores
    /// ([`AnalysisInput`]). The best metric of a criterion is the one with the highest
    /// Spearman, and ↓ (significantly worse) comes from Williams' test on Spearman correlations.
    ///
    /// # Errors
    /// A correlation that fails for another reason than too few items.
    pub fn of(input: AnalysisInput<'_>, config: &ReportConfig) -> Result<Self> {
        Self::of_with_progress(input, config, &|_, _| {})
    }

    /// As [`Analysis::of`], calling `progress(done, total)` as the (metric, quality) cells finish
    /// (their bootstrap dominates the time on large corpora).
    ///
    /// # Errors
    /// As [`Analysis::of`].
    pub fn of_with_progress(input: AnalysisInput<'_>, config: &ReportConfig, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Self> {
        let AnalysisInput { table, human, systems, lengths } = input;
        let qualities: Vec<Quality> = human.qualities.iter().map(|(q, _)| q.clone()).collect();
        let mut turn_level = CorrelationReport::default();
        let mut system_rows = Vec::new();
        let mut metrics: Vec<MetricSummary> = Vec::new();
        // Every (metric, criterion) cell, bootstrap included, on rayon's pool; assembled in order.
        let tasks: Vec<(usize, usize)> = (0..table.columns().len()).flat_map(|m| (0..human.qualities.len()).map(move |c| (m, c))).collect();
        // Counted under a lock, so `progress` sees 1, 2, …, total in order.
        let finished = std::sync::Mutex::new(0_usize);
        let mut done = dialeval_common::par_map(&tasks, |&(m, c)| {
            if dialeval_common::interrupt::requested() {
                return Err(crate::Error::Interrupted);
            }
            let work = CellWork::of(&table.columns()[m], &human.qualities[c].0, &human.qualities[c].1, systems, config);
            let mut n = finished.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            *n += 1;
            progress(*n, tasks.len());
            work
        })
        .into_iter();
        for column in table.columns() {
            let mut cells = Vec::new();
            for work in done.by_ref().take(human.qualities.len()) {
                let work = work?;
                cells.push(work.cell);
                turn_level.rows.extend(work.rows);
                system_rows.extend(work.system);
            }
            let (_, x, l) = paired(&column.values, lengths);
            let length = (x.len() >= 4).then(|| spearman(&x, &l)).transpose()?.and_then(|r| Some(LengthCorrelation { spearman: finite(r.statistic)?, pvalue: r.pvalue, n: x.len() }));
            metrics.push(MetricSummary { metric: column.metric.clone(), n: column.count(), cells, length });
        }
        let mut best_by_spearman = BTreeMap::new();
        let mut williams_vs_best = Vec::new();
        for (c, (quality, values)) in human.qualities.iter().enumerate() {
            let rho: Vec<Option<f64>> = metrics.iter().map(|m| m.cells[c].map(|cell| cell.spearman)).collect();
            let Some(b) = (0..metrics.len()).filter_map(|m| Some((m, rho[m]?))).max_by(|x, y| x.1.total_cmp(&y.1)).map(|(m, _)| m) else { continue };
            best_by_spearman.insert(quality.clone(), metrics[b].metric.clone());
            if let Some(cell) = metrics[b].cells[c].as_mut() {
                cell.best = true;
            }
            let best_column = &table.columns()[b].values;
            for m in (0..metrics.len()).filter(|&m| m != b && rho[m].is_some()) {
                let other = &table.columns()[m].values;
                let common: Vec<usize> = (0..values.len()).filter(|&i| best_column[i].is_some() && other[i].is_some() && values[i].is_some()).collect();
                let pick = |col: &[Option<f64>]| common.iter().filter_map(|&i| col[i]).collect::<Vec<f64>>();
                let h: Vec<f64> = common.iter().filter_map(|&i| values[i]).collect();
                // Williams' test needs n > 3 and |r| < 1; otherwise the row says why it has no value.
                let (t, p, undefined) = match compare_metrics_by(CorrelationKind::Spearman, &pick(best_column), &pick(other), &h) {
                    Ok(t) => (finite(t.t), finite(t.pvalue_one_sided), None),
                    Err(e @ (dialeval_metrics::Error::TooFewObservations { .. } | dialeval_metrics::Error::Config(_))) => (None, None, Some(e.to_string())),
                    Err(e) => return Err(e.into()),
                };
                if p.is_some_and(|p| p < 0.05)
                    && let Some(cell) = metrics[m].cells[c].as_mut()
                {
                    cell.worse_than_best = true;
                }
                williams_vs_best.push(WilliamsRow { quality: quality.clone(), best: metrics[b].metric.clone(), metric: metrics[m].metric.clone(), n: common.len(), t, pvalue_one_sided: p, undefined });
            }
        }
        let mut notes: Vec<String> = human.uncorrelated.iter().map(|u| format!("rating {:?} is not correlated: {}", u.name, u.reason)).collect();
        let without = systems.iter().filter(|s| s.is_none()).count();
        let distinct = systems.iter().flatten().collect::<std::collections::BTreeSet<_>>().len();
        if distinct >= MIN_SYSTEMS && without > 0 {
            notes.push(format!("{without} of {} items name no system and are left out of the system level", systems.len()));
        }
        if (1..MIN_SYSTEMS).contains(&distinct) {
            notes.push(format!("no system level: the items come from {distinct} system(s), and it needs at least {MIN_SYSTEMS}"));
        }
        Ok(Self { qualities, metrics, turn_level, system_level: system_rows, best_by_spearman, williams_vs_best, notes })
    }
}
