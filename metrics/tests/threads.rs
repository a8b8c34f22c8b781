//! The thread count never changes a correlation: at n = 1,100,000 (where the rankings and the
//! pairwise sums split over threads, several levels deep) Pearson, Spearman and Kendall on 1 and on 4 threads agree to the
//! bit, and so does a report with bootstrap intervals.
#![allow(clippy::unwrap_used)] // tests fail loudly

use dialeval_common::SplitMix64;
use dialeval_metrics::correlation::{CorrelationKind, correlate};
use dialeval_metrics::report::{CorrelationReport, ReportConfig};

fn on(threads: usize, f: impl FnOnce() -> Vec<u64> + Send) -> Vec<u64> {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

#[test]
fn correlations_are_bit_identical_on_any_thread_count() {
    let mut rng = SplitMix64(42);
    let x: Vec<f64> = (0..1_100_000).map(|_| rng.unit()).collect();
    let y: Vec<f64> = x.iter().map(|v| ((v * 3.0 + rng.unit() * 2.0) * 1.5).round() / 1.5).collect();
    let all = || {
        let mut bits: Vec<u64> = CorrelationKind::ALL
            .iter()
            .flat_map(|&k| {
                let c = correlate(k, &x, &y).unwrap();
                [c.statistic.to_bits(), c.pvalue.to_bits()]
            })
            .collect();
        let report = CorrelationReport::build(&[("m", &x[..2_000])], &[("h", &y[..2_000])], &ReportConfig::default()).unwrap();
        bits.extend(report.rows.iter().flat_map(|r| r.ci.map(|c| [c.low.to_bits(), c.high.to_bits()]).unwrap_or_default()));
        bits
    };
    let one = on(1, all);
    assert_eq!(one, on(4, all));
    assert!(one.len() > 6);
}
