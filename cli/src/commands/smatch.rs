//! Smatch between two PENMAN files, graphs paired by position (argument order as smatch.py's
//! `-f test gold`). Prints one JSON object per pair
//! `{"index", "match", "test_triples", "gold_triples", "precision", "recall", "f1"}` and a final
//! `{"corpus": {...}}` from the summed counts.
//!
//! ```text
//! cargo run --release --example smatch -- TEST_FILE GOLD_FILE [--restarts N] [--seed S]
//! ```
//! A pair in which either graph is malformed is printed as `{"index", "error"}` and counts
//! against the corpus score as a pair with no match (`SmatchScore::failed`: the triples of the
//! graph that was read stay in their denominator), so a parser that emits broken graphs never
//! scores above one that emits wrong ones; the final object says how many failed. When no pair
//! can be read the command exits with status 1 after printing them. Files with different
//! numbers of graphs are an error (exit status 1), as in smatch.py. Stray text between graphs
//! is reported on stderr and takes no graph's place in the pairing.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use dialeval_amr_graph::penman::{PenmanReader, Tree};
use dialeval_amr_graph::smatch::{Smatch, SmatchConfig, SmatchScore, SmatchTriples};
use dialeval_amr_graph::{Error, ParseErrorKind};
use serde_json::json;

#[derive(Debug, Parser)]
#[command(about = "Smatch between two PENMAN files, graphs paired by position")]
struct Args {
    /// The graphs to score (smatch.py's first -f file).
    test: PathBuf,
    /// The gold graphs.
    gold: PathBuf,
    /// Random restarts of the hill climbing (smatch.py's -r).
    #[arg(long, default_value_t = SmatchConfig::default().restarts)]
    restarts: usize,
    /// Seed of the random starts.
    #[arg(long, default_value_t = SmatchConfig::default().seed)]
    seed: u64,
}

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    crate::support::finish("smatch", run(&Args::parse_from(args)).map_err(Into::into))
}

fn run(args: &Args) -> Result<(), String> {
    let config = SmatchConfig { restarts: args.restarts, seed: args.seed };
    let (test, gold) = (read(&args.test)?, read(&args.gold)?);
    if test.len() != gold.len() {
        return Err(format!("the files hold {} and {} graphs; they must pair up", test.len(), gold.len()));
    }
    let smatch = Smatch::new(config).map_err(|e| e.to_string())?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut corpus = SmatchScore::default();
    let mut failed = 0;
    let triples = |r: &Result<Tree, String>| -> Result<SmatchTriples, String> { SmatchTriples::from_tree(r.as_ref().map_err(Clone::clone)?).map_err(|e| e.to_string()) };
    let pairs: Vec<(Result<SmatchTriples, String>, Result<SmatchTriples, String>)> = test.iter().zip(&gold).map(|(t, g)| (triples(t), triples(g))).collect();
    // Every readable pair is matched on all cores; the output keeps the pair order.
    let readable: Vec<(&SmatchTriples, &SmatchTriples)> = pairs.iter().filter_map(|(t, g)| Some((t.as_ref().ok()?, g.as_ref().ok()?))).collect();
    let mut scores = smatch.score_pairs(&readable).into_iter();
    for (index, (t, g)) in pairs.iter().enumerate() {
        let line = match (t, g) {
            (Ok(_), Ok(_)) => {
                let s = scores.next().ok_or_else(|| format!("pair {index}: no score"))?;
                corpus += s;
                score_json(Some(index), &s)
            }
            (t, g) => {
                // Counted as a pair with no match: the readable side's triples stay in.
                failed += 1;
                corpus += SmatchScore::failed(t.as_ref().ok(), g.as_ref().ok());
                let error = [t, g].into_iter().filter_map(|side| side.as_ref().err()).cloned().collect::<Vec<_>>().join("; ");
                json!({"index": index, "error": error})
            }
        };
        writeln!(out, "{line}").map_err(|e| e.to_string())?;
    }
    let mut summary = score_json(None, &corpus);
    summary["pairs_failed"] = json!(failed);
    writeln!(out, "{}", json!({ "corpus": summary })).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    if failed > 0 && failed == pairs.len() {
        return Err(format!("no pair could be read ({failed} of {} failed): there is no score", pairs.len()));
    }
    if failed > 0 {
        eprintln!("smatch: {failed} of {} pairs could not be read; each counts as a pair with no match", pairs.len());
    }
    Ok(())
}

fn read(path: &Path) -> Result<Vec<Result<Tree, String>>, String> {
    let path = path.display();
    let file = File::open(path.to_string()).map_err(|e| format!("cannot read {path}: {e}"))?;
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
