//! How a referenced metric combines its values against several references.

/// How a referenced metric turns its values against several references into one score.
///
/// `Max` is the rule of bert-score (the element-wise maximum of P, R and F over a candidate's
/// references), rouge-score's `score_multi`, nltk's METEOR and multi-reference Smatch use; it
/// rewards a response for matching any good answer. `Mean` averages over the references (the
/// rule of some embedding-metric studies); it rewards matching all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MultiRef {
    /// The best value over the references.
    #[default]
    Max,
    /// The mean over the references.
    Mean,
}

impl MultiRef {
    /// The rule applied to `values`, one per reference; `None` for no value. The result does not
    /// depend on the order of the values (the mean sums them in sorted order).
    ///
    /// # Examples
    /// ```
    /// use dialeval_common::MultiRef;
    /// assert_eq!(MultiRef::Max.combine([0.2, 0.7, 0.4]), Some(0.7));
    /// assert_eq!(MultiRef::Mean.combine([0.5, 1.0]), Some(0.75));
    /// assert_eq!(MultiRef::Max.combine([]), None);
    /// ```
    pub fn combine(self, values: impl IntoIterator<Item = f64>) -> Option<f64> {
        let mut v: Vec<f64> = values.into_iter().collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        match self {
            Self::Max => v.last().copied(),
            Self::Mean => Some(v.iter().sum::<f64>() / v.len() as f64),
        }
    }
}
