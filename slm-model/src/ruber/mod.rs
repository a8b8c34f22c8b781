//! BERT-RUBER's unreferenced metric (`../shared/papers/bert-ruber-contextualized-embeddings.txt`)
//! over its whole design space:
//!
//! - **embeddings**: frozen contextual token states of a [`PretrainedEncoder`] (BERT/MiniLM), or
//!   a trainable static word-embedding table over the same word pieces (the word2vec row);
//! - **representation**: max or mean pooling over the tokens, or a Bi-GRU whose two final states
//!   (each read at the sentence's own last token, so padding never enters) are concatenated;
//! - **objective**: cross-entropy of a two-way classifier, or RUBER's ranking loss
//!   `max(0, Δ − s(q, r⁺) + s(q, r⁻))`, the score being `σ(s)`. Deviation: the margin is applied
//!   to the head's output before the sigmoid; on sigmoid scores the heads saturated within an
//!   epoch and stopped learning (dev AUC ≈ 0.5 for Bi-GRU in `tests/ruber.rs`);
//!
//! then RUBER's head: `[q; qᵀMr; r]` through an MLP with hidden sizes 256, 512, 128 and tanh.
//! Training uses (query, positive, negative) triples from negative sampling, Adam, decay on
//! plateau, early stopping on dev ROC AUC, and a checkpoint every epoch from which it resumes
//! exactly (as [`crate::train`]). Frozen token states come from an [`EmbeddingCache`]
//! ([`crate::vectors`], the cache the SLM's pretrained text side reads too), so the encoder runs
//! once per distinct sentence, across runs too.
//!
//! A resumed run reaches the same numbers as an uninterrupted one on CPU, as long as nothing
//! else in the process seeds or draws from burn's device RNG meanwhile (the seed is
//! process-wide).
//!
//! The referenced score (cosine of pooled embeddings) and the hybrids live in the metrics crate
//! (`referenced_score`, `min_max_normalize`, `hybrid`) and take the encoder through its traits.
//!
//! One job per file: `config` (the settings), `model`, `collate` (cached token states into
//! batches), `train` and `score`; their items are exported here.

mod collate;
mod config;
mod model;
mod score;
mod train;

pub use collate::Collator;
pub use config::{Embeddings, Objective, Representation, RuberConfig, Span, Triple};
pub use model::{KnowledgeBranch, Sentences, TripleBatch, Unreferenced};
pub use score::{RuberScorer, score_pairs};
pub use train::{RuberData, RuberEpoch, train_unreferenced};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::vectors::{CachedText, EmbeddingCache};
    use burn::prelude::*;

    #[test]
    fn a_span_keeps_the_first_or_the_last_token_states() {
        let dir = std::env::temp_dir().join(format!("dialeval-ruber-span-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut cache = EmbeddingCache::open(&dir.join("cache.bin"), 2).unwrap();
        // Token t of "long" has states (t, -t); "short" has two tokens; "empty" none.
        let states = |n: u32| (0..n).flat_map(|t| [half::f16::from_f32(t as f32), half::f16::from_f32(-(t as f32))]).collect();
        cache.insert("long", CachedText { ids: (0..6).collect(), states: states(6) }).unwrap();
        cache.insert("short", CachedText { ids: vec![0, 1], states: states(2) }).unwrap();
        cache.insert("empty", CachedText { ids: vec![], states: vec![] }).unwrap();
        let device = Device::flex();
        // The query reads its last tokens only when the config says so; old configs read the first.
        let old: RuberConfig = serde_json::from_str(r#"{"embeddings":"bert","representation":"mean_pool","objective":"cross_entropy","static_dim":128,"gru_hidden":128,"margin":0.5,"max_tokens":64,"query_turns":2,"epochs":10,"batch_size":64,"lr":0.001,"lr_decay":0.5,"patience":3,"seed":0}"#).unwrap();
        let table = RuberConfig { embeddings: Embeddings::Static, ..old.clone() };
        let read = |span| {
            let s = Collator::new(&cache, &old, &device).sentences(&["long", "short", "empty"], span).unwrap();
            let seq = s.lengths.iter().copied().max().unwrap();
            let v = s.states.unwrap().into_data().convert::<f32>().try_to_vec::<f32>().unwrap();
            let ids = Collator::new(&cache, &table, &device).sentences(&["long"], span).unwrap().ids.unwrap().into_data().convert::<i64>().try_to_vec::<i64>().unwrap();
            (s.lengths, v.chunks(2 * seq).map(|row| row.iter().step_by(2).copied().collect::<Vec<f32>>()).collect::<Vec<_>>(), ids)
        };
        let (lengths, rows, ids) = read(Span::First(3));
        assert_eq!(lengths, vec![3, 2, 1]);
        assert_eq!(rows, vec![vec![0.0, 1.0, 2.0], vec![0.0, 1.0, 0.0], vec![0.0; 3]]);
        assert_eq!(ids, vec![0, 1, 2]);
        let (lengths, rows, ids) = read(Span::Last(3));
        assert_eq!(lengths, vec![3, 2, 1]);
        assert_eq!(rows, vec![vec![3.0, 4.0, 5.0], vec![0.0, 1.0, 0.0], vec![0.0; 3]]);
        assert_eq!(ids, vec![3, 4, 5]);
        assert_eq!((old.query_span(), old.response_span()), (Span::First(64), Span::First(64)));
        let new = RuberConfig { query_last_tokens: Some(128), ..old };
        assert_eq!((new.query_span(), new.response_span()), (Span::Last(128), Span::First(64)));
        std::fs::remove_dir_all(&dir).ok();
    }
}
