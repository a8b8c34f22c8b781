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

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dialeval_amr_graph::smatch::{Smatch, SmatchConfig, SmatchScore};
use dialeval_amr_parse::{AmrParser, CommandAmrParser, LlmAmrParser, LlmParserConfig, ParseStats};
use dialeval_datasets::amr::read_blocks;
use dialeval_llm_prompt::{CachedClient, OpenAiClient, OpenAiConfig};

#[derive(Debug, Parser)]
#[command(about = "Parse the utterances of a corpus into AMR (LLM endpoint or external parser)")]
struct Args {
    /// ITEMS.jsonl, a text file (one sentence per line) or a PENMAN file (its ::snt lines).
    #[arg(long)]
    input: PathBuf,
    /// The PENMAN output.
    #[arg(long)]
    out: PathBuf,
    /// OpenAI-compatible endpoint (default: the local server of scripts/llm_server.sh).
    #[arg(long, default_value = "http://127.0.0.1:8089/v1")]
    llm_base_url: String,
    /// Model name sent to the endpoint.
    #[arg(long, default_value = "smollm2-135m")]
    llm_model: String,
    /// An external parser over the line protocol of dialeval_amr_parse::command, instead of the LLM.
    #[arg(long)]
    command: Option<String>,
    /// Repair rounds of the LLM parser.
    #[arg(long, default_value_t = 2)]
    repair_rounds: usize,
    /// Parse only the first N sentences.
    #[arg(long)]
    limit: Option<usize>,
    /// The input is a gold PENMAN file: report the Smatch of the parsed graphs against it.
    #[arg(long)]
    gold: bool,
}

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    crate::support::finish("amr_parse", run(&Args::parse_from(args)))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let name = args.input.to_string_lossy();
    let (mut sentences, mut gold): (Vec<String>, Vec<Option<String>>) = if name.ends_with(".jsonl") {
        let items = dialeval_datasets::jsonl::load(&args.input)?;
        let texts = items.iter().flat_map(|i| i.context.iter().map(|t| t.text.clone()).chain(i.response.iter().map(|r| r.text.clone())).chain(i.references.iter().cloned()));
        let mut seen = HashSet::new();
        let distinct: Vec<String> = texts.filter(|t| seen.insert(t.trim().to_owned())).collect();
        let n = distinct.len();
        (distinct, vec![None; n])
    } else if name.contains(".amr") || args.gold {
        read_blocks(&args.input)?.into_iter().filter(|b| !b.is_empty_placeholder()).filter_map(|b| Some((b.snt?, Some(b.penman)))).unzip()
    } else {
        let lines: Vec<String> = std::fs::read_to_string(&args.input)?.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect();
        let n = lines.len();
        (lines, vec![None; n])
    };
    if let Some(n) = args.limit {
        sentences.truncate(n);
        gold.truncate(n);
    }
    let parser: Box<dyn AmrParser> = match &args.command {
        Some(cmd) => Box::new(CommandAmrParser::from_command_line(cmd)?),
        None => {
            let http = OpenAiClient::new(OpenAiConfig { base_url: args.llm_base_url.clone(), timeout: Duration::from_secs(300), ..OpenAiConfig::default() })?;
            let cache = CachedClient::new(http, PathBuf::from(format!("{}.cache", args.out.display())))?;
            Box::new(LlmAmrParser::new(cache, LlmParserConfig { model: args.llm_model.clone(), repair_rounds: args.repair_rounds, ..LlmParserConfig::default() })?)
        }
    };
    let bar = crate::support::Progress::new("amr_parse");
    let mut results = Vec::with_capacity(sentences.len());
    for (k, chunk) in sentences.chunks(8).enumerate() {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        results.extend(parser.parse_batch(&refs));
        bar.update((k * 8 + chunk.len()).min(sentences.len()), sentences.len());
    }
    bar.finish();
    let mut out = String::new();
    let (mut smatch_total, mut scored) = (SmatchScore::default(), 0_usize);
    let smatch = Smatch::new(SmatchConfig::default())?;
    for (k, (sentence, result)) in sentences.iter().zip(&results).enumerate() {
        match result {
            Ok(p) => {
                out.push_str(&p.block(&format!("s{}", k + 1), sentence, parser.name(), parser.model()));
                out.push('\n');
                if let Some(g) = gold.get(k).and_then(Option::as_ref).filter(|_| args.gold) {
                    smatch_total += smatch.score_str(&p.penman, g)?;
                    scored += 1;
                }
            }
            Err(e) => eprintln!("amr_parse: s{}: {e}", k + 1),
        }
    }
    std::fs::write(&args.out, out)?;
    let stats = ParseStats::of(&results);
    let mut report =
        serde_json::json!({"stats": stats, "valid_before_repair": stats.valid_before_repair(), "valid_after_repair": stats.valid_after_all(), "parser": parser.name(), "model": parser.model()});
    if args.gold {
        // Sentences without a valid graph count as 0 matched triples against their gold graph.
        for (k, g) in gold.iter().enumerate() {
            if let (Err(_), Some(g)) = (&results[k], g) {
                smatch_total += smatch.score_str("(a / amr-empty)", g)?;
            }
        }
        report["smatch_f1"] = serde_json::json!(smatch_total.f1());
        report["smatch_sentences"] = serde_json::json!(sentences.len());
        report["smatch_parsed"] = serde_json::json!(scored);
    }
    println!("{report}");
    Ok(())
}
