//! Negatives retrieved for a set of pairs, as GRADE and DEB make their hard ones: for a positive,
//! the response of another context or conversation that is closest to its context — by shared
//! content words ([`PairKind::LexicalNegative`]) or by the cosine of sentence vectors
//! ([`PairKind::EmbeddingNegative`]) — among a seeded sample of candidates of about the
//! positive's length. Any source's pairs can take them: the candidates are the positives'
//! responses of other groups ([`pair_group`]), so a negative never comes from its own dialogue.
//!
//! ```
//! use dialeval_datasets::negatives::{RetrievedNegatives, retrieve_negatives};
//! use dialeval_datasets::pairs::{PairKind, TrainingPair};
//! let pair = |group: &str, context: &str, response: &str| TrainingPair {
//!     id: format!("{group}/positive/0"), context: vec![context.into()], response: response.into(),
//!     kind: PairKind::Positive, context_amr: vec![None], response_amr: None, knowledge: None,
//! };
//! let pairs = vec![
//!     pair("a", "do you like jazz music", "i love jazz"),
//!     pair("b", "where is the station", "turn left at the bank"),
//!     pair("c", "what music do you play", "mostly jazz music"),
//! ];
//! let config = RetrievedNegatives { lexical_share: 1.0, ..RetrievedNegatives::default() };
//! let negatives = retrieve_negatives(&pairs, &config, None)?;
//! assert_eq!(negatives[0].kind, PairKind::LexicalNegative);
//! assert_eq!(negatives[0].response, "mostly jazz music"); // shares "jazz" and "music"
//! # Ok::<(), dialeval_datasets::Error>(())
//! ```

use dialeval_common::{SplitMix64, word_count};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::pairs::{PairKind, TrainingPair, content_words, distinct_sorted, length_window, pair_group, shared};

/// Sentence vectors of a pair's context and of a response, for [`PairKind::EmbeddingNegative`]
/// (an encoder's cache; this crate computes none).
pub trait PairVectors: Sync {
    /// The vector of `pair`'s context as the scorer reads it; `None` when not computed.
    fn context(&self, pair: &TrainingPair) -> Option<Vec<f32>>;
    /// The vector of a response text; `None` when not computed.
    fn response(&self, text: &str) -> Option<Vec<f32>>;
}

/// Settings of [`retrieve_negatives`]; everything its output depends on besides the pairs and
/// the vectors.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RetrievedNegatives {
    /// Share of positives that get one lexically retrieved negative (a seeded draw each).
    pub lexical_share: f64,
    /// Share of positives that get one negative retrieved in embedding space (a seeded draw
    /// each, independent of the lexical one).
    pub embedding_share: f64,
    /// Candidates drawn (uniformly, among other groups' positives) for each retrieved negative.
    pub candidates: usize,
    /// Draw candidates only among positives of the positive's own source ([`pair_source`]: a
    /// DailyDialog++ file, Topical-Chat, DailyDialog), so that a negative cannot be told by the
    /// style of another corpus.
    #[serde(default)]
    pub same_source: bool,
    /// Seed of the draws.
    pub seed: u64,
}

impl Default for RetrievedNegatives {
    fn default() -> Self {
        Self { lexical_share: 0.0, embedding_share: 0.0, candidates: 64, same_source: false, seed: 0 }
    }
}

impl RetrievedNegatives {
    /// Whether these settings retrieve anything.
    pub fn any(&self) -> bool {
        self.lexical_share > 0.0 || self.embedding_share > 0.0
    }
}

/// The source of a pair built by [`crate::pairs`]: its group up to `#` (`dev.json`,
/// `data_positives.json`, `topical`, `dailydialog`, …).
pub fn pair_source(pair: &TrainingPair) -> &str {
    let group = pair_group(pair);
    group.split('#').next().unwrap_or(group)
}

/// Which closeness a retrieved negative maximises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closeness {
    Lexical,
    Embedding,
}

/// A positive's retrieval: which closeness, and the candidate positives drawn for it.
struct Draw {
    positive: usize,
    closeness: Closeness,
    candidates: Vec<usize>,
}

/// `v` scaled to unit length (`None` for a zero or non-finite vector).
fn unit(v: &[f32]) -> Option<Vec<f32>> {
    let norm = v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    (norm.is_finite() && norm > 0.0).then(|| v.iter().map(|x| (f64::from(*x) / norm) as f32).collect())
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

/// Negatives retrieved for the positives of `pairs` (see the module docs), in the order of the
/// positives they stand against, each after its lexical one. A negative keeps its positive's
/// context, context graphs and knowledge and takes the candidate's response and response graph;
/// its id is the positive's id with `/lexical` or `/embedding` appended, so [`pair_group`]
/// keeps it with its positive. Of each positive's candidates (responses differing from its
/// own), the one within a length window of it — at most 2 words or a fifth of its length apart,
/// if any candidate is — that is closest to its context wins, the closest in length on ties,
/// then the first drawn. Deterministic under `config.seed`, whatever the number of threads.
///
/// # Errors
/// [`Error::Config`] for a share outside [0, 1], no candidates, embedding negatives asked for
/// without `vectors`, or a positive whose context or response has no vector (named by its id).
pub fn retrieve_negatives(pairs: &[TrainingPair], config: &RetrievedNegatives, vectors: Option<&dyn PairVectors>) -> Result<Vec<TrainingPair>> {
    for (name, share) in [("lexical_share", config.lexical_share), ("embedding_share", config.embedding_share)] {
        if !(0.0..=1.0).contains(&share) {
            return Err(Error::Config(format!("{name} must be in [0, 1], got {share}")));
        }
    }
    if config.candidates == 0 {
        return Err(Error::Config("retrieved negatives need at least one candidate".into()));
    }
    if config.embedding_share > 0.0 && vectors.is_none() {
        return Err(Error::Config("embedding negatives need sentence vectors".into()));
    }
    let positives: Vec<&TrainingPair> = pairs.iter().filter(|p| p.kind == PairKind::Positive).collect();
    let groups: Vec<&str> = positives.iter().map(|p| pair_group(p)).collect();
    if groups.iter().all(|g| *g == groups[0]) {
        return Err(Error::Config("retrieved negatives need positives of at least two groups".into()));
    }
    // The candidate pool of each positive: every positive, or (`same_source`) those of its source.
    let mut by_source: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    if config.same_source {
        for (i, p) in positives.iter().enumerate() {
            by_source.entry(pair_source(p)).or_default().push(i);
        }
    }
    // Sequential: which positives retrieve what, and their candidates, in the seeded order.
    let mut rng = SplitMix64(config.seed);
    let mut draws = Vec::new();
    for (i, group) in groups.iter().enumerate() {
        for (closeness, share) in [(Closeness::Lexical, config.lexical_share), (Closeness::Embedding, config.embedding_share)] {
            if share > 0.0 && rng.unit() < share {
                let mut candidates = Vec::with_capacity(config.candidates);
                // Bounded redraws: a candidate of the positive's own group is drawn again.
                let pool = by_source.get(pair_source(positives[i])).map(Vec::as_slice);
                for _ in 0..config.candidates * 4 {
                    let c = match pool {
                        Some(pool) => pool[rng.below(pool.len())],
                        None => rng.below(positives.len()),
                    };
                    if groups[c] != *group {
                        candidates.push(c);
                        if candidates.len() == config.candidates {
                            break;
                        }
                    }
                }
                draws.push(Draw { positive: i, closeness, candidates });
            }
        }
    }
    let words: Vec<usize> = dialeval_common::par_map(&positives, |p| word_count(&p.response));
    let lexical = config.lexical_share > 0.0;
    let content: Vec<Vec<String>> = if lexical { dialeval_common::par_map(&positives, |p| content_words(&p.response)) } else { Vec::new() };
    let context_words: Vec<Vec<String>> = if lexical { dialeval_common::par_map(&positives, |p| distinct_sorted(p.context.iter().flat_map(|t| content_words(t)))) } else { Vec::new() };
    let (context_vectors, response_vectors) = match vectors.filter(|_| config.embedding_share > 0.0) {
        Some(v) => {
            let missing = |p: &TrainingPair, what: &str| Error::Config(format!("embedding negatives: no sentence vector for the {what} of pair {}", p.id));
            let contexts: Vec<Result<Vec<f32>>> = dialeval_common::par_map(&positives, |p| v.context(p).map(|x| unit(&x).unwrap_or_default()).ok_or_else(|| missing(p, "context")));
            let responses: Vec<Result<Vec<f32>>> = dialeval_common::par_map(&positives, |p| v.response(&p.response).map(|x| unit(&x).unwrap_or_default()).ok_or_else(|| missing(p, "response")));
            (contexts.into_iter().collect::<Result<Vec<_>>>()?, responses.into_iter().collect::<Result<Vec<_>>>()?)
        }
        None => (Vec::new(), Vec::new()),
    };
    let chosen = dialeval_common::par_map(&draws, |d| {
        let (i, target) = (d.positive, words[d.positive]);
        let window = length_window(target);
        // (in window, closeness, -gap): the largest wins; the first drawn on ties.
        let mut best: Option<((bool, f64, i64), usize)> = None;
        for &c in &d.candidates {
            if positives[c].response == positives[i].response {
                continue;
            }
            let gap = words[c].abs_diff(target);
            let close = match d.closeness {
                Closeness::Lexical => shared(&context_words[i], &content[c]) as f64,
                Closeness::Embedding => dot(&context_vectors[i], &response_vectors[c]),
            };
            let key = (gap <= window, close, -(gap as i64));
            if best.as_ref().is_none_or(|(b, _)| key.partial_cmp(b) == Some(std::cmp::Ordering::Greater)) {
                best = Some((key, c));
            }
        }
        best.map(|(_, c)| (d.positive, d.closeness, c))
    });
    Ok(chosen
        .into_iter()
        .flatten()
        .map(|(i, closeness, c)| {
            let (positive, candidate) = (positives[i], positives[c]);
            let (kind, tag) = match closeness {
                Closeness::Lexical => (PairKind::LexicalNegative, "lexical"),
                Closeness::Embedding => (PairKind::EmbeddingNegative, "embedding"),
            };
            TrainingPair { id: format!("{}/{tag}", positive.id), response: candidate.response.clone(), response_amr: candidate.response_amr.clone(), kind, ..positive.clone() }
        })
        .collect())
}

/// Kinds of negative a training set can be ablated by ([`drop_negatives`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NegativeFamily {
    /// Drawn at random from other contexts: the corpus's random negatives, uniform and
    /// length-matched sampled ones.
    Random,
    /// DailyDialog++'s hand-written adversarial negatives.
    Adversarial,
    /// Retrieved for sharing words with the context.
    Lexical,
    /// Retrieved for closeness in embedding space.
    Embedding,
}

impl NegativeFamily {
    /// The family of a kind of pair (`None` for positives).
    pub fn of(kind: PairKind) -> Option<Self> {
        match kind {
            PairKind::Positive => None,
            PairKind::RandomNegative | PairKind::SampledNegative | PairKind::LengthMatchedNegative => Some(Self::Random),
            PairKind::AdversarialNegative => Some(Self::Adversarial),
            PairKind::LexicalNegative => Some(Self::Lexical),
            PairKind::EmbeddingNegative => Some(Self::Embedding),
        }
    }
}

/// `pairs` without the negatives of the families in `drop`; returns how many were dropped.
pub fn drop_negatives(pairs: &mut Vec<TrainingPair>, drop: &[NegativeFamily]) -> usize {
    let before = pairs.len();
    pairs.retain(|p| NegativeFamily::of(p.kind).is_none_or(|f| !drop.contains(&f)));
    before - pairs.len()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)] // tests fail loudly
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn positive(group: usize, context: &str, response: &str) -> TrainingPair {
        TrainingPair {
            id: format!("g{group}/positive/0"),
            context: vec![context.into()],
            response: response.into(),
            kind: PairKind::Positive,
            context_amr: vec![Some(format!("(c{group} / context)"))],
            response_amr: Some(format!("(r{group} / response)")),
            knowledge: Some(format!("knowledge {group}")),
        }
    }

    /// Vectors by hand: a text's vector is the one of its first word.
    struct ByWord(HashMap<&'static str, Vec<f32>>);

    impl PairVectors for ByWord {
        fn context(&self, pair: &TrainingPair) -> Option<Vec<f32>> {
            self.response(&pair.context.join(" "))
        }
        fn response(&self, text: &str) -> Option<Vec<f32>> {
            self.0.get(text.split(' ').next()?).cloned()
        }
    }

    fn by_word() -> ByWord {
        ByWord(HashMap::from([("north", vec![1.0, 0.0]), ("south", vec![-1.0, 0.1]), ("east", vec![0.0, 1.0]), ("northish", vec![0.9, 0.2])]))
    }

    #[test]
    fn embedding_negative_is_the_candidate_nearest_the_context_and_keeps_the_positive_s_context() {
        // Group 0's second positive answers "north" too, but a negative never comes from its own group.
        let pairs = vec![
            positive(0, "north wind", "east a b"),
            positive(1, "east sun", "south a b"),
            positive(2, "south sea", "northish a b"),
            positive(3, "east sea", "north a b"),
            positive(0, "north x", "north c d"),
        ];
        let config = RetrievedNegatives { embedding_share: 1.0, candidates: 64, ..RetrievedNegatives::default() };
        let negatives = retrieve_negatives(&pairs, &config, Some(&by_word())).unwrap();
        assert_eq!(negatives.len(), 5);
        let first = &negatives[0];
        assert_eq!(first.kind, PairKind::EmbeddingNegative);
        assert_eq!(first.id, "g0/positive/0/embedding");
        assert_eq!(first.response, "north a b", "cosine 1 beats 'northish' (0.98); group 0's own 'north c d' is never drawn");
        assert_eq!((first.context.clone(), first.context_amr.clone(), first.knowledge.clone()), (pairs[0].context.clone(), pairs[0].context_amr.clone(), pairs[0].knowledge.clone()));
        assert_eq!(first.response_amr.as_deref(), Some("(r3 / response)"), "the graph follows the response");
        // Never a response of its own group; kept in its positive's group.
        for (n, p) in negatives.iter().zip(&pairs) {
            let own: Vec<&str> = pairs.iter().filter(|q| pair_group(q) == pair_group(p)).map(|q| q.response.as_str()).collect();
            assert!(!own.contains(&n.response.as_str()), "{n:?}");
            assert_eq!(pair_group(n), pair_group(p));
        }
        assert_eq!(negatives, retrieve_negatives(&pairs, &config, Some(&by_word())).unwrap(), "seeded");
    }

    #[test]
    fn nearest_beats_a_closer_length_outside_ties_and_length_window_comes_first() {
        // Group 0's context is "north": group 1 answers "north" but is 10 words longer than the
        // positive; group 2 answers "east" within the window.
        let long = format!("north {}", "w ".repeat(10));
        let pairs = vec![positive(0, "north", "south x"), positive(1, "east", long.trim()), positive(2, "south", "east y")];
        let config = RetrievedNegatives { embedding_share: 1.0, ..RetrievedNegatives::default() };
        let negatives = retrieve_negatives(&pairs, &config, Some(&by_word())).unwrap();
        assert_eq!(negatives[0].response, "east y", "within the length window wins over a closer vector");
    }

    #[test]
    fn lexical_negative_shares_most_content_words_with_the_context() {
        let pairs = vec![
            positive(0, "do you like jazz music", "i love jazz"),
            positive(1, "where is the station", "turn left at the bank"),
            positive(2, "what music do you play", "mostly jazz music"),
            positive(3, "any plans tonight", "stay home and read"),
        ];
        let config = RetrievedNegatives { lexical_share: 1.0, ..RetrievedNegatives::default() };
        let negatives = retrieve_negatives(&pairs, &config, None).unwrap();
        assert_eq!(negatives.len(), 4);
        assert_eq!(negatives[0].response, "mostly jazz music");
        assert!(negatives.iter().all(|n| n.kind == PairKind::LexicalNegative && n.id.ends_with("/lexical")));
    }

    #[test]
    fn shares_are_drawn_per_positive_and_errors_are_typed() {
        let pairs: Vec<TrainingPair> = (0..2000).map(|i| positive(i, "north", &format!("east a {i}"))).collect();
        let config = RetrievedNegatives { lexical_share: 0.25, embedding_share: 0.5, ..RetrievedNegatives::default() };
        let negatives = retrieve_negatives(&pairs, &config, Some(&by_word())).unwrap();
        let count = |k| negatives.iter().filter(|n| n.kind == k).count() as f64 / pairs.len() as f64;
        assert!((count(PairKind::LexicalNegative) - 0.25).abs() < 0.04, "{}", count(PairKind::LexicalNegative));
        assert!((count(PairKind::EmbeddingNegative) - 0.5).abs() < 0.04, "{}", count(PairKind::EmbeddingNegative));
        // Embedding negatives without vectors, bad shares, a missing vector, one group.
        assert!(retrieve_negatives(&pairs, &RetrievedNegatives { embedding_share: 0.5, ..RetrievedNegatives::default() }, None).is_err());
        assert!(retrieve_negatives(&pairs, &RetrievedNegatives { lexical_share: 1.5, ..RetrievedNegatives::default() }, None).is_err());
        let mut unknown = pairs.clone();
        unknown.push(positive(9999, "west", "east a b"));
        let err = retrieve_negatives(&unknown, &RetrievedNegatives { embedding_share: 1.0, ..RetrievedNegatives::default() }, Some(&by_word())).unwrap_err();
        assert!(err.to_string().contains("g9999/positive/0"), "{err}");
        let one_group = [positive(7, "north", "east a"), positive(7, "south", "east b")];
        assert!(retrieve_negatives(&one_group, &RetrievedNegatives { lexical_share: 1.0, ..RetrievedNegatives::default() }, None).is_err());
    }

    #[test]
    fn same_source_draws_only_from_the_positive_s_corpus() {
        let pair = |group: &str, context: &str, response: &str| TrainingPair { id: format!("{group}/positive/0"), ..positive(0, context, response) };
        // Topical-Chat's "north" response is the nearest to every context, but a DailyDialog++
        // positive under `same_source` must take one of its own file's.
        let pairs = vec![pair("dev.json#1", "north", "east a"), pair("dev.json#2", "south", "south b"), pair("topical#t1", "east", "north c"), pair("topical#t2", "east", "north d")];
        let any = RetrievedNegatives { embedding_share: 1.0, ..RetrievedNegatives::default() };
        assert!(retrieve_negatives(&pairs, &any, Some(&by_word())).unwrap()[0].response.starts_with("north "));
        let own = retrieve_negatives(&pairs, &RetrievedNegatives { same_source: true, ..any }, Some(&by_word())).unwrap();
        assert_eq!(own[0].response, "south b");
        assert!(own.iter().zip(&pairs).all(|(n, p)| pair_source(n) == pair_source(p) && n.response != p.response));
        assert_eq!(pair_source(&pairs[2]), "topical");
    }

    #[test]
    fn dropping_families() {
        let kinds = [
            PairKind::Positive,
            PairKind::RandomNegative,
            PairKind::SampledNegative,
            PairKind::LengthMatchedNegative,
            PairKind::AdversarialNegative,
            PairKind::LexicalNegative,
            PairKind::EmbeddingNegative,
        ];
        let mut pairs: Vec<TrainingPair> = kinds.iter().map(|&kind| TrainingPair { kind, ..positive(0, "a", "b") }).collect();
        assert_eq!(drop_negatives(&mut pairs, &[NegativeFamily::Random]), 3);
        assert_eq!(drop_negatives(&mut pairs, &[NegativeFamily::Adversarial, NegativeFamily::Embedding]), 2);
        assert_eq!(pairs.iter().map(|p| p.kind).collect::<Vec<_>>(), vec![PairKind::Positive, PairKind::LexicalNegative]);
    }
}
