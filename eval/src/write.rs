//! Writers: the summary table and the full correlation report as Markdown, the analysis as
//! JSON, the scores as JSON Lines and CSV, and `report.md` linking them (with the plots of the
//! `plots` feature).

use std::fmt::Write as _;
use std::path::Path;

use dialeval_metrics::correlation::CorrelationKind;
use dialeval_metrics::report::{csv_field, format_pvalue};
use serde::Serialize;

use crate::analysis::{Analysis, HumanScores, Quality};
use crate::cache::{write_atomic, write_atomic_with};
use crate::error::{Error, Result};
use crate::family::ModelUse;
use crate::pipeline::{FamilyRun, FamilyStatus};
use crate::rows::ItemRows;
use crate::table::ScoreTable;

/// The turn-level summary: one line per metric, each cell `Spearman / Pearson` with ★ for the
/// best metric of the criterion and ↓ for one significantly worse (Williams' test), then the
/// metric's Spearman with response length.
pub fn summary_markdown(analysis: &Analysis) -> String {
    if analysis.qualities.is_empty() {
        let mut out = "No human rating is given on at least 3 items: scores only, nothing to correlate.\n".to_owned();
        for note in &analysis.notes {
            let _ = writeln!(out, "\nNote: {note}.");
        }
        return out;
    }
    let names: Vec<&str> = analysis.qualities.iter().map(Quality::name).collect();
    let mut out = format!("| metric | n | {} | ρ with length |\n|---|---|{}---|\n", names.join(" | "), "---|".repeat(names.len()));
    for m in &analysis.metrics {
        let cells: Vec<String> = m
            .cells
            .iter()
            .enumerate()
            .map(|(k, c)| match c {
                Some(c) => format!("{:.3} / {:.3}{}", c.spearman, c.pearson, c.marker()),
                // Why there is no value: the coefficient's reason, or too few scored items.
                None => match analysis.turn_level.rows.iter().find(|r| r.metric == m.metric.as_str() && r.criterion == names[k] && r.kind == CorrelationKind::Spearman) {
                    Some(r) => format!("– ({})", r.undefined.map_or("undefined", |u| u.reason())),
                    None => "– (< 4 items)".to_owned(),
                },
            })
            .collect();
        let length = m.length.map_or_else(|| "–".to_owned(), |l| format!("{:.3} (p={})", l.spearman, format_pvalue(l.pvalue)));
        let _ = writeln!(out, "| {} | {} | {} | {length} |", m.metric, m.n, cells.join(" | "));
    }
    out
}

/// `correlations.md`: the summary, every coefficient with p-value and interval, and the
/// system-level rows.
pub fn correlations_markdown(analysis: &Analysis) -> String {
    let mut md = String::from("# Correlations with human ratings\n\n");
    md.push_str(
        "Turn level, each cell `Spearman / Pearson`; ★ the best metric of the criterion (Spearman), ↓ significantly worse than it (Williams' test on the Spearman correlations — Pearson on the ranks of the common items —, one-sided p < 0.05). n = items the metric scores. The last column is each metric's Spearman with response length in words (the `Length (words)` row is that baseline itself).\n\n",
    );
    md.push_str(&summary_markdown(analysis));
    md.push_str("\n## All coefficients (p-values, 95% intervals: Fisher z for Pearson, bootstrap for the others)\n\n");
    md.push_str(&analysis.turn_level.to_markdown());
    for note in &analysis.notes {
        let _ = writeln!(md, "\nNote: {note}.");
    }
    if !analysis.system_level.is_empty() {
        md.push_str("\n## System level (means per system)\n\n| metric | criterion | kind | r | p | systems |\n|---|---|---|---|---|---|\n");
        let num = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or_else(|| "–".to_owned(), f);
        for r in &analysis.system_level {
            let _ = writeln!(md, "| {} | {} | {} | {} | {} | {} |", r.metric, r.quality.name(), r.kind.name(), num(r.statistic, &|v| format!("{v:.3}")), num(r.pvalue, &format_pvalue), r.systems);
        }
    }
    md
}

/// One item's line of `scores.jsonl`.
#[derive(Serialize)]
struct ScoreLine<'a> {
    id: &'a str,
    system: Option<&'a str>,
    /// `null` for an item without a response (dialogue level), distinct from `""`.
    response: Option<&'a str>,
    human: std::collections::BTreeMap<&'a str, Option<f64>>,
    metrics: serde_json::Map<String, serde_json::Value>,
}

/// `scores.jsonl`: per item its id, system, response, human means and every metric's score
/// (`null` where it has none).
///
/// # Errors
/// [`Error::Column`] when the table does not have one row per item.
pub fn scores_jsonl(rows: &ItemRows, table: &ScoreTable, human: &HumanScores) -> Result<String> {
    let mut out = Vec::new();
    write_scores_jsonl(&mut out, rows, table, human)?;
    String::from_utf8(out).map_err(|e| Error::Config(format!("scores.jsonl: {e}")))
}

/// [`scores_jsonl`] streamed into `w`, one line at a time.
///
/// # Errors
/// [`Error::Column`] when the table does not have one row per item; [`Error::Io`] from `w`.
pub fn write_scores_jsonl(w: &mut dyn std::io::Write, rows: &ItemRows, table: &ScoreTable, human: &HumanScores) -> Result<()> {
    check_rows(rows, table, human)?;
    for i in 0..rows.len() {
        let line = ScoreLine {
            id: &rows.ids[i],
            system: rows.systems[i].as_deref(),
            response: rows.responses[i].as_deref(),
            human: human.qualities.iter().map(|(q, v)| (q.name(), v[i])).collect(),
            metrics: table.columns().iter().map(|c| (c.metric.to_string(), c.values[i].map_or(serde_json::Value::Null, serde_json::Value::from))).collect(),
        };
        serde_json::to_writer(&mut *w, &line).map_err(|e| Error::json("scores.jsonl", e))?;
        w.write_all(b"\n").map_err(|e| Error::io("scores.jsonl", e))?;
    }
    Ok(())
}

/// `scores.csv`: `id,system,<human qualities…>,<metrics…>`, empty cells where there is no value.
///
/// # Errors
/// [`Error::Column`] when the table does not have one row per item.
pub fn scores_csv(rows: &ItemRows, table: &ScoreTable, human: &HumanScores) -> Result<String> {
    let mut out = Vec::new();
    write_scores_csv(&mut out, rows, table, human)?;
    String::from_utf8(out).map_err(|e| Error::Config(format!("scores.csv: {e}")))
}

/// [`scores_csv`] streamed into `w`, one row at a time.
///
/// # Errors
/// [`Error::Column`] when the table does not have one row per item; [`Error::Io`] from `w`.
pub fn write_scores_csv(w: &mut dyn std::io::Write, rows: &ItemRows, table: &ScoreTable, human: &HumanScores) -> Result<()> {
    check_rows(rows, table, human)?;
    let io = |e| Error::io("scores.csv", e);
    let mut header = vec!["id".to_owned(), "system".to_owned()];
    header.extend(human.qualities.iter().map(|(q, _)| format!("human {}", q.name())));
    header.extend(table.metrics().map(ToString::to_string));
    writeln!(w, "{}", header.iter().map(|h| csv_field(h)).collect::<Vec<_>>().join(",")).map_err(io)?;
    let cell = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
    for i in 0..rows.len() {
        let mut row = vec![csv_field(&rows.ids[i]), csv_field(rows.systems[i].as_deref().unwrap_or(""))];
        row.extend(human.qualities.iter().map(|(_, v)| cell(v[i])));
        row.extend(table.columns().iter().map(|c| cell(c.values[i])));
        writeln!(w, "{}", row.join(",")).map_err(io)?;
    }
    Ok(())
}

fn check_rows(rows: &ItemRows, table: &ScoreTable, human: &HumanScores) -> Result<()> {
    if table.items() != rows.len() {
        return Err(Error::Column { metric: "<table>".into(), problem: format!("{} rows for {} items", table.items(), rows.len()) });
    }
    let same = |n: usize| n == rows.len();
    if !(same(rows.systems.len()) && same(rows.responses.len()) && same(rows.lengths.len())) || human.qualities.iter().any(|(_, v)| !same(v.len())) {
        return Err(Error::Column { metric: "<rows>".into(), problem: format!("the item rows or human scores are not all of {} items", rows.len()) });
    }
    Ok(())
}

/// `report.md`: counts, links to the other files and plots, how each family went (time, cache,
/// notes), what was skipped and why, the summary table, and what produced it ([`Provenance`]).
pub fn report_markdown(run: &crate::Report, written: &Written) -> String {
    let (items, table, analysis, runs) = (run.rows.len(), &run.table, &run.analysis, &run.runs);
    let plots = written.plots;
    let names: Vec<&str> = analysis.qualities.iter().map(Quality::name).collect();
    let mut report = format!("# Evaluation report\n\n{items} items; {} metrics; human ratings: {}.\n\n", table.columns().len(), if names.is_empty() { "none".to_owned() } else { names.join(", ") });
    report.push_str("- scores per item: [scores.jsonl](scores.jsonl), [scores.csv](scores.csv)\n- correlations: [correlations.md](correlations.md), [correlations.json](correlations.json)\n");
    if plots {
        report.push_str("- heat map: [plots/heatmap_spearman.png](plots/heatmap_spearman.png) ([svg](plots/heatmap_spearman.svg))\n");
        for q in &analysis.qualities {
            let stem = format!("plots/scatter_{}", q.slug());
            let _ = writeln!(report, "- scatter, {q}: [{stem}.png]({stem}.png) ([svg]({stem}.svg))");
        }
    }
    report.push_str("\n## Families\n\n| family | status | seconds | notes |\n|---|---|---|---|\n");
    for r in runs {
        let status = match &r.status {
            FamilyStatus::Computed { metrics, cached_for_next_run, chunks_from_cache, chunks } => {
                let cached = if *cached_for_next_run { "cached" } else { "not cached" };
                let resumed = if *chunks_from_cache > 0 { format!(" ({chunks_from_cache} of {chunks} chunks from the cache)") } else { String::new() };
                format!("computed, {metrics} metrics, {cached}{resumed}")
            }
            FamilyStatus::Cached { metrics } => format!("from the cache, {metrics} metrics"),
            FamilyStatus::Skipped { reason } => format!("skipped: {reason}"),
        };
        // A note may quote a file's text (an AMR snippet): `|` and line breaks would cut the row.
        let notes = r.notes.join("; ").replace('|', "\\|").replace(['\n', '\r'], " ");
        let _ = writeln!(report, "| {} | {status} | {:.1} | {notes} |", r.family, r.seconds);
    }
    let skipped: Vec<&FamilyRun> = runs.iter().filter(|r| matches!(r.status, FamilyStatus::Skipped { .. })).collect();
    if !skipped.is_empty() {
        report.push_str("\n## Skipped\n\n");
        for r in skipped {
            if let FamilyStatus::Skipped { reason } = &r.status {
                let _ = writeln!(report, "- {}: {reason}", r.family);
            }
        }
    }
    if !analysis.notes.is_empty() {
        report.push_str("\n## Analysis notes\n\n");
        for note in &analysis.notes {
            let _ = writeln!(report, "- {note}");
        }
    }
    let _ = write!(report, "\n## Turn-level correlations\n\n{}", summary_markdown(analysis));
    if plots {
        report.push_str("\n![heat map](plots/heatmap_spearman.png)\n");
    }
    let provenance = Provenance::of(runs);
    let _ = write!(
        report,
        "\n## Provenance\n\ndialeval {}. The models the scores come from (an encoder by name with its fingerprint, the sha256 of its configuration, weights and tokenizer; a checkpoint by folder with the sha256 of its files) and the families that read them:\n\n",
        provenance.dialeval
    );
    if provenance.models.is_empty() {
        report.push_str("- none: no family of this run reads a model\n");
    }
    for m in &provenance.models {
        let (kind, digest) = match m.model.kind {
            crate::ModelKind::Encoder => ("encoder", "fingerprint"),
            crate::ModelKind::Checkpoint => ("checkpoint", "sha256"),
        };
        let _ = writeln!(report, "- {kind} `{}` ({digest} `{}`): {}", m.model.name, m.model.digest, m.families.join(", "));
    }
    report.push_str("\nWhat each family's scores depend on besides the items (the settings its cache key is made from: the encoder's fingerprint, each checkpoint with its sha256, WordNet's digest, …), so that two reports can be compared knowingly:\n\n");
    for f in &provenance.families {
        let settings = serde_json::to_string(f.settings).unwrap_or_default().replace('`', "'");
        let _ = writeln!(report, "- {} ({}): `{settings}`", f.family, f.version);
    }
    report
}

/// What produced a report: the dialeval version, the models the scores come from and, for
/// every family that was built, its computation's version and settings (`correlations.json`
/// and `report.md` carry it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance<'a> {
    /// The version of dialeval that wrote the report.
    pub dialeval: &'static str,
    /// Every model the families read, once, in the order the families first name them.
    pub models: Vec<ModelEntry<'a>>,
    /// One entry per family that was built, in the report's order.
    pub families: Vec<FamilySource<'a>>,
}

/// One model of a [`Provenance`], with the families that read it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelEntry<'a> {
    /// The model.
    #[serde(flatten)]
    pub model: &'a ModelUse,
    /// The families that read it, in the report's order.
    pub families: Vec<&'a str>,
}

/// One family's entry of a [`Provenance`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilySource<'a> {
    /// The family.
    pub family: &'a str,
    /// The version of its computation.
    pub version: &'a str,
    /// Its settings ([`crate::MetricFamily::settings`]).
    pub settings: &'a serde_json::Value,
}

impl<'a> Provenance<'a> {
    /// The provenance of the families' `runs`.
    pub fn of(runs: &'a [FamilyRun]) -> Self {
        let families = runs.iter().filter_map(|r| r.provenance.as_ref().map(|p| FamilySource { family: &r.family, version: &p.version, settings: &p.settings })).collect();
        let mut models: Vec<ModelEntry<'a>> = Vec::new();
        for (run, p) in runs.iter().filter_map(|r| r.provenance.as_ref().map(|p| (r, p))) {
            for model in &p.models {
                match models.iter_mut().find(|m| m.model == model) {
                    Some(m) => m.families.push(&run.family),
                    None => models.push(ModelEntry { model, families: vec![&run.family] }),
                }
            }
        }
        Self { dialeval: env!("CARGO_PKG_VERSION"), models, families }
    }
}

/// `correlations.json`: the analysis, with what produced it.
#[derive(Serialize)]
struct CorrelationsFile<'a> {
    provenance: Provenance<'a>,
    #[serde(flatten)]
    analysis: &'a Analysis,
}

/// What [`write_all`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Whether plots were drawn (the `plots` feature).
    pub plots: bool,
}

/// Writes `scores.jsonl`, `scores.csv`, `correlations.md`, `correlations.json`, `report.md`
/// and, with the `plots` feature, `plots/*.png|svg` into `dir`.
///
/// # Errors
/// [`Error::Io`], [`Error::Json`], [`Error::Plot`].
pub fn write_all(dir: &Path, report: &crate::Report) -> Result<Written> {
    let crate::Report { rows, table, human, analysis, runs } = report;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    check_rows(rows, table, human)?;
    // Streamed: a million items are never one string (the row check above makes the writers'
    // own checks pass, so only I/O can fail inside).
    write_atomic_with(&dir.join("scores.jsonl"), |w| write_scores_jsonl(w, rows, table, human).map_err(|e| std::io::Error::other(e.to_string())))?;
    write_atomic_with(&dir.join("scores.csv"), |w| write_scores_csv(w, rows, table, human).map_err(|e| std::io::Error::other(e.to_string())))?;
    write_atomic(&dir.join("correlations.md"), &correlations_markdown(analysis))?;
    let json = serde_json::to_string_pretty(&CorrelationsFile { provenance: Provenance::of(runs), analysis }).map_err(|e| Error::json(dir.join("correlations.json"), e))?;
    write_atomic(&dir.join("correlations.json"), &json)?;
    #[cfg(feature = "plots")]
    let plots = {
        crate::plot::analysis_plots(&dir.join("plots"), table, human, analysis)?;
        true
    };
    #[cfg(not(feature = "plots"))]
    let plots = false;
    let written = Written { plots };
    write_atomic(&dir.join("report.md"), &report_markdown(report, &written))?;
    Ok(written)
}
