//! Rates items with an LLM judge on the paper's four criteria.
//!
//! A thin `main` over [`dialeval_cli::commands::llm_judge`], whose documentation says what it does
//! and how (`cli/src/commands/llm_judge.rs`); its flags: `cargo run --release --example llm_judge -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::llm_judge::main(std::env::args_os())
}
