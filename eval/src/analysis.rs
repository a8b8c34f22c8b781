//! How each metric agrees with people: turn-level correlations with intervals, system-level
//! correlations, the best metric per criterion with Williams' test of every other against it,
//! and each metric's Spearman with response length.

use std::collections::BTreeMap;

use dialeval_common::Criterion;
use dialeval_datasets::DialogueItem;
use dialeval_metrics::correlation::{CorrelationKind, spearman};
use dialeval_metrics::inference::{compare_metrics_by, system_level};
use dialeval_metrics::report::{CorrelationReport, ReportConfig, ReportRow};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::table::{Column, MetricName, ScoreTable};

/// Mean human score per item of every criterion rated on at least 3 items, in
/// [`Criterion::ALL`] order (`None` where an item has no rating of it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HumanScores {
    /// Criteria and their per-item means.
    pub criteria: Vec<(Criterion, Vec<Option<f64>>)>,
}

impl HumanScores {
    /// The human scores of `items`.
    pub fn of(items: &[DialogueItem]) -> Self {
        let criteria = Criterion::ALL
            .iter()
            .filter_map(|&c| {
                let values: Vec<Option<f64>> = items.iter().map(|i| i.mean(c).filter(|v| v.is_finite())).collect();
                (values.iter().flatten().count() >= 3).then_some((c, values))
            })
            .collect();
        Self { criteria }
    }
}

/// Spearman and Pearson of one metric with one criterion.
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
    /// One cell per criterion of [`Analysis::criteria`] (`None`: fewer than 4 common items or
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
    /// The criterion.
    pub criterion: Criterion,
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
    /// The criterion.
    pub criterion: Criterion,
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
    /// The criteria rated on at least 3 items.
    pub criteria: Vec<Criterion>,
    /// One line per metric, in table order.
    pub metrics: Vec<MetricSummary>,
    /// Pearson, Spearman and Kendall with p-values and intervals per metric × criterion.
    pub turn_level: CorrelationReport,
    /// Correlations of system means, when the items come from several systems.
    pub system_level: Vec<SystemRow>,
    /// The best metric per criterion by Spearman.
    pub best_by_spearman: BTreeMap<Criterion, MetricName>,
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
    fn of(column: &Column, criterion: Criterion, values: &[Option<f64>], systems: &[Option<String>], config: &ReportConfig) -> Result<Self> {
        let (at, x, y) = paired(&column.values, values);
        if x.len() < 4 {
            return Ok(Self { cell: None, rows: Vec::new(), system: Vec::new() });
        }
        let report = CorrelationReport::build(&[(column.metric.as_str(), &x)], &[(criterion.name(), &y)], config)?;
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
                system.push(SystemRow { metric: column.metric.clone(), criterion, kind, statistic: finite(r.statistic), pvalue: finite(r.pvalue), systems: r.n });
            }
        }
        Ok(Self { cell, rows: report.rows, system })
    }
}

impl Analysis {
    /// Correlates every metric of `table` with every criterion of `human`; `systems` names the
    /// system of each item (system-level rows need at least [`MIN_SYSTEMS`]; items without one
    /// are left out of them), `lengths` the response length in words (`None` without a
    /// response). The best metric of a criterion is the one with the highest Spearman, and ↓
    /// (significantly worse) comes from Williams' test on Spearman correlations.
    ///
    /// # Errors
    /// A correlation that fails for another reason than too few items.
    pub fn of(table: &ScoreTable, human: &HumanScores, systems: &[Option<String>], lengths: &[Option<f64>], config: &ReportConfig) -> Result<Self> {
        let criteria: Vec<Criterion> = human.criteria.iter().map(|(c, _)| *c).collect();
        let mut turn_level = CorrelationReport::default();
        let mut system_rows = Vec::new();
        let mut metrics: Vec<MetricSummary> = Vec::new();
        // Every (metric, criterion) cell, bootstrap included, on rayon's pool; assembled in order.
        let tasks: Vec<(usize, usize)> = (0..table.columns().len()).flat_map(|m| (0..human.criteria.len()).map(move |c| (m, c))).collect();
        let mut done = dialeval_common::par_map(&tasks, |&(m, c)| CellWork::of(&table.columns()[m], human.criteria[c].0, &human.criteria[c].1, systems, config)).into_iter();
        for column in table.columns() {
            let mut cells = Vec::new();
            for work in done.by_ref().take(human.criteria.len()) {
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
        for (c, (criterion, values)) in human.criteria.iter().enumerate() {
            let rho: Vec<Option<f64>> = metrics.iter().map(|m| m.cells[c].map(|cell| cell.spearman)).collect();
            let Some(b) = (0..metrics.len()).filter_map(|m| Some((m, rho[m]?))).max_by(|x, y| x.1.total_cmp(&y.1)).map(|(m, _)| m) else { continue };
            best_by_spearman.insert(*criterion, metrics[b].metric.clone());
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
                if p.is_some_and(|p| p < 0.05) {
                    if let Some(cell) = metrics[m].cells[c].as_mut() {
                        cell.worse_than_best = true;
                    }
                }
                williams_vs_best.push(WilliamsRow { criterion: *criterion, best: metrics[b].metric.clone(), metric: metrics[m].metric.clone(), n: common.len(), t, pvalue_one_sided: p, undefined });
            }
        }
        let mut notes = Vec::new();
        let without = systems.iter().filter(|s| s.is_none()).count();
        let distinct = systems.iter().flatten().collect::<std::collections::BTreeSet<_>>().len();
        if distinct >= MIN_SYSTEMS && without > 0 {
            notes.push(format!("{without} of {} items name no system and are left out of the system level", systems.len()));
        }
        if (1..MIN_SYSTEMS).contains(&distinct) {
            notes.push(format!("no system level: the items come from {distinct} system(s), and it needs at least {MIN_SYSTEMS}"));
        }
        Ok(Self { criteria, metrics, turn_level, system_level: system_rows, best_by_spearman, williams_vs_best, notes })
    }
}
