//! Sentence BLEU, ROUGE (with and without stemming) and METEOR for every line of a JSONL file, then
//! corpus BLEU.
//!
//! A thin `main` over [`dialeval_cli::commands::text_metrics`], whose documentation says what it does
//! and how (`cli/src/commands/text_metrics.rs`); its flags: `cargo run --release --example text_metrics -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::text_metrics::main(std::env::args_os())
}
