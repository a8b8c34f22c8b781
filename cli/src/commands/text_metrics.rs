//! Sentence BLEU, ROUGE (with and without stemming) and METEOR for every line of a JSONL file,
//! then corpus BLEU.
//!
//! ```text
//! cargo run --release --example text_metrics -- PAIRS.jsonl
//! ```
//! Each input line holds `hypothesis` and `reference` (a string, or a list of strings for
//! several references). Each output line holds `sentence_bleu` (`score`, `counts`, `totals`,
//! `bp`), `rouge` and `rouge_stem` (`rouge1`/`rouge2`/`rougeL` × `precision`/`recall`/
//! `fmeasure`) and `meteor`, with the field names of the Python references; a malformed line
//! gives `{"line", "error"}` instead. The last line is `{"corpus_bleu": ...}` over the good
//! lines; a file of which no line could be scored exits with status 1. METEOR needs WordNet 3.0 (`apt-get install wordnet-base`).

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;
use std::sync::Arc;

use dialeval_metrics::text::bleu::{Bleu, BleuConfig, BleuScore};
use dialeval_metrics::text::meteor::{Meteor, MeteorParams};
use dialeval_metrics::text::rouge::{Rouge, Stemming};
use dialeval_metrics::text::wordnet::WordNet;
use serde_json::{Value, json};

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    crate::support::finish("text_metrics", run(args))
}

fn references(v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(items) if !items.is_empty() => items.iter().map(|i| i.as_str().map(str::to_owned).ok_or_else(|| "`reference` list must hold strings".to_owned())).collect(),
        _ => Err("`reference` must be a string or a non-empty list of strings".into()),
    }
}

fn bleu_json(s: &BleuScore) -> Value {
    json!({"score": s.score, "counts": s.counts, "totals": s.totals, "precisions": s.precisions, "bp": s.bp, "sys_len": s.sys_len, "ref_len": s.ref_len})
}

#[derive(Debug, clap::Parser)]
#[command(about = "BLEU, ROUGE and METEOR of every pair of a JSONL file")]
struct Args {
    /// Pairs, one JSON object per line.
    pairs: std::path::PathBuf,
}

fn run<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> Result<(), Box<dyn std::error::Error>> {
    let args = <Args as clap::Parser>::parse_from(args);
    let path = args.pairs.display();
    let file = std::fs::File::open(&args.pairs).map_err(|e| format!("cannot read {path}: {e}"))?;
    let sentence = Bleu::new(BleuConfig::sentence())?;
    let corpus = Bleu::new(BleuConfig::corpus())?;
    let (plain, stemmed) = (Rouge::new(Stemming::None), Rouge::new(Stemming::Porter));
    let meteor = Meteor::new(Arc::new(WordNet::load_default()?), MeteorParams::default())?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut hyps, mut refs): (Vec<String>, Vec<Vec<String>>) = (Vec::new(), Vec::new());
    let mut bad = 0_usize;
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{path}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let item = (|| -> Result<Value, String> {
            let v: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
            let hyp = v["hypothesis"].as_str().ok_or("`hypothesis` must be a string")?.to_owned();
            let r = references(&v["reference"])?;
            let rs: Vec<&str> = r.iter().map(String::as_str).collect();
            let result = json!({
                "sentence_bleu": bleu_json(&sentence.sentence(&hyp, &rs).map_err(|e| e.to_string())?),
                "rouge": plain.score_multi(&hyp, &rs).map_err(|e| e.to_string())?,
                "rouge_stem": stemmed.score_multi(&hyp, &rs).map_err(|e| e.to_string())?,
                "meteor": meteor.score(&hyp, &rs).map_err(|e| e.to_string())?,
            });
            hyps.push(hyp);
            refs.push(r);
            Ok(result)
        })();
        let value = item.unwrap_or_else(|error| {
            bad += 1;
            json!({"line": n + 1, "error": format!("{path}:{}: {error}", n + 1)})
        });
        writeln!(out, "{value}")?;
    }
    let hyp_refs: Vec<&str> = hyps.iter().map(String::as_str).collect();
    let corpus_bleu = if hyps.is_empty() { Value::Null } else { bleu_json(&corpus.corpus(&hyp_refs, &refs)?) };
    writeln!(out, "{}", json!({ "corpus_bleu": corpus_bleu }))?;
    out.flush()?;
    // A file of which no line could be scored has no result: an error, not an empty success.
    if hyps.is_empty() {
        return Err(if bad == 0 { format!("{path}: no pairs (the file is empty or has only blank lines)") } else { format!("{path}: none of its {bad} lines could be scored") }.into());
    }
    if bad > 0 {
        eprintln!("text_metrics: {bad} lines could not be scored (named in the output); corpus BLEU is over the other {}", hyps.len());
    }
    Ok(())
}
