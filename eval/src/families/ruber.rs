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
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, ModelUse, Note, Whole, empty_context_note, empty_response_note, referenced_items, responding_items, response, unscored_notes};
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
    /// leaves the unreferenced score out too, and an empty context is counted. 4: every item
    /// with a reference gets its referenced score whatever the chunk holds (the corpus decides
    /// the hybrids), and the referenced notes are always counted.
    fn version(&self) -> &'static str {
        "bert_ruber/4"
    }

    fn settings(&self) -> RuberSettings {
        RuberSettings { checkpoint: self.checkpoint.clone(), encoder: self.encoder.fingerprint().to_owned(), pooling: Pooling::MaxMin, references: self.rule }
    }

    fn models(&self) -> Vec<ModelUse> {
        vec![ModelUse::encoder(self.encoder.name(), self.encoder.fingerprint()), self.checkpoint.model_use()]
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
        // Every item with a reference gets its referenced score, however few there are in this
        // chunk; whether the corpus has enough for the hybrids is decided over the whole, in
        // `finish`.
        let mut scores_notes = vec![empty_response_note(items), empty_context_note(items)];
        scores_notes.extend(unscored_notes(items).into_iter().map(|note| note.prefixed("referenced score and hybrids: ")));
        if !at.is_empty() {
            // Chunk by chunk, as the embedding family: one chunk's token vectors in memory.
            let mut referenced: Vec<f64> = Vec::with_capacity(at.len());
            for chunk in at.chunks(crate::families::embedding::CHUNK_ITEMS) {
                let hyps: Vec<&str> = chunk.iter().map(|&i| response(&items[i])).collect();
                let (h, r) = (self.memo.get(&hyps)?, self.memo.references(items, chunk)?);
                for (x, refs) in h.iter().zip(&r) {
                    referenced.push(over_references(x, &refs.iter().map(Arc::as_ref).collect::<Vec<&TokenEmbeddings>>(), self.rule, |a, b| referenced_score_of(a, b, Pooling::MaxMin))?);
                }
            }
            columns.push(Column::spread(REFERENCED, n, &at, &referenced)?);
        }
        let mut scores = FamilyScores::new(columns);
        scores.notes = scores_notes;
        Ok(FamilyOutput::Scored(scores))
    }

    /// The hybrids, normalised over the whole corpus (not each chunk), when at least two of its
    /// items have both scores; otherwise a note says why there are none.
    fn finish(&self, whole: Whole) -> Result<Whole> {
        let mut table = ScoreTable::new(whole.columns.first().map_or(0, |c| c.values.len()));
        for c in whole.columns {
            table.push(c)?;
        }
        let table = recompute_hybrids(table)?;
        let mut notes = whole.notes;
        notes.retain(|n| !is_hybrid_note(n));
        notes.extend(hybrid_note(&table));
        Ok(Whole { columns: table.into_columns(), notes })
    }
}

/// The referenced score's column.
const REFERENCED: &str = "BERT-RUBER-ref";

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

/// `table` with its BERT-RUBER hybrid columns computed again from its unreferenced and
/// referenced columns over the items that have both, right after the referenced column, when
/// at least two items do (without hybrids otherwise): what a family's `finish` and a merge of
/// shards do, since the hybrids are relative to the corpus. A table without the two columns is
/// given back as it is.
///
/// # Errors
/// As [`hybrid_columns`].
pub fn recompute_hybrids(table: ScoreTable) -> Result<ScoreTable> {
    let find = |name: &str| table.columns().iter().find(|c| c.metric.as_str() == name);
    let (Some(unref), Some(referenced)) = (find("BERT-RUBER-unref"), find(REFERENCED)) else { return Ok(table) };
    let at: Vec<usize> = (0..table.items()).filter(|&i| unref.values[i].is_some() && referenced.values[i].is_some()).collect();
    let pick = |c: &Column| at.iter().filter_map(|&i| c.values[i]).collect::<Vec<f64>>();
    let (u, r) = (pick(unref), pick(referenced));
    let hybrids = if at.len() >= 2 && !constant(&u) && !constant(&r) { hybrid_columns(table.items(), &at, &u, &r)? } else { Vec::new() };
    let mut out = ScoreTable::new(table.items());
    let mut hybrids = Some(hybrids);
    for column in table.into_columns() {
        if HYBRIDS.iter().any(|(h, _)| column.metric.as_str() == *h) {
            continue;
        }
        let after = column.metric.as_str() == REFERENCED;
        out.push(column)?;
        if after {
            for h in hybrids.take().unwrap_or_default() {
                out.push(h)?;
            }
        }
    }
    Ok(out)
}

/// Whether min-max normalisation cannot spread `values` (all the same).
fn constant(values: &[f64]) -> bool {
    values.windows(2).all(|w| w[0] == w[1])
}

/// Why a table with BERT-RUBER's columns has no hybrids (fewer than two items with both
/// scores, or scores the same for every item), for the family's notes; `None` when it has
/// them, or has no BERT-RUBER column.
pub fn hybrid_note(table: &ScoreTable) -> Option<Note> {
    table.column(&"BERT-RUBER-unref".into())?;
    if table.columns().iter().any(|c| c.metric.as_str() == HYBRIDS[0].0) {
        return None;
    }
    let with_reference = table.column(&REFERENCED.into()).map_or(0, Column::count);
    Some(Note::text(match with_reference {
        0 => NO_REFERENCE,
        1 => ONE_REFERENCE,
        _ => CONSTANT,
    }))
}

/// Whether `note` is one of [`hybrid_note`]'s (decided over the whole corpus: a merge of shards
/// decides it again).
pub fn is_hybrid_note(note: &Note) -> bool {
    matches!(note, Note::Text { text } if [NO_REFERENCE, ONE_REFERENCE, CONSTANT].contains(&text.as_str()))
}

const NO_REFERENCE: &str = "no item has a response and a reference: no referenced score or hybrids";
const ONE_REFERENCE: &str = "one item has a response and a reference: its referenced score, but no hybrids (they are min-max normalised over two or more items)";
const CONSTANT: &str = "the unreferenced or the referenced score is the same for every item with both: no hybrids (min-max normalisation cannot spread them)";
