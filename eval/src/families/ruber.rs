//! BERT-RUBER (Ghazarian et al., 2019): the unreferenced relatedness model, the referenced
//! score (cosine of max-min pooled token vectors of response and reference; the maximum over
//! several references, or their mean) and their hybrids.

use std::sync::Arc;

use dialeval_common::TokenEmbeddings;
use dialeval_datasets::DialogueItem;
use dialeval_metrics::embedding::{HybridStrategy, MultiRef, Pooling, hybrid, min_max_normalize, over_references, referenced_score_of};
use dialeval_slm_model::bert::PretrainedEncoder;
use dialeval_slm_model::ruber::RuberScorer;
use serde::Serialize;

use crate::error::Result;
use crate::families::embedding::MemoEmbedder;
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, Note, empty_context_note, empty_response_note, referenced_items, responding_items, response, unscored_notes};
use crate::models::{CheckpointIdentity, EncoderSide, SharedCache};
use crate::table::{Column, ScoreTable};

/// `BERT-RUBER-unref` for every item with a response; with references also `-ref` and the
/// hybrids `-min`, `-max`, `-amean`, `-gmean` of the min-max normalised scores (the paper's
/// combinations). The unreferenced model reads the token states of the encoder's shared cache;
/// the referenced score reads the token vectors the embedding family already computed.
pub struct BertRuberFamily {
    scorer: RuberScorer,
    checkpoint: CheckpointIdentity,
    encoder: Arc<PretrainedEncoder>,
    memo: Arc<MemoEmbedder<Arc<PretrainedEncoder>>>,
    cache: Arc<SharedCache>,
    rule: MultiRef,
}

/// What the BERT-RUBER scores depend on.
#[derive(Debug, Clone, Serialize)]
pub struct RuberSettings {
    /// The unreferenced model.
    pub checkpoint: CheckpointIdentity,
    /// The encoder's fingerprint.
    pub encoder: String,
    /// Pooling of the referenced score.
    pub pooling: Pooling,
    /// How the referenced score combines several references.
    pub references: MultiRef,
}

impl BertRuberFamily {
    /// The family with a loaded unreferenced model (from `checkpoint`) and the encoder it was
    /// trained on, with the run's memo of token vectors and the encoder's token-state cache
    /// (shared, not copied).
    pub fn new(scorer: RuberScorer, checkpoint: CheckpointIdentity, side: &EncoderSide) -> Self {
        Self { scorer, checkpoint, encoder: Arc::clone(&side.encoder), memo: Arc::clone(&side.memo), cache: Arc::clone(&side.cache), rule: MultiRef::Max }
    }

    /// The family with another multi-reference rule for the referenced score.
    #[must_use]
    pub fn with_references(self, rule: MultiRef) -> Self {
        Self { rule, ..self }
    }
}

impl MetricFamily for BertRuberFamily {
    type Settings = RuberSettings;

    fn name(&self) -> &str {
        "bert_ruber"
    }

    /// 2: empty responses and references leave the referenced score out. 3: a blank response
    /// leaves the unreferenced score out too, and an empty context is counted.
    fn version(&self) -> &'static str {
        "bert_ruber/3"
    }

    fn settings(&self) -> RuberSettings {
        RuberSettings { checkpoint: self.checkpoint.clone(), encoder: self.encoder.fingerprint().to_owned(), pooling: Pooling::MaxMin, references: self.rule }
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        if responding_items(items).is_empty() {
            return Ok(FamilyOutput::NoneScored { reason: "no responses".into(), notes: vec![empty_response_note(items)] });
        }
        let queries: Vec<String> = items.iter().map(|i| self.scorer.config.query(&i.context.iter().map(|t| t.text.as_str()).collect::<Vec<_>>())).collect();
        // A model with the knowledge channel reads each item's persona or knowledge (an item
        // without reads the model's "no knowledge" input).
        let knowledge: Vec<Option<&str>> = if self.scorer.config.knowledge { items.iter().map(|i| i.knowledge.as_deref()).collect() } else { Vec::new() };
        let texts: Vec<&str> = queries.iter().map(String::as_str).chain(items.iter().map(response)).chain(knowledge.iter().flatten().copied()).collect();
        let pairs: Vec<(&str, &str)> = queries.iter().map(String::as_str).zip(items.iter().map(response)).collect();
        let unreferenced = self.cache.with(|cache| {
            cache.fill(&self.encoder, &texts, progress)?;
            Ok(self.scorer.score_grounded(cache, &pairs, &knowledge)?)
        })?;
        let n = items.len();
        let with_response = responding_items(items);
        let unref_values: Vec<f64> = with_response.iter().map(|&i| unreferenced[i]).collect();
        let mut columns = vec![Column::spread("BERT-RUBER-unref", n, &with_response, &unref_values)?];
        let at = referenced_items(items);
        let mut scores_notes = vec![empty_response_note(items), empty_context_note(items)];
        if at.len() >= 2 {
            // Chunk by chunk, as the embedding family: one chunk's token vectors in memory.
            let mut referenced: Vec<f64> = Vec::with_capacity(at.len());
            for chunk in at.chunks(crate::families::embedding::CHUNK_ITEMS) {
                let hyps: Vec<&str> = chunk.iter().map(|&i| response(&items[i])).collect();
                let (h, r) = (self.memo.get(&hyps)?, self.memo.references(items, chunk)?);
                for (x, refs) in h.iter().zip(&r) {
                    referenced.push(over_references(x, &refs.iter().map(Arc::as_ref).collect::<Vec<&TokenEmbeddings>>(), self.rule, |a, b| referenced_score_of(a, b, Pooling::MaxMin))?);
                }
            }
            let unref: Vec<f64> = at.iter().map(|&i| unreferenced[i]).collect();
            columns.push(Column::spread("BERT-RUBER-ref", n, &at, &referenced)?);
            scores_notes.extend(unscored_notes(items).into_iter().map(|note| note.prefixed("referenced score and hybrids: ")));
            columns.extend(hybrid_columns(n, &at, &unref, &referenced)?);
        } else {
            scores_notes.push(Note::text("fewer than two items have a reference: no referenced score or hybrids"));
        }
        let mut scores = FamilyScores::new(columns);
        scores.notes = scores_notes;
        Ok(FamilyOutput::Scored(scores))
    }

    /// The hybrids normalised over the whole corpus, not each chunk.
    fn finish(&self, columns: Vec<Column>) -> Result<Vec<Column>> {
        let mut table = ScoreTable::new(columns.first().map_or(0, |c| c.values.len()));
        for c in columns {
            table.push(c)?;
        }
        Ok(recompute_hybrids(table)?.columns().to_vec())
    }
}

/// The hybrids, in column order: their names and strategies.
const HYBRIDS: [(&str, HybridStrategy); 4] =
    [("BERT-RUBER-min", HybridStrategy::Min), ("BERT-RUBER-max", HybridStrategy::Max), ("BERT-RUBER-amean", HybridStrategy::ArithmeticMean), ("BERT-RUBER-gmean", HybridStrategy::GeometricMean)];

/// The four hybrid columns of `n` items from the unreferenced and referenced scores of the items
/// `at`, each min-max normalised over those items first (the paper's rule: relative to the
/// corpus scored).
///
/// # Errors
/// A normalisation of fewer than two values or of mismatched lengths.
pub fn hybrid_columns(n: usize, at: &[usize], unreferenced: &[f64], referenced: &[f64]) -> Result<Vec<Column>> {
    let (nu, nr) = (min_max_normalize(unreferenced)?, min_max_normalize(referenced)?);
    HYBRIDS.iter().map(|&(name, s)| Column::spread(name, n, at, &hybrid(&nu, &nr, s)?)).collect()
}

/// `table` with its BERT-RUBER hybrid columns (if any) computed again from its unreferenced and
/// referenced columns: what a merge of shards does, since the hybrids are relative to the corpus.
///
/// # Errors
/// As [`hybrid_columns`].
pub fn recompute_hybrids(table: ScoreTable) -> Result<ScoreTable> {
    let find = |name: &str| table.columns().iter().find(|c| c.metric.as_str() == name);
    let (Some(unref), Some(referenced)) = (find("BERT-RUBER-unref"), find("BERT-RUBER-ref")) else { return Ok(table) };
    if !table.columns().iter().any(|c| HYBRIDS.iter().any(|(h, _)| c.metric.as_str() == *h)) {
        return Ok(table);
    }
    let at: Vec<usize> = (0..table.items()).filter(|&i| unref.values[i].is_some() && referenced.values[i].is_some()).collect();
    let pick = |c: &Column| at.iter().filter_map(|&i| c.values[i]).collect::<Vec<f64>>();
    let mut hybrids = hybrid_columns(table.items(), &at, &pick(unref), &pick(referenced))?;
    let mut out = ScoreTable::new(table.items());
    for column in table.into_columns() {
        match hybrids.iter().position(|h| h.metric == column.metric) {
            Some(h) => out.push(hybrids.swap_remove(h))?,
            None => out.push(column)?,
        }
    }
    Ok(out)
}
