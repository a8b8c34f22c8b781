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
//! killed run restarts where it stopped. `cargo run --release --example evaluate -- --help`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use dialeval_amr_graph::smatch::SmatchConfig;
use dialeval_amr_parse::{AmrParser, CommandAmrParser, LlmAmrParser, LlmParserConfig};
use dialeval_common::MultiRef;
use dialeval_datasets::DialogueItem;
use dialeval_datasets::amr::AmrIndex;
use dialeval_eval::families::{BertRuberFamily, EmbeddingFamily, LengthFamily, LexicalFamily, LlmFamily, MemoEmbedder, SlmFamily, SmatchFamily};
use dialeval_eval::models::{CheckpointIdentity, Compute, ModelSource, Retrain, RetrainData, SharedCache, default_cache_dir};
use dialeval_eval::shard::{Shard, ShardScores, merge};
use dialeval_eval::{Evaluation, Event, FamilyCache, Pipeline, Report};
use dialeval_examples::Progress;
use dialeval_llm_prompt::prompt::{Templates, Variant};
use dialeval_llm_prompt::{CachedClient, JudgeConfig, OpenAiClient, OpenAiConfig, Scoring};
use dialeval_metrics::inference::BootstrapConfig;
use dialeval_metrics::report::ReportConfig;
use dialeval_slm_model::bert::{PretrainedEncoder, default_model_dir};
use dialeval_slm_model::ruber::RuberScorer;
use dialeval_slm_model::train::Scorer;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The endpoint of the local server (`scripts/llm_server.sh start`), used when none is given.
const LOCAL_LLM: &str = "http://127.0.0.1:8089/v1";

/// The corpora the main job reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Corpus {
    /// USR-PersonaChat (`pc_usr_data.json`; default: the bundled copy).
    Usr,
    /// FED turn level (`fed_data.json`).
    Fed,
    /// FED dialogue level (`fed_data.json`; whole dialogues, no response).
    FedDialogue,
    /// GRADE's release (`--input` = its `evaluation/` folder; every cell, or `--subset DATASET`).
    Grade,
    /// The generic JSONL format of `dialeval-datasets`.
    Jsonl,
}

/// The metric families, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
enum Family {
    Length,
    Lexical,
    Embedding,
    BertRuber,
    Slm,
    Smatch,
    Llm,
}

#[derive(Debug, Parser)]
#[command(about = "Score a dialogue corpus with every metric and correlate each with the human ratings")]
struct Args {
    /// Which corpus format `--input` is.
    #[arg(long, value_enum, default_value_t = Corpus::Usr)]
    corpus: Corpus,
    /// The corpus file (required for fed, grade and jsonl).
    #[arg(long)]
    input: Option<String>,
    /// grade: only the cells of this dataset (`convai2`, `dailydialog`, `empatheticdialogues`).
    #[arg(long)]
    subset: Option<String>,
    /// Parse every utterance lacking a graph before the AMR families run: `llm` (the
    /// --llm-base-url endpoint) or `command:CMD` (an external parser over the line protocol of
    /// dialeval-amr-parse); graphs go to OUT/amr/parsed-<parser>.amr.txt and are reused.
    #[arg(long, value_parser = amr_parser_choice)]
    amr_parser: Option<AmrParserChoice>,
    /// PENMAN files whose graphs are attached to turns by sentence text (default for usr: the bundled silver AMR).
    #[arg(long, value_delimiter = ',')]
    amr: Vec<PathBuf>,
    /// Output folder.
    #[arg(long, default_value = "evaluation")]
    out: PathBuf,
    /// The repository's bundled data.
    #[arg(long, default_value = "data")]
    data: PathBuf,
    /// Shipped checkpoints.
    #[arg(long, default_value = "models")]
    models: PathBuf,
    /// An SLM checkpoint directory instead of the shipped one.
    #[arg(long)]
    slm: Option<PathBuf>,
    /// A BERT-RUBER checkpoint directory instead of the shipped one.
    #[arg(long)]
    ruber: Option<PathBuf>,
    /// The sentence encoder (default: all-MiniLM-L6-v2 from scripts/fetch_minilm.sh).
    #[arg(long)]
    encoder: Option<PathBuf>,
    /// OpenAI-compatible endpoint of the LLM judge.
    #[arg(long)]
    llm_base_url: Option<String>,
    /// Model name sent to the endpoint.
    #[arg(long, default_value = "smollm2-135m")]
    llm_model: String,
    /// Seed of retraining.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Bootstrap resamples for the Spearman and Kendall intervals (0: no intervals).
    #[arg(long, default_value_t = 1000)]
    bootstrap: usize,
    /// Score only shard k of n (items chosen by a hash of their id) and leave `shard.json` in
    /// --out for `--merge`.
    #[arg(long)]
    shard: Option<Shard>,
    /// Build the report from the `shard.json` of these output folders (every shard 1..n of one
    /// split, run with the same corpus flags as this command) instead of scoring.
    #[arg(long, value_delimiter = ',')]
    merge: Vec<PathBuf>,
    /// Where the models run: cpu, wgpu (the default adapter) or wgpu:N (the N-th discrete GPU; needs the `wgpu` feature).
    #[arg(long, default_value = "cpu")]
    device: Compute,
    /// Train the learned scorers afresh on the bundled DailyDialog++ dev data instead of using the shipped checkpoints.
    #[arg(long)]
    retrain: bool,
    /// Families to leave out.
    #[arg(long, value_enum, value_delimiter = ',')]
    skip: Vec<Family>,
    /// How the embedding metrics, BERT-RUBER's referenced score and Smatch combine several
    /// references: `max` (bert-score's rule) or `mean`. BLEU, ROUGE and METEOR keep their own.
    #[arg(long, default_value = "max", value_parser = dialeval_examples::serde_value::<MultiRef>)]
    references: MultiRef,
    /// Fail on a malformed block of an AMR file instead of skipping it (the default skips it,
    /// names it with file and line on stderr and in report.md, and serves the file's other graphs).
    #[arg(long)]
    strict_amr: bool,
}

fn main() -> ExitCode {
    dialeval_examples::finish("evaluate", run(Args::parse()))
}

fn run(args: Args) -> AnyResult<()> {
    let mut items = load_corpus(&args)?;
    let mut amr_files = if args.amr.is_empty() && args.corpus == Corpus::Usr { vec![args.data.join("silver-amr/usr-personachat.silver.amr.txt")] } else { args.amr.clone() };
    if let Some(choice) = &args.amr_parser {
        amr_files.push(parse_missing(&args, choice, &items, &amr_files)?);
    }
    // Lenient by default: a malformed block is skipped and named (here and in report.md), the
    // file's other graphs are served; --strict-amr makes it an error.
    let amr = if args.strict_amr { AmrIndex::load(&amr_files)? } else { AmrIndex::load_lenient(&amr_files)? };
    for bad in &amr.malformed {
        eprintln!("evaluate: AMR block skipped: {bad} (--strict-amr makes this an error)");
    }
    let coverage = amr.attach(&mut items);
    eprintln!("evaluate: {} items of {:?}; AMR for {} of {} utterances", items.len(), args.corpus, coverage.with_amr, coverage.turns);
    let mut config = ReportConfig::default();
    config.bootstrap = config.bootstrap.filter(|_| args.bootstrap > 0).map(|b| BootstrapConfig { resamples: args.bootstrap, ..b });
    if !args.merge.is_empty() {
        let shards: Vec<ShardScores> = args.merge.iter().map(|d| ShardScores::read(d)).collect::<Result<_, _>>()?;
        let (table, runs) = merge(&items, &shards)?;
        eprintln!("evaluate: merged {} shards into {} items × {} metrics", shards.len(), table.items(), table.columns().len());
        let bar = std::sync::Mutex::new(None::<Progress>);
        let done = Report::analyse(&items, table, runs, &config, &|event| report(event, &bar))?;
        eprintln!("evaluate: writing the report …");
        done.write(&args.out)?;
        println!("{}", dialeval_eval::write::summary_markdown(&done.analysis));
        eprintln!("evaluate: report in {}", args.out.join("report.md").display());
        return Ok(());
    }
    let corpus = items;
    let part = args.shard.map(|shard| {
        let part = shard.select(&corpus);
        eprintln!("evaluate: shard {shard}: {} of the {} items", part.len(), corpus.len());
        part
    });
    let items: &[DialogueItem] = part.as_deref().unwrap_or(&corpus);
    let mut pipeline = Pipeline::new().with_cache(FamilyCache::open(&args.out.join("metrics"))?);
    let device = args.device.device()?;
    let encoder = PretrainedEncoder::load(&args.encoder.clone().unwrap_or_else(default_model_dir), &device).map(Arc::new);
    let memo = encoder.as_ref().ok().map(|e| Arc::new(MemoEmbedder::new(Arc::clone(e), e.fingerprint())));
    let cache = encoder.as_ref().ok().map(|e| Arc::new(SharedCache::new(e, &default_cache_dir())));
    let no_encoder = || encoder.as_ref().err().map_or_else(String::new, |e| format!("no sentence encoder: {e} (run scripts/fetch_minilm.sh)"));
    let retrain = RetrainData { data: args.data.clone(), seed: args.seed, compute: args.device };
    let retrain_rule = if args.retrain { Retrain::Always } else { Retrain::IfNotShipped };
    for family in Family::value_variants() {
        let name = family.to_possible_value().map_or_else(String::new, |v| v.get_name().to_owned());
        if args.skip.contains(family) {
            pipeline.skip(&name, "left out by --skip");
            continue;
        }
        match (family, &encoder, &memo, &cache) {
            (Family::Length, ..) => {
                pipeline.add(LengthFamily);
            }
            (Family::Lexical, ..) => {
                pipeline.add(LexicalFamily::new()?);
            }
            (Family::Smatch, ..) => {
                pipeline.add(SmatchFamily::new(&amr, &amr_files, SmatchConfig::default())?.with_references(args.references));
            }
            (Family::Llm, ..) => match llm_family(&args)? {
                Some(f) => {
                    pipeline.add(f);
                }
                None => {
                    pipeline.skip(&name, "no LLM configured (give --llm-base-url or start scripts/llm_server.sh)");
                }
            },
            (Family::Embedding, Ok(_), Some(memo), _) => {
                pipeline.add(EmbeddingFamily::new(Arc::clone(memo)).with_references(args.references));
            }
            (Family::BertRuber, Ok(enc), Some(memo), Some(cache)) => {
                let source = ModelSource::resolve(args.ruber.as_deref(), &args.models, "bert-ruber", retrain_rule, &args.out, args.seed);
                eprintln!("evaluate: bert_ruber: {source}");
                if matches!(source, ModelSource::Retrain(_)) && !source.dir().join("done").is_file() {
                    let bar = Progress::new("BERT-RUBER");
                    cache.with(|c| retrain.train_ruber(enc, c, source.dir(), &|e, s, n| bar.update_epoch(e, s, n)))?;
                    bar.finish();
                }
                let scorer = RuberScorer::load(source.dir(), device.clone())?;
                pipeline.add(BertRuberFamily::new(scorer, CheckpointIdentity::of(source.dir())?, Arc::clone(enc), Arc::clone(memo), Arc::clone(cache)).with_references(args.references));
            }
            (Family::Slm, ..) => {
                let source = ModelSource::resolve(args.slm.as_deref(), &args.models, "slm", retrain_rule, &args.out, args.seed);
                eprintln!("evaluate: slm: {source}");
                if matches!(source, ModelSource::Retrain(_)) && !source.dir().join("done").is_file() {
                    let bar = Progress::new("SLM");
                    retrain.train_slm(source.dir(), &|e, s, n| bar.update_epoch(e, s, n))?;
                    bar.finish();
                }
                let scorer = Scorer::load(source.dir(), device.clone())?;
                let text_side = match (&encoder, &cache) {
                    (Ok(e), Some(c)) => Some((Arc::clone(e), Arc::clone(c))),
                    // This model reads sentence vectors: without the encoder it cannot score.
                    _ if scorer.featurizer().encoder.is_some() => {
                        pipeline.skip(&name, no_encoder());
                        continue;
                    }
                    _ => None,
                };
                pipeline.add(SlmFamily::new(scorer, CheckpointIdentity::of(source.dir())?, text_side));
            }
            _ => {
                pipeline.skip(&name, no_encoder());
            }
        }
    }
    let bar = std::sync::Mutex::new(None::<Progress>);
    let done = Evaluation::with_pipeline(items, pipeline).analysis(config).observe(|event| report(event, &bar)).run()?;
    eprintln!("evaluate: writing the report …");
    done.write(&args.out)?;
    if let Some(shard) = args.shard {
        ShardScores::new(shard, &corpus, items, &done.table, &done.runs)?.write(&args.out)?;
        eprintln!("evaluate: shard {shard}: scores for the merge in {}", args.out.join(dialeval_eval::shard::SHARD_FILE).display());
    }
    println!("{}", dialeval_eval::write::summary_markdown(&done.analysis));
    for r in &done.runs {
        eprintln!("evaluate: {:>10}: {:6.1} s", r.family, r.seconds);
    }
    eprintln!("evaluate: report in {}", args.out.join("report.md").display());
    Ok(())
}

/// Prints the pipeline's events on stderr, with a progress bar for the family at work.
fn report(event: Event<'_>, bar: &std::sync::Mutex<Option<Progress>>) {
    let mut bar = bar.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match event {
        Event::Cached { family, metrics } => eprintln!("evaluate: {family}: cached ({metrics} metrics)"),
        Event::Started { family } => {
            eprintln!("evaluate: {family} …");
            *bar = Some(Progress::new(family));
        }
        Event::Progress { done, total, .. } => bar.iter().for_each(|b| b.update(done, total)),
        Event::Finished { family, seconds } => {
            bar.take().iter().for_each(Progress::finish);
            eprintln!("evaluate: {family}: done in {seconds:.1} s");
        }
        Event::Skipped { family, reason } => eprintln!("evaluate: {family}: skipped ({reason})"),
        Event::Note { family, text } => eprintln!("evaluate: {family}: {text}"),
        Event::Analysis { done, total } => {
            let analysis = bar.get_or_insert_with(|| Progress::new("analysis"));
            analysis.update(done, total);
            if done == total {
                analysis.finish();
                *bar = None;
            }
        }
    }
}

fn load_corpus(args: &Args) -> AnyResult<Vec<DialogueItem>> {
    let input = || args.input.as_deref().ok_or_else(|| format!("--corpus {:?} needs --input", args.corpus));
    if args.subset.is_some() && args.corpus != Corpus::Grade {
        return Err("--subset is for --corpus grade".into());
    }
    Ok(match args.corpus {
        Corpus::Usr => dialeval_datasets::usr::load(&args.input.as_ref().map_or_else(|| args.data.join("usr-personachat/pc_usr_data.json"), PathBuf::from))?,
        Corpus::Fed => dialeval_datasets::fed::load(Path::new(input()?))?.turns,
        Corpus::FedDialogue => dialeval_datasets::fed::load(Path::new(input()?))?.dialogues,
        Corpus::Jsonl => dialeval_datasets::jsonl::load(Path::new(input()?))?,
        Corpus::Grade => {
            let release = dialeval_datasets::grade::load_release(Path::new(input()?), args.subset.as_deref(), None)?;
            for (cell, n) in &release.cells {
                eprintln!("evaluate: GRADE {}/{}: {n} items", cell.dataset, cell.model);
            }
            release.items
        }
    })
}

/// Which parser `--amr-parser` names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum AmrParserChoice {
    Llm,
    Command(String),
}

fn amr_parser_choice(value: &str) -> Result<AmrParserChoice, String> {
    match value.split_once(':') {
        None if value == "llm" => Ok(AmrParserChoice::Llm),
        Some(("command", cmd)) if !cmd.trim().is_empty() => Ok(AmrParserChoice::Command(cmd.to_owned())),
        _ => Err(format!("{value:?}: `llm` or `command:CMD`")),
    }
}

/// The parser `--amr-parser` names, run over the utterances no AMR file covers; returns the
/// file of its graphs (`OUT/amr/parsed-<parser>.amr.txt`).
fn parse_missing(args: &Args, choice: &AmrParserChoice, items: &[DialogueItem], files: &[PathBuf]) -> AnyResult<PathBuf> {
    let parser: Box<dyn AmrParser> = match choice {
        AmrParserChoice::Command(cmd) => Box::new(CommandAmrParser::from_command_line(cmd)?),
        AmrParserChoice::Llm => {
            let base_url = args.llm_base_url.clone().unwrap_or_else(|| LOCAL_LLM.to_owned());
            let http = OpenAiClient::new(OpenAiConfig { base_url, timeout: Duration::from_secs(300), ..OpenAiConfig::default() })?;
            let client = CachedClient::new(http, args.out.join("cache/amr-llm"))?;
            Box::new(LlmAmrParser::new(client, LlmParserConfig { model: args.llm_model.clone(), ..LlmParserConfig::default() })?)
        }
    };
    let bar = Progress::new("AMR parsing");
    let done = dialeval_eval::parse::parse_missing(parser.as_ref(), items, files, &args.out.join("amr"), &|d, t| bar.update(d, t))?;
    bar.finish();
    for (text, why) in &done.failures {
        eprintln!("evaluate: no graph for {text:?}: {why}");
    }
    eprintln!("evaluate: AMR parsing ({}): {:?}", parser.name(), done.stats);
    Ok(done.file)
}

/// The LLM family when an endpoint is given or the local server answers on its default address.
fn llm_family(args: &Args) -> AnyResult<Option<LlmFamily<CachedClient<OpenAiClient>>>> {
    let base_url = args.llm_base_url.clone().unwrap_or_else(|| LOCAL_LLM.to_owned());
    if args.llm_base_url.is_none() && !dialeval_examples::reachable(&base_url) {
        return Ok(None);
    }
    let client = OpenAiClient::new(OpenAiConfig { base_url: base_url.clone(), timeout: Duration::from_secs(300), ..OpenAiConfig::default() })?;
    let client = CachedClient::new(client, args.out.join("cache/llm"))?;
    let config = JudgeConfig { model: args.llm_model.clone(), ..JudgeConfig::default() };
    Ok(Some(LlmFamily::new(client, base_url, Templates::builtin()?, config, Variant::NoSlm, Scoring::Parse)))
}
