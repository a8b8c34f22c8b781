//! Parity with smatch 1.0.4 (`../shared/golden/little_prince_smatch_*.jsonl`).
//!
//! Triple counts must be exact; match counts must never exceed the exact optimum nor fall
//! below every smatch run of a pair, reach the optimum on at least 99% of the 200 random pairs,
//! and the corpus F1 on them must be within 0.001 of the optimum.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use dialeval_amr_graph::smatch::{Smatch, SmatchConfig, SmatchScore, SmatchTriples};
use serde_json::Value;

fn triples(s: &Value) -> SmatchTriples {
    SmatchTriples::parse(s.as_str().unwrap_or_else(|| panic!("not a string: {s}"))).unwrap_or_else(|e| panic!("{e}"))
}

fn counts(v: &Value) -> (usize, usize, usize) {
    let n = |k: &str| v[k].as_u64().unwrap_or(u64::MAX) as usize;
    (n("instance"), n("attribute"), n("relation"))
}

fn field(v: &Value, a: &str, b: &str) -> usize {
    v[a][b].as_u64().unwrap_or(u64::MAX) as usize
}

struct Tally {
    pairs: usize,
    at_optimum: usize,
    below_seed0: usize,
    corpus: SmatchScore,
    optimal: SmatchScore,
}

fn check(rows: &[Value], smatch: &Smatch, per_pair_lower_bound: bool) -> Tally {
    let mut t = Tally { pairs: 0, at_optimum: 0, below_seed0: 0, corpus: SmatchScore::default(), optimal: SmatchScore::default() };
    for row in rows {
        let i = &row["pair_index"];
        let (a, b) = (triples(&row["amr1"]), triples(&row["amr2"]));
        assert_eq!(a.counts(), counts(&row["amr1_smatch_triples"]), "pair {i}: test triples");
        assert_eq!(b.counts(), counts(&row["amr2_smatch_triples"]), "pair {i}: gold triples");
        let score = smatch.score(&a, &b);
        assert_eq!(score.test_triples, field(row, "smatch_seed0", "test_triples"), "pair {i}");
        assert_eq!(score.gold_triples, field(row, "smatch_seed0", "gold_triples"), "pair {i}");
        let optimum = field(row, "smatch_optimal", "match");
        let min_match = row["stability"]["min_match"].as_u64().unwrap_or(0) as usize;
        assert!(score.matched <= optimum, "pair {i}: {} above the optimum {optimum}", score.matched);
        if per_pair_lower_bound {
            assert!(score.matched >= min_match, "pair {i}: {} below every smatch run ({min_match})", score.matched);
        }
        let stable = row["stability"]["stable"].as_bool() == Some(true) && row["stability"]["hill_climbing_best_equals_optimal"].as_bool() == Some(true);
        if stable && per_pair_lower_bound {
            assert_eq!(score.matched, optimum, "pair {i}: smatch always finds the optimum here");
        }
        if row.get("identity_pair").and_then(Value::as_bool) == Some(true) {
            assert_eq!(score.f1(), 1.0, "identity pair {i}");
        }
        t.pairs += 1;
        t.at_optimum += usize::from(score.matched == optimum);
        t.below_seed0 += usize::from(score.matched < field(row, "smatch_seed0", "match"));
        t.corpus += score;
        t.optimal += SmatchScore { matched: optimum, ..score };
    }
    t
}

#[test]
fn random_pairs_match_smatch() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let rows = dialeval_testkit::read_jsonl(&shared.join("golden/little_prince_smatch_random_pairs.jsonl"));
    assert_eq!(rows.len(), 210);
    let t = check(&rows[..200], &Smatch::default(), true);
    eprintln!("random pairs: {}/{} at the exact optimum, {} below smatch seed 0", t.at_optimum, t.pairs, t.below_seed0);
    // smatch's seed-0 run is one random run: it may have been lucky on a pair the search misses,
    // but the search reaches the optimum on at least 99% of the pairs (smatch_optimum.rs checks
    // the same on the Diplomacy annotator pairs).
    assert!(t.at_optimum * 100 >= t.pairs * 99, "{}/{} at the optimum", t.at_optimum, t.pairs);
    assert!(t.below_seed0 * 100 <= t.pairs, "{} pairs below smatch's seed 0", t.below_seed0);
    assert!((t.corpus.f1() - t.optimal.f1()).abs() <= 0.001, "corpus F1 {} vs optimum {}", t.corpus.f1(), t.optimal.f1());
    assert!((t.optimal.f1() - 0.19486271036315322).abs() < 1e-12);
    let identity = check(&rows[200..], &Smatch::default(), true);
    assert_eq!(identity.at_optimum, 10);
}

#[test]
fn smatch_default_restarts_also_stay_within_smatch_range() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let rows = dialeval_testkit::read_jsonl(&shared.join("golden/little_prince_smatch_random_pairs.jsonl"));
    // smatch's own budget (smart init + 4 random restarts) is a hill climb like smatch's: any
    // single pair may land below smatch's worst run, so only the golden README's corpus
    // tolerance (corpus F1 within about 0.003 of smatch's seed-0 corpus F1 on the 200 random
    // pairs, little_prince_smatch_summary.json) and the optimum's upper bound are checked.
    const SMATCH_SEED0_CORPUS_F1: f64 = 0.19309123117803367;
    for seed in [0, 7, 42] {
        let smatch = Smatch::new(SmatchConfig { restarts: 4, seed }).unwrap_or_else(|e| panic!("{e}"));
        let t = check(&rows[..200], &smatch, false);
        assert!((t.corpus.f1() - SMATCH_SEED0_CORPUS_F1).abs() <= 0.003, "seed {seed}: {}", t.corpus.f1());
    }
}

#[test]
fn v16_vs_v30_pairs_match_smatch() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let rows = dialeval_testkit::read_jsonl(&shared.join("golden/little_prince_smatch_v16_vs_v30.jsonl"));
    assert_eq!(rows.len(), 1562);
    let t = check(&rows, &Smatch::default(), true);
    eprintln!("v1.6 vs v3.0: {}/{} at the exact optimum", t.at_optimum, t.pairs);
    assert_eq!(t.below_seed0, 0);
    assert_eq!(t.corpus, SmatchScore { matched: 22486, test_triples: 23220, gold_triples: 23491 });
}
