//! BERT-RUBER's unreferenced model: the embedding cache survives a torn write, every cell of the
//! design space (BERT/static × max/mean/Bi-GRU × cross-entropy/ranking) learns a synthetic
//! relatedness task, and an interrupted run resumes to the same result.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use burn::prelude::*;
use dialeval_common::SplitMix64;
use dialeval_slm_model::ruber::{Embeddings, Objective, Representation, RuberConfig, RuberData, RuberScorer, Triple, train_unreferenced};
use dialeval_slm_model::vectors::{CachedText, EmbeddingCache};

const DIM: usize = 8;

/// burn's device seed is process-wide: tests that seed and initialise models run one at a time
/// so that one test's initialisation cannot consume another's random numbers.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
const TOPICS: usize = 4;

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dialeval-ruber-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Sentence `i` of topic `k`: 3–6 tokens whose ids and states belong to the topic.
fn synthetic(cache: &mut EmbeddingCache, rng: &mut SplitMix64, k: usize, i: usize) -> String {
    let text = format!("topic {k} sentence {i}");
    let n = 3 + rng.below(4);
    let ids: Vec<u32> = (0..n).map(|_| (4 + k * 5 + rng.below(5)) as u32).collect();
    let states = ids.iter().flat_map(|_| (0..DIM).map(|d| half::f16::from_f32(if d % TOPICS == k { 1.0 } else { 0.0 } + (rng.unit() as f32 - 0.5) * 0.6)).collect::<Vec<_>>()).collect();
    cache.insert(&text, CachedText { ids, states }).unwrap();
    text
}

fn task(cache: &mut EmbeddingCache, n: usize, seed: u64) -> Vec<Triple> {
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|i| {
            let k = rng.below(TOPICS);
            let other = (k + 1 + rng.below(TOPICS - 1)) % TOPICS;
            Triple { query: synthetic(cache, &mut rng, k, 3 * i), positive: synthetic(cache, &mut rng, k, 3 * i + 1), negative: synthetic(cache, &mut rng, other, 3 * i + 2), knowledge: None }
        })
        .collect()
}

#[test]
fn cache_reopens_and_drops_a_torn_tail() {
    let dir = temp("cache");
    let path = dir.join("cache.bin");
    let mut cache = EmbeddingCache::open(&path, DIM).unwrap();
    let mut rng = SplitMix64(1);
    let a = synthetic(&mut cache, &mut rng, 0, 0);
    let b = synthetic(&mut cache, &mut rng, 1, 1);
    let len = std::fs::metadata(&path).unwrap().len();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[9, 0, 0, 0, b'x']); // a record cut short by a kill
    std::fs::write(&path, bytes).unwrap();
    let again = EmbeddingCache::open(&path, DIM).unwrap();
    assert_eq!(again.len(), 2);
    assert_eq!(again.get(&a).unwrap(), cache.get(&a).unwrap());
    assert_eq!(again.get(&b).unwrap(), cache.get(&b).unwrap());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    assert!(EmbeddingCache::open(&path, DIM + 1).is_err());
    let mut c = EmbeddingCache::open(&path, DIM).unwrap();
    assert!(c.insert("bad", CachedText { ids: vec![1, 2], states: vec![half::f16::ZERO; DIM] }).is_err());
    // Damage that claims a 4 GiB text is where the valid records end, not an allocation.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, b'x', b'y']);
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(EmbeddingCache::open(&path, DIM).unwrap().len(), 2);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn two_handles_on_one_cache_keep_each_others_records() {
    // Two handles on one file, appending in turn as two processes would (each append holds
    // the file lock): every record of both is read back whole.
    let dir = temp("shared-cache");
    let path = dir.join("cache.bin");
    let mut first = EmbeddingCache::open(&path, DIM).unwrap();
    let mut second = EmbeddingCache::open(&path, DIM).unwrap();
    let mut rng = SplitMix64(7);
    let mut texts = Vec::new();
    for k in 0..6 {
        let cache = if k % 2 == 0 { &mut first } else { &mut second };
        texts.push(synthetic(cache, &mut rng, k, k));
    }
    let merged = EmbeddingCache::open(&path, DIM).unwrap();
    assert_eq!(merged.len(), 6);
    for (k, t) in texts.iter().enumerate() {
        let owner = if k % 2 == 0 { &first } else { &second };
        assert_eq!(merged.get(t).unwrap(), owner.get(t).unwrap());
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_configuration_learns_relatedness() {
    let _serial = serial();
    let dir = temp("grid");
    let mut cache = EmbeddingCache::open(&dir.join("cache.bin"), DIM).unwrap();
    let train = task(&mut cache, 384, 2);
    let dev = task(&mut cache, 48, 3);
    let mut failures = Vec::new();
    for embeddings in [Embeddings::Bert, Embeddings::Static] {
        for representation in [Representation::MaxPool, Representation::MeanPool, Representation::BiGru] {
            for objective in [Objective::CrossEntropy, Objective::Ranking] {
                let config = RuberConfig { embeddings, representation, objective, static_dim: 8, gru_hidden: 8, epochs: 8, patience: 8, batch_size: 16, ..RuberConfig::default() };
                let out = dir.join(format!("{embeddings:?}-{representation:?}-{objective:?}"));
                let started = std::time::Instant::now();
                let logs = train_unreferenced(&RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 }, &config, &out, &|_, _, _| {}).unwrap();
                let best = logs.iter().map(|l| l.dev_auc).fold(0.0, f64::max);
                eprintln!("{embeddings:?} {representation:?} {objective:?}: best dev AUC {best} epochs {} ({:.1} s)", logs.len(), started.elapsed().as_secs_f64());
                // The ranking loss learns more slowly than cross-entropy on this small task.
                let floor = if objective == Objective::CrossEntropy { 0.85 } else { 0.65 };
                if best <= floor {
                    failures.push(format!("{embeddings:?} {representation:?} {objective:?}: best dev AUC {best} ({logs:?})"));
                }
                let scorer = RuberScorer::load(&out, Device::flex()).unwrap();
                let scores = scorer.score(&cache, &[(dev[0].query.as_str(), dev[0].positive.as_str())]).unwrap();
                assert!((0.0..=1.0).contains(&scores[0]));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(RuberScorer::load(&dir.join("nowhere"), Device::flex()).is_err());
    // Parameters that do not fit the model ruber.json describes (here: another run's pooling
    // with a Bi-GRU's parameters) are a typed error naming the file, not burn's panic.
    let gru = dir.join("Bert-BiGru-CrossEntropy");
    std::fs::copy(dir.join("Bert-MeanPool-CrossEntropy/ruber.json"), gru.join("ruber.json")).unwrap();
    match RuberScorer::load(&gru, Device::flex()) {
        Err(dialeval_slm_model::Error::RecordMismatch { path, .. }) => assert!(path.ends_with("best/model"), "{path:?}"),
        Err(other) => panic!("expected RecordMismatch, got {other}"),
        Ok(_) => panic!("a mean-pooling model loaded a Bi-GRU's parameters"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn resume_reaches_the_uninterrupted_result() {
    let _serial = serial();
    let dir = temp("resume");
    let mut cache = EmbeddingCache::open(&dir.join("cache.bin"), DIM).unwrap();
    let train = task(&mut cache, 64, 4);
    let dev = task(&mut cache, 16, 5);
    let config = RuberConfig { representation: Representation::MaxPool, gru_hidden: 8, epochs: 3, batch_size: 16, patience: 10, ..RuberConfig::default() };
    let whole = train_unreferenced(&RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 }, &config, &dir.join("whole"), &|_, _, _| {}).unwrap();
    // Other settings on an existing checkpoint are refused rather than mixed.
    let other = train_unreferenced(
        &RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 },
        &RuberConfig { representation: Representation::BiGru, ..config.clone() },
        &dir.join("whole"),
        &|_, _, _| {},
    );
    assert!(other.unwrap_err().to_string().contains("other settings"));
    let stop_after_one = std::cell::Cell::new(false);
    let interrupted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        train_unreferenced(&RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 }, &config, &dir.join("split"), &|epoch, step, steps| {
            if epoch == 2 && step == steps / 2 {
                stop_after_one.set(true);
                panic!("simulated kill in epoch 2");
            }
        })
    }));
    assert!(interrupted.is_err() && stop_after_one.get());
    let rest = train_unreferenced(&RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 }, &config, &dir.join("split"), &|_, _, _| {}).unwrap();
    assert_eq!(rest.len(), 2);
    for (a, b) in whole[1..].iter().zip(&rest) {
        assert_eq!((a.epoch, a.train_loss, a.dev_auc), (b.epoch, b.train_loss, b.dev_auc));
    }
    // The Bi-GRU cell resumes exactly too.
    let gru = RuberConfig { representation: Representation::BiGru, ..config.clone() };
    let whole = train_unreferenced(&RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 }, &gru, &dir.join("gru-whole"), &|_, _, _| {}).unwrap();
    train_unreferenced(&RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 }, &RuberConfig { epochs: 1, ..gru.clone() }, &dir.join("gru"), &|_, _, _| {}).unwrap();
    let rest = train_unreferenced(&RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 }, &gru, &dir.join("gru"), &|_, _, _| {}).unwrap();
    assert_eq!(rest.len(), 2);
    for (a, b) in whole[1..].iter().zip(&rest) {
        assert_eq!((a.epoch, a.train_loss, a.dev_auc), (b.epoch, b.train_loss, b.dev_auc));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Triples whose query says nothing (a topic-free sentence) and whose knowledge names the topic
/// the positive shares and the negative does not; every fourth has no knowledge.
fn grounded_task(cache: &mut EmbeddingCache, n: usize, seed: u64) -> Vec<Triple> {
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|i| {
            let k = rng.below(TOPICS);
            let other = (k + 1 + rng.below(TOPICS - 1)) % TOPICS;
            let query = format!("say something {i} {seed}");
            let ids: Vec<u32> = vec![3, 3];
            let states = (0..2 * DIM).map(|_| half::f16::from_f32((rng.unit() as f32 - 0.5) * 0.6)).collect();
            cache.insert(&query, CachedText { ids, states }).unwrap();
            let knowledge = (i % 4 != 3).then(|| synthetic(cache, &mut rng, k, 4 * i + 1_000_000 * (seed as usize + 1)));
            Triple { query, positive: synthetic(cache, &mut rng, k, 4 * i + 1), negative: synthetic(cache, &mut rng, other, 4 * i + 2), knowledge }
        })
        .collect()
}

#[test]
fn the_knowledge_channel_learns_what_only_the_knowledge_tells_and_scores_without_it() {
    let _serial = serial();
    let dir = temp("knowledge");
    let mut cache = EmbeddingCache::open(&dir.join("cache.bin"), DIM).unwrap();
    let train = grounded_task(&mut cache, 384, 6);
    let dev = grounded_task(&mut cache, 64, 7);
    let base = RuberConfig { representation: Representation::MeanPool, epochs: 10, patience: 10, batch_size: 16, ..RuberConfig::default() };
    let best = |config: &RuberConfig, name: &str| {
        let logs = train_unreferenced(&RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 }, config, &dir.join(name), &|_, _, _| {}).unwrap();
        logs.iter().map(|l| l.dev_auc).fold(0.0, f64::max)
    };
    let with = best(&RuberConfig { knowledge: true, ..base.clone() }, "with");
    let without = best(&base, "without");
    eprintln!("dev AUC with knowledge {with}, without {without}");
    // The query carries no signal: without the channel the model guesses.
    assert!(with > 0.75, "with knowledge: {with}");
    assert!(without < 0.65, "without knowledge: {without}");
    let scorer = RuberScorer::load(&dir.join("with"), Device::flex()).unwrap();
    assert!(scorer.config.knowledge);
    let pairs: Vec<(&str, &str)> = dev.iter().map(|t| (t.query.as_str(), t.positive.as_str())).collect();
    let knowledge: Vec<Option<&str>> = dev.iter().map(|t| t.knowledge.as_deref()).collect();
    let grounded = scorer.score_grounded(&cache, &pairs, &knowledge).unwrap();
    // No knowledge at all reads the learned "no knowledge" input: finite scores, other values.
    let bare = scorer.score(&cache, &pairs).unwrap();
    assert!(bare.iter().chain(&grounded).all(|s| (0.0..=1.0).contains(s)));
    assert_ne!(bare, grounded);
    // A pair without knowledge scores the same whether the others have theirs or not.
    for (i, k) in knowledge.iter().enumerate() {
        if k.is_none() {
            assert!((bare[i] - grounded[i]).abs() < 1e-6, "item {i}: {} vs {}", bare[i], grounded[i]);
        }
    }
    assert!(scorer.score_grounded(&cache, &pairs, &knowledge[1..]).is_err());
    // Withholding knowledge for half the steps still learns it; withholding it always is refused.
    let dropped = best(&RuberConfig { knowledge: true, knowledge_dropout: 0.5, ..base.clone() }, "dropout");
    assert!(dropped > 0.75, "with knowledge dropout: {dropped}");
    let never = train_unreferenced(
        &RuberData { train: &train, dev: &dev, cache: &cache, vocab: 40 },
        &RuberConfig { knowledge: true, knowledge_dropout: 1.0, ..base.clone() },
        &dir.join("never"),
        &|_, _, _| {},
    );
    assert!(never.unwrap_err().to_string().contains("knowledge_dropout"));
    std::fs::remove_dir_all(&dir).ok();
}
