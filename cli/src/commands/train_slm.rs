//! Trains the SLM (AMR-gated dual encoder) on CPU.
//!
//! ```text
//! cargo run --release --example train_slm -- --data mix|ddpp|diplomacy --out DIR [--mode gated|text_only|graph_only|concat|residual]
//!     [--text-encoder pretrained|cross|scratch] [--graph-dropout 0.3] [--topical yes|no] [--dailydialog yes|no] [--length-control yes|no] [--contrastive-weight 0.5] [--encoder DIR]
//!     [--lexical-negatives 0] [--embedding-negatives 0] [--retrieve-within-source yes|no] [--drop-negatives random,adversarial,lexical,embedding]
//!     [--knowledge yes|no] [--knowledge-dropout 0.5] [--knowledge-unit whole|sentence] [--context-turns 2] [--turns yes|no] [--graph-test yes|no] [--complete-graphs yes|no] [--graph-term-penalty 0]
//!     [--epochs 5] [--batch 16] [--lr 0.001] [--seed 0] [--d-model 64] [--layers 2] [--limit N] [--shared ../shared]
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
//! The log is `DIR/log.jsonl`; the best model is `DIR/best`, scored by `score_slm`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::support::YesNo;
use dialeval_common::roc_auc;
use dialeval_datasets::amr::{AmrIndex, read_blocks_lenient};
use dialeval_datasets::ddpp::{self, ExcludeList};
use dialeval_datasets::negatives::{NegativeFamily, RetrievedNegatives, drop_negatives, retrieve_negatives};
use dialeval_datasets::pairs::{DiplomacyPairConfig, PairKind, TrainingPair, diplomacy_pairs, split_by_group};
use dialeval_eval::models::{Compute, SlmPairing, ddpp_slm_pairs, split_contexts};
use dialeval_slm_model::bert::{PretrainedEncoder, default_encoder_dir};
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::{Mode, TextEncoderKind};
use dialeval_slm_model::scorer::{Graphs, Scorer};
use dialeval_slm_model::sentence_vectors::{PairSentenceVectors, SentenceVectors};
use dialeval_slm_model::separation::{accuracy, scores_against};
use dialeval_slm_model::texts::KnowledgeUnit;
use dialeval_slm_model::train::{TrainingData, train};
use dialeval_slm_model::vectors::CachedSentenceVectors;
use serde_json::json;

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

/// Accuracy at 0.5 and ROC AUC of the best model on the held-out test pairs: all negatives, and
/// positives against each kind of negative present.
fn test_metrics(scores: &[f64], pairs: &[TrainingPair]) -> serde_json::Value {
    let labels: Vec<u8> = pairs.iter().map(TrainingPair::label).collect();
    let (random, random_labels) = scores_against(pairs, scores, PairKind::RandomNegative);
    let (adversarial, adversarial_labels) = scores_against(pairs, scores, PairKind::AdversarialNegative);
    json!({
        "pairs": pairs.len(),
        "accuracy": accuracy(scores, &labels),
        "auc": roc_auc(scores, &labels).ok(),
        "accuracy_random": accuracy(&random, &random_labels),
        "auc_random": roc_auc(&random, &random_labels).ok(),
        "accuracy_adversarial": accuracy(&adversarial, &adversarial_labels),
        "auc_adversarial": roc_auc(&adversarial, &adversarial_labels).ok(),
    })
}

/// Concept nodes of a pair's response graph (`None`: no graph, or one that does not parse).
fn response_nodes(pair: &TrainingPair) -> Option<usize> {
    pair.response_amr.as_deref().and_then(|p| dialeval_amr_graph::AmrGraph::decode(p).ok()).map(|g| g.instances().count())
}

/// ROC AUC of the held-out Topical-Chat pairs with their graphs and with every graph withheld,
/// on all of them and per band of response-graph size (terciles of the positives' sizes; a
/// negative falls in the band of its own response graph).
fn graph_bands(scorer: &Scorer, pairs: &[TrainingPair], vectors: Option<&dyn SentenceVectors>) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let with = scorer.score(pairs, vectors)?;
    let without = scorer.score_with(pairs, vectors, Graphs::Withhold)?;
    let nodes: Vec<Option<usize>> = pairs.iter().map(response_nodes).collect();
    let mut sizes: Vec<usize> = nodes.iter().zip(pairs).filter(|(_, p)| p.label() == 1).filter_map(|(n, _)| *n).collect();
    sizes.sort_unstable();
    let (a, b) = (sizes.get(sizes.len() / 3).copied().unwrap_or(0), sizes.get(2 * sizes.len() / 3).copied().unwrap_or(0));
    // (name, node range; `None`: every pair, with a graph or not).
    let bands = [("all".to_owned(), None), (format!("<= {a} nodes"), Some(0..=a)), (format!("{}-{b} nodes", a + 1), Some(a + 1..=b)), (format!("> {b} nodes"), Some(b + 1..=usize::MAX))];
    let mut out = serde_json::Map::new();
    for (name, range) in &bands {
        let idx: Vec<usize> = (0..pairs.len()).filter(|&i| range.as_ref().is_none_or(|r| nodes[i].is_some_and(|n| r.contains(&n)))).collect();
        let labels: Vec<u8> = idx.iter().map(|&i| pairs[i].label()).collect();
        let pick = |s: &[f64]| idx.iter().map(|&i| s[i]).collect::<Vec<_>>();
        let (auc_with, auc_without) = (roc_auc(&pick(&with), &labels).ok(), roc_auc(&pick(&without), &labels).ok());
        out.insert(name.clone(), json!({"pairs": idx.len(), "positives": labels.iter().filter(|&&l| l == 1).count(), "auc": auc_with, "auc_graphs_withheld": auc_without}));
    }
    Ok(serde_json::Value::Object(out))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (shared, out, mode, seed, limit, text_encoder) = (&args.shared, &args.out, args.mode, args.seed, args.limit, args.text_encoder);
    if args.data != Data::Mix && args.context_turns != 2 {
        return Err("--context-turns applies to --data mix (the other sets are cut to two turns)".into());
    }
    if args.knowledge.yes() && (args.data != Data::Mix || !args.topical.yes() || text_encoder == TextEncoderKind::Scratch) {
        return Err("--knowledge yes needs --data mix --topical yes (the Topical-Chat turns carry the knowledge) and --text-encoder pretrained or cross".into());
    }
    if args.graph_test.yes() && (args.data != Data::Mix || !args.topical.yes()) {
        return Err("--graph-test yes holds out Topical-Chat conversations of the mix: it needs --data mix --topical yes".into());
    }
    if args.embedding_negatives > 0.0 && text_encoder == TextEncoderKind::Scratch {
        return Err("--embedding-negatives needs sentence vectors: --text-encoder pretrained or cross".into());
    }
    let retrieved =
        RetrievedNegatives { lexical_share: args.lexical_negatives, embedding_share: args.embedding_negatives, same_source: args.retrieve_within_source.yes(), seed, ..RetrievedNegatives::default() };
    let mut data_settings = json!({ "data": format!("{:?}", args.data).to_lowercase(), "retrieved_negatives": retrieved, "dropped_negatives": args.drop_negatives });
    let mut graph_test: Vec<TrainingPair> = Vec::new();
    let (mut train_pairs, mut dev_pairs, mut test_pairs) = match args.data {
        Data::Mix => {
            let topical = crate::support::topical_flag(args.topical).map(|c| dialeval_datasets::pairs::TopicalPairConfig { history: args.context_turns, ..c });
            let dailydialog = crate::support::dailydialog_flag(args.dailydialog);
            let mut config = dialeval_datasets::mix::MixConfig { seed, topical, dailydialog, max_context_turns: args.context_turns, topical_knowledge: args.knowledge.yes(), ..Default::default() };
            if !args.length_control.yes() {
                // The ablation: DailyDialog++'s negatives as released, uniform sampled negatives.
                config.ddpp_length_tolerance = None;
                config.positives_sampling = dialeval_datasets::pairs::NegativeSampling::Uniform;
                config.topical = config.topical.map(|t| dialeval_datasets::pairs::TopicalPairConfig { length_matched_share: 0.0, ..t });
                config.dailydialog = config.dailydialog.map(|d| dialeval_datasets::pairs::DailyDialogPairConfig { length_matched_share: 0.0, ..d });
            }
            let held_out = if args.graph_test.yes() { dialeval_eval::models::mix::graph_test_conversations(shared)? } else { Vec::new() };
            data_settings["mix"] = serde_json::to_value(config)?;
            data_settings["graph_test"] = json!(held_out);
            let mix = dialeval_eval::models::mix::training_mix(shared, &config, &held_out, &|line| eprintln!("mix: {line}"))?;
            graph_test = mix.topical_test;
            (mix.train, mix.dev, mix.test)
        }
        Data::Ddpp => {
            let dir = shared.join("data/dailydialog-plusplus");
            let contexts = ddpp::load(&dir.join("dev.json"))?;
            let exclude = ExcludeList::load(&dir.join("overlap_exclude_ids.tsv"))?;
            let silver: Vec<PathBuf> = std::fs::read_dir(shared.join("data/silver-amr"))
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_string_lossy().ends_with(".silver.amr.txt")).collect())
                .unwrap_or_default();
            let index = AmrIndex::load(&silver)?;
            let pairing = SlmPairing { exclude: &exclude, index: &index, seed };
            let dev = ddpp_slm_pairs(&contexts, "dev.json", &pairing)?;
            eprintln!(
                "train_slm: {} pairs from {} contexts ({} excluded), silver graphs for {} of {} turns and responses",
                dev.pairs.len(),
                contexts.len(),
                dev.excluded,
                dev.coverage.with_amr,
                dev.coverage.turns
            );
            let (train_pairs, dev_pairs) = split_contexts(dev.pairs, seed)?;
            let test = ddpp_slm_pairs(&ddpp::load(&dir.join("test.json"))?, "test.json", &pairing)?;
            eprintln!(
                "train_slm: test: {} pairs of test.json ({} excluded), silver graphs for {} of {} turns and responses",
                test.pairs.len(),
                test.excluded,
                test.coverage.with_amr,
                test.coverage.turns
            );
            let test_pairs = test.pairs;
            (train_pairs, dev_pairs, test_pairs)
        }
        Data::Diplomacy => {
            let (blocks, malformed) = read_blocks_lenient(&shared.join("data/amr-diplomacy/dip-all-amr-smosher.txt"))?;
            for bad in &malformed {
                eprintln!("train_slm: AMR block skipped: {bad}");
            }
            let (pairs, _) = diplomacy_pairs(&blocks, &DiplomacyPairConfig { seed, ..DiplomacyPairConfig::default() })?;
            split_by_group(pairs, [0.7, 0.15, 0.15], seed, |p| p.id.rsplit_once('.').map_or(p.id.as_str(), |(conversation, _)| conversation))?
        }
    };
    if limit > 0 {
        train_pairs.truncate(limit);
        dev_pairs.truncate(limit / 4 + 1);
        test_pairs.truncate(limit / 4 + 1);
    }
    let config = TrainConfig {
        mode,
        epochs: args.epochs,
        batch_size: args.batch,
        lr: args.lr,
        seed,
        d_model: args.d_model,
        layers: args.layers,
        contrastive_weight: args.contrastive_weight,
        graph_dropout: args.graph_dropout,
        text_encoder,
        context_turns: args.context_turns,
        knowledge: args.knowledge.yes(),
        knowledge_dropout: args.knowledge_dropout,
        knowledge_unit: args.knowledge_unit,
        turns: args.turns.yes(),
        complete_graphs: args.complete_graphs.yes(),
        graph_term_penalty: args.graph_term_penalty,
        compute: args.device,
        ..TrainConfig::default()
    };
    // The pretrained head reads MiniLM sentence vectors of every context and response, computed
    // once into the shared token-state cache.
    let (encoder, cache) = match text_encoder {
        TextEncoderKind::Scratch => (None, None),
        TextEncoderKind::Pretrained | TextEncoderKind::Cross => {
            let encoder = PretrainedEncoder::load(&args.encoder.clone().unwrap_or_else(default_encoder_dir), &args.device.device()?)?;
            let mut cache = crate::support::embedding_cache(&encoder)?;
            let bar = crate::support::Progress::new("embedding");
            dialeval_eval::models::fill_pair_texts(&mut cache, &encoder, &config.vector_inputs().texts_of(&[&train_pairs, &dev_pairs, &test_pairs, &graph_test]), &|d, t| bar.update(d, t))?;
            bar.finish();
            (Some(encoder), Some(cache))
        }
    };
    let cached = encoder.as_ref().zip(cache.as_ref()).map(|(e, c)| CachedSentenceVectors::new(c, e.fingerprint()));
    let vectors = cached.as_ref().map(|v| v as &dyn SentenceVectors);
    if retrieved.any() {
        // The retrieved pairs reuse the mix's contexts and responses: their vectors are cached.
        let pair_vectors = cached.map(PairSentenceVectors);
        let extra = retrieve_negatives(&train_pairs, &retrieved, pair_vectors.as_ref().map(|v| v as &dyn dialeval_datasets::negatives::PairVectors))?;
        eprintln!(
            "train_slm: retrieved {} lexical and {} embedding negatives for {} training pairs",
            extra.iter().filter(|p| p.kind == PairKind::LexicalNegative).count(),
            extra.iter().filter(|p| p.kind == PairKind::EmbeddingNegative).count(),
            train_pairs.len()
        );
        train_pairs.extend(extra);
    }
    if !args.drop_negatives.is_empty() {
        let dropped = drop_negatives(&mut train_pairs, &args.drop_negatives);
        eprintln!("train_slm: {dropped} training negatives of {:?} left out", args.drop_negatives);
    }
    dialeval_eval::models::mix::record_data_settings(out, &data_settings)?;
    // What the model reads: under the complete-graph rule (which its featuriser applies, in
    // scoring too) a pair with some of its graphs reads none.
    let read = |pairs: &[TrainingPair]| {
        let table = dialeval_datasets::amr::GraphPresenceTable::of(pairs);
        if args.complete_graphs.yes() { (table.partial(), table.complete_only()) } else { (0, table) }
    };
    let (partial, train_read) = read(&train_pairs);
    let (dev_partial, dev_read) = read(&dev_pairs);
    if args.complete_graphs.yes() {
        eprintln!("train_slm: {partial} training and {dev_partial} dev pairs with partial graphs read none");
    }
    eprintln!("train_slm: graphs read per training pair: {train_read}; per dev pair: {dev_read}");
    let with_graphs = train_pairs.len() - train_read.get(dialeval_datasets::amr::GraphPresence::None).iter().sum::<usize>();
    eprintln!("train_slm: {} training pairs ({with_graphs} read graphs), {} dev pairs, {} test pairs", train_pairs.len(), dev_pairs.len(), test_pairs.len());
    if args.knowledge.yes() {
        let grounded = train_pairs.iter().filter(|p| p.knowledge.is_some()).count();
        eprintln!("train_slm: {grounded} of {} training pairs have knowledge", train_pairs.len());
    }
    let bar = crate::support::Progress::new("train_slm");
    let logs = train(&TrainingData { train: &train_pairs, dev: &dev_pairs, vectors }, &config, out, &|e, s, n| bar.update_epoch(e, s, n))?;
    bar.finish();
    for l in logs {
        println!("{}", serde_json::to_string(&l)?);
    }
    let scorer = Scorer::load(out, args.device.device()?)?;
    let mut test = test_metrics(&scorer.score(&test_pairs, vectors)?, &test_pairs);
    if mode != Mode::TextOnly && test_pairs.iter().any(|p| p.response_amr.is_some()) {
        test["graphs_withheld"] = test_metrics(&scorer.score_with(&test_pairs, vectors, Graphs::Withhold)?, &test_pairs);
    }
    if !graph_test.is_empty() {
        test["topical_test"] = graph_bands(&scorer, &graph_test, vectors)?;
    }
    std::fs::write(out.join("test.json"), serde_json::to_string_pretty(&test)?)?;
    println!("{}", json!({ "test": test }));
    Ok(())
}
