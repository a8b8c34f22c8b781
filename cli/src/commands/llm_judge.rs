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

use std::process::ExitCode;
use std::time::Duration;

use dialeval_common::Criterion;
use dialeval_datasets::{CorpusFormat, Selection};
use dialeval_eval::families::llm::prompt_input;
use dialeval_eval::models::{Compute, score_items};
use dialeval_llm_prompt::judge::CRITERIA;
use dialeval_llm_prompt::prompt::{PromptInput, Templates, Variant};
use dialeval_llm_prompt::{CachedClient, Judge, JudgeConfig, JudgeMode, OpenAiClient, OpenAiConfig, Scoring};
use dialeval_slm_model::scorer::Scorer;
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
    /// The items: a file in the generic JSONL format, or of the `--corpus` format (with `--corpus usr` the bundled copy by default).
    #[arg(long)]
    input: Option<std::path::PathBuf>,
    /// What `--input` is: jsonl, usr, fed, fed-dialogue or grade (the release's `evaluation/` folder).
    #[arg(long, default_value = "jsonl")]
    corpus: CorpusFormat,
    /// PENMAN files whose graphs are attached to turns by sentence text (default for usr: the bundled silver AMR).
    #[arg(long, value_delimiter = ',')]
    amr: Vec<std::path::PathBuf>,
    /// Judge only this many items, spread evenly over the corpus (every k-th).
    #[arg(long)]
    sample: Option<usize>,
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

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    crate::support::finish("llm_judge", run(&<Args as clap::Parser>::parse_from(args)))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
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
    let mut items = match (args.corpus, &args.input) {
        (format, Some(input)) => format.load(input, &Selection::default())?.items,
        (CorpusFormat::Usr, None) => dialeval_datasets::usr::load(std::path::Path::new("data/usr-personachat/pc_usr_data.json"))?,
        (format, None) => return Err(format!("--corpus {format} needs --input (the bundled default is --corpus usr)").into()),
    };
    let amr = if args.amr.is_empty() && args.corpus == CorpusFormat::Usr { vec!["data/silver-amr/usr-personachat.silver.amr.txt".into()] } else { args.amr.clone() };
    if !amr.is_empty() {
        let coverage = dialeval_datasets::amr::AmrIndex::load(&amr)?.attach(&mut items);
        eprintln!("llm_judge: AMR for {} of {} utterances", coverage.with_amr, coverage.turns);
    }
    if let Some(n) = args.sample.filter(|&n| n > 0 && n < items.len()) {
        let len = items.len();
        items = (0..n).map(|k| items[k * len / n].clone()).collect();
    }
    eprintln!("llm_judge: {} items × {} criteria, variant {variant:?}", items.len(), criteria.len());
    let started = std::time::Instant::now();
    let slm: Vec<Option<f64>> =
        if variant.uses_slm() { score_items(&Scorer::load(&args.slm, args.device.device()?)?, &items, &|_, _| {})?.into_iter().map(Some).collect() } else { vec![None; items.len()] };
    let inputs: Vec<PromptInput> = items.iter().zip(slm).map(|(it, slm_score)| PromptInput { slm_score, ..prompt_input(it) }).collect();
    let client = OpenAiClient::new(OpenAiConfig { base_url: args.base_url.clone(), timeout: Duration::from_secs(args.timeout), concurrency: args.concurrency, ..OpenAiConfig::default() })?;
    let client = CachedClient::new(client, args.cache.clone())?;
    let templates = match &args.templates {
        Some(dir) => Templates::from_dir(dir)?,
        None => Templates::builtin()?,
    };
    let config = JudgeConfig { model: args.model.clone(), budget_chars: args.budget, ..JudgeConfig::default() };
    let judge = Judge::new(client, templates, config);
    let bar = crate::support::Progress::new("judgements");
    let results = judge.judge_batch(&inputs, &criteria, JudgeMode { variant, scoring }, &|done, total| bar.update(done, total));
    bar.finish();
    let wall = started.elapsed().as_secs_f64();
    // Per criterion: (judge's score, human mean) of the items with both; answers without a score.
    let mut pairs: Vec<(Vec<f64>, Vec<f64>, usize)> = vec![(Vec::new(), Vec::new(), 0); criteria.len()];
    let (mut calls, mut fresh, mut prompt_tokens, mut fresh_ms) = (0, 0, 0_u64, 0.0);
    // A Multi answer rates every criterion at once: each of the row's judgements carries that
    // one call, counted once.
    let one_call_per_row = variant == Variant::Multi;
    for (item, row) in items.iter().zip(results) {
        let mut row_counted = false;
        for r in row {
            let line = match r {
                Ok(j) => {
                    let calls_here = if one_call_per_row && row_counted { &[][..] } else { &j.calls[..] };
                    row_counted = true;
                    for c in calls_here {
                        calls += 1;
                        if !c.cached {
                            fresh += 1;
                            fresh_ms += c.latency_ms;
                            prompt_tokens += c.prompt_tokens.unwrap_or(0);
                        }
                    }
                    if let Some(k) = criteria.iter().position(|&c| c == j.criterion) {
                        match (j.outcome.value(), item.mean(j.criterion)) {
                            (Some(v), Some(h)) => {
                                pairs[k].0.push(v);
                                pairs[k].1.push(h);
                            }
                            (None, _) => pairs[k].2 += 1,
                            _ => {}
                        }
                    }
                    json!({"id": item.id, "criterion": j.criterion, "variant": j.variant, "outcome": j.outcome, "truncation": j.truncation, "calls": j.calls})
                }
                Err(e) => json!({"id": item.id, "error": e.to_string()}),
            };
            println!("{line}");
        }
    }
    for (c, (judge, human, unscorable)) in criteria.iter().zip(&pairs) {
        let rho = match dialeval_metrics::correlation::spearman(judge, human) {
            Ok(r) if r.statistic.is_finite() => format!("{:.3} (p={:.3})", r.statistic, r.pvalue),
            Ok(r) => format!("undefined ({})", r.undefined.map_or("no variation", |u| u.reason())),
            Err(e) => format!("undefined ({e})"),
        };
        eprintln!("llm_judge: {variant:?} {}: Spearman with people {rho}, n = {}; {unscorable} of {} answers unscorable", c.name(), judge.len(), judge.len() + unscorable);
    }
    let per_call = if fresh > 0 { fresh_ms / 1000.0 / fresh as f64 } else { 0.0 };
    let tps = if fresh_ms > 0.0 { prompt_tokens as f64 / (fresh_ms / 1000.0) } else { 0.0 };
    eprintln!("llm_judge: {calls} calls ({fresh} not cached: {per_call:.1} s each, {tps:.0} prompt tokens/s) in {wall:.0} s");
    Ok(())
}
