//! The model bundle: the families that need the encoder are skipped with its reason when it is
//! missing; with all-MiniLM-L6-v2 the shipped checkpoints are chosen; a given checkpoint of
//! another encoder is skipped with both encoders named, before anything is encoded.
#![cfg(feature = "slm")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

mod common;

use dialeval_eval::models::{Built, ModelBundle, ModelSettings, ModelSource, Retrain};
use dialeval_slm_model::bert::{minilm_dir, mpnet_dir};

fn skipped<F>(built: Built<F>) -> String {
    match built {
        Built::Skipped(why) => why,
        Built::Ready(_) => panic!("expected a skip"),
    }
}

#[test]
fn without_an_encoder_every_family_that_encodes_is_skipped_with_the_reason() {
    let out = common::temp("bundle", "none");
    let bundle = ModelBundle::load(ModelSettings { encoder: Some("/nonexistent/encoder".into()), out: out.clone(), ..ModelSettings::default() }).unwrap();
    assert!(bundle.encoder().is_none());
    for why in [skipped(bundle.embedding()), skipped(bundle.context_cosine()), skipped(bundle.bert_ruber(&|_| {}, &|_, _, _| {}).unwrap())] {
        assert!(why.contains("no sentence encoder") && why.contains("/nonexistent/encoder"), "{why}");
    }
}

#[test]
fn the_shipped_checkpoints_of_the_encoder_are_chosen_and_another_encoders_are_refused() {
    let Some(minilm) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let models = dialeval_testkit::workspace_dir().join("models");
    let out = common::temp("bundle", "minilm");
    let settings = ModelSettings { encoder: Some(minilm), models: Some(models.clone()), out: out.clone(), cache_dir: out.join("cache"), ..ModelSettings::default() };
    let bundle = ModelBundle::load(settings.clone()).unwrap();
    assert!(matches!(bundle.embedding(), Built::Ready(_)) && matches!(bundle.context_cosine(), Built::Ready(_)));
    let sources = std::sync::Mutex::new(Vec::new());
    let notice = |s: &ModelSource| sources.lock().unwrap().push(s.clone());
    let ruber = bundle.bert_ruber(&notice, &|_, _, _| panic!("nothing is trained")).unwrap().required().unwrap();
    let slm = bundle.slm(&notice, &|_, _, _| panic!("nothing is trained")).unwrap().required().unwrap();
    assert_eq!(*sources.lock().unwrap(), vec![ModelSource::Bundled(models.join("bert-ruber")), ModelSource::Bundled(models.join("slm"))]);
    // The report names the models: the encoder by name (whatever its folder) and fingerprint,
    // each checkpoint by folder and sha256 (its SHA256SUMS' digest).
    use dialeval_eval::{MetricFamily, ModelKind};
    let minilm_use = dialeval_eval::ModelUse::encoder("all-MiniLM-L6-v2", "0713aba1837e61cf");
    assert_eq!(MetricFamily::models(&bundle.embedding().required().unwrap()), vec![minilm_use.clone()]);
    assert_eq!(MetricFamily::models(&bundle.context_cosine().required().unwrap()), vec![minilm_use.clone()]);
    for (models_used, dir) in [(MetricFamily::models(&ruber), models.join("bert-ruber")), (MetricFamily::models(&slm), models.join("slm"))] {
        assert_eq!(models_used[0], minilm_use);
        assert_eq!((models_used[1].kind, models_used[1].name.as_str()), (ModelKind::Checkpoint, dir.display().to_string().as_str()));
        assert_eq!(models_used[1].digest.len(), 64, "a sha256: {models_used:?}");
    }

    // Retrain::Never with no shipped checkpoints: both learned families are skipped, named, and
    // nothing is trained.
    let empty = out.join("no-models");
    std::fs::create_dir_all(&empty).unwrap();
    let never = ModelBundle::load(ModelSettings { models: Some(empty.clone()), retrain: Retrain::Never, ..settings.clone() }).unwrap();
    for (name, why) in [
        ("bert-ruber", skipped(never.bert_ruber(&|_| panic!("no source"), &|_, _, _| panic!("nothing is trained")).unwrap())),
        ("slm", skipped(never.slm(&|_| panic!("no source"), &|_, _, _| panic!("nothing is trained")).unwrap())),
    ] {
        assert!(why.contains(&format!("no shipped {name} checkpoint")) && why.contains(&empty.display().to_string()), "{why}");
    }

    let Some(mpnet) = dialeval_testkit::optional_dir(mpnet_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MPNET") else { return };
    // MPNet passes over the MiniLM checkpoints (only their settings are read) to its own.
    let chosen = ModelBundle::load(ModelSettings { encoder: Some(mpnet.clone()), ..settings.clone() }).unwrap();
    let sources = std::sync::Mutex::new(Vec::new());
    let notice = |s: &ModelSource| sources.lock().unwrap().push(s.clone());
    assert!(matches!(chosen.bert_ruber(&notice, &|_, _, _| panic!("nothing is trained")).unwrap(), Built::Ready(_)));
    assert!(matches!(chosen.slm(&notice, &|_, _, _| panic!("nothing is trained")).unwrap(), Built::Ready(_)));
    let nested = models.join("all-mpnet-base-v2");
    assert_eq!(*sources.lock().unwrap(), vec![ModelSource::Bundled(nested.join("bert-ruber")), ModelSource::Bundled(nested.join("slm"))]);

    let given = ModelSettings { encoder: Some(mpnet), ruber: Some(models.join("bert-ruber")), slm: Some(models.join("slm")), ..settings };
    let bundle = ModelBundle::load(given).unwrap();
    for why in [skipped(bundle.bert_ruber(&|_| {}, &|_, _, _| panic!("nothing is trained")).unwrap()), skipped(bundle.slm(&|_| {}, &|_, _, _| panic!("nothing is trained")).unwrap())] {
        assert!(why.contains("384") && why.contains("768"), "both encoders named: {why}");
    }
    assert!(!out.join("cache").exists() || std::fs::read_dir(out.join("cache")).unwrap().all(|f| std::fs::metadata(f.unwrap().path()).unwrap().len() == 0), "nothing was encoded");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_fine_tuned_checkpoint_scores_its_column_and_none_given_is_skipped_with_the_reason() {
    use dialeval_datasets::pairs::{DdppPairConfig, ddpp_pairs};
    use dialeval_eval::family::{FamilyOutput, MetricFamily};
    use dialeval_slm_model::finetune::{FineTuneConfig, FineTuneData, fine_tune};
    let Some(minilm) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let out = common::temp("bundle", "fine-tuned");
    let settings = ModelSettings { encoder: Some(minilm.clone()), models: None, out: out.clone(), cache_dir: out.join("cache"), ..ModelSettings::default() };
    let why = skipped(ModelBundle::load(settings.clone()).unwrap().fine_tuned().unwrap());
    assert!(why.contains("no fine-tuned checkpoint given"), "{why}");

    // A checkpoint fine-tuned for one round of 16 DailyDialog++ pairs (its top layer and head).
    let data = dialeval_testkit::workspace_dir().join("data");
    let contexts: Vec<_> = dialeval_datasets::ddpp::load(&data.join("dailydialog-plusplus/dev.json")).unwrap().into_iter().take(4).collect();
    let (pairs, _) = ddpp_pairs(&contexts, "dev.json", None, &DdppPairConfig { adversarial_negatives: false, max_context_turns: Some(2), ..DdppPairConfig::default() }).unwrap();
    let dir = out.join("ft");
    let config = FineTuneConfig { trainable_layers: 1, batch_size: 8, pairs_per_round: 16, rounds: 1, ..FineTuneConfig::default() };
    fine_tune(&FineTuneData { train: &pairs, dev: &pairs, encoder: &minilm }, &config, &dir, &|_, _, _| {}).unwrap();

    let bundle = ModelBundle::load(ModelSettings { fine_tuned: Some(dir.clone()), ..settings.clone() }).unwrap();
    let Built::Ready(family) = bundle.fine_tuned().unwrap() else { panic!("a given checkpoint of this encoder runs") };
    let items = vec![common::item("a", "do you like tea", "yes, green tea", "i do"), common::item("b", "where were you", "", "at home")];
    let FamilyOutput::Scored(scores) = family.compute(&items, &|_, _| {}).unwrap() else { panic!("scored") };
    let column = &scores.columns[0];
    assert_eq!(column.metric.as_str(), "Fine-tuned");
    assert!(column.values[0].is_some_and(|p| p > 0.0 && p < 1.0) && column.values[1].is_none(), "a blank response is an empty cell: {:?}", column.values);
    let settings_json = serde_json::to_string(&family.settings()).unwrap();
    assert!(settings_json.contains(&dir.display().to_string()), "the cache key names the checkpoint: {settings_json}");

    // Fine-tuned from MiniLM, refused over MPNet (both named), before anything is scored.
    if let Some(mpnet) = dialeval_testkit::optional_dir(mpnet_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MPNET") {
        let why = skipped(ModelBundle::load(ModelSettings { encoder: Some(mpnet), fine_tuned: Some(dir), ..settings }).unwrap().fine_tuned().unwrap());
        assert!(why.contains("give the encoder it was fine-tuned from"), "{why}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
