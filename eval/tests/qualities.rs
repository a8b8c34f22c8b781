//! Every rating name of a user's corpus with at least 3 rated items is correlated: the criteria
//! under their names, any other name as a quality of its own; a name rated on fewer items is
//! listed in `report.md`, never dropped in silence.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use dialeval_common::Criterion;
use dialeval_datasets::{DialogueItem, Rating};
use dialeval_eval::families::LengthFamily;
use dialeval_eval::{Evaluation, HumanScores, Quality};
use dialeval_metrics::report::ReportConfig;

mod common;
use common::item;

fn rated(mut i: DialogueItem, ratings: &[(&str, Option<Criterion>, Option<f64>)]) -> DialogueItem {
    i.ratings = ratings.iter().filter(|r| r.2.is_some()).map(|&(q, c, v)| Rating { quality: q.into(), criterion: c, scores: vec![v] }).collect();
    i
}

fn corpus() -> Vec<DialogueItem> {
    let responses = ["yes", "i think so too", "that sounds like a lot of fun to me", "no", "maybe we could go there together next week", "sure thing"];
    responses
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let words = r.split_whitespace().count() as f64;
            rated(
                item(&format!("i{k}"), "shall we go out", r, "let us go"),
                &[
                    // Follows length: Spearman 1 with the length metric.
                    ("relevance", None, Some(words)),
                    // Against length: Spearman -1.
                    ("Fluency rating", None, Some(-words)),
                    ("Overall", Some(Criterion::Overall), Some(words + 0.5)),
                    // Rated on two items only.
                    ("rare", None, (k < 2).then_some(1.0)),
                ],
            )
        })
        .collect()
}

#[test]
fn named_ratings_are_correlated_and_rare_ones_listed() {
    let items = corpus();
    let human = HumanScores::of(&items);
    let names: Vec<&str> = human.qualities.iter().map(|(q, _)| q.name()).collect();
    assert_eq!(names, ["Overall", "relevance", "Fluency rating"], "criteria first, then names in order of appearance");
    assert_eq!(human.qualities[1].0, Quality::Named("relevance".into()));
    assert_eq!(human.uncorrelated.len(), 1);
    assert_eq!(human.uncorrelated[0].name, "rare");

    let dir = std::env::temp_dir().join(format!("dialeval-eval-qualities-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let report = Evaluation::of(&items).family(LengthFamily).analysis(ReportConfig { bootstrap: None, ..Default::default() }).run().unwrap();
    let a = &report.analysis;
    assert_eq!(a.qualities.len(), 3);
    let length = &a.metrics[0];
    let rho = |k: usize| length.cells[k].unwrap().spearman;
    assert!((rho(1) - 1.0).abs() < 1e-12 && (rho(2) + 1.0).abs() < 1e-12, "{:?}", length.cells);
    assert_eq!(a.best(Quality::Named("relevance".into())).unwrap().as_str(), length.metric.as_str());
    assert!(a.notes.iter().any(|n| n.contains("\"rare\"") && n.contains("2 item(s)")), "{:?}", a.notes);

    report.write(&dir).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("human ratings: Overall, relevance, Fluency rating"), "{md}");
    assert!(md.contains("rating \"rare\" is not correlated"), "{md}");
    let csv = std::fs::read_to_string(dir.join("scores.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("human relevance,human Fluency rating"), "{csv}");
    let line: serde_json::Value = serde_json::from_str(std::fs::read_to_string(dir.join("scores.jsonl")).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(line["human"]["relevance"], 1.0);
    // The JSON form reads back to the same qualities.
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("correlations.json")).unwrap()).unwrap();
    assert_eq!(json["qualities"], serde_json::json!(["overall", "relevance", "Fluency rating"]));
    let back: dialeval_eval::Analysis = serde_json::from_value(json).unwrap();
    assert_eq!(back.qualities, a.qualities);
    #[cfg(feature = "plots")]
    assert!(dir.join("plots/scatter_fluency_rating.svg").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rating_named_like_an_unmapped_criterion_is_listed_not_mixed_in() {
    let items: Vec<DialogueItem> = (0..4).map(|k| rated(item(&format!("i{k}"), "c", "a response", "r"), &[("coherence", None, Some(f64::from(k)))])).collect();
    let human = HumanScores::of(&items);
    assert!(human.qualities.is_empty());
    assert!(human.uncorrelated[0].reason.contains("criterion Coherence"), "{:?}", human.uncorrelated);
}
