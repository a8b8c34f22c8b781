//! Criterion benchmarks of `dialeval-metrics`, mirroring `scripts/bench_reference.py`:
//! sentence BLEU, ROUGE, stemmed ROUGE and METEOR over the 240 USR-PersonaChat pairs,
//! WordNet loading, the three correlations at n = 240 and n = 100,000, and the bootstrap
//! interval of the report at n = 100,000 (plain and rank paths).
#![allow(missing_docs, clippy::panic, clippy::unwrap_used)] // criterion macros; benches fail loudly

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use dialeval_metrics::correlation::{CorrelationKind, correlate};
use dialeval_metrics::inference::{BootstrapConfig, bootstrap_interval, rank_bootstrap_interval};
use dialeval_metrics::text::bleu::{Bleu, BleuConfig};
use dialeval_metrics::text::meteor::{Meteor, MeteorParams};
use dialeval_metrics::text::rouge::{Rouge, Stemming};
use dialeval_metrics::text::wordnet::WordNet;

fn pairs() -> Vec<(String, String)> {
    let Some(shared) = dialeval_testkit::shared_dir() else { return Vec::new() };
    dialeval_testkit::read_jsonl(&shared.join("golden/usr_personachat_text_metrics.jsonl"))
        .iter()
        .map(|r| (r["hypothesis"].as_str().unwrap().trim().to_owned(), r["reference"].as_str().unwrap().trim().to_owned()))
        .collect()
}

fn bench_text(c: &mut Criterion) {
    let pairs = pairs();
    if pairs.is_empty() {
        return;
    }
    let bleu = Bleu::new(BleuConfig::sentence()).unwrap();
    let (plain, stemmed) = (Rouge::new(Stemming::None), Rouge::new(Stemming::Porter));
    let mut g = c.benchmark_group("text240");
    g.bench_function("sentence_bleu", |b| b.iter(|| pairs.iter().map(|(h, r)| bleu.sentence(h, &[r]).unwrap().score).sum::<f64>()));
    g.bench_function("rouge", |b| b.iter(|| pairs.iter().map(|(h, r)| plain.score(h, r).rouge_l.fmeasure).sum::<f64>()));
    g.bench_function("rouge_stem", |b| b.iter(|| pairs.iter().map(|(h, r)| stemmed.score(h, r).rouge_l.fmeasure).sum::<f64>()));
    if let Ok(wordnet) = WordNet::load_default() {
        let wordnet = Arc::new(wordnet);
        // A fresh scorer per iteration: the synonym cache starts empty, as in one nltk run.
        g.bench_function("meteor", |b| {
            b.iter(|| {
                let meteor = Meteor::new(Arc::clone(&wordnet), MeteorParams::default()).unwrap();
                pairs.iter().map(|(h, r)| meteor.score(h, &[r]).unwrap()).sum::<f64>()
            });
        });
        g.sample_size(10);
        g.bench_function("wordnet_load", |b| b.iter(|| WordNet::load_default().unwrap().lemma_count()));
    }
    g.finish();
}

fn series(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f64> = (0..n).map(|_| next()).collect();
    // Likert-like human scores with ties, correlated with x.
    let y: Vec<f64> = x.iter().map(|v| ((v * 3.0 + next() * 2.0) * 1.5).round() / 1.5).collect();
    (x, y)
}

fn bench_correlation(c: &mut Criterion) {
    let mut g = c.benchmark_group("correlation");
    for n in [240, 100_000] {
        let (x, y) = series(n, 42);
        for kind in CorrelationKind::ALL {
            g.bench_function(format!("{}/{n}", kind.name()), |b| b.iter(|| correlate(kind, &x, &y).unwrap().statistic));
        }
    }
    g.finish();
}

/// A bootstrap interval at n = 100,000 (20 resamples: the time per resample times 50 is the
/// report's 1,000), the plain path (sorting each resample) against the rank path (pair counts
/// over orders sorted once), on a continuous metric against tied, Likert-like scores.
fn bench_bootstrap(c: &mut Criterion) {
    let mut g = c.benchmark_group("bootstrap");
    g.sample_size(10);
    let n = 100_000;
    let (x, y) = series(n, 7);
    let config = BootstrapConfig { resamples: 20, ..BootstrapConfig::default() };
    for kind in [CorrelationKind::Spearman, CorrelationKind::KendallTauB] {
        let stat = |a: &[f64], b: &[f64]| correlate(kind, a, b).map_or(f64::NAN, |r| r.statistic);
        g.bench_function(format!("{}/plain/{n}", kind.name()), |b| b.iter(|| bootstrap_interval(&x, &y, stat, &config).unwrap()));
        g.bench_function(format!("{}/rank/{n}", kind.name()), |b| b.iter(|| rank_bootstrap_interval(kind, &x, &y, &config).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, bench_text, bench_correlation, bench_bootstrap);
criterion_main!(benches);
