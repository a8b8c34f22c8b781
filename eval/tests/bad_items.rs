//! One bad item is one empty cell: a malformed response graph, a malformed reference graph,
//! a malformed block in an AMR side file, an empty response and an empty reference each leave
//! their item unscored with a named note, and the run completes with every other item scored.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::sync::Arc;

use dialeval_common::Criterion;
use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::{DialogueItem, Rating};
use dialeval_eval::families::{EmbeddingFamily, LengthFamily, LexicalFamily, MemoEmbedder, SmatchFamily};
use dialeval_eval::{Analysis, FamilyStatus, HumanScores, Pipeline};

mod common;
use common::{WordHash, item};

fn rated(mut i: DialogueItem, overall: f64) -> DialogueItem {
    i.ratings = vec![Rating { quality: "overall".into(), criterion: Some(Criterion::Overall), scores: vec![Some(overall)] }];
    i
}

#[test]
fn a_corpus_with_bad_items_completes_and_names_them() {
    let dir = std::env::temp_dir().join(format!("dialeval-eval-bad-items-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let amr = dir.join("refs.amr.txt");
    // Block 2 (line 5) is cut off; block 4 repeats a variable, which only Smatch's reader sees.
    std::fs::write(
        &amr,
        "# ::id r1\n# ::snt we stayed home\n(s / stay-01 :ARG1 (w / we) :location (h / home))\n\n\
         # ::id r2\n# ::snt a cut graph\n(c / cut-01 :ARG1 (g / graph)\n\n\
         # ::id r3\n# ::snt i went to the beach\n(g / go-02 :ARG0 (i / i) :ARG4 (b / beach))\n\n\
         # ::id r4\n# ::snt nothing much today\n(n / nothing :degree (n / much))\n",
    )
    .unwrap();
    assert!(AmrIndex::load(std::slice::from_ref(&amr)).unwrap_err().to_string().contains("refs.amr.txt:5"), "strict: an error naming file and line");
    let index = AmrIndex::load_lenient(std::slice::from_ref(&amr)).unwrap();
    assert_eq!(index.len(), 3, "the other graphs are served");
    assert_eq!(index.malformed.len(), 1);
    assert_eq!(index.malformed[0].line, 5);

    let mut items = vec![
        rated(item("good", "what did you do", "i went to the beach", "we stayed home"), 4.0),
        rated(item("bad-response-graph", "and then", "we stayed home", "i went to the beach"), 3.0),
        rated(item("bad-reference-graph", "anything else", "i went to the beach", "nothing much today"), 2.0),
        rated(item("empty-response", "hello", " ", "we stayed home"), 1.0),
        rated(item("empty-reference", "hi", "i went to the beach", ""), 5.0),
        rated(item("plain", "how are you", "fine thanks and you", "good thanks"), 3.5),
    ];
    index.attach(&mut items);
    items[1].response.as_mut().unwrap().amr = Some("(s / stay-01 :ARG1 ())".into());

    let mut pipeline = Pipeline::new();
    pipeline.add(LengthFamily);
    pipeline.add(LexicalFamily::new().unwrap());
    pipeline.add(EmbeddingFamily::new(Arc::new(MemoEmbedder::new(WordHash, "word-hash"))));
    pipeline.add(SmatchFamily::new(&index, std::slice::from_ref(&amr), Default::default()).unwrap());
    let scored = pipeline.run(&items, &|_| {}).unwrap();
    assert!(scored.runs.iter().all(|r| matches!(r.status, FamilyStatus::Computed { .. })), "{:?}", scored.runs);

    let column = |m: &str| scored.table.columns().iter().find(|c| c.metric.as_str() == m).unwrap().values.clone();
    let smatch = column("Smatch");
    assert!(smatch[0].is_some(), "the good item is scored");
    assert_eq!(smatch[1..3], [None, None], "malformed response / reference graph: empty cells");
    for metric in ["BLEU-4", "ROUGE-L", "BERTScore-F1", "Greedy-Matching"] {
        let v = column(metric);
        assert!(v[0].is_some() && v[5].is_some(), "{metric}");
        assert_eq!(v[3..5], [None, None], "{metric}: empty response / reference are empty cells");
    }

    let notes = |family: &str| scored.runs.iter().find(|r| r.family == family).unwrap().notes.join("\n");
    let smatch_notes = notes("smatch");
    assert!(smatch_notes.contains("1 malformed blocks of the AMR files were skipped") && smatch_notes.contains("refs.amr.txt:5"), "{smatch_notes}");
    assert!(smatch_notes.contains("2 items with a malformed graph are not scored"), "{smatch_notes}");
    assert!(smatch_notes.contains("bad-response-graph: response graph") && smatch_notes.contains("bad-reference-graph: reference 1 graph"), "{smatch_notes}");
    for family in ["lexical", "embedding"] {
        let n = notes(family);
        assert!(n.contains("1 items with an empty response are not scored: empty-response"), "{family}: {n}");
        assert!(n.contains("1 items with an empty reference are not scored: empty-reference"), "{family}: {n}");
    }

    // The report shows the counts.
    let human = HumanScores::of(&items);
    let lengths: Vec<Option<f64>> = items.iter().map(|i| i.response.as_ref().map(|r| dialeval_common::word_count(&r.text) as f64)).collect();
    let systems = vec![None; items.len()];
    let config = dialeval_metrics::report::ReportConfig { bootstrap: None, ..Default::default() };
    let analysis = Analysis::of(&scored.table, &human, &systems, &lengths, &config).unwrap();
    let out = dir.join("out");
    dialeval_eval::write::write_all(&out, &scored.rows, &scored.table, &human, &analysis, &scored.runs).unwrap();
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("2 items with a malformed graph are not scored") && report.contains("1 items with an empty response are not scored"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}
