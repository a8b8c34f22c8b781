//! The main job: score a corpus with every metric its inputs allow, correlate each with the
//! human ratings, and write a report with tables and plots. Wiring only: the flags become a
//! [`MainJob`] of `dialeval-eval`, which reads, scores, analyses and writes (the Python
//! package's `evaluate` runs the same job); this command shows its progress.
//!
//! With no options it evaluates the bundled USR-PersonaChat (`data/usr-personachat`) with its
//! silver AMR, offline: length, BLEU/ROUGE-L/METEOR, BERTScore and the embedding metrics
//! (all-mpnet-base-v2 from `scripts/fetch_mpnet.sh`; `--encoder` for another), BERT-RUBER, the AMR-gated SLM (checkpoints shipped in
//! `models/`, verified by their `SHA256SUMS`), Smatch, and the LLM judge when an endpoint answers
//! (`--llm-base-url`, or the local server of `scripts/llm_server.sh` on its default address).
//! Every family is cached in `OUT/metrics/` under a key of the items and its settings, so a
//! killed run restarts where it stopped. `--shard k/n` scores one shard of the corpus (with its
//! own report, or only its scores with `--scores-only`), and `evaluate merge DIR...` (with the same corpus flags) builds the whole corpus's report from
//! the shards' folders. `cargo run --release --example evaluate -- --help`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::support::Progress;
use clap::Parser;
use dialeval_common::MultiRef;
use dialeval_datasets::CorpusFormat;
use dialeval_eval::models::main_job::{AmrParserChoice, CorpusInput, LlmChoice, MainJob, MainJobObserver, bundled_amr, bundled_corpus};
use dialeval_eval::models::{Compute, FamilyName, JobObserver, ModelSettings, ModelSource, Retrain, default_cache_dir};
use dialeval_eval::shard::Shard;
use dialeval_eval::{Event, RunSettings};

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// A family name for `--skip` (the library's [`FamilyName`]).
fn family_name(value: &str) -> Result<FamilyName, String> {
    value.parse().map_err(|e: dialeval_eval::Error| e.to_string())
}

#[derive(Debug, Parser)]
#[command(about = "Score a dialogue corpus with every metric and correlate each with the human ratings")]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Which corpus format `--input` is: usr (default: the bundled copy), fed (turn level),
    /// fed-dialogue, grade (the release's `evaluation/` folder) or jsonl.
    #[arg(global = true, long, default_value = "usr")]
    corpus: CorpusFormat,
    /// The corpus file (required for fed, grade and jsonl).
    #[arg(global = true, long)]
    input: Option<String>,
    /// grade: only the cells of this dataset (`convai2`, `dailydialog`, `empatheticdialogues`).
    #[arg(global = true, long)]
    subset: Option<String>,
    /// Parse every utterance lacking a graph before the AMR families run: `llm` (the
    /// --llm-base-url endpoint) or `command:CMD` (an external parser over the line protocol of
    /// dialeval-amr-parse); graphs go to OUT/amr/parsed-<parser>.amr.txt and are reused.
    #[arg(global = true, long, value_parser = amr_parser_choice)]
    amr_parser: Option<AmrParserChoice>,
    /// PENMAN files whose graphs are attached to turns by sentence text (default for usr: the bundled silver AMR).
    #[arg(global = true, long, value_delimiter = ',')]
    amr: Vec<PathBuf>,
    /// Output folder.
    #[arg(global = true, long, default_value = "evaluation")]
    out: PathBuf,
    /// The repository's bundled data.
    #[arg(global = true, long, default_value = "data")]
    data: PathBuf,
    /// Shipped checkpoints.
    #[arg(global = true, long, default_value = "models")]
    models: PathBuf,
    /// An SLM checkpoint directory instead of the shipped one.
    #[arg(global = true, long)]
    slm: Option<PathBuf>,
    /// A BERT-RUBER checkpoint directory instead of the shipped one.
    #[arg(global = true, long)]
    ruber: Option<PathBuf>,
    /// A fine-tuned text encoder (`dialeval fine-tune --out DIR`): adds its `Fine-tuned` column.
    #[arg(global = true, long)]
    fine_tuned: Option<PathBuf>,
    /// The sentence encoder (default: all-mpnet-base-v2 from scripts/fetch_mpnet.sh; all-MiniLM-L6-v2 from scripts/fetch_minilm.sh is 6× faster).
    #[arg(global = true, long)]
    encoder: Option<PathBuf>,
    /// OpenAI-compatible endpoint of the LLM judge.
    #[arg(global = true, long)]
    llm_base_url: Option<String>,
    /// Model name sent to the endpoint.
    #[arg(global = true, long, default_value = "smollm2-135m")]
    llm_model: String,
    /// Seed of retraining.
    #[arg(global = true, long, default_value_t = 0)]
    seed: u64,
    /// Bootstrap resamples for the Spearman and Kendall intervals (0: no intervals).
    #[arg(global = true, long, default_value_t = 1000)]
    bootstrap: usize,
    /// Items per chunk: each family scores and caches this many at a time, so a killed run
    /// resumes at the chunk it was in, and a JSONL corpus is read a chunk at a time.
    #[arg(global = true, long, default_value_t = dialeval_eval::DEFAULT_CHUNK_ITEMS)]
    chunk: usize,
    /// Score only shard k of n (items chosen by a hash of their id) and leave `shard.json` in
    /// --out for `evaluate merge`.
    #[arg(global = true, long)]
    shard: Option<Shard>,
    /// With --shard: write only `shard.json` (and the caches), no analysis and no report files:
    /// what a scheduler's task needs, the merge analysing the whole corpus once.
    #[arg(long, requires = "shard")]
    scores_only: bool,
    /// Where the models run: cpu, wgpu (the default adapter) or wgpu:N (the N-th discrete GPU; needs the `wgpu` feature).
    #[arg(global = true, long, default_value = "cpu")]
    device: Compute,
    /// Train the learned scorers afresh on the bundled DailyDialog++ dev data instead of using the shipped checkpoints.
    #[arg(global = true, long)]
    retrain: bool,
    /// Families to leave out: length, specificity, lexical, embedding, context_cosine, bert_ruber, slm,
    /// fine_tuned, smatch, llm.
    #[arg(global = true, long, value_delimiter = ',', value_parser = family_name)]
    skip: Vec<FamilyName>,
    /// How the embedding metrics, BERT-RUBER's referenced score and Smatch combine several
    /// references: `max` (bert-score's rule) or `mean`. BLEU, ROUGE and METEOR keep their own.
    #[arg(global = true, long, default_value = "max", value_parser = crate::support::serde_value::<MultiRef>)]
    references: MultiRef,
    /// Fail on a malformed block of an AMR file instead of skipping it (the default skips it,
    /// names it with file and line on stderr and in report.md, and serves the file's other graphs).
    #[arg(global = true, long)]
    strict_amr: bool,
}

/// What to do instead of scoring.
#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Build the report from the `shard.json` of shards' output folders (every shard 1..n of one
    /// split, in any order), given the same corpus flags as the shards were (--corpus, --input,
    /// --subset, --amr, --data, --strict-amr; the scoring flags are refused): the files are byte
    /// for byte those of a single run, report.md too but for its seconds (the shards' added).
    Merge {
        /// The shards' output folders.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
    },
}

/// The flags `evaluate merge` does not read (it scores nothing: the families' settings were the
/// shards'): given to it, they are an error rather than silently ignored.
const NOT_FOR_MERGE: [&str; 12] = ["amr_parser", "models", "slm", "ruber", "encoder", "llm_base_url", "llm_model", "seed", "device", "retrain", "skip", "references"];

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    let matches = <Args as clap::CommandFactory>::command().get_matches_from(args);
    let args = match <Args as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    if let Some(("merge", sub)) = matches.subcommand() {
        let given = |id: &str| [&matches, sub].iter().any(|m| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine));
        let unused: Vec<String> = NOT_FOR_MERGE.iter().filter(|id| given(id)).map(|id| format!("--{}", id.replace('_', "-"))).collect();
        if !unused.is_empty() {
            return crate::support::finish(
                "evaluate",
                Err(format!("evaluate merge does not use {} (the shards were scored with their own; give only the corpus flags and --out)", unused.join(", ")).into()),
            );
        }
    }
    crate::support::finish("evaluate", run(args))
}

fn run(args: Args) -> AnyResult<()> {
    let path = match (&args.input, bundled_corpus(args.corpus, &args.data)) {
        (Some(input), _) => PathBuf::from(input),
        (None, Some(bundled)) => bundled,
        (None, None) => return Err(format!("--corpus {} needs --input", args.corpus).into()),
    };
    let job = MainJob {
        corpus: CorpusInput { format: args.corpus, path, subset: args.subset.clone() },
        out: args.out.clone(),
        amr: if args.amr.is_empty() { bundled_amr(args.corpus, &args.data) } else { args.amr.clone() },
        strict_amr: args.strict_amr,
        amr_parser: args.amr_parser.clone(),
        skip: args.skip.clone(),
        skip_reason: "left out by --skip".into(),
        models: ModelSettings {
            encoder: args.encoder.clone(),
            compute: args.device,
            models: Some(args.models.clone()),
            slm: args.slm.clone(),
            ruber: args.ruber.clone(),
            fine_tuned: args.fine_tuned.clone(),
            retrain: if args.retrain { Retrain::Always } else { Retrain::IfNotShipped },
            data: args.data.clone(),
            seed: args.seed,
            out: args.out.clone(),
            cache_dir: default_cache_dir(),
            references: args.references,
        },
        run: RunSettings { chunk: args.chunk, bootstrap: args.bootstrap, ..RunSettings::default() },
        llm: match &args.llm_base_url {
            Some(base_url) => LlmChoice::Endpoint { base_url: base_url.clone(), model: args.llm_model.clone() },
            None => LlmChoice::LocalIfReachable { model: args.llm_model.clone(), otherwise: "no LLM configured (give --llm-base-url or start scripts/llm_server.sh)".into() },
        },
        shard: args.shard,
    };
    let bar = std::sync::Mutex::new(Reporter::default());
    // A bar only when a checkpoint is trained here.
    let training: std::sync::Mutex<Option<(FamilyName, Progress)>> = std::sync::Mutex::new(None);
    let observer = MainJobObserver {
        event: &|event| report(event, &bar),
        models: JobObserver {
            notice: &|name, source: &ModelSource| eprintln!("evaluate: {name}: {source}"),
            epochs: &|name, e, s, n| {
                let mut bar = training.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if bar.as_ref().is_none_or(|(family, _)| *family != name) {
                    if let Some((_, done)) = bar.take() {
                        done.finish();
                    }
                    *bar = Some((name, Progress::new(&format!("training {name}"))));
                }
                if let Some((_, b)) = bar.as_ref() {
                    b.update_epoch(e, s, n);
                }
            },
        },
        say: &|line| eprintln!("evaluate: {line}"),
    };
    let done = match &args.command {
        Some(Command::Merge { shards }) => job.merge(shards, &observer)?.report,
        None if args.scores_only => {
            job.score_shard(&observer)?;
            return Ok(());
        }
        None => job.run(&observer)?.report,
    };
    if let Some((_, bar)) = training.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        bar.finish();
    }
    println!("{}", dialeval_eval::write::summary_markdown(&done.analysis));
    if args.command.is_none() {
        for r in &done.runs {
            eprintln!("evaluate: {:>14}: {:6.1} s", r.family, r.seconds);
        }
    }
    eprintln!("evaluate: report in {}", args.out.join("report.md").display());
    Ok(())
}

/// What [`report`] shows: a bar for the family at work, or, over a corpus of several chunks,
/// one bar over all its items (the families' own lines for the first chunk only).
#[derive(Default)]
struct Reporter {
    bar: Option<Progress>,
    items: Option<Progress>,
    chunk: usize,
}

/// Prints the pipeline's events on stderr, with a progress bar for the family at work.
fn report(event: Event<'_>, state: &std::sync::Mutex<Reporter>) {
    let mut state = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let first = state.chunk == 0;
    match event {
        Event::Chunk { index, first_item, items, total } => {
            state.chunk = index;
            if index > 0 || total.is_some_and(|t| t > items) {
                let bar = state.items.get_or_insert_with(|| Progress::new("items"));
                bar.update(first_item, total.unwrap_or(first_item + items));
            }
        }
        Event::Cached { family, metrics } if first => eprintln!("evaluate: {family}: cached ({metrics} metrics)"),
        Event::Started { family } if first => {
            eprintln!("evaluate: {family} …");
            state.bar = Some(Progress::new(family));
        }
        Event::Progress { done, total, .. } => state.bar.iter().for_each(|b| b.update(done, total)),
        Event::Finished { family, seconds } if first => {
            state.bar.take().iter().for_each(Progress::finish);
            eprintln!("evaluate: {family}: done in {seconds:.1} s");
        }
        Event::Cached { .. } | Event::Started { .. } | Event::Finished { .. } => {}
        Event::Skipped { family, reason } => eprintln!("evaluate: {family}: skipped ({reason})"),
        Event::Note { family, text } => eprintln!("evaluate: {family}: {text}"),
        Event::Analysis { done, total } => {
            if let Some(items) = state.items.take() {
                items.finish();
            }
            let analysis = state.bar.get_or_insert_with(|| Progress::new("analysis"));
            analysis.update(done, total);
            if done == total {
                analysis.finish();
                state.bar = None;
            }
        }
    }
}

fn amr_parser_choice(value: &str) -> Result<AmrParserChoice, String> {
    match value.split_once(':') {
        None if value == "llm" => Ok(AmrParserChoice::Llm),
        Some(("command", cmd)) if !cmd.trim().is_empty() => Ok(AmrParserChoice::Command(cmd.to_owned())),
        _ => Err(format!("{value:?}: `llm` or `command:CMD`")),
    }
}
