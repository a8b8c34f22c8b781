//! Items and a deterministic token embedder for the integration tests.
#![allow(dead_code)] // each test binary uses a part

use dialeval_common::Criterion;
use dialeval_common::{EmbedError, TokenEmbedder, TokenEmbeddings};
use dialeval_datasets::{Corpus, DialogueItem, Rating, Turn};

/// An unrated item with one context turn, a response and one reference.
pub fn item(id: &str, context: &str, response: &str, reference: &str) -> DialogueItem {
    DialogueItem {
        id: id.to_owned(),
        corpus: Corpus::Jsonl,
        context: vec![Turn::new(context)],
        response: Some(Turn::new(response)),
        references: vec![reference.to_owned()],
        knowledge: None,
        system: None,
        annotators: Vec::new(),
        ratings: Vec::new(),
    }
}

/// Each word becomes a fixed pseudo-random vector (FNV-1a of the word seeds it): a deterministic
/// token embedder whose metric values differ between references.
pub struct WordHash;

impl TokenEmbedder for WordHash {
    fn dim(&self) -> usize {
        6
    }

    fn embed_tokens(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>, EmbedError> {
        let vector = |w: &str| {
            let mut h = w.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
            (0..6)
                .map(|_| {
                    h = h.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    ((h >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0 + 0.01
                })
                .collect::<Vec<f32>>()
        };
        Ok(texts.iter().map(|t| TokenEmbeddings { tokens: t.split_whitespace().map(str::to_owned).collect(), vectors: t.split_whitespace().map(vector).collect() }).collect())
    }
}

/// 90 items from 4 systems with an Overall and a named `relevance` rating; with `gaps`, some
/// lack a reference (every 23rd from item 5), some have a blank one (from 11) or an empty
/// response (from 17).
pub fn rated_corpus(gaps: bool) -> Vec<DialogueItem> {
    let words = ["we", "went", "to", "the", "beach", "and", "swam", "all", "day", "long", "it", "was", "fun"];
    (0..90)
        .map(|k| {
            let response: Vec<&str> = (0..2 + k % 7).map(|j| words[(k * 5 + j * 3) % words.len()]).collect();
            let reference: Vec<&str> = (0..3 + k % 4).map(|j| words[(k + j * 2) % words.len()]).collect();
            let mut i = item(&format!("item-{k}"), "what did you do", &response.join(" "), &reference.join(" "));
            match k % 23 {
                5 if gaps => i.references.clear(),
                11 if gaps => i.references = vec![" ".into()],
                17 if gaps => i.response = Some(Turn::new("")),
                _ => {}
            }
            i.system = Some(format!("system-{}", k % 4));
            let overall = ((k * 7) % 5 + 1) as f64;
            i.ratings = vec![
                Rating { quality: "overall".into(), criterion: Some(Criterion::Overall), scores: vec![Some(overall), Some((overall + 1.0).min(5.0))] },
                Rating { quality: "relevance".into(), criterion: None, scores: vec![Some(((k * 3) % 4) as f64)] },
            ];
            i
        })
        .collect()
}

/// An empty folder `dialeval-<test>-<name>-<pid>` in the temporary directory.
pub fn temp(test: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("dialeval-{test}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The files of `dir` that must not depend on how a run was cut.
pub const CUT_FREE_FILES: [&str; 2] = ["scores.jsonl", "correlations.json"];

/// `CUT_FREE_FILES` of `dir`, read.
pub fn cut_free_files(dir: &std::path::Path) -> Vec<Vec<u8>> {
    CUT_FREE_FILES.iter().map(|f| std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()))).collect()
}

/// The report of `items` cut into `shards` shards, each scored by `run` (a fresh evaluation of
/// the shard's items) and merged as `evaluate merge` does.
pub fn merged_report(items: &[DialogueItem], shards: usize, run: &dyn Fn(&[DialogueItem]) -> dialeval_eval::Report, config: &dialeval_metrics::report::ReportConfig) -> dialeval_eval::Report {
    use dialeval_eval::shard::{Shard, ShardDigests, ShardScores, merge};
    let parts: Vec<ShardScores> = (1..=shards)
        .map(|index| {
            let shard = Shard { index, of: shards };
            let part = shard.select(items);
            let digest = dialeval_eval::digest::items_digest(&part).unwrap_or_else(|e| panic!("{e}"));
            ShardScores::of(shard, &digest, &run(&part)).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let scan = dialeval_eval::Pipeline::new().run(items, &|_| {}).unwrap_or_else(|e| panic!("{e}"));
    let (table, runs) = merge(&scan.rows.ids, &ShardDigests::of_items(items, shards).unwrap_or_else(|e| panic!("{e}")), &parts).unwrap_or_else(|e| panic!("merge of {shards} shards: {e}"));
    dialeval_eval::Report::analyse(dialeval_eval::Scored { table, runs, ..scan }, config, &|_| {}).unwrap_or_else(|e| panic!("{e}"))
}
