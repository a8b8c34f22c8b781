//! Rates items with an LLM judge on the paper's four criteria.
//!
//! ```text
//! cargo run --release --example llm_judge -- --base-url http://127.0.0.1:8089/v1 --model smollm2-135m \
//!     --input ITEMS.jsonl [--criteria all|coherence,groundedness] [--variant full|no-slm|no-amr|plain|multi] \
//!     [--scoring parse|logprob|sample] [--samples 5] [--temperature 0.7] [--cache DIR] [--templates DIR] \
//!     [--budget 12000] [--concurrency 1]
//! ```
//! ITEMS.jsonl is the generic format of `dialeval_datasets::jsonl` (turns may carry `amr`).
//! The variants that show the SLM's probability (full, no-amr, multi) score every item with the
//! SLM of `--slm` first (default: the shipped `models/slm`). One JSON object per item ×
//! criterion goes to stdout: `{"id", "criterion", "variant", "outcome", "truncation", "calls"}`;
//! a failed judgement is `{"id", "criterion", "error"}`. The cache (default
//! `.dialeval-cache/llm`) makes a killed run resume without repeating calls. The API key, if
//! any, is read from `$OPENAI_API_KEY`.

use std::process::ExitCode;
use std::time::Duration;

use dialeval_common::Criterion;
use dialeval_eval::families::llm::prompt_input;
use dialeval_eval::models::{Compute, score_items};
use dialeval_llm_prompt::judge::CRITERIA;
use dialeval_llm_prompt::prompt::{PromptInput, Templates, Variant};
use dialeval_llm_prompt::{CachedClient, Judge, JudgeConfig, OpenAiClient, OpenAiConfig, Scoring};
use dialeval_slm_model::train::Scorer;
use serde_json::json;

/// How answers become scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ScoringKind {
    /// Read the number in the answer.
    Parse,
    /// Probability-weighted mean over the score tokens (top 20 logprobs).
    Logprob,
    /// Mean of `--samples` answers at `--temperature`.
    Sample,
}

#[derive(Debug, clap::Parser)]
#[command(about = "Rate items with an LLM judge on the paper's four criteria")]
struct Args {
    /// Items in the generic JSONL format.
    #[arg(long)]
    input: std::path::PathBuf,
    /// OpenAI-compatible endpoint.
    #[arg(long, default_value = "http://127.0.0.1:8089/v1")]
    base_url: String,
    /// Model name sent to the endpoint.
    #[arg(long, default_value = "smollm2-135m")]
    model: String,
    /// `all` or a comma-separated list (coherence, groundedness, …).
    #[arg(long, default_value = "all")]
    criteria: String,
    /// Prompt variant: full, no-slm, no-amr, plain, multi.
    #[arg(long, default_value = "full")]
    variant: Variant,
    /// How answers become scores.
    #[arg(long, value_enum, default_value_t = ScoringKind::Parse)]
    scoring: ScoringKind,
    /// Answers per judgement with `--scoring sample`.
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// Temperature with `--scoring sample`.
    #[arg(long, default_value_t = 0.7)]
    temperature: f64,
    /// Response cache (a killed run resumes without repeating calls).
    #[arg(long, default_value = ".dialeval-cache/llm")]
    cache: std::path::PathBuf,
    /// A folder of templates replacing the shipped ones by file name.
    #[arg(long)]
    templates: Option<std::path::PathBuf>,
    /// Prompt budget in characters.
    #[arg(long, default_value_t = 12_000)]
    budget: usize,
    /// Seconds before a call times out.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// The SLM checkpoint whose probability the full, no-amr and multi prompts show.
    #[arg(long, default_value = "models/slm")]
    slm: std::path::PathBuf,
    /// Where the models run: cpu, wgpu (the default adapter) or wgpu:N (the N-th discrete GPU; needs the `wgpu` feature).
    #[arg(long, default_value = "cpu")]
    device: Compute,
    /// Calls in flight.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
}

fn main() -> ExitCode {
    dialeval_examples::finish("llm_judge", run(&<Args as clap::Parser>::parse()))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let input = &args.input;
    let variant = args.variant;
    let criteria: Vec<Criterion> = match args.criteria.as_str() {
        "all" => CRITERIA.to_vec(),
        list => list.split(',').map(|c| c.parse::<Criterion>()).collect::<Result<_, _>>()?,
    };
    let scoring = match args.scoring {
        ScoringKind::Parse => Scoring::Parse,
        ScoringKind::Logprob => Scoring::Logprob { top_logprobs: 20, min_mass: 0.5 },
        ScoringKind::Sample => Scoring::Sample { samples: args.samples, temperature: args.temperature },
    };
    let items = dialeval_datasets::jsonl::load(input)?;
    let slm: Vec<Option<f64>> =
        if variant.uses_slm() { score_items(&Scorer::load(&args.slm, args.device.device()?)?, &items, 2, &|_, _| {})?.into_iter().map(Some).collect() } else { vec![None; items.len()] };
    let inputs: Vec<PromptInput> = items.iter().zip(slm).map(|(it, slm_score)| PromptInput { slm_score, ..prompt_input(it) }).collect();
    let client = OpenAiClient::new(OpenAiConfig { base_url: args.base_url.clone(), timeout: Duration::from_secs(args.timeout), concurrency: args.concurrency, ..OpenAiConfig::default() })?;
    let client = CachedClient::new(client, args.cache.clone())?;
    let templates = match &args.templates {
        Some(dir) => Templates::from_dir(dir)?,
        None => Templates::builtin()?,
    };
    let config = JudgeConfig { model: args.model.clone(), budget_chars: args.budget, ..JudgeConfig::default() };
    let judge = Judge::new(client, templates, config);
    let bar = dialeval_examples::Progress::new("judgements");
    let results = judge.judge_batch(&inputs, &criteria, variant, scoring, &|done, total| bar.update(done, total));
    bar.finish();
    for (item, row) in items.iter().zip(results) {
        for r in row {
            let line = match r {
                Ok(j) => json!({"id": item.id, "criterion": j.criterion, "variant": j.variant, "outcome": j.outcome, "truncation": j.truncation, "calls": j.calls}),
                Err(e) => json!({"id": item.id, "error": e.to_string()}),
            };
            println!("{line}");
        }
    }
    Ok(())
}
