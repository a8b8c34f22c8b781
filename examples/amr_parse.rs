//! Parses every utterance of a corpus into AMR with an LLM endpoint or an external parser, and
//! writes PENMAN with `::id`, `::snt` and provenance (`::parser`, `::model`, `::attempts`,
//! `::repaired`) that `evaluate --amr FILE` attaches by sentence text.
//!
//! A thin `main` over [`dialeval_cli::commands::amr_parse`], whose documentation says what it does
//! and how (`cli/src/commands/amr_parse.rs`); its flags: `cargo run --release --example amr_parse -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::amr_parse::main(std::env::args_os())
}
