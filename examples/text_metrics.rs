//! Sentence BLEU, ROUGE (with and without stemming) and METEOR for every line of a JSONL file,
//! then corpus BLEU.
//!
//! ```text
//! cargo run --release --example text_metrics -- PAIRS.jsonl
//! ```
//! Each input line holds `hypothesis` and `reference` (a string, or a list of strings for
//! several references). Each output line holds `sentence_bleu` (`score`, `counts`, `totals`,
//! `bp`), `rouge` and `rouge_stem` (`rouge1`/`rouge2`/`rougeL` × `precision`/`recall`/
//! `fmeasure`) and `meteor`, with the field names of the Python references; a malformed line
//! gives `{"line", "error"}` instead. The last line is `{"corpus_bleu": ...}` over the good
//! lines. METEOR needs WordNet 3.0 (`apt-get install wordnet-base`).
//!
//! The program is `dialeval_cli::commands::text_metrics` (also `dialeval text-metrics` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::text_metrics::main(std::env::args_os())
}
