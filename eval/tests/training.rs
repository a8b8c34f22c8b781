//! The trainer jobs' settings are checked before anything is read: a combination that cannot
//! train is a typed error naming it, not a failure halfway through the data.
#![cfg(feature = "slm")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::path::PathBuf;

use dialeval_datasets::mix::MixConfig;
use dialeval_datasets::negatives::RetrievedNegatives;
use dialeval_eval::Error;
use dialeval_eval::models::ruber_training::{RuberTraining, RuberTriples};
use dialeval_eval::models::slm_training::{SlmData, SlmTraining};
use dialeval_eval::models::training::TrainingObserver;
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::TextEncoderKind;
use dialeval_slm_model::ruber::RuberConfig;

const SILENT: TrainingObserver<'static> = TrainingObserver { say: &|_| {}, encoding: &|_, _| {}, epochs: &|_, _, _| {} };

/// A folder that does not exist: a job that read anything would fail on it with an I/O error.
fn nowhere() -> PathBuf {
    PathBuf::from("/nonexistent/dialeval-training-test")
}

fn slm(data: SlmData, config: TrainConfig, retrieved: RetrievedNegatives) -> SlmTraining {
    SlmTraining { shared: nowhere(), out: nowhere().join("out"), data, config, encoder: None, retrieved, drop_negatives: Vec::new(), limit: 0 }
}

fn config_error(result: dialeval_eval::Result<impl std::fmt::Debug>) -> String {
    match result {
        Err(Error::Config(message)) => message,
        other => panic!("expected a settings error before anything is read, got {other:?}"),
    }
}

#[test]
fn slm_settings_that_cannot_train_are_refused_before_reading() {
    let no_topical = MixConfig { topical: None, ..MixConfig::default() };
    let knowledge = TrainConfig { knowledge: true, ..TrainConfig::default() };
    let message = config_error(slm(SlmData::Mix { config: no_topical, graph_test: false }, knowledge.clone(), RetrievedNegatives::default()).run(&SILENT).map(|t| t.test));
    assert!(message.contains("knowledge channel needs the mix with Topical-Chat"), "{message}");
    let message = config_error(slm(SlmData::Ddpp, knowledge, RetrievedNegatives::default()).run(&SILENT).map(|t| t.test));
    assert!(message.contains("knowledge channel"), "{message}");
    let message = config_error(slm(SlmData::Mix { config: no_topical, graph_test: true }, TrainConfig::default(), RetrievedNegatives::default()).run(&SILENT).map(|t| t.test));
    assert!(message.contains("graph test"), "{message}");
    let scratch = TrainConfig { text_encoder: TextEncoderKind::Scratch, ..TrainConfig::default() };
    let embedding = RetrievedNegatives { embedding_share: 0.5, ..RetrievedNegatives::default() };
    let message = config_error(slm(SlmData::Diplomacy, scratch, embedding).run(&SILENT).map(|t| t.test));
    assert!(message.contains("embedding negatives need sentence vectors"), "{message}");
    let turns = TrainConfig { context_turns: 4, ..TrainConfig::default() };
    let message = config_error(slm(SlmData::Diplomacy, turns, RetrievedNegatives::default()).run(&SILENT).map(|t| t.test));
    assert!(message.contains("context turns"), "{message}");
}

#[test]
fn ruber_retrieved_negatives_need_the_mix() {
    let job = RuberTraining {
        shared: nowhere(),
        out: nowhere().join("out"),
        data: RuberTriples::Positives { contexts: 10 },
        config: RuberConfig::default(),
        encoder: Some(nowhere()),
        retrieved: RetrievedNegatives { lexical_share: 0.5, ..RetrievedNegatives::default() },
    };
    let message = config_error(job.run(&SILENT).map(|t| t.test));
    assert!(message.contains("retrieved negatives apply to the training mix"), "{message}");
}
