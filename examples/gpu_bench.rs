//! flex against wgpu on the models' hot paths, side by side: MiniLM sentences per second, one
//! SLM training step, SLM scoring throughput and one BERT-RUBER epoch, on the data bundled in
//! the repository (USR-PersonaChat responses, DailyDialog++ dev contexts with silver AMR).
//!
//! ```text
//! scripts/gpu_bench.sh                      # builds with the wgpu feature, runs cpu and wgpu
//! cargo run --release --features dialeval-examples/wgpu --example gpu_bench -- --devices cpu,wgpu [--sentences 512] [--pairs 256]
//! ```
//! Each figure is the median of `--repeats` timed runs after one warm-up run (kernels compiled,
//! caches filled), so a GPU's one-off shader compilation is not counted. Prints a Markdown table
//! and, with `--out FILE`, writes it as JSON.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use dialeval_common::SentenceEmbedder;
use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::ddpp;
use dialeval_eval::models::{Compute, SlmPairing, ddpp_slm_pairs, fill_pair_texts, random_negative_triples};
use dialeval_slm_model::bert::{PretrainedEncoder, minilm_dir};
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::{Mode, TextEncoderKind};
use dialeval_slm_model::ruber::{RuberConfig, RuberData, train_unreferenced};
use dialeval_slm_model::scorer::Scorer;
use dialeval_slm_model::train::{TrainingData, train};
use dialeval_slm_model::vectors::{CachedSentenceVectors, EmbeddingCache};
use serde_json::json;

#[derive(Debug, clap::Parser)]
#[command(about = "flex against wgpu: MiniLM encoding, an SLM training step, SLM scoring, a BERT-RUBER epoch")]
struct Args {
    /// Devices to compare, comma-separated: cpu, wgpu, wgpu:N.
    #[arg(long, value_delimiter = ',', default_value = "cpu,wgpu")]
    devices: Vec<Compute>,
    /// Sentences MiniLM encodes per timed run.
    #[arg(long, default_value_t = 512)]
    sentences: usize,
    /// Training and scoring pairs.
    #[arg(long, default_value_t = 256)]
    pairs: usize,
    /// Timed runs per figure (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// The repository's data folder.
    #[arg(long, default_value = "data")]
    data: PathBuf,
    /// The sentence encoder (default: all-MiniLM-L6-v2 from scripts/fetch_minilm.sh).
    #[arg(long)]
    encoder: Option<PathBuf>,
    /// Also write the table as JSON.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    dialeval_examples::finish("gpu_bench", run(&<Args as clap::Parser>::parse()))
}

/// Median seconds of `repeats` runs of `f` after one warm-up run.
fn timed(repeats: usize, mut f: impl FnMut() -> Result<(), Box<dyn std::error::Error>>) -> Result<f64, Box<dyn std::error::Error>> {
    f()?;
    let mut seconds = Vec::new();
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        f()?;
        seconds.push(started.elapsed().as_secs_f64());
    }
    seconds.sort_by(f64::total_cmp);
    Ok(seconds[seconds.len() / 2])
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let encoder_dir = args.encoder.clone().unwrap_or_else(minilm_dir);
    let usr = dialeval_datasets::usr::load(&args.data.join("usr-personachat/pc_usr_data.json"))?;
    let sentences: Vec<&str> = usr.iter().filter_map(|i| i.response.as_ref().map(|r| r.text.as_str())).cycle().take(args.sentences).collect();
    let contexts = ddpp::load(&args.data.join("dailydialog-plusplus/dev.json"))?;
    let exclude = ddpp::ExcludeList::load(&args.data.join("dailydialog-plusplus/overlap_exclude_ids.tsv"))?;
    let index = AmrIndex::load(&[args.data.join("silver-amr/dailydialog-plusplus-dev200.silver.amr.txt")])?;
    let mut all = ddpp_slm_pairs(&contexts, "dev.json", &SlmPairing { exclude: &exclude, index: &index, seed: 0 })?.pairs;
    all.truncate(args.pairs + args.pairs / 4);
    // Every fifth pair of each label is a dev pair: both labels in a dev split of any size.
    let mut seen = [0_usize; 2];
    let (dev, pairs): (Vec<_>, Vec<_>) = all.into_iter().partition(|p| {
        let n = &mut seen[usize::from(p.label())];
        *n += 1;
        *n % 5 == 0
    });
    let ruber_config = RuberConfig { epochs: 1, ..RuberConfig::default() };
    let triples: Vec<_> = contexts.iter().flat_map(|c| random_negative_triples(c, &ruber_config)).take(args.pairs).collect();
    let (ruber_train, ruber_dev) = triples.split_at(triples.len() * 4 / 5);
    let scratch = std::env::temp_dir().join(format!("dialeval-gpu-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let mut rows = Vec::new();
    for &compute in &args.devices {
        let device = compute.device()?;
        eprintln!("gpu_bench: {compute}");
        let encoder = PretrainedEncoder::load(&encoder_dir, &device)?;
        let encode = timed(args.repeats, || Ok(encoder.embed_sentences(&sentences).map(drop).map_err(|e| e.to_string())?))?;
        // Token states for the SLM's pretrained head and BERT-RUBER, in a cache of this device's own.
        let mut cache = EmbeddingCache::open(&scratch.join(format!("{compute}.bin")), encoder.hidden_size())?.with_encoder_id(encoder.fingerprint());
        fill_pair_texts(&mut cache, &encoder, &dialeval_slm_model::texts::VectorInputs::default().texts_of(&[&pairs, &dev]), &|_, _| {})?;
        let texts: Vec<&str> = triples.iter().flat_map(|t| [t.query.as_str(), t.positive.as_str(), t.negative.as_str()]).collect();
        cache.fill(&encoder, &texts, &|_, _| {})?;
        let vectors = CachedSentenceVectors::new(&cache, encoder.fingerprint());
        let config = TrainConfig { mode: Mode::Gated, epochs: 1, text_encoder: TextEncoderKind::Pretrained, compute, ..TrainConfig::default() };
        let steps = pairs.len().div_ceil(config.batch_size);
        let mut run = 0;
        let slm_dir = |run: usize| scratch.join(format!("slm-{compute}-{run}"));
        let epoch = timed(args.repeats, || {
            run += 1;
            train(&TrainingData { train: &pairs, dev: &dev, vectors: Some(&vectors) }, &config, &slm_dir(run), &|_, _, _| {})?;
            Ok(())
        })?;
        let scorer = Scorer::load(&slm_dir(1), device.clone())?;
        let score = timed(args.repeats, || Ok(scorer.score(&pairs, Some(&vectors)).map(drop)?))?;
        let mut run = 0;
        let ruber = timed(args.repeats, || {
            run += 1;
            train_unreferenced(
                &RuberData { train: ruber_train, dev: ruber_dev, cache: &cache, vocab: encoder.vocab_size() },
                &RuberConfig { compute, ..ruber_config.clone() },
                &scratch.join(format!("ruber-{compute}-{run}")),
                &|_, _, _| {},
            )?;
            Ok(())
        })?;
        rows.push(json!({
            "device": compute.to_string(),
            "minilm_sentences_per_s": sentences.len() as f64 / encode,
            // One epoch of `steps` steps, its dev prediction included.
            "slm_train_step_ms": 1000.0 * epoch / steps as f64,
            "slm_scored_pairs_per_s": pairs.len() as f64 / score,
            "ruber_epoch_s": ruber,
        }));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    println!(
        "{} sentences, {} SLM pairs (batch {}), {} BERT-RUBER training triples; median of {} runs\n",
        sentences.len(),
        pairs.len(),
        TrainConfig::default().batch_size,
        ruber_train.len(),
        args.repeats
    );
    println!("| device | MiniLM sentences/s | SLM training step (ms) | SLM scoring pairs/s | BERT-RUBER epoch (s) |\n|---|---|---|---|---|");
    for r in &rows {
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        println!("| {} | {:.1} | {:.1} | {:.1} | {:.2} |", r["device"].as_str().unwrap_or("?"), f("minilm_sentences_per_s"), f("slm_train_step_ms"), f("slm_scored_pairs_per_s"), f("ruber_epoch_s"));
    }
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&rows)?)?;
    }
    Ok(())
}
