//! Several references in the embedding metrics: one reference gives the single-reference value,
//! several give the rule applied to the single-reference values (computed here independently),
//! and the order of the references never changes a result (bit for bit).
#![allow(clippy::unwrap_used, clippy::panic)] // tests fail loudly

use dialeval_common::TokenEmbeddings;
use dialeval_metrics::Result;
use dialeval_metrics::embedding::{
    BertScore, BertScoreConfig, MultiRef, Pooling, bert_score, bert_score_refs, embedding_average, greedy_matching, over_references, referenced_score_of, vector_extrema,
};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = TokenEmbeddings> {
    prop::collection::vec(prop::collection::vec(-1.0_f32..1.0, 4), 1..6)
        .prop_filter("no zero vector", |v| v.iter().all(|x| x.iter().any(|c| c.abs() > 1e-3)))
        .prop_map(|vectors| TokenEmbeddings { tokens: Vec::new(), vectors })
}

type Metric = fn(&TokenEmbeddings, &TokenEmbeddings) -> Result<f64>;
type Part = fn(&BertScore) -> f64;

fn metrics() -> Vec<(&'static str, Metric)> {
    vec![
        ("embedding_average", embedding_average),
        ("greedy_matching", greedy_matching),
        ("vector_extrema", vector_extrema),
        ("referenced_score max_min", |a, b| referenced_score_of(a, b, Pooling::MaxMin)),
        ("referenced_score mean", |a, b| referenced_score_of(a, b, Pooling::Mean)),
    ]
}

/// The rule written out, independently of `MultiRef::combine`.
fn by_hand(rule: MultiRef, values: &[f64]) -> f64 {
    match rule {
        MultiRef::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        MultiRef::Mean => values.iter().sum::<f64>() / values.len() as f64,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn several_references_follow_the_rule_in_any_order(hyp in text(), refs in prop::collection::vec(text(), 1..5), rotate in 0_usize..5, mean in any::<bool>()) {
        let rule = if mean { MultiRef::Mean } else { MultiRef::Max };
        let ordered: Vec<&TokenEmbeddings> = refs.iter().collect();
        let mut shuffled = ordered.clone();
        shuffled.rotate_left(rotate % ordered.len());
        shuffled.reverse();
        for (name, metric) in metrics() {
            let single: Vec<f64> = refs.iter().map(|r| metric(&hyp, r).unwrap()).collect();
            let combined = over_references(&hyp, &ordered, rule, metric).unwrap();
            prop_assert!((combined - by_hand(rule, &single)).abs() < 1e-12, "{name}: {combined} vs {single:?}");
            prop_assert_eq!(combined.to_bits(), over_references(&hyp, &shuffled, rule, metric).unwrap().to_bits(), "{} depends on the order", name);
            prop_assert_eq!(over_references(&hyp, &ordered[..1], rule, metric).unwrap().to_bits(), single[0].to_bits(), "{} with one reference", name);
        }
        let config = BertScoreConfig::default();
        let single: Vec<BertScore> = refs.iter().map(|r| bert_score(&hyp, r, &config).unwrap()).collect();
        let combined = bert_score_refs(&hyp, &ordered, &config, rule).unwrap();
        let parts: [(f64, Part); 3] = [(combined.precision, |s| s.precision), (combined.recall, |s| s.recall), (combined.f1, |s| s.f1)];
        for (value, part) in parts {
            prop_assert!((value - by_hand(rule, &single.iter().map(part).collect::<Vec<_>>())).abs() < 1e-12);
        }
        if rule == MultiRef::Max {
            // bert-score's element-wise maximum: F1 is the F1 of the reference with the best F1.
            let best = single.iter().max_by(|a, b| a.f1.total_cmp(&b.f1)).unwrap();
            prop_assert_eq!(combined.f1.to_bits(), best.f1.to_bits());
        }
        prop_assert_eq!(combined, bert_score_refs(&hyp, &shuffled, &config, rule).unwrap());
        prop_assert_eq!(bert_score_refs(&hyp, &ordered[..1], &config, rule).unwrap(), single[0]);
    }
}

#[test]
fn no_reference_is_an_error_not_a_score() {
    let hyp = TokenEmbeddings { tokens: Vec::new(), vectors: vec![vec![1.0, 0.0]] };
    assert!(over_references(&hyp, &[], MultiRef::Max, embedding_average).is_err());
    assert!(bert_score_refs(&hyp, &[], &BertScoreConfig::default(), MultiRef::Mean).is_err());
}
