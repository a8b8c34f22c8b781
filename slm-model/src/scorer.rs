//! A trained SLM loaded once for scoring ([`Scorer`]), one pair at a time, so that no score
//! depends on what else is scored with it.

use std::path::{Path, PathBuf};

use burn::prelude::*;
use dialeval_datasets::pairs::TrainingPair;

use crate::config::{TrainConfig, model_config};
use crate::data::{Example, Featurizer, Withheld};
use crate::error::{Error, Result};
use crate::model::{Mode, Slm};
use crate::runs::{load_module, read_json};
use crate::sentence_vectors::SentenceVectors;

/// Whether [`Scorer::score_with`] reads the items' graphs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Graphs {
    /// The graphs the pairs carry.
    Use,
    /// None: every graph withheld, as for items without AMR.
    Withhold,
}

/// A trained model loaded once for scoring.
pub struct Scorer {
    model: Slm,
    featurizer: Featurizer,
    mode: Mode,
    context_turns: usize,
    device: Device,
}

impl Scorer {
    /// Loads `dir/best` (written by [`crate::train::train`]) on `device`, after checking the files of a
    /// shipped checkpoint against its `SHA256SUMS` ([`crate::bundle::verify`]).
    ///
    /// # Errors
    /// Missing or unreadable files, [`Error::Checksum`], [`Error::RecordMismatch`] when the saved
    /// parameters do not fit the model `train.json` and `featurizer.json` describe.
    pub fn load(dir: &Path, device: Device) -> Result<Self> {
        crate::bundle::verify(dir)?;
        let featurizer: Featurizer = read_json(&dir.join("featurizer.json"))?;
        let config: TrainConfig = read_json(&dir.join("train.json"))?;
        let mode: Mode = read_json(&dir.join("best/mode.json"))?;
        let path: PathBuf = dir.join("best/model");
        let model = load_module(model_config(&featurizer, &config).init(&device), &path)?;
        Ok(Self { model, featurizer, mode, context_turns: config.context_turns, device })
    }

    /// `P(good continuation)` per pair, in order, one at a time (a pair's
    /// score does not depend on the others scored with it). A model with the pretrained
    /// text head needs the sentence vectors of every context and response (and, with the
    /// knowledge channel, of each pair's knowledge), from the encoder it was trained with.
    ///
    /// # Errors
    /// [`Error::EncoderMismatch`], [`Error::MissingVector`], or an unreadable model output.
    pub fn score(&self, pairs: &[TrainingPair], vectors: Option<&dyn SentenceVectors>) -> Result<Vec<f64>> {
        self.score_with(pairs, vectors, Graphs::Use)
    }

    /// As [`Scorer::score`], with every graph withheld under [`Graphs::Withhold`] (what the
    /// model gives the same items without AMR).
    ///
    /// # Errors
    /// As [`Scorer::score`].
    pub fn score_with(&self, pairs: &[TrainingPair], vectors: Option<&dyn SentenceVectors>, graphs: Graphs) -> Result<Vec<f64>> {
        let examples = featurize(&self.featurizer, pairs, vectors)?;
        Predictor { model: &self.model, featurizer: &self.featurizer, mode: self.mode, device: &self.device, batch: SCORE_BATCH }.predict(&examples, vectors, graphs)
    }

    /// The device it scores on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Whether the checkpoint in `dir` reads the vectors of encoder `id` of width `dim` (or no
    /// encoder at all), without loading it: only its `featurizer.json` is read. What choosing
    /// among shipped checkpoints asks of each.
    ///
    /// # Errors
    /// A missing or unreadable `featurizer.json`.
    pub fn fits_encoder(dir: &Path, id: &str, dim: usize) -> Result<bool> {
        let featurizer: Featurizer = read_json(&dir.join("featurizer.json"))?;
        Ok(featurizer.check_encoder(id, dim).is_ok())
    }

    /// The featuriser (vocabularies, the encoder the model expects).
    pub fn featurizer(&self) -> &Featurizer {
        &self.featurizer
    }

    /// The mode the model was trained in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// How many context turns (the last ones) the model was trained to read.
    pub fn context_turns(&self) -> usize {
        self.context_turns
    }
}

/// Featurises `pairs` (with their pretrained pair features when the featuriser uses them).
pub(crate) fn featurize(featurizer: &Featurizer, pairs: &[TrainingPair], vectors: Option<&dyn SentenceVectors>) -> Result<Vec<Example>> {
    pairs.iter().map(|p| featurizer.example_with(p, vectors)).collect()
}

/// A model with its featuriser and mode on a device (no autodiff): what scoring examples takes.
pub(crate) struct Predictor<'a> {
    pub(crate) model: &'a Slm,
    pub(crate) featurizer: &'a Featurizer,
    pub(crate) mode: Mode,
    pub(crate) device: &'a Device,
    /// Examples per forward pass.
    pub(crate) batch: usize,
}

/// Examples per forward pass when a [`Scorer`] scores: one, so that an example is computed with
/// the same shapes (its own lengths, no padding) whatever else is scored with it, and its score
/// never depends on how a corpus was cut into chunks or shards (batched, the last bits would).
const SCORE_BATCH: usize = 1;

impl Predictor<'_> {
    /// Scores examples, [`Predictor::batch`] at a time; under [`Graphs::Withhold`] every graph
    /// is replaced by the "no graph" input.
    pub(crate) fn predict(&self, examples: &[Example], vectors: Option<&dyn SentenceVectors>, graphs: Graphs) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(examples.len());
        for chunk in examples.chunks(self.batch.max(1)) {
            let refs: Vec<&Example> = chunk.iter().collect();
            let withheld = vec![graphs == Graphs::Withhold; refs.len()];
            let p: Vec<f32> = self
                .model
                .probability(&self.featurizer.collate_withholding(&refs, Withheld { graphs: &withheld, knowledge: &[] }, vectors, self.device)?, self.mode)
                .into_data()
                .convert::<f32>()
                .try_into_vec::<f32>()
                .map_err(|e| Error::Format(format!("model output: {e:?}")))?;
            if p.len() != refs.len() {
                return Err(Error::Format(format!("model output: {} scores for {} pairs", p.len(), refs.len())));
            }
            out.extend(p.into_iter().map(f64::from));
        }
        Ok(out)
    }
}
