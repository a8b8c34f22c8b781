//! The n-gram counter shared by BLEU, ROUGE-N and friends.

use std::hash::Hash;

use rustc_hash::FxHashMap;

/// Counts of the n-grams of one order in a token sequence, keyed by token slices. Tokens may be
/// strings or, faster, ids from [`TokenIds`].
#[derive(Debug, Clone)]
pub struct NgramCounts<'a, T> {
    counts: FxHashMap<&'a [T], u32>,
    total: u32,
}

/// Maps the tokens of a few related texts (a hypothesis and its references) to dense ids, so
/// n-gram counting hashes integers instead of strings.
#[derive(Debug, Default)]
pub struct TokenIds<'a> {
    ids: FxHashMap<&'a str, u32>,
}

impl<'a> TokenIds<'a> {
    /// An empty map with room for `capacity` distinct tokens.
    pub fn with_capacity(capacity: usize) -> Self {
        Self { ids: FxHashMap::with_capacity_and_hasher(capacity, Default::default()) }
    }

    /// Distinct tokens seen so far.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no token was seen.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The id sequence of `tokens`, assigning new ids as needed.
    pub fn map<S: AsRef<str> + ?Sized + 'a>(&mut self, tokens: impl IntoIterator<Item = &'a S>) -> Vec<u32> {
        tokens
            .into_iter()
            .map(|t| {
                let next = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
                *self.ids.entry(t.as_ref()).or_insert(next)
            })
            .collect()
    }
}

impl<'a, T: Hash + Eq> NgramCounts<'a, T> {
    /// Counts the `n`-grams of `tokens` (none when `tokens.len() < n` or `n == 0`).
    pub fn new(tokens: &'a [T], n: usize) -> Self {
        let mut counts = FxHashMap::default();
        let mut total = 0;
        if n > 0 && tokens.len() >= n {
            counts.reserve(tokens.len() + 1 - n);
            for gram in tokens.windows(n) {
                *counts.entry(gram).or_insert(0) += 1;
                total += 1;
            }
        }
        Self { counts, total }
    }

    /// How often `gram` occurs.
    pub fn get(&self, gram: &[T]) -> u32 {
        self.counts.get(gram).copied().unwrap_or(0)
    }

    /// Number of n-grams counted (with repetition).
    pub fn total(&self) -> u32 {
        self.total
    }

    /// `Σ min(self[g], other[g])`: the clipped overlap.
    pub fn overlap(&self, other: &Self) -> u32 {
        let (small, large) = if self.counts.len() <= other.counts.len() { (self, other) } else { (other, self) };
        small.counts.iter().map(|(g, &c)| c.min(large.get(g))).sum()
    }

    /// Keeps, for every n-gram, the larger of the two counts (multi-reference BLEU).
    pub fn max_with(&mut self, other: &Self) {
        for (&g, &c) in &other.counts {
            let slot = self.counts.entry(g).or_insert(0);
            *slot = (*slot).max(c);
        }
        self.total = self.counts.values().sum();
    }

    /// `(n-gram, count)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&'a [T], u32)> + '_ {
        self.counts.iter().map(|(&g, &c)| (g, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn counts_and_overlap() {
        let a = toks("the cat the cat on");
        let b = toks("the cat sat on the mat");
        let (ca, cb) = (NgramCounts::new(&a, 2), NgramCounts::new(&b, 2));
        assert_eq!(ca.total(), 4);
        assert_eq!(ca.get(&toks("the cat")), 2);
        assert_eq!(ca.overlap(&cb), 1);
        assert_eq!(NgramCounts::new(&a, 9).total(), 0);
    }
}
