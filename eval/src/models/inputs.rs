//! Corpus items as SLM inputs, and scoring them with the pretrained sentence vectors the model
//! reads.

use dialeval_datasets::DialogueItem;
use dialeval_datasets::pairs::{PairKind, TrainingPair};
use dialeval_slm_model::bert::PretrainedEncoder;
use dialeval_slm_model::scorer::Scorer;
use dialeval_slm_model::vectors::{CachedSentenceVectors, EmbeddingCache};

use super::SharedCache;
use crate::error::{Error, Result};

/// An item as an SLM input: its last `turns` context turns and its response, with their graphs
/// (a model reads the turns it was trained on, [`Scorer::context_turns`]).
pub fn slm_pair(item: &DialogueItem, turns: usize) -> TrainingPair {
    let context = &item.context[item.context.len().saturating_sub(turns)..];
    TrainingPair {
        id: item.id.clone(),
        context: context.iter().map(|t| t.text.clone()).collect(),
        response: item.response.as_ref().map(|r| r.text.clone()).unwrap_or_default(),
        kind: PairKind::Positive,
        context_amr: context.iter().map(|t| t.amr.clone()).collect(),
        response_amr: item.response.as_ref().and_then(|r| r.amr.clone()),
        knowledge: item.knowledge.clone(),
    }
}

/// Encodes into `cache` every text of the pairs in `parts` that `inputs` reads (the joined
/// context, the response, and as asked the knowledge and the last two turns,
/// [`dialeval_slm_model::texts::VectorInputs::texts`]) not yet there: the texts whose vectors the SLM's pretrained head
/// reads.
///
/// # Errors
/// Encoder or cache failures.
pub fn fill_pair_texts(cache: &mut EmbeddingCache, encoder: &PretrainedEncoder, texts: &[std::borrow::Cow<'_, str>], progress: &dyn Fn(usize, usize)) -> Result<()> {
    let texts: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
    Ok(cache.fill(encoder, &texts, progress)?)
}

/// Scores pairs with an SLM, computing the pretrained sentence vectors first (into `cache`)
/// when the model reads them.
///
/// # Errors
/// [`Error::Config`] when the model reads vectors and no encoder is given; encoder, cache or
/// scoring failures (another encoder, a missing vector).
pub fn score_slm_pairs(scorer: &Scorer, pairs: &[TrainingPair], encoder: Option<(&PretrainedEncoder, &SharedCache)>, progress: &dyn Fn(usize, usize)) -> Result<Vec<f64>> {
    if scorer.featurizer().encoder.is_none() {
        return Ok(scorer.score(pairs, None)?);
    }
    let (encoder, cache) = encoder.ok_or_else(|| Error::Config("this SLM reads pretrained sentence vectors and no encoder was given".into()))?;
    cache.with(|cache| {
        let inputs = scorer.featurizer().vector_inputs().unwrap_or_default();
        fill_pair_texts(cache, encoder, &inputs.texts_of(&[pairs]), progress)?;
        Ok(scorer.score(pairs, Some(&CachedSentenceVectors::new(cache, encoder.fingerprint())))?)
    })
}

/// Scores `items` with an SLM (each with the last context turns the model reads,
/// [`Scorer::context_turns`], [`slm_pair`]); a model that reads pretrained sentence vectors
/// gets them from the encoder it was trained on ([`trained_encoder`]) through the default
/// token-state cache ([`super::default_cache_dir`]), encoded on the scorer's device.
///
/// # Errors
/// The encoder cannot be found or loaded, or as [`score_slm_pairs`].
pub fn score_items(scorer: &Scorer, items: &[DialogueItem], progress: &dyn Fn(usize, usize)) -> Result<Vec<f64>> {
    let pairs: Vec<TrainingPair> = items.iter().map(|it| slm_pair(it, scorer.context_turns())).collect();
    if scorer.featurizer().encoder.is_none() {
        return score_slm_pairs(scorer, &pairs, None, progress);
    }
    let encoder = trained_encoder(scorer)?;
    let cache = SharedCache::new(&encoder, &super::default_cache_dir());
    score_slm_pairs(scorer, &pairs, Some((&encoder, &cache)), progress)
}

/// The encoder whose sentence vectors `scorer` was trained on, among the shipped encoders that
/// are fetched ([`dialeval_slm_model::bert::shipped_encoder_dirs`]: all-mpnet-base-v2, then
/// all-MiniLM-L6-v2), loaded on the scorer's device; only a folder of the trained width is
/// loaded.
///
/// # Errors
/// [`Error::Config`] when the scorer reads no vectors or none of them is its encoder.
pub fn trained_encoder(scorer: &Scorer) -> Result<PretrainedEncoder> {
    let Some((id, dim)) = &scorer.featurizer().encoder else {
        return Err(Error::Config("this SLM reads no pretrained sentence vectors".into()));
    };
    for dir in dialeval_slm_model::bert::shipped_encoder_dirs() {
        let fits = dialeval_slm_model::bert::BertConfig::load(&dir.join("config.json")).is_ok_and(|c| c.hidden_size == *dim);
        if fits {
            let encoder = PretrainedEncoder::load(&dir, scorer.device())?;
            if encoder.fingerprint() == id {
                return Ok(encoder);
            }
        }
    }
    Err(Error::Config(format!(
        "this SLM reads the sentence vectors of encoder {id} ({dim} dims), which is neither all-mpnet-base-v2 nor all-MiniLM-L6-v2 as fetched (scripts/fetch_mpnet.sh, scripts/fetch_minilm.sh)"
    )))
}
