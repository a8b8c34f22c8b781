//! Counts for any supported corpus, as JSON.
//!
//! ```text
//! cargo run --release --example dataset_stats -- KIND PATH [AMR_SIDE_FILE ...]
//! ```
//! KIND is one of `usr`, `fed`, `ddpp`, `topical` (PATH = the `topical-chat` folder; valid_rare
//! and test_rare are counted), `grade` (PATH = a model folder; the judgements are
//! `human_judgement.json` two levels up, dataset and model from the path), `jsonl`,
//! `diplomacy` (PATH = a Diplomacy AMR file). Prints items, contexts, responses per label or
//! system, annotators, criteria present and, with side files (or for diplomacy), AMR coverage.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use dialeval_datasets::amr::{AmrIndex, read_blocks};
use dialeval_datasets::pairs::{DiplomacyPairConfig, diplomacy_pairs};
use dialeval_datasets::{Criterion, DialogueItem, ddpp, fed, grade, jsonl, topical, usr};
use serde_json::{Value, json};

fn main() -> ExitCode {
    match run() {
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

fn run() -> Result<Value, Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kind, path, side @ ..] = args.as_slice() else {
        return Err("usage: dataset_stats KIND PATH [AMR_SIDE_FILE ...]".into());
    };
    let path = Path::new(path);
    let attach = |items: &mut Vec<DialogueItem>| -> Result<Option<Value>, Box<dyn std::error::Error>> {
        if side.is_empty() {
            return Ok(None);
        }
        let index = AmrIndex::load(&side.iter().map(PathBuf::from).collect::<Vec<_>>())?;
        let c = index.attach(items);
        Ok(Some(json!({"graphs": index.len(), "turns": c.turns, "turns_with_amr": c.with_amr})))
    };
    let mut out = match kind.as_str() {
        "usr" | "jsonl" | "grade" => {
            let mut items = match kind.as_str() {
                "usr" => usr::load(path)?,
                "jsonl" => jsonl::load(path)?,
                _ => {
                    let model = path.file_name().and_then(|m| m.to_str()).ok_or("grade PATH must end in a model folder")?;
                    let dataset = path.parent().and_then(Path::file_name).and_then(|d| d.to_str()).ok_or("grade PATH must be DATASET/MODEL")?;
                    let judgements = path.parent().and_then(Path::parent).ok_or("no judgements file above the model folder")?.join("human_judgement.json");
                    grade::load(path, &judgements, &format!("{dataset}_EVAL"), model)?
                }
            };
            let mut v = item_stats(&items);
            if let Some(a) = attach(&mut items)? {
                v["amr"] = a;
            }
            v
        }
        "fed" => {
            let f = fed::load(path)?;
            json!({"turn_level": item_stats(&f.turns), "dialogue_level": item_stats(&f.dialogues)})
        }
        "ddpp" => {
            let contexts = ddpp::load(path)?;
            let sum = |f: fn(&ddpp::DdppContext) -> usize| contexts.iter().map(f).sum::<usize>();
            json!({"contexts": contexts.len(), "responses": {
                "positive": sum(|c| c.positives.len()),
                "random_negative": sum(|c| c.random_negatives.len()),
                "adversarial_negative": sum(|c| c.adversarial_negatives.len())}})
        }
        "topical" => {
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
        "diplomacy" => {
            let blocks = read_blocks(path)?;
            let (pairs, skipped) = diplomacy_pairs(&blocks, &DiplomacyPairConfig::default())?;
            json!({"graphs": blocks.len(), "empty_placeholders": blocks.iter().filter(|b| b.is_empty_placeholder()).count(),
                   "pairs": pairs.len(), "positive_pairs": pairs.iter().filter(|p| p.label() == 1).count(), "blocks_without_id": skipped})
        }
        other => return Err(format!("unknown KIND {other:?} (usr, fed, ddpp, topical, grade, jsonl, diplomacy)").into()),
    };
    out["kind"] = json!(kind);
    out["path"] = json!(path.display().to_string());
    Ok(out)
}
