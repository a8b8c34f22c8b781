#![allow(missing_docs, clippy::panic)] // criterion macros generate undocumented items
//! Criterion benchmarks of `dialeval-amr-graph` on the Little Prince corpus, mirroring
//! `scripts/bench_reference.py` (penman 1.3.1 and smatch 1.0.4 on the same inputs):
//!
//! - `penman/decode`: whole file → graphs (`penman.load`), on all cores ([`AmrGraph::decode_all`]);
//! - `penman/encode`: every graph → PENMAN (`penman.encode`);
//! - `simplify+paths`: Konstas simplification, linearisation and relation-path matrix per graph;
//! - `smatch/random200`: Smatch on the 200 random pairs of the golden file (parse + match, on
//!   all cores as `Smatch::score_pairs` scores a corpus);
//! - `smatch/diplomacy70`: the same on the 70 Diplomacy sentences both annotators' files hold;
//! - `smatch/sparse_star_2001`: two 2,001-node graphs (a root with 2,000 children, 20 concepts
//!   and relations shared): past the dense-table limit (2^20 node pairs), so it times the
//!   sparse candidate tables, whose size follows the candidate pairs, not n1 · n2.
//!
//! Reads `../shared` (or `$DIALEVAL_SHARED`); without it, benchmarks the bundled 40-graph sample
//! and skips Smatch.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use dialeval_amr_graph::AmrGraph;
use dialeval_amr_graph::paths::{GraphInput, PathConfig};
use dialeval_amr_graph::simplify::{LinearizeOptions, Pipeline, linearize};
use dialeval_amr_graph::smatch::{Smatch, SmatchConfig, SmatchTriples};

fn workspace() -> PathBuf {
    dialeval_testkit::workspace_dir()
}

fn shared() -> Option<PathBuf> {
    let dir = std::env::var_os("DIALEVAL_SHARED").map_or_else(|| workspace().join("../shared"), PathBuf::from);
    dir.join("golden").is_dir().then_some(dir)
}

fn corpus() -> String {
    let path = match shared() {
        Some(s) => s.join("data/amr-little-prince/amr-bank-struct-v3.0.txt"),
        None => {
            eprintln!("../shared not found: benchmarking the bundled 40-graph sample");
            workspace().join("data/amr/little-prince-v3.0-first40.amr.txt")
        }
    };
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn graphs(text: &str) -> Vec<AmrGraph> {
    AmrGraph::decode_all(text).into_iter().flatten().collect()
}

fn bench_penman(c: &mut Criterion) {
    let text = corpus();
    let parsed = graphs(&text);
    let mut group = c.benchmark_group("penman");
    group.sample_size(30);
    group.bench_function("decode", |b| b.iter(|| graphs(std::hint::black_box(&text))));
    group.bench_function("encode", |b| b.iter(|| parsed.iter().map(|g| g.encode().len()).sum::<usize>()));
    group.finish();
}

fn bench_simplify(c: &mut Criterion) {
    let parsed = graphs(&corpus());
    let pipeline = Pipeline::konstas();
    let options = LinearizeOptions::default();
    let config = PathConfig::default();
    c.bench_function("simplify+paths", |b| {
        b.iter(|| {
            let mut cells = 0;
            for g in &parsed {
                let (tree, _) = pipeline.run(g.layout().clone());
                cells += linearize(&tree, &options).len();
                cells += GraphInput::new(g, &config).map_or(0, |i| i.labels().len());
            }
            cells
        });
    });
}

fn bench_smatch(c: &mut Criterion) {
    let Some(shared) = shared() else { return };
    let path = shared.join("golden/little_prince_smatch_random_pairs.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let pairs: Vec<(String, String)> = text
        .lines()
        .take(200)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
            (v["amr1"].as_str().unwrap_or_default().to_owned(), v["amr2"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    let mut group = c.benchmark_group("smatch");
    group.sample_size(30);
    // Two annotators' graphs of the same Diplomacy sentences (by `::id`): large, similar graphs,
    // where the search works hardest. Blocks are read as `scripts/bench_reference.py` reads them.
    let dir = shared.join("data/amr-diplomacy");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let (a, b) = (blocks_by_id(&read("dip-all-amr-jweinman-20220926.txt")), blocks_by_id(&read("dip-all-amr-smosher.txt")));
    let diplomacy: Vec<(String, String)> = a.iter().filter_map(|(id, g)| Some((g.clone(), b.get(id)?.clone()))).collect();
    assert_eq!(diplomacy.len(), 70, "Diplomacy pairs by ::id");
    for (set, pairs) in [("random200", &pairs), ("diplomacy70", &diplomacy)] {
        for restarts in [4, 20] {
            let smatch = Smatch::new(SmatchConfig { restarts, seed: 0 }).unwrap_or_default();
            group.bench_function(format!("{set}_r{restarts}"), |b| b.iter(|| matched(&smatch, pairs)));
        }
    }
    let star = |shift: usize| {
        let children: String = (1..=2000).map(|k| if k <= 20 { k } else { k + shift }).map(|k| format!(" :op{k} (n{k} / c{k})")).collect();
        SmatchTriples::parse(&format!("(r / root{children})")).unwrap_or_else(|e| panic!("{e}"))
    };
    let (a, b) = (star(0), star(5000));
    for restarts in [4, 20] {
        let smatch = Smatch::new(SmatchConfig { restarts, seed: 0 }).unwrap_or_default();
        group.bench_function(format!("sparse_star_2001_r{restarts}"), |bench| bench.iter(|| smatch.score(&a, &b).matched));
    }
    group.finish();
}

/// Matched triples over `pairs` of PENMAN texts, as a corpus is scored: both sides parsed and
/// the pairs matched on all cores (pairs that do not parse are left out).
fn matched(smatch: &Smatch, pairs: &[(String, String)]) -> usize {
    let parsed = dialeval_common::par_map(pairs, |(a, g)| SmatchTriples::parse(a).ok().zip(SmatchTriples::parse(g).ok()));
    let both: Vec<(&SmatchTriples, &SmatchTriples)> = parsed.iter().flatten().map(|(a, g)| (a, g)).collect();
    smatch.score_pairs(&both).iter().map(|s| s.matched).sum()
}

/// The graphs of a PENMAN file by their first `::id`, each on one line: blocks are runs of
/// non-blank lines; comment lines are dropped; `(a / amr-empty)` placeholders are left out.
fn blocks_by_id(text: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut block: Vec<&str> = Vec::new();
    for line in text.lines().chain([""]) {
        if !line.trim_matches([' ', '\t', '\r']).is_empty() {
            block.push(line);
            continue;
        }
        let id = block.iter().filter(|l| l.trim_start().starts_with('#')).find_map(|l| l.split_once("::id ").and_then(|(_, rest)| rest.split_whitespace().next()));
        let graph = block.iter().filter(|l| !l.trim_start().starts_with('#')).map(|l| l.trim()).collect::<Vec<_>>().join(" ");
        if let Some(id) = id
            && graph.starts_with('(')
            && !graph.contains("amr-empty")
        {
            out.entry(id.to_owned()).or_insert(graph);
        }
        block.clear();
    }
    out
}

criterion_group!(benches, bench_penman, bench_simplify, bench_smatch);
criterion_main!(benches);
