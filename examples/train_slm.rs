//! Trains the SLM (AMR-gated dual encoder) on CPU.
//!
//! ```text
//! cargo run --release --example train_slm -- --data mix|ddpp|diplomacy --out DIR [--mode gated|text_only|graph_only|concat|residual]
//!     [--text-encoder pretrained|cross|scratch] [--graph-dropout 0.3] [--topical yes|no] [--length-control yes|no] [--contrastive-weight 0.5] [--encoder DIR]
//!     [--knowledge yes|no] [--knowledge-dropout 0.5] [--knowledge-unit whole|sentence] [--context-turns 2]
//!     [--epochs 5] [--batch 16] [--lr 0.001] [--seed 0] [--d-model 64] [--layers 2] [--limit N] [--shared ../shared]
//! ```
//! - `mix` (the default): the training mix of `dialeval_datasets::mix` — DailyDialog++ dev + test
//!   (length-matched corpus negatives), `data_positives.json` with length-matched sampled
//!   negatives, Topical-Chat next-turn pairs; silver AMR attached where it exists; tested on the
//!   100 annotated DailyDialog++ test contexts (with their graphs, and again with every graph
//!   withheld).
//! - `ddpp`: trained on DailyDialog++ dev (10% of contexts held out as dev by a seeded split of
//!   context ids), tested on DailyDialog++ test, honouring `overlap_exclude_ids.tsv`; text only
//!   unless silver AMR is found for the utterances (`silver-amr/*.silver.amr.txt` is attached by
//!   sentence text).
//! - `diplomacy`: Diplomacy messages with gold AMR, previous message → next message, random
//!   negatives from other conversations; split 70/15/15 (train/dev/test) by conversation id.
//!
//! Prints one JSON line per epoch and then `{"test": {...}}` (accuracy at 0.5 and ROC AUC against
//! all negatives, against random and against adversarial negatives), also written to
//! `DIR/test.json`. `--limit N` keeps the first N training pairs and N/4 + 1 dev and test pairs.
//! Killed and restarted with the same `--out`, it resumes from the last finished epoch.
//! The log is `DIR/log.jsonl`; the best model is `DIR/best`, scored by `score_slm`.
//!
//! The program is `dialeval_cli::commands::train_slm` (also `dialeval train-slm` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::train_slm::main(std::env::args_os())
}
