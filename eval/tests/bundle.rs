//! The model bundle: the families that need the encoder are skipped with its reason when it is
//! missing; with all-MiniLM-L6-v2 the shipped checkpoints are chosen; a given checkpoint of
//! another encoder is skipped with both encoders named, before anything is encoded.
#![cfg(feature = "slm")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

mod common;

use dialeval_eval::models::{Built, ModelBundle, ModelSettings, ModelSource, Retrain};
use dialeval_slm_model::bert::{default_model_dir, default_mpnet_dir};

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
    let Some(minilm) = dialeval_testkit::optional_dir(default_model_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let models = dialeval_testkit::workspace_dir().join("models");
    let out = common::temp("bundle", "minilm");
    let settings = ModelSettings { encoder: Some(minilm), models: Some(models.clone()), out: out.clone(), cache_dir: out.join("cache"), ..ModelSettings::default() };
    let bundle = ModelBundle::load(settings.clone()).unwrap();
    assert!(matches!(bundle.embedding(), Built::Ready(_)) && matches!(bundle.context_cosine(), Built::Ready(_)));
    let sources = std::sync::Mutex::new(Vec::new());
    let notice = |s: &ModelSource| sources.lock().unwrap().push(s.clone());
    assert!(matches!(bundle.bert_ruber(&notice, &|_, _, _| panic!("nothing is trained")).unwrap(), Built::Ready(_)));
    assert!(matches!(bundle.slm(&notice, &|_, _, _| panic!("nothing is trained")).unwrap(), Built::Ready(_)));
    assert_eq!(*sources.lock().unwrap(), vec![ModelSource::Bundled(models.join("bert-ruber")), ModelSource::Bundled(models.join("slm"))]);

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

    let Some(mpnet) = dialeval_testkit::optional_dir(default_mpnet_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MPNET") else { return };
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
