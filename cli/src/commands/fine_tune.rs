//! Fine-tunes the text encoder (`dialeval_slm_model::finetune`): the pretrained encoder reads
//! `[CLS] context [SEP] response [SEP]`, its top `--layers` layers and a linear head learn the
//! training mix's positives against its negatives. Rounds of `--pairs-per-round` pairs each end
//! with the dev AUC and a checkpoint: a stopped run resumes from its last round. At the end the
//! best model scores the held-out DailyDialog++ test split (`test.json`: AUC against each kind of
//! negative) and the human-judgement sets (`human.json`: turn-level Spearman with every rated
//! quality, with its p-value and n, and the score's Spearman with response length):
//! USR-PersonaChat (bundled) and FED (`SHARED/data/fed`, when present).
//!
//! ```text
//! dialeval fine-tune --out DIR [--layers 2] [--encoder DIR] [--rounds 40] [--pairs-per-round 4096]
//!     [--batch 16] [--length-buckets yes|no] [--cosine-residual yes|no] [--lr 3e-5] [--dev-pairs 2000] [--topical yes|no] [--dailydialog yes|no]
//!     [--seed 0] [--device cpu] [--shared ../shared]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use crate::support::{Progress, YesNo};
use dialeval_datasets::pairs::{PairKind, TrainingPair};
use dialeval_datasets::{CorpusFormat, DialogueItem, Selection};
use dialeval_eval::models::{Compute, slm_pair};
use dialeval_metrics::correlation::spearman;
use dialeval_slm_model::bert::default_encoder_dir;
use dialeval_slm_model::finetune::{FineTuneConfig, FineTuneData, FineTunedScorer, fine_tune};
use serde_json::json;

#[derive(Debug, clap::Parser)]
#[command(about = "Fine-tune the text encoder over context and response as one input")]
struct Args {
    /// Checkpoints, log and test results.
    #[arg(long)]
    out: PathBuf,
    /// The encoder's top layers trained (at least its number of layers: every layer and the embeddings).
    #[arg(long, default_value_t = 2)]
    layers: usize,
    /// The pretrained encoder (default: all-mpnet-base-v2 from scripts/fetch_mpnet.sh; all-MiniLM-L6-v2 from scripts/fetch_minilm.sh is 6× faster).
    #[arg(long)]
    encoder: Option<PathBuf>,
    /// The most rounds.
    #[arg(long, default_value_t = 40)]
    rounds: usize,
    /// Training pairs per round (a round ends with the dev AUC and a checkpoint).
    #[arg(long, default_value_t = 4096)]
    pairs_per_round: usize,
    /// Rounds without a better dev AUC before the run stops.
    #[arg(long, default_value_t = 4)]
    patience: usize,
    /// Pairs per step.
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// Group a round's pairs by length into batches (less padding). A run started before this
    /// option resumes with `--length-buckets no`.
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    length_buckets: YesNo,
    /// Add the zero-shot cosines of the response with the last turn(s) to the logit, with
    /// learned weights: training starts from what the encoder knows. A run started before this
    /// option resumes with `--cosine-residual no`.
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    cosine_residual: YesNo,
    /// Learning rate.
    #[arg(long, default_value_t = 3e-5)]
    lr: f64,
    /// Dev pairs scored after each round: an even sample of the mix's dev pairs.
    #[arg(long, default_value_t = 2000)]
    dev_pairs: usize,
    /// Add Topical-Chat pairs to the mix.
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    topical: YesNo,
    /// Add DailyDialog train next-turn pairs to the mix.
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    dailydialog: YesNo,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where the model runs: cpu, wgpu or wgpu:N.
    #[arg(long, default_value = "cpu")]
    device: Compute,
    /// The shared data folder.
    #[arg(long, default_value = "../shared")]
    shared: PathBuf,
}

/// Runs the command on `args` (the program name first).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    let args = <Args as clap::Parser>::parse_from(args);
    crate::support::finish("fine-tune", run(&args))
}

/// Every `n / k`-th of `pairs` (all of them when `k ≥ n`): an even sample across contexts.
fn even_sample(pairs: &[TrainingPair], k: usize) -> Vec<TrainingPair> {
    let n = pairs.len();
    if k == 0 || k >= n {
        return pairs.to_vec();
    }
    (0..k).map(|i| pairs[i * n / k].clone()).collect()
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let encoder = args.encoder.clone().unwrap_or_else(default_encoder_dir);
    let config = FineTuneConfig {
        trainable_layers: args.layers,
        batch_size: args.batch,
        lr: args.lr,
        pairs_per_round: args.pairs_per_round,
        length_buckets: args.length_buckets.yes(),
        cosine_residual: args.cosine_residual.yes(),
        rounds: args.rounds,
        patience: args.patience,
        seed: args.seed,
        compute: args.device,
        ..FineTuneConfig::default()
    };
    let mix = dialeval_eval::models::mix::training_mix(
        &args.shared,
        &dialeval_datasets::mix::MixConfig {
            seed: args.seed,
            topical: crate::support::topical_flag(args.topical),
            dailydialog: crate::support::dailydialog_flag(args.dailydialog),
            max_context_turns: config.context_turns.max(2),
            ..Default::default()
        },
        &[],
        &|line| eprintln!("mix: {line}"),
    )?;
    let dev = even_sample(&mix.dev, args.dev_pairs);
    eprintln!("fine-tune: {} training pairs, {} dev pairs (of {}), {} test pairs", mix.train.len(), dev.len(), mix.dev.len(), mix.test.len());
    let bar = Progress::new("fine-tuning");
    let logs = fine_tune(&FineTuneData { train: &mix.train, dev: &dev, encoder: &encoder }, &config, &args.out, &|round, step, steps| bar.update_in("round", round, step, steps))?;
    bar.finish();
    for l in logs {
        println!("{}", serde_json::to_string(&l)?);
    }
    // The held-out test split of the mix: ROC AUC of the best model against each kind of negative.
    let device = args.device.device()?;
    let pretrained = std::sync::Arc::new(dialeval_slm_model::bert::PretrainedEncoder::load(&encoder, &device)?);
    let scorer = FineTunedScorer::load(&args.out, &pretrained, device)?;
    let scores = scorer.score(&mix.test)?;
    let labels: Vec<u8> = mix.test.iter().map(TrainingPair::label).collect();
    let auc = |kind| dialeval_slm_model::separation::auc_against(&mix.test, &scores, kind).ok();
    let test =
        json!({"pairs": mix.test.len(), "auc": dialeval_common::roc_auc(&scores, &labels).ok(), "auc_random": auc(PairKind::RandomNegative), "auc_adversarial": auc(PairKind::AdversarialNegative)});
    std::fs::write(args.out.join("test.json"), serde_json::to_string_pretty(&test)?)?;
    println!("{}", json!({ "test": test }));
    let mut human = serde_json::Map::new();
    for (name, format, path) in [("usr-personachat", CorpusFormat::Usr, PathBuf::from("data/usr-personachat/pc_usr_data.json")), ("fed", CorpusFormat::Fed, args.shared.join("data/fed/fed_data.json"))]
    {
        if !path.is_file() {
            eprintln!("fine-tune: {} not found: {name} not scored", path.display());
            continue;
        }
        let items: Vec<DialogueItem> = format.load(&path, &Selection::default())?.items.into_iter().filter(|i| i.response.as_ref().is_some_and(|r| !r.text.trim().is_empty())).collect();
        let pairs: Vec<TrainingPair> = items.iter().map(|i| slm_pair(i, config.context_turns)).collect();
        let scores = scorer.score(&pairs)?;
        let row = human_agreement(&items, &scores)?;
        eprintln!("fine-tune: {name}: {}", serde_json::to_string(&row)?);
        human.insert(name.to_owned(), row);
    }
    std::fs::write(args.out.join("human.json"), serde_json::to_string_pretty(&human)?)?;
    Ok(())
}

/// Turn-level Spearman of `scores` with each quality the items rate (items without a rating of
/// it left out), and with the response's length in words.
fn human_agreement(items: &[DialogueItem], scores: &[f64]) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let mut qualities: Vec<&str> = Vec::new();
    for r in items.iter().flat_map(|i| &i.ratings) {
        if !qualities.contains(&r.quality.as_str()) {
            qualities.push(&r.quality);
        }
    }
    let mut out = serde_json::Map::new();
    for quality in qualities {
        let (x, y): (Vec<f64>, Vec<f64>) = items.iter().zip(scores).filter_map(|(i, &s)| Some((s, i.quality(quality)?.mean()?))).unzip();
        out.insert(quality.to_owned(), serde_json::to_value(spearman(&x, &y)?)?);
    }
    let lengths: Vec<f64> = items.iter().map(|i| i.response.as_ref().map_or(0, |r| r.text.split_whitespace().count()) as f64).collect();
    out.insert("length (words)".to_owned(), serde_json::to_value(spearman(scores, &lengths)?)?);
    Ok(serde_json::Value::Object(out))
}
