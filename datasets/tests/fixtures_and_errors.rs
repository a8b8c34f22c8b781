//! The GRADE and JSONL loaders on bundled fixtures, and typed errors naming the place for
//! malformed inputs of every loader.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::path::PathBuf;

use dialeval_datasets::{Criterion, Error, Place, ddpp, fed, grade, jsonl, usr};

fn fixture(p: &str) -> PathBuf {
    dialeval_testkit::package_dir(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(p)
}

fn temp(name: &str, content: &str) -> PathBuf {
    temp_bytes(name, content.as_bytes())
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
    assert_eq!(cells.iter().map(|c| format!("{}/{}", c.dataset, c.model)).collect::<Vec<_>>(), ["convai2/bert_ranker", "convai2/toy_model", "dailydialog/toy_model"]);
    let all = grade::load_release(&root, None, None).unwrap();
    assert_eq!(all.items.len(), 7);
    assert_eq!(all.cells.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [2, 2, 3]);
    // As released, IDs run on across cells (0-2 dailydialog, 3-4 bert_ranker, 5-6 toy_model):
    // an item's line is its rank in its cell's block, so ID 5 is convai2/toy_model's first line.
    let ids: Vec<&str> = all.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids[..4], ["grade-convai2-bert_ranker-0", "grade-convai2-bert_ranker-1", "grade-convai2-toy_model-0", "grade-convai2-toy_model-1"]);
    assert_eq!(all.items[2].response.as_ref().unwrap().text, "Where do you hike ?");
    assert_eq!(all.items[2].references, ["Me too , in the hills ."]);
    assert_eq!(all.items[1].context[0].text, "Do you read ?");
    let counts: Vec<usize> = all.items.iter().map(|i| i.rating(Criterion::Coherence).unwrap().scores.len()).collect();
    assert_eq!(counts, [9, 11, 11, 8, 10, 8, 10], "each item keeps exactly its 8 to 11 ratings");
    // The per-line means of human_score.txt agree with the judgements' ratings.
    for (cell, n) in &all.cells {
        let means = std::fs::read_to_string(root.join("human_score").join(&cell.dataset).join(&cell.model).join("human_score.txt")).unwrap();
        let items: Vec<_> = all.items.iter().filter(|i| i.id.starts_with(&format!("grade-{}-{}-", cell.dataset, cell.model))).collect();
        assert_eq!((items.len(), means.lines().count()), (*n, *n));
        for (item, line) in items.iter().zip(means.lines()) {
            assert!((item.mean(Criterion::Coherence).unwrap() - line.parse::<f64>().unwrap()).abs() < 1e-5, "{}", item.id);
        }
    }
    let convai = grade::load_release(&root, Some("convai2"), None).unwrap();
    assert_eq!(convai.items.len(), 4);
    let ranker = grade::load_release(&root, None, Some("bert_ranker")).unwrap();
    assert_eq!(ranker.items.iter().map(|i| i.system.as_deref().unwrap()).collect::<Vec<_>>(), ["bert_ranker", "bert_ranker"]);
    let err = grade::load_release(&root, Some("empathetic"), None).unwrap_err().to_string();
    assert!(err.contains("no cell") && err.contains("convai2/toy_model"), "{err}");
    let one = grade::load(&root.join("eval_data/convai2/toy_model"), &root.join("human_score/human_judgement.json"), "convai2_EVAL", "toy_model").unwrap();
    assert_eq!(one.iter().map(|i| i.response.as_ref().unwrap().text.as_str()).collect::<Vec<_>>(), ["Where do you hike ?", "Rex is a nice name ."]);
}

/// A copy of the fixture release whose judgement file is `judgements`.
fn grade_copy(name: &str, judgements: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dialeval-grade-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for cell in ["convai2/bert_ranker", "convai2/toy_model", "dailydialog/toy_model"] {
        let (from, to) = (fixture("grade/evaluation/eval_data").join(cell), dir.join("eval_data").join(cell));
        std::fs::create_dir_all(&to).unwrap();
        for f in ["human_ctx.txt", "human_hyp.txt", "human_ref.txt"] {
            std::fs::copy(from.join(f), to.join(f)).unwrap();
        }
    }
    std::fs::create_dir_all(dir.join("human_score")).unwrap();
    std::fs::write(dir.join("human_score/human_judgement.json"), judgements).unwrap();
    dir
}

#[test]
fn grade_judgement_blocks_ids_and_responses_are_checked() {
    let entry = |id: usize, model: &str, response: &str| {
        format!(r#"{{"ID": {id}, "Dataset": "convai2_EVAL", "DialogModel": "{model}", "Context": "c", "Response": "{response}", "HumanScores": [3, 4, 3, 4, 3, 4, 3, 4]}}"#)
    };
    let file = |entries: &[String]| format!("[{}]", entries.join(",\n"));
    // A cell that resumes after another cell's block: its lines would be ambiguous.
    let split = grade_copy("split", &file(&[entry(0, "toy_model", "Where do you hike ?"), entry(1, "bert_ranker", "I love fresh bread ."), entry(2, "toy_model", "Rex is a nice name .")]));
    let err = grade::load_release(&split, None, None).unwrap_err();
    let (place, problem) = record_error(err);
    assert_eq!(place, Place::Json("[2]".into()));
    assert!(problem.contains("convai2_EVAL/toy_model") && problem.contains("contiguous"), "{problem}");
    // A duplicate ID.
    let dup = grade_copy("dup", &file(&[entry(7, "toy_model", "Where do you hike ?"), entry(7, "toy_model", "Rex is a nice name .")]));
    let problem = record_error(grade::load_release(&dup, None, None).unwrap_err()).1;
    assert!(problem.contains("duplicate ID 7"), "{problem}");
    // The response check guards the join: a block in the wrong order is caught.
    let swapped = grade_copy("swapped", &file(&[entry(0, "toy_model", "Rex is a nice name ."), entry(1, "toy_model", "Where do you hike ?")]));
    let (place, problem) = record_error(grade::load_release(&swapped, None, None).unwrap_err());
    assert_eq!(place, Place::Json("ID 0 (convai2_EVAL/toy_model judgement 1)".into()));
    assert!(problem.contains("line 1 of") && problem.contains("human_hyp.txt"), "{problem}");
    // A block longer than its folder names the missing line.
    let long = grade_copy("long", &file(&[entry(10, "bert_ranker", "I love fresh bread ."), entry(11, "bert_ranker", "I like the weather ."), entry(12, "bert_ranker", "x")]));
    let problem = record_error(grade::load_release(&long, None, None).unwrap_err()).1;
    assert!(problem.contains("no line 3") && problem.contains("2 lines"), "{problem}");
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
fn jsonl_is_strict_about_keys_ids_and_emptiness() {
    let misspelt = temp("misspelt.jsonl", "{\"id\": \"a\", \"context\": [\"hi\"], \"response\": \"yo\", \"ratngs\": {\"coherence\": [4]}}\n");
    let (place, problem) = record_error(jsonl::load(&misspelt).unwrap_err());
    assert_eq!(place, Place::LineJson(1, "$.ratngs".into()));
    assert!(problem.contains("unknown key \"ratngs\"") && problem.contains("did you mean \"ratings\""), "{problem}");
    let odd = temp("odd-key.jsonl", "{\"context\": [\"hi\"], \"zzzzzzzz\": 1}\n");
    assert!(record_error(jsonl::load(&odd).unwrap_err()).1.contains("known keys: id, context"));

    let dup = temp("dup.jsonl", "{\"id\": 7, \"context\": [\"a\"], \"response\": \"b\"}\n{\"id\": \"x\", \"context\": [\"c\"]}\n{\"id\": \"7\", \"context\": [\"d\"]}\n");
    let (place, problem) = record_error(jsonl::load(&dup).unwrap_err());
    assert_eq!(place, Place::LineJson(3, "$.id".into()));
    assert!(problem.contains("duplicate id \"7\"") && problem.contains("line 1"), "{problem}");

    for (name, text) in [("empty.jsonl", ""), ("blank.jsonl", "\n  \n")] {
        let (place, problem) = record_error(jsonl::load(&temp(name, text)).unwrap_err());
        assert_eq!(place, Place::File);
        assert!(problem.contains("no items"), "{problem}");
    }

    // No response and an empty one stay apart.
    let responses = temp("responses.jsonl", "{\"id\": 1, \"context\": [\"a\"]}\n{\"id\": 2, \"context\": [\"a\"], \"response\": null}\n{\"id\": 3, \"context\": [\"a\"], \"response\": \"\"}\n");
    let items = jsonl::load(&responses).unwrap();
    assert_eq!(items[0].response, None);
    assert_eq!(items[1].response, None);
    assert_eq!(items[2].response.as_ref().map(|t| t.text.as_str()), Some(""));
}

fn temp_bytes(name: &str, content: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dialeval-datasets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

#[test]
fn a_byte_order_mark_is_read_past_and_invalid_utf8_is_located() {
    let line = "{\"id\": \"a\", \"context\": [\"hi\"], \"response\": \"yo\"}\n";
    let with_bom = temp_bytes("bom.jsonl", &[b"\xef\xbb\xbf".as_slice(), line.as_bytes()].concat());
    assert_eq!(jsonl::load(&with_bom).unwrap()[0].id, "a");
    let usr_bom = temp_bytes("usr-bom.json", &[b"\xef\xbb\xbf".as_slice(), br#"[{"context": "a", "annotators": ["x"], "responses": [{"response": "r", "model": "m", "Natural": [3]}]}]"#].concat());
    assert_eq!(usr::load(&usr_bom).unwrap().len(), 1);
    // Line 2, after `{"id": "b", "context": ["hé` (27 characters, the last of two bytes): column 28.
    let bad = [line.as_bytes(), "{\"id\": \"b\", \"context\": [\"hé".as_bytes(), b"\xff\"]}\n"].concat();
    let (place, problem) = record_error(jsonl::load(&temp_bytes("bad-utf8.jsonl", &bad)).unwrap_err());
    assert_eq!(place, Place::LineColumn(2, 28));
    assert!(problem.contains("invalid UTF-8 (byte 0xff)"), "{problem}");
    let (place, _) = record_error(usr::load(&temp_bytes("usr-bad-utf8.json", b"[\n  {\"context\": \"a\xc3\"}]")).unwrap_err());
    assert_eq!(place, Place::LineColumn(2, 17));
}

#[test]
fn ratings_are_finite_and_their_mean_does_not_overflow() {
    let huge = temp("huge-ratings.jsonl", "{\"id\": \"a\", \"context\": [\"hi\"], \"response\": \"yo\", \"ratings\": {\"overall\": [1e308, 1e308]}}\n");
    assert_eq!(jsonl::load(&huge).unwrap()[0].mean(Criterion::Overall), Some(1e308));
    let out_of_range =
        temp("inf-ratings.jsonl", "{\"id\": \"a\", \"context\": [\"hi\"], \"response\": \"yo\"}\n{\"id\": \"b\", \"context\": [\"hi\"], \"response\": \"yo\", \"ratings\": {\"overall\": [1e999]}}\n");
    let err = jsonl::load(&out_of_range).unwrap_err().to_string();
    assert!(err.contains("inf-ratings.jsonl:2"), "the item's line is named: {err}");
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
