//! Decode every graph of a PENMAN file and print one JSON object per graph:
//! `{"id", "snt", "top", "triples_sorted", "encoded_graph_only"}`, or `{"error", "line"}` for a
//! malformed block (reading goes on with the next block).
//!
//! ```text
//! cargo run --release --example penman -- ../shared/data/amr-little-prince/amr-bank-struct-v3.0.txt
//! ```
//! Exits with status 0 unless the file cannot be read.
//!
//! The program is `dialeval_cli::commands::penman` (also `dialeval penman` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::penman::main(std::env::args_os())
}
