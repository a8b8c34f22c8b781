//! Frozen sentence vectors looked up by text (what the pretrained head reads), and the turn
//! channel's features computed from them.

use dialeval_datasets::pairs::TrainingPair;

use crate::texts::context_text;

/// Frozen sentence vectors looked up by text: what the SLM's pretrained head reads.
pub trait SentenceVectors {
    /// Vector width.
    fn dim(&self) -> usize;
    /// Identity of the encoder that made the vectors (a checkpoint trained on one encoder's
    /// vectors refuses another's).
    fn encoder_id(&self) -> &str;
    /// The vector of `text`; `None` when it was not computed.
    fn vector(&self, text: &str) -> Option<Vec<f32>>;
    /// The token states of `text` (`tokens × dim`, row-major) that the cross-encoded text side
    /// reads; `None` when they were not computed or the source keeps only pooled vectors.
    fn token_states(&self, _text: &str) -> Option<Vec<half::f16>> {
        None
    }
}

impl<T: SentenceVectors + ?Sized> SentenceVectors for &T {
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn encoder_id(&self) -> &str {
        (**self).encoder_id()
    }
    fn vector(&self, text: &str) -> Option<Vec<f32>> {
        (**self).vector(text)
    }
    fn token_states(&self, text: &str) -> Option<Vec<half::f16>> {
        (**self).token_states(text)
    }
}

/// Sentence vectors seen as [`dialeval_datasets::negatives::PairVectors`], for negatives
/// retrieved in embedding space: a pair's context is the joined text the pretrained head reads
/// ([`context_text`]).
#[derive(Debug, Clone, Copy)]
pub struct PairSentenceVectors<V>(pub V);

impl<V: SentenceVectors + Sync> dialeval_datasets::negatives::PairVectors for PairSentenceVectors<V> {
    fn context(&self, pair: &TrainingPair) -> Option<Vec<f32>> {
        self.0.vector(&context_text(pair))
    }
    fn response(&self, text: &str) -> Option<Vec<f32>> {
        self.0.vector(text)
    }
}

/// Width of the turn channel's features beyond `[c; r; c ⊙ r; |c − r|]` for vectors of width
/// `dim`: `[l ⊙ r; |l − r|; cos(l, r); cos(m, r)]` ([`turn_features`]).
pub fn turn_width(dim: usize) -> usize {
    2 * dim + 2
}

/// The turn channel's features of a pair: with `l` the last turn's vector, `m` the mean of the
/// last two turns' unit vectors and `r` the response's, `[l ⊙ r; |l − r|; cos(l, r); cos(m, r)]`.
/// The two cosines are the zero-shot scores `Context-Cosine` and `Context-Cosine-2` of the eval
/// crate; the head adds a learned multiple of them to its logit, so training starts from what
/// the encoder already knows and cannot lose it. A pair without context turns reads zeros.
pub fn turn_features(turns: &[Vec<f32>], response: &[f32]) -> Vec<f32> {
    let dim = response.len();
    let Some(last) = turns.last() else { return vec![0.0; turn_width(dim)] };
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    let cosine = |a: &[f32], b: &[f32]| {
        let n = norm(a) * norm(b);
        if n > 0.0 { a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum::<f64>() / n } else { 0.0 }
    };
    let mean: Vec<f32> = (0..dim)
        .map(|k| {
            turns
                .iter()
                .map(|t| {
                    let n = norm(t);
                    if n > 0.0 { (f64::from(t[k]) / n) as f32 } else { 0.0 }
                })
                .sum()
        })
        .collect();
    let mut out = Vec::with_capacity(turn_width(dim));
    out.extend(last.iter().zip(response).map(|(a, b)| a * b));
    out.extend(last.iter().zip(response).map(|(a, b)| (a - b).abs()));
    out.push(cosine(last, response) as f32);
    out.push(cosine(&mean, response) as f32);
    out
}
