//! Rates items with an LLM judge on the paper's four criteria.
//!
//! ```text
//! cargo run --release --example llm_judge -- --base-url http://127.0.0.1:8089/v1 --model smollm2-135m \
//!     --input ITEMS.jsonl [--criteria all|coherence,groundedness] [--variant full|no-slm|no-amr|plain|multi] \
//!     [--scoring parse|logprob|sample] [--samples 5] [--temperature 0.7] [--cache DIR] [--templates DIR] \
//!     [--budget 12000] [--concurrency 1] [--corpus jsonl|usr] [--amr FILE,…] [--sample N]
//! ```
//! ITEMS.jsonl is the generic format of `dialeval_datasets::jsonl` (turns may carry `amr`);
//! `--corpus usr` reads USR-PersonaChat instead (default: the bundled copy, with its silver AMR
//! and the persona as knowledge). `--sample N` judges N items spread evenly over the corpus.
//! When the items carry human ratings, stderr ends with each criterion's Spearman with them
//! (n, p), the unscorable answers and the throughput.
//! The variants that show the SLM's probability (full, no-amr, multi) score every item with the
//! SLM of `--slm` first (default: the shipped `models/slm`). One JSON object per item ×
//! criterion goes to stdout: `{"id", "criterion", "variant", "outcome", "truncation", "calls"}`;
//! a failed judgement is `{"id", "criterion", "error"}`. The cache (default
//! `.dialeval-cache/llm`) makes a killed run resume without repeating calls. The API key, if
//! any, is read from `$OPENAI_API_KEY`.
//!
//! The program is `dialeval_cli::commands::llm_judge` (also `dialeval llm-judge` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::llm_judge::main(std::env::args_os())
}
