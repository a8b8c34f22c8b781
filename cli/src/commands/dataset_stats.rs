//! Counts for any supported corpus, as JSON.
//!
//! ```text
//! cargo run --release --example dataset_stats -- KIND PATH [AMR_SIDE_FILE ...] [--subset DATASET] [--model MODEL]
//! ```
//! KIND is a rated corpus format (`usr`, `fed` (both levels counted), `fed-dialogue`, `jsonl`,
//! `grade` (PATH = the release's `evaluation/` folder; every (dataset, model) cell, or those of
//! `--subset` / `--model`)) or a training source: `ddpp`, `topical` (PATH = the `topical-chat`
//! folder; valid_rare and test_rare are counted), `diplomacy` (PATH = a
//! Diplomacy AMR file). Prints items, contexts, responses per label or system, annotators,
//! criteria present and, with side files (or for diplomacy), AMR coverage.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dialeval_datasets::amr::{AmrIndex, read_blocks_lenient};
use dialeval_datasets::pairs::{DiplomacyPairConfig, diplomacy_pairs};
use dialeval_datasets::{CorpusFormat, Criterion, DialogueItem, Selection, ddpp, fed, topical};
use serde_json::{Value, json};

/// What the counts are of: a rated corpus format, or one of the training sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A format of rated items ([`CorpusFormat`]: usr, fed, fed-dialogue, grade, jsonl).
    Rated(CorpusFormat),
    /// DailyDialog++ (`dev.json`, `test.json`, `train.json`).
    Ddpp,
    /// Topical-Chat's folder.
    Topical,
    /// The Diplomacy AMR file.
    Diplomacy,
}

impl std::str::FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ddpp" => Ok(Self::Ddpp),
            "topical" => Ok(Self::Topical),
            "diplomacy" => Ok(Self::Diplomacy),
            _ => s.parse().map(Self::Rated).map_err(|e| format!("{e}, ddpp, topical or diplomacy")),
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rated(format) => write!(f, "{format}"),
            Self::Ddpp => f.write_str("ddpp"),
            Self::Topical => f.write_str("topical"),
            Self::Diplomacy => f.write_str("diplomacy"),
        }
    }
}

#[derive(Debug, Parser)]
#[command(about = "Counts for any supported corpus, as JSON")]
struct Args {
    /// The corpus kind.
    kind: Kind,
    /// The corpus file or folder.
    path: PathBuf,
    /// PENMAN side files to attach (AMR coverage is reported).
    side: Vec<PathBuf>,
    /// grade: only this dataset's cells (`convai2`, `dailydialog`, …).
    #[arg(long)]
    subset: Option<String>,
    /// grade: only this model's cells.
    #[arg(long)]
    model: Option<String>,
}

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    match run(&Args::parse_from(args)) {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("dataset_stats: {e}");
            ExitCode::FAILURE
        }
    }
}

fn item_stats(items: &[DialogueItem]) -> Value {
    let mut systems: BTreeMap<String, usize> = BTreeMap::new();
    let mut qualities: BTreeMap<String, usize> = BTreeMap::new();
    let mut criteria: BTreeMap<String, usize> = BTreeMap::new();
    let mut contexts = std::collections::HashSet::new();
    let mut annotators = std::collections::BTreeSet::new();
    let mut max_raters = 0;
    for it in items {
        *systems.entry(it.system.clone().unwrap_or_else(|| "(none)".into())).or_default() += 1;
        contexts.insert(it.context.iter().map(|t| t.text.as_str()).collect::<Vec<_>>().join("\n"));
        annotators.extend(it.annotators.iter().cloned());
        for r in &it.ratings {
            *qualities.entry(r.quality.clone()).or_default() += 1;
            max_raters = max_raters.max(r.scores.len());
            if let Some(c) = r.criterion {
                *criteria.entry(c.name().to_owned()).or_default() += 1;
            }
        }
    }
    let with_refs = items.iter().filter(|i| !i.references.is_empty()).count();
    let with_knowledge = items.iter().filter(|i| i.knowledge.is_some()).count();
    json!({
        "items": items.len(), "contexts": contexts.len(), "systems": systems, "with_references": with_refs,
        "with_knowledge": with_knowledge, "annotators": annotators, "max_raters_per_quality": max_raters,
        "qualities": qualities, "criteria": criteria,
        "criteria_missing": Criterion::ALL.iter().filter(|c| !criteria.contains_key(c.name())).map(|c| c.name()).collect::<Vec<_>>(),
    })
}

fn run(args: &Args) -> Result<Value, Box<dyn std::error::Error>> {
    let (path, side) = (args.path.as_path(), &args.side);
    let attach = |items: &mut Vec<DialogueItem>| -> Result<Option<Value>, Box<dyn std::error::Error>> {
        if side.is_empty() {
            return Ok(None);
        }
        let index = AmrIndex::load(side)?;
        let c = index.attach(items);
        Ok(Some(json!({"graphs": index.len(), "turns": c.turns, "turns_with_amr": c.with_amr})))
    };
    let mut out = match args.kind {
        // FED's file holds both levels: counted together.
        Kind::Rated(CorpusFormat::Fed) => {
            let f = fed::load(path)?;
            json!({"turn_level": item_stats(&f.turns), "dialogue_level": item_stats(&f.dialogues)})
        }
        Kind::Rated(format) => {
            let mut loaded = format.load(path, &Selection { dataset: args.subset.clone(), model: args.model.clone() })?;
            let mut v = item_stats(&loaded.items);
            if format == CorpusFormat::Grade {
                v["cells"] = json!(loaded.cells.iter().map(|(c, n)| (format!("{}/{}", c.dataset, c.model), *n)).collect::<BTreeMap<String, usize>>());
            }
            if let Some(a) = attach(&mut loaded.items)? {
                v["amr"] = a;
            }
            v
        }
        Kind::Ddpp => {
            let contexts = ddpp::load(path)?;
            let sum = |f: fn(&ddpp::DdppContext) -> usize| contexts.iter().map(f).sum::<usize>();
            json!({"contexts": contexts.len(), "responses": {
                "positive": sum(|c| c.positives.len()),
                "random_negative": sum(|c| c.random_negatives.len()),
                "adversarial_negative": sum(|c| c.adversarial_negatives.len())}})
        }
        Kind::Topical => {
            let wiki = topical::load_wiki(&path.join("wiki.json"))?;
            let mut splits = serde_json::Map::new();
            for split in ["valid_rare", "test_rare"] {
                let convs = topical::load_conversations(&path.join(format!("conversations/{split}.json")))?;
                let sets = topical::load_reading_sets(&path.join(format!("reading_sets/pre-build/{split}.json")))?;
                let mut items = topical::to_items(&convs, &sets, &wiki);
                let mut v = item_stats(&items);
                v["conversations"] = json!(convs.len());
                v["turns"] = json!(convs.iter().map(|c| c.turns.len()).sum::<usize>());
                if let Some(a) = attach(&mut items)? {
                    v["amr"] = a;
                }
                splits.insert(split.to_owned(), v);
            }
            json!({"wiki_snippets": wiki.shortened.len() + wiki.summarized.len(), "splits": splits})
        }
        Kind::Diplomacy => {
            // The released file has one sentence without its graph: counted, not fatal.
            let (blocks, malformed) = read_blocks_lenient(path)?;
            for bad in &malformed {
                eprintln!("dataset_stats: AMR block skipped: {bad}");
            }
            let (pairs, skipped) = diplomacy_pairs(&blocks, &DiplomacyPairConfig::default())?;
            json!({"graphs": blocks.len(), "empty_placeholders": blocks.iter().filter(|b| b.is_empty_placeholder()).count(),
                   "pairs": pairs.len(), "positive_pairs": pairs.iter().filter(|p| p.label() == 1).count(), "blocks_without_id": skipped, "malformed_blocks": malformed.len()})
        }
    };
    out["kind"] = json!(args.kind.to_string());
    out["path"] = json!(path.display().to_string());
    Ok(out)
}
