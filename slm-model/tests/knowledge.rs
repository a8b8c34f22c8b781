//! The pretrained head's knowledge channel on a synthetic task that only the knowledge solves:
//! a positive response lies near its pair's knowledge vector, a negative near another topic's,
//! and context and responses alone carry no signal. The channel learns it (and still does with
//! knowledge dropout), a pair without knowledge reads the "no knowledge" input whatever the
//! rest of its batch has, and misuse is a typed error. The cross-encoded text side (joint layers
//! over the token states of context, response and knowledge) learns the same task.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use dialeval_common::SplitMix64;
use dialeval_common::roc_auc;
use dialeval_datasets::pairs::{PairKind, TrainingPair};
use dialeval_slm_model::Error;
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::TextEncoderKind;
use dialeval_slm_model::scorer::Scorer;
use dialeval_slm_model::sentence_vectors::SentenceVectors;
use dialeval_slm_model::texts::KnowledgeUnit;
use dialeval_slm_model::train::{TrainingData, train};

mod synthetic;
use synthetic::{DIM, SERIAL, Table, auc, near, random, unit};

/// The table's pooled vectors with its token states changed by a map, or withheld (`None`: a
/// source of pooled vectors only).
struct Altered<'a>(&'a Table, Option<fn(half::f16) -> half::f16>);

impl SentenceVectors for Altered<'_> {
    fn dim(&self) -> usize {
        DIM
    }
    fn encoder_id(&self) -> &str {
        self.0.encoder_id()
    }
    fn vector(&self, text: &str) -> Option<Vec<f32>> {
        self.0.vector(text)
    }
    fn token_states(&self, text: &str) -> Option<Vec<half::f16>> {
        let map = self.1?;
        Some(self.0.token_states(text)?.into_iter().map(map).collect())
    }
}

/// `n` contexts, each with a knowledge text, a grounded positive and a negative grounded in
/// another topic; `with_knowledge` false leaves the pairs without their knowledge.
fn task(table: &mut Table, n: usize, seed: u64, tag: &str) -> Vec<TrainingPair> {
    let mut rng = SplitMix64(seed);
    let mut pairs = Vec::new();
    for i in 0..n {
        let topic = random(&mut rng);
        let other = random(&mut rng);
        let (context, knowledge, positive, negative) = (format!("{tag}-context-{i}"), format!("{tag}-knowledge-{i}"), format!("{tag}-positive-{i}"), format!("{tag}-negative-{i}"));
        table.0.insert(context.clone(), random(&mut rng));
        table.0.insert(knowledge.clone(), near(&topic, &mut rng));
        table.0.insert(positive.clone(), near(&topic, &mut rng));
        table.0.insert(negative.clone(), near(&other, &mut rng));
        for (response, kind) in [(positive, PairKind::Positive), (negative, PairKind::RandomNegative)] {
            pairs.push(TrainingPair { id: format!("{tag}-{i}"), context: vec![context.clone()], response, kind, context_amr: vec![], response_amr: None, knowledge: Some(knowledge.clone()) });
        }
    }
    pairs
}

fn config(knowledge: bool, knowledge_dropout: f64) -> TrainConfig {
    TrainConfig { knowledge, knowledge_dropout, ..synthetic::small_config() }
}

#[test]
fn the_knowledge_channel_learns_what_only_the_knowledge_tells() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut table = Table::default();
    let train_pairs = task(&mut table, 256, 11, "train");
    let dev = task(&mut table, 48, 12, "dev");
    let test = task(&mut table, 64, 13, "test");
    let mut results = Vec::new();
    for (name, knowledge, dropout) in [("without", false, 0.0), ("with", true, 0.0), ("dropout", true, 0.5)] {
        let dir = synthetic::temp("knowledge", name);
        train(&TrainingData { train: &train_pairs, dev: &dev, vectors: Some(&table) }, &config(knowledge, dropout), &dir, &|_, _, _| {}).unwrap();
        let scorer = Scorer::load(&dir, burn::prelude::Device::flex()).unwrap();
        assert_eq!(scorer.featurizer().knowledge, knowledge);
        results.push((name, auc(&scorer, &test, &table), scorer, dir));
    }
    let (without, with, dropout) = (results[0].1, results[1].1, results[2].1);
    eprintln!("test AUC without the channel {without:.3}, with {with:.3}, with dropout 0.5 {dropout:.3}");
    assert!(without < 0.65, "without the channel the task is not solvable: AUC {without}");
    assert!(with > 0.85, "the channel learns the grounding: AUC {with} (without: {without})");
    assert!(dropout > 0.8, "with knowledge dropout 0.5 it still learns: AUC {dropout}");

    // A pair without knowledge reads the "no knowledge" input: its score does not depend on
    // whether the other pairs of its batch have knowledge.
    let scorer = &results[1].2;
    let bare: Vec<TrainingPair> = test.iter().map(|p| TrainingPair { knowledge: None, ..p.clone() }).collect();
    let mut mixed = test.clone();
    mixed[0].knowledge = None;
    let alone = scorer.score(&bare, Some(&table)).unwrap();
    let beside = scorer.score(&mixed, Some(&table)).unwrap();
    assert!((alone[0] - beside[0]).abs() < 1e-6, "{} vs {}", alone[0], beside[0]);
    assert!(alone.iter().all(|s| s.is_finite() && (0.0..=1.0).contains(s)));
    let bare_auc = roc_auc(&alone, &bare.iter().map(TrainingPair::label).collect::<Vec<_>>()).unwrap();
    eprintln!("with the channel, every pair without knowledge: AUC {bare_auc:.3}");
    assert!(bare_auc < with - 0.2, "without knowledge the model cannot tell (AUC {bare_auc} vs {with})");

    // Knowledge whose vector was never computed is named.
    let mut unknown = test[..2].to_vec();
    unknown[1].knowledge = Some("never encoded".into());
    assert!(matches!(scorer.score(&unknown, Some(&table)), Err(Error::MissingVector(t)) if t == "never encoded"));
    // A model without the channel ignores knowledge (and needs no vector for it).
    assert!(results[0].2.score(&unknown, Some(&table)).is_ok());
    for (_, _, _, dir) in results {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// As [`task`], with knowledge of `facts` sentences (one line each) of which one lies near the
/// positive's topic and the others anywhere; the whole text's vector is the normalised mean of
/// its sentences' (what pooling over a persona does).
fn persona_task(table: &mut Table, n: usize, facts: usize, seed: u64, tag: &str) -> Vec<TrainingPair> {
    let mut rng = SplitMix64(seed);
    let mut pairs = Vec::new();
    for i in 0..n {
        let topic = random(&mut rng);
        let other = random(&mut rng);
        let grounded = rng.below(facts);
        let lines: Vec<String> = (0..facts).map(|f| format!("{tag} fact {f} of persona {i}.")).collect();
        let vectors: Vec<Vec<f32>> = (0..facts).map(|f| if f == grounded { near(&topic, &mut rng) } else { random(&mut rng) }).collect();
        let mean = unit((0..DIM).map(|d| vectors.iter().map(|v| v[d]).sum::<f32>()).collect());
        let knowledge = lines.join("\n");
        for (line, v) in lines.into_iter().zip(vectors) {
            table.0.insert(line, v);
        }
        table.0.insert(knowledge.clone(), mean);
        let (context, positive, negative) = (format!("{tag}-context-{i}"), format!("{tag}-positive-{i}"), format!("{tag}-negative-{i}"));
        table.0.insert(context.clone(), random(&mut rng));
        table.0.insert(positive.clone(), near(&topic, &mut rng));
        table.0.insert(negative.clone(), near(&other, &mut rng));
        for (response, kind) in [(positive, PairKind::Positive), (negative, PairKind::RandomNegative)] {
            pairs.push(TrainingPair { id: format!("{tag}-{i}"), context: vec![context.clone()], response, kind, context_amr: vec![], response_amr: None, knowledge: Some(knowledge.clone()) });
        }
    }
    pairs
}

#[test]
fn the_sentence_unit_finds_the_one_fact_a_response_is_grounded_in() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut table = Table::default();
    let train_pairs = persona_task(&mut table, 256, 6, 31, "train");
    let dev = persona_task(&mut table, 48, 6, 32, "dev");
    let test = persona_task(&mut table, 64, 6, 33, "test");
    let mut aucs = Vec::new();
    for (name, unit) in [("whole", KnowledgeUnit::Whole), ("sentence", KnowledgeUnit::Sentence)] {
        let dir = synthetic::temp("knowledge", name);
        train(&TrainingData { train: &train_pairs, dev: &dev, vectors: Some(&table) }, &TrainConfig { knowledge_unit: unit, ..config(true, 0.0) }, &dir, &|_, _, _| {}).unwrap();
        let scorer = Scorer::load(&dir, burn::prelude::Device::flex()).unwrap();
        assert_eq!(scorer.featurizer().knowledge_unit, unit, "the unit is saved with the model");
        aucs.push(auc(&scorer, &test, &table));
        if unit == KnowledgeUnit::Sentence {
            // Only the sentences are read: the whole text's vector is not needed.
            let mut without_whole = Table(table.0.clone());
            for p in &test {
                without_whole.0.remove(p.knowledge.as_deref().unwrap());
            }
            assert_eq!(scorer.score(&test, Some(&without_whole)).unwrap(), scorer.score(&test, Some(&table)).unwrap());
            // A sentence whose vector was never computed is named.
            let mut unknown = test[..1].to_vec();
            unknown[0].knowledge = Some("An unseen fact.\nAnother one.".into());
            assert!(matches!(scorer.score(&unknown, Some(&table)), Err(Error::MissingVector(t)) if t == "An unseen fact."));
        }
        let _ = std::fs::remove_dir_all(dir);
    }
    let (whole, sentence) = (aucs[0], aucs[1]);
    eprintln!("one grounded fact of six: test AUC whole {whole:.3}, sentence {sentence:.3}");
    assert!(sentence > 0.8, "the nearest sentence carries the grounding: AUC {sentence}");
    assert!(sentence > whole + 0.2, "the pooled persona dilutes it: sentence {sentence} vs whole {whole}");
}

#[test]
fn knowledge_settings_out_of_range_are_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut table = Table::default();
    let pairs = task(&mut table, 8, 1, "refused");
    let dir = synthetic::temp("knowledge", "refused");
    let refused = |config: TrainConfig| matches!(train(&TrainingData { train: &pairs, dev: &pairs, vectors: Some(&table) }, &config, &dir, &|_, _, _| {}), Err(Error::Config(_)));
    assert!(refused(config(true, 1.0)), "knowledge dropout 1 would never show the knowledge");
    assert!(refused(TrainConfig { text_encoder: TextEncoderKind::Scratch, ..config(true, 0.0) }), "the scratch text encoder has no knowledge channel");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_cross_encoder_learns_the_grounding_from_token_states_and_ignores_padding() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut table = Table::default();
    let train_pairs = task(&mut table, 256, 21, "train");
    let dev = task(&mut table, 48, 22, "dev");
    let test = task(&mut table, 64, 23, "test");
    let dir = synthetic::temp("knowledge", "cross");
    train(&TrainingData { train: &train_pairs, dev: &dev, vectors: Some(&table) }, &TrainConfig { text_encoder: TextEncoderKind::Cross, ..config(true, 0.0) }, &dir, &|_, _, _| {}).unwrap();
    let scorer = Scorer::load(&dir, burn::prelude::Device::flex()).unwrap();
    assert_eq!(scorer.featurizer().text_encoder(), TextEncoderKind::Cross);
    let with = auc(&scorer, &test, &table);
    eprintln!("cross-encoder test AUC {with:.3}");
    assert!(with > 0.8, "the cross-encoded text side learns the grounding: AUC {with}");
    // A pair scores the same alone as beside longer pairs (padding is masked).
    let all = scorer.score(&test, Some(&table)).unwrap();
    for i in [0, 5, 17] {
        let alone = scorer.score(&test[i..=i], Some(&table)).unwrap();
        assert!((alone[0] - all[i]).abs() < 1e-5, "pair {i}: {} alone, {} in a batch", alone[0], all[i]);
    }
    // The token states enter the score: the same pooled vectors with other token states score
    // otherwise.
    let negated = scorer.score(&test, Some(&Altered(&table, Some(|v| -v)))).unwrap();
    let moved = all.iter().zip(&negated).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(moved > 1e-4, "scores do not depend on the token states (largest change {moved})");
    // Vectors without token states (pooled only) are refused by name.
    assert!(matches!(scorer.score(&test[..2], Some(&Altered(&table, None))), Err(Error::MissingVector(_))));
    let _ = std::fs::remove_dir_all(dir);
}
