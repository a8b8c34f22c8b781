//! The `Analysis` values on a small table against scipy 1.17 (`spearmanr`, `pearsonr`, and
//! Williams' formula on `spearmanr` values with `stats.t.sf`; the script's figures are quoted):
//! the best metric by Spearman, ↓ from Williams' test on Spearman correlations, the system level
//! over items that name a system (3 systems), and the notes.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use dialeval_common::Criterion;
use dialeval_eval::{Analysis, AnalysisInput, Column, HumanScores, ScoreTable};
use dialeval_metrics::correlation::CorrelationKind;
use dialeval_metrics::report::ReportConfig;

const HUMAN: [f64; 10] = [1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0, 5.0, 3.0, 1.0];
const A: [f64; 10] = [0.1, 0.25, 0.2, 0.4, 0.6, 0.55, 0.9, 0.8, 0.35, 0.15];
const B: [f64; 10] = [0.3, 0.1, 0.5, 0.2, 0.6, 0.4, 0.5, 0.7, 0.2, 0.4];
const C: [f64; 10] = [5.0, 3.0, 9.0, 1.0, 4.0, 8.0, 2.0, 6.0, 7.0, 10.0];

fn analysis(systems: &[Option<&str>]) -> Analysis {
    let mut table = ScoreTable::new(10);
    for (name, v) in [("A", A), ("B", B), ("C", C)] {
        table.push(Column::new(name, v.iter().copied().map(Some).collect())).unwrap();
    }
    let human = HumanScores { qualities: vec![(Criterion::Overall.into(), HUMAN.iter().copied().map(Some).collect())], uncorrelated: Vec::new() };
    let systems: Vec<Option<String>> = systems.iter().map(|s| s.map(str::to_owned)).collect();
    let lengths: Vec<Option<f64>> = (0..10).map(|i| Some(f64::from(i % 4))).collect();
    Analysis::of(AnalysisInput { table: &table, human: &human, systems: &systems, lengths: &lengths }, &ReportConfig { bootstrap: None, ..Default::default() }).unwrap()
}

#[test]
fn analysis_values_match_scipy() {
    let sys = [Some("s1"), Some("s2"), Some("s3"), Some("s1"), Some("s2"), Some("s3"), Some("s1"), Some("s2"), Some("s3"), None];
    let a = analysis(&sys);
    let close = |x: f64, want: f64, what: &str| assert!((x - want).abs() < 1e-12, "{what}: {x} vs scipy {want}");
    for (m, (rho, r)) in
        [(0.984_731_927_834_661_8, 0.975_470_066_286_128_6), (0.546_594_394_499_948_5, 0.545_776_822_909_815_2), (-0.344_656_174_742_131_6, -0.344_656_174_742_131_56)].into_iter().enumerate()
    {
        let cell = a.metrics[m].cells[0].unwrap();
        close(cell.spearman, rho, &format!("{} Spearman", a.metrics[m].metric.as_str()));
        close(cell.pearson, r, &format!("{} Pearson", a.metrics[m].metric.as_str()));
    }
    assert_eq!(a.best(Criterion::Overall).unwrap().as_str(), "A");
    assert!(a.metrics[0].cells[0].unwrap().best);
    // Williams' test of A against B and C, on Spearman correlations.
    for (row, (t, p)) in a.williams_vs_best.iter().zip([(4.658_991_755_731_575, 0.001_158_625_138_794_899_1), (5.109_266_966_522_558, 0.000_692_579_763_500_589_4)]) {
        assert!((row.t.unwrap() - t).abs() < 1e-9 && (row.pvalue_one_sided.unwrap() - p).abs() < 1e-9, "{row:?} vs scipy t {t}, p {p}");
        assert_eq!(row.undefined, None);
    }
    assert!(a.metrics[1].cells[0].unwrap().worse_than_best && a.metrics[2].cells[0].unwrap().worse_than_best);
    // The system level: the 9 items that name a system, 3 systems.
    let row = |kind| a.system_level.iter().find(|r| r.metric.as_str() == "A" && r.kind == kind).unwrap();
    assert_eq!(row(CorrelationKind::Pearson).systems, 3);
    close(row(CorrelationKind::Pearson).statistic.unwrap(), 0.838_627_869_377_534_8, "system Pearson");
    assert!((row(CorrelationKind::Pearson).pvalue.unwrap() - 0.366_716_573_320_923_1).abs() < 1e-9);
    close(row(CorrelationKind::Spearman).statistic.unwrap(), 0.866_025_403_784_438_7, "system Spearman");
    assert_eq!(a.notes, ["1 of 10 items name no system and are left out of the system level"]);
}

#[test]
fn two_systems_give_no_system_level_and_say_so() {
    let sys: Vec<Option<&str>> = (0..10).map(|i| Some(if i % 2 == 0 { "even" } else { "odd" })).collect();
    let a = analysis(&sys);
    assert!(a.system_level.is_empty(), "with two systems every coefficient is ±1: no rows");
    assert_eq!(a.notes, ["no system level: the items come from 2 system(s), and it needs at least 3"]);
    assert!(analysis(&[None; 10]).notes.is_empty() && analysis(&[None; 10]).system_level.is_empty());
}

#[test]
fn williams_without_a_value_says_why() {
    // The best scores items 0-5, the other items 4-9: two items in common, too few for the test.
    let mut table = ScoreTable::new(10);
    table.push(Column::new("A", (0..10).map(|i| (i < 6).then_some(A[i])).collect())).unwrap();
    table.push(Column::new("B", (0..10).map(|i| (i >= 4).then_some(B[i])).collect())).unwrap();
    let human = HumanScores { qualities: vec![(Criterion::Overall.into(), HUMAN.iter().copied().map(Some).collect())], uncorrelated: Vec::new() };
    let a = Analysis::of(AnalysisInput { table: &table, human: &human, systems: &vec![None; 10], lengths: &[None; 10] }, &ReportConfig { bootstrap: None, ..Default::default() }).unwrap();
    let row = &a.williams_vs_best[0];
    assert_eq!((row.n, row.t, row.pvalue_one_sided), (2, None, None));
    assert!(row.undefined.as_deref().is_some_and(|w| w.contains('2')), "{row:?}");
}

#[test]
fn an_undefined_correlation_carries_its_reason_into_the_reports() {
    let mut table = ScoreTable::new(10);
    table.push(Column::new("A", A.iter().copied().map(Some).collect())).unwrap();
    table.push(Column::new("flat", vec![Some(0.5); 10])).unwrap();
    table.push(Column::new("sparse", (0..10).map(|i| (i < 3).then_some(B[i])).collect())).unwrap();
    let human = HumanScores { qualities: vec![(Criterion::Overall.into(), HUMAN.iter().copied().map(Some).collect())], uncorrelated: Vec::new() };
    let a = Analysis::of(AnalysisInput { table: &table, human: &human, systems: &vec![None; 10], lengths: &[None; 10] }, &ReportConfig { bootstrap: None, ..Default::default() }).unwrap();
    let summary = dialeval_eval::write::summary_markdown(&a);
    assert!(summary.lines().any(|l| l.starts_with("| flat |") && l.contains("– (constant input)")), "{summary}");
    assert!(summary.lines().any(|l| l.starts_with("| sparse |") && l.contains("– (< 4 items)")), "{summary}");
    let json = serde_json::to_value(&a).unwrap();
    let rows = json["turn_level"]["rows"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["metric"] == "flat" && r["kind"] == "spearman" && r["undefined"] == "constant_input"), "{rows:?}");
    assert!(a.turn_level.to_markdown().contains("undefined (constant input)"));
}
