//! Parity with scipy 1.17.1 on `../shared/golden/usr_personachat_correlations.json` (48
//! entries) and every case of `correlation_edge_cases.json`.
//!
//! Tolerances (golden README §2): statistic absolute 1e-12; p-value relative 1e-9 (absolute
//! 1e-300 below 1e-300). Where |r| is within 1e-12 of 1 the p-value is numerically unstable and
//! only NaN-ness is compared.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use dialeval_metrics::correlation::{Correlation, CorrelationKind, CorrelationOptions, KendallMethod, NanPolicy, correlate_with};
use dialeval_testkit::{float, floats, read_json, shared_dir};
use serde_json::Value;

fn close_p(got: f64, want: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if want < 1e-300 {
        return (got - want).abs() <= 1e-300;
    }
    ((got - want) / want).abs() <= 1e-9
}

fn check(label: &str, got: &Correlation, want: &Value) {
    let (stat, p) = (float(&want["statistic"]), float(&want["pvalue"]));
    if stat.is_nan() {
        assert!(got.statistic.is_nan(), "{label}: expected NaN, got {got:?}");
        assert!(got.undefined.is_some(), "{label}: NaN must say why");
    } else {
        assert!((got.statistic - stat).abs() <= 1e-12, "{label}: statistic {} vs scipy {stat}", got.statistic);
    }
    if (1.0 - stat.abs()).abs() <= 1e-12 {
        return;
    }
    assert!(close_p(got.pvalue, p), "{label}: p-value {} vs scipy {p}", got.pvalue);
}

#[test]
fn usr_personachat_48_entries_match_scipy() {
    let Some(shared) = shared_dir() else { return };
    let golden = read_json(&shared.join("golden/usr_personachat_correlations.json"));
    let results = golden["results"].as_array().unwrap();
    assert_eq!(results.len(), 48);
    let options = CorrelationOptions::default();
    for entry in results {
        let (metric, criterion) = (entry["metric"].as_str().unwrap(), entry["criterion"].as_str().unwrap());
        let x = floats(&golden["metric_vectors"][metric]);
        let y = floats(&golden["human_mean_vectors"][criterion]);
        assert_eq!(x.len(), 240);
        for (kind, key) in [(CorrelationKind::Pearson, "pearson"), (CorrelationKind::Spearman, "spearman"), (CorrelationKind::KendallTauB, "kendall_tau_b")] {
            let got = correlate_with(kind, &x, &y, &options).unwrap();
            check(&format!("{metric} × {criterion} {key}"), &got, &entry[key]);
        }
    }
}

#[test]
fn every_edge_case_matches_scipy() {
    let Some(shared) = shared_dir() else { return };
    let golden = read_json(&shared.join("golden/correlation_edge_cases.json"));
    let cases = golden["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 29);
    let mut checked = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let (x, y) = (floats(&case["x"]), floats(&case["y"]));
        let calls: [(&str, CorrelationKind, NanPolicy, KendallMethod); 7] = [
            ("pearsonr", CorrelationKind::Pearson, NanPolicy::Propagate, KendallMethod::Auto),
            ("spearmanr", CorrelationKind::Spearman, NanPolicy::Propagate, KendallMethod::Auto),
            ("kendalltau", CorrelationKind::KendallTauB, NanPolicy::Propagate, KendallMethod::Auto),
            ("kendalltau_method_asymptotic", CorrelationKind::KendallTauB, NanPolicy::Propagate, KendallMethod::Asymptotic),
            ("spearmanr_nan_policy_omit", CorrelationKind::Spearman, NanPolicy::Omit, KendallMethod::Auto),
            ("kendalltau_nan_policy_omit", CorrelationKind::KendallTauB, NanPolicy::Omit, KendallMethod::Auto),
            ("spearmanr_nan_policy_raise", CorrelationKind::Spearman, NanPolicy::Raise, KendallMethod::Auto),
        ];
        for (key, kind, nan_policy, kendall_method) in calls {
            let Some(want) = case.get(key) else { continue };
            let got = correlate_with(kind, &x, &y, &CorrelationOptions { nan_policy, kendall_method });
            let label = format!("{name}/{key}");
            if want.get("error").is_some() {
                assert!(got.is_err(), "{label}: scipy raises {}, got {got:?}", want["error"]);
            } else {
                check(&label, &got.unwrap_or_else(|e| panic!("{label}: {e}")), want);
            }
            checked += 1;
        }
    }
    assert!(checked >= 29 * 3, "{checked} calls checked");
}

/// Inputs at the edges of the float range (subnormal, huge, mixed magnitudes, a sum that
/// overflows) against scipy 1.17.1 (`fixtures/scipy_float_edges.json`, written by
/// `scripts/make_float_edges_fixture.py`); `null` is scipy's NaN. Before issue 53 a subnormal
/// series gave NaN where scipy gives 0.975.
#[test]
fn inputs_at_the_edges_of_the_float_range_match_scipy() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/scipy_float_edges.json")).unwrap();
    let golden: Value = serde_json::from_str(&text).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 9);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let (x, y) = (floats(&case["x"]), floats(&case["y"]));
        for (kind, key) in [(CorrelationKind::Pearson, "pearson"), (CorrelationKind::Spearman, "spearman"), (CorrelationKind::KendallTauB, "kendall")] {
            let got = correlate_with(kind, &x, &y, &CorrelationOptions::default()).unwrap_or_else(|e| panic!("{name}/{key}: {e}"));
            let nan_for_null = |v: &Value| if v.is_null() { Value::from("NaN") } else { v.clone() };
            let want = serde_json::json!({ "statistic": nan_for_null(&case[key]["statistic"]), "pvalue": nan_for_null(&case[key]["pvalue"]) });
            check(&format!("{name}/{key}"), &got, &want);
        }
    }
}
