//! From texts to padded batches of their cached token states, as a model with a given
//! configuration reads them.

use burn::prelude::*;
use burn::tensor::TensorData;

use super::config::{Embeddings, RuberConfig, Span};
use super::model::Sentences;
use crate::error::{Error, Result};
use crate::vectors::{CachedText, EmbeddingCache};

/// Turns texts into padded batches of their cached token states, as a model with `config`
/// reads them: queries, responses and knowledge each cut to their own span.
#[derive(Debug, Clone, Copy)]
pub struct Collator<'a> {
    pub(super) cache: &'a EmbeddingCache,
    pub(super) config: &'a RuberConfig,
    pub(super) device: &'a Device,
}

impl<'a> Collator<'a> {
    /// Batches of `cache`'s states for a model with `config`, on `device`.
    pub fn new(cache: &'a EmbeddingCache, config: &'a RuberConfig, device: &'a Device) -> Self {
        Self { cache, config, device }
    }

    /// Queries, each cut to [`RuberConfig::query_span`].
    ///
    /// # Errors
    /// [`Error::Format`] naming the first text that is not cached.
    pub fn queries(&self, texts: &[&str]) -> Result<Sentences> {
        self.sentences(texts, self.config.query_span())
    }

    /// Responses, each cut to [`RuberConfig::response_span`].
    ///
    /// # Errors
    /// As [`Collator::queries`].
    pub fn responses(&self, texts: &[&str]) -> Result<Sentences> {
        self.sentences(texts, self.config.response_span())
    }

    /// Knowledge texts that may be absent, each cut to [`RuberConfig::knowledge_span`]: an
    /// absent one is an empty sentence, marked in [`Sentences`] so that the model reads its
    /// "absent" input there.
    ///
    /// # Errors
    /// As [`Collator::queries`].
    pub fn knowledge(&self, texts: &[Option<&str>]) -> Result<Sentences> {
        let entries: Vec<CachedText> = texts.iter().map(|t| t.map_or_else(|| Ok(CachedText { ids: Vec::new(), states: Vec::new() }), |t| self.cached(t))).collect::<Result<_>>()?;
        let present: Vec<f32> = texts.iter().map(|t| if t.is_some() { 1.0 } else { 0.0 }).collect();
        let n = present.len();
        Ok(self.pad(&entries, Some(Tensor::from_data(TensorData::new(present, [n, 1]), self.device)), self.config.knowledge_span()))
    }

    /// Texts that are all given, each cut to `span`.
    ///
    /// # Errors
    /// As [`Collator::queries`].
    pub fn sentences(&self, texts: &[&str], span: Span) -> Result<Sentences> {
        let entries: Vec<CachedText> = texts.iter().map(|t| self.cached(t)).collect::<Result<_>>()?;
        Ok(self.pad(&entries, None, span))
    }

    pub(super) fn cached(&self, text: &str) -> Result<CachedText> {
        self.cache.get(text)?.ok_or_else(|| Error::Format(format!("not in the embedding cache: {text:?}")))
    }

    pub(super) fn pad(&self, entries: &[CachedText], present: Option<Tensor<2>>, span: Span) -> Sentences {
        let (dim, device) = (self.cache.dim(), self.device);
        let kept: Vec<std::ops::Range<usize>> = entries.iter().map(|e| span.range(e.ids.len())).collect();
        // An empty entry (no tokens) still takes one padded-in slot, as before.
        let lengths: Vec<usize> = kept.iter().map(|r| r.len().max(1)).collect();
        let (b, seq) = (entries.len(), lengths.iter().copied().max().unwrap_or(1));
        let mut pad = vec![true; b * seq];
        for (i, &len) in lengths.iter().enumerate() {
            pad[i * seq..i * seq + len].fill(false);
        }
        let pad = Tensor::<2, Bool>::from_data(TensorData::new(pad, [b, seq]), device);
        match self.config.embeddings {
            Embeddings::Bert => {
                let mut states = vec![0.0_f32; b * seq * dim];
                for (i, (e, r)) in entries.iter().zip(&kept).enumerate() {
                    let from = e.states.get(r.start * dim..r.end * dim).unwrap_or_default();
                    for (slot, v) in states[i * seq * dim..].iter_mut().zip(from) {
                        *slot = v.to_f32();
                    }
                }
                Sentences { states: Some(Tensor::from_data(TensorData::new(states, [b, seq, dim]), device)), ids: None, pad, lengths, present }
            }
            Embeddings::Static => {
                let mut ids = vec![0_i64; b * seq];
                for (i, (e, r)) in entries.iter().zip(&kept).enumerate() {
                    for (slot, &id) in ids[i * seq..].iter_mut().zip(&e.ids[r.clone()]) {
                        *slot = i64::from(id);
                    }
                }
                Sentences { states: None, ids: Some(Tensor::from_data(TensorData::new(ids, [b, seq]), device)), pad, lengths, present }
            }
        }
    }
}
