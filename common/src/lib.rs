//! # dialeval-common
//!
//! The few types that several dialeval crates must agree on, kept in one tiny crate so that no
//! crate has to depend on another's internals (see `ARCHITECTURE.md`):
//!
//! - [`SentenceEmbedder`] and [`TokenEmbedder`]: what an encoder (the burn BERT of
//!   `dialeval-slm-model`, an ONNX model, a fixed table in a test) offers to the embedding
//!   metrics of `dialeval-metrics`;
//! - [`Criterion`]: the evaluation criteria shared by datasets, prompts and reports;
//! - small shared helpers: [`par_map`] and [`par_join`] (rayon with the `parallel` feature),
//!   ROC AUC, word counts, [`amr_limits`], and [`interrupt`] (a cooperative stop for Ctrl-C).

use std::sync::Arc;

/// Errors an embedder may return (object-safe: any error type boxed).
pub type EmbedError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Embeds whole sentences into fixed-size vectors.
pub trait SentenceEmbedder {
    /// Vector size.
    fn dim(&self) -> usize;

    /// One vector of length [`SentenceEmbedder::dim`] per text.
    ///
    /// # Errors
    /// Whatever the encoder reports (tokenisation, model, device).
    fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// The contextual (or static) vectors of a text's tokens.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct TokenEmbeddings {
    /// The tokens, as the embedder split them.
    pub tokens: Vec<String>,
    /// One vector per token, each of the embedder's dimension.
    pub vectors: Vec<Vec<f32>>,
}

/// Embeds each token of a text.
pub trait TokenEmbedder {
    /// Vector size.
    fn dim(&self) -> usize;

    /// Token vectors per text.
    ///
    /// # Errors
    /// Whatever the encoder reports.
    fn embed_tokens(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>, EmbedError>;

    /// The most tokens of a text the embedder reads (its window, without special tokens):
    /// a text with this many tokens may have been cut to them. `None` (the default) for an
    /// embedder that reads every token.
    fn max_tokens(&self) -> Option<usize> {
        None
    }
}

macro_rules! forward {
    ($($ptr:ty),*) => {$(
        impl<T: SentenceEmbedder + ?Sized> SentenceEmbedder for $ptr {
            fn dim(&self) -> usize {
                (**self).dim()
            }
            fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
                (**self).embed_sentences(texts)
            }
        }
        impl<T: TokenEmbedder + ?Sized> TokenEmbedder for $ptr {
            fn dim(&self) -> usize {
                (**self).dim()
            }
            fn embed_tokens(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>, EmbedError> {
                (**self).embed_tokens(texts)
            }
            fn max_tokens(&self) -> Option<usize> {
                (**self).max_tokens()
            }
        }
    )*};
}

forward!(&T, Box<T>, Arc<T>);

/// `f` applied to every item, in order. With the `parallel` feature the items are spread over
/// rayon's pool (all cores, or the pool a caller `install`s); the output order is the input
/// order whatever the number of threads, so a deterministic `f` gives identical results on any
/// machine. Without the feature it is a plain sequential map.
///
/// # Examples
/// ```
/// assert_eq!(dialeval_common::par_map(&[1, 2, 3], |x| x * 10), vec![10, 20, 30]);
/// ```
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        items.par_iter().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().map(f).collect()
    }
}

/// Threads [`par_map`] and [`par_join`] spread work over: rayon's current pool with the
/// `parallel` feature, else 1. Splitting work costs a little: callers skip it on one thread.
pub fn threads() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

/// `(a(), b())`, the two run in parallel on rayon's pool with the `parallel` feature (for a
/// divide-and-conquer whose split points do not depend on the thread count, so its result is
/// the same on any machine), one after the other without it.
pub fn par_join<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}

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

/// The evaluation criteria of the AMR-enhanced evaluator (Naturalness, Coherence,
/// Engagingness, Groundedness) plus Overall and Understandable. Each corpus maps its own
/// quality names onto these (see `dialeval-datasets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// How naturally the response is written.
    Naturalness,
    /// Whether the response is well-structured, logical and meaningful given the context.
    Coherence,
    /// How engaging the response is.
    Engagingness,
    /// Whether the response is grounded in facts of the context or of given knowledge.
    Groundedness,
    /// Overall quality.
    Overall,
    /// Whether the response is understandable.
    Understandable,
}

impl Criterion {
    /// All criteria, the paper's four first.
    pub const ALL: [Self; 6] = [Self::Naturalness, Self::Coherence, Self::Engagingness, Self::Groundedness, Self::Overall, Self::Understandable];

    /// The name used in prompts and reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Naturalness => "Naturalness",
            Self::Coherence => "Coherence",
            Self::Engagingness => "Engagingness",
            Self::Groundedness => "Groundedness",
            Self::Overall => "Overall",
            Self::Understandable => "Understandable",
        }
    }
}

impl std::fmt::Display for Criterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown criterion name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCriterion(pub String);

impl std::fmt::Display for UnknownCriterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown criterion {:?} (expected one of naturalness, coherence, engagingness, groundedness, overall, understandable)", self.0)
    }
}

impl std::error::Error for UnknownCriterion {}

impl std::str::FromStr for Criterion {
    type Err = UnknownCriterion;

    /// Case-insensitive: `Naturalness`, `coherence`, …
    fn from_str(s: &str) -> Result<Self, UnknownCriterion> {
        Self::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(s.trim())).ok_or_else(|| UnknownCriterion(s.to_owned()))
    }
}

/// A small, fast, seedable generator (SplitMix64, Steele et al. 2014) that gives the same stream
/// on every platform: what the crates use wherever a result must be reproducible under a seed
/// (Smatch restarts, bootstrap resamples, negative sampling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift); 0 when `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

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

/// Length in words (runs separated by white space): the unit of every length figure the
/// crates report (length-matched negatives, a score's correlation with response length).
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// The size limits of one AMR graph that every dialeval crate applies: the PENMAN reader of
/// `dialeval-amr-graph` refuses a graph beyond them with a typed error, and the side-file reader
/// of `dialeval-datasets` names such a block as malformed (file, line, `::id`) before anything
/// parses it. They bound every walk over a graph (recursion depth, quadratic tables) for any
/// text a user hands in; real AMR is far inside them (sentence graphs have tens of nodes and
/// are rarely 20 levels deep).
pub mod amr_limits {
    /// The deepest nesting of nodes (the top node is at depth 1): 512 levels of the recursive
    /// walks stay far below a 2 MiB thread stack.
    pub const MAX_DEPTH: usize = 512;
    /// The most nodes (variables) one graph may have.
    pub const MAX_NODES: usize = 10_000;
}

/// A cooperative stop for long work, process-wide: a binding asks for it when its user presses
/// Ctrl-C (Python's `dialeval.evaluate` polls for the signal while the job runs on another
/// thread), and the long loops check it between units of work — the pipeline between chunks
/// and families, the encoders between batches, the lexical family between items — and stop
/// with their crate's `Interrupted` error. What was finished (cached chunks, encoded texts)
/// stays, so the next run resumes from it.
pub mod interrupt {
    use std::sync::atomic::{AtomicBool, Ordering};

    static REQUESTED: AtomicBool = AtomicBool::new(false);

    /// Asks every long loop of this process to stop at its next check.
    pub fn request() {
        REQUESTED.store(true, Ordering::SeqCst);
    }

    /// Withdraws the request (a binding does so before it starts a job).
    pub fn clear() {
        REQUESTED.store(false, Ordering::SeqCst);
    }

    /// Whether a stop was asked for.
    pub fn requested() -> bool {
        REQUESTED.load(Ordering::Relaxed)
    }
}
