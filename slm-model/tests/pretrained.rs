//! The SLM over the real all-MiniLM-L6-v2 sentence vectors (the pretrained text encoder), on the
//! bundled DailyDialog++ dev contexts with their silver AMR: it learns, graphs can be withheld,
//! a checkpoint refuses another encoder's vectors, missing vectors and settings changes are
//! typed errors, and a shipped checkpoint is checked against its manifest.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::sync::Mutex;

use burn::prelude::*;
use dialeval_common::roc_auc;
use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::ddpp;
use dialeval_datasets::pairs::{DdppPairConfig, TrainingPair, ddpp_context, ddpp_pairs, split_by_group};
use dialeval_slm_model::Error;
use dialeval_slm_model::bert::{PretrainedEncoder, minilm_dir};
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::{Mode, TextEncoderKind};
use dialeval_slm_model::scorer::{Graphs, Scorer};
use dialeval_slm_model::sentence_vectors::SentenceVectors;
use dialeval_slm_model::texts::{VectorInputs, context_text};
use dialeval_slm_model::train::{TrainingData, train};
use dialeval_slm_model::vectors::{CachedSentenceVectors, EmbeddingCache};

/// burn's device seed is process-wide: the trainings here run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn pairs() -> (Vec<TrainingPair>, Vec<TrainingPair>) {
    let data = dialeval_testkit::workspace_dir().join("data");
    let ids: Vec<u64> = serde_json::from_str(&std::fs::read_to_string(data.join("silver-amr/dailydialog-plusplus-dev200.context-ids.json")).unwrap()).unwrap();
    let contexts: Vec<ddpp::DdppContext> = ddpp::load(&data.join("dailydialog-plusplus/dev.json")).unwrap().into_iter().filter(|c| ids.contains(&c.id)).collect();
    let config = DdppPairConfig { adversarial_negatives: false, max_context_turns: Some(2), ..DdppPairConfig::default() };
    let (mut pairs, _) = ddpp_pairs(&contexts, "dev.json", None, &config).unwrap();
    let index = AmrIndex::load(&[data.join("silver-amr/dailydialog-plusplus-dev200.silver.amr.txt")]).unwrap();
    let coverage = index.attach_pairs(&mut pairs);
    assert_eq!(coverage.with_amr, coverage.turns, "the bundled silver set covers these contexts");
    let (train_p, dev_p, _) = split_by_group(pairs, [0.75, 0.25, 0.0], 1, ddpp_context).unwrap();
    (train_p, dev_p)
}

fn config(epochs: usize) -> TrainConfig {
    TrainConfig {
        mode: Mode::Gated,
        epochs,
        batch_size: 16,
        lr: 3e-3,
        patience: 5,
        seed: 4,
        d_model: 32,
        layers: 1,
        max_len: 64,
        max_nodes: 24,
        max_path: 3,
        text_encoder: TextEncoderKind::Pretrained,
        graph_dropout: 0.3,
        ..TrainConfig::default()
    }
}

fn temp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dialeval-pretrained-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A token-state cache in `work` holding every text the pretrained head reads of `parts`
/// (joined contexts and responses, `VectorInputs::texts_of`).
fn filled_cache(encoder: &PretrainedEncoder, work: &std::path::Path, parts: &[&[TrainingPair]]) -> EmbeddingCache {
    std::fs::create_dir_all(work).unwrap();
    let mut cache = EmbeddingCache::open(&work.join("states.bin"), encoder.hidden_size()).unwrap().with_encoder_id(encoder.fingerprint());
    let texts = VectorInputs::default().texts_of(parts);
    let texts: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
    cache.fill(encoder, &texts, &|_, _| {}).unwrap();
    cache
}

/// Vectors claiming to come from another encoder.
struct Renamed<'a>(CachedSentenceVectors<'a>);

impl SentenceVectors for Renamed<'_> {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn encoder_id(&self) -> &str {
        "another-encoder"
    }
    fn vector(&self, text: &str) -> Option<Vec<f32>> {
        self.0.vector(text)
    }
}

#[test]
fn pretrained_head_learns_scores_without_graphs_and_refuses_other_encoders() {
    let Some(model_dir) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let encoder = PretrainedEncoder::load(&model_dir, &Device::flex()).unwrap();
    let (train_p, dev_p) = pairs();
    let work = temp("run");
    let cache = filled_cache(&encoder, &work, &[&train_p, &dev_p]);
    let vectors = CachedSentenceVectors::new(&cache, encoder.fingerprint());
    let v = vectors.vector(&context_text(&train_p[0])).unwrap();
    assert_eq!(v.len(), 384);
    assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4, "unit length");

    let run = work.join("slm");
    assert!(matches!(train(&TrainingData { train: &train_p, dev: &dev_p, vectors: None }, &config(3), &run, &|_, _, _| {}), Err(Error::Config(_))), "the pretrained head needs vectors");
    let logs = train(&TrainingData { train: &train_p, dev: &dev_p, vectors: Some(&vectors) }, &config(3), &run, &|_, _, _| {}).unwrap();
    assert_eq!(logs.len(), 3);
    let best = logs.iter().map(|l| l.dev_auc).fold(0.0, f64::max);
    assert!(best > 0.62, "MiniLM vectors separate positives from random negatives: dev AUC {best}");
    // Settings other than the epoch count cannot change under a resumed run.
    let other = TrainConfig { graph_dropout: 0.5, ..config(4) };
    assert!(matches!(train(&TrainingData { train: &train_p, dev: &dev_p, vectors: Some(&vectors) }, &other, &run, &|_, _, _| {}), Err(Error::Config(m)) if m.contains("other settings")));

    let scorer = Scorer::load(&run, Device::flex()).unwrap();
    let with = scorer.score(&dev_p, Some(&vectors)).unwrap();
    let without = scorer.score_with(&dev_p, Some(&vectors), Graphs::Withhold).unwrap();
    assert_eq!(with.len(), dev_p.len());
    assert!(with.iter().chain(&without).all(|s| (0.0..=1.0).contains(s)));
    assert_ne!(with, without, "withholding the graphs changes the input");
    assert_eq!(without, scorer.score_with(&dev_p, Some(&vectors), Graphs::Withhold).unwrap(), "deterministic");
    let labels: Vec<u8> = dev_p.iter().map(TrainingPair::label).collect();
    let auc_without = roc_auc(&without, &labels).unwrap();
    assert!(auc_without > 0.6, "trained with graphs withheld, it still ranks without them: AUC {auc_without}");

    // Another encoder's vectors, no vectors, and a text never encoded are typed errors.
    assert!(matches!(scorer.score(&dev_p, Some(&Renamed(vectors))), Err(Error::EncoderMismatch { .. })));
    assert!(matches!(scorer.score(&dev_p, None), Err(Error::Config(_))));
    let mut unseen = dev_p[0].clone();
    unseen.response = "a sentence nobody encoded".into();
    assert!(matches!(scorer.score(&[unseen], Some(&vectors)), Err(Error::MissingVector(t)) if t == "a sentence nobody encoded"));

    // Shipped: a manifest over the files the scorer reads; an edited file is refused.
    let files = ["featurizer.json", "train.json", "best/mode.json", "best/model.bpk"];
    dialeval_slm_model::bundle::write_manifest(&run, &files).unwrap();
    assert!(Scorer::load(&run, Device::flex()).is_ok());
    let mut json = std::fs::read_to_string(run.join("train.json")).unwrap();
    json.push(' ');
    std::fs::write(run.join("train.json"), json).unwrap();
    assert!(matches!(Scorer::load(&run, Device::flex()), Err(Error::Checksum { .. })));

    // The residual mode (the shipped recipe's): its penalty is refused under another mode; a
    // trained model ranks without graphs, and its graph term moves the scores of the items with
    // graphs.
    let data = TrainingData { train: &train_p, dev: &dev_p, vectors: Some(&vectors) };
    let refused = train(&data, &TrainConfig { graph_term_penalty: 0.1, ..config(3) }, &work.join("refused"), &|_, _, _| {});
    assert!(matches!(&refused, Err(Error::Config(m)) if m.contains("graph_term_penalty")), "{refused:?}");
    let residual = work.join("residual");
    train(&data, &TrainConfig { mode: Mode::Residual, graph_term_penalty: 0.1, ..config(3) }, &residual, &|_, _, _| {}).unwrap();
    let scorer = Scorer::load(&residual, Device::flex()).unwrap();
    assert_eq!(scorer.mode(), Mode::Residual);
    assert!(scorer.featurizer().complete_graphs, "new runs read complete graphs only");
    let with = scorer.score(&dev_p, Some(&vectors)).unwrap();
    let without = scorer.score_with(&dev_p, Some(&vectors), Graphs::Withhold).unwrap();
    assert_ne!(with, without, "the graph term moves the items with graphs");
    let auc_text = roc_auc(&without, &labels).unwrap();
    assert!(auc_text > 0.6, "the text side alone ranks: AUC {auc_text}");
    let _ = std::fs::remove_dir_all(&work);
}

/// Negatives retrieved in MiniLM's space (`dialeval_datasets::negatives`, through
/// [`PairSentenceVectors`]) are nearer their context than DailyDialog++'s random ones, and each
/// brings the graph of its response.
#[test]
fn embedding_negatives_are_nearer_their_context_than_random_ones() {
    use dialeval_datasets::negatives::{RetrievedNegatives, retrieve_negatives};
    use dialeval_datasets::pairs::PairKind;
    use dialeval_slm_model::sentence_vectors::PairSentenceVectors;
    let Some(model_dir) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let encoder = PretrainedEncoder::load(&model_dir, &Device::flex()).unwrap();
    let (train_p, dev_p) = pairs();
    let all: Vec<TrainingPair> = train_p.into_iter().chain(dev_p).collect();
    let work = temp("retrieval");
    let cache = filled_cache(&encoder, &work, &[&all]);
    let vectors = CachedSentenceVectors::new(&cache, encoder.fingerprint());
    let config = RetrievedNegatives { embedding_share: 1.0, seed: 2, ..RetrievedNegatives::default() };
    let retrieved = retrieve_negatives(&all, &config, Some(&PairSentenceVectors(vectors))).unwrap();
    let positives = all.iter().filter(|p| p.kind == PairKind::Positive).count();
    assert_eq!(retrieved.len(), positives, "one per positive");
    let cosine = |p: &TrainingPair| {
        let (c, r) = (vectors.vector(&context_text(p)).unwrap(), vectors.vector(&p.response).unwrap());
        c.iter().zip(&r).map(|(a, b)| f64::from(a * b)).sum::<f64>()
    };
    let mean = |pairs: &mut dyn Iterator<Item = &TrainingPair>| {
        let v: Vec<f64> = pairs.map(cosine).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let embedding = mean(&mut retrieved.iter());
    let random = mean(&mut all.iter().filter(|p| p.kind == PairKind::RandomNegative));
    let positive = mean(&mut all.iter().filter(|p| p.kind == PairKind::Positive));
    eprintln!("mean cosine with the context: positives {positive:.3}, embedding negatives {embedding:.3}, random negatives {random:.3}");
    assert!(embedding > random + 0.1, "embedding {embedding} vs random {random}");
    // The graph follows the response: every retrieved response is some positive's, with its graph.
    let graph_of: std::collections::HashMap<&str, &Option<String>> = all.iter().filter(|p| p.kind == PairKind::Positive).map(|p| (p.response.as_str(), &p.response_amr)).collect();
    assert!(retrieved.iter().all(|n| graph_of.get(n.response.as_str()) == Some(&&n.response_amr)));
    let _ = std::fs::remove_dir_all(&work);
}
