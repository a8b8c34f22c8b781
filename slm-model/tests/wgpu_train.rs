//! Training and scoring on a wgpu device (a GPU, or Mesa's lavapipe in CI) through the same
//! entry points as on the CPU, equal to flex within the tolerance `compute` states: the SLM and
//! BERT-RUBER's unreferenced model, a few steps each on the bundled DailyDialog++ dev data
//! (silver AMR attached), then the checkpoints scored on both devices.
//! Part of `cargo test --workspace --all-features`; alone:
//! `cargo test -p dialeval-slm-model --features wgpu --test wgpu_train`.
#![cfg(feature = "wgpu")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::ddpp;
use dialeval_datasets::pairs::{DdppPairConfig, TrainingPair, ddpp_pairs};
use dialeval_slm_model::compute::Compute;
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::Mode;
use dialeval_slm_model::ruber::{Embeddings, RuberConfig, RuberData, RuberScorer, Triple, train_unreferenced};
use dialeval_slm_model::scorer::Scorer;
use dialeval_slm_model::train::{TrainingData, train};
use dialeval_slm_model::vectors::{CachedText, EmbeddingCache};

const GPU: Compute = Compute::Wgpu(None);

/// burn's random streams are process-wide: the two tests take turns (as `tests/ruber.rs` does).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn pairs() -> (Vec<TrainingPair>, Vec<TrainingPair>) {
    let data = dialeval_testkit::workspace_dir().join("data");
    let contexts = ddpp::load(&data.join("dailydialog-plusplus/dev.json")).unwrap();
    let (mut pairs, _) = ddpp_pairs(&contexts[..40], "dev.json", None, &DdppPairConfig { max_context_turns: Some(2), seed: 1, ..DdppPairConfig::default() }).unwrap();
    AmrIndex::load(&[data.join("silver-amr/dailydialog-plusplus-dev200.silver.amr.txt")]).unwrap().attach_pairs(&mut pairs);
    let dev = pairs.split_off(pairs.len() - 48);
    pairs.truncate(64);
    (pairs, dev)
}

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dialeval-wgpu-train-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol * a.abs().max(1.0), "{what}: flex {a} vs wgpu {b}");
}

#[test]
fn slm_training_and_scoring_on_wgpu_match_flex() {
    let _serial = serial();
    let (train_p, dev_p) = pairs();
    assert!(dev_p.iter().any(|p| p.response_amr.is_some()), "graphs attached");
    let config = |compute| TrainConfig {
        mode: Mode::Gated,
        epochs: 2,
        batch_size: 16,
        d_model: 16,
        layers: 1,
        max_len: 48,
        max_nodes: 24,
        max_path: 3,
        seed: 4,
        dropout: 0.0,
        compute,
        ..TrainConfig::default()
    };
    let (cpu_dir, gpu_dir) = (dir("slm-cpu"), dir("slm-gpu"));
    let on_cpu = train(&TrainingData { train: &train_p, dev: &dev_p, vectors: None }, &config(Compute::Cpu), &cpu_dir, &|_, _, _| {}).unwrap();
    let on_gpu = train(&TrainingData { train: &train_p, dev: &dev_p, vectors: None }, &config(GPU), &gpu_dir, &|_, _, _| {}).unwrap();
    assert_eq!(on_cpu.len(), on_gpu.len());
    for (a, b) in on_cpu.iter().zip(&on_gpu) {
        close(a.train_loss, b.train_loss, 1e-2, &format!("epoch {} training loss", a.epoch));
        close(a.dev_auc, b.dev_auc, 2e-2, &format!("epoch {} dev AUC", a.epoch));
    }
    // One checkpoint scored on both devices, and the wgpu-trained one on the CPU.
    let cpu_scores = Scorer::load(&cpu_dir, Compute::Cpu.device().unwrap()).unwrap().score(&dev_p, None).unwrap();
    let gpu_scores = Scorer::load(&cpu_dir, GPU.device().unwrap()).unwrap().score(&dev_p, None).unwrap();
    for (k, (a, b)) in cpu_scores.iter().zip(&gpu_scores).enumerate() {
        close(*a, *b, 1e-3, &format!("score {k} of the flex checkpoint"));
    }
    let moved = Scorer::load(&gpu_dir, Compute::Cpu.device().unwrap()).unwrap().score(&dev_p, None).unwrap();
    for (k, (a, b)) in cpu_scores.iter().zip(&moved).enumerate() {
        close(*a, *b, 1e-2, &format!("score {k}: flex-trained vs wgpu-trained"));
    }
    // A run started on wgpu resumes on the CPU: the device is not part of the run's settings.
    let more = train(&TrainingData { train: &train_p, dev: &dev_p, vectors: None }, &TrainConfig { epochs: 3, ..config(Compute::Cpu) }, &gpu_dir, &|_, _, _| {}).unwrap();
    assert_eq!(more.len(), 1);
    let _ = std::fs::remove_dir_all(cpu_dir);
    let _ = std::fs::remove_dir_all(gpu_dir);
}

#[test]
fn ruber_training_and_scoring_on_wgpu_match_flex() {
    let _serial = serial();
    // Frozen token states of a toy encoder: a deterministic vector per word piece.
    let texts: Vec<String> = (0..60).map(|i| format!("sentence {i} about topic {}", i % 7)).collect();
    let path = dir("ruber-cache").with_extension("bin");
    let mut cache = EmbeddingCache::open(&path, 8).unwrap();
    for (i, t) in texts.iter().enumerate() {
        let ids: Vec<u32> = (0..4).map(|k| 1 + ((i * 3 + k) % 20) as u32).collect();
        let states = ids.iter().flat_map(|&id| (0..8).map(move |d| half::f16::from_f32(((id as f32) * 0.37 + d as f32 * 0.11).sin()))).collect();
        cache.insert(t, CachedText { ids, states }).unwrap();
    }
    let triple = |q: usize| Triple { query: texts[q].clone(), positive: texts[(q + 7) % 60].clone(), negative: texts[(q + 30) % 60].clone(), knowledge: None };
    let train_t: Vec<Triple> = (0..40).map(triple).collect();
    let dev_t: Vec<Triple> = (40..60).map(triple).collect();
    let config = |compute| RuberConfig { embeddings: Embeddings::Bert, epochs: 2, batch_size: 8, max_tokens: 8, seed: 2, compute, ..RuberConfig::default() };
    let (cpu_dir, gpu_dir) = (dir("ruber-cpu"), dir("ruber-gpu"));
    let on_cpu = train_unreferenced(&RuberData { train: &train_t, dev: &dev_t, cache: &cache, vocab: 30 }, &config(Compute::Cpu), &cpu_dir, &|_, _, _| {}).unwrap();
    let on_gpu = train_unreferenced(&RuberData { train: &train_t, dev: &dev_t, cache: &cache, vocab: 30 }, &config(GPU), &gpu_dir, &|_, _, _| {}).unwrap();
    // The same initial weights on both devices (drawn on the CPU and materialised before the
    // move): the losses agree to float summation order.
    for (a, b) in on_cpu.iter().zip(&on_gpu) {
        close(a.train_loss, b.train_loss, 1e-4, &format!("epoch {} training loss", a.epoch));
    }
    let pairs: Vec<(&str, &str)> = dev_t.iter().map(|t| (t.query.as_str(), t.positive.as_str())).collect();
    let a = RuberScorer::load(&cpu_dir, Compute::Cpu.device().unwrap()).unwrap().score(&cache, &pairs).unwrap();
    let b = RuberScorer::load(&cpu_dir, GPU.device().unwrap()).unwrap().score(&cache, &pairs).unwrap();
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        close(*x, *y, 1e-3, &format!("score {k}"));
    }
    let _ = std::fs::remove_dir_all(cpu_dir);
    let _ = std::fs::remove_dir_all(gpu_dir);
    let _ = std::fs::remove_file(path);
}
