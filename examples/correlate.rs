//! Pearson, Spearman and Kendall tau-b (statistic, p-value, 95% CI) between two fields of a JSONL
//! file.
//!
//! A thin `main` over [`dialeval_cli::commands::correlate`], whose documentation says what it does
//! and how (`cli/src/commands/correlate.rs`); its flags: `cargo run --release --example correlate -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::correlate::main(std::env::args_os())
}
