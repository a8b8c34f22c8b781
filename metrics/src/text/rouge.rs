//! ROUGE-1, ROUGE-2 and ROUGE-L (Lin 2004) as rouge-score 0.1.2 computes them
//! (`rouge_score/rouge_scorer.py`): its tokenizer, optional Porter stemming of tokens longer than
//! three characters, clipped n-gram overlap, whole-text LCS, and for several references the
//! scores of the reference with the highest F-measure (per ROUGE type, first on ties).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::text::ngram::{NgramCounts, TokenIds};
use crate::text::porter;
use crate::text::tokenize::tokenize_rouge;

/// Which ROUGE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RougeVariant {
    /// Unigram overlap.
    #[serde(rename = "rouge1")]
    Rouge1,
    /// Bigram overlap.
    #[serde(rename = "rouge2")]
    Rouge2,
    /// Longest common subsequence over the whole text.
    #[serde(rename = "rougeL")]
    RougeL,
}

/// Precision, recall and F-measure (rouge-score's `Score`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PrfScore {
    /// Matches over hypothesis size.
    pub precision: f64,
    /// Matches over reference size.
    pub recall: f64,
    /// `2PR / (P + R)`, 0 when `P + R == 0`.
    pub fmeasure: f64,
}

impl PrfScore {
    fn new(precision: f64, recall: f64) -> Self {
        let fmeasure = if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 };
        Self { precision, recall, fmeasure }
    }
}

/// ROUGE-1, ROUGE-2 and ROUGE-L of one hypothesis.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RougeScores {
    /// ROUGE-1.
    pub rouge1: PrfScore,
    /// ROUGE-2.
    pub rouge2: PrfScore,
    /// ROUGE-L.
    #[serde(rename = "rougeL")]
    pub rouge_l: PrfScore,
}

impl RougeScores {
    /// The score of one variant.
    pub fn get(&self, variant: RougeVariant) -> PrfScore {
        match variant {
            RougeVariant::Rouge1 => self.rouge1,
            RougeVariant::Rouge2 => self.rouge2,
            RougeVariant::RougeL => self.rouge_l,
        }
    }
}

/// The ROUGE scorer.
///
/// # Examples
/// ```
/// use dialeval_metrics::text::rouge::Rouge;
/// use dialeval_metrics::text::rouge::Stemming;
/// let s = Rouge::new(Stemming::None).score("the cat was on the mat", "the cat sat on the mat");
/// assert!((s.rouge1.fmeasure - 5.0 / 6.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Rouge {
    stemming: Stemming,
}

/// Whether ROUGE stems its tokens (rouge-score's `use_stemmer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stemming {
    /// Tokens as they are (`use_stemmer=False`).
    #[default]
    None,
    /// nltk's Porter stemmer on every token (`use_stemmer=True`).
    Porter,
}

impl Rouge {
    /// A scorer with the given stemming.
    pub fn new(stemming: Stemming) -> Self {
        Self { stemming }
    }

    /// Tokens as rouge-score sees them.
    pub fn tokens(&self, text: &str) -> Vec<String> {
        match self.stemming {
            Stemming::Porter => tokenize_rouge(text, Some(&|w: &str| porter::stem(w))),
            Stemming::None => tokenize_rouge(text, None),
        }
    }

    /// Scores `hypothesis` against one `reference` (rouge-score's `score(target, prediction)`:
    /// note the reverse order there). Hypothesis first, as every metric of this crate.
    pub fn score(&self, hypothesis: &str, reference: &str) -> RougeScores {
        score_tokens(&self.tokens(hypothesis), &self.tokens(reference))
    }

    /// Scores against several references, keeping per variant the reference with the highest
    /// F-measure (rouge-score's `score_multi`).
    ///
    /// # Errors
    /// [`Error::Empty`] when `references` is empty.
    pub fn score_multi(&self, hypothesis: &str, references: &[&str]) -> Result<RougeScores> {
        if references.is_empty() {
            return Err(Error::Empty("ROUGE needs at least one reference"));
        }
        let hyp = self.tokens(hypothesis);
        let all: Vec<RougeScores> = references.iter().map(|r| score_tokens(&hyp, &self.tokens(r))).collect();
        let best = |f: fn(&RougeScores) -> PrfScore| {
            let mut best = f(&all[0]);
            for s in &all[1..] {
                if f(s).fmeasure > best.fmeasure {
                    best = f(s);
                }
            }
            best
        };
        Ok(RougeScores { rouge1: best(|s| s.rouge1), rouge2: best(|s| s.rouge2), rouge_l: best(|s| s.rouge_l) })
    }
}

/// All three variants from token lists (hypothesis first).
pub fn score_tokens(hypothesis: &[String], reference: &[String]) -> RougeScores {
    let mut ids = TokenIds::default();
    let (hypothesis, reference) = (ids.map(hypothesis), ids.map(reference));
    RougeScores { rouge1: rouge_n(&hypothesis, &reference, 1), rouge2: rouge_n(&hypothesis, &reference, 2), rouge_l: rouge_l(&hypothesis, &reference) }
}

/// ROUGE-N: clipped n-gram overlap, over tokens or token ids.
pub fn rouge_n<T: std::hash::Hash + Eq>(hypothesis: &[T], reference: &[T], n: usize) -> PrfScore {
    let (r, h) = (NgramCounts::new(reference, n), NgramCounts::new(hypothesis, n));
    let overlap = f64::from(r.overlap(&h));
    PrfScore::new(overlap / f64::from(h.total().max(1)), overlap / f64::from(r.total().max(1)))
}

/// ROUGE-L: longest common subsequence.
///
/// # Complexity
/// O(|reference| · |hypothesis|) time, O(|hypothesis|) memory.
pub fn rouge_l<T: Eq>(hypothesis: &[T], reference: &[T]) -> PrfScore {
    if reference.is_empty() || hypothesis.is_empty() {
        return PrfScore::default();
    }
    let lcs = lcs_length(reference, hypothesis) as f64;
    PrfScore::new(lcs / hypothesis.len() as f64, lcs / reference.len() as f64)
}

fn lcs_length<T: Eq>(a: &[T], b: &[T]) -> usize {
    let mut prev = vec![0_usize; b.len() + 1];
    let mut cur = vec![0_usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y { prev[j] + 1 } else { prev[j + 1].max(cur[j]) };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_texts_score_zero() {
        let s = Rouge::new(Stemming::None).score("something", "");
        assert_eq!(s.rouge_l, PrfScore::default());
        assert_eq!(s.rouge1.fmeasure, 0.0);
    }

    #[test]
    fn multi_reference_takes_best_f() {
        let r = Rouge::new(Stemming::None);
        let s = r.score_multi("the cat sat", &["x y z", "the cat"]).unwrap_or_else(|e| panic!("{e}"));
        assert!((s.rouge1.recall - 1.0).abs() < 1e-15);
        assert!((s.rouge1.precision - 2.0 / 3.0).abs() < 1e-15, "hypothesis first: precision over its 3 tokens");
        assert!(r.score_multi("a", &[]).is_err());
    }
}
