//! Smatch between two PENMAN files, graphs paired by position (argument order as smatch.py's
//! `-f test gold`). Prints one JSON object per pair
//! `{"index", "match", "test_triples", "gold_triples", "precision", "recall", "f1"}` and a final
//! `{"corpus": {...}}` from the summed counts.
//!
//! ```text
//! cargo run --release --example smatch -- TEST_FILE GOLD_FILE [--restarts N] [--seed S]
//! ```
//! A pair in which either graph is malformed is printed as `{"index", "error"}` and left out of
//! the corpus counts (the final object says how many). Files with different numbers of graphs
//! are an error (exit status 1), as in smatch.py. Stray text between graphs is reported on
//! stderr and takes no graph's place in the pairing.
//!
//! The program is `dialeval_cli::commands::smatch` (also `dialeval smatch` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::smatch::main(std::env::args_os())
}
