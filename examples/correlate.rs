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
//!
//! The program is `dialeval_cli::commands::correlate` (also `dialeval correlate` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::correlate::main(std::env::args_os())
}
