//! The command under hostile use (issue 53): settings out of range are the library's typed
//! errors, a pipe or FIFO is read once, a file of zeros fails at its first byte, and Smatch's
//! and text-metrics' corpus results count what failed (a run where nothing could be read
//! exits non-zero).
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn dialeval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dialeval")).args(args).current_dir(dialeval_testkit::workspace_dir()).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dialeval-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every family that needs no model, endpoint or graph is left out but length, specificity and
/// lexical: a fast main job.
const SKIP: &str = "embedding,context_cosine,bert_ruber,slm,fine_tuned,smatch,llm";

const ITEMS: &str = "{\"id\": \"a\", \"context\": [\"do you like tea?\"], \"response\": \"yes, green tea\", \"references\": [\"i do\"], \"ratings\": {\"overall\": [4]}}\n\
{\"id\": \"b\", \"context\": [\"where do you live?\"], \"response\": \"by the sea\", \"references\": [\"in a city\"], \"ratings\": {\"overall\": [2]}}\n\
{\"id\": \"c\", \"context\": [\"any pets?\"], \"response\": \"two cats\", \"references\": [\"a dog\"], \"ratings\": {\"overall\": [3]}}\n";

fn evaluate(input: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["evaluate", "--corpus", "jsonl", "--input", input, "--out", out.to_str().unwrap(), "--skip", SKIP];
    if !extra.contains(&"--bootstrap") {
        args.extend(["--bootstrap", "0"]);
    }
    args.extend(extra);
    dialeval(&args)
}

#[test]
fn settings_out_of_range_are_the_librarys_errors() {
    let dir = temp("settings");
    let input = dir.join("items.jsonl");
    std::fs::write(&input, ITEMS).unwrap();
    let zero = evaluate(input.to_str().unwrap(), &dir.join("out"), &["--chunk", "0"]);
    assert!(!zero.status.success() && stderr(&zero).contains("chunk = 0: expected at least 1 item per chunk"), "{}", stderr(&zero));
    let one = evaluate(input.to_str().unwrap(), &dir.join("out"), &["--bootstrap", "1"]);
    assert!(!one.status.success() && stderr(&one).contains("bootstrap = 1:"), "{}", stderr(&one));
    let scores = dir.join("scores.jsonl");
    std::fs::write(&scores, "{\"a\": 1, \"b\": 2}\n{\"a\": 2, \"b\": 1}\n{\"a\": 3, \"b\": 3}\n{\"a\": 4, \"b\": 5}\n").unwrap();
    for bad in ["7", "0", "1", "-0.5", "NaN"] {
        let out = dialeval(&["correlate", scores.to_str().unwrap(), "--x", "a", "--y", "b", &format!("--confidence={bad}")]);
        assert!(!out.status.success() && stderr(&out).contains(&format!("confidence = {bad}")), "--confidence {bad}: {}", stderr(&out));
    }
    let fine = dialeval(&["correlate", scores.to_str().unwrap(), "--x", "a", "--y", "b", "--confidence", "0.9"]);
    assert!(fine.status.success(), "{}", stderr(&fine));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pipes_and_fifos_are_read_once_and_zeros_fail_at_once() {
    let dir = temp("pipes");
    // Standard input (a pipe): what `--input <(cat items.jsonl)` hands the command.
    let mut child = Command::new(env!("CARGO_BIN_EXE_dialeval"))
        .args(["evaluate", "--corpus", "jsonl", "--input", "/dev/stdin", "--out", dir.join("stdin").to_str().unwrap(), "--skip", SKIP, "--bootstrap", "0"])
        .current_dir(dialeval_testkit::workspace_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(ITEMS.as_bytes()).unwrap();
    let piped = child.wait_with_output().unwrap();
    assert!(piped.status.success(), "{}", stderr(&piped));
    let scores = std::fs::read_to_string(dir.join("stdin/scores.jsonl")).unwrap();
    assert_eq!(scores.lines().count(), 3, "{scores}");
    // A named FIFO, written once by another process.
    let fifo = dir.join("items.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, ITEMS))
    };
    let named = evaluate(fifo.to_str().unwrap(), &dir.join("fifo"), &[]);
    writer.join().unwrap().unwrap();
    assert!(named.status.success(), "{}", stderr(&named));
    assert_eq!(std::fs::read(dir.join("fifo/scores.jsonl")).unwrap(), scores.as_bytes(), "the same scores as from the pipe");
    // An endless file of zeros fails at its first byte.
    let started = std::time::Instant::now();
    let zeros = evaluate("/dev/zero", &dir.join("zero"), &[]);
    assert!(!zeros.status.success() && stderr(&zeros).contains("/dev/zero:1") && stderr(&zeros).contains("found byte 0x00"), "{}", stderr(&zeros));
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn smatch_counts_a_failed_pair_against_the_corpus_score() {
    let dir = temp("smatch");
    let (test, gold) = (dir.join("test.amr"), dir.join("gold.amr"));
    std::fs::write(&gold, "(w / want-01 :ARG0 (b / boy))\n\n(c / cat :mod (b / big))\n").unwrap();
    std::fs::write(&test, "(w / want-01 :ARG0 (b / boy))\n\n(c / cat :mod (b / \n").unwrap();
    let out = dialeval(&["smatch", test.to_str().unwrap(), gold.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let corpus = &lines.last().unwrap()["corpus"];
    assert_eq!(corpus["pairs_failed"], 1);
    // The good pair's 4 triples match; the failed pair's 4 gold triples stay in the recall.
    assert_eq!((corpus["match"].as_u64(), corpus["test_triples"].as_u64(), corpus["gold_triples"].as_u64()), (Some(4), Some(4), Some(8)), "{corpus}");
    assert!(corpus["f1"].as_f64().unwrap() < 1.0, "{corpus}");
    assert!(stderr(&out).contains("1 of 2 pairs could not be read"), "{}", stderr(&out));
    std::fs::write(&test, "(w / want-01 :ARG0 \n\n(c / \n").unwrap();
    let none = dialeval(&["smatch", test.to_str().unwrap(), gold.to_str().unwrap()]);
    assert!(!none.status.success() && stderr(&none).contains("no pair could be read"), "{}", stderr(&none));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn text_metrics_without_a_valid_line_exits_non_zero() {
    if dialeval_metrics::text::wordnet::WordNet::locate().is_err() {
        // METEOR needs WordNet: without it the command fails before reading the file.
        assert!(std::env::var("DIALEVAL_REQUIRE_SHARED").is_err(), "WordNet 3.0 is required in CI");
        return;
    }
    let dir = temp("text");
    let pairs = dir.join("pairs.jsonl");
    std::fs::write(&pairs, "{\"hypothesis\": 1}\nnot json\n").unwrap();
    let out = dialeval(&["text-metrics", pairs.to_str().unwrap()]);
    assert!(!out.status.success() && stderr(&out).contains("none of its 2 lines could be scored"), "{}", stderr(&out));
    std::fs::write(&pairs, "{\"hypothesis\": \"a cat\", \"reference\": \"the cat\"}\nnot json\n").unwrap();
    let partly = dialeval(&["text-metrics", pairs.to_str().unwrap()]);
    assert!(partly.status.success(), "{}", stderr(&partly));
    let _ = std::fs::remove_dir_all(&dir);
}
