//! How well scores separate good responses from negatives: accuracy at 0.5 and ROC AUC against
//! one kind of negative, and the check a dev set must pass to choose checkpoints.

use dialeval_common::{AucError, roc_auc};
use dialeval_datasets::pairs::{PairKind, TrainingPair};

use crate::error::{Error, Result};

/// Share of scores on the right side of 0.5 for their 0/1 labels; `None` for no scores.
pub fn accuracy(scores: &[f64], labels: &[u8]) -> Option<f64> {
    let correct = scores.iter().zip(labels).filter(|(s, l)| (**s >= 0.5) == (**l == 1)).count();
    (!scores.is_empty()).then(|| correct as f64 / scores.len() as f64)
}

/// The scores and labels of the positive pairs and of the negatives of one `kind`.
pub fn scores_against(pairs: &[TrainingPair], scores: &[f64], kind: PairKind) -> (Vec<f64>, Vec<u8>) {
    pairs.iter().zip(scores).filter(|(p, _)| p.kind == PairKind::Positive || p.kind == kind).map(|(p, s)| (*s, p.label())).unzip()
}

/// ROC AUC of the positive pairs against the negatives of one `kind`.
///
/// # Errors
/// [`AucError::LengthMismatch`] when there is not one score per pair, [`AucError::OneClass`]
/// when the positives or the negatives of `kind` are missing.
pub fn auc_against(pairs: &[TrainingPair], scores: &[f64], kind: PairKind) -> std::result::Result<f64, AucError> {
    if pairs.len() != scores.len() {
        return Err(AucError::LengthMismatch { scores: scores.len(), labels: pairs.len() });
    }
    let (s, l) = scores_against(pairs, scores, kind);
    roc_auc(&s, &l)
}

/// A dev set fit to choose checkpoints: ROC AUC picks the best epoch and drives early
/// stopping, so both classes must be there.
///
/// # Errors
/// [`Error::DevSet`] naming the class counts.
pub fn check_dev_labels(labels: &[u8]) -> Result<()> {
    dialeval_common::both_classes(labels).map(|_| ()).map_err(Error::DevSet)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_by_hand() {
        assert_eq!(roc_auc(&[0.1, 0.4, 0.35, 0.8], &[0, 0, 1, 1]), Ok(0.75));
        assert_eq!(roc_auc(&[0.5, 0.5], &[0, 1]), Ok(0.5));
        assert_eq!(roc_auc(&[0.5], &[1]), Err(AucError::OneClass { positives: 1, negatives: 0 }));
        assert_eq!(roc_auc(&[0.5, 0.1], &[1]), Err(AucError::LengthMismatch { scores: 2, labels: 1 }));
        assert!(matches!(check_dev_labels(&[1, 1, 1]), Err(Error::DevSet(AucError::OneClass { positives: 3, negatives: 0 }))));
        assert!(check_dev_labels(&[1, 0]).is_ok());
    }

    #[test]
    fn accuracy_by_hand() {
        assert_eq!(accuracy(&[0.1, 0.5, 0.7, 0.2], &[0, 1, 0, 1]), Some(0.5));
        assert_eq!(accuracy(&[], &[]), None);
    }
}
