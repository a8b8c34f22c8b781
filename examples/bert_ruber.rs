//! BERT-RUBER: trains the unreferenced model on DailyDialog++ and scores USR-PersonaChat with
//! the unreferenced, referenced and hybrid scores, correlated with the human ratings.
//!
//! ```text
//! cargo run --release --example bert_ruber -- train --out DIR [--embeddings bert|static]
//!     [--representation max_pool|mean_pool|bi_gru] [--objective cross_entropy|ranking]
//!     [--data mix|positives] [--topical yes|no] [--contexts 2000] [--query-turns 2]
//!     [--epochs 10] [--batch 64] [--lr 0.001] [--seed 0] [--encoder DIR] [--shared ../shared]
//! cargo run --release --example bert_ruber -- score --model DIR [--out scores.jsonl] [--encoder DIR] [--shared ../shared]
//! ```
//! Training triples with `--data mix` (the default): the training mix of
//! `dialeval_datasets::mix` (DailyDialog++ dev + test with length-matched corpus negatives,
//! `data_positives.json` with length-matched sampled negatives, Topical-Chat next-turn pairs
//! unless `--topical no`), each positive with a negative of its own context in turn; dev: the
//! mix's dev contexts. With `--data positives`: each positive response of the first `--contexts` contexts of
//! `data_positives.json` with a positive of another context as the sampled negative; dev: 300
//! contexts of `dev.json`, positives against the corpus's random negatives; both honour
//! `overlap_exclude_ids.tsv`. Token states of MiniLM (`scripts/fetch_minilm.sh`) are cached in
//! `~/.cache/dialeval/embeddings/<encoder>.bin`, so the encoder runs once per sentence.
//! A killed `train` resumes from its last finished epoch.
//!
//! `score` writes one JSON line per USR item (unreferenced; referenced = cosine of max-min
//! pooled token states of response and ground truth; hybrids = min, max, arithmetic and
//! geometric mean of the min-max normalised pair) and prints a Markdown table of Pearson and
//! Spearman correlations with the mean human score of every criterion.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use burn::prelude::Device;
use dialeval_common::SplitMix64;
use dialeval_datasets::ddpp::{self, DdppContext, ExcludeList};
use dialeval_examples::YesNo;
use dialeval_examples::{Progress, embedding_cache, human_criteria, report_markdown};
use dialeval_metrics::embedding::{HybridStrategy, MultiRef, Pooling, hybrid, min_max_normalize, referenced_score_refs};
use dialeval_slm_model::bert::{PretrainedEncoder, default_model_dir};
use dialeval_slm_model::ruber::{Embeddings, Objective, Representation, RuberConfig, RuberScorer, Triple, train_unreferenced};
use serde_json::json;

#[derive(Debug, clap::Parser)]
#[command(about = "BERT-RUBER: train the unreferenced model, or score USR-PersonaChat")]
struct Args {
    #[command(subcommand)]
    command: Command,
    /// The sentence encoder (default: all-MiniLM-L6-v2 from scripts/fetch_minilm.sh).
    #[arg(long, global = true)]
    encoder: Option<PathBuf>,
    /// The shared data folder.
    #[arg(long, global = true, default_value = "../shared")]
    shared: PathBuf,
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
    #[arg(long, default_value = "bert", value_parser = dialeval_examples::serde_value::<Embeddings>)]
    embeddings: Embeddings,
    /// max_pool, mean_pool or bi_gru.
    #[arg(long, default_value = "max_pool", value_parser = dialeval_examples::serde_value::<Representation>)]
    representation: Representation,
    /// cross_entropy or ranking.
    #[arg(long, default_value = "cross_entropy", value_parser = dialeval_examples::serde_value::<Objective>)]
    objective: Objective,
    /// The training triples.
    #[arg(long, value_enum, default_value_t = Data::Mix)]
    data: Data,
    /// mix: add Topical-Chat pairs.
    #[arg(long, value_enum, default_value_t = YesNo::Yes)]
    topical: YesNo,
    /// positives: contexts of data_positives.json used.
    #[arg(long, default_value_t = 2000)]
    contexts: usize,
    /// Context turns in the query.
    #[arg(long, default_value_t = 2)]
    query_turns: usize,
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
    /// Scores per item, as JSON lines.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    dialeval_examples::finish("bert_ruber", run(&<Args as clap::Parser>::parse()))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let shared = &args.shared;
    let device = Device::flex();
    let encoder = PretrainedEncoder::load(&args.encoder.clone().unwrap_or_else(default_model_dir), &device)?;
    match &args.command {
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
                ..RuberConfig::default()
            };
            let out = &t.out;
            let mut test_pairs = Vec::new();
            let (train, dev) = match t.data {
                Data::Mix => {
                    let topical = dialeval_examples::topical_flag(t.topical);
                    let mix = dialeval_examples::training_mix(shared, &dialeval_datasets::mix::MixConfig { seed: config.seed, topical, ..Default::default() })?;
                    test_pairs = mix.test;
                    (mix_triples(&mix.train, &config), mix_triples(&mix.dev, &config))
                }
                Data::Positives => positives_triples(shared, &config, t.contexts)?,
            };
            eprintln!("bert_ruber: {} training triples, {} dev triples", train.len(), dev.len());
            let mut cache = embedding_cache(&encoder)?;
            let texts: Vec<&str> = train.iter().chain(&dev).flat_map(|t| [t.query.as_str(), t.positive.as_str(), t.negative.as_str()]).collect();
            let bar = Progress::new("embedding");
            cache.fill(&encoder, &texts, &|done, total| bar.update(done, total))?;
            bar.finish();
            let bar = Progress::new("training");
            let logs = train_unreferenced(&train, &dev, &cache, encoder.vocab_size(), &config, out, &|epoch, step, steps| bar.update_epoch(epoch, step, steps))?;
            bar.finish();
            for l in logs {
                println!("{}", serde_json::to_string(&l)?);
            }
            // The held-out test split of the mix (the 100 annotated DailyDialog++ test contexts):
            // ROC AUC of the best model, positives against each kind of negative.
            if !test_pairs.is_empty() {
                let queries: Vec<String> = test_pairs.iter().map(|p| config.query(&p.context)).collect();
                let texts: Vec<&str> = queries.iter().map(String::as_str).chain(test_pairs.iter().map(|p| p.response.as_str())).collect();
                cache.fill(&encoder, &texts, &|_, _| {})?;
                let pairs: Vec<(&str, &str)> = queries.iter().map(String::as_str).zip(test_pairs.iter().map(|p| p.response.as_str())).collect();
                let scores = RuberScorer::load(out, Device::flex())?.score(&cache, &pairs)?;
                let auc = |kind| dialeval_slm_model::train::auc_against(&test_pairs, &scores, kind).ok();
                let labels: Vec<u8> = test_pairs.iter().map(dialeval_datasets::pairs::TrainingPair::label).collect();
                use dialeval_datasets::pairs::PairKind;
                let test = json!({"pairs": test_pairs.len(), "auc": dialeval_common::roc_auc(&scores, &labels).ok(), "auc_random": auc(PairKind::RandomNegative), "auc_adversarial": auc(PairKind::AdversarialNegative)});
                std::fs::write(out.join("test.json"), serde_json::to_string_pretty(&test)?)?;
                println!("{}", json!({ "test": test }));
            }
        }
        Command::Score(a) => {
            let scorer = RuberScorer::load(&a.model, device)?;
            let items = dialeval_datasets::usr::load(&shared.join("data/usr-personachat/pc_usr_data.json"))?;
            let queries: Vec<String> = items.iter().map(|i| scorer.config.query(&i.context.iter().map(|t| t.text.as_str()).collect::<Vec<_>>())).collect();
            let responses: Vec<&str> = items.iter().map(|i| i.response.as_ref().map_or("", |r| r.text.as_str())).collect();
            let started = std::time::Instant::now();
            dialeval_common::SentenceEmbedder::embed_sentences(&encoder, &responses).map_err(|e| e.to_string())?;
            let seconds = started.elapsed().as_secs_f64();
            eprintln!("bert_ruber: embedded the {} responses in {seconds:.2} s ({:.1} ms per sentence, batches of {})", responses.len(), 1000.0 * seconds / responses.len() as f64, encoder.batch_size);
            let mut cache = embedding_cache(&encoder)?;
            let texts: Vec<&str> = queries.iter().map(String::as_str).chain(responses.iter().copied()).collect();
            cache.fill(&encoder, &texts, &|_, _| {})?;
            let pairs: Vec<(&str, &str)> = queries.iter().map(String::as_str).zip(responses.iter().copied()).collect();
            let unreferenced = scorer.score(&cache, &pairs)?;
            // Referenced scores exist for the items that have a reference (not the ground truth).
            let with_ref: Vec<usize> = (0..items.len()).filter(|&i| !items[i].references.is_empty()).collect();
            let mut referenced = Vec::with_capacity(with_ref.len());
            for &i in &with_ref {
                let refs: Vec<&str> = items[i].references.iter().map(String::as_str).collect();
                referenced.push(referenced_score_refs(&encoder, responses[i], &refs, Pooling::MaxMin, MultiRef::Max)?);
            }
            let unref_sub: Vec<f64> = with_ref.iter().map(|&i| unreferenced[i]).collect();
            let (nu, nr) = (min_max_normalize(&unref_sub)?, min_max_normalize(&referenced)?);
            let strategies = [("min", HybridStrategy::Min), ("max", HybridStrategy::Max), ("arithmetic_mean", HybridStrategy::ArithmeticMean), ("geometric_mean", HybridStrategy::GeometricMean)];
            let hybrids: Vec<(String, Vec<f64>)> = strategies.iter().map(|(n, s)| Ok((format!("hybrid_{n}"), hybrid(&nu, &nr, *s)?))).collect::<Result<_, Box<dyn std::error::Error>>>()?;
            if let Some(path) = &a.out {
                let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
                for (k, item) in items.iter().enumerate() {
                    let j = with_ref.iter().position(|&i| i == k);
                    let mut line = json!({"id": item.id, "system": item.system, "unreferenced": unreferenced[k], "referenced": j.map(|j| referenced[j])});
                    for (name, v) in &hybrids {
                        line[name] = json!(j.map(|j| v[j]));
                    }
                    writeln!(file, "{line}")?;
                }
            }
            let all_criteria = human_criteria(&items);
            let sub_items: Vec<_> = with_ref.iter().map(|&i| items[i].clone()).collect();
            let sub_criteria = human_criteria(&sub_items);
            println!("## all {} items\n\n{}", items.len(), report_markdown(&[("unreferenced", &unreferenced)], &all_criteria)?);
            let mut metrics: Vec<(&str, &[f64])> = vec![("unreferenced", &unref_sub), ("referenced", &referenced)];
            metrics.extend(hybrids.iter().map(|(n, v)| (n.as_str(), v.as_slice())));
            println!("## the {} items with a reference\n\n{}", with_ref.len(), report_markdown(&metrics, &sub_criteria)?);
        }
    }
    Ok(())
}

/// The triples of mix pairs: within each context (or conversation), the k-th positive with the
/// k-th negative, negatives reused in turn when there are fewer; contexts without a negative
/// give none.
fn mix_triples(pairs: &[dialeval_datasets::pairs::TrainingPair], config: &RuberConfig) -> Vec<Triple> {
    use dialeval_datasets::pairs::pair_group;
    let mut out = Vec::new();
    let mut start = 0;
    while start < pairs.len() {
        let group = pair_group(&pairs[start]);
        let end = start + pairs[start..].iter().take_while(|p| pair_group(p) == group).count();
        let (positives, negatives): (Vec<_>, Vec<_>) = pairs[start..end].iter().partition(|p| p.label() == 1);
        if !negatives.is_empty() {
            for (k, p) in positives.iter().enumerate() {
                let n = negatives[k % negatives.len()];
                out.push(Triple { query: config.query(&p.context), positive: p.response.clone(), negative: n.response.clone() });
            }
        }
        start = end;
    }
    out
}

/// The earlier recipe: triples from the first `contexts` contexts of `data_positives.json`
/// (negatives sampled from other contexts), dev from 300 contexts of `dev.json` (positives
/// against the corpus's random negatives).
fn positives_triples(shared: &Path, config: &RuberConfig, contexts: usize) -> Result<(Vec<Triple>, Vec<Triple>), Box<dyn std::error::Error>> {
    let dir = shared.join("data/dailydialog-plusplus");
    let exclude = ExcludeList::load(&dir.join("overlap_exclude_ids.tsv"))?;
    let keep = |file: &str, contexts: Vec<DdppContext>| -> Vec<DdppContext> { contexts.into_iter().filter(|c| !exclude.contains(file, c.id)).collect() };
    let mut positives = keep("data_positives.json", ddpp::load(&dir.join("data_positives.json"))?);
    positives.truncate(contexts);
    let mut dev_contexts = keep("dev.json", ddpp::load(&dir.join("dev.json"))?);
    dev_contexts.truncate(300);
    let train = sampled_triples(&positives, config, config.seed);
    let dev: Vec<Triple> =
        dev_contexts.iter().flat_map(|c| c.positives.iter().zip(&c.random_negatives).map(|(p, n)| Triple { query: config.query(&c.context), positive: p.clone(), negative: n.clone() })).collect();
    Ok((train, dev))
}

/// One triple per positive: a positive of another context (seeded) is its negative.
fn sampled_triples(contexts: &[DdppContext], config: &RuberConfig, seed: u64) -> Vec<Triple> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::new();
    for (k, c) in contexts.iter().enumerate() {
        for p in &c.positives {
            let mut other = rng.below(contexts.len().saturating_sub(1).max(1));
            if other >= k {
                other = (other + 1) % contexts.len();
            }
            let donor = &contexts[other].positives;
            if other == k || donor.is_empty() {
                continue;
            }
            out.push(Triple { query: config.query(&c.context), positive: p.clone(), negative: donor[rng.below(donor.len())].clone() });
        }
    }
    out
}
