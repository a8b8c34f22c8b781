//! Decode every graph of a PENMAN file and print one JSON object per graph:
//! `{"id", "snt", "top", "triples_sorted", "encoded_graph_only"}`, or `{"error", "line"}` for a
//! malformed block (reading goes on with the next block).
//!
//! ```text
//! cargo run --release --example penman -- ../shared/data/amr-little-prince/amr-bank-struct-v3.0.txt
//! ```
//! Exits with status 0 unless the file cannot be read.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dialeval_amr_graph::penman::PenmanReader;
use dialeval_amr_graph::{AmrGraph, Error};
use serde_json::{Value, json};

#[derive(Debug, Parser)]
#[command(about = "Decode every graph of a PENMAN file and print it as JSON")]
struct Args {
    /// The PENMAN file.
    file: PathBuf,
}

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    let args = Args::parse_from(args);
    let file = match File::open(&args.file) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cannot read {}: {e}", args.file.display());
            return ExitCode::FAILURE;
        }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for item in PenmanReader::new(BufReader::new(file)) {
        let value = match item {
            Ok(tree) => graph_json(&AmrGraph::from_tree(tree)),
            Err(Error::Parse(e)) => json!({"error": e.to_string(), "line": e.line}),
            Err(e) => {
                eprintln!("cannot read {}: {e}", args.file.display());
                return ExitCode::FAILURE;
            }
        };
        if writeln!(out, "{value}").is_err() {
            return ExitCode::FAILURE;
        }
    }
    if out.flush().is_err() { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

fn graph_json(g: &AmrGraph) -> Value {
    let triples: Vec<Value> = g.triples_sorted().iter().map(|t| json!([t.source, t.role, t.target])).collect();
    json!({
        "id": g.metadata().get("id"),
        "snt": g.metadata().get("snt"),
        "top": g.top(),
        "triples_sorted": triples,
        "encoded_graph_only": g.encode_graph_only(),
    })
}
