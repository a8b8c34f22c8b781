//! Smatch between two PENMAN files, graphs paired by position (argument order as smatch.py's
//! `-f test gold`). Prints one JSON object per pair
//! `{"index", "match", "test_triples", "gold_triples", "precision", "recall", "f1"}` and a final
//! `{"corpus": {...}}` from the summed counts.
//!
//! ```text
//! cargo run --release --example smatch -- TEST_FILE GOLD_FILE [--restarts N] [--seed S]
//! ```
//! A pair in which either graph is malformed is printed as `{"index", "error"}` and left out of
//! the corpus counts (the final object says how many). Files with different numbers of graphs
//! are an error (exit status 1), as in smatch.py. Stray text between graphs is reported on
//! stderr and takes no graph's place in the pairing.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::process::ExitCode;

use dialeval_amr_graph::penman::{PenmanReader, Tree};
use dialeval_amr_graph::smatch::{Smatch, SmatchConfig, SmatchScore, SmatchTriples};
use dialeval_amr_graph::{Error, ParseErrorKind};
use serde_json::json;

fn main() -> ExitCode {
    dialeval_examples::finish("smatch", run().map_err(Into::into))
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut files = Vec::new();
    let mut config = SmatchConfig::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> { it.next().and_then(|v| v.parse().ok()).ok_or(format!("{name} needs a non-negative integer")) };
        match arg.as_str() {
            "--restarts" => config.restarts = usize::try_from(value("--restarts")?).map_err(|e| e.to_string())?,
            "--seed" => config.seed = value("--seed")?,
            _ => files.push(arg.clone()),
        }
    }
    let [test, gold] = files.as_slice() else {
        return Err("usage: smatch TEST_FILE GOLD_FILE [--restarts N] [--seed S]".into());
    };
    let (test, gold) = (read(test)?, read(gold)?);
    if test.len() != gold.len() {
        return Err(format!("the files hold {} and {} graphs; they must pair up", test.len(), gold.len()));
    }
    let smatch = Smatch::new(config).map_err(|e| e.to_string())?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut corpus = SmatchScore::default();
    let mut failed = 0;
    for (index, (t, g)) in test.iter().zip(&gold).enumerate() {
        let triples = |r: &Result<Tree, String>| -> Result<SmatchTriples, String> { SmatchTriples::from_tree(r.as_ref().map_err(Clone::clone)?).map_err(|e| e.to_string()) };
        let line = match triples(t).and_then(|t| Ok((t, triples(g)?))) {
            Ok((t, g)) => {
                let s = smatch.score(&t, &g);
                corpus += s;
                score_json(Some(index), &s)
            }
            Err(error) => {
                failed += 1;
                json!({"index": index, "error": error})
            }
        };
        writeln!(out, "{line}").map_err(|e| e.to_string())?;
    }
    let mut summary = score_json(None, &corpus);
    summary["pairs_failed"] = json!(failed);
    writeln!(out, "{}", json!({ "corpus": summary })).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())
}

fn read(path: &str) -> Result<Vec<Result<Tree, String>>, String> {
    let file = File::open(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let mut graphs = Vec::new();
    for item in PenmanReader::new(BufReader::new(file)) {
        match item {
            Ok(tree) => graphs.push(Ok(tree)),
            // Text between graphs takes no graph's place: report it, do not pair it.
            Err(Error::Parse(e)) if matches!(e.kind, ParseErrorKind::StrayText { .. } | ParseErrorKind::DanglingMetadata { .. }) => {
                eprintln!("smatch: {path}: {e}");
            }
            Err(Error::Parse(e)) => graphs.push(Err(format!("{path}: {e}"))),
            Err(e) => return Err(format!("cannot read {path}: {e}")),
        }
    }
    Ok(graphs)
}

fn score_json(index: Option<usize>, s: &SmatchScore) -> serde_json::Value {
    let mut v = json!({
        "match": s.matched,
        "test_triples": s.test_triples,
        "gold_triples": s.gold_triples,
        "precision": s.precision(),
        "recall": s.recall(),
        "f1": s.f1(),
    });
    if let Some(i) = index {
        v["index"] = json!(i);
    }
    v
}
