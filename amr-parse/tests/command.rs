//! CommandAmrParser against a script that plays a parser (tests/fixtures/fake_parser.py).
#![allow(clippy::panic, clippy::unwrap_used)]

use dialeval_amr_parse::{AmrParser, CommandAmrParser, Error};

fn parser(extra: &[&str]) -> CommandAmrParser {
    let script = dialeval_testkit::package_dir(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_parser.py");
    CommandAmrParser::new("python3", std::iter::once(script.to_string_lossy().into_owned()).chain(extra.iter().map(|s| (*s).to_owned())).collect())
}

#[test]
fn one_validated_graph_per_sentence_in_order() {
    let results = parser(&[]).parse_batch(&["hello there friend", "...", "ok", "this one is unparseable", "a badrole here"]);
    assert_eq!(results.len(), 5);
    let first = results[0].as_ref().unwrap();
    assert!(first.penman.contains(":quant 3") && first.penman.contains("\"hello\""), "{}", first.penman);
    assert_eq!(results[1].as_ref().unwrap().penman, "(a / amr-empty)", "no letters: the minimal graph, not sent to the parser");
    assert!(results[2].as_ref().unwrap().penman.contains(":quant 1"), "the parser kept its order after the skipped sentence");
    assert!(matches!(&results[3], Err(Error::Command { problem, .. }) if problem.contains("no parse")), "{:?}", results[3].as_ref().err());
    assert!(matches!(&results[4], Err(Error::Invalid { .. })), "an invalid graph never passes: {:?}", results[4].as_ref().err().map(ToString::to_string));
}

#[test]
fn protocol_breaks_are_errors_of_the_batch() {
    let short = parser(&["--drop-last"]).parse_batch(&["one", "two"]);
    assert!(short.iter().all(|r| matches!(r, Err(Error::Command { problem, .. }) if problem.contains("1 blocks for 2 sentences"))), "{short:?}");
    let failed = parser(&["--exit", "3"]).parse_batch(&["one"]);
    assert!(matches!(&failed[0], Err(Error::Command { problem, .. }) if problem.contains("asked to fail")), "{failed:?}");
    let missing = CommandAmrParser::new("/nonexistent/parser", Vec::new()).parse_batch(&["one"]);
    assert!(matches!(&missing[0], Err(Error::Command { problem, .. }) if problem.contains("cannot start")), "{missing:?}");
}
