//! The `dialeval` command: its version, its list of commands, a refused unknown command, and
//! two programs run through it with the output of the programs themselves.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::process::{Command, Output};

fn dialeval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dialeval")).args(args).current_dir(dialeval_testkit::workspace_dir()).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn version_help_and_an_unknown_command() {
    let version = dialeval(&["--version"]);
    assert!(version.status.success());
    assert_eq!(stdout(&version).trim(), format!("dialeval {}", env!("CARGO_PKG_VERSION")));
    let help = stdout(&dialeval(&["--help"]));
    for command in dialeval_cli::commands::COMMANDS {
        assert!(help.contains(command.name) && help.contains(command.about), "{} missing from:\n{help}", command.name);
    }
    let unknown = dialeval(&["evalute"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no command \"evalute\""));
    let nothing = dialeval(&[]);
    assert!(!nothing.status.success(), "no command is an error, with the list on stderr");
    let usage = stdout(&dialeval(&["train-ruber", "--help"]));
    assert!(usage.contains("Usage: dialeval train-ruber [OPTIONS] --out <OUT>"), "{usage}");
    let usage = stdout(&dialeval(&["merge", "--help"]));
    assert!(usage.contains("Usage: dialeval merge [OPTIONS] <SHARDS>..."), "{usage}");
}

#[test]
fn programs_run_through_the_command_as_they_run_alone() {
    let dir = std::env::temp_dir().join(format!("dialeval-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (test, gold) = (dir.join("test.amr"), dir.join("gold.amr"));
    std::fs::write(&test, "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))\n\n(d / dog)\n").unwrap();
    std::fs::write(&gold, "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02))\n\n(c / cat)\n").unwrap();
    let smatch = dialeval(&["smatch", test.to_str().unwrap(), gold.to_str().unwrap()]);
    assert!(smatch.status.success(), "{}", String::from_utf8_lossy(&smatch.stderr));
    let lines: Vec<serde_json::Value> = stdout(&smatch).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "two pairs and the corpus line");
    // 7 test triples (3 instances, 3 relations, the top) against 6 gold ones, 6 matched.
    assert_eq!((lines[0]["match"].as_u64(), lines[0]["test_triples"].as_u64(), lines[0]["gold_triples"].as_u64()), (Some(6), Some(7), Some(6)), "{}", lines[0]);
    assert_eq!(lines[0]["f1"].as_f64().map(|f| (f - 12.0 / 13.0).abs() < 1e-12), Some(true), "{}", lines[0]);
    let stats = dialeval(&["dataset-stats", "jsonl", "datasets/tests/fixtures/user.jsonl"]);
    assert!(stats.status.success(), "{}", String::from_utf8_lossy(&stats.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout(&stats)).unwrap();
    assert_eq!((v["kind"].as_str(), v["items"].as_u64()), (Some("jsonl"), Some(2)));
    let bad = dialeval(&["smatch", test.to_str().unwrap()]);
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("Usage: dialeval smatch"), "a missing argument is clap's error with this command's usage");
    std::fs::remove_dir_all(&dir).unwrap();
}
