//! BERT-RUBER: trains the unreferenced model on DailyDialog++ and scores USR-PersonaChat with
//! the unreferenced, referenced and hybrid scores, correlated with the human ratings.
//!
//! ```text
//! cargo run --release --example bert_ruber -- train --out DIR [--embeddings bert|static]
//!     [--representation max_pool|mean_pool|bi_gru] [--objective cross_entropy|ranking]
//!     [--data mix|positives] [--topical yes|no] [--dailydialog yes|no] [--lexical-negatives 0] [--embedding-negatives 0]
//!     [--contexts 2000] [--query-turns 2]
//!     [--epochs 10] [--batch 64] [--lr 0.001] [--seed 0] [--encoder DIR] [--shared ../shared]
//! cargo run --release --example bert_ruber -- score --model DIR [--out REPORT_DIR] [--encoder DIR] [--shared ../shared]
//! ```
//! Training triples with `--data mix` (the default): the training mix of
//! `dialeval_datasets::mix` (DailyDialog++ dev + test with length-matched corpus negatives,
//! `data_positives.json` with length-matched sampled negatives, Topical-Chat next-turn pairs
//! unless `--topical no`), each positive with a negative of its own context in turn, and with
//! `--lexical-negatives P` / `--embedding-negatives P` a share P of the positives once more
//! against a negative retrieved for it (`dialeval_datasets::negatives`); dev: the mix's dev
//! contexts. The data settings are written to `DIR/data.json`; a run restarted with other ones is refused. With `--data positives`: each positive response of the first `--contexts` contexts of
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

use std::path::PathBuf;
use std::process::ExitCode;

use crate::support::{Progress, YesNo};
use dialeval_datasets::mix::MixConfig;
use dialeval_datasets::negatives::RetrievedNegatives;
use dialeval_eval::families::BertRuberFamily;
use dialeval_eval::models::ruber_training::{RuberTraining, RuberTriples};
use dialeval_eval::models::{CheckpointIdentity, Compute, EncoderSide, default_cache_dir};
use dialeval_eval::write::summary_markdown;
use dialeval_eval::{Evaluation, Event};
use dialeval_slm_model::bert::{PretrainedEncoder, default_encoder_dir};
use dialeval_slm_model::ruber::{Embeddings, Objective, Representation, RuberConfig, RuberScorer};

#[derive(Debug, clap::Parser)]
#[command(about = "BERT-RUBER: train the unreferenced model, or score USR-PersonaChat")]
struct Args {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    common: Common,
}

/// The flags of both subcommands.
#[derive(Debug, clap::Args)]
struct Common {
    /// The sentence encoder (default: all-mpnet-base-v2 from scripts/fetch_mpnet.sh; all-MiniLM-L6-v2 from scripts/fetch_minilm.sh is 6× faster).
    #[arg(long, global = true)]
    encoder: Option<PathBuf>,
    /// The shared data folder.
    #[arg(long, global = true, default_value = "../shared")]
    shared: PathBuf,
    /// Where the models run: cpu, wgpu (the default adapter) or wgpu:N (the N-th discrete GPU; needs the `wgpu` feature).
    #[arg(long, global = true, default_value = "cpu")]
    device: Compute,
}

/// `dialeval train-ruber`: the `train` subcommand as a program of its own.
#[derive(Debug, clap::Parser)]
#[command(about = "Train BERT-RUBER's unreferenced model")]
struct TrainProgram {
    #[command(flatten)]
    train: TrainArgs,
    #[command(flatten)]
    common: Common,
}

/// `dialeval score-ruber`: the `score` subcommand as a program of its own.
#[derive(Debug, clap::Parser)]
#[command(about = "Score USR-PersonaChat with a BERT-RUBER checkpoint")]
struct ScoreProgram {
    #[command(flatten)]
    score: ScoreArgs,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Train the unreferenced model.
    Train(TrainArgs),
    /// Score USR-PersonaChat and correlate with its ratings.
    Score(ScoreArgs),
}

/// The training triples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Data {
    /// The training mix.
    Mix,
    /// data_positives.json with sampled negatives.
    Positives,
}

#[derive(Debug, clap::Args)]
struct TrainArgs {
    /// Checkpoints, log and test results.
    #[arg(long)]
    out: PathBuf,
    /// bert (the encoder's token states) or static (word-piece embeddings trained here).
    #[arg(long, default_value = "bert", value_parser = crate::support::serde_value::<Embeddings>)]
    embeddings: Embeddings,
    /// max_pool, mean_pool or bi_gru.
    #[arg(long, default_value = "max_pool", value_parser = crate::support::serde_value::<Representation>)]
    representation: Representation,
    /// cross_entropy or ranking.
    #[arg(long, default_value = "cross_entropy", value_parser = crate::support::serde_value::<Objective>)]
    objective: Objective,
    /// The training triples.
    #[arg(long, value_enum, default_value_t = Data::Mix)]
    data: Data,
    /// mix: add Topical-Chat pairs.
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    topical: YesNo,
    /// mix: add DailyDialog train next-turn pairs (one negative each: half lexical, a quarter
    /// length-matched, a quarter uniform), without the dialogues that touch its test split or
    /// the mix's test split.
    #[arg(long, value_enum, default_value_t = YesNo::No)]
    dailydialog: YesNo,
    /// mix: share of training positives given one more triple, against a retrieved negative:
    /// of 64 responses of other contexts or conversations within a length window of the
    /// positive, the one sharing most content words with its context (as GRADE and DEB
    /// retrieve theirs). Added to the mix's triples; dev and test keep theirs.
    #[arg(long, default_value_t = 0.0)]
    lexical_negatives: f64,
    /// mix: share of training positives given one more triple, against the response of 64 such
    /// whose sentence vector (the encoder's, mean-pooled) is nearest the joined context's.
    #[arg(long, default_value_t = 0.0)]
    embedding_negatives: f64,
    /// positives: contexts of data_positives.json used.
    #[arg(long, default_value_t = 2000)]
    contexts: usize,
    /// Context turns in the query (mix: the mix keeps at least this many, and never fewer than two).
    #[arg(long, default_value_t = 2)]
    query_turns: usize,
    /// Read the query's last N token states (the turns nearest the response) instead of its first 64.
    #[arg(long)]
    query_last_tokens: Option<usize>,
    /// A knowledge channel (mix: trained on the Topical-Chat turns' cited Wikipedia sections;
    /// scoring reads an item's persona or knowledge).
    #[arg(long, value_enum, default_value_t = YesNo::No)]
    knowledge: YesNo,
    /// Share of training steps a triple's knowledge is withheld (it reads the no-knowledge input).
    #[arg(long, default_value_t = 0.0)]
    knowledge_dropout: f64,
    /// Epochs.
    #[arg(long, default_value_t = 10)]
    epochs: usize,
    /// Batch size.
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Learning rate.
    #[arg(long, default_value_t = 0.001)]
    lr: f64,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

#[derive(Debug, clap::Args)]
struct ScoreArgs {
    /// The trained model.
    #[arg(long)]
    model: PathBuf,
    /// A report folder: scores.jsonl/csv, correlations.md/json, report.md.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    let args = <Args as clap::Parser>::parse_from(args);
    crate::support::finish("bert_ruber", run(&args.command, &args.common))
}

/// `bert_ruber train` as a program of its own (`dialeval train-ruber`).
pub fn train_main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    let args = <TrainProgram as clap::Parser>::parse_from(args);
    crate::support::finish("train-ruber", run(&Command::Train(args.train), &args.common))
}

/// `bert_ruber score` as a program of its own (`dialeval score-ruber`).
pub fn score_main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    let args = <ScoreProgram as clap::Parser>::parse_from(args);
    crate::support::finish("score-ruber", run(&Command::Score(args.score), &args.common))
}

fn run(command: &Command, args: &Common) -> Result<(), Box<dyn std::error::Error>> {
    let shared = &args.shared;
    match command {
        Command::Train(t) => {
            let config = RuberConfig {
                embeddings: t.embeddings,
                representation: t.representation,
                objective: t.objective,
                epochs: t.epochs,
                batch_size: t.batch,
                lr: t.lr,
                seed: t.seed,
                query_turns: t.query_turns,
                query_last_tokens: t.query_last_tokens,
                knowledge: t.knowledge.yes(),
                knowledge_dropout: t.knowledge_dropout,
                compute: args.device,
                ..RuberConfig::default()
            };
            let data = match t.data {
                Data::Mix => {
                    // The mix keeps the last two context turns, or more when the query reads more.
                    let turns = t.query_turns.max(2);
                    RuberTriples::Mix(MixConfig {
                        seed: t.seed,
                        topical: crate::support::topical_flag(t.topical).map(|c| dialeval_datasets::pairs::TopicalPairConfig { history: turns, ..c }),
                        dailydialog: crate::support::dailydialog_flag(t.dailydialog),
                        max_context_turns: turns,
                        topical_knowledge: t.knowledge.yes(),
                        ..Default::default()
                    })
                }
                Data::Positives => RuberTriples::Positives { contexts: t.contexts },
            };
            let retrieved = RetrievedNegatives { lexical_share: t.lexical_negatives, embedding_share: t.embedding_negatives, seed: t.seed, ..RetrievedNegatives::default() };
            let training = RuberTraining { shared: shared.clone(), out: t.out.clone(), data, config, encoder: args.encoder.clone(), retrieved };
            let done = crate::support::with_training_progress("bert_ruber", "training", "epoch", |observer| training.run(observer))?;
            for l in &done.logs {
                println!("{}", serde_json::to_string(l)?);
            }
            if let Some(test) = &done.test {
                println!("{}", serde_json::json!({ "test": test }));
            }
        }
        Command::Score(a) => {
            let device = args.device.device()?;
            let encoder = PretrainedEncoder::load(&args.encoder.clone().unwrap_or_else(default_encoder_dir), &device)?;
            // The main job's BERT-RUBER family (unreferenced; referenced = cosine of max-min
            // pooled token states of response and ground truth; hybrids of the min-max
            // normalised pair) on USR-PersonaChat, correlated by the library's analysis.
            let items = dialeval_datasets::usr::load(&shared.join("data/usr-personachat/pc_usr_data.json"))?;
            let side = EncoderSide::new(encoder, &default_cache_dir());
            let family = BertRuberFamily::new(RuberScorer::load(&a.model, device)?, CheckpointIdentity::of(&a.model)?, &side);
            let bar = Progress::new("bert_ruber");
            let report = Evaluation::of(&items)
                .family(family)
                .observe(|e| match e {
                    Event::Progress { done, total, .. } => bar.update(done, total),
                    Event::Note { text, .. } => eprintln!("bert_ruber: {text}"),
                    _ => {}
                })
                .run()?;
            bar.finish();
            println!("{}", summary_markdown(&report.analysis));
            if let Some(dir) = &a.out {
                report.write(dir)?;
                eprintln!("bert_ruber: wrote {}/report.md, scores.jsonl and correlations.md", dir.display());
            }
        }
    }
    Ok(())
}
