//! The main job: score a corpus with every metric its inputs allow, correlate each with the
//! human ratings, and write a report with tables and plots. Wiring only: the pipeline is
//! `dialeval-eval` (families, cache, analysis, writers).
//!
//! With no options it evaluates the bundled USR-PersonaChat (`data/usr-personachat`) with its
//! silver AMR, offline: length, BLEU/ROUGE-L/METEOR, BERTScore and the embedding metrics
//! (MiniLM from `scripts/fetch_minilm.sh`), BERT-RUBER, the AMR-gated SLM (checkpoints shipped in
//! `models/`, verified by their `SHA256SUMS`), Smatch, and the LLM judge when an endpoint answers
//! (`--llm-base-url`, or the local server of `scripts/llm_server.sh` on its default address).
//! Every family is cached in `OUT/metrics/` under a key of the items and its settings, so a
//! killed run restarts where it stopped. `--shard k/n` scores one shard of the corpus, and
//! `evaluate merge DIR...` (with the same corpus flags) builds the whole corpus's report from
//! the shards' folders. `cargo run --release --example evaluate -- --help`.
//!
//! The program is `dialeval_cli::commands::evaluate` (also `dialeval evaluate` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::evaluate::main(std::env::args_os())
}
