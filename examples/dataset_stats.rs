//! Counts for any supported corpus, as JSON.
//!
//! ```text
//! cargo run --release --example dataset_stats -- KIND PATH [AMR_SIDE_FILE ...] [--subset DATASET] [--model MODEL]
//! ```
//! KIND is a rated corpus format (`usr`, `fed` (both levels counted), `fed-dialogue`, `jsonl`,
//! `grade` (PATH = the release's `evaluation/` folder; every (dataset, model) cell, or those of
//! `--subset` / `--model`)) or a training source: `ddpp`, `topical` (PATH = the `topical-chat`
//! folder; valid_rare and test_rare are counted), `diplomacy` (PATH = a
//! Diplomacy AMR file). Prints items, contexts, responses per label or system, annotators,
//! criteria present and, with side files (or for diplomacy), AMR coverage.
//!
//! The program is `dialeval_cli::commands::dataset_stats` (also `dialeval dataset-stats` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::dataset_stats::main(std::env::args_os())
}
