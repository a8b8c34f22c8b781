//! How well each metric separates two classes of responses (good vs. negative): ROC AUC with
//! the Mann–Whitney test, for corpora labelled by construction (DailyDialog++'s positives and
//! adversarial negatives) rather than rated by people.

use dialeval_common::roc_auc;
use dialeval_metrics::special::normal_sf;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::table::{MetricName, ScoreTable};

/// One metric's separation of the classes, over the items it scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Separation {
    /// The metric.
    pub metric: MetricName,
    /// Probability that a random positive scores above a random negative (ties count half);
    /// `None` when a class has no scored item.
    pub auc: Option<f64>,
    /// Scored positives.
    pub positives: usize,
    /// Scored negatives.
    pub negatives: usize,
    /// Two-sided p-value of AUC = 0.5 (Mann–Whitney U, normal approximation with the tie
    /// correction); `None` with `auc`, or when every score is tied.
    pub p_value: Option<f64>,
}

/// The separation by every metric of `table`, `positive[i]` labelling item `i`.
///
/// # Errors
/// [`Error::Config`] when the labels do not cover the table's items.
pub fn separation(table: &ScoreTable, positive: &[bool]) -> Result<Vec<Separation>> {
    if positive.len() != table.items() {
        return Err(Error::Config(format!("{} labels for {} items", positive.len(), table.items())));
    }
    Ok(table
        .columns()
        .iter()
        .map(|c| {
            let (scores, labels): (Vec<f64>, Vec<u8>) = c.values.iter().zip(positive).filter_map(|(v, &p)| v.map(|v| (v, u8::from(p)))).unzip();
            let positives = labels.iter().filter(|&&l| l == 1).count();
            let negatives = labels.len() - positives;
            let auc = roc_auc(&scores, &labels).ok(); // one score per label by construction: None = one class
            let p_value = auc.and_then(|a| mann_whitney_p(a, &scores, positives, negatives));
            Separation { metric: c.metric.clone(), auc, positives, negatives, p_value }
        })
        .collect())
}

/// Two-sided p of U = AUC·n₁n₂ against n₁n₂/2, variance corrected for ties.
fn mann_whitney_p(auc: f64, scores: &[f64], n1: usize, n2: usize) -> Option<f64> {
    let (n1, n2, n) = (n1 as f64, n2 as f64, scores.len() as f64);
    let mut sorted = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|&&v| v == sorted[i]).count();
        let t = j as f64;
        ties += t * t * t - t;
        i += j;
    }
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if variance <= 0.0 || !variance.is_finite() {
        return None;
    }
    let z = (auc * n1 * n2 - n1 * n2 / 2.0).abs() / variance.sqrt();
    Some((2.0 * normal_sf(z)).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Column;

    #[test]
    fn auc_and_p_follow_the_mann_whitney_test() {
        let mut table = ScoreTable::new(8);
        let perfect = vec![Some(1.0), Some(2.0), Some(3.0), Some(4.0), Some(5.0), Some(6.0), Some(7.0), Some(8.0)];
        let tied = vec![Some(1.0); 8];
        let partial = vec![Some(1.0), None, Some(3.0), Some(4.0), Some(2.0), Some(6.0), None, Some(8.0)];
        let some_ties = [1.0, 1.0, 2.0, 4.0, 6.0, 8.0, 1.0, 3.0].map(Some).to_vec();
        for (name, v) in [("perfect", perfect), ("tied", tied), ("partial", partial), ("some ties", some_ties)] {
            table.push(Column::new(name, v)).unwrap_or_else(|e| panic!("{e}"));
        }
        let labels = [false, false, false, false, true, true, true, true];
        let s = separation(&table, &labels).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s[0].auc, Some(1.0));
        // scipy.stats.mannwhitneyu([5,6,7,8], [1,2,3,4], method="asymptotic", use_continuity=False).pvalue
        assert!((s[0].p_value.unwrap_or(0.0) - 0.020_921_335_337_794_014).abs() < 1e-12, "{:?}", s[0].p_value);
        assert_eq!((s[1].auc, s[1].p_value), (Some(0.5), None));
        assert_eq!((s[2].positives, s[2].negatives), (3, 3));
        // mannwhitneyu([6, 8, 1, 3], [1, 1, 2, 4], …): the tie correction matters here.
        assert!((s[3].p_value.unwrap_or(0.0) - 0.236_723_570_637_857_32).abs() < 1e-12, "{:?}", s[3].p_value);
        assert!(separation(&table, &labels[..7]).is_err());
    }
}
