//! Graphs for uncovered utterances: each distinct text parsed once, appended to the run's file,
//! and a second run parses nothing (the external parser is a script playing one).
#![cfg(feature = "amr-parse")]
#![allow(clippy::panic)]

use dialeval_amr_parse::CommandAmrParser;
use dialeval_datasets::amr::AmrIndex;
use dialeval_eval::parse::ParseStore;

mod common;
use common::item;

#[test]
fn uncovered_utterances_are_parsed_once_and_kept() {
    let dir = std::env::temp_dir().join(format!("dialeval-eval-parse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let script = dialeval_testkit::workspace_dir().join("amr-parse/tests/fixtures/fake_parser.py");
    let parser = CommandAmrParser::new("python3", vec![script.display().to_string()]);
    let items = vec![item("1", "do you like tea", "yes green tea", "i do"), item("2", "do you like tea", "no", "i do")];
    let first = ParseStore::new(&parser, &dir).parse_missing(&items, &[], &|_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first.stats.sentences, 4, "distinct texts: the shared context and reference once");
    assert_eq!(first.stats.valid_first, 4);
    let index = AmrIndex::load(std::slice::from_ref(&first.file)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(index.len(), 4);
    assert!(index.by_text("yes green tea").is_some_and(|b| b.penman.contains(":quant 3")));
    let again = ParseStore::new(&parser, &dir).parse_missing(&items, &[], &|_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.stats.sentences, 0, "the second run parses nothing");
    assert_eq!(again.file, first.file);
    let broken = CommandAmrParser::new("/nonexistent/parser", Vec::new());
    let more = vec![item("3", "a new context", "a new response", "a new reference")];
    assert!(ParseStore::new(&broken, &dir).parse_missing(&more, &[], &|_, _| {}).is_err(), "a parser that fails on everything is an error");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_parser_identity_has_its_own_store() {
    let dir = std::env::temp_dir().join(format!("dialeval-eval-parse-identity-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let script = dialeval_testkit::workspace_dir().join("amr-parse/tests/fixtures/fake_parser.py");
    let one = CommandAmrParser::new("python3", vec![script.display().to_string()]);
    // The same script under another command line is another parser: its graphs are its own.
    let other = CommandAmrParser::new("python3", vec!["-B".into(), script.display().to_string()]);
    let items = vec![item("1", "do you like tea", "yes green tea", "i do")];
    let a = ParseStore::new(&one, &dir).parse_missing(&items, &[], &|_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let b = ParseStore::new(&other, &dir).parse_missing(&items, &[], &|_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(a.file, b.file);
    assert_eq!((a.stats.sentences, b.stats.sentences), (3, 3), "nothing reused across identities");
    let header = std::fs::read_to_string(&b.file).unwrap_or_else(|e| panic!("{e}"));
    assert!(header.starts_with(&format!("# ::parser-identity command python3 -B {}\n", script.display())), "{header}");
    // A store whose identity line names another parser is refused, not mixed.
    std::fs::write(&a.file, "# ::parser-identity command something-else\n\n").unwrap_or_else(|e| panic!("{e}"));
    let err = ParseStore::new(&one, &dir).parse_missing(&items, &[], &|_, _| {}).unwrap_err().to_string();
    assert!(err.contains("something-else") && err.contains("move it away"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
