//! Smatch between two PENMAN files, graphs paired by position (argument order as smatch.py's `-f
//! test gold`). Prints one JSON object per pair `{"index", "match", "test_triples", "gold_triples",
//! "precision", "recall", "f1"}` and a final `{"corpus": {...}}` from the summed counts.
//!
//! A thin `main` over [`dialeval_cli::commands::smatch`], whose documentation says what it does
//! and how (`cli/src/commands/smatch.rs`); its flags: `cargo run --release --example smatch -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::smatch::main(std::env::args_os())
}
