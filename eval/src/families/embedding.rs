//! BERTScore-F1, Embedding-Average, Greedy-Matching and Vector-Extrema over the token vectors
//! of a [`TokenEmbedder`], and the [`MemoEmbedder`] that lets every embedding family of a run
//! share one encoding of each distinct text.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use dialeval_common::{EmbedError, TokenEmbedder, TokenEmbeddings};
use dialeval_datasets::DialogueItem;
use dialeval_metrics::embedding::{BertScoreConfig, MultiRef, bert_score_refs, embedding_average, greedy_matching, over_references, vector_extrema};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, referenced_items, response, unscored_notes};
use crate::table::Column;

/// A [`TokenEmbedder`] that encodes each distinct text once per run and remembers it: the
/// embedding family and BERT-RUBER's referenced score read the same token vectors, and the
/// texts a corpus repeats (a reference shared by several responses) are encoded once.
pub struct MemoEmbedder<E> {
    inner: E,
    identity: String,
    memo: Mutex<HashMap<String, Arc<TokenEmbeddings>>>,
}

impl<E: TokenEmbedder> MemoEmbedder<E> {
    /// Wraps `inner`, whose identity (e.g. a sha256 of its configuration and weights) is
    /// `identity`: what the cache keys of families using it hold.
    pub fn new(inner: E, identity: impl Into<String>) -> Self {
        Self { inner, identity: identity.into(), memo: Mutex::new(HashMap::new()) }
    }

    /// The wrapped embedder's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The token vectors of `texts`, in order, encoding only the texts not seen before (each
    /// distinct one once).
    ///
    /// # Errors
    /// [`Error::Embed`] from the embedder, or when it returns another number of texts.
    pub fn get(&self, texts: &[&str]) -> Result<Vec<Arc<TokenEmbeddings>>> {
        let mut missing: Vec<&str> = {
            let memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
            texts.iter().copied().filter(|t| !memo.contains_key(*t)).collect()
        };
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let encoded = self.inner.embed_tokens(&missing).map_err(Error::Embed)?;
            if encoded.len() != missing.len() {
                return Err(Error::Embed(format!("the embedder returned {} results for {} texts", encoded.len(), missing.len()).into()));
            }
            let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
            for (t, e) in missing.into_iter().zip(encoded) {
                memo.insert(t.to_owned(), Arc::new(e));
            }
        }
        let memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        texts.iter().map(|t| memo.get(*t).cloned().ok_or_else(|| Error::Embed(format!("no vectors for {t:?}").into()))).collect()
    }

    /// The token vectors of the references of each item of `at`, in order (one encoding
    /// request for all of them).
    ///
    /// # Errors
    /// As [`MemoEmbedder::get`].
    pub fn references(&self, items: &[DialogueItem], at: &[usize]) -> Result<Vec<Vec<Arc<TokenEmbeddings>>>> {
        let flat: Vec<&str> = at.iter().flat_map(|&i| items[i].references.iter().map(String::as_str)).collect();
        let mut vectors = self.get(&flat)?.into_iter();
        Ok(at.iter().map(|&i| vectors.by_ref().take(items[i].references.len()).collect()).collect())
    }
}

impl<E: TokenEmbedder> TokenEmbedder for MemoEmbedder<E> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed_tokens(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>, EmbedError> {
        Ok(self.get(texts).map_err(|e| -> EmbedError { Box::new(e) })?.into_iter().map(|e| (*e).clone()).collect())
    }
}

/// The token-vector metrics of a response against its references. BERTScore uses the
/// bert-score defaults (no idf, no baseline rescaling) and bert-score's rule for several
/// references (element-wise maximum, [`bert_score_refs`]); the other three take the maximum
/// over the references, or all four the mean with [`MultiRef::Mean`].
pub struct EmbeddingFamily<E> {
    embedder: Arc<MemoEmbedder<E>>,
    bertscore: BertScoreConfig,
    rule: MultiRef,
}

/// What the embedding scores depend on.
#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingSettings {
    /// The encoder's identity.
    pub encoder: String,
    /// BERTScore's settings.
    pub bertscore: BertScoreConfig,
    /// How the values against several references are combined.
    pub references: MultiRef,
}

impl<E: TokenEmbedder> EmbeddingFamily<E> {
    /// The family over `embedder` (shared with other families of the run), with the maximum
    /// over references.
    pub fn new(embedder: Arc<MemoEmbedder<E>>) -> Self {
        Self { embedder, bertscore: BertScoreConfig::default(), rule: MultiRef::Max }
    }

    /// The family with another multi-reference rule.
    #[must_use]
    pub fn with_references(self, rule: MultiRef) -> Self {
        Self { rule, ..self }
    }
}

impl<E: TokenEmbedder> MetricFamily for EmbeddingFamily<E> {
    type Settings = EmbeddingSettings;

    fn name(&self) -> &str {
        "embedding"
    }

    /// 2: empty responses and references are left out, named in a note.
    fn version(&self) -> &'static str {
        "embedding/2"
    }

    fn settings(&self) -> EmbeddingSettings {
        EmbeddingSettings { encoder: self.embedder.identity().to_owned(), bertscore: self.bertscore.clone(), references: self.rule }
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let at = referenced_items(items);
        if at.is_empty() {
            return Ok(FamilyOutput::Skipped("no item has a response and a reference".into()));
        }
        let hyps: Vec<&str> = at.iter().map(|&i| response(&items[i])).collect();
        progress(0, 2);
        let h = self.embedder.get(&hyps)?;
        progress(1, 2);
        let r = self.embedder.references(items, &at)?;
        progress(2, 2);
        let pairs: Vec<(&Arc<TokenEmbeddings>, &Vec<Arc<TokenEmbeddings>>)> = h.iter().zip(&r).collect();
        let (config, rule) = (&self.bertscore, self.rule);
        let scored = dialeval_common::par_map(&pairs, |(x, refs)| -> Result<[f64; 4]> {
            let refs: Vec<&TokenEmbeddings> = refs.iter().map(Arc::as_ref).collect();
            Ok([
                bert_score_refs(x, &refs, config, rule)?.f1,
                over_references(x, &refs, rule, embedding_average)?,
                over_references(x, &refs, rule, greedy_matching)?,
                over_references(x, &refs, rule, vector_extrema)?,
            ])
        });
        let (mut bs, mut avg, mut greedy, mut extrema) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for row in scored {
            let [a, b, c, d] = row?;
            bs.push(a);
            avg.push(b);
            greedy.push(c);
            extrema.push(d);
        }
        let n = items.len();
        let mut scores = FamilyScores::new(vec![
            Column::spread("BERTScore-F1", n, &at, &bs)?,
            Column::spread("Embedding-Average", n, &at, &avg)?,
            Column::spread("Greedy-Matching", n, &at, &greedy)?,
            Column::spread("Vector-Extrema", n, &at, &extrema)?,
        ]);
        scores.notes.extend(unscored_notes(items));
        Ok(FamilyOutput::Scored(scores))
    }
}
