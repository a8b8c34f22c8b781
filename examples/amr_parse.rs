//! Parses every utterance of a corpus into AMR with an LLM endpoint or an external parser, and
//! writes PENMAN with `::id`, `::snt` and provenance (`::parser`, `::model`, `::attempts`,
//! `::repaired`) that `evaluate --amr FILE` attaches by sentence text.
//!
//! ```text
//! cargo run --release --example amr_parse -- --input ITEMS.jsonl|SENTENCES.txt|GOLD.amr.txt --out FILE.amr.txt \
//!     [--llm-base-url URL --llm-model NAME | --command "python3 parse.py"] [--limit N] [--gold]
//! ```
//! Input: the generic JSONL corpus (context turns, responses and references, each distinct text
//! once), a text file (one sentence per line), or a PENMAN file (its `::snt` lines; with `--gold`
//! its graphs are the gold standard and the Smatch of the parsed graphs against them is
//! reported). Prints the counts of valid graphs before and after repair. LLM answers are cached
//! in `FILE.amr.txt.cache/`, so a killed run resumes without repeating calls.
//!
//! The program is `dialeval_cli::commands::amr_parse` (also `dialeval amr-parse` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::amr_parse::main(std::env::args_os())
}
