//! The main job: score a corpus with every metric its inputs allow, correlate each with the human
//! ratings, and write a report with tables and plots. Wiring only: the pipeline is `dialeval-eval`
//! (families, cache, analysis, writers).
//!
//! A thin `main` over [`dialeval_cli::commands::evaluate`], whose documentation says what it does
//! and how (`cli/src/commands/evaluate.rs`); its flags: `cargo run --release --example evaluate -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::evaluate::main(std::env::args_os())
}
