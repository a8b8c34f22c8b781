//! Decode every graph of a PENMAN file and print one JSON object per graph: `{"id", "snt", "top",
//! "triples_sorted", "encoded_graph_only"}`, or `{"error", "line"}` for a malformed block (reading
//! goes on with the next block).
//!
//! A thin `main` over [`dialeval_cli::commands::penman`], whose documentation says what it does
//! and how (`cli/src/commands/penman.rs`); its flags: `cargo run --release --example penman -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::penman::main(std::env::args_os())
}
