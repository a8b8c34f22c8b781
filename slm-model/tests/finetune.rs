//! Fine-tuning the real all-MiniLM-L6-v2 over `[CLS] context [SEP] response [SEP]` on bundled
//! DailyDialog++ dev contexts: only the top layers (and the head) move, the pair template is the
//! tokenizer's, a stopped run resumes to the numbers of an uninterrupted one, a run of other
//! settings is refused, and the saved model scores as it was measured.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use dialeval_datasets::ddpp;
use dialeval_datasets::pairs::{DdppPairConfig, TrainingPair, ddpp_context, ddpp_pairs, split_by_group};
use dialeval_slm_model::Error;
use dialeval_slm_model::bert::minilm_dir;
use dialeval_slm_model::finetune::{FineTuneConfig, FineTuneData, FineTunedScorer, PairTokenizer, fine_tune};

fn pairs() -> (Vec<TrainingPair>, Vec<TrainingPair>) {
    let data = dialeval_testkit::workspace_dir().join("data");
    let contexts: Vec<ddpp::DdppContext> = ddpp::load(&data.join("dailydialog-plusplus/dev.json")).unwrap().into_iter().take(20).collect();
    let config = DdppPairConfig { adversarial_negatives: false, max_context_turns: Some(2), ..DdppPairConfig::default() };
    let (pairs, _) = ddpp_pairs(&contexts, "dev.json", None, &config).unwrap();
    let (train, dev, _) = split_by_group(pairs, [0.75, 0.25, 0.0], 1, ddpp_context).unwrap();
    (train, dev)
}

/// Batches grouped by length (the default).
fn config(rounds: usize) -> FineTuneConfig {
    FineTuneConfig { trainable_layers: 1, batch_size: 8, pairs_per_round: 32, rounds, patience: 10, lr: 1e-4, seed: 2, context_tokens: 40, response_tokens: 24, ..FineTuneConfig::default() }
}

fn temp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dialeval-finetune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn the_pair_is_one_input_in_the_tokenizers_template_cut_at_both_ends() {
    let Some(minilm) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let tokenizer = PairTokenizer::load(&minilm, &FineTuneConfig { context_tokens: 4, response_tokens: 3, ..FineTuneConfig::default() }).unwrap();
    let pair = TrainingPair {
        id: "t".into(),
        context: vec!["an old turn nobody reads".into(), "hello there how are you".into(), "i am fine thank you".into()],
        response: "good to hear that my friend".into(),
        kind: dialeval_datasets::pairs::PairKind::Positive,
        context_amr: Vec::new(),
        response_amr: None,
        knowledge: None,
    };
    let (ids, types) = tokenizer.encode(&pair).unwrap();
    // [CLS] the last 4 pieces of the last two turns [SEP] the first 3 of the response [SEP]
    assert_eq!(ids.len(), 1 + 4 + 1 + 3 + 1);
    assert_eq!((ids[0], ids[5], ids[9]), (101, 102, 102), "[CLS] and [SEP] ids of the BERT vocabulary");
    assert_eq!(types, [0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
}

#[test]
fn top_layers_train_resume_exactly_and_the_saved_model_scores_as_measured() {
    let Some(minilm) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let (train, dev) = pairs();
    let data = FineTuneData { train: &train, dev: &dev, encoder: &minilm };

    let whole = temp("whole");
    let logs = fine_tune(&data, &config(2), &whole, &|_, _, _| {}).unwrap();
    assert_eq!(logs.len(), 2);
    assert!(logs.iter().all(|l| l.pairs_per_second > 0.0 && l.dev_auc.is_finite()), "{logs:?}");
    assert!(logs[1].passes > logs[0].passes);

    // Stopped after one round, resumed: the same rounds as the uninterrupted run.
    let split = temp("split");
    let first = fine_tune(&data, &config(1), &split, &|_, _, _| {}).unwrap();
    let rest = fine_tune(&data, &config(2), &split, &|_, _, _| {}).unwrap();
    assert_eq!(rest.len(), 1, "only the missing round runs");
    for (a, b) in logs.iter().zip(first.iter().chain(&rest)) {
        assert_eq!(a.round, b.round);
        assert!((a.train_loss - b.train_loss).abs() < 1e-5 && (a.dev_auc - b.dev_auc).abs() < 1e-6, "{a:?} against {b:?}");
    }

    // Inputs longer than the encoder's positions are refused before anything runs.
    let err = fine_tune(&data, &FineTuneConfig { context_tokens: 500, ..config(1) }, &temp("long"), &|_, _, _| panic!("nothing runs")).unwrap_err();
    assert!(matches!(&err, Error::Config(m) if m.contains("512 positions")), "{err}");

    // Other settings in the same folder are refused.
    let err = fine_tune(&data, &FineTuneConfig { trainable_layers: 2, ..config(3) }, &split, &|_, _, _| {}).unwrap_err();
    assert!(matches!(&err, Error::Config(m) if m.contains("other settings")), "{err}");

    // A partial fine-tune keeps only what it trained: the top layer and the head (~7 MB in f32,
    // against 90 MB for the whole MiniLM).
    let top = std::fs::metadata(whole.join("best/top.bpk")).unwrap().len();
    assert!(top > 5_000_000 && top < 10_000_000 && !whole.join("best/model.bpk").exists(), "{top} bytes");

    // The best model scores the dev pairs as the run measured them.
    let encoder = std::sync::Arc::new(dialeval_slm_model::bert::PretrainedEncoder::load(&minilm, &burn::prelude::Device::flex()).unwrap());
    let scorer = FineTunedScorer::load(&whole, &encoder, burn::prelude::Device::flex()).unwrap();
    let scores = scorer.score(&dev).unwrap();
    let labels: Vec<u8> = dev.iter().map(TrainingPair::label).collect();
    let best = logs.iter().map(|l| l.dev_auc).fold(f64::MIN, f64::max);
    let auc = dialeval_common::roc_auc(&scores, &labels).unwrap();
    assert!((auc - best).abs() < 1e-9, "{auc} against {best}");
    let _ = std::fs::remove_dir_all(whole);
    let _ = std::fs::remove_dir_all(split);
}

#[test]
fn a_few_pairs_are_learnt() {
    let Some(minilm) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let (train, _) = pairs();
    let few = &train[..16];
    // Batches as the pairs come (two of eight, both labels in each): the learning alone.
    let config = FineTuneConfig { pairs_per_round: 16, rounds: 6, lr: 3e-4, length_buckets: false, cosine_residual: false, ..config(6) };
    let logs = fine_tune(&FineTuneData { train: few, dev: few, encoder: &minilm }, &config, &temp("few"), &|_, _, _| {}).unwrap();
    let (first, last) = (&logs[0], &logs[logs.len() - 1]);
    assert!((first.train_loss - std::f64::consts::LN_2).abs() < 0.1, "the head starts at zero: every pair at 0.5, {first:?}");
    assert!(last.train_loss < 0.8 * first.train_loss && last.dev_auc > 0.9, "{logs:?}");
    let _ = std::fs::remove_dir_all(temp("few"));
}

#[test]
fn the_cosine_residual_starts_from_what_the_encoder_knows() {
    let Some(minilm) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let (train, dev) = pairs();
    let data = FineTuneData { train: &train[..8], dev: &dev, encoder: &minilm };
    // A round at a rate too small to move anything: the model as it starts.
    let start = |cosine_residual: bool| {
        let dir = temp(&format!("start-{cosine_residual}"));
        let logs = fine_tune(&data, &FineTuneConfig { pairs_per_round: 8, rounds: 1, lr: 1e-12, cosine_residual, ..config(1) }, &dir, &|_, _, _| {}).unwrap();
        let _ = std::fs::remove_dir_all(dir);
        logs[0].dev_auc
    };
    let (with, without) = (start(true), start(false));
    // DailyDialog++'s random negatives against the zero-shot cosines of MiniLM.
    assert!(with > 0.7 && with > without + 0.15, "with the residual {with}, without {without}");
}

#[test]
fn only_the_top_layers_move() {
    use burn::module::{Module, ModuleVisitor, Param};
    use burn::prelude::*;
    let Some(minilm) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    struct Grads(Vec<bool>);
    impl ModuleVisitor for Grads {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0.push(param.is_require_grad());
        }
    }
    let config = dialeval_slm_model::bert::BertConfig::load(&minilm.join("config.json")).unwrap();
    let bert = dialeval_slm_model::bert::Bert::load(&config, &minilm.join("model.safetensors"), &Device::flex().autodiff()).unwrap();
    let count = |b: &dialeval_slm_model::bert::Bert| {
        let mut g = Grads(Vec::new());
        b.visit(&mut g);
        (g.0.iter().filter(|&&x| x).count(), g.0.len())
    };
    let (all, total) = count(&bert);
    assert_eq!(all, total, "a loaded encoder trains whole");
    // A BERT layer has 16 float tensors (four projections, two feed-forward matrices, each with
    // a bias, and two LayerNorms with two each).
    assert_eq!(count(&bert.clone().with_trainable_top(1)), (16, total));
    assert_eq!(count(&bert.clone().with_trainable_top(2)), (32, total));
    assert_eq!(count(&bert.with_trainable_top(6)), (total, total), "every layer: the embeddings train too");
}
