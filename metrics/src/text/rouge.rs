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
    /// [`Error::Empty`] when `references` is empty; [`Error::TooLong`] when the hypothesis and a
    /// reference have more than [`MAX_LCS_CELLS`] token pairs (see [`rouge_l_bounded`]).
    pub fn score_multi(&self, hypothesis: &str, references: &[&str]) -> Result<RougeScores> {
        self.score_multi_until(hypothesis, references, &|| false)
    }

    /// [`Rouge::score_multi`], stopped with [`Error::Interrupted`] soon after `stop()` says so
    /// (it is asked about every 10 ms of LCS work): how a binding lets Ctrl-C through.
    ///
    /// # Errors
    /// As [`Rouge::score_multi`], and [`Error::Interrupted`].
    pub fn score_multi_until(&self, hypothesis: &str, references: &[&str], stop: &dyn Fn() -> bool) -> Result<RougeScores> {
        if references.is_empty() {
            return Err(Error::Empty("ROUGE needs at least one reference"));
        }
        let hyp = self.tokens(hypothesis);
        let all: Vec<RougeScores> = references
            .iter()
            .map(|r| {
                let reference = self.tokens(r);
                let mut ids = TokenIds::default();
                let (h, r) = (ids.map(&hyp), ids.map(&reference));
                Ok(RougeScores { rouge1: rouge_n(&h, &r, 1), rouge2: rouge_n(&h, &r, 2), rouge_l: rouge_l_bounded(&h, &r, MAX_LCS_CELLS, stop)? })
            })
            .collect::<Result<_>>()?;
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

/// ROUGE-L: longest common subsequence, without a limit ([`rouge_l_bounded`] has one).
///
/// # Complexity
/// O(|reference| · |hypothesis|) time, O(min(|reference|, |hypothesis|)) memory.
pub fn rouge_l<T: Eq>(hypothesis: &[T], reference: &[T]) -> PrfScore {
    if reference.is_empty() || hypothesis.is_empty() {
        return PrfScore::default();
    }
    let lcs = lcs_length(reference, hypothesis) as f64;
    PrfScore::new(lcs / hypothesis.len() as f64, lcs / reference.len() as f64)
}

/// The most token pairs (|hypothesis| × |reference|) ROUGE-L's LCS table may have in
/// [`Rouge::score_multi`] and [`rouge_l_bounded`]: 4·10⁸, about a second of work on one core
/// (two texts of 20,000 words each). Dialogue responses and references are far below it; a
/// longer pair is refused with [`Error::TooLong`] (the main job leaves its ROUGE-L cell empty
/// and names the item) instead of running for minutes. rouge-score is quadratic too, with no
/// limit.
pub const MAX_LCS_CELLS: u64 = 400_000_000;

/// ROUGE-L with a limit on the LCS table (`max_cells` token pairs) and a way to stop it:
/// `stop()` is asked every ~4 million cells (about 10 ms).
///
/// # Complexity
/// O(|reference| · |hypothesis|) time, O(min(|reference|, |hypothesis|)) memory.
///
/// # Errors
/// [`Error::TooLong`] beyond `max_cells`; [`Error::Interrupted`] when `stop()` said so.
pub fn rouge_l_bounded<T: Eq>(hypothesis: &[T], reference: &[T], max_cells: u64, stop: &dyn Fn() -> bool) -> Result<PrfScore> {
    let cells = hypothesis.len() as u64 * reference.len() as u64;
    if cells > max_cells {
        return Err(Error::TooLong { metric: "ROUGE-L", size: format!("{} × {} tokens = {cells} LCS cells", hypothesis.len(), reference.len()), limit: format!("{max_cells} cells") });
    }
    if reference.is_empty() || hypothesis.is_empty() {
        return Ok(PrfScore::default());
    }
    let lcs = lcs_length_until(reference, hypothesis, stop).ok_or(Error::Interrupted)? as f64;
    Ok(PrfScore::new(lcs / hypothesis.len() as f64, lcs / reference.len() as f64))
}

fn lcs_length<T: Eq>(a: &[T], b: &[T]) -> usize {
    lcs_length_until(a, b, &|| false).unwrap_or(0)
}

/// The LCS length with one row of the table in memory (the shorter text along it), or `None`
/// when `stop()` said so.
fn lcs_length_until<T: Eq>(a: &[T], b: &[T], stop: &dyn Fn() -> bool) -> Option<usize> {
    let (a, b) = if b.len() > a.len() { (b, a) } else { (a, b) };
    let mut prev = vec![0_usize; b.len() + 1];
    let mut cur = vec![0_usize; b.len() + 1];
    let rows_per_check = (1 << 22) / b.len().max(1) + 1;
    for (i, x) in a.iter().enumerate() {
        if i % rows_per_check == rows_per_check - 1 && stop() {
            return None;
        }
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y { prev[j] + 1 } else { prev[j + 1].max(cur[j]) };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    Some(prev[b.len()])
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

    #[test]
    fn the_lcs_is_bounded_interruptible_and_symmetric_in_memory() {
        let (a, b): (Vec<u32>, Vec<u32>) = ((0..300).map(|k| k % 7).collect(), (0..40).map(|k| k % 5).collect());
        assert_eq!(lcs_length(&a, &b), lcs_length(&b, &a), "the shorter text along the row");
        let bounded = rouge_l_bounded(&a, &b, 300 * 40, &|| false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bounded, rouge_l(&a, &b));
        assert!(matches!(rouge_l_bounded(&a, &b, 300 * 40 - 1, &|| false), Err(Error::TooLong { .. })));
        // Long enough to be asked: stopped at once.
        let long: Vec<u32> = (0..100_000).map(|k| k % 11).collect();
        assert!(matches!(rouge_l_bounded(&long, &long, u64::MAX, &|| true), Err(Error::Interrupted)));
        let words = "w ".repeat(20_001);
        let err = Rouge::new(Stemming::None).score_multi(&words, &[&words]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("too long for ROUGE-L: 20001 × 20001 tokens"), "{err}");
    }
}
