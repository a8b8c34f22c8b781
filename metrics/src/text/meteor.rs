//! METEOR (Banerjee and Lavie 2005) as nltk 3.10.4's `meteor_score` computes it
//! (`nltk/translate/meteor_score.py`).
//!
//! Words are aligned in three stages: exact match, Porter-stem match, WordNet-synonym match.
//! Each stage walks the hypothesis from right to left and takes the right-most free reference
//! position. As in nltk, the synonym stage sees the *stemmed* words left over by the stem stage.
//! `P = m/|hyp|`, `R = m/|ref|`, `fmean = PR / (αP + (1−α)R)`,
//! `penalty = γ (chunks/m)^β`, `score = (1 − penalty) · fmean` (0 when nothing matches);
//! with several references, the best score.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::text::porter;
use crate::text::tokenize::py_split;
use crate::text::wordnet::WordNet;

/// METEOR's parameters (nltk defaults: α 0.9, β 3, γ 0.5).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeteorParams {
    /// Weight of precision against recall in the harmonic mean.
    pub alpha: f64,
    /// Exponent of the fragmentation penalty.
    pub beta: f64,
    /// Maximum fragmentation penalty.
    pub gamma: f64,
}

impl Default for MeteorParams {
    fn default() -> Self {
        Self { alpha: 0.9, beta: 3.0, gamma: 0.5 }
    }
}

/// The METEOR scorer; cheap to clone (the WordNet database and the synonym cache are shared).
#[derive(Debug, Clone)]
pub struct Meteor {
    wordnet: Arc<WordNet>,
    params: MeteorParams,
    synonyms: Arc<Mutex<FxHashMap<String, Arc<Vec<String>>>>>,
}

type Enum = Vec<(usize, String)>;
/// Matches `(hypothesis position, reference position)` and the words left unmatched.
type Stage = (Vec<(usize, usize)>, Enum, Enum);

impl Meteor {
    /// A scorer over a loaded WordNet.
    ///
    /// # Errors
    /// [`Error::Config`] for α outside [0, 1] or negative β, γ.
    pub fn new(wordnet: Arc<WordNet>, params: MeteorParams) -> Result<Self> {
        let non_negative = |v: f64| v.is_finite() && v >= 0.0;
        if !(0.0..=1.0).contains(&params.alpha) || !non_negative(params.beta) || !non_negative(params.gamma) {
            return Err(Error::Config(format!("METEOR parameters out of range: {params:?}")));
        }
        Ok(Self { wordnet, params, synonyms: Arc::default() })
    }

    /// nltk's `meteor_score(references, hypothesis)` (hypothesis first here, as every metric of
    /// this crate) on pre-tokenised input (each token is
    /// lowercased first, as nltk's default `preprocess=str.lower`).
    ///
    /// # Errors
    /// [`Error::Empty`] without references; [`Error::WordNet`] for a corrupt database.
    pub fn score_tokens<S: AsRef<str>>(&self, hypothesis: &[S], references: &[Vec<S>]) -> Result<f64> {
        if references.is_empty() {
            return Err(Error::Empty("METEOR needs at least one reference"));
        }
        let mut best = f64::NEG_INFINITY;
        for reference in references {
            best = best.max(self.single(hypothesis, reference)?);
        }
        Ok(best)
    }

    /// METEOR of raw strings tokenised as in the golden vectors: `text.lower().split()`.
    ///
    /// # Errors
    /// As [`Meteor::score_tokens`].
    pub fn score(&self, hypothesis: &str, references: &[&str]) -> Result<f64> {
        let tokens = |s: &str| py_split(&s.to_lowercase()).map(str::to_owned).collect::<Vec<_>>();
        let refs: Vec<Vec<String>> = references.iter().map(|r| tokens(r)).collect();
        self.score_tokens(&tokens(hypothesis), &refs)
    }

    fn single<S: AsRef<str>>(&self, hypothesis: &[S], reference: &[S]) -> Result<f64> {
        let hyp: Enum = hypothesis.iter().map(|w| w.as_ref().to_lowercase()).enumerate().collect();
        let refs: Enum = reference.iter().map(|w| w.as_ref().to_lowercase()).enumerate().collect();
        let (translation_length, reference_length) = (hyp.len(), refs.len());
        let (mut matches, hyp, refs) = match_exact(hyp, refs);
        let stem = |l: Enum| l.into_iter().map(|(i, w)| (i, porter::stem(&w))).collect::<Enum>();
        let (stem_matches, hyp, refs) = match_exact(stem(hyp), stem(refs));
        matches.extend(stem_matches);
        let (syn_matches, _, _) = self.match_synonyms(hyp, refs)?;
        matches.extend(syn_matches);
        matches.sort_by_key(|m| m.0);
        let m = matches.len() as f64;
        if translation_length == 0 || reference_length == 0 || matches.is_empty() {
            return Ok(0.0);
        }
        let precision = m / translation_length as f64;
        let recall = m / reference_length as f64;
        let MeteorParams { alpha, beta, gamma } = self.params;
        let fmean = (precision * recall) / (alpha * precision + (1.0 - alpha) * recall);
        let frag = count_chunks(&matches) as f64 / m;
        let penalty = gamma * frag.powf(beta);
        Ok((1.0 - penalty) * fmean)
    }

    fn synonyms_of(&self, word: &str) -> Result<Arc<Vec<String>>> {
        if let Some(s) = self.synonyms.lock().ok().and_then(|c| c.get(word).cloned()) {
            return Ok(s);
        }
        let set: Arc<Vec<String>> = Arc::new(self.wordnet.synonyms(word)?.into_iter().collect());
        if let Ok(mut cache) = self.synonyms.lock() {
            cache.insert(word.to_owned(), Arc::clone(&set));
        }
        Ok(set)
    }

    /// nltk's `_enum_wordnetsyn_match`.
    fn match_synonyms(&self, hyp: Enum, refs: Enum) -> Result<Stage> {
        let mut positions = positions(&refs);
        let mut word_match = Vec::new();
        let (mut hyp_done, mut ref_done) = (vec![false; hyp.len()], vec![false; refs.len()]);
        for i in (0..hyp.len()).rev() {
            let syns = self.synonyms_of(&hyp[i].1)?;
            let mut best: Option<(usize, &str)> = None;
            for syn in syns.iter() {
                if let Some(&last) = positions.get(syn.as_str()).and_then(|p| p.last())
                    && best.is_none_or(|(j, _)| last > j)
                {
                    best = Some((last, syn.as_str()));
                }
            }
            if let Some((j, word)) = best {
                if let Some(p) = positions.get_mut(word) {
                    p.pop();
                }
                hyp_done[i] = true;
                ref_done[j] = true;
                word_match.push((hyp[i].0, refs[j].0));
            }
        }
        Ok((word_match, keep(hyp, &hyp_done), keep(refs, &ref_done)))
    }
}

/// Reference positions of each word, ascending (nltk's `ref_positions`).
fn positions(refs: &Enum) -> FxHashMap<&str, Vec<usize>> {
    let mut positions: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (j, (_, w)) in refs.iter().enumerate() {
        positions.entry(w.as_str()).or_default().push(j);
    }
    positions
}

fn keep(list: Enum, done: &[bool]) -> Enum {
    list.into_iter().zip(done).filter(|(_, d)| !**d).map(|(p, _)| p).collect()
}

/// nltk's `_match_enums`: right to left, each hypothesis word takes the right-most free
/// reference position holding the same word.
fn match_exact(hyp: Enum, refs: Enum) -> Stage {
    let mut positions = positions(&refs);
    let mut word_match = Vec::new();
    let (mut hyp_done, mut ref_done) = (vec![false; hyp.len()], vec![false; refs.len()]);
    for i in (0..hyp.len()).rev() {
        if let Some(j) = positions.get_mut(hyp[i].1.as_str()).and_then(Vec::pop) {
            hyp_done[i] = true;
            ref_done[j] = true;
            word_match.push((hyp[i].0, refs[j].0));
        }
    }
    drop(positions);
    (word_match, keep(hyp, &hyp_done), keep(refs, &ref_done))
}

/// nltk's `_count_chunks` over matches sorted by hypothesis position.
fn count_chunks(matches: &[(usize, usize)]) -> usize {
    1 + matches.windows(2).filter(|w| !(w[1].0 == w[0].0 + 1 && w[1].1 == w[0].1 + 1)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks() {
        assert_eq!(count_chunks(&[(0, 0), (1, 1), (2, 5), (3, 6)]), 2);
        assert_eq!(count_chunks(&[(0, 3)]), 1);
    }

    #[test]
    fn exact_takes_rightmost_reference() {
        let e = |s: &str| s.split(' ').map(str::to_owned).enumerate().collect::<Enum>();
        let (m, h, r) = match_exact(e("a b a"), e("a a c"));
        assert_eq!(m, [(2, 1), (0, 0)]);
        assert_eq!(h.len(), 1);
        assert_eq!(r.len(), 1);
    }
}
