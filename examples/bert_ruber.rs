//! BERT-RUBER: trains the unreferenced model on DailyDialog++ and scores USR-PersonaChat with
//! the unreferenced, referenced and hybrid scores, correlated with the human ratings.
//!
//! ```text
//! cargo run --release --example bert_ruber -- train --out DIR [--embeddings bert|static]
//!     [--representation max_pool|mean_pool|bi_gru] [--objective cross_entropy|ranking]
//!     [--data mix|positives] [--topical yes|no] [--contexts 2000] [--query-turns 2]
//!     [--epochs 10] [--batch 64] [--lr 0.001] [--seed 0] [--encoder DIR] [--shared ../shared]
//! cargo run --release --example bert_ruber -- score --model DIR [--out REPORT_DIR] [--encoder DIR] [--shared ../shared]
//! ```
//! Training triples with `--data mix` (the default): the training mix of
//! `dialeval_datasets::mix` (DailyDialog++ dev + test with length-matched corpus negatives,
//! `data_positives.json` with length-matched sampled negatives, Topical-Chat next-turn pairs
//! unless `--topical no`), each positive with a negative of its own context in turn; dev: the
//! mix's dev contexts. With `--data positives`: each positive response of the first `--contexts` contexts of
//! `data_positives.json` with a positive of another context as the sampled negative; dev: 300
//! contexts of `dev.json`, positives against the corpus's random negatives; both honour
//! `overlap_exclude_ids.tsv`. Token states of MiniLM (`scripts/fetch_minilm.sh`) are cached in
//! `~/.cache/dialeval/embeddings/<encoder>.bin`, so the encoder runs once per sentence.
//! A killed `train` resumes from its last finished epoch.
//!
//! `score` runs the main job's BERT-RUBER family on USR-PersonaChat (unreferenced; referenced =
//! cosine of max-min pooled token states of response and ground truth; hybrids = min, max,
//! arithmetic and geometric mean of the min-max normalised pair), prints the summary table
//! (Spearman / Pearson with every criterion, ρ with length) and, with `--out`, writes the
//! report folder of `evaluate`.
//!
//! The program is `dialeval_cli::commands::bert_ruber` (also `dialeval train-ruber | score-ruber` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::bert_ruber::main(std::env::args_os())
}
