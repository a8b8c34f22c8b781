//! Embedding-based metrics over any [`TokenEmbedder`]:
//!
//! - cosine similarity and pooling (mean, max, and RUBER's max‖min concatenation);
//! - the referenced score of RUBER (Tao et al. 2018) and BERT-RUBER (Ghazarian et al. 2019):
//!   cosine of pooled token embeddings of response and reference;
//! - embedding average, greedy matching and vector extrema (Liu et al. 2016, "How NOT to
//!   evaluate your dialogue system");
//! - BERTScore (Zhang et al. 2020) with optional idf weights and baseline rescaling;
//! - hybrid combinations of two min-max-normalised scores (min, max, arithmetic and geometric
//!   mean), as RUBER and BERT-RUBER combine referenced and unreferenced scores.
//!
//! Several references: [`bert_score_refs`] follows bert-score (the element-wise maximum of P, R
//! and F over the references, so F is the F of the reference with the best F); every other
//! metric has an [`over_references`] form that scores each reference and applies a
//! [`MultiRef`] rule (the maximum unless the mean is asked for).

use std::collections::HashMap;

pub use dialeval_common::MultiRef;
use dialeval_common::{TokenEmbedder, TokenEmbeddings};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

fn embed_error(e: dialeval_common::EmbedError) -> Error {
    Error::Config(format!("embedder failed: {e}"))
}

/// Cosine similarity of two vectors.
///
/// # Errors
/// [`Error::LengthMismatch`] for different lengths; [`Error::Empty`] for a zero vector (the
/// cosine is undefined, not 0).
pub fn cosine(a: &[f32], b: &[f32]) -> Result<f64> {
    if a.len() != b.len() {
        return Err(Error::LengthMismatch { left: a.len(), right: b.len() });
    }
    let (mut dot, mut na, mut nb) = (0.0_f64, 0.0_f64, 0.0_f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return Err(Error::Empty("cosine of a zero vector"));
    }
    Ok((dot / (na.sqrt() * nb.sqrt())).clamp(-1.0, 1.0))
}

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pooling {
    /// Element-wise mean.
    Mean,
    /// Element-wise maximum.
    Max,
    /// RUBER's concatenation of element-wise maximum and minimum (twice the dimension).
    MaxMin,
}

/// Pools token vectors.
///
/// # Errors
/// [`Error::Empty`] for no tokens; [`Error::LengthMismatch`] for ragged vectors.
pub fn pool(vectors: &[Vec<f32>], pooling: Pooling) -> Result<Vec<f32>> {
    let first = vectors.first().ok_or(Error::Empty("pooling needs at least one token vector"))?;
    let dim = first.len();
    if let Some(v) = vectors.iter().find(|v| v.len() != dim) {
        return Err(Error::LengthMismatch { left: dim, right: v.len() });
    }
    let fold = |init: f32, f: fn(f32, f32) -> f32| -> Vec<f32> { (0..dim).map(|d| vectors.iter().fold(init, |acc, v| f(acc, v[d]))).collect() };
    Ok(match pooling {
        Pooling::Mean => {
            let n = vectors.len() as f64;
            (0..dim).map(|d| (vectors.iter().map(|v| f64::from(v[d])).sum::<f64>() / n) as f32).collect()
        }
        Pooling::Max => fold(f32::NEG_INFINITY, f32::max),
        Pooling::MaxMin => {
            let mut out = fold(f32::NEG_INFINITY, f32::max);
            out.extend(fold(f32::INFINITY, f32::min));
            out
        }
    })
}

/// RUBER / BERT-RUBER referenced score: cosine of the pooled token embeddings of response and
/// reference.
///
/// # Errors
/// Embedder failures, or an empty text.
pub fn referenced_score(embedder: &impl TokenEmbedder, response: &str, reference: &str, pooling: Pooling) -> Result<f64> {
    let e = embedder.embed_tokens(&[response, reference]).map_err(embed_error)?;
    let [r, g] = e.as_slice() else { return Err(Error::Config("embedder returned the wrong number of texts".into())) };
    referenced_score_of(r, g, pooling)
}

/// How [`referenced_score_refs`] scores a response against a reference set: the pooling of
/// token vectors, and how the scores against each reference combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefScoring {
    /// Pooling of each text's token vectors.
    pub pooling: Pooling,
    /// Combination over the references (BERT-RUBER with a reference set: the maximum unless
    /// the mean is asked for).
    pub rule: MultiRef,
}

/// [`referenced_score`] against several references, pooled and combined as `scoring` says.
///
/// # Errors
/// Embedder failures, an empty text, or no reference.
pub fn referenced_score_refs(embedder: &impl TokenEmbedder, response: &str, references: &[&str], scoring: RefScoring) -> Result<f64> {
    let texts: Vec<&str> = std::iter::once(response).chain(references.iter().copied()).collect();
    let e = embedder.embed_tokens(&texts).map_err(embed_error)?;
    let Some((r, refs)) = e.split_first().filter(|(_, refs)| refs.len() == references.len()) else {
        return Err(Error::Config("embedder returned the wrong number of texts".into()));
    };
    over_references(r, &refs.iter().collect::<Vec<_>>(), scoring.rule, |a, b| referenced_score_of(a, b, scoring.pooling))
}

/// [`referenced_score`] from token vectors already computed.
///
/// # Errors
/// An empty text.
pub fn referenced_score_of(response: &TokenEmbeddings, reference: &TokenEmbeddings, pooling: Pooling) -> Result<f64> {
    cosine(&pool(&response.vectors, pooling)?, &pool(&reference.vectors, pooling)?)
}

/// Embedding average: cosine of the mean token vectors.
///
/// # Errors
/// Empty inputs or zero vectors.
pub fn embedding_average(hypothesis: &TokenEmbeddings, reference: &TokenEmbeddings) -> Result<f64> {
    cosine(&pool(&hypothesis.vectors, Pooling::Mean)?, &pool(&reference.vectors, Pooling::Mean)?)
}

/// Greedy matching: each token's best cosine with the other side, averaged, then the mean of
/// both directions.
///
/// # Errors
/// Empty inputs or zero vectors.
pub fn greedy_matching(hypothesis: &TokenEmbeddings, reference: &TokenEmbeddings) -> Result<f64> {
    let one_way = |a: &[Vec<f32>], b: &[Vec<f32>]| -> Result<f64> {
        if a.is_empty() || b.is_empty() {
            return Err(Error::Empty("greedy matching needs tokens on both sides"));
        }
        let mut total = 0.0;
        for x in a {
            let mut best = f64::NEG_INFINITY;
            for y in b {
                best = best.max(cosine(x, y)?);
            }
            total += best;
        }
        Ok(total / a.len() as f64)
    };
    Ok((one_way(&hypothesis.vectors, &reference.vectors)? + one_way(&reference.vectors, &hypothesis.vectors)?) / 2.0)
}

/// Vector extrema: per dimension the value of largest magnitude (the maximum when it is at
/// least as large as |minimum|, else the minimum), then cosine.
///
/// # Errors
/// Empty inputs or zero vectors.
pub fn vector_extrema(hypothesis: &TokenEmbeddings, reference: &TokenEmbeddings) -> Result<f64> {
    let extrema = |v: &[Vec<f32>]| -> Result<Vec<f32>> {
        let max = pool(v, Pooling::Max)?;
        let min: Vec<f32> = pool(v, Pooling::MaxMin)?[max.len()..].to_vec();
        Ok(max.iter().zip(&min).map(|(&hi, &lo)| if hi >= lo.abs() { hi } else { lo }).collect())
    };
    cosine(&extrema(&hypothesis.vectors)?, &extrema(&reference.vectors)?)
}

/// BERTScore precision, recall and F1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BertScore {
    /// Mean over hypothesis tokens of the best cosine with a reference token.
    pub precision: f64,
    /// Mean over reference tokens of the best cosine with a hypothesis token.
    pub recall: f64,
    /// Harmonic mean (0 when both are 0).
    pub f1: f64,
}

/// Inverse document frequencies over a reference corpus, as bert-score computes them:
/// `idf(w) = ln((M + 1) / (df(w) + 1))` for M documents; unseen tokens get `ln(M + 1)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdfWeights {
    docs: usize,
    df: HashMap<String, usize>,
    /// Tokens weighted 0 (e.g. `[CLS]`, `[SEP]`).
    pub zero: Vec<String>,
}

impl IdfWeights {
    /// Counts document frequencies over tokenised reference documents.
    pub fn from_documents<'a>(documents: impl IntoIterator<Item = &'a [String]>, zero: &[&str]) -> Self {
        let mut df: HashMap<String, usize> = HashMap::new();
        let mut docs = 0;
        for doc in documents {
            docs += 1;
            let mut seen: Vec<&String> = doc.iter().collect();
            seen.sort();
            seen.dedup();
            for t in seen {
                *df.entry(t.clone()).or_default() += 1;
            }
        }
        Self { docs, df, zero: zero.iter().map(|s| (*s).to_owned()).collect() }
    }

    /// The weight of `token`.
    pub fn weight(&self, token: &str) -> f64 {
        if self.zero.iter().any(|z| z == token) {
            return 0.0;
        }
        let df = self.df.get(token).copied().unwrap_or(0);
        ((self.docs as f64 + 1.0) / (df as f64 + 1.0)).ln()
    }
}

/// Settings of [`bert_score`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BertScoreConfig {
    /// Idf weights; `None` weighs every token equally.
    pub idf: Option<IdfWeights>,
    /// Baseline `(P, R, F)` to rescale with `(s − b) / (1 − b)`.
    pub baseline: Option<[f64; 3]>,
}

/// BERTScore of one hypothesis against one reference from their token embeddings.
///
/// # Errors
/// Empty token lists, zero vectors, or all-zero idf weights on one side.
pub fn bert_score(hypothesis: &TokenEmbeddings, reference: &TokenEmbeddings, config: &BertScoreConfig) -> Result<BertScore> {
    let (h, r) = (&hypothesis.vectors, &reference.vectors);
    if h.is_empty() || r.is_empty() {
        return Err(Error::Empty("BERTScore needs tokens on both sides"));
    }
    let mut sim = vec![0.0; h.len() * r.len()];
    for (i, x) in h.iter().enumerate() {
        for (j, y) in r.iter().enumerate() {
            sim[i * r.len() + j] = cosine(x, y)?;
        }
    }
    let weights = |tokens: &TokenEmbeddings, n: usize| -> Vec<f64> {
        match &config.idf {
            Some(idf) if tokens.tokens.len() == n => tokens.tokens.iter().map(|t| idf.weight(t)).collect(),
            _ => vec![1.0; n],
        }
    };
    let (wh, wr) = (weights(hypothesis, h.len()), weights(reference, r.len()));
    let weighted = |best: &[f64], w: &[f64]| -> Result<f64> {
        let total: f64 = w.iter().sum();
        if total <= 0.0 {
            return Err(Error::Empty("all idf weights are zero"));
        }
        Ok(best.iter().zip(w).map(|(b, w)| b * w).sum::<f64>() / total)
    };
    let best_h: Vec<f64> = (0..h.len()).map(|i| (0..r.len()).map(|j| sim[i * r.len() + j]).fold(f64::NEG_INFINITY, f64::max)).collect();
    let best_r: Vec<f64> = (0..r.len()).map(|j| (0..h.len()).map(|i| sim[i * r.len() + j]).fold(f64::NEG_INFINITY, f64::max)).collect();
    let (mut p, mut rc) = (weighted(&best_h, &wh)?, weighted(&best_r, &wr)?);
    let mut f = if p + rc > 0.0 { 2.0 * p * rc / (p + rc) } else { 0.0 };
    if let Some([bp, br, bf]) = config.baseline {
        p = (p - bp) / (1.0 - bp);
        rc = (rc - br) / (1.0 - br);
        f = (f - bf) / (1.0 - bf);
    }
    Ok(BertScore { precision: p, recall: rc, f1: f })
}

/// BERTScore of one hypothesis against several references: with [`MultiRef::Max`] the
/// element-wise maximum of precision, recall and F1 over the references, as bert-score computes
/// it for a candidate with a reference group (`score(cands, refs=[[…], …])`); with
/// [`MultiRef::Mean`] their element-wise mean. One reference gives [`bert_score`]'s value.
///
/// # Errors
/// [`Error::Empty`] for no reference; as [`bert_score`] for any pair.
pub fn bert_score_refs(hypothesis: &TokenEmbeddings, references: &[&TokenEmbeddings], config: &BertScoreConfig, rule: MultiRef) -> Result<BertScore> {
    let scores: Vec<BertScore> = references.iter().map(|r| bert_score(hypothesis, r, config)).collect::<Result<_>>()?;
    let part = |f: fn(&BertScore) -> f64| rule.combine(scores.iter().map(f)).ok_or(Error::Empty("BERTScore needs at least one reference"));
    Ok(BertScore { precision: part(|s| s.precision)?, recall: part(|s| s.recall)?, f1: part(|s| s.f1)? })
}

/// A single-reference metric (`embedding_average`, `greedy_matching`, `vector_extrema`,
/// [`referenced_score_of`] with a pooling, …) applied to each reference and combined by `rule`.
///
/// # Errors
/// [`Error::Empty`] for no reference; the metric's error for any pair.
///
/// # Examples
/// ```
/// use dialeval_common::TokenEmbeddings;
/// use dialeval_metrics::embedding::{MultiRef, embedding_average, over_references};
/// let t = |v: &[[f32; 2]]| TokenEmbeddings { tokens: vec![], vectors: v.iter().map(|x| x.to_vec()).collect() };
/// let (hyp, a, b) = (t(&[[1.0, 0.0]]), t(&[[0.0, 1.0]]), t(&[[1.0, 0.0]]));
/// let best = over_references(&hyp, &[&a, &b], MultiRef::Max, embedding_average)?;
/// assert!((best - 1.0).abs() < 1e-12);
/// # Ok::<(), dialeval_metrics::Error>(())
/// ```
pub fn over_references(hypothesis: &TokenEmbeddings, references: &[&TokenEmbeddings], rule: MultiRef, metric: impl Fn(&TokenEmbeddings, &TokenEmbeddings) -> Result<f64>) -> Result<f64> {
    let values: Vec<f64> = references.iter().map(|r| metric(hypothesis, r)).collect::<Result<_>>()?;
    rule.combine(values).ok_or(Error::Empty("a referenced metric needs at least one reference"))
}

/// How [`hybrid`] combines two normalised scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HybridStrategy {
    /// The smaller.
    Min,
    /// The larger.
    Max,
    /// `(a + b) / 2`.
    ArithmeticMean,
    /// `√(a·b)`.
    GeometricMean,
}

/// Min-max normalisation of a score vector to [0, 1] (RUBER's normalisation before combining).
///
/// # Errors
/// [`Error::Empty`] for no scores; [`Error::Config`] for a constant or non-finite vector.
pub fn min_max_normalize(scores: &[f64]) -> Result<Vec<f64>> {
    if scores.is_empty() {
        return Err(Error::Empty("nothing to normalise"));
    }
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(Error::Config("scores must be finite to normalise".into()));
    }
    let (lo, hi) = scores.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &s| (l.min(s), h.max(s)));
    if hi == lo {
        return Err(Error::Config("constant scores cannot be min-max normalised".into()));
    }
    Ok(scores.iter().map(|s| (s - lo) / (hi - lo)).collect())
}

/// Combines two normalised scores item by item.
///
/// # Errors
/// [`Error::LengthMismatch`]; [`Error::Config`] for values outside [0, 1].
pub fn hybrid(a: &[f64], b: &[f64], strategy: HybridStrategy) -> Result<Vec<f64>> {
    if a.len() != b.len() {
        return Err(Error::LengthMismatch { left: a.len(), right: b.len() });
    }
    if a.iter().chain(b).any(|v| !(0.0..=1.0).contains(v)) {
        return Err(Error::Config("hybrid scores must be normalised to [0, 1] first".into()));
    }
    Ok(a.iter()
        .zip(b)
        .map(|(&x, &y)| match strategy {
            HybridStrategy::Min => x.min(y),
            HybridStrategy::Max => x.max(y),
            HybridStrategy::ArithmeticMean => (x + y) / 2.0,
            HybridStrategy::GeometricMean => (x * y).sqrt(),
        })
        .collect())
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;
    use dialeval_common::EmbedError;

    /// A deterministic token embedder: a fixed table of 2-d vectors, whitespace tokens.
    struct Table;

    fn vector(token: &str) -> Vec<f32> {
        match token {
            "cat" => vec![1.0, 0.0],
            "kitten" => vec![1.0, 1.0],
            "dog" => vec![0.0, 1.0],
            "the" => vec![1.0, 2.0],
            _ => vec![-1.0, 0.5],
        }
    }

    impl TokenEmbedder for Table {
        fn dim(&self) -> usize {
            2
        }
        fn embed_tokens(&self, texts: &[&str]) -> std::result::Result<Vec<TokenEmbeddings>, EmbedError> {
            Ok(texts
                .iter()
                .map(|t| {
                    let tokens: Vec<String> = t.split_whitespace().map(str::to_owned).collect();
                    let vectors = tokens.iter().map(|w| vector(w)).collect();
                    TokenEmbeddings { tokens, vectors }
                })
                .collect())
        }
    }

    fn te(text: &str) -> TokenEmbeddings {
        Table.embed_tokens(&[text]).unwrap().remove(0)
    }

    #[test]
    fn cosine_and_pooling_by_hand() {
        assert_abs_diff_eq!(cosine(&[1.0, 0.0], &[1.0, 1.0]).unwrap(), std::f64::consts::FRAC_1_SQRT_2, epsilon = 1e-12);
        assert!(cosine(&[0.0, 0.0], &[1.0, 1.0]).is_err());
        let v = vec![vec![1.0, -2.0], vec![3.0, 0.0]];
        assert_eq!(pool(&v, Pooling::Mean).unwrap(), [2.0, -1.0]);
        assert_eq!(pool(&v, Pooling::Max).unwrap(), [3.0, 0.0]);
        assert_eq!(pool(&v, Pooling::MaxMin).unwrap(), [3.0, 0.0, 1.0, -2.0]);
        assert!(pool(&[], Pooling::Mean).is_err());
    }

    #[test]
    fn referenced_score_and_word_metrics_by_hand() {
        // mean("the cat") = (1, 1); mean("the dog") = (0.5, 1.5): cos = 2 / (√2 · √2.5)
        let s = referenced_score(&Table, "the cat", "the dog", Pooling::Mean).unwrap();
        assert_abs_diff_eq!(s, 2.0 / (2.0_f64.sqrt() * 2.5_f64.sqrt()), epsilon = 1e-7);
        assert_abs_diff_eq!(embedding_average(&te("the cat"), &te("the dog")).unwrap(), s, epsilon = 1e-12);
        // greedy: cat->kitten 1/√2, kitten->cat 1/√2
        assert_abs_diff_eq!(greedy_matching(&te("cat"), &te("kitten")).unwrap(), std::f64::consts::FRAC_1_SQRT_2, epsilon = 1e-7);
        // extrema of "cat dog" = (1, 1); of "kitten" = (1, 1)
        assert_abs_diff_eq!(vector_extrema(&te("cat dog"), &te("kitten")).unwrap(), 1.0, epsilon = 1e-7);
    }

    #[test]
    fn referenced_score_against_a_reference_set() {
        let each: Vec<f64> = ["the dog", "kitten", "the cat"].iter().map(|r| referenced_score(&Table, "the cat", r, Pooling::Max).unwrap()).collect();
        let refs = ["the dog", "kitten", "the cat"];
        let max = referenced_score_refs(&Table, "the cat", &refs, RefScoring { pooling: Pooling::Max, rule: MultiRef::Max }).unwrap();
        assert_abs_diff_eq!(max, each.iter().copied().fold(f64::MIN, f64::max), epsilon = 1e-12);
        assert_abs_diff_eq!(max, 1.0, epsilon = 1e-7);
        let mean = referenced_score_refs(&Table, "the cat", &refs, RefScoring { pooling: Pooling::Max, rule: MultiRef::Mean }).unwrap();
        assert_abs_diff_eq!(mean, each.iter().sum::<f64>() / 3.0, epsilon = 1e-12);
        assert!(mean < max);
        assert!(referenced_score_refs(&Table, "the cat", &[], RefScoring { pooling: Pooling::Mean, rule: MultiRef::Max }).is_err(), "no reference");
    }

    #[test]
    fn bert_score_by_hand_with_idf_and_baseline() {
        // hyp "cat dog", ref "kitten": every similarity is 1/√2.
        let s = bert_score(&te("cat dog"), &te("kitten"), &BertScoreConfig::default()).unwrap();
        let c = std::f64::consts::FRAC_1_SQRT_2;
        assert_abs_diff_eq!(s.precision, c, epsilon = 1e-7);
        assert_abs_diff_eq!(s.recall, c, epsilon = 1e-7);
        let docs = [vec!["cat".to_owned()], vec!["cat".to_owned(), "dog".to_owned()]];
        let idf = IdfWeights::from_documents(docs.iter().map(Vec::as_slice), &[]);
        assert_abs_diff_eq!(idf.weight("cat"), (3.0_f64 / 3.0).ln());
        assert_abs_diff_eq!(idf.weight("dog"), (3.0_f64 / 2.0).ln());
        // "cat" weighs 0 and "dog" matches itself: precision = (0·0 + ln1.5·1) / ln1.5 = 1.
        let cfg = BertScoreConfig { idf: Some(idf), baseline: None };
        let s = bert_score(&te("cat dog"), &te("dog"), &cfg).unwrap();
        assert_abs_diff_eq!(s.precision, 1.0, epsilon = 1e-12);
        // without idf the cat row counts: (cos(cat, dog) + 1) / 2 = 0.5
        assert_abs_diff_eq!(bert_score(&te("cat dog"), &te("dog"), &BertScoreConfig::default()).unwrap().precision, 0.5, epsilon = 1e-12);
        // a reference whose every token has weight 0 is an error, not a silent 0
        assert!(bert_score(&te("dog"), &te("cat"), &cfg).is_err());
        let b = bert_score(&te("cat"), &te("cat"), &BertScoreConfig { idf: None, baseline: Some([0.5, 0.5, 0.5]) }).unwrap();
        assert_abs_diff_eq!(b.f1, 1.0, epsilon = 1e-12);
    }

    #[test]
    fn hybrid_combinations() {
        let a = min_max_normalize(&[1.0, 3.0, 2.0]).unwrap();
        assert_eq!(a, [0.0, 1.0, 0.5]);
        let b = [0.25, 0.25, 1.0];
        assert_eq!(hybrid(&a, &b, HybridStrategy::Min).unwrap(), [0.0, 0.25, 0.5]);
        assert_eq!(hybrid(&a, &b, HybridStrategy::Max).unwrap(), [0.25, 1.0, 1.0]);
        assert_eq!(hybrid(&a, &b, HybridStrategy::ArithmeticMean).unwrap(), [0.125, 0.625, 0.75]);
        assert_eq!(hybrid(&a, &b, HybridStrategy::GeometricMean).unwrap(), [0.0, 0.5, 0.5_f64.sqrt()]);
        assert!(hybrid(&[2.0], &[0.5], HybridStrategy::Min).is_err());
        assert!(min_max_normalize(&[1.0, 1.0]).is_err());
    }
}
