//! BERT-RUBER's trainer job in one place (`dialeval train-ruber` only turns its flags into a
//! [`RuberTraining`]): the training triples of a `../shared`-style folder (the training mix,
//! with retrieved negatives where asked, or DailyDialog++'s positives), the encoder's token
//! states of every text (computed once into the shared cache), training with resumable
//! checkpoints, and the best model's test on the mix's held-out pairs (`test.json`).

use std::path::PathBuf;

use dialeval_datasets::mix::MixConfig;
use dialeval_datasets::negatives::{PairVectors, RetrievedNegatives, retrieve_negatives};
use dialeval_datasets::pairs::{PairKind, TrainingPair};
use dialeval_slm_model::bert::{PretrainedEncoder, default_encoder_dir};
use dialeval_slm_model::ruber::{RuberConfig, RuberData, RuberEpoch, RuberScorer, train_unreferenced};
use dialeval_slm_model::sentence_vectors::PairSentenceVectors;
use dialeval_slm_model::texts::VectorInputs;
use dialeval_slm_model::vectors::{CachedSentenceVectors, EmbeddingCache};

use crate::error::{Error, Result};
use crate::models::mix::{record_data_settings, training_mix};
use crate::models::training::{TestAuc, TrainingObserver, write_json};
use crate::models::{default_cache_dir, encoder_cache, fill_pair_texts, mix_triples, positives_triples, retrieved_triples};

/// The training triples of a [`RuberTraining`].
#[derive(Debug, Clone)]
pub enum RuberTriples {
    /// The training mix, each positive against a negative of its own context in turn, and a
    /// share of the positives once more against a retrieved negative
    /// ([`RuberTraining::retrieved`]); dev: the mix's dev contexts; tested on its test split.
    Mix(MixConfig),
    /// Each positive of the first `contexts` contexts of DailyDialog++'s `data_positives.json`
    /// against a positive of another context; dev: 300 contexts of `dev.json`; no test.
    Positives {
        /// Contexts read.
        contexts: usize,
    },
}

/// A training run of BERT-RUBER's unreferenced model: what `train-ruber`'s flags become.
#[derive(Debug, Clone)]
pub struct RuberTraining {
    /// The shared data folder (`../shared`).
    pub shared: PathBuf,
    /// Checkpoints, log, data settings and test results; a run restarted into it resumes.
    pub out: PathBuf,
    /// The training triples.
    pub data: RuberTriples,
    /// The model and its training.
    pub config: RuberConfig,
    /// The sentence encoder whose token states the model reads (default: all-mpnet-base-v2).
    pub encoder: Option<PathBuf>,
    /// Negatives retrieved for a share of the training positives (the mix only).
    pub retrieved: RetrievedNegatives,
}

/// What a [`RuberTraining`] produced: the best model is in `out`.
#[derive(Debug)]
pub struct RuberTrained {
    /// One entry per epoch run here.
    pub logs: Vec<RuberEpoch>,
    /// The best model's test (the mix only), also written to `out/test.json`.
    pub test: Option<TestAuc>,
}

impl RuberTraining {
    /// Builds the triples, trains (resuming from `out`'s checkpoints) and tests the best model.
    ///
    /// # Errors
    /// [`Error::Config`] for retrieved negatives without the mix; unreadable data; a resumed run
    /// whose data settings differ; a training failure; results that cannot be written.
    pub fn run(&self, observe: &TrainingObserver<'_>) -> Result<RuberTrained> {
        if self.retrieved.any() && !matches!(self.data, RuberTriples::Mix(_)) {
            return Err(Error::Config("retrieved negatives apply to the training mix".into()));
        }
        let config = &self.config;
        let encoder = PretrainedEncoder::load(&self.encoder.clone().unwrap_or_else(default_encoder_dir), &config.compute.device()?)?;
        let mut cache = encoder_cache(&encoder, &default_cache_dir())?;
        let (train, dev, test_pairs, data_name) = match &self.data {
            RuberTriples::Mix(mix_config) => {
                let mix = training_mix(&self.shared, mix_config, &[], &|line| (observe.say)(&format!("mix: {line}")))?;
                let mut train = mix_triples(&mix.train, config);
                if self.retrieved.any() {
                    let vectors = self.pair_vectors(&encoder, &mut cache, &mix.train, observe)?;
                    let extra = retrieve_negatives(&mix.train, &self.retrieved, Some(&vectors as &dyn PairVectors))?;
                    let count = |kind| extra.iter().filter(|p| p.kind == kind).count();
                    (observe.say)(&format!(
                        "retrieved {} lexical and {} embedding negatives for {} training triples",
                        count(PairKind::LexicalNegative),
                        count(PairKind::EmbeddingNegative),
                        train.len()
                    ));
                    train.extend(retrieved_triples(&mix.train, &extra, config)?);
                }
                (train, mix_triples(&mix.dev, config), mix.test, "mix")
            }
            RuberTriples::Positives { contexts } => {
                let (train, dev) = positives_triples(&self.shared.join("data/dailydialog-plusplus"), config, *contexts)?;
                (train, dev, Vec::new(), "positives")
            }
        };
        record_data_settings(&self.out, &serde_json::json!({ "data": data_name, "retrieved_negatives": self.retrieved }))?;
        (observe.say)(&format!("{} training triples, {} dev triples", train.len(), dev.len()));
        if config.knowledge {
            let grounded = train.iter().filter(|t| t.knowledge.is_some()).count();
            (observe.say)(&format!("{grounded} of {} training triples have knowledge", train.len()));
        }
        let texts: Vec<&str> = train.iter().chain(&dev).flat_map(|t| [t.query.as_str(), t.positive.as_str(), t.negative.as_str()].into_iter().chain(t.knowledge.as_deref())).collect();
        cache.fill(&encoder, &texts, observe.encoding)?;
        let logs = train_unreferenced(&RuberData { train: &train, dev: &dev, cache: &cache, vocab: encoder.vocab_size() }, config, &self.out, observe.epochs)?;
        let test = (!test_pairs.is_empty()).then(|| self.test(&encoder, &mut cache, &test_pairs)).transpose()?;
        Ok(RuberTrained { logs, test })
    }

    /// ROC AUC of the best model on `pairs`, written to `out/test.json`.
    fn test(&self, encoder: &PretrainedEncoder, cache: &mut EmbeddingCache, pairs: &[TrainingPair]) -> Result<TestAuc> {
        let queries: Vec<String> = pairs.iter().map(|p| self.config.query(&p.context)).collect();
        let texts: Vec<&str> = queries.iter().map(String::as_str).chain(pairs.iter().map(|p| p.response.as_str())).collect();
        cache.fill(encoder, &texts, &|_, _| {})?;
        let queried: Vec<(&str, &str)> = queries.iter().map(String::as_str).zip(pairs.iter().map(|p| p.response.as_str())).collect();
        let scores = RuberScorer::load(&self.out, self.config.compute.device()?)?.score(cache, &queried)?;
        let test = TestAuc::of(pairs, &scores);
        write_json(&self.out.join("test.json"), &test)?;
        Ok(test)
    }

    /// The sentence vectors retrieval reads, over `cache`: for embedding negatives, the joined
    /// contexts and the responses of `pairs` are encoded into it first, as the SLM's pretrained
    /// head reads them (lexical ones read none).
    fn pair_vectors<'a>(
        &self,
        encoder: &'a PretrainedEncoder,
        cache: &'a mut EmbeddingCache,
        pairs: &[TrainingPair],
        observe: &TrainingObserver<'_>,
    ) -> Result<PairSentenceVectors<CachedSentenceVectors<'a>>> {
        if self.retrieved.embedding_share > 0.0 {
            fill_pair_texts(cache, encoder, &VectorInputs::default().texts_of(&[pairs]), observe.encoding)?;
        }
        Ok(PairSentenceVectors(CachedSentenceVectors::new(cache, encoder.fingerprint())))
    }
}
