//! Behaviour on the real AMR files: the bundled sample (always) and every corpus under
//! `../shared/data` with its documented oddities.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use dialeval_amr_graph::penman::{PenmanReader, Tree};
use dialeval_amr_graph::smatch::{Smatch, SmatchTriples};
use dialeval_amr_graph::{AmrGraph, Error, ParseErrorKind};

fn read(path: &Path) -> Vec<Result<Tree, Error>> {
    let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    PenmanReader::new(BufReader::new(file)).collect()
}

fn split(items: Vec<Result<Tree, Error>>) -> (Vec<Tree>, Vec<ParseErrorKind>) {
    let mut trees = Vec::new();
    let mut errors = Vec::new();
    for item in items {
        match item {
            Ok(t) => trees.push(t),
            Err(Error::Parse(e)) => errors.push(e.kind),
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    (trees, errors)
}

fn bundled(name: &str) -> std::path::PathBuf {
    dialeval_testkit::workspace_dir().join("data/amr").join(name)
}

#[test]
fn bundled_sample_reads_and_round_trips() {
    let (trees, errors) = split(read(&bundled("little-prince-v3.0-first40.amr.txt")));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(trees.len(), 40);
    assert_eq!(trees[0].id(), Some("lpp_1943.1"));
    for t in trees {
        let g = AmrGraph::from_tree(t);
        let again = AmrGraph::decode(&g.encode()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(g.triples(), again.triples());
    }
}

#[test]
fn bundled_releases_smatch_against_each_other() {
    let (v16, _) = split(read(&bundled("little-prince-v1.6-first40.amr.txt")));
    let (v30, _) = split(read(&bundled("little-prince-v3.0-first40.amr.txt")));
    assert_eq!(v16.len(), v30.len());
    let smatch = Smatch::default();
    let mut total = dialeval_amr_graph::smatch::SmatchScore::default();
    for (a, b) in v16.iter().zip(&v30) {
        assert_eq!(a.id(), b.id());
        let s = smatch.score(&SmatchTriples::from_tree(a).unwrap_or_else(|e| panic!("{e}")), &SmatchTriples::from_tree(b).unwrap_or_else(|e| panic!("{e}")));
        assert!(s.matched <= s.test_triples.min(s.gold_triples));
        total += s;
    }
    // Most sentences are unchanged between releases.
    assert!(total.f1() > 0.9 && total.f1() < 1.0, "{}", total.f1());
}

#[test]
fn diplomacy_orphan_metadata_blocks_are_reported() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let (trees, errors) = split(read(&shared.join("data/amr-diplomacy/dip-all-amr-smosher.txt")));
    assert_eq!(trees.len(), 8882);
    assert_eq!(errors, vec![ParseErrorKind::OrphanMetadata { id: Some("dip_test_0039.1".into()) }]);
    let empty = trees.iter().filter(|t| t.node.concept.as_deref() == Some("amr-empty")).count();
    assert_eq!(empty, 4412);

    let path = shared.join("data/amr-diplomacy/dip-all-amr-jweinman-20220926.txt");
    let (trees, errors) = split(read(&path));
    assert_eq!(trees.len(), 528);
    assert_eq!(errors.len(), 7);
    // One block holds three graphs: the later two have no metadata of their own.
    assert_eq!(trees.iter().filter(|t| t.metadata.is_empty()).count(), 2);
    // penman-compatible mode merges the orphan blocks instead, as penman 1.3.1 does.
    let file = File::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let merged: Vec<_> = PenmanReader::new(BufReader::new(file)).penman_compatible().collect();
    assert_eq!(merged.len(), 528);
    assert!(merged.iter().all(Result::is_ok));
}

#[test]
fn dialogre_header_missing_its_hash_is_reported_and_graph_kept() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let (trees, errors) = split(read(&shared.join("data/amr-dialogre-examples/example-dialogAMR-alignment.txt")));
    assert_eq!(trees.len(), 1);
    assert!(matches!(&errors[..], [ParseErrorKind::StrayText { found }] if found == ":"));
    assert_eq!(trees[0].node.var, "c00");

    // Raw parser output: duplicate roles and an inverted role on a constant are reported.
    let (trees, errors) = split(read(&shared.join("data/amr-dialogre-examples/example-utteranceAMR.txt")));
    assert!(errors.is_empty());
    assert_eq!(trees.len(), 19);
    let issues: usize = trees.into_iter().map(|t| AmrGraph::from_tree(t).issues().len()).sum();
    assert!(issues > 0);
}

#[test]
fn every_shared_amr_file_reads_without_losing_graphs() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let expect = [
        ("amr-little-prince/amr-bank-struct-v1.6.txt", 1562),
        ("amr-little-prince/amr-bank-struct-v1.6-training.txt", 1274),
        ("amr-little-prince/amr-bank-struct-v1.6-test.txt", 143),
        ("amr-dialogre-examples/example-dialogAMR.txt", 1),
        ("silver-amr/usr-personachat.silver.amr.txt", 771),
        ("silver-amr/dailydialog-plusplus-dev200.silver.amr.txt", 3117),
        ("silver-amr/dailydialog-plusplus-dev-more300.silver.amr.txt", 3728),
        ("silver-amr/dailydialog-plusplus-test100.silver.amr.txt", 1581),
        ("silver-amr/calibration/little-prince-40.silver.amr.txt", 40),
    ];
    for (file, count) in expect {
        let (trees, errors) = split(read(&shared.join("data").join(file)));
        assert!(errors.is_empty(), "{file}: {errors:?}");
        assert_eq!(trees.len(), count, "{file}");
        for t in trees {
            let g = AmrGraph::from_tree(t);
            if file.starts_with("silver") {
                assert!(g.validate().is_ok(), "{file} {:?}: {:?}", g.metadata().get("id"), g.issues());
            }
        }
    }
}

#[test]
fn silver_calibration_reproduces_its_documented_smatch() {
    // silver-amr/SOURCE.md: smatch 1.0.4 gives corpus P 0.796, R 0.808, F1 0.802 against gold.
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let (silver, errors) = split(read(&shared.join("data/silver-amr/calibration/little-prince-40.silver.amr.txt")));
    assert!(errors.is_empty());
    let (gold, _) = split(read(&shared.join("data/amr-little-prince/amr-bank-struct-v3.0.txt")));
    let smatch = Smatch::default();
    let mut total = dialeval_amr_graph::smatch::SmatchScore::default();
    for s in &silver {
        let g = gold.iter().find(|g| g.id() == s.id()).unwrap_or_else(|| panic!("no gold graph for {:?}", s.id()));
        let triples = |t: &Tree| SmatchTriples::from_tree(t).unwrap_or_else(|e| panic!("{e}"));
        total += smatch.score(&triples(s), &triples(g));
    }
    assert_eq!(silver.len(), 40);
    assert!((total.precision() - 0.796).abs() < 0.003, "P {}", total.precision());
    assert!((total.recall() - 0.808).abs() < 0.003, "R {}", total.recall());
    assert!((total.f1() - 0.802).abs() < 0.003, "F1 {}", total.f1());
}

#[test]
fn decode_all_in_segments_equals_one_sequential_reader() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    // Diplomacy has orphan metadata blocks and malformed graphs; the others are large.
    for file in ["amr-diplomacy/dip-all-amr-smosher.txt", "amr-little-prince/amr-bank-struct-v3.0.txt", "silver-amr/dailydialog-plusplus-dev-more300.silver.amr.txt"] {
        let text = std::fs::read_to_string(shared.join("data").join(file)).unwrap();
        let sequential: Vec<String> = dialeval_amr_graph::penman::PenmanReader::from_text(&text).map(|r| format!("{r:?}")).collect();
        let segmented: Vec<String> = dialeval_amr_graph::penman::decode_all(&text).iter().map(|r| format!("{r:?}")).collect();
        assert_eq!(sequential.len(), segmented.len(), "{file}");
        for (k, (a, b)) in sequential.iter().zip(&segmented).enumerate() {
            assert_eq!(a, b, "{file}: item {k}");
        }
    }
}
