//! Counts for any supported corpus, as JSON.
//!
//! A thin `main` over [`dialeval_cli::commands::dataset_stats`], whose documentation says what it does
//! and how (`cli/src/commands/dataset_stats.rs`); its flags: `cargo run --release --example dataset_stats -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::dataset_stats::main(std::env::args_os())
}
