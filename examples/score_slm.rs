//! Scores items with a trained SLM: one probability per line of ITEMS.jsonl.
//!
//! ```text
//! cargo run --release --example score_slm -- CHECKPOINT_DIR ITEMS.jsonl
//! ```
//! ITEMS.jsonl is the generic format of `dialeval_datasets::jsonl` (context turns and response may
//! carry `amr`); each item is scored with the last context turns the model reads (two for the shipped one). Prints `{"id", "score"}`
//! per item. A model with the pretrained text head reads all-MiniLM-L6-v2 sentence vectors
//! (`$DIALEVAL_MINILM`, default `~/.cache/dialeval/models/all-MiniLM-L6-v2`).
//!
//! The program is `dialeval_cli::commands::score_slm` (also `dialeval score-slm` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::score_slm::main(std::env::args_os())
}
