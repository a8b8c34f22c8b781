//! One bad item is one empty cell: a malformed response graph, a malformed reference graph,
//! a malformed block in an AMR side file, an empty response and an empty reference each leave
//! their item unscored with a named note, and the run completes with every other item scored.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::sync::Arc;

use dialeval_common::Criterion;
use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::{DialogueItem, Rating};
use dialeval_eval::families::{EmbeddingFamily, LengthFamily, LexicalFamily, MemoEmbedder, SmatchFamily, SpecificityFamily};
use dialeval_eval::{FamilyStatus, Pipeline, Report};

mod common;
use common::{WordHash, item};

fn rated(mut i: DialogueItem, overall: f64) -> DialogueItem {
    i.ratings = vec![Rating { quality: "overall".into(), criterion: Some(Criterion::Overall), scores: vec![Some(overall)] }];
    i
}

#[test]
fn a_corpus_with_bad_items_completes_and_names_them() {
    let dir = common::temp("eval", "bad-items");
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
    let config = dialeval_metrics::report::ReportConfig { bootstrap: None, ..Default::default() };
    let out = dir.join("out");
    Report::analyse(scored, &config, &|_| {}).unwrap().write(&out).unwrap();
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("2 items with a malformed graph are not scored") && report.contains("1 items with an empty response are not scored"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hostile_graphs_blank_texts_and_huge_ratings_leave_named_empty_cells() {
    use dialeval_eval::Evaluation;
    let dir = common::temp("eval", "hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let amr = dir.join("refs.amr.txt");
    // A reference graph 20,000 levels deep (a malformed block: skipped and named), and a good one.
    std::fs::write(
        &amr,
        format!("# ::id deep-ref\n# ::snt a deep reference\n{}\n\n# ::id r1\n# ::snt we stayed home\n(s / stay-01 :ARG1 (w / we) :location (h / home))\n", dialeval_testkit::penman_chain(20_000)),
    )
    .unwrap();
    let index = AmrIndex::load_lenient(std::slice::from_ref(&amr)).unwrap();
    assert_eq!(index.malformed.len(), 1);
    assert!(index.malformed[0].to_string().contains("refs.amr.txt:1: the graph is nested 20000 levels deep (the limit is 512) (::id deep-ref)"), "{}", index.malformed[0]);
    assert!(AmrIndex::load(std::slice::from_ref(&amr)).is_err(), "strict: an error");

    let mut items: Vec<DialogueItem> =
        (0..8).map(|k| rated(item(&format!("plain-{k}"), "what did you do", &format!("we stayed home {}", "and slept ".repeat(k)), "we stayed home"), 1.0 + k as f64 * 0.5)).collect();
    items.push(rated(item("deep-response", "and then", "we stayed home", "we stayed home"), 2.5));
    items.push(rated(item("blank-response", "hello", "  \t", "we stayed home"), 1.0));
    let mut no_context = rated(item("no-context", "", "we stayed home", "we stayed home"), 3.0);
    no_context.context.clear();
    items.push(no_context);
    let mut huge = rated(item("huge-rating", "hi", "we stayed home and more", "we stayed home"), 0.0);
    huge.ratings[0].scores = vec![Some(1e308), Some(1e308)];
    items.push(huge);
    items.push(rated(item("wordless-response", "really?", "?!...", "we stayed home"), 2.0));
    index.attach(&mut items);
    // A response graph as deep, given inline (as a JSONL corpus may): the item's Smatch cell is
    // empty and named; nothing overflows the stack.
    items[8].response.as_mut().unwrap().amr = Some(dialeval_testkit::penman_chain(100_000));

    let mut pipeline = Pipeline::new();
    pipeline.add(LengthFamily);
    pipeline.add(SpecificityFamily::new().unwrap());
    pipeline.add(LexicalFamily::new().unwrap());
    pipeline.add(EmbeddingFamily::new(Arc::new(MemoEmbedder::new(WordHash, "word-hash"))));
    pipeline.add(SmatchFamily::new(&index, std::slice::from_ref(&amr), Default::default()).unwrap());
    let config = dialeval_metrics::report::ReportConfig { bootstrap: None, ..Default::default() };
    let done = Evaluation::of(&items).pipeline(pipeline).analysis(config).run().unwrap();
    let column = |m: &str| done.table.columns().iter().find(|c| c.metric.as_str() == m).unwrap().values.clone();
    assert!(column("Smatch")[0].is_some());
    assert_eq!(column("Smatch")[8], None, "the deep response graph");
    for metric in ["Length (words)", "NIDF", "BLEU-4", "BERTScore-F1", "Smatch"] {
        assert_eq!(column(metric)[9], None, "{metric}: a blank response is an empty cell");
    }
    assert_eq!(column("NIDF")[12], None, "a response without a word has no specificity");
    assert!(column("NIDF")[..9].iter().all(|v| v.is_some_and(|v| (0.0..=1.0).contains(&v))));
    let notes = |family: &str| done.runs.iter().find(|r| r.family == family).unwrap().notes.join("\n");
    assert!(notes("smatch").contains("deep-response: response graph: graph nested deeper than 512 levels"), "{}", notes("smatch"));
    assert!(notes("smatch").contains("refs.amr.txt:1") && notes("smatch").contains("deep-ref"), "{}", notes("smatch"));
    for family in ["length", "specificity", "lexical", "embedding", "smatch"] {
        assert!(notes(family).contains("1 items with an empty response are not scored: blank-response"), "{family}: {}", notes(family));
    }
    assert!(notes("specificity").contains("1 items whose response has no word are not scored: wordless-response"), "{}", notes("specificity"));
    // The huge ratings are kept (their mean is 1e308, not infinity): every output has n = 13.
    let human = done.human.qualities.iter().find(|(q, _)| q.name() == "Overall").unwrap();
    assert_eq!(human.1[11], Some(1e308));
    let out = dir.join("out");
    done.write(&out).unwrap();
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("correlations.json")).unwrap()).unwrap();
    let length_rows: Vec<&serde_json::Value> = json["turn_level"]["rows"].as_array().unwrap().iter().filter(|r| r["metric"] == "Length (words)" && r["criterion"] == "Overall").collect();
    assert!(!length_rows.is_empty() && length_rows.iter().all(|r| r["n"] == 12), "the blank response is the one item left out: {length_rows:?}");
    let md = std::fs::read_to_string(out.join("correlations.md")).unwrap();
    assert!(md.contains("n = 12") || md.contains("| 12 |"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A response and reference too long for ROUGE-L's LCS table (issue 53: it once ran for minutes
/// and could not be stopped) leave that one ROUGE-L cell empty, named in a note; BLEU still
/// scores the item and the other items are scored.
#[test]
fn a_pair_too_long_for_rouge_l_is_one_empty_cell_with_a_note() {
    let words = "word ".repeat(20_001);
    let items = vec![
        rated(item("short", "what did you do", "i went to the beach", "we stayed home"), 4.0),
        rated(item("very-long", "tell me everything", &words, &words), 3.0),
        rated(item("plain", "how are you", "fine thanks and you", "good thanks"), 2.0),
    ];
    let mut pipeline = Pipeline::new();
    pipeline.add(LexicalFamily::new().unwrap());
    let started = std::time::Instant::now();
    let scored = pipeline.run(&items, &|_| {}).unwrap();
    let rouge = scored.table.column(&"ROUGE-L".into()).unwrap();
    assert!(rouge.values[0].is_some() && rouge.values[1].is_none() && rouge.values[2].is_some(), "{:?}", rouge.values);
    assert!(scored.table.column(&"BLEU-4".into()).unwrap().values[1].is_some());
    let notes = &scored.runs[0].notes;
    assert!(notes.iter().any(|n| n.starts_with("ROUGE-L: 1 items are too long for its LCS table") && n.ends_with("very-long")), "{notes:?}");
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}
