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
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, ModelUse, Note, referenced_items, response, unscored_notes};
use crate::table::Column;

/// A [`TokenEmbedder`] that encodes each distinct text once and remembers it, up to a bound:
/// the embedding family and BERT-RUBER's referenced score read the same token vectors, and the
/// texts a corpus repeats (a reference shared by several responses) are encoded once while
/// they are among the most recently used [`MemoEmbedder::capacity`] texts. Beyond the bound
/// the least recently used are forgotten (and encoded again if asked), so a corpus of millions
/// of items runs in bounded memory; the families ask for their texts chunk by chunk
/// ([`CHUNK_ITEMS`]).
pub struct MemoEmbedder<E> {
    inner: E,
    identity: String,
    name: String,
    capacity: usize,
    memo: Mutex<Memo>,
}

/// Items an embedding family encodes and scores at a time: what bounds its memory.
pub const CHUNK_ITEMS: usize = 1024;

/// Texts a [`MemoEmbedder`] keeps by default (a MiniLM token-state matrix of a sentence is
/// ~30 KB in f32: about 1.5 GB at this bound).
pub const DEFAULT_MEMO_TEXTS: usize = 50_000;

/// The remembered texts, each with the tick of its last use.
#[derive(Default)]
struct Memo {
    entries: HashMap<String, (Arc<TokenEmbeddings>, u64)>,
    tick: u64,
}

impl Memo {
    fn touch(&mut self, text: &str) -> Option<Arc<TokenEmbeddings>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(text).map(|(e, used)| {
            *used = tick;
            Arc::clone(e)
        })
    }

    /// Forgets the least recently used entries down to `capacity` (when a quarter over it, so
    /// the sort is amortised).
    fn trim(&mut self, capacity: usize) {
        if self.entries.len() <= capacity + capacity / 4 {
            return;
        }
        let mut ticks: Vec<u64> = self.entries.values().map(|(_, t)| *t).collect();
        ticks.sort_unstable();
        let cut = ticks[self.entries.len() - capacity];
        self.entries.retain(|_, (_, t)| *t >= cut);
    }
}

impl<E: TokenEmbedder> MemoEmbedder<E> {
    /// Wraps `inner`, whose identity (e.g. a sha256 of its configuration and weights) is
    /// `identity`: what the cache keys of families using it hold. Keeps
    /// [`DEFAULT_MEMO_TEXTS`] texts.
    pub fn new(inner: E, identity: impl Into<String>) -> Self {
        let identity = identity.into();
        Self { inner, name: identity.clone(), identity, capacity: DEFAULT_MEMO_TEXTS, memo: Mutex::new(Memo::default()) }
    }

    /// The wrapper with the encoder's name for reports ([`MetricFamily::models`]; by default
    /// its identity): not part of any cache key.
    #[must_use]
    pub fn named(self, name: impl Into<String>) -> Self {
        Self { name: name.into(), ..self }
    }

    /// The encoder's name for reports.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The memo with room for `capacity` texts (at least one chunk's worth is always kept while
    /// a request is served).
    #[must_use]
    pub fn with_capacity(self, capacity: usize) -> Self {
        Self { capacity: capacity.max(1), ..self }
    }

    /// Texts kept at most (between requests).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Texts remembered now.
    pub fn len(&self) -> usize {
        self.memo.lock().unwrap_or_else(PoisonError::into_inner).entries.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        let mut found: HashMap<&str, Arc<TokenEmbeddings>> = HashMap::new();
        let mut missing: Vec<&str> = Vec::new();
        {
            let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
            for &t in texts {
                if !found.contains_key(t) {
                    match memo.touch(t) {
                        Some(e) => {
                            found.insert(t, e);
                        }
                        None => missing.push(t),
                    }
                }
            }
        }
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let encoded = self.inner.embed_tokens(&missing).map_err(Error::Embed)?;
            if encoded.len() != missing.len() {
                return Err(Error::Embed(format!("the embedder returned {} results for {} texts", encoded.len(), missing.len()).into()));
            }
            let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
            for (t, e) in missing.into_iter().zip(encoded) {
                let e = Arc::new(e);
                memo.tick += 1;
                let tick = memo.tick;
                memo.entries.insert(t.to_owned(), (Arc::clone(&e), tick));
                found.insert(t, e);
            }
            memo.trim(self.capacity);
        }
        texts.iter().map(|t| found.get(*t).cloned().ok_or_else(|| Error::Embed(format!("no vectors for {t:?}").into()))).collect()
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

    fn max_tokens(&self) -> Option<usize> {
        self.inner.max_tokens()
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

    /// 2: empty responses and references are left out, named in a note. 3: the texts that
    /// reach the encoder's window (read only up to it) are counted.
    fn version(&self) -> &'static str {
        "embedding/3"
    }

    fn settings(&self) -> EmbeddingSettings {
        EmbeddingSettings { encoder: self.embedder.identity().to_owned(), bertscore: self.bertscore.clone(), references: self.rule }
    }

    fn models(&self) -> Vec<ModelUse> {
        vec![ModelUse::encoder(self.embedder.name(), self.embedder.identity())]
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let at = referenced_items(items);
        if at.is_empty() {
            return Ok(FamilyOutput::NoneScored { reason: "no item has a response and a reference".into(), notes: unscored_notes(items) });
        }
        let (config, rule) = (&self.bertscore, self.rule);
        let (mut bs, mut avg, mut greedy, mut extrema) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let window = self.embedder.max_tokens();
        let mut at_window = 0;
        // Chunk by chunk: only one chunk's token vectors (and the memo's bound) are in memory.
        progress(0, at.len());
        for chunk in at.chunks(CHUNK_ITEMS) {
            let hyps: Vec<&str> = chunk.iter().map(|&i| response(&items[i])).collect();
            let h = self.embedder.get(&hyps)?;
            let r = self.embedder.references(items, chunk)?;
            if let Some(w) = window {
                at_window += h.iter().chain(r.iter().flatten()).filter(|e| e.tokens.len() >= w).count();
            }
            let pairs: Vec<(&Arc<TokenEmbeddings>, &Vec<Arc<TokenEmbeddings>>)> = h.iter().zip(&r).collect();
            let scored = dialeval_common::par_map(&pairs, |(x, refs)| -> Result<[f64; 4]> {
                let refs: Vec<&TokenEmbeddings> = refs.iter().map(Arc::as_ref).collect();
                Ok([
                    bert_score_refs(x, &refs, config, rule)?.f1,
                    over_references(x, &refs, rule, embedding_average)?,
                    over_references(x, &refs, rule, greedy_matching)?,
                    over_references(x, &refs, rule, vector_extrema)?,
                ])
            });
            for row in scored {
                let [a, b, c, d] = row?;
                bs.push(a);
                avg.push(b);
                greedy.push(c);
                extrema.push(d);
            }
            progress(bs.len(), at.len());
        }
        let n = items.len();
        let mut scores = FamilyScores::new(vec![
            Column::spread("BERTScore-F1", n, &at, &bs)?,
            Column::spread("Embedding-Average", n, &at, &avg)?,
            Column::spread("Greedy-Matching", n, &at, &greedy)?,
            Column::spread("Vector-Extrema", n, &at, &extrema)?,
        ]);
        scores.notes.extend(unscored_notes(items));
        if let Some(w) = window {
            // Said once, here: every family that encodes reads the same window.
            scores.notes.push(Note::count(
                format!("{{0}} responses or references reach the encoder's window of {w} word pieces and were read up to it (a longer text is cut there, for every family that encodes)"),
                &[at_window],
            ));
        }
        Ok(FamilyOutput::Scored(scores))
    }
}
