//! Scores items with a trained SLM: one probability per line of ITEMS.jsonl.
//!
//! A thin `main` over [`dialeval_cli::commands::score_slm`], whose documentation says what it does
//! and how (`cli/src/commands/score_slm.rs`); its flags: `cargo run --release --example score_slm -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::score_slm::main(std::env::args_os())
}
