//! The streaming pipeline: a corpus scored in chunks (in memory, or a JSONL file read a chunk
//! at a time) writes, byte for byte, the `scores.jsonl`, `scores.csv`, `correlations.md` and
//! `correlations.json` of the corpus scored whole, with the same notes; a run killed inside a
//! family resumes at the chunk it was in, without computing a finished chunk again.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dialeval_datasets::DialogueItem;
use dialeval_eval::families::{EmbeddingFamily, LengthFamily, LexicalFamily, MemoEmbedder};
use dialeval_eval::{Column, Evaluation, FamilyCache, FamilyOutput, FamilyScores, FamilyStatus, JsonlSource, MetricFamily, Note, Pipeline, Report};
use dialeval_metrics::report::ReportConfig;

mod common;
use common::{WordHash, rated_corpus};

/// The shared test corpus, with empty responses, empty references and none.
fn corpus() -> Vec<DialogueItem> {
    rated_corpus(true)
}

fn temp(name: &str) -> std::path::PathBuf {
    common::temp("chunks", name)
}

fn families() -> Pipeline {
    let mut p = Pipeline::new();
    p.add(LengthFamily).add(LexicalFamily::new().unwrap()).add(EmbeddingFamily::new(Arc::new(MemoEmbedder::new(WordHash, "word-hash"))));
    p
}

fn notes(report: &Report) -> Vec<(String, Vec<String>)> {
    report.runs.iter().map(|r| (r.family.clone(), r.notes.clone())).collect()
}

fn same_files(a: &std::path::Path, b: &std::path::Path) {
    for file in ["scores.jsonl", "scores.csv", "correlations.md", "correlations.json"] {
        let (x, y) = (std::fs::read(a.join(file)).unwrap(), std::fs::read(b.join(file)).unwrap());
        assert!(x == y, "{file} differs between {} and {}", a.display(), b.display());
    }
}

/// The corpus as a JSONL file of the generic format.
fn write_jsonl(items: &[DialogueItem], path: &std::path::Path) {
    let lines: Vec<String> = items
        .iter()
        .map(|i| {
            let ratings: serde_json::Map<String, serde_json::Value> = i.ratings.iter().map(|r| (r.quality.clone(), serde_json::json!(r.scores))).collect();
            serde_json::json!({
                "id": i.id,
                "context": i.context.iter().map(|t| t.text.clone()).collect::<Vec<_>>(),
                "response": i.response.as_ref().map(|r| r.text.clone()),
                "references": i.references,
                "system": i.system,
                "ratings": ratings,
            })
            .to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_corpus_scored_in_chunks_writes_the_files_of_the_corpus_scored_whole() {
    let items = corpus();
    let whole = temp("whole");
    let one = Evaluation::of(&items).pipeline(families()).analysis(ReportConfig::default()).run().unwrap();
    one.write(&whole).unwrap();
    assert!(notes(&one).iter().any(|(_, n)| n.iter().any(|n| n.starts_with("4 items with an empty reference are not scored: item-11"))), "{:?}", notes(&one));
    for size in [1, 7, 89] {
        let chunked = temp(&format!("chunked-{size}"));
        let report = Evaluation::of(&items).pipeline(families()).chunk_items(size).analysis(ReportConfig::default()).run().unwrap();
        report.write(&chunked).unwrap();
        same_files(&whole, &chunked);
        assert_eq!(notes(&report), notes(&one), "the notes of the chunks add up to those of the whole (chunks of {size})");
        let _ = std::fs::remove_dir_all(&chunked);
    }

    // The same corpus from a JSONL file, streamed in chunks of 10.
    let dir = temp("jsonl");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("corpus.jsonl");
    write_jsonl(&items, &path);
    let loaded = dialeval_datasets::jsonl::load(&path).unwrap();
    let loaded_whole = dir.join("whole");
    Evaluation::of(&loaded).pipeline(families()).run().unwrap().write(&loaded_whole).unwrap();
    same_files(&whole, &loaded_whole);
    let source = JsonlSource::new(&path).counted().unwrap();
    let chunks = std::sync::Mutex::new(Vec::new());
    let streamed = Evaluation::of_source(&source)
        .pipeline(families())
        .chunk_items(10)
        .observe(|e| {
            if let dialeval_eval::Event::Chunk { index, first_item, items, total } = e {
                chunks.lock().unwrap().push((index, first_item, items, total));
            }
        })
        .run()
        .unwrap();
    let chunks = chunks.into_inner().unwrap();
    assert_eq!(chunks.len(), 9);
    assert_eq!(chunks[8], (8, 80, 10, Some(90)));
    streamed.write(&dir.join("streamed")).unwrap();
    same_files(&whole, &dir.join("streamed"));
    for d in [&whole, &dir] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_family_with_nothing_to_score_in_some_chunks_gives_the_cells_and_notes_of_the_whole() {
    // The first 10 items have no reference: the lexical family has nothing to score in the first chunk.
    let mut items = corpus();
    items.iter_mut().take(10).for_each(|i| i.references.clear());
    let one = Pipeline::new().run(&items, &|_| {}).unwrap();
    let mut p = Pipeline::new();
    p.add(LexicalFamily::new().unwrap());
    let (whole, chunked) = (p.run(&items, &|_| {}).unwrap(), p.run_source(&items.as_slice(), 10, &|_| {}).unwrap());
    assert_eq!(whole.table, chunked.table, "the same cells, empty for the skipped chunk");
    assert_eq!(one.rows, chunked.rows);
    assert_eq!(
        chunked.runs,
        whole.runs.iter().map(|r| dialeval_eval::FamilyRun { seconds: chunked.runs[0].seconds, status: chunked.runs[0].status.clone(), ..r.clone() }).collect::<Vec<_>>(),
        "the same notes"
    );
    assert!(chunked.runs[0].notes[0].starts_with("13 of 90 items have no response or no reference"), "{:?}", chunked.runs[0].notes);
    // No chunk it can run on: the family is skipped, as on the whole.
    items.iter_mut().for_each(|i| i.references.clear());
    assert!(matches!(&p.run_source(&items.as_slice(), 10, &|_| {}).unwrap().runs[0].status, FamilyStatus::Skipped { reason } if reason.contains("no item has a response and a reference")));
}

/// Scores the response length, counting the items it computes; fails on `fail_at` while armed.
struct Resumable {
    computed: Arc<AtomicUsize>,
    fail_at: Option<&'static str>,
}

impl MetricFamily for Resumable {
    type Settings = ();

    fn name(&self) -> &str {
        "resumable"
    }

    fn version(&self) -> &'static str {
        "resumable/1"
    }

    fn settings(&self) {}

    fn compute(&self, items: &[DialogueItem], _progress: &(dyn Fn(usize, usize) + Sync)) -> dialeval_eval::Result<FamilyOutput> {
        if let Some(id) = self.fail_at.filter(|id| items.iter().any(|i| i.id == *id)) {
            return Err(dialeval_eval::Error::Config(format!("killed at {id}")));
        }
        self.computed.fetch_add(items.len(), Ordering::SeqCst);
        let values = items.iter().map(|i| i.response.as_ref().map(|r| r.text.len() as f64)).collect();
        Ok(FamilyOutput::Scored(FamilyScores::new(vec![Column::new("chars", values)]).with_note(Note::count("{0} items scored", &[items.len()]))))
    }
}

#[test]
fn a_run_killed_inside_a_family_resumes_at_the_chunk_it_was_in() {
    let items = corpus();
    let dir = temp("resume");
    let computed = Arc::new(AtomicUsize::new(0));
    let run = |fail_at: Option<&'static str>| {
        let mut p = Pipeline::new().with_cache(FamilyCache::open(&dir).unwrap());
        p.add(LengthFamily).add(Resumable { computed: Arc::clone(&computed), fail_at });
        p.run_source(&items.as_slice(), 10, &|_| {})
    };
    // Killed in the fifth chunk (items 40..50): four chunks of each family are cached.
    let err = run(Some("item-45")).unwrap_err().to_string();
    assert!(err.contains("killed at item-45"), "{err}");
    assert_eq!(computed.swap(0, Ordering::SeqCst), 40);
    let resumed = run(None).unwrap();
    assert_eq!(computed.swap(0, Ordering::SeqCst), 50, "only the unfinished chunks are computed");
    assert!(matches!(resumed.runs[1].status, FamilyStatus::Computed { chunks_from_cache: 4, chunks: 9, cached_for_next_run: true, .. }), "{:?}", resumed.runs[1].status);
    // The length family had finished the fifth chunk before the other one failed on it.
    assert!(matches!(resumed.runs[0].status, FamilyStatus::Computed { chunks_from_cache: 5, chunks: 9, .. }), "{:?}", resumed.runs[0].status);
    assert_eq!(resumed.runs[1].notes, ["90 items scored"], "the cached chunks' notes are counted in");
    let again = run(None).unwrap();
    assert_eq!(computed.load(Ordering::SeqCst), 0);
    assert!(again.runs.iter().all(|r| matches!(r.status, FamilyStatus::Cached { .. })), "{:?}", again.runs);
    // The same table as a run that was never killed.
    let mut fresh = Pipeline::new();
    fresh.add(LengthFamily).add(Resumable { computed: Arc::clone(&computed), fail_at: None });
    assert_eq!(fresh.run(&items, &|_| {}).unwrap().table, again.table);
    let _ = std::fs::remove_dir_all(&dir);
}
