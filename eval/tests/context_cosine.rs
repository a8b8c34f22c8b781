//! The zero-shot context cosines against the PyTorch reference: with all-mpnet-base-v2, the
//! items' responses and turns are golden inputs, so `Context-Cosine` must be the reference's
//! cosine of the two sentence embeddings, and `Context-Cosine-2` the cosine of the response's
//! with the normalised mean of the two turns' (computed from the reference embeddings), within
//! the parity tolerance of the encoder (1e-4).
#![cfg(feature = "slm")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

mod common;

use std::sync::Arc;

use dialeval_datasets::{DialogueItem, Turn};
use dialeval_eval::families::ContextCosineFamily;
use dialeval_eval::family::{FamilyOutput, MetricFamily};
use dialeval_eval::models::SharedCache;
use dialeval_slm_model::bert::{PretrainedEncoder, mpnet_dir};

const TOLERANCE: f64 = 1e-4;

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (norm(a) * norm(b))
}

#[test]
fn context_cosines_are_the_reference_cosines_of_sentence_embeddings() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let Some(dir) = dialeval_testkit::optional_dir(mpnet_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MPNET") else { return };
    let golden = dialeval_testkit::read_json(&shared.join("golden/mpnet/all_mpnet_base_v2_reference.json"));
    let inputs = golden["inputs"].as_array().unwrap();
    let text = |i: usize| inputs[i]["text"].as_str().unwrap().to_owned();
    let embedding = |i: usize| dialeval_testkit::floats(&inputs[i]["embedding"]);
    // (response, earlier turn, last turn): the earlier turn of the first item is blank, so it
    // reads one turn; the third item has no turn with text at all.
    let cases = [(0, None, 2), (1, Some(3), 4), (5, Some(6), 7)];
    let mut items: Vec<DialogueItem> = cases
        .iter()
        .enumerate()
        .map(|(n, &(r, earlier, last))| {
            let mut item = common::item(&format!("item-{n}"), &text(last), &text(r), "a reference");
            item.context.insert(0, Turn::new(earlier.map_or_else(|| "   ".to_owned(), text)));
            item
        })
        .collect();
    items.push(common::item("opening", " ", &text(1), "a reference"));
    let encoder = Arc::new(PretrainedEncoder::load(&dir, &dialeval_eval::models::Compute::Cpu.device().unwrap()).unwrap());
    let cache_dir = common::temp("context-cosine", "cache");
    let family = ContextCosineFamily::new(Arc::clone(&encoder), Arc::new(SharedCache::new(&encoder, &cache_dir)));
    let FamilyOutput::Scored(scores) = family.compute(&items, &|_, _| {}).unwrap() else { panic!("scored") };
    let column = |name: &str| scores.columns.iter().find(|c| c.metric.as_str() == name).unwrap_or_else(|| panic!("{name}")).values.clone();
    let (last, two) = (column("Context-Cosine"), column("Context-Cosine-2"));
    for (n, &(r, earlier, turn)) in cases.iter().enumerate() {
        let expected = cosine(&embedding(r), &embedding(turn));
        assert!((last[n].unwrap() - expected).abs() < TOLERANCE, "item {n}: Context-Cosine {:?} against the reference's {expected}", last[n]);
        let mean: Vec<f64> = match earlier {
            Some(e) => embedding(turn).iter().zip(embedding(e)).map(|(a, b)| a + b).collect(),
            None => embedding(turn),
        };
        let expected_two = cosine(&embedding(r), &mean);
        assert!((two[n].unwrap() - expected_two).abs() < TOLERANCE, "item {n}: Context-Cosine-2 {:?} against {expected_two}", two[n]);
    }
    assert_eq!(golden["cosine_similarity_first8"][1][4].as_f64().map(|c| (c - last[1].unwrap()).abs() < TOLERANCE), Some(true), "the reference's own cosine table agrees");
    assert!((last[0].unwrap() - two[0].unwrap()).abs() < 1e-6, "one turn with text: both columns read it");
    assert_eq!((last[3], two[3]), (None, None), "a conversation opening is not scored");
    let notes: Vec<String> = scores.notes.iter().map(ToString::to_string).collect();
    assert!(notes.iter().any(|n| n.contains("1 items have no context turn with text") && n.contains("opening")), "{notes:?}");
    let _ = std::fs::remove_dir_all(&cache_dir);
}
