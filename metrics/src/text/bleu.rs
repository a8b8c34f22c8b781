//! BLEU (Papineni et al. 2002) as sacrebleu 2.6.0 computes it (`sacrebleu/metrics/bleu.py`):
//! 13a tokenisation, clipped n-gram counts against the per-n-gram maximum over references,
//! closest reference length (ties to the shorter), brevity penalty, smoothing (Chen and Cherry
//! 2014) and effective order for sentence-level scores.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::text::ngram::{NgramCounts, TokenIds};
use crate::text::tokenize::{py_rstrip, py_split, tokenize_13a, tokenize_13a_spaced};

/// Smoothing of zero n-gram precisions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Smoothing {
    /// No smoothing.
    None,
    /// Method 1: zero counts become `value` (sacrebleu's default 0.1).
    Floor(f64),
    /// Method 2: add `value` to counts and totals of orders above 1 (default 1).
    AddK(f64),
    /// Method 3 (NIST mteval): the k-th zero precision becomes `1 / (2^k · total)`.
    Exp,
}

/// BLEU settings, validated by [`Bleu::new`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BleuConfig {
    /// Highest n-gram order (sacrebleu: 4).
    pub max_order: usize,
    /// Smoothing method.
    pub smoothing: Smoothing,
    /// Drop orders with no n-grams from the geometric mean.
    pub effective_order: bool,
    /// Lowercase before tokenising.
    pub lowercase: bool,
    /// Apply the 13a tokenizer (otherwise split on whitespace only).
    pub tokenize: bool,
}

impl BleuConfig {
    /// `sacrebleu.sentence_bleu` defaults: exp smoothing, effective order, 13a, mixed case.
    pub fn sentence() -> Self {
        Self { max_order: 4, smoothing: Smoothing::Exp, effective_order: true, lowercase: false, tokenize: true }
    }

    /// `sacrebleu.corpus_bleu` defaults: as [`BleuConfig::sentence`] without effective order.
    pub fn corpus() -> Self {
        Self { effective_order: false, ..Self::sentence() }
    }
}

/// A BLEU score with the statistics behind it (sacrebleu's `BLEUScore`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BleuScore {
    /// BLEU on the 0–100 scale.
    pub score: f64,
    /// Clipped matching n-grams per order.
    pub counts: Vec<u64>,
    /// Hypothesis n-grams per order.
    pub totals: Vec<u64>,
    /// Precisions per order, 0–100.
    pub precisions: Vec<f64>,
    /// Brevity penalty.
    pub bp: f64,
    /// Hypothesis length in tokens.
    pub sys_len: u64,
    /// Effective reference length in tokens.
    pub ref_len: u64,
}

/// Sufficient statistics of one segment; they add up over a corpus.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BleuStats {
    /// Hypothesis length.
    pub sys_len: u64,
    /// Closest reference length.
    pub ref_len: u64,
    /// Clipped matches per order.
    pub counts: Vec<u64>,
    /// Hypothesis n-grams per order.
    pub totals: Vec<u64>,
}

impl BleuStats {
    fn add(&mut self, other: &Self) {
        self.sys_len += other.sys_len;
        self.ref_len += other.ref_len;
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
            self.totals.resize(other.totals.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        for (a, b) in self.totals.iter_mut().zip(&other.totals) {
            *a += b;
        }
    }
}

/// The BLEU metric.
///
/// # Examples
/// ```
/// use dialeval_metrics::text::bleu::{Bleu, BleuConfig};
/// let bleu = Bleu::new(BleuConfig::sentence())?;
/// let s = bleu.sentence("the cat sat on the mat", &["the cat sat on a mat"])?;
/// assert_eq!(s.counts, [5, 3, 2, 1]);
/// assert!((s.score - 53.728_496_591_177_1).abs() < 1e-9); // sacrebleu.sentence_bleu
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Bleu {
    config: BleuConfig,
}

impl Bleu {
    /// Validates `config`.
    ///
    /// # Errors
    /// [`Error::Config`] for `max_order == 0` or a negative smoothing value.
    pub fn new(config: BleuConfig) -> Result<Self> {
        if config.max_order == 0 {
            return Err(Error::Config("BLEU max_order must be at least 1".into()));
        }
        if let Smoothing::Floor(v) | Smoothing::AddK(v) = config.smoothing
            && (v.is_nan() || v < 0.0)
        {
            return Err(Error::Config(format!("BLEU smoothing value must be non-negative, got {v}")));
        }
        Ok(Self { config })
    }

    /// The settings.
    pub fn config(&self) -> &BleuConfig {
        &self.config
    }

    /// Tokens as sacrebleu sees them (after lowercasing and the tokenizer).
    pub fn tokens(&self, text: &str) -> Vec<String> {
        py_split(&self.tokenized(text)).map(str::to_owned).collect()
    }

    /// The text after lowercasing and the tokenizer: tokens separated by whitespace.
    fn tokenized(&self, text: &str) -> String {
        self.spaced(text, tokenize_13a)
    }

    /// A text whose [`py_split`] yields the tokens (the 13a tokens not yet joined).
    fn spaced(&self, text: &str, tokenize: fn(&str) -> String) -> String {
        let text = py_rstrip(text);
        let lowered;
        let text = if self.config.lowercase {
            lowered = text.to_lowercase();
            lowered.as_str()
        } else {
            text
        };
        if self.config.tokenize { tokenize(text) } else { text.to_owned() }
    }

    /// Statistics of one hypothesis against its references.
    ///
    /// # Errors
    /// [`Error::Empty`] when `references` is empty.
    pub fn stats(&self, hypothesis: &str, references: &[&str]) -> Result<BleuStats> {
        if references.is_empty() {
            return Err(Error::Empty("BLEU needs at least one reference"));
        }
        let hyp_text = self.spaced(hypothesis, tokenize_13a_spaced);
        let ref_texts: Vec<String> = references.iter().map(|r| self.spaced(r, tokenize_13a_spaced)).collect();
        // An upper bound on the distinct tokens: a word and its separator take at least two bytes.
        let mut ids = TokenIds::with_capacity((hyp_text.len() + ref_texts.iter().map(String::len).sum::<usize>()).div_ceil(2));
        let hyp = ids.map(py_split(&hyp_text));
        let refs: Vec<Vec<u32>> = ref_texts.iter().map(|r| ids.map(py_split(r))).collect();
        let max = self.config.max_order;
        let mut counts = vec![0; max];
        let mut totals = vec![0; max];
        // Up to 4-grams of fewer than 2^16 distinct tokens fit a u64: sorted keys replace hashing.
        let packable = ids.len() < 1 << 16;
        let (mut hyp_keys, mut ref_keys) = (Vec::with_capacity(hyp.len()), Vec::new());
        for n in 1..=max {
            if packable && n <= 4 {
                packed_into(&hyp, n, &mut hyp_keys);
                totals[n - 1] = hyp_keys.len() as u64;
                counts[n - 1] = if let [only] = refs.as_slice() {
                    // One reference: the clipped count is the size of the multiset intersection.
                    packed_into(only, n, &mut ref_keys);
                    common(&hyp_keys, &ref_keys)
                } else {
                    let best = refs
                        .iter()
                        .map(|r| {
                            packed_into(r, n, &mut ref_keys);
                            runs(&ref_keys)
                        })
                        .reduce(|a, b| merge_max(&a, &b))
                        .unwrap_or_default();
                    clipped(&runs(&hyp_keys), &best)
                };
                continue;
            }
            let h = NgramCounts::new(&hyp, n);
            let mut best = NgramCounts::new(&refs[0], n);
            for r in &refs[1..] {
                best.max_with(&NgramCounts::new(r, n));
            }
            counts[n - 1] = u64::from(h.overlap(&best));
            totals[n - 1] = u64::from(h.total());
        }
        let sys_len = hyp.len() as u64;
        let ref_len = closest_ref_len(sys_len, refs.iter().map(|r| r.len() as u64));
        Ok(BleuStats { sys_len, ref_len, counts, totals })
    }

    /// BLEU from (summed) statistics, sacrebleu's `compute_bleu`.
    pub fn score_stats(&self, stats: &BleuStats) -> BleuScore {
        let max = self.config.max_order;
        let mut counts: Vec<f64> = stats.counts.iter().map(|&c| c as f64).collect();
        let mut totals: Vec<f64> = stats.totals.iter().map(|&c| c as f64).collect();
        counts.resize(max, 0.0);
        totals.resize(max, 0.0);
        let (sys_len, ref_len) = (stats.sys_len as f64, stats.ref_len as f64);
        let bp = if sys_len < ref_len { if sys_len > 0.0 { (1.0 - ref_len / sys_len).exp() } else { 0.0 } } else { 1.0 };
        let mut precisions = vec![0.0; max];
        let done = |score: f64, precisions: Vec<f64>| BleuScore { score, counts: stats.counts.clone(), totals: stats.totals.clone(), precisions, bp, sys_len: stats.sys_len, ref_len: stats.ref_len };
        if counts.iter().all(|&c| c == 0.0) {
            return done(0.0, precisions);
        }
        let mut smooth_mteval = 1.0;
        let mut eff_order = max;
        for n in 1..=max {
            if let Smoothing::AddK(k) = self.config.smoothing
                && n > 1
            {
                counts[n - 1] += k;
                totals[n - 1] += k;
            }
            if totals[n - 1] == 0.0 {
                break;
            }
            if self.config.effective_order {
                eff_order = n;
            }
            if counts[n - 1] == 0.0 {
                match self.config.smoothing {
                    Smoothing::Exp => {
                        smooth_mteval *= 2.0;
                        precisions[n - 1] = 100.0 / (smooth_mteval * totals[n - 1]);
                    }
                    Smoothing::Floor(v) => precisions[n - 1] = 100.0 * v / totals[n - 1],
                    Smoothing::None | Smoothing::AddK(_) => {}
                }
            } else {
                precisions[n - 1] = 100.0 * counts[n - 1] / totals[n - 1];
            }
        }
        let log_sum = precisions[..eff_order].iter().fold(0.0, |s, &p| s + if p == 0.0 { -9_999_999_999.0 } else { p.ln() });
        done(bp * (log_sum / eff_order as f64).exp(), precisions)
    }

    /// Sentence BLEU of one hypothesis (`sacrebleu.sentence_bleu` with [`BleuConfig::sentence`]).
    ///
    /// # Errors
    /// [`Error::Empty`] when `references` is empty.
    pub fn sentence(&self, hypothesis: &str, references: &[&str]) -> Result<BleuScore> {
        Ok(self.score_stats(&self.stats(hypothesis, references)?))
    }

    /// Corpus BLEU from summed statistics (`sacrebleu.corpus_bleu` with [`BleuConfig::corpus`]);
    /// `references[i]` are the references of `hypotheses[i]`.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], or [`Error::Empty`] for a segment without references.
    pub fn corpus<R: AsRef<str>>(&self, hypotheses: &[&str], references: &[Vec<R>]) -> Result<BleuScore> {
        if hypotheses.len() != references.len() {
            return Err(Error::LengthMismatch { left: hypotheses.len(), right: references.len() });
        }
        let mut total = BleuStats::default();
        for (h, refs) in hypotheses.iter().zip(references) {
            let refs: Vec<&str> = refs.iter().map(AsRef::as_ref).collect();
            total.add(&self.stats(h, &refs)?);
        }
        Ok(self.score_stats(&total))
    }
}

/// sacrebleu's `_get_closest_ref_len`: the reference length closest to the hypothesis length,
/// the shorter one on ties.
fn closest_ref_len(hyp_len: u64, ref_lens: impl Iterator<Item = u64>) -> u64 {
    let mut best: Option<(u64, u64)> = None;
    for len in ref_lens {
        let diff = hyp_len.abs_diff(len);
        best = match best {
            None => Some((diff, len)),
            Some((d, l)) if diff < d || (diff == d && len < l) => Some((diff, len)),
            keep => keep,
        };
    }
    best.map_or(0, |(_, l)| l)
}

/// The `n`-grams of `tokens` (ids below 2^16, `n` ≤ 4) packed into u64 keys, sorted, in `keys`
/// (cleared first, so one buffer serves every order).
fn packed_into(tokens: &[u32], n: usize, keys: &mut Vec<u64>) {
    keys.clear();
    keys.extend(tokens.windows(n).map(|w| w.iter().fold(0_u64, |k, &t| (k << 16) | u64::from(t))));
    keys.sort_unstable();
}

/// `Σ min(count_a(g), count_b(g))` over two sorted key lists: the size of their multiset
/// intersection.
fn common(a: &[u64], b: &[u64]) -> u64 {
    let (mut i, mut j, mut sum) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                sum += 1;
                i += 1;
                j += 1;
            }
        }
    }
    sum
}

/// `(key, count)` runs of sorted keys.
fn runs(sorted: &[u64]) -> Vec<(u64, u32)> {
    let mut out: Vec<(u64, u32)> = Vec::with_capacity(sorted.len());
    for &k in sorted {
        match out.last_mut() {
            Some((last, c)) if *last == k => *c += 1,
            _ => out.push((k, 1)),
        }
    }
    out
}

/// The per-key maximum of two run lists (multi-reference clipping counts).
fn merge_max(a: &[(u64, u32)], b: &[(u64, u32)]) -> Vec<(u64, u32)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1.max(b[j].1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// `Σ min(h[g], best[g])` over two run lists.
fn clipped(h: &[(u64, u32)], best: &[(u64, u32)]) -> u64 {
    let (mut i, mut j, mut sum) = (0, 0, 0_u64);
    while i < h.len() && j < best.len() {
        match h[i].0.cmp(&best[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                sum += u64::from(h[i].1.min(best[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    sum
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn packed_counting_equals_hashed_counting() {
        let mut rng = dialeval_common::SplitMix64(3);
        for _ in 0..2_000 {
            let mut seq = |max: usize| (0..rng.below(max)).map(|_| rng.below(6) as u32).collect::<Vec<u32>>();
            let hyp = seq(14);
            let refs: Vec<Vec<u32>> = (0..1 + (hyp.len() % 3)).map(|_| seq(14)).collect();
            let packed = |tokens: &[u32], n| {
                let mut keys = Vec::new();
                packed_into(tokens, n, &mut keys);
                keys
            };
            for n in 1..=4 {
                let h = runs(&packed(&hyp, n));
                let best = refs.iter().map(|r| runs(&packed(r, n))).reduce(|a, b| merge_max(&a, &b)).unwrap_or_default();
                assert_eq!(common(&packed(&hyp, n), &packed(&refs[0], n)), u64::from(hh_single(&hyp, &refs[0], n)), "{hyp:?} {refs:?} n={n}");
                let hh = NgramCounts::new(&hyp, n);
                let mut hb = NgramCounts::new(&refs[0], n);
                for r in &refs[1..] {
                    hb.max_with(&NgramCounts::new(r, n));
                }
                assert_eq!(clipped(&h, &best), u64::from(hh.overlap(&hb)), "{hyp:?} {refs:?} n={n}");
                assert_eq!(h.iter().map(|&(_, c)| u64::from(c)).sum::<u64>(), u64::from(hh.total()));
            }
        }
    }

    /// Clipped count against one reference by hashing.
    fn hh_single(hyp: &[u32], reference: &[u32], n: usize) -> u32 {
        NgramCounts::new(hyp, n).overlap(&NgramCounts::new(reference, n))
    }

    #[test]
    fn no_unigram_match_scores_zero() {
        let s = Bleu::new(BleuConfig::sentence()).unwrap().sentence("a b c", &["x y z"]).unwrap();
        assert_eq!(s.score, 0.0);
        assert_eq!(s.precisions, [0.0; 4]);
    }

    #[test]
    fn multiple_references_clip_by_max_and_pick_closest_length() {
        let bleu = Bleu::new(BleuConfig::sentence()).unwrap();
        let s = bleu.stats("the the the", &["the cat", "the the dog barks"]).unwrap();
        assert_eq!(s.counts[0], 2);
        assert_eq!(s.ref_len, 2); // |3-2| = 1 = |3-4|: ties go to the shorter
        assert!(bleu.stats("x", &[]).is_err());
        assert!(Bleu::new(BleuConfig { max_order: 0, ..BleuConfig::sentence() }).is_err());
    }
}
