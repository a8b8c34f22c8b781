//! Training end to end on Diplomacy pairs with gold AMR (from `../shared`): a run killed after
//! one epoch and resumed reaches exactly the state of an uninterrupted run (graphs withheld at
//! random included), and the scorer loads
//! the best checkpoint.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use burn::prelude::*;
use dialeval_datasets::amr::read_blocks_lenient;
use dialeval_datasets::pairs::{DiplomacyPairConfig, TrainingPair, diplomacy_pairs};
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::Mode;
use dialeval_slm_model::scorer::Scorer;
use dialeval_slm_model::train::{EpochLog, TrainingData, train};

/// burn's seeded RNG is global to the process: the tests of this file train one at a time, or
/// their draws interleave and two runs with the same seed differ.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn pairs() -> Option<(Vec<TrainingPair>, Vec<TrainingPair>)> {
    let shared = dialeval_testkit::shared_dir()?;
    // The file's one sentence without a graph is skipped.
    let (blocks, _) = read_blocks_lenient(&shared.join("data/amr-diplomacy/dip-all-amr-smosher.txt")).unwrap();
    let (pairs, _) = diplomacy_pairs(&blocks, &DiplomacyPairConfig { history: 1, negatives: 1, drop_empty: true, seed: 3 }).unwrap();
    let train_pairs = pairs[..96].to_vec();
    let dev_pairs = pairs[96..144].to_vec();
    Some((train_pairs, dev_pairs))
}

fn config(epochs: usize) -> TrainConfig {
    TrainConfig {
        mode: Mode::Gated,
        epochs,
        batch_size: 16,
        lr: 2e-3,
        patience: 5,
        seed: 9,
        d_model: 16,
        layers: 1,
        max_len: 48,
        max_nodes: 24,
        max_path: 3,
        graph_dropout: 0.3,
        ..TrainConfig::default()
    }
}

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dialeval-slm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn resumed_training_equals_an_uninterrupted_run() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some((train_pairs, dev_pairs)) = pairs() else { return };
    let whole = dir("whole");
    let full: Vec<EpochLog> = train(&TrainingData { train: &train_pairs, dev: &dev_pairs, vectors: None }, &config(2), &whole, &|_, _, _| {}).unwrap();
    assert_eq!(full.len(), 2);

    assert!(!whole.join("epochs").exists(), "epochs are kept only when asked");

    // The split run keeps every epoch; the setting may change between a run and its resumption.
    let keeping = |epochs| TrainConfig { keep_epochs: true, ..config(epochs) };
    let split = dir("split");
    let first = train(&TrainingData { train: &train_pairs, dev: &dev_pairs, vectors: None }, &keeping(1), &split, &|_, _, _| {}).unwrap();
    // A kill while epoch 2 was being saved: a torn model record, no state for it yet, and a
    // half-written kept epoch.
    std::fs::write(split.join("checkpoint/model-2.bpk"), b"torn").unwrap();
    std::fs::create_dir_all(split.join("epochs/.2.partial/best")).unwrap();
    std::fs::write(split.join("epochs/.2.partial/best/model.bpk"), b"torn").unwrap();
    let rest = train(&TrainingData { train: &train_pairs, dev: &dev_pairs, vectors: None }, &keeping(2), &split, &|_, _, _| {}).unwrap();
    assert_eq!(rest.len(), 1, "only the missing epoch runs");
    for (a, b) in full.iter().zip(first.iter().chain(&rest)) {
        assert_eq!(a.epoch, b.epoch);
        assert!((a.train_loss - b.train_loss).abs() < 1e-6, "epoch {}: {} vs {}\n{full:?}\n{first:?}\n{rest:?}", a.epoch, a.train_loss, b.train_loss);
        assert!((a.dev_auc - b.dev_auc).abs() < 1e-9);
    }
    let log = std::fs::read_to_string(split.join("log.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 2);
    let mut kept: Vec<String> = std::fs::read_dir(split.join("checkpoint")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    kept.sort();
    assert_eq!(kept, ["model-2.bpk", "optim-2.bpk", "state.json"], "only the last epoch is kept");

    let scorer = Scorer::load(&whole, Device::flex()).unwrap();
    let scores = scorer.score(&dev_pairs[..8], None).unwrap();
    assert_eq!(scores.len(), 8);
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)));

    // Each kept epoch is a run directory of its own: it loads and scores, its epoch.json is the
    // epoch's log line, and the epoch with the best dev AUC scores exactly as `best/` does.
    let mut kept_epochs: Vec<String> = std::fs::read_dir(split.join("epochs")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    kept_epochs.sort();
    assert_eq!(kept_epochs, ["1", "2"], "one directory per epoch, nothing partial left");
    // The first of equal AUCs stays the best, as in training.
    let best_epoch = first.iter().chain(&rest).reduce(|a, b| if b.dev_auc > a.dev_auc { b } else { a }).unwrap().epoch;
    let best_scores = Scorer::load(&split, Device::flex()).unwrap().score(&dev_pairs[..8], None).unwrap();
    let mut differ = false;
    for log in first.iter().chain(&rest) {
        let epoch_dir = split.join(format!("epochs/{}", log.epoch));
        let saved: EpochLog = serde_json::from_str(&std::fs::read_to_string(epoch_dir.join("epoch.json")).unwrap()).unwrap();
        assert_eq!(saved.epoch, log.epoch);
        assert!((saved.dev_auc - log.dev_auc).abs() < 1e-12);
        let epoch_scores = Scorer::load(&epoch_dir, Device::flex()).unwrap().score(&dev_pairs[..8], None).unwrap();
        if log.epoch == best_epoch {
            assert_eq!(epoch_scores, best_scores, "epoch {} is the best", log.epoch);
        } else {
            differ |= epoch_scores != best_scores;
        }
    }
    assert!(differ, "the other epoch's model is its own, not a copy of the best");

    // Settings that describe another model than the saved parameters (an edited train.json, or
    // a checkpoint from another version): a typed error naming the file, not burn's panic.
    let train_json = whole.join("train.json");
    let settings = std::fs::read_to_string(&train_json).unwrap();
    let wider = settings.replacen("\"d_model\": 16", "\"d_model\": 32", 1);
    assert_ne!(wider, settings, "train.json records d_model");
    std::fs::write(&train_json, wider).unwrap();
    match Scorer::load(&whole, Device::flex()) {
        Err(dialeval_slm_model::Error::RecordMismatch { path, detail }) => {
            assert!(path.ends_with("best/model"), "{path:?}");
            assert!(!detail.is_empty());
        }
        Err(other) => panic!("expected RecordMismatch, got {other}"),
        Ok(_) => panic!("a model of width 32 loaded parameters of width 16"),
    }
    let _ = std::fs::remove_dir_all(whole);
    let _ = std::fs::remove_dir_all(split);
}

/// A dev set of one class cannot choose a checkpoint: training stops with a typed error before
/// the first epoch, never on an AUC of 0.5.
#[test]
fn one_class_dev_set_is_a_typed_error() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    use dialeval_common::AucError;
    use dialeval_datasets::pairs::PairKind;
    use dialeval_slm_model::Error;
    let pair = |i: usize, kind: PairKind| TrainingPair {
        id: format!("p{i}"),
        context: vec![format!("hello number {i} how are you")],
        response: format!("fine thanks {i}"),
        kind,
        context_amr: vec![None],
        response_amr: None,
        knowledge: None,
    };
    let train_pairs: Vec<TrainingPair> = (0..8).map(|i| pair(i, if i % 2 == 0 { PairKind::Positive } else { PairKind::RandomNegative })).collect();
    let dev_pairs: Vec<TrainingPair> = (8..12).map(|i| pair(i, PairKind::Positive)).collect();
    let out = dir("one-class");
    let err = train(&TrainingData { train: &train_pairs, dev: &dev_pairs, vectors: None }, &config(1), &out, &|_, _, _| panic!("no epoch may start")).unwrap_err();
    assert!(matches!(err, Error::DevSet(AucError::OneClass { positives: 4, negatives: 0 })), "{err}");
    assert!(err.to_string().contains("4 positives and 0 negatives"), "{err}");
}
