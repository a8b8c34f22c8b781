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

use crate::support::YesNo;
use dialeval_datasets::CorpusFormat;
use dialeval_datasets::mix::MixConfig;
use dialeval_eval::models::Compute;
use dialeval_eval::models::fine_tuning::{FineTuning, HumanSet};
use dialeval_slm_model::finetune::FineTuneConfig;

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

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let job = FineTuning {
        shared: args.shared.clone(),
        out: args.out.clone(),
        mix: MixConfig {
            seed: args.seed,
            topical: crate::support::topical_flag(args.topical),
            dailydialog: crate::support::dailydialog_flag(args.dailydialog),
            max_context_turns: 2,
            ..Default::default()
        },
        config: FineTuneConfig {
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
        },
        encoder: args.encoder.clone(),
        dev_pairs: args.dev_pairs,
        human_sets: vec![
            HumanSet { name: "usr-personachat".into(), format: CorpusFormat::Usr, path: PathBuf::from("data/usr-personachat/pc_usr_data.json") },
            HumanSet { name: "fed".into(), format: CorpusFormat::Fed, path: args.shared.join("data/fed/fed_data.json") },
        ],
    };
    let done = crate::support::with_training_progress("fine-tune", "fine-tuning", "round", |observer| job.run(observer))?;
    for l in &done.logs {
        println!("{}", serde_json::to_string(l)?);
    }
    println!("{}", serde_json::json!({ "test": done.test }));
    Ok(())
}
