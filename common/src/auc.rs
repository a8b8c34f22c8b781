//! ROC AUC with ties (Mann-Whitney U) and its typed failures.

/// Why [`roc_auc`] has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AucError {
    /// `scores` and `labels` differ in length: a caller's bug, never a data case.
    LengthMismatch {
        /// Number of scores.
        scores: usize,
        /// Number of labels.
        labels: usize,
    },
    /// A class is missing, so no positive can be ranked against a negative.
    OneClass {
        /// Items labelled 1.
        positives: usize,
        /// Items labelled otherwise.
        negatives: usize,
    },
}

impl std::fmt::Display for AucError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::LengthMismatch { scores, labels } => write!(f, "ROC AUC of {scores} scores against {labels} labels: the lengths differ"),
            Self::OneClass { positives, negatives } => write!(f, "ROC AUC is undefined with {positives} positives and {negatives} negatives: both classes are needed"),
        }
    }
}

impl std::error::Error for AucError {}

/// The positives (label 1) and negatives of `labels`, when both classes are there: what
/// [`roc_auc`] needs of its labels.
///
/// # Errors
/// [`AucError::OneClass`] when a class is missing.
pub fn both_classes(labels: &[u8]) -> Result<(usize, usize), AucError> {
    let positives = labels.iter().filter(|&&l| l == 1).count();
    let negatives = labels.len() - positives;
    if positives == 0 || negatives == 0 {
        return Err(AucError::OneClass { positives, negatives });
    }
    Ok((positives, negatives))
}

/// ROC AUC of `scores` against 0/1 `labels`: the probability that a random positive scores
/// above a random negative, ties counting one half (Mann-Whitney U with average ranks).
///
/// # Errors
/// [`AucError::LengthMismatch`] when the lengths differ, [`AucError::OneClass`] when a class
/// is missing.
///
/// # Complexity
/// O(n log n).
///
/// # Examples
/// ```
/// assert_eq!(dialeval_common::roc_auc(&[0.1, 0.4, 0.35, 0.8], &[0, 0, 1, 1]), Ok(0.75));
/// ```
pub fn roc_auc(scores: &[f64], labels: &[u8]) -> Result<f64, AucError> {
    if scores.len() != labels.len() {
        return Err(AucError::LengthMismatch { scores: scores.len(), labels: labels.len() });
    }
    let (pos, neg) = both_classes(labels)?;
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && scores[order[j]] == scores[order[i]] {
            j += 1;
        }
        let rank = (i + 1 + j) as f64 / 2.0;
        rank_sum += order[i..j].iter().filter(|&&k| labels[k] == 1).count() as f64 * rank;
        i = j;
    }
    Ok((rank_sum - (pos * (pos + 1)) as f64 / 2.0) / (pos * neg) as f64)
}
