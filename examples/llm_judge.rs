//! Rates items with an LLM judge on the paper's four criteria.
//!
//! ```text
//! cargo run --release --example llm_judge -- --base-url http://127.0.0.1:8089/v1 --model smollm2-135m \
//!     --input ITEMS.jsonl [--criteria all|coherence,groundedness] [--variant full|no-slm|no-amr|plain|multi] \
//!     [--scoring parse|logprob|sample] [--samples 5] [--temperature 0.7] [--cache DIR] [--templates DIR] \
//!     [--budget 12000] [--concurrency 1]
//! ```
//! ITEMS.jsonl is the generic format of `dialeval_datasets::jsonl` (turns may carry `amr`),
//! plus an optional top-level `slm_score` (the SLM's probability). One JSON object per item ×
//! criterion goes to stdout: `{"id", "criterion", "variant", "outcome", "truncation", "calls"}`;
//! a failed judgement is `{"id", "criterion", "error"}`. The cache (default
//! `.dialeval-cache/llm`) makes a killed run resume without repeating calls. The API key, if
//! any, is read from `$OPENAI_API_KEY`.

use std::process::ExitCode;
use std::time::Duration;

use dialeval_common::Criterion;
use dialeval_llm_prompt::judge::CRITERIA;
use dialeval_llm_prompt::prompt::{PromptInput, Templates, Variant};
use dialeval_llm_prompt::{CachedClient, Judge, JudgeConfig, OpenAiClient, OpenAiConfig, Scoring};
use serde_json::{Value, json};

fn main() -> ExitCode {
    dialeval_examples::finish("llm_judge", run())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let opts = dialeval_examples::flags(std::env::args().skip(1))?;
    let get = |k: &str, default: &str| opts.get(k).cloned().unwrap_or_else(|| default.to_owned());
    let input = opts.get("input").ok_or("--input ITEMS.jsonl is required")?;
    let variant: Variant = get("variant", "full").parse()?;
    let criteria: Vec<Criterion> = match get("criteria", "all").as_str() {
        "all" => CRITERIA.to_vec(),
        list => list.split(',').map(|c| c.parse::<Criterion>()).collect::<Result<_, _>>()?,
    };
    let scoring = match get("scoring", "parse").as_str() {
        "parse" => Scoring::Parse,
        "logprob" => Scoring::Logprob { top_logprobs: 20, min_mass: 0.5 },
        "sample" => Scoring::Sample { samples: get("samples", "5").parse()?, temperature: get("temperature", "0.7").parse()? },
        other => return Err(format!("unknown --scoring {other:?} (parse, logprob, sample)").into()),
    };
    let items = dialeval_datasets::jsonl::load(input.as_ref())?;
    let text = std::fs::read_to_string(input)?;
    let slm: Vec<Option<f64>> = text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str::<Value>(l).ok().and_then(|v| v.get("slm_score").and_then(Value::as_f64))).collect();
    let inputs: Vec<PromptInput> = items
        .iter()
        .zip(slm.iter().copied().chain(std::iter::repeat(None)))
        .map(|(it, slm_score)| PromptInput {
            context: it.context.iter().map(|t| (t.speaker.clone(), t.text.clone())).collect(),
            response: it.response.as_ref().map(|r| r.text.clone()).unwrap_or_default(),
            knowledge: it.knowledge.clone(),
            slm_score,
            context_amr: it.context.iter().filter_map(|t| t.amr.clone()).collect(),
            response_amr: it.response.as_ref().and_then(|r| r.amr.clone()),
        })
        .collect();
    let client = OpenAiClient::new(OpenAiConfig {
        base_url: get("base-url", "http://127.0.0.1:8089/v1"),
        timeout: Duration::from_secs(get("timeout", "300").parse()?),
        concurrency: get("concurrency", "1").parse()?,
        ..OpenAiConfig::default()
    })?;
    let client = CachedClient::new(client, get("cache", ".dialeval-cache/llm"))?;
    let templates = match opts.get("templates") {
        Some(dir) => Templates::from_dir(dir.as_ref())?,
        None => Templates::builtin()?,
    };
    let config = JudgeConfig { model: get("model", "smollm2-135m"), budget_chars: get("budget", "12000").parse()?, ..JudgeConfig::default() };
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
