//! Trains the SLM (AMR-gated dual encoder) on CPU.
//!
//! ```text
//! cargo run --release --example train_slm -- --data mix|ddpp|diplomacy --out DIR [--mode gated|text_only|graph_only|concat|residual]
//!     [--text-encoder pretrained|cross|scratch] [--graph-dropout 0.3] [--topical yes|no] [--dailydialog yes|no] [--length-control yes|no] [--contrastive-weight 0.5] [--encoder DIR]
//!     [--lexical-negatives 0] [--embedding-negatives 0] [--retrieve-within-source yes|no] [--drop-negatives random,adversarial,lexical,embedding]
//!     [--knowledge yes|no] [--knowledge-dropout 0.5] [--knowledge-unit whole|sentence] [--context-turns 2] [--turns yes|no] [--graph-test yes|no] [--complete-graphs yes|no] [--graph-term-penalty 0]
//!     [--epochs 5] [--keep-epochs yes|no] [--batch 16] [--lr 0.001] [--seed 0] [--d-model 64] [--layers 2] [--limit N] [--shared ../shared]
//! ```
//! - `mix` (the default): the training mix of `dialeval_datasets::mix` — DailyDialog++ dev + test
//!   (length-matched corpus negatives), `data_positives.json` with length-matched sampled
//!   negatives, Topical-Chat next-turn pairs; silver AMR attached where it exists; tested on the
//!   100 annotated DailyDialog++ test contexts (with their graphs, and again with every graph
//!   withheld).
//! - `ddpp`: trained on DailyDialog++ dev (10% of contexts held out as dev by a seeded split of
//!   context ids), tested on DailyDialog++ test, honouring `overlap_exclude_ids.tsv`; text only
//!   unless silver AMR is found for the utterances (`silver-amr/*.silver.amr.txt` is attached by
//!   sentence text).
//! - `diplomacy`: Diplomacy messages with gold AMR, previous message → next message, random
//!   negatives from other conversations; split 70/15/15 (train/dev/test) by conversation id.
//!
//! Prints one JSON line per epoch and then `{"test": {...}}` (accuracy at 0.5 and ROC AUC against
//! all negatives, against random and against adversarial negatives), also written to
//! `DIR/test.json`. The data settings (the mix's, the retrieved negatives', the kinds dropped) are
//! written to `DIR/data.json`; a run restarted with other ones is refused. `--limit N` keeps the first N training pairs and N/4 + 1 dev and test pairs.
//! Killed and restarted with the same `--out`, it resumes from the last finished epoch.
//! The log is `DIR/log.jsonl`; the best model is `DIR/best`, scored by `score_slm` and
//! `evaluate --slm DIR`. With `--keep-epochs yes` every epoch's model is also kept as a run
//! directory of its own, `DIR/epochs/N`, scored the same way (`evaluate --slm DIR/epochs/N`).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::support::YesNo;
use dialeval_datasets::mix::MixConfig;
use dialeval_datasets::negatives::{NegativeFamily, RetrievedNegatives};
use dialeval_eval::models::Compute;
use dialeval_eval::models::slm_training::{SlmData, SlmTraining};
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::{Mode, TextEncoderKind};
use dialeval_slm_model::texts::KnowledgeUnit;

/// The training data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Data {
    /// The training mix (DailyDialog++ dev + test, data_positives, Topical-Chat).
    Mix,
    /// DailyDialog++ dev, tested on DailyDialog++ test.
    Ddpp,
    /// Diplomacy messages with gold AMR.
    Diplomacy,
}

#[derive(Debug, clap::Parser)]
#[command(about = "Train the SLM (AMR-gated dual encoder) on CPU")]
struct Args {
    /// Checkpoints, log and test results.
    #[arg(long)]
    out: PathBuf,
    /// Where the models run: cpu, wgpu (the default adapter) or wgpu:N (the N-th discrete GPU; needs the `wgpu` feature).
    #[arg(long, default_value = "cpu")]
    device: Compute,
    /// The training data.
    #[arg(long, value_enum, default_value_t = Data::Mix)]
    data: Data,
    /// gated, text_only, graph_only, concat or residual (the text side's logit plus a graph term
    /// that only items with graphs get).
    #[arg(long, default_value = "gated", value_parser = crate::support::serde_value::<Mode>)]
    mode: Mode,
    /// pretrained (a head over frozen MiniLM sentence vectors), cross (Transformer layers trained
    /// here over the frozen MiniLM token states of context, response and knowledge together) or
    /// scratch (a Transformer over word pieces, trained here).
    #[arg(long, default_value = "pretrained", value_parser = crate::support::serde_value::<TextEncoderKind>)]
    text_encoder: TextEncoderKind,
    /// Share of training steps a pair's graphs are withheld.
    #[arg(long, default_value_t = 0.3)]
    graph_dropout: f64,
    /// mix: add Topical-Chat pairs.
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    topical: YesNo,
    /// mix: add DailyDialog train next-turn pairs (one negative each: half lexical, a quarter
    /// length-matched, a quarter uniform), without the dialogues that touch its test split or
    /// the mix's test split.
    #[arg(long, value_enum, default_value_t = YesNo::No)]
    dailydialog: YesNo,
    /// mix: length-matched negatives (no: DailyDialog++'s as released, uniform sampled ones).
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    length_control: YesNo,
    /// Weight of the contrastive loss.
    #[arg(long, default_value_t = 0.5)]
    contrastive_weight: f64,
    /// The sentence encoder of the pretrained text side (default: all-mpnet-base-v2 from scripts/fetch_mpnet.sh).
    #[arg(long)]
    encoder: Option<PathBuf>,
    /// Epochs.
    #[arg(long, default_value_t = 5)]
    epochs: usize,
    /// Keep every epoch's model as `OUT/epochs/N`, a run directory scored like the best one, to
    /// judge a run after each epoch (may change when resuming).
    #[arg(long, value_enum, default_value_t = YesNo::No)]
    keep_epochs: YesNo,
    /// Batch size.
    #[arg(long, default_value_t = 16)]
    batch: usize,
    /// Learning rate.
    #[arg(long, default_value_t = 0.001)]
    lr: f64,
    /// Seed of sampling, splits and initialisation.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Model width.
    #[arg(long, default_value_t = 64)]
    d_model: usize,
    /// Encoder layers.
    #[arg(long, default_value_t = 2)]
    layers: usize,
    /// The pretrained head's knowledge channel (mix: trained on the Topical-Chat turns' cited
    /// Wikipedia sections, so it needs --topical yes; scoring reads an item's persona or knowledge).
    #[arg(long, value_enum, default_value_t = YesNo::No)]
    knowledge: YesNo,
    /// Share of training steps a pair's knowledge is withheld (it reads the no-knowledge input).
    #[arg(long, default_value_t = 0.0)]
    knowledge_dropout: f64,
    /// What of the knowledge the channel reads: `whole` (its sentence vector) or `sentence`
    /// (the vector of its sentence nearest the response).
    #[arg(long, default_value = "whole", value_parser = crate::support::serde_value::<KnowledgeUnit>)]
    knowledge_unit: KnowledgeUnit,
    /// mix: context turns the model reads (the last ones).
    #[arg(long, default_value_t = 2)]
    context_turns: usize,
    /// mix: hold out every second Topical-Chat conversation with silver AMR (23 of 46, graphs
    /// about twice the DailyDialog++ ones) as a second test split, reported with and without
    /// its graphs, overall and per band of response-graph size (`topical_test` in test.json).
    #[arg(long, value_enum, default_value_t = YesNo::No)]
    graph_test: YesNo,
    /// The pretrained head's turn channel: the last turn read apart from the joined context,
    /// and a learned residual on the zero-shot cosines of the response with the last turn and
    /// the last two (Context-Cosine, Context-Cosine-2).
    #[arg(long, value_enum, default_value_t = YesNo::No)]
    turns: YesNo,
    /// Train and stop early on graphs only where a pair has all of them (the response's and
    /// every context turn's); other pairs read none. With `no`, partial graphs are kept, and
    /// which of a pair's graphs exist can tell its class (a Topical-Chat negative drawn from a
    /// conversation without silver AMR lacks the response graph its positive has): the
    /// recipe of the models trained before the rule.
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    complete_graphs: YesNo,
    /// --mode residual: weight of the penalty on the graph term's mean square over the pairs
    /// with graphs (0: none), so the graphs move a score only as far as they keep paying.
    #[arg(long, default_value_t = 0.0)]
    graph_term_penalty: f64,
    /// Share of training positives given one more negative: of 64 responses of other contexts or
    /// conversations drawn within a length window of the positive, the one sharing most content
    /// words with its context (as GRADE and DEB retrieve theirs). Any data; dev and test keep
    /// theirs.
    #[arg(long, default_value_t = 0.0)]
    lexical_negatives: f64,
    /// Share of training positives given one more negative: of 64 such responses, the one whose
    /// sentence vector is nearest the context's (the encoder of --encoder; needs --text-encoder
    /// pretrained or cross).
    #[arg(long, default_value_t = 0.0)]
    embedding_negatives: f64,
    /// Retrieve negatives only among responses of the positive's own source (a DailyDialog++
    /// file, Topical-Chat, DailyDialog), not across corpora.
    #[arg(long, value_enum, default_value_t = YesNo::No)]
    retrieve_within_source: YesNo,
    /// Kinds of negative left out of training, comma-separated: random (the corpora's random
    /// and the sampled ones), adversarial (DailyDialog++'s), lexical, embedding. Dev and test
    /// keep theirs, so runs compare on the same dev.
    #[arg(long, value_delimiter = ',', value_parser = crate::support::serde_value::<NegativeFamily>)]
    drop_negatives: Vec<NegativeFamily>,
    /// Keep the first N training pairs and N/4 + 1 dev and test pairs (0: all).
    #[arg(long, default_value_t = 0)]
    limit: usize,
    /// The shared data folder.
    #[arg(long, default_value = "../shared")]
    shared: PathBuf,
}

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    crate::support::finish("train_slm", run(&<Args as clap::Parser>::parse_from(args)))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    if args.graph_test.yes() && args.data != Data::Mix {
        return Err("--graph-test yes holds out Topical-Chat conversations of the mix: it needs --data mix --topical yes".into());
    }
    let data = match args.data {
        Data::Mix => {
            let topical = crate::support::topical_flag(args.topical).map(|c| dialeval_datasets::pairs::TopicalPairConfig { history: args.context_turns, ..c });
            let dailydialog = crate::support::dailydialog_flag(args.dailydialog);
            let mut config = MixConfig { seed: args.seed, topical, dailydialog, max_context_turns: args.context_turns, topical_knowledge: args.knowledge.yes(), ..Default::default() };
            if !args.length_control.yes() {
                // The ablation: DailyDialog++'s negatives as released, uniform sampled negatives.
                config.ddpp_length_tolerance = None;
                config.positives_sampling = dialeval_datasets::pairs::NegativeSampling::Uniform;
                config.topical = config.topical.map(|t| dialeval_datasets::pairs::TopicalPairConfig { length_matched_share: 0.0, ..t });
                config.dailydialog = config.dailydialog.map(|d| dialeval_datasets::pairs::DailyDialogPairConfig { length_matched_share: 0.0, ..d });
            }
            SlmData::Mix { config, graph_test: args.graph_test.yes() }
        }
        Data::Ddpp => SlmData::Ddpp,
        Data::Diplomacy => SlmData::Diplomacy,
    };
    let training = SlmTraining {
        shared: args.shared.clone(),
        out: args.out.clone(),
        data,
        config: TrainConfig {
            mode: args.mode,
            epochs: args.epochs,
            batch_size: args.batch,
            lr: args.lr,
            seed: args.seed,
            d_model: args.d_model,
            layers: args.layers,
            contrastive_weight: args.contrastive_weight,
            graph_dropout: args.graph_dropout,
            text_encoder: args.text_encoder,
            context_turns: args.context_turns,
            knowledge: args.knowledge.yes(),
            knowledge_dropout: args.knowledge_dropout,
            knowledge_unit: args.knowledge_unit,
            turns: args.turns.yes(),
            complete_graphs: args.complete_graphs.yes(),
            graph_term_penalty: args.graph_term_penalty,
            compute: args.device,
            keep_epochs: args.keep_epochs.yes(),
            ..TrainConfig::default()
        },
        encoder: args.encoder.clone(),
        retrieved: RetrievedNegatives {
            lexical_share: args.lexical_negatives,
            embedding_share: args.embedding_negatives,
            same_source: args.retrieve_within_source.yes(),
            seed: args.seed,
            ..RetrievedNegatives::default()
        },
        drop_negatives: args.drop_negatives.clone(),
        limit: args.limit,
    };
    let done = crate::support::with_training_progress("train_slm", "train_slm", "epoch", |observer| training.run(observer))?;
    for l in &done.logs {
        println!("{}", serde_json::to_string(l)?);
    }
    println!("{}", serde_json::json!({ "test": done.test }));
    Ok(())
}
