//! A metrics × criteria correlation table, rendered as Markdown or CSV and serialisable with
//! serde (JSON).

use serde::{Deserialize, Serialize};

use crate::correlation::{CorrelationKind, CorrelationOptions, correlate_with};
use crate::error::{Error, Result};
use crate::inference::{BootstrapConfig, Interval, bootstrap_interval, fisher_z_interval, rank_bootstrap_interval};

/// How a report computes confidence intervals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReportConfig {
    /// Coverage of the intervals (e.g. 0.95).
    pub confidence: f64,
    /// Bootstrap settings for Spearman and Kendall (Pearson uses Fisher z); `None` leaves their
    /// intervals out.
    pub bootstrap: Option<BootstrapConfig>,
    /// Options passed to every correlation.
    pub options: CorrelationOptions,
}

impl Default for ReportConfig {
    fn default() -> Self {
        Self { confidence: 0.95, bootstrap: Some(BootstrapConfig { resamples: 1000, confidence: 0.95, seed: 0 }), options: CorrelationOptions::default() }
    }
}

/// One cell of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportRow {
    /// Metric name.
    pub metric: String,
    /// Human criterion name.
    pub criterion: String,
    /// Which coefficient.
    pub kind: CorrelationKind,
    /// The coefficient (NaN when undefined).
    #[serde(with = "crate::nan_as_null")]
    pub statistic: f64,
    /// Two-sided p-value.
    #[serde(with = "crate::nan_as_null")]
    pub pvalue: f64,
    /// Observations used.
    pub n: usize,
    /// Confidence interval, when computed.
    pub ci: Option<Interval>,
    /// Why the coefficient or its p-value is undefined, when it is.
    #[serde(default)]
    pub undefined: Option<crate::correlation::Undefined>,
}

/// One row to compute: metric name and values, criterion name and values, coefficient.
type Task<'a> = (&'a str, &'a [f64], &'a str, &'a [f64], CorrelationKind);

/// Correlations of several metrics with several human criteria.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CorrelationReport {
    /// One row per metric × criterion × coefficient.
    pub rows: Vec<ReportRow>,
}

impl CorrelationReport {
    /// Correlates every metric with every criterion under every coefficient.
    ///
    /// # Errors
    /// A length mismatch or too few observations in any pair (named in the error).
    pub fn build(metrics: &[(&str, &[f64])], criteria: &[(&str, &[f64])], config: &ReportConfig) -> Result<Self> {
        // Every row has its own bootstrap generator (seeded from the config), so the rows can be
        // computed on any number of threads with identical results.
        let tasks: Vec<Task<'_>> = metrics.iter().flat_map(|&(m, x)| criteria.iter().flat_map(move |&(c, y)| CorrelationKind::ALL.into_iter().map(move |k| (m, x, c, y, k)))).collect();
        let rows = dialeval_common::par_map(&tasks, |&(metric, x, criterion, y, kind)| Self::row(metric, x, criterion, y, kind, config));
        Ok(Self { rows: rows.into_iter().collect::<Result<_>>()? })
    }

    fn row(metric: &str, x: &[f64], criterion: &str, y: &[f64], kind: CorrelationKind, config: &ReportConfig) -> Result<ReportRow> {
        let c = correlate_with(kind, x, y, &config.options).map_err(|e| Error::Config(format!("{metric} × {criterion} ({}): {e}", kind.name())))?;
        let ci = if !c.statistic.is_finite() {
            None
        } else if kind == CorrelationKind::Pearson {
            fisher_z_interval(c.statistic, c.n, config.confidence).ok()
        } else {
            config.bootstrap.and_then(|b| {
                let b = BootstrapConfig { confidence: config.confidence, ..b };
                if x.iter().chain(y).all(|v| v.is_finite()) {
                    // The same resamples, each from pair counts over orders sorted once.
                    return rank_bootstrap_interval(kind, x, y, &b).ok().map(|r| r.interval);
                }
                let stat = |a: &[f64], bb: &[f64]| correlate_with(kind, a, bb, &config.options).map_or(f64::NAN, |r| r.statistic);
                bootstrap_interval(x, y, stat, &b).ok().map(|r| r.interval)
            })
        };
        Ok(ReportRow { metric: metric.to_owned(), criterion: criterion.to_owned(), kind, statistic: c.statistic, pvalue: c.pvalue, n: c.n, ci, undefined: c.undefined })
    }

    /// A Markdown table: one line per metric × criterion, one column per coefficient, each
    /// cell `r (p) [low, high]`, `*` marking p < 0.05.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("| metric | criterion | Pearson | Spearman | Kendall |\n|---|---|---|---|---|\n");
        let mut keys: Vec<(&str, &str)> = Vec::new();
        for r in &self.rows {
            if !keys.contains(&(r.metric.as_str(), r.criterion.as_str())) {
                keys.push((&r.metric, &r.criterion));
            }
        }
        for (metric, criterion) in keys {
            out.push_str(&format!("| {metric} | {criterion} |"));
            for kind in CorrelationKind::ALL {
                let cell = self.rows.iter().find(|r| r.metric == metric && r.criterion == criterion && r.kind == kind).map_or_else(|| "–".to_owned(), format_cell);
                out.push_str(&format!(" {cell} |"));
            }
            out.push('\n');
        }
        out
    }

    /// CSV with a header: `metric,criterion,kind,statistic,pvalue,n,ci_low,ci_high,confidence`.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("metric,criterion,kind,statistic,pvalue,n,ci_low,ci_high,confidence\n");
        for r in &self.rows {
            let (lo, hi, conf) = r.ci.map_or((String::new(), String::new(), String::new()), |c| (c.low.to_string(), c.high.to_string(), c.confidence.to_string()));
            out.push_str(&format!("{},{},{},{},{},{},{lo},{hi},{conf}\n", csv_field(&r.metric), csv_field(&r.criterion), r.kind.name(), r.statistic, r.pvalue, r.n));
        }
        out
    }
}

fn format_cell(r: &ReportRow) -> String {
    if r.statistic.is_nan() {
        return r.undefined.map_or_else(|| "undefined".to_owned(), |why| format!("undefined ({why})"));
    }
    let star = if r.pvalue < 0.05 { "*" } else { "" };
    let ci = r.ci.map_or_else(String::new, |c| format!(" [{:.3}, {:.3}]", c.low, c.high));
    format!("{:.3}{star} (p={}){ci}", r.statistic, format_pvalue(r.pvalue))
}

/// Three decimals, or two significant digits in scientific notation below 0.001 (so a small
/// p-value does not print as 0.000).
pub fn format_pvalue(p: f64) -> String {
    if p < 1e-3 && p > 0.0 { format!("{p:.1e}") } else { format!("{p:.3}") }
}

/// One CSV field (RFC 4180): quoted, with `"` doubled, when it holds a comma, a quote or a line
/// break (`\n` or `\r`); as it is otherwise. The one CSV writer of the workspace's reports.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_owned() }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn csv_fields_quote_separators_quotes_and_both_line_breaks() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("one\ntwo"), "\"one\ntwo\"");
        assert_eq!(csv_field("one\rtwo"), "\"one\rtwo\"");
    }

    #[test]
    fn small_pvalues_keep_their_digits() {
        assert_eq!(format_pvalue(0.0412), "0.041");
        assert_eq!(format_pvalue(2.34e-9), "2.3e-9");
        assert_eq!(format_pvalue(0.0), "0.000");
    }

    #[test]
    fn report_renders_and_round_trips() {
        let m1 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let m2 = [8.0, 1.0, 6.0, 3.0, 5.0, 4.0, 7.0, 2.0];
        let h = [1.0, 2.0, 2.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let cfg = ReportConfig { bootstrap: Some(BootstrapConfig { resamples: 200, confidence: 0.95, seed: 1 }), ..ReportConfig::default() };
        let report = CorrelationReport::build(&[("good", &m1), ("noise, really", &m2)], &[("Overall", &h)], &cfg).unwrap();
        assert_eq!(report.rows.len(), 6);
        let md = report.to_markdown();
        assert!(md.lines().nth(2).unwrap().starts_with("| good | Overall | 0.9"));
        assert!(md.contains('*'));
        let csv = report.to_csv();
        assert_eq!(csv.lines().count(), 7);
        assert!(csv.contains("\"noise, really\""));
        let json = serde_json::to_string(&report).unwrap();
        let back: CorrelationReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back.rows.len(), 6);
        assert!(CorrelationReport::build(&[("short", &m1[..3])], &[("Overall", &h)], &cfg).is_err());
        let constant = [2.0; 8];
        let undefined = CorrelationReport::build(&[("constant", &constant)], &[("Overall", &h)], &cfg).unwrap();
        assert!(undefined.to_markdown().contains("undefined"));
        let json = serde_json::to_string(&undefined).unwrap();
        assert!(json.contains("\"statistic\":null"));
        let back: CorrelationReport = serde_json::from_str(&json).unwrap();
        assert!(back.rows[0].statistic.is_nan());
    }
}
