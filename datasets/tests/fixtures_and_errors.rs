//! The GRADE and JSONL loaders on bundled fixtures, and typed errors naming the place for
//! malformed inputs of every loader.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::path::{Path, PathBuf};

use dialeval_datasets::{Criterion, Error, Place, ddpp, fed, grade, jsonl, usr};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(p)
}

fn temp(name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dialeval-datasets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

fn record_error(e: Error) -> (Place, String) {
    match e {
        Error::Record { place, problem, .. } => (place, problem),
        other => panic!("expected a record error, got {other}"),
    }
}

#[test]
fn grade_fixture_joins_judgements_with_lines() {
    let root = fixture("grade/evaluation");
    let items = grade::load(&root.join("eval_data/dailydialog/toy_model"), &root.join("human_score/human_judgement.json"), "dailydialog_EVAL", "toy_model").unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0].context.len(), 2);
    assert_eq!(items[0].references, ["Good , and you ?"]);
    assert_eq!(items[0].rating(Criterion::Coherence).unwrap().scores.len(), 10);
    assert_eq!(items[1].rating(Criterion::Coherence).unwrap().scores.len(), 8, "eight ratings stay eight");
    assert!((items[0].mean(Criterion::Coherence).unwrap() - 4.5).abs() < 1e-12);
    assert_eq!(items[0].id, "grade-dailydialog-toy_model-0");
}

#[test]
fn grade_release_reads_every_cell_or_a_chosen_one() {
    let root = fixture("grade/evaluation");
    let cells = grade::cells(&root).unwrap();
    assert_eq!(cells.iter().map(|c| format!("{}/{}", c.dataset, c.model)).collect::<Vec<_>>(), ["convai2/toy_model", "dailydialog/toy_model"]);
    let all = grade::load_release(&root, None, None).unwrap();
    assert_eq!(all.items.len(), 4);
    assert_eq!(all.cells.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(all.items[0].rating(Criterion::Coherence).unwrap().scores.len(), 11, "eleven ratings stay eleven");
    // The per-line means of human_score.txt agree with the judgements' ratings.
    for (cell, _) in &all.cells {
        let means = std::fs::read_to_string(root.join("human_score").join(&cell.dataset).join(&cell.model).join("human_score.txt")).unwrap();
        let items: Vec<_> = all.items.iter().filter(|i| i.id.starts_with(&format!("grade-{}-{}-", cell.dataset, cell.model))).collect();
        for (item, line) in items.iter().zip(means.lines()) {
            assert!((item.mean(Criterion::Coherence).unwrap() - line.parse::<f64>().unwrap()).abs() < 1e-5, "{}", item.id);
        }
    }
    let convai = grade::load_release(&root, Some("convai2"), None).unwrap();
    assert_eq!(convai.items.len(), 1);
    assert_eq!(convai.items[0].references, ["Me too , in the hills ."]);
    let err = grade::load_release(&root, Some("empathetic"), None).unwrap_err().to_string();
    assert!(err.contains("no cell") && err.contains("convai2/toy_model"), "{err}");
}

#[test]
fn grade_mismatched_line_counts_are_an_error() {
    let dir = std::env::temp_dir().join(format!("dialeval-grade-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("human_ctx.txt"), "a|||b\nc|||d\n").unwrap();
    std::fs::write(dir.join("human_hyp.txt"), "x\n").unwrap();
    std::fs::write(dir.join("human_ref.txt"), "y\nz\n").unwrap();
    let err = grade::load_model_dir(&dir).unwrap_err();
    assert!(err.to_string().contains("human_hyp.txt") && err.to_string().contains("1 lines"), "{err}");
}

#[test]
fn jsonl_fixture_and_errors() {
    let items = jsonl::load(&fixture("user.jsonl")).unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].rating(Criterion::Coherence).unwrap().scores, [Some(4.0), Some(5.0)]);
    assert_eq!(items[0].quality("fluency").unwrap().scores, [Some(5.0), None]);
    assert_eq!(items[1].id, "line-2");
    assert!(items[1].context[0].amr.is_some());

    let bad = temp("bad.jsonl", "{\"context\": [\"hi\"], \"response\": \"yo\"}\n{\"context\": [\"hi\", 3]}\n");
    let mut results: Vec<_> = jsonl::read(&bad).unwrap().collect();
    let second = results.pop().unwrap();
    assert!(results[0].is_ok());
    let (place, problem) = record_error(second.unwrap_err());
    assert_eq!(place, Place::LineJson(2, "$.context[1]".into()));
    assert!(problem.contains("found a number"), "{problem}");

    let truncated = temp("truncated.jsonl", "{\"context\": [\"hi\"]\n");
    let err = jsonl::load(&truncated).unwrap_err();
    assert!(matches!(err, Error::Json { place: Place::Line(1), .. }), "{err}");
}

#[test]
fn usr_errors_name_the_json_path() {
    let missing = temp("usr-missing.json", r#"[{"context": "a\nb", "annotators": ["x"], "responses": [{"response": "r", "Natural": [3]}]}]"#);
    let (place, problem) = record_error(usr::load(&missing).unwrap_err());
    assert_eq!(place, Place::Json("[0].responses[0]".into()));
    assert!(problem.contains("`model`"));

    let wrong = temp("usr-type.json", r#"[{"context": "a", "annotators": ["x", "y"], "responses": [{"response": "r", "model": "m", "Natural": [3, "high"]}]}]"#);
    let (place, _) = record_error(usr::load(&wrong).unwrap_err());
    assert_eq!(place, Place::Json("[0].responses[0].Natural[1]".into()));

    let short = temp("usr-short.json", r#"[{"context": "a", "annotators": ["x", "y"], "responses": [{"response": "r", "model": "m", "Natural": [3]}]}]"#);
    let (_, problem) = record_error(usr::load(&short).unwrap_err());
    assert!(problem.contains("1 scores for 2 annotators"));

    let truncated = temp("usr-trunc.json", r#"[{"context": "a", "annotators": ["#);
    assert!(matches!(usr::load(&truncated).unwrap_err(), Error::Json { .. }));
}

#[test]
fn fed_rejects_non_na_strings_but_keeps_na_as_missing() {
    let ok = temp("fed-ok.json", r#"[{"context": "User: hi", "system": "Meena", "annotations": {"Coherent": ["N/A (no error)", 2]}}]"#);
    let f = fed::load(&ok).unwrap();
    assert_eq!(f.dialogues[0].rating(Criterion::Coherence).unwrap().scores, [None, Some(2.0)]);
    let bad = temp("fed-bad.json", r#"[{"context": "User: hi", "response": "System: yo", "system": "Meena", "annotations": {"Fluent": ["great"]}}]"#);
    let (place, _) = record_error(fed::load(&bad).unwrap_err());
    assert_eq!(place, Place::Json("[0].annotations.Fluent[0]".into()));
}

#[test]
fn dailydialog_errors_name_the_line() {
    let bad = temp(
        "ddpp.json",
        "{\"id\": 1, \"context\": [\"a\"], \"positive_responses\": [\"b\"], \"random_negative_responses\": [\"c\"], \"adversarial_negative_responses\": [\"d\"]}\n{\"id\": 2, \"context\": [\"a\"]}\n",
    );
    let items: Vec<_> = ddpp::read(&bad).unwrap().collect();
    assert!(items[0].is_ok());
    let err = items.into_iter().nth(1).unwrap().unwrap_err();
    assert!(err.to_string().contains(":2") && err.to_string().contains("positive_responses"), "{err}");
    let tsv = temp("exclude.tsv", "file\tid\ndev.json\tseven\n");
    let (place, _) = record_error(ddpp::ExcludeList::load(&tsv).unwrap_err());
    assert_eq!(place, Place::Line(2));
}
