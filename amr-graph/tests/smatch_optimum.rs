//! The hill climbing against the exact optimum: [`Smatch::align_exact`] first reproduces the
//! golden optimum of smatch's reference data (`smatch_optimal`, computed with an ILP), then
//! measures how often the default search reaches it on the Diplomacy annotator pairs.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::collections::HashMap;
use std::time::Instant;

use dialeval_amr_graph::penman::decode_all;
use dialeval_amr_graph::smatch::{Smatch, SmatchTriples};

const BUDGET: u64 = 2_000_000;

#[test]
fn exact_search_reproduces_the_golden_optimum() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let rows = dialeval_testkit::read_jsonl(&shared.join("golden/little_prince_smatch_random_pairs.jsonl"));
    let smatch = Smatch::default();
    let mut proven = 0;
    for row in &rows {
        let t = |k: &str| SmatchTriples::parse(row[k].as_str().unwrap()).unwrap();
        let optimum = row["smatch_optimal"]["match"].as_u64().unwrap() as usize;
        let found = smatch.score(&t("amr1"), &t("amr2"));
        if found.matched != optimum {
            eprintln!("pair {}: {} < {optimum} ({} / {} triples; smatch seed 0: {})", row["pair_index"], found.matched, found.test_triples, found.gold_triples, row["smatch_seed0"]["match"]);
        }
        if let Some(exact) = smatch.align_exact(&t("amr1"), &t("amr2"), BUDGET) {
            assert_eq!(exact.score.matched, optimum, "pair {}", row["pair_index"]);
            proven += 1;
        }
    }
    eprintln!("golden random pairs: optimum proven on {proven}/{} within {BUDGET} search nodes", rows.len());
    assert!(proven * 100 >= rows.len() * 99, "{proven}/{} proven", rows.len());
}

/// The non-empty graphs of a PENMAN file by `::id` (the `(a / amr-empty)` placeholders and
/// malformed blocks left out), as smatch triples.
fn graphs_by_id(text: &str) -> HashMap<String, SmatchTriples> {
    decode_all(text).into_iter().flatten().filter(|t| t.node.concept.as_deref() != Some("amr-empty")).filter_map(|t| Some((t.id()?.to_owned(), SmatchTriples::from_tree(&t).ok()?))).collect()
}

#[test]
fn default_search_reaches_the_optimum_on_diplomacy_annotator_pairs() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let dir = shared.join("data/amr-diplomacy");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let (a, b) = (graphs_by_id(&read("dip-all-amr-jweinman-20220926.txt")), graphs_by_id(&read("dip-all-amr-smosher.txt")));
    let mut ids: Vec<&String> = a.keys().filter(|k| b.contains_key(*k)).collect();
    ids.sort();
    let smatch = Smatch::default();
    let (mut pairs, mut at_optimum, mut unproven) = (0, 0, Vec::new());
    for id in ids {
        let (t, g) = (&a[id], &b[id]);
        let start = Instant::now();
        let found = smatch.score(t, g).matched;
        let Some(exact) = smatch.align_exact(t, g, BUDGET) else {
            unproven.push((id.clone(), t.len(), g.len()));
            continue;
        };
        pairs += 1;
        at_optimum += usize::from(found == exact.score.matched);
        if found != exact.score.matched {
            eprintln!("{id}: {found} < {} ({} / {} triples, {} ms)", exact.score.matched, t.len(), g.len(), start.elapsed().as_millis());
        }
    }
    eprintln!("diplomacy annotator pairs: {at_optimum}/{pairs} at the proven optimum; unproven within the budget: {unproven:?}");
    assert!(pairs >= 60 && unproven.len() <= 2, "{pairs} pairs proven, unproven: {unproven:?}");
    assert!(at_optimum * 100 >= pairs * 99, "{at_optimum}/{pairs}");
}
