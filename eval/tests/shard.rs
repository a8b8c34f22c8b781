//! Shard and merge: three shards scored separately and merged give, byte for byte, the
//! `scores.jsonl`, `scores.csv`, `correlations.md` and `correlations.json` of a single run over
//! the whole corpus; a merge with a shard missing, given twice or cut from another corpus is an
//! error; BERT-RUBER's corpus-relative hybrids are recomputed over the merged corpus.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::sync::Arc;

use dialeval_datasets::DialogueItem;
use dialeval_eval::digest::items_digest;
use dialeval_eval::families::{EmbeddingFamily, LengthFamily, LexicalFamily, MemoEmbedder};
use dialeval_eval::shard::{Shard, ShardDigests, ShardScores, merge};
use dialeval_eval::{Evaluation, Pipeline, Report};
use dialeval_metrics::report::ReportConfig;

mod common;
use common::{WordHash, rated_corpus};

/// With gaps: blank responses and references in every shard, so the families' notes name items
/// of several shards.
fn corpus() -> Vec<DialogueItem> {
    rated_corpus(true)
}

/// `report.md` with the seconds of its family table blanked: a measurement, never the same twice.
fn without_seconds(report: &str) -> String {
    report
        .lines()
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            if line.starts_with("| ") && cells.len() == 4 && cells[2].parse::<f64>().is_ok() { [cells[0], cells[1], "-", cells[3]].join(" | ") } else { line.to_owned() }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn evaluation<'a>(items: &'a [DialogueItem]) -> Evaluation<'a> {
    Evaluation::of(items).family(LengthFamily).family(LexicalFamily::new().unwrap()).family(EmbeddingFamily::new(Arc::new(MemoEmbedder::new(WordHash, "word-hash")))).analysis(ReportConfig::default())
}

fn temp(name: &str) -> std::path::PathBuf {
    common::temp("shard", name)
}

#[test]
fn merged_shards_equal_a_single_run_byte_for_byte() {
    let items = corpus();
    let whole = temp("whole");
    evaluation(&items).run().unwrap().write(&whole).unwrap();

    let mut dirs = Vec::new();
    for index in 1..=3 {
        let shard = Shard { index, of: 3 };
        let part = shard.select(&items);
        assert!(part.len() > 10 && part.len() < 60, "shard {shard}: {} items", part.len());
        let report = evaluation(&part).run().unwrap();
        let dir = temp(&format!("part{index}"));
        ShardScores::of(shard, &items_digest(&part).unwrap(), &report).unwrap().write(&dir).unwrap();
        dirs.push(dir);
    }
    // Any order of the shards.
    let shards: Vec<ShardScores> = dirs.iter().rev().map(|d| ShardScores::read(d).unwrap()).collect();
    // What the merge knows of the corpus: one pass over it, without families.
    let scan = Pipeline::new().run(&items, &|_| {}).unwrap();
    let digests = ShardDigests::of_items(&items, 3).unwrap();
    let (table, runs) = merge(&scan.rows.ids, &digests, &shards).unwrap();
    let merged = temp("merged");
    Report::analyse(dialeval_eval::Scored { table, runs, ..scan.clone() }, &ReportConfig::default(), &|_| {}).unwrap().write(&merged).unwrap();
    for file in ["scores.jsonl", "scores.csv", "correlations.md", "correlations.json"] {
        let (a, b) = (std::fs::read(whole.join(file)).unwrap(), std::fs::read(merged.join(file)).unwrap());
        assert!(a == b, "{file} differs between the single run and the merge");
    }
    // report.md too, the families' notes included (counts added, items named in corpus order),
    // but for the seconds.
    let (a, b) = (std::fs::read_to_string(whole.join("report.md")).unwrap(), std::fs::read_to_string(merged.join("report.md")).unwrap());
    assert!(a.contains("items with an empty response are not scored: item-17, item-40"), "{a}");
    assert_eq!(without_seconds(&a), without_seconds(&b));

    // Misuse is an error, with the reason.
    let err = |shards: &[ShardScores]| merge(&scan.rows.ids, &digests, shards).unwrap_err().to_string();
    assert!(err(&shards[..2]).contains("missing"), "{}", err(&shards[..2]));
    let twice = [shards[0].clone(), shards[0].clone(), shards[1].clone()];
    assert!(err(&twice).contains("twice"));
    // Another corpus: one item's reference changed fails its own shard's check.
    let mut other = items.clone();
    other[0].references = vec!["something else".into()];
    let changed = merge(&scan.rows.ids, &ShardDigests::of_items(&other, 3).unwrap(), &shards).unwrap_err().to_string();
    let owner = Shard::holding(&items[0].id, 3);
    assert!(changed.contains("another corpus") && changed.contains(&format!("shard {owner}")), "{changed}");
    // A shard.json of an earlier version (the whole corpus's digest, read as none) is named.
    let mut old = shards.clone();
    old[0].digest = String::new();
    assert!(err(&old).contains("earlier version"), "{}", err(&old));
    for d in dirs.iter().chain([&whole, &merged]) {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_shard_without_items_merges_with_the_others() {
    // Three items in eight shards: most shards are empty, score nothing and have no columns.
    let items: Vec<DialogueItem> = corpus().into_iter().take(3).collect();
    let whole = evaluation(&items).run().unwrap();
    let shards: Vec<ShardScores> = (1..=8)
        .map(|index| {
            let shard = Shard { index, of: 8 };
            let part = shard.select(&items);
            ShardScores::of(shard, &items_digest(&part).unwrap(), &evaluation(&part).run().unwrap()).unwrap()
        })
        .collect();
    assert!(shards.iter().any(|s| s.ids.is_empty()), "some shard is empty");
    let scan = Pipeline::new().run(&items, &|_| {}).unwrap();
    let (table, runs) = merge(&scan.rows.ids, &ShardDigests::of_items(&items, 8).unwrap(), &shards).unwrap();
    assert_eq!(table, whole.table);
    let statuses = |runs: &[dialeval_eval::FamilyRun]| runs.iter().map(|r| (r.family.clone(), std::mem::discriminant(&r.status))).collect::<Vec<_>>();
    assert_eq!(statuses(&runs), statuses(&whole.runs), "the empty shards' skipped families do not make the merged ones skipped");
}

/// The main job's merge: shards that say where their items are in the corpus file and carry
/// their rows and ratings merge into the whole run without the corpus being read again.
#[test]
fn placed_shards_merge_without_the_corpus_and_refuse_another_one() {
    use dialeval_datasets::CorpusFormat;
    use dialeval_eval::shard::{CorpusPrint, Placement, merge_placed};
    let items = corpus();
    let whole = evaluation(&items).run().unwrap();
    let print = CorpusPrint { format: CorpusFormat::Jsonl, sha256: "c0ffee".into(), items: items.len() };
    let amr = vec!["a1".to_owned()];
    let shards: Vec<ShardScores> = (1..=3)
        .map(|index| {
            let shard = Shard { index, of: 3 };
            let part = shard.select(&items);
            let mut placement = Placement::new(print.clone(), amr.clone());
            placement.positions = items.iter().enumerate().filter(|(_, i)| shard.contains(&i.id)).map(|(k, _)| k).collect();
            placement.add(&part);
            ShardScores::of(shard, &items_digest(&part).unwrap(), &evaluation(&part).run().unwrap()).unwrap().placed(placement).unwrap()
        })
        .rev()
        .collect();
    let merged = merge_placed(CorpusFormat::Jsonl, "c0ffee", &amr, &shards).unwrap();
    assert_eq!(merged.table, whole.table);
    assert_eq!(merged.rows, whole.rows);
    assert_eq!(merged.human, whole.human);
    let report = Report::analyse_merged(merged, &ReportConfig::default(), &|_| {}).unwrap();
    assert_eq!(report.analysis, whole.analysis);

    let err = |corpus: &str, amr: &[String], shards: &[ShardScores]| merge_placed(CorpusFormat::Jsonl, corpus, amr, shards).unwrap_err().to_string();
    let fed = merge_placed(CorpusFormat::Fed, "c0ffee", &amr, &shards).unwrap_err().to_string();
    assert!(fed.contains("read the corpus as jsonl"), "{fed}");
    assert!(err("0ther", &amr, &shards).contains("another corpus"), "{}", err("0ther", &amr, &shards));
    assert!(err("c0ffee", &[], &shards).contains("other AMR files"), "{}", err("c0ffee", &[], &shards));
    assert!(err("c0ffee", &amr, &shards[..2]).contains("missing"));
    let mut old = shards.clone();
    old[1].placement = None;
    assert!(err("c0ffee", &amr, &old).contains("earlier version"), "{}", err("c0ffee", &amr, &old));
    // Two shards claiming one place, a place past the corpus, a count that disagrees.
    let mut twice = shards.clone();
    let first = shards[0].placement.as_ref().unwrap().positions[0];
    twice[1].placement.as_mut().unwrap().positions[0] = first;
    twice[1].placement.as_mut().unwrap().positions.sort_unstable();
    let e = err("c0ffee", &amr, &twice);
    assert!(e.contains(&format!("item {} of the corpus is in shard", first + 1)), "{e}");
    let mut past = shards.clone();
    *past[2].placement.as_mut().unwrap().positions.last_mut().unwrap() = items.len() + 5;
    assert!(err("c0ffee", &amr, &past).contains("places an item at"), "{}", err("c0ffee", &amr, &past));
    let mut count = shards.clone();
    count[0].placement.as_mut().unwrap().corpus.items += 1;
    assert!(err("c0ffee", &amr, &count).contains("another number of items"), "{}", err("c0ffee", &amr, &count));
    let mut short = shards.clone();
    short[0].placement.as_mut().unwrap().ratings.pop();
    assert!(err("c0ffee", &amr, &short).contains("does not fit"), "{}", err("c0ffee", &amr, &short));
    let mut rowless = shards.clone();
    rowless[1].responses.clear();
    assert!(err("c0ffee", &amr, &rowless).contains("does not fit"), "{}", err("c0ffee", &amr, &rowless));
    // A placement that leaves an item of the corpus out.
    let mut gap = shards.clone();
    for p in gap.iter_mut().filter_map(|s| s.placement.as_mut()) {
        p.corpus.items += 1;
    }
    assert!(err("c0ffee", &amr, &gap).contains(&format!("the shards hold {} items, the corpus {}", items.len(), items.len() + 1)), "{}", err("c0ffee", &amr, &gap));
}

#[cfg(feature = "slm")]
#[test]
fn hybrids_are_recomputed_over_the_merged_corpus() {
    use dialeval_eval::families::ruber::{hybrid_columns, recompute_hybrids};
    use dialeval_eval::{Column, ScoreTable};
    let n = 8;
    let unref: Vec<f64> = (0..n).map(|k| f64::from(k as u8) * 0.1).collect();
    let referenced: Vec<f64> = (0..n).map(|k| f64::from(((k * 3) % 8) as u8) * 0.05).collect();
    let at: Vec<usize> = (0..n).collect();
    let right = hybrid_columns(n, &at, &unref, &referenced).unwrap();
    // A shard's hybrids: normalised over its own half only.
    let half = hybrid_columns(4, &[0, 1, 2, 3], &unref[..4], &referenced[..4]).unwrap();
    let mut table = ScoreTable::new(n);
    table.push(Column::new("BERT-RUBER-unref", unref.iter().copied().map(Some).collect())).unwrap();
    table.push(Column::new("BERT-RUBER-ref", referenced.iter().copied().map(Some).collect())).unwrap();
    for h in &half {
        let mut values = h.values.clone();
        values.extend(vec![Some(0.5); 4]);
        table.push(Column::new(h.metric.clone(), values)).unwrap();
    }
    let fixed = recompute_hybrids(table).unwrap();
    assert_eq!(&fixed.columns()[2..], &right[..]);
}
