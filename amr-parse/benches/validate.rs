//! Validator and repair cost per graph on the bundled Little Prince gold graphs (the issue's
//! budget: under 1 ms per graph).
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use dialeval_amr_parse::{repair, validate};

fn graphs() -> Vec<String> {
    let text = include_str!("../../data/amr/little-prince-v3.0-first40.amr.txt");
    text.split("\n\n").map(|b| b.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n")).filter(|g| g.trim_start().starts_with('(')).collect()
}

fn bench(c: &mut Criterion) {
    let graphs = graphs();
    let broken: Vec<String> = graphs.iter().map(|g| format!("Here is the graph:\n{}", &g[..g.len() - 1])).collect();
    c.bench_function(&format!("validate {} gold graphs", graphs.len()), |b| b.iter(|| graphs.iter().filter(|g| validate(g).is_ok()).count()));
    c.bench_function(&format!("repair + validate {} broken graphs", broken.len()), |b| b.iter(|| broken.iter().filter(|g| validate(&repair(g).0).is_ok()).count()));
}

criterion_group!(benches, bench);
criterion_main!(benches);
