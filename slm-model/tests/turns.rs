//! The pretrained head's turn channel on a synthetic task that only the last turn solves: the
//! joined context's vector carries no signal (as when a long earlier turn dominates the pooled
//! text), a positive response lies near its last turn and a negative near another topic. Without
//! the channel the head cannot tell them apart; with it the head learns, an untrained head
//! already ranks by the zero-shot cosines (the residual starts from them), and what the channel
//! needs is named when missing.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use dialeval_common::SplitMix64;
use dialeval_datasets::pairs::{PairKind, TrainingPair};
use dialeval_slm_model::Error;
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::{COSINE_RESIDUAL_INIT, TextEncoderKind};
use dialeval_slm_model::scorer::Scorer;
use dialeval_slm_model::sentence_vectors::turn_features;
use dialeval_slm_model::texts::turn_texts;
use dialeval_slm_model::train::{TrainingData, train};

mod synthetic;
use synthetic::{SERIAL, Table, auc, near, random};

/// `n` two-turn contexts whose joined text's vector is random; the positive lies near the last
/// turn, the negative near another topic.
fn task(table: &mut Table, n: usize, seed: u64, tag: &str) -> Vec<TrainingPair> {
    let mut rng = SplitMix64(seed);
    let mut pairs = Vec::new();
    for i in 0..n {
        let (first, last) = (format!("{tag} first turn {i}"), format!("{tag} last turn {i}"));
        let topic = random(&mut rng);
        table.0.insert(first.clone(), random(&mut rng));
        table.0.insert(last.clone(), near(&topic, &mut rng));
        table.0.insert(format!("{first} {last}"), random(&mut rng));
        let (positive, negative) = (format!("{tag}-positive-{i}"), format!("{tag}-negative-{i}"));
        table.0.insert(positive.clone(), near(&topic, &mut rng));
        let other = random(&mut rng);
        table.0.insert(negative.clone(), near(&other, &mut rng));
        for (response, kind) in [(positive, PairKind::Positive), (negative, PairKind::RandomNegative)] {
            pairs.push(TrainingPair { id: format!("{tag}-{i}"), context: vec![first.clone(), last.clone()], response, kind, context_amr: vec![], response_amr: None, knowledge: None });
        }
    }
    pairs
}

fn config(turns: bool, epochs: usize) -> TrainConfig {
    TrainConfig { epochs, turns, ..synthetic::small_config() }
}

#[test]
fn turn_features_hold_the_last_turn_and_both_cosines() {
    let pair = |context: &[&str]| TrainingPair {
        id: String::new(),
        context: context.iter().map(|s| (*s).to_owned()).collect(),
        response: "r".into(),
        kind: PairKind::Positive,
        context_amr: vec![],
        response_amr: None,
        knowledge: None,
    };
    assert_eq!(turn_texts(&pair(&["a", "b", "c"])), ["b", "c"]);
    assert_eq!(turn_texts(&pair(&["a", "  ", "c"])), ["a", "c"], "a blank turn is skipped");
    assert_eq!(turn_texts(&pair(&["c"])), ["c"]);
    assert!(turn_texts(&pair(&[])).is_empty());
    let r = [1.0_f32, 0.0];
    let f = turn_features(&[vec![0.0, 2.0], vec![3.0, 3.0]], &r);
    // [l ⊙ r; |l − r|; cos(l, r); cos(m, r)] with l = (3, 3), m = (0, 1) + (0.707, 0.707).
    assert_eq!(f.len(), 2 * 2 + 2);
    assert_eq!(&f[..4], &[3.0, 0.0, 2.0, 3.0]);
    assert!((f[4] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6, "{}", f[4]);
    let m = [std::f32::consts::FRAC_1_SQRT_2, 1.0 + std::f32::consts::FRAC_1_SQRT_2];
    let expected = m[0] / (m[0] * m[0] + m[1] * m[1]).sqrt();
    assert!((f[5] - expected).abs() < 1e-6, "{} vs {expected}", f[5]);
    assert_eq!(turn_features(&[], &r), vec![0.0; 6], "no turn: zeros");
}

#[test]
fn the_turn_channel_learns_what_only_the_last_turn_tells_and_starts_from_the_cosine() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut table = Table::default();
    let train_pairs = task(&mut table, 256, 21, "train");
    let dev = task(&mut table, 48, 22, "dev");
    let test = task(&mut table, 64, 23, "test");
    let mut results = Vec::new();
    for (name, turns) in [("without", false), ("with", true)] {
        let dir = synthetic::temp("turns", name);
        let logs = train(&TrainingData { train: &train_pairs, dev: &dev, vectors: Some(&table) }, &config(turns, 8), &dir, &|_, _, _| {}).unwrap();
        assert_eq!(logs.iter().all(|l| l.cosine_weights.is_some()), turns, "the log records the cosine weights with the channel only");
        if let Some(w) = logs.last().and_then(|l| l.cosine_weights) {
            assert!(w.iter().all(|x| (x - COSINE_RESIDUAL_INIT).abs() > 1e-3), "training moves the cosine weights: {w:?}");
        }
        let scorer = Scorer::load(&dir, burn::prelude::Device::flex()).unwrap();
        assert_eq!(scorer.featurizer().turns, turns);
        results.push((auc(&scorer, &test, &table), scorer, dir));
    }
    let (without, with) = (results[0].0, results[1].0);
    eprintln!("test AUC without the turn channel {without:.3}, with {with:.3}");
    assert!(without < 0.65, "the joined context carries no signal: AUC {without}");
    assert!(with > 0.9, "the channel reads the last turn: AUC {with}");

    // Untrained (one step at a learning rate of 1e-9): the residual alone ranks by the cosines.
    let dir = synthetic::temp("turns", "untrained");
    let logs = train(&TrainingData { train: &train_pairs[..2], dev: &dev, vectors: Some(&table) }, &TrainConfig { lr: 1e-9, ..config(true, 1) }, &dir, &|_, _, _| {}).unwrap();
    let w = logs[0].cosine_weights.unwrap();
    assert!(w.iter().all(|x| (x - COSINE_RESIDUAL_INIT).abs() < 1e-3), "weights start at {COSINE_RESIDUAL_INIT}: {w:?}");
    let scorer = Scorer::load(&dir, burn::prelude::Device::flex()).unwrap();
    let untrained = auc(&scorer, &test, &table);
    eprintln!("test AUC of a head trained one step at lr 1e-9: {untrained:.3}");
    assert!(untrained > 0.8, "the untrained head ranks by the zero-shot cosines: AUC {untrained}");

    // A last turn whose vector was never computed is named.
    let mut unknown = test[..2].to_vec();
    unknown[1].context[1] = "never encoded".into();
    table.0.insert(format!("{} never encoded", unknown[1].context[0]), random(&mut SplitMix64(9)));
    assert!(matches!(results[1].1.score(&unknown, Some(&table)), Err(Error::MissingVector(t)) if t == "never encoded"));
    for dir in results.into_iter().map(|r| r.2).chain([dir]) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn the_turn_channel_needs_a_pretrained_text_side() {
    let mut table = Table::default();
    let pairs = task(&mut table, 4, 1, "x");
    let dir = synthetic::temp("turns", "scratch");
    let err = train(&TrainingData { train: &pairs, dev: &pairs, vectors: None }, &TrainConfig { text_encoder: TextEncoderKind::Scratch, ..config(true, 1) }, &dir, &|_, _, _| {}).unwrap_err();
    assert!(matches!(&err, Error::Config(m) if m.contains("turn channel")), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_turn_channel_and_the_knowledge_channel_read_together() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut table = Table::default();
    let mut pairs = task(&mut table, 32, 31, "both");
    let mut rng = SplitMix64(32);
    for (i, p) in pairs.iter_mut().enumerate() {
        if i % 4 < 2 {
            let k = format!("knowledge of pair {}", i / 2);
            table.0.entry(k.clone()).or_insert_with(|| random(&mut rng));
            p.knowledge = Some(k);
        }
    }
    let dir = synthetic::temp("turns", "both");
    let config = TrainConfig { knowledge: true, knowledge_dropout: 0.5, ..config(true, 2) };
    let logs = train(&TrainingData { train: &pairs, dev: &pairs, vectors: Some(&table) }, &config, &dir, &|_, _, _| {}).unwrap();
    assert_eq!(logs.len(), 2);
    let scorer = Scorer::load(&dir, burn::prelude::Device::flex()).unwrap();
    assert!(scorer.featurizer().knowledge && scorer.featurizer().turns);
    let scores = scorer.score(&pairs, Some(&table)).unwrap();
    assert!(scores.iter().all(|s| s.is_finite() && (0.0..=1.0).contains(s)));
    let _ = std::fs::remove_dir_all(dir);
}
