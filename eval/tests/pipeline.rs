//! The pipeline's cache: a result is reused only under the same items and settings, an
//! incomplete one is never cached, a family's bad column is an error; and the analysis on the
//! real USR-PersonaChat ratings.

#![allow(clippy::panic)] // test helpers fail loudly

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dialeval_datasets::DialogueItem;
use dialeval_eval::families::{LENGTH, LengthFamily, LexicalFamily};
use dialeval_eval::{Analysis, AnalysisInput, Column, FamilyCache, FamilyOutput, FamilyScores, FamilyStatus, HumanScores, MetricFamily, Pipeline};

mod common;
use common::item;

/// Scores each item by its response length times `factor`, counting its computations.
struct Counting {
    factor: f64,
    calls: Arc<AtomicUsize>,
    complete: bool,
    value: Option<f64>,
}

impl MetricFamily for Counting {
    type Settings = f64;

    fn name(&self) -> &str {
        "counting"
    }

    fn version(&self) -> &'static str {
        "counting/1"
    }

    fn settings(&self) -> f64 {
        self.factor
    }

    fn compute(&self, items: &[DialogueItem], _progress: &(dyn Fn(usize, usize) + Sync)) -> dialeval_eval::Result<FamilyOutput> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let values = items.iter().map(|i| self.value.or_else(|| i.response.as_ref().map(|r| r.text.len() as f64 * self.factor))).collect();
        Ok(FamilyOutput::Scored(FamilyScores { columns: vec![Column::new("count", values)], notes: Vec::new(), complete: self.complete }))
    }
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dialeval-eval-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run(dir: &std::path::Path, items: &[DialogueItem], family: Counting) -> Vec<FamilyStatus> {
    let mut p = Pipeline::new().with_cache(FamilyCache::open(dir).unwrap_or_else(|e| panic!("{e}")));
    p.add(family);
    p.run(items, &|_| {}).unwrap_or_else(|e| panic!("{e}")).runs.into_iter().map(|r| r.status).collect()
}

#[test]
fn a_cached_result_is_reused_only_under_the_same_items_and_settings() {
    let dir = temp("cache");
    let calls = Arc::new(AtomicUsize::new(0));
    let family = |factor: f64| Counting { factor, calls: Arc::clone(&calls), complete: true, value: None };
    let items = vec![item("1", "hi", "hello there", "hey"), item("2", "how are you", "fine", "good")];
    run(&dir, &items, family(1.0));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(matches!(run(&dir, &items, family(1.0))[0], FamilyStatus::Cached { metrics: 1 }));
    assert_eq!(calls.load(Ordering::SeqCst), 1, "same items and settings: cached");
    run(&dir, &items, family(2.0));
    assert_eq!(calls.load(Ordering::SeqCst), 2, "other settings: recomputed");
    let mut changed = items.clone();
    changed[1].context[0].text = "how are you doing".into();
    run(&dir, &changed, family(2.0));
    assert_eq!(calls.load(Ordering::SeqCst), 3, "another context: recomputed");
    changed[1].references[0] = "good, thanks".into();
    run(&dir, &changed, family(2.0));
    assert_eq!(calls.load(Ordering::SeqCst), 4, "another reference: recomputed");
    if let Some(r) = changed[0].response.as_mut() {
        r.amr = Some("(h / hello)".into());
    }
    run(&dir, &changed, family(2.0));
    assert_eq!(calls.load(Ordering::SeqCst), 5, "a graph attached: recomputed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_incomplete_result_is_used_but_not_cached() {
    let dir = temp("incomplete");
    let calls = Arc::new(AtomicUsize::new(0));
    let items = vec![item("1", "hi", "hello", "hey")];
    for _ in 0..2 {
        let status = run(&dir, &items, Counting { factor: 1.0, calls: Arc::clone(&calls), complete: false, value: None });
        assert!(matches!(status[0], FamilyStatus::Computed { cached_for_next_run: false, .. }));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_non_finite_score_is_an_error_and_nothing_is_cached() {
    let dir = temp("nan");
    let items = vec![item("1", "hi", "hello", "hey")];
    let mut p = Pipeline::new().with_cache(FamilyCache::open(&dir).unwrap_or_else(|e| panic!("{e}")));
    p.add(Counting { factor: 1.0, calls: Arc::new(AtomicUsize::new(0)), complete: true, value: Some(f64::NAN) });
    let err = p.run(&items, &|_| {}).err().map(|e| e.to_string()).unwrap_or_else(|| panic!("a NaN score was accepted"));
    assert!(err.contains("count") && err.contains("non-finite"), "{err}");
    assert!(!dir.join("counting").exists(), "no entry stored");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn alternating_corpora_both_hit_and_a_hit_keeps_its_notes() {
    let dir = temp("alternating");
    let corpus_a = vec![item("1", "hi", "hello there", "hello there"), item("2", "yo", "no", "yes")];
    let corpus_b = vec![item("3", "how are you", "fine thanks", "good thanks")];
    let run = |items: &[DialogueItem]| {
        let mut p = Pipeline::new().with_cache(FamilyCache::open(&dir).unwrap_or_else(|e| panic!("{e}")));
        p.add(LexicalFamily::with_wordnet(Err("METEOR left out: no WordNet".into())).unwrap_or_else(|e| panic!("{e}")));
        p.run(items, &|_| {}).unwrap_or_else(|e| panic!("{e}")).runs.remove(0)
    };
    assert!(matches!(run(&corpus_a).status, FamilyStatus::Computed { .. }));
    assert!(matches!(run(&corpus_b).status, FamilyStatus::Computed { .. }));
    for items in [&corpus_a, &corpus_b, &corpus_a] {
        let hit = run(items);
        assert!(matches!(hit.status, FamilyStatus::Cached { metrics: 2 }), "{:?}", hit.status);
        assert!(hit.notes.iter().any(|n| n.contains("METEOR left out")), "the notes come back with the columns: {:?}", hit.notes);
    }
    // A damaged entry is moved aside, named in a note and recomputed; then it hits again.
    for entry in std::fs::read_dir(dir.join("lexical")).unwrap_or_else(|e| panic!("{e}")) {
        std::fs::write(entry.unwrap_or_else(|e| panic!("{e}")).path(), "{damaged").unwrap_or_else(|e| panic!("{e}"));
    }
    let recomputed = run(&corpus_a);
    assert!(matches!(recomputed.status, FamilyStatus::Computed { .. }), "{:?}", recomputed.status);
    assert!(recomputed.notes.iter().any(|n| n.contains("was damaged") && n.contains(".json.damaged") && n.contains("recomputed")), "{:?}", recomputed.notes);
    assert!(matches!(run(&corpus_a).status, FamilyStatus::Cached { .. }));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_lexical_cache_key_records_whether_wordnet_was_found() {
    let without = LexicalFamily::with_wordnet(Err("METEOR left out: no WordNet".into())).unwrap_or_else(|e| panic!("{e}"));
    let a = serde_json::to_value(without.settings()).unwrap_or_else(|e| panic!("{e}"));
    assert!(a["meteor"].get("Err").is_some(), "{a}");
    let items = vec![item("1", "hi", "hello there", "hello there"), item("2", "yo", "no", "yes")];
    let FamilyOutput::Scored(scores) = without.compute(&items, &|_, _| {}).unwrap_or_else(|e| panic!("{e}")) else { panic!("scored") };
    let names: Vec<&str> = scores.columns.iter().map(|c| c.metric.as_str()).collect();
    assert_eq!(names, ["BLEU-4", "ROUGE-L"]);
    assert!(scores.notes.iter().any(|n| n.to_string().contains("METEOR left out")));
    // With the system's WordNet (installed by .ci/run) the key differs and METEOR is there.
    if let Ok(with) = LexicalFamily::new() {
        let b = serde_json::to_value(with.settings()).unwrap_or_else(|e| panic!("{e}"));
        if b["meteor"].get("Ok").is_some() {
            assert_ne!(a, b);
            let FamilyOutput::Scored(s) = with.compute(&items, &|_, _| {}).unwrap_or_else(|e| panic!("{e}")) else { panic!("scored") };
            assert_eq!(s.columns.len(), 3);
        }
    }
}

#[test]
fn the_length_baseline_on_usr_personachat_correlates_perfectly_with_length() {
    // The copy bundled in the repository for the main job.
    let items = dialeval_datasets::usr::load(&dialeval_testkit::workspace_dir().join("data/usr-personachat/pc_usr_data.json")).unwrap_or_else(|e| panic!("{e}"));
    let mut p = Pipeline::new();
    p.add(LengthFamily);
    let scored = p.run(&items, &|_| {}).unwrap_or_else(|e| panic!("{e}"));
    let human = HumanScores::of(&items);
    let lengths: Vec<Option<f64>> = items.iter().map(|i| i.response.as_ref().map(|r| dialeval_common::word_count(&r.text) as f64)).collect();
    let systems: Vec<Option<String>> = items.iter().map(|i| i.system.clone()).collect();
    let config = dialeval_metrics::report::ReportConfig { bootstrap: None, ..Default::default() };
    let a = Analysis::of(AnalysisInput { table: &scored.table, human: &human, systems: &systems, lengths: &lengths }, &config).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.metrics.len(), 1);
    assert_eq!(a.metrics[0].metric.as_str(), LENGTH);
    let l = a.metrics[0].length.unwrap_or_else(|| panic!("a length correlation"));
    assert!((l.spearman - 1.0).abs() < 1e-12 && l.n == 300);
    assert_eq!(a.qualities.len(), 6, "USR rates six criteria");
    assert!(!a.system_level.is_empty(), "USR has several systems");
    let written = dialeval_eval::write::scores_csv(&scored.rows, &scored.table, &human).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(written.lines().count(), 301);
}

/// Every family states the version of its computation (a required trait method), each its own,
/// and the version is part of the cache key: the families that need no model are listed here;
/// BERT-RUBER, the SLM and the LLM judge (which need checkpoints or an endpoint) state theirs
/// the same way (`bert_ruber/2`, `slm/2`, `llm/2`).
#[test]
fn every_family_has_a_version_in_its_cache_key() {
    let embedder = Arc::new(dialeval_eval::families::MemoEmbedder::new(common::WordHash, "word-hash"));
    let index = dialeval_datasets::amr::AmrIndex::default();
    let versions = [
        LengthFamily.version(),
        LexicalFamily::with_wordnet(Err("none".into())).unwrap_or_else(|e| panic!("{e}")).version(),
        dialeval_eval::families::EmbeddingFamily::new(embedder).version(),
        dialeval_eval::families::SmatchFamily::new(&index, &[], Default::default()).unwrap_or_else(|e| panic!("{e}")).version(),
    ];
    let names = ["length", "lexical", "embedding", "smatch"];
    for (v, name) in versions.iter().zip(names) {
        let (family, n) = v.split_once('/').unwrap_or_else(|| panic!("{v}: expected <family>/<n>"));
        assert!(family == name && n.parse::<u32>().is_ok(), "{v}");
    }
    let settings = serde_json::json!({});
    assert_ne!(
        dialeval_eval::CacheKey::new("length", "length/1", &settings, "d").unwrap_or_else(|e| panic!("{e}")),
        dialeval_eval::CacheKey::new("length", "length/2", &settings, "d").unwrap_or_else(|e| panic!("{e}"))
    );
}

/// `report.md` and `correlations.json` say what produced them: the dialeval version and each
/// family's computation and settings (issue 54), the same in a merge of shards as in one run.
#[test]
fn reports_name_what_produced_them() {
    let items = common::rated_corpus(true);
    let dir = common::temp("pipeline", "provenance");
    let report =
        dialeval_eval::Evaluation::of(&items).family(LengthFamily).family(LexicalFamily::new().unwrap_or_else(|e| panic!("{e}"))).skip("llm", "not here").run().unwrap_or_else(|e| panic!("{e}"));
    report.write(&dir).unwrap_or_else(|e| panic!("{e}"));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("correlations.json")).unwrap_or_default()).unwrap_or_default();
    let provenance = &json["provenance"];
    assert_eq!(provenance["dialeval"], env!("CARGO_PKG_VERSION"));
    let families: Vec<&str> = provenance["families"].as_array().map(|f| f.iter().filter_map(|f| f["family"].as_str()).collect()).unwrap_or_default();
    assert_eq!(families, ["length", "lexical"], "the families built, not the one left out");
    assert_eq!(provenance["families"][1]["version"], LexicalFamily::new().unwrap_or_else(|e| panic!("{e}")).version());
    assert!(provenance["families"][1]["settings"]["bleu"].is_object(), "{provenance}");
    assert!(json["turn_level"]["rows"].is_array(), "the analysis is still there");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap_or_default();
    assert!(md.contains(&format!("## Provenance\n\ndialeval {}.", env!("CARGO_PKG_VERSION"))) && md.contains("- lexical (lexical/3): `{\"bleu\""), "{md}");
    assert_eq!(provenance["models"], serde_json::json!([]), "no family here reads a model");
    assert!(md.contains("- none: no family of this run reads a model"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}
