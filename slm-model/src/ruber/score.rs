//! Scoring with a trained unreferenced model: in batches while training measures its dev set,
//! one pair at a time for the main job ([`RuberScorer`]), so that no score depends on its batch.

use std::path::Path;

use burn::prelude::*;

use super::collate::Collator;
use super::config::{RuberConfig, RuberMeta};
use super::model::Unreferenced;
use crate::error::{Error, Result};
use crate::runs::{load_module, read_json};
use crate::vectors::EmbeddingCache;

/// Scores (query, response) pairs with `model`, 256 at a time, collated by `collator` (whose
/// settings must be the model's); `knowledge` (one per pair, or empty for none) is read when
/// the model has the knowledge channel. What training measures its dev set with; a pair's
/// score may differ in the last bits with its batch mates (padding, kernel shapes), which
/// [`RuberScorer::score_grounded`] avoids.
///
/// # Errors
/// Texts missing from the cache; [`Error::Config`] for a `knowledge` of another length.
pub fn score_pairs(model: &Unreferenced, collator: &Collator, pairs: &[(&str, &str)], knowledge: &[Option<&str>]) -> Result<Vec<f64>> {
    score_batched(model, collator, (pairs, knowledge), 256)
}

/// [`score_pairs`], `batch` pairs at a time.
pub(super) fn score_batched(model: &Unreferenced, collator: &Collator, (pairs, knowledge): (&[(&str, &str)], &[Option<&str>]), batch: usize) -> Result<Vec<f64>> {
    if !knowledge.is_empty() && knowledge.len() != pairs.len() {
        return Err(Error::Config(format!("{} knowledge texts for {} pairs", knowledge.len(), pairs.len())));
    }
    let mut out = Vec::with_capacity(pairs.len());
    // Empty when no pair has knowledge: then every batch reads the "no knowledge" input.
    let mut knowledge = knowledge.chunks(batch);
    for chunk in pairs.chunks(batch) {
        let (q, r): (Vec<&str>, Vec<&str>) = chunk.iter().copied().unzip();
        let (q, r) = (collator.queries(&q)?, collator.responses(&r)?);
        let k = match knowledge.next().filter(|_| collator.config.knowledge) {
            Some(texts) => Some(collator.knowledge(texts)?),
            None => None,
        };
        let logits = model.logit(&q, &r, k.as_ref()).into_data().convert::<f32>().try_into_vec::<f32>().map_err(|e| Error::Format(format!("scores: {e:?}")))?;
        out.extend(logits.into_iter().map(|l| 1.0 / (1.0 + (-f64::from(l)).exp())));
    }
    Ok(out)
}

/// A trained unreferenced model loaded for scoring.
#[derive(Debug)]
pub struct RuberScorer {
    pub(super) model: Unreferenced,
    /// The settings it was trained with.
    pub config: RuberConfig,
    pub(super) device: Device,
    /// The encoder id (when recorded) and width of the states it was trained on.
    pub(super) encoder: (Option<String>, usize),
}

impl RuberScorer {
    /// Loads `dir/best` (written by [`train_unreferenced`]).
    ///
    /// # Errors
    /// Missing or unreadable files, [`Error::Checksum`], [`Error::RecordMismatch`] when the saved
    /// parameters do not fit the model `ruber.json` describes.
    pub fn load(dir: &Path, device: Device) -> Result<Self> {
        crate::bundle::verify(dir)?;
        let meta: RuberMeta = read_json(&dir.join("ruber.json"))?;
        let path = dir.join("best/model");
        let model = load_module(meta.config.init(meta.encoder_dim, meta.vocab, &device), &path)?;
        Ok(Self { model, config: meta.config, device, encoder: (meta.encoder_id, meta.encoder_dim) })
    }

    /// Relatedness of each (query, response) pair; every text must be in `cache`. A model with
    /// the knowledge channel reads its "no knowledge" input for every pair.
    ///
    /// # Errors
    /// Texts missing from the cache.
    pub fn score(&self, cache: &EmbeddingCache, pairs: &[(&str, &str)]) -> Result<Vec<f64>> {
        self.score_grounded(cache, pairs, &[])
    }

    /// As [`RuberScorer::score`], with each pair's knowledge (`None`: the pair has none; an
    /// empty slice: none has), read when the model has the knowledge channel
    /// ([`RuberConfig::knowledge`]); the knowledge texts must be in `cache` too.
    ///
    /// One pair at a time: a pair is computed with the same shapes (its own lengths, no
    /// padding) whatever else is scored with it, so its score never depends on how a corpus
    /// was cut into chunks or shards (batched, the last bits would).
    ///
    /// # Errors
    /// Texts missing from the cache, a knowledge slice of another length than `pairs`.
    pub fn score_grounded(&self, cache: &EmbeddingCache, pairs: &[(&str, &str)], knowledge: &[Option<&str>]) -> Result<Vec<f64>> {
        self.check_encoder(cache.encoder_id(), cache.dim())?;
        score_batched(&self.model, &Collator::new(cache, &self.config, &self.device), (pairs, knowledge), 1)
    }

    /// Whether the states of encoder `id` (its fingerprint, when known) of width `dim` are the
    /// ones the model was trained on: a caller can ask before encoding anything.
    ///
    /// # Errors
    /// [`Error::EncoderMismatch`] naming both encoders.
    pub fn check_encoder(&self, id: Option<&str>, dim: usize) -> Result<()> {
        let (trained, trained_dim) = &self.encoder;
        encoder_fits(trained.as_deref(), *trained_dim, id, dim)
    }

    /// [`RuberScorer::check_encoder`] for the checkpoint in `dir` without loading it (only its
    /// `ruber.json` is read): what choosing among shipped checkpoints asks of each.
    ///
    /// # Errors
    /// A missing or unreadable `ruber.json`.
    pub fn fits_encoder(dir: &Path, id: Option<&str>, dim: usize) -> Result<bool> {
        let meta: RuberMeta = read_json(&dir.join("ruber.json"))?;
        Ok(encoder_fits(meta.encoder_id.as_deref(), meta.encoder_dim, id, dim).is_ok())
    }
}

pub(super) fn encoder_fits(trained: Option<&str>, trained_dim: usize, id: Option<&str>, dim: usize) -> Result<()> {
    if dim != trained_dim || matches!((trained, id), (Some(a), Some(b)) if a != b) {
        let name = |id: Option<&str>, dim: usize| format!("{} ({dim} dims)", id.unwrap_or("unrecorded"));
        return Err(Error::EncoderMismatch { expected: name(trained, trained_dim), found: name(id, dim) });
    }
    Ok(())
}
