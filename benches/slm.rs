//! Criterion benchmarks of the SLM on the flex CPU backend at fixed shapes: one training step
//! (forward, backward, Adam update) and batched inference.
//!
//! Shapes: batch 16, 64 tokens, 32 nodes per graph, paths of 4 labels, d_model 64, 2 layers each.
#![allow(missing_docs, clippy::panic, clippy::unwrap_used)] // criterion macros; benches fail loudly

use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use dialeval_slm_model::model::{GraphBatch, GraphEncoderConfig, Mode, SlmBatch, SlmConfig, TextEncoderConfig};

const BATCH: usize = 16;
const SEQ: usize = 64;
const NODES: usize = 32;
const PATH: usize = 4;

fn ints<const D: usize>(n: usize, modulo: i64, shape: [usize; D], device: &Device) -> Tensor<D, Int> {
    Tensor::<D, Int>::from_data(TensorData::new((0..n).map(|i| 1 + (i as i64 * 7919) % modulo).collect::<Vec<_>>(), shape), device)
}

fn graph(device: &Device) -> GraphBatch {
    GraphBatch {
        concepts: ints(BATCH * NODES, 499, [BATCH, NODES], device),
        paths: ints(BATCH * NODES * NODES * PATH, 99, [BATCH, NODES, NODES, PATH], device),
        pad: Tensor::<2, Bool>::from_data(TensorData::new(vec![false; BATCH * NODES], [BATCH, NODES]), device),
    }
}

fn batch(device: &Device) -> SlmBatch {
    SlmBatch {
        text_features: None,
        knowledge: None,
        cross: None,
        tokens: ints(BATCH * SEQ, 1999, [BATCH, SEQ], device),
        segments: Tensor::<2, Int>::from_data(TensorData::new((0..BATCH * SEQ).map(|i| i64::from(i % SEQ >= SEQ / 2)).collect::<Vec<_>>(), [BATCH, SEQ]), device),
        pad: Tensor::<2, Bool>::from_data(TensorData::new(vec![false; BATCH * SEQ], [BATCH, SEQ]), device),
        context_graph: graph(device),
        response_graph: graph(device),
        graph_present: Tensor::<2>::ones([BATCH, 1], device),
        labels: Tensor::<1, Int>::from_data(TensorData::new((0..BATCH).map(|i| (i % 2) as i64).collect::<Vec<_>>(), [BATCH]), device),
    }
}

fn config() -> SlmConfig {
    SlmConfig::new(TextEncoderConfig::new(2000).with_d_model(64).with_d_ff(128).with_n_layers(2).with_max_len(SEQ), GraphEncoderConfig::new(500, 100).with_d_model(64).with_n_layers(2))
}

fn bench_slm(c: &mut Criterion) {
    let mut group = c.benchmark_group("slm");
    group.sample_size(10);
    let device = Device::flex().autodiff();
    device.seed(0);
    let mut model = config().init(&device);
    let mut optim = AdamConfig::new().init();
    let b = batch(&device);
    group.bench_function("train_step_b16", |bench| {
        bench.iter(|| {
            let (loss, _) = model.loss(&b, Mode::Gated);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(1e-3, model.clone(), grads);
        });
    });
    let plain = Device::flex();
    let valid = model.valid();
    let b = batch(&plain);
    group.bench_function("inference_b16", |bench| bench.iter(|| valid.probability(&b, Mode::Gated).into_data()));
    group.finish();
}

/// all-MiniLM-L6-v2 on flex; skipped when the model has not been fetched
/// (`scripts/fetch_minilm.sh`). See [`bench_encoder`].
fn bench_minilm(c: &mut Criterion) {
    bench_encoder(c, "minilm", &dialeval_slm_model::bert::minilm_dir(), "scripts/fetch_minilm.sh", [("sgemm_4096x384x1536", [4096, 384, 1536]), ("sgemm_1024_square", [1024, 1024, 1024])]);
}

/// all-mpnet-base-v2 (12 layers, 768 wide, a relative-position bias) on flex, the same inputs;
/// skipped when the model has not been fetched (`scripts/fetch_mpnet.sh`).
fn bench_mpnet(c: &mut Criterion) {
    bench_encoder(c, "mpnet", &dialeval_slm_model::bert::mpnet_dir(), "scripts/fetch_mpnet.sh", [("sgemm_4096x768x3072", [4096, 768, 3072]), ("sgemm_1024_square", [1024, 1024, 1024])]);
}

/// A pretrained encoder from `dir` on flex, in group `name`:
/// - `embed_32_usr_responses`: 32 real USR-PersonaChat responses (mean pooled, normalised).
/// - `encode_usr_texts_256`: the first 256 distinct USR-PersonaChat texts (context turns and
///   responses), as the embedding family sees a chunk; throughput in FLOP/s
///   (`BertConfig::forward_flops` of each sentence's length), to set against `sgemm_*`.
/// - `encode_usr_texts_all`: all 771 distinct texts of the bundled USR-PersonaChat: three times
///   as many sentences of each length, so the equal-length batches (and their matmuls) are
///   three times as large, as in a corpus of thousands of texts.
/// - `sgemm_*`: flex's own float32 matmul at the encoder's feed-forward shape and a square one,
///   the ceiling the encoder's matmuls can reach on this machine.
fn bench_encoder(c: &mut Criterion, name: &str, dir: &std::path::Path, fetch: &str, sgemms: [(&str, [usize; 3]); 2]) {
    use criterion::Throughput;
    use dialeval_common::SentenceEmbedder;
    use dialeval_slm_model::bert::{BertConfig, PretrainedEncoder};
    let (Ok(encoder), Ok(config)) = (PretrainedEncoder::load(dir, &Device::flex()), BertConfig::load(&dir.join("config.json"))) else {
        eprintln!("SKIPPED: {} not found; run {fetch}", dir.display());
        return;
    };
    let usr = dialeval_testkit::read_json(&dialeval_testkit::workspace_dir().join("data/usr-personachat/pc_usr_data.json"));
    let items = usr.as_array().cloned().unwrap_or_default();
    let texts: Vec<String> = items.iter().flat_map(|item| item["responses"].as_array().into_iter().flatten().filter_map(|r| r["response"].as_str().map(|s| s.trim().to_owned()))).take(32).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut seen = std::collections::HashSet::new();
    let corpus: Vec<String> = items
        .iter()
        .flat_map(|item| {
            let turns = item["context"].as_str().unwrap_or_default().lines().map(str::to_owned).collect::<Vec<_>>();
            let responses = item["responses"].as_array().into_iter().flatten().filter_map(|r| r["response"].as_str().map(str::to_owned)).collect::<Vec<_>>();
            turns.into_iter().chain(responses)
        })
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty() && seen.insert(t.clone()))
        .collect();
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.bench_function("embed_32_usr_responses", |bench| bench.iter(|| encoder.embed_sentences(&refs).unwrap()));
    for (bench_name, texts) in [("encode_usr_texts_256", &corpus[..256.min(corpus.len())]), ("encode_usr_texts_all", &corpus[..])] {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let encoded = encoder.encode(&texts).unwrap();
        let flops: u64 = encoded.iter().map(|e| config.forward_flops(e.ids.len())).sum();
        let tokens: usize = encoded.iter().map(|e| e.ids.len()).sum();
        eprintln!("{name}/{bench_name}: {} sentences, {tokens} tokens, {:.2} GFLOP per pass", texts.len(), flops as f64 / 1e9);
        group.throughput(Throughput::Elements(flops));
        group.bench_function(bench_name, |bench| bench.iter(|| encoder.encode(&texts).unwrap()));
    }
    let device = Device::flex();
    for (sgemm, [m, k, n]) in sgemms {
        let a = Tensor::<2>::random([m, k], burn::tensor::Distribution::Default, &device);
        let b = Tensor::<2>::random([k, n], burn::tensor::Distribution::Default, &device);
        group.throughput(Throughput::Elements(2 * (m * k * n) as u64));
        group.bench_function(sgemm, |bench| bench.iter(|| a.clone().matmul(b.clone()).into_data()));
    }
    group.finish();
}

criterion_group!(benches, bench_slm, bench_minilm, bench_mpnet);
criterion_main!(benches);
