//! Pearson, Spearman and Kendall tau-b (statistic, p-value, 95% CI) between two fields of a
//! JSONL file.
//!
//! ```text
//! cargo run --release --example correlate -- SCORES.jsonl --x FIELD --y FIELD \
//!     [--confidence 0.95] [--resamples 1000] [--seed 0] [--nan-policy propagate|omit|raise]
//! ```
//! A field is a dotted path (`rouge.rouge1.fmeasure`); a list of numbers (e.g. several
//! annotators' ratings) counts as its mean; `null` counts as NaN. Pearson's interval is
//! Fisher-z, the others a seeded percentile bootstrap. A line without the field is an error
//! naming the line.

use std::process::ExitCode;

use dialeval_metrics::correlation::{CorrelationKind, CorrelationOptions, NanPolicy, correlate_with};
use dialeval_metrics::inference::{BootstrapConfig, bootstrap_interval, fisher_z_interval};
use serde_json::{Value, json};

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    match run(args) {
        Ok(v) => {
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("correlate: {e}");
            ExitCode::FAILURE
        }
    }
}

fn field(v: &Value, path: &str) -> Result<f64, String> {
    let mut at = v;
    for key in path.split('.') {
        at = at.get(key).ok_or_else(|| format!("no field `{path}`"))?;
    }
    match at {
        Value::Null => Ok(f64::NAN),
        Value::Number(n) => n.as_f64().ok_or_else(|| format!("`{path}` is not a finite number")),
        Value::Array(items) if !items.is_empty() => {
            let nums: Option<Vec<f64>> = items.iter().map(Value::as_f64).collect();
            let nums = nums.ok_or_else(|| format!("`{path}` must hold only numbers"))?;
            Ok(nums.iter().sum::<f64>() / nums.len() as f64)
        }
        _ => Err(format!("`{path}` must be a number, a list of numbers or null")),
    }
}

/// What to do with NaN values, as scipy's `nan_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Nan {
    Propagate,
    Omit,
    Raise,
}

#[derive(Debug, clap::Parser)]
#[command(about = "Pearson, Spearman and Kendall of two fields of a JSONL file, with p-values and intervals")]
struct Args {
    /// Scores, one JSON object per line.
    scores: String,
    /// The first field (a JSON path such as `metrics.BLEU-4`).
    #[arg(long)]
    x: String,
    /// The second field.
    #[arg(long)]
    y: String,
    /// Coverage of the bootstrap intervals.
    #[arg(long, default_value_t = BootstrapConfig::default().confidence)]
    confidence: f64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = BootstrapConfig::default().resamples)]
    resamples: usize,
    /// Bootstrap seed.
    #[arg(long, default_value_t = BootstrapConfig::default().seed)]
    seed: u64,
    /// NaN handling.
    #[arg(long, value_enum, default_value_t = Nan::Propagate)]
    nan_policy: Nan,
}

fn run<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> Result<Value, String> {
    let args = <Args as clap::Parser>::parse_from(args);
    let boot = BootstrapConfig { confidence: args.confidence, resamples: args.resamples, seed: args.seed };
    // The library's check, as `evaluate` and Python make it: a confidence in (0, 1), at least
    // 2 resamples.
    dialeval_eval::settings::check_report(&dialeval_metrics::report::ReportConfig { confidence: boot.confidence, bootstrap: Some(boot), ..Default::default() }).map_err(|e| e.to_string())?;
    let nan_policy = match args.nan_policy {
        Nan::Propagate => NanPolicy::Propagate,
        Nan::Omit => NanPolicy::Omit,
        Nan::Raise => NanPolicy::Raise,
    };
    let (path, x, y) = (args.scores, args.x, args.y);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("{path}:{}: {e}", n + 1))?;
        xs.push(field(&v, &x).map_err(|e| format!("{path}:{}: {e}", n + 1))?);
        ys.push(field(&v, &y).map_err(|e| format!("{path}:{}: {e}", n + 1))?);
    }
    let options = CorrelationOptions { nan_policy, ..CorrelationOptions::default() };
    let mut out = json!({"file": path, "x": x, "y": y, "n": xs.len(), "confidence": boot.confidence});
    for kind in CorrelationKind::ALL {
        let c = correlate_with(kind, &xs, &ys, &options).map_err(|e| e.to_string())?;
        let ci = if !c.statistic.is_finite() {
            None
        } else if kind == CorrelationKind::Pearson {
            fisher_z_interval(c.statistic, c.n, boot.confidence).ok().map(|i| (i.low, i.high))
        } else {
            let stat = |a: &[f64], b: &[f64]| correlate_with(kind, a, b, &options).map_or(f64::NAN, |r| r.statistic);
            bootstrap_interval(&xs, &ys, stat, &boot).ok().map(|r| (r.interval.low, r.interval.high))
        };
        let finite = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
        out[kind.name().to_lowercase()] = json!({
            "statistic": finite(c.statistic),
            "pvalue": finite(c.pvalue),
            "ci": ci.map(|(l, h)| json!([l, h])),
            "undefined": c.undefined,
        });
    }
    Ok(out)
}
