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
    let scan = Pipeline::new().digest_shards(3).run(&items, &|_| {}).unwrap();
    let digests = ShardDigests::of_items(&items, 3).unwrap();
    // The scan's shard digests (one serialisation per item for both digests) are the shards'
    // own, and its corpus digest is unchanged by computing them.
    let shard_digests: Vec<String> = (1..=3).map(|index| items_digest(&Shard { index, of: 3 }.select(&items)).unwrap()).collect();
    assert_eq!(scan.shard_digests, shard_digests);
    assert_eq!(digests, shard_digests);
    assert_eq!(scan.digest, items_digest(&items).unwrap());
    assert!(Pipeline::new().run(&items, &|_| {}).unwrap().shard_digests.is_empty());
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
