//! The SLM trainer's job in one place (`dialeval train-slm` only turns its flags into an
//! [`SlmTraining`]): the training data of a `../shared`-style folder (the training mix,
//! DailyDialog++ alone, or Diplomacy with gold AMR), retrieved and dropped negatives, the
//! sentence vectors the text side reads (computed once into the shared token-state cache),
//! training with resumable checkpoints, and the test of the best model on the held-out pairs
//! (`test.json`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use dialeval_common::roc_auc;
use dialeval_datasets::amr::{AmrIndex, GraphPresence, GraphPresenceTable, read_blocks_lenient};
use dialeval_datasets::ddpp::{self, ExcludeList};
use dialeval_datasets::mix::MixConfig;
use dialeval_datasets::negatives::{NegativeFamily, PairVectors, RetrievedNegatives, drop_negatives, retrieve_negatives};
use dialeval_datasets::pairs::{DiplomacyPairConfig, PairKind, TrainingPair, diplomacy_pairs, split_by_group};
use dialeval_slm_model::bert::{PretrainedEncoder, default_encoder_dir};
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::{Mode, TextEncoderKind};
use dialeval_slm_model::scorer::{Graphs, Scorer};
use dialeval_slm_model::sentence_vectors::{PairSentenceVectors, SentenceVectors};
use dialeval_slm_model::separation::{accuracy, scores_against};
use dialeval_slm_model::train::{EpochLog, TrainingData, train};
use dialeval_slm_model::vectors::CachedSentenceVectors;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::models::mix::{graph_test_conversations, record_data_settings, training_mix};
use crate::models::training::{TrainingObserver, write_json};
use crate::models::{SlmPairing, ddpp_slm_pairs, default_cache_dir, encoder_cache, fill_pair_texts, split_contexts};

/// The training data of an [`SlmTraining`].
#[derive(Debug, Clone)]
pub enum SlmData {
    /// The training mix of [`dialeval_datasets::mix`] (DailyDialog++ dev + test, data_positives,
    /// Topical-Chat, DailyDialog as its config says), tested on the 100 annotated DailyDialog++
    /// test contexts.
    Mix {
        /// The mix.
        config: MixConfig,
        /// Hold out every second Topical-Chat conversation with silver AMR as a larger-graph
        /// test, reported with and without its graphs, per band of response-graph size.
        graph_test: bool,
    },
    /// DailyDialog++ dev (10% of contexts held out as dev), tested on DailyDialog++ test, with
    /// the silver AMR found for its utterances.
    Ddpp,
    /// Diplomacy messages with gold AMR, previous message → next message, split 70/15/15 by
    /// conversation.
    Diplomacy,
}

impl SlmData {
    fn name(&self) -> &'static str {
        match self {
            Self::Mix { .. } => "mix",
            Self::Ddpp => "ddpp",
            Self::Diplomacy => "diplomacy",
        }
    }
}

/// A training run of the SLM: what `train-slm`'s flags become.
#[derive(Debug, Clone)]
pub struct SlmTraining {
    /// The shared data folder (`../shared`).
    pub shared: PathBuf,
    /// Checkpoints, log, data settings and test results; a run restarted into it resumes.
    pub out: PathBuf,
    /// The training data.
    pub data: SlmData,
    /// The model and its training.
    pub config: TrainConfig,
    /// The sentence encoder of a pretrained or cross text side (default: all-mpnet-base-v2).
    pub encoder: Option<PathBuf>,
    /// Negatives retrieved for a share of the training positives.
    pub retrieved: RetrievedNegatives,
    /// Kinds of negative left out of training (dev and test keep theirs).
    pub drop_negatives: Vec<NegativeFamily>,
    /// Keep the first N training pairs and N/4 + 1 dev and test pairs (0: all).
    pub limit: usize,
}

/// Accuracy at 0.5 and ROC AUC of a model on held-out pairs: all negatives, and the positives
/// against each kind of negative present.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Separation {
    /// Pairs scored.
    pub pairs: usize,
    /// Accuracy at 0.5.
    pub accuracy: Option<f64>,
    /// ROC AUC against every negative.
    pub auc: Option<f64>,
    /// Accuracy on the positives and the random negatives.
    pub accuracy_random: Option<f64>,
    /// ROC AUC of the positives against the random negatives.
    pub auc_random: Option<f64>,
    /// Accuracy on the positives and the adversarial negatives.
    pub accuracy_adversarial: Option<f64>,
    /// ROC AUC of the positives against the adversarial negatives.
    pub auc_adversarial: Option<f64>,
}

impl Separation {
    /// The separation of `pairs` by `scores`.
    pub fn of(scores: &[f64], pairs: &[TrainingPair]) -> Self {
        let labels: Vec<u8> = pairs.iter().map(TrainingPair::label).collect();
        let (random, random_labels) = scores_against(pairs, scores, PairKind::RandomNegative);
        let (adversarial, adversarial_labels) = scores_against(pairs, scores, PairKind::AdversarialNegative);
        Self {
            pairs: pairs.len(),
            accuracy: accuracy(scores, &labels),
            auc: roc_auc(scores, &labels).ok(),
            accuracy_random: accuracy(&random, &random_labels),
            auc_random: roc_auc(&random, &random_labels).ok(),
            accuracy_adversarial: accuracy(&adversarial, &adversarial_labels),
            auc_adversarial: roc_auc(&adversarial, &adversarial_labels).ok(),
        }
    }
}

/// ROC AUC of a band of the held-out Topical-Chat pairs, with their graphs and without.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandSeparation {
    /// Pairs in the band.
    pub pairs: usize,
    /// Positives among them.
    pub positives: usize,
    /// ROC AUC with the graphs.
    pub auc: Option<f64>,
    /// ROC AUC with every graph withheld.
    pub auc_graphs_withheld: Option<f64>,
}

/// The test of the best model (`test.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlmTest {
    /// On the held-out test pairs.
    #[serde(flatten)]
    pub test: Separation,
    /// The same with every graph withheld (a model that reads graphs, on pairs with some).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graphs_withheld: Option<Separation>,
    /// The held-out Topical-Chat conversations (`SlmData::Mix { graph_test: true }`): every
    /// pair (`all`), and per tercile of the positives' response-graph sizes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topical_test: Option<BTreeMap<String, BandSeparation>>,
}

/// What an [`SlmTraining`] produced: the best model is `out/best`.
#[derive(Debug)]
pub struct SlmTrained {
    /// One entry per epoch run here (none when the run was finished already).
    pub logs: Vec<EpochLog>,
    /// The best model's test, also written to `out/test.json`.
    pub test: SlmTest,
}

impl SlmTraining {
    /// Checks the settings' combination before anything is read.
    ///
    /// # Errors
    /// [`Error::Config`] naming what does not fit together.
    pub fn check(&self) -> Result<()> {
        let text_encoder = self.config.text_encoder;
        let mix = match &self.data {
            SlmData::Mix { config, .. } => Some(config),
            _ => None,
        };
        if mix.is_none() && self.config.context_turns != 2 {
            return Err(Error::Config("context turns other than 2 apply to the mix (the other sets are cut to two turns)".into()));
        }
        if self.config.knowledge && (mix.is_none_or(|c| c.topical.is_none()) || text_encoder == TextEncoderKind::Scratch) {
            return Err(Error::Config("the knowledge channel needs the mix with Topical-Chat (its turns carry the knowledge) and a pretrained or cross text side".into()));
        }
        if matches!(&self.data, SlmData::Mix { graph_test: true, config } if config.topical.is_none()) {
            return Err(Error::Config("the graph test holds out Topical-Chat conversations of the mix: it needs Topical-Chat in the mix".into()));
        }
        if self.retrieved.embedding_share > 0.0 && text_encoder == TextEncoderKind::Scratch {
            return Err(Error::Config("embedding negatives need sentence vectors: a pretrained or cross text side".into()));
        }
        Ok(())
    }

    /// Builds the data, trains (resuming from `out`'s checkpoints) and tests the best model.
    ///
    /// # Errors
    /// As [`SlmTraining::check`]; unreadable data; a resumed run whose data settings differ; a
    /// training failure; results that cannot be written.
    pub fn run(&self, observe: &TrainingObserver<'_>) -> Result<SlmTrained> {
        self.check()?;
        let (shared, seed) = (&self.shared, self.config.seed);
        let mut data_settings = serde_json::json!({ "data": self.data.name(), "retrieved_negatives": self.retrieved, "dropped_negatives": self.drop_negatives });
        let mut graph_test: Vec<TrainingPair> = Vec::new();
        let (mut train_pairs, mut dev_pairs, mut test_pairs) = match &self.data {
            SlmData::Mix { config, graph_test: hold_out } => {
                let held_out = if *hold_out { graph_test_conversations(shared)? } else { Vec::new() };
                data_settings["mix"] = serde_json::to_value(config).map_err(|e| Error::json(self.out.join("data.json"), e))?;
                data_settings["graph_test"] = serde_json::json!(held_out);
                let mix = training_mix(shared, config, &held_out, &|line| (observe.say)(&format!("mix: {line}")))?;
                graph_test = mix.topical_test;
                (mix.train, mix.dev, mix.test)
            }
            SlmData::Ddpp => self.ddpp_pairs(observe)?,
            SlmData::Diplomacy => {
                let (blocks, malformed) = read_blocks_lenient(&shared.join("data/amr-diplomacy/dip-all-amr-smosher.txt"))?;
                for bad in &malformed {
                    (observe.say)(&format!("AMR block skipped: {bad}"));
                }
                let (pairs, _) = diplomacy_pairs(&blocks, &DiplomacyPairConfig { seed, ..DiplomacyPairConfig::default() })?;
                split_by_group(pairs, [0.7, 0.15, 0.15], seed, |p| p.id.rsplit_once('.').map_or(p.id.as_str(), |(conversation, _)| conversation))?
            }
        };
        if self.limit > 0 {
            train_pairs.truncate(self.limit);
            dev_pairs.truncate(self.limit / 4 + 1);
            test_pairs.truncate(self.limit / 4 + 1);
        }
        // A pretrained or cross text side reads the encoder's vectors of every context and
        // response, computed once into the shared token-state cache.
        let encoder = match self.config.text_encoder {
            TextEncoderKind::Scratch => None,
            TextEncoderKind::Pretrained | TextEncoderKind::Cross => {
                let encoder = PretrainedEncoder::load(&self.encoder.clone().unwrap_or_else(default_encoder_dir), &self.config.compute.device()?)?;
                let mut cache = encoder_cache(&encoder, &default_cache_dir())?;
                fill_pair_texts(&mut cache, &encoder, &self.config.vector_inputs().texts_of(&[&train_pairs, &dev_pairs, &test_pairs, &graph_test]), observe.encoding)?;
                Some((encoder, cache))
            }
        };
        let cached = encoder.as_ref().map(|(e, c)| CachedSentenceVectors::new(c, e.fingerprint()));
        let vectors = cached.as_ref().map(|v| v as &dyn SentenceVectors);
        if self.retrieved.any() {
            // The retrieved pairs reuse the mix's contexts and responses: their vectors are cached.
            let pair_vectors = cached.map(PairSentenceVectors);
            let extra = retrieve_negatives(&train_pairs, &self.retrieved, pair_vectors.as_ref().map(|v| v as &dyn PairVectors))?;
            let count = |kind| extra.iter().filter(|p| p.kind == kind).count();
            (observe.say)(&format!("retrieved {} lexical and {} embedding negatives for {} training pairs", count(PairKind::LexicalNegative), count(PairKind::EmbeddingNegative), train_pairs.len()));
            train_pairs.extend(extra);
        }
        if !self.drop_negatives.is_empty() {
            let dropped = drop_negatives(&mut train_pairs, &self.drop_negatives);
            (observe.say)(&format!("{dropped} training negatives of {:?} left out", self.drop_negatives));
        }
        record_data_settings(&self.out, &data_settings)?;
        self.say_what_is_read(&train_pairs, &dev_pairs, &test_pairs, observe);
        let logs = train(&TrainingData { train: &train_pairs, dev: &dev_pairs, vectors }, &self.config, &self.out, observe.epochs)?;
        let scorer = Scorer::load(&self.out, self.config.compute.device()?)?;
        let graphs_withheld = (self.config.mode != Mode::TextOnly && test_pairs.iter().any(|p| p.response_amr.is_some()))
            .then(|| scorer.score_with(&test_pairs, vectors, Graphs::Withhold).map(|s| Separation::of(&s, &test_pairs)))
            .transpose()?;
        let topical_test = (!graph_test.is_empty()).then(|| graph_bands(&scorer, &graph_test, vectors)).transpose()?;
        let test = SlmTest { test: Separation::of(&scorer.score(&test_pairs, vectors)?, &test_pairs), graphs_withheld, topical_test };
        write_json(&self.out.join("test.json"), &test)?;
        Ok(SlmTrained { logs, test })
    }

    /// DailyDialog++ dev (split by context) and test, with the silver AMR of `data/silver-amr`.
    #[allow(clippy::type_complexity)] // the three splits, named at the call
    fn ddpp_pairs(&self, observe: &TrainingObserver<'_>) -> Result<(Vec<TrainingPair>, Vec<TrainingPair>, Vec<TrainingPair>)> {
        let dir = self.shared.join("data/dailydialog-plusplus");
        let contexts = ddpp::load(&dir.join("dev.json"))?;
        let exclude = ExcludeList::load(&dir.join("overlap_exclude_ids.tsv"))?;
        let silver_dir = self.shared.join("data/silver-amr");
        let mut silver: Vec<PathBuf> =
            std::fs::read_dir(&silver_dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_string_lossy().ends_with(".silver.amr.txt")).collect()).unwrap_or_default();
        silver.sort();
        let index = AmrIndex::load(&silver)?;
        let pairing = SlmPairing { exclude: &exclude, index: &index, seed: self.config.seed };
        let dev = ddpp_slm_pairs(&contexts, "dev.json", &pairing)?;
        (observe.say)(&format!(
            "{} pairs from {} contexts ({} excluded), silver graphs for {} of {} turns and responses",
            dev.pairs.len(),
            contexts.len(),
            dev.excluded,
            dev.coverage.with_amr,
            dev.coverage.turns
        ));
        let (train_pairs, dev_pairs) = split_contexts(dev.pairs, self.config.seed)?;
        let test = ddpp_slm_pairs(&ddpp::load(&dir.join("test.json"))?, "test.json", &pairing)?;
        (observe.say)(&format!(
            "test: {} pairs of test.json ({} excluded), silver graphs for {} of {} turns and responses",
            test.pairs.len(),
            test.excluded,
            test.coverage.with_amr,
            test.coverage.turns
        ));
        Ok((train_pairs, dev_pairs, test.pairs))
    }

    /// Says which graphs the model reads: under the complete-graph rule (which its featuriser
    /// applies, in scoring too) a pair with some of its graphs reads none.
    fn say_what_is_read(&self, train_pairs: &[TrainingPair], dev_pairs: &[TrainingPair], test_pairs: &[TrainingPair], observe: &TrainingObserver<'_>) {
        let complete = self.config.complete_graphs;
        let read = |pairs: &[TrainingPair]| {
            let table = GraphPresenceTable::of(pairs);
            if complete { (table.partial(), table.complete_only()) } else { (0, table) }
        };
        let (partial, train_read) = read(train_pairs);
        let (dev_partial, dev_read) = read(dev_pairs);
        if complete {
            (observe.say)(&format!("{partial} training and {dev_partial} dev pairs with partial graphs read none"));
        }
        (observe.say)(&format!("graphs read per training pair: {train_read}; per dev pair: {dev_read}"));
        let with_graphs = train_pairs.len() - train_read.get(GraphPresence::None).iter().sum::<usize>();
        (observe.say)(&format!("{} training pairs ({with_graphs} read graphs), {} dev pairs, {} test pairs", train_pairs.len(), dev_pairs.len(), test_pairs.len()));
        if self.config.knowledge {
            let grounded = train_pairs.iter().filter(|p| p.knowledge.is_some()).count();
            (observe.say)(&format!("{grounded} of {} training pairs have knowledge", train_pairs.len()));
        }
    }
}

/// Concept nodes of a pair's response graph (`None`: no graph, or one that does not parse).
fn response_nodes(pair: &TrainingPair) -> Option<usize> {
    pair.response_amr.as_deref().and_then(|p| dialeval_amr_graph::AmrGraph::decode(p).ok()).map(|g| g.instances().count())
}

/// ROC AUC of the held-out Topical-Chat pairs with their graphs and with every graph withheld,
/// on all of them and per band of response-graph size (terciles of the positives' sizes; a
/// negative falls in the band of its own response graph).
fn graph_bands(scorer: &Scorer, pairs: &[TrainingPair], vectors: Option<&dyn SentenceVectors>) -> Result<BTreeMap<String, BandSeparation>> {
    let with = scorer.score(pairs, vectors)?;
    let without = scorer.score_with(pairs, vectors, Graphs::Withhold)?;
    let nodes: Vec<Option<usize>> = pairs.iter().map(response_nodes).collect();
    let mut sizes: Vec<usize> = nodes.iter().zip(pairs).filter(|(_, p)| p.label() == 1).filter_map(|(n, _)| *n).collect();
    sizes.sort_unstable();
    let (a, b) = (sizes.get(sizes.len() / 3).copied().unwrap_or(0), sizes.get(2 * sizes.len() / 3).copied().unwrap_or(0));
    // (name, node range; `None`: every pair, with a graph or not).
    let bands = [("all".to_owned(), None), (format!("<= {a} nodes"), Some(0..=a)), (format!("{}-{b} nodes", a + 1), Some(a + 1..=b)), (format!("> {b} nodes"), Some(b + 1..=usize::MAX))];
    let mut out = BTreeMap::new();
    for (name, range) in bands {
        let idx: Vec<usize> = (0..pairs.len()).filter(|&i| range.as_ref().is_none_or(|r| nodes[i].is_some_and(|n| r.contains(&n)))).collect();
        let labels: Vec<u8> = idx.iter().map(|&i| pairs[i].label()).collect();
        let pick = |s: &[f64]| idx.iter().map(|&i| s[i]).collect::<Vec<_>>();
        let band = BandSeparation {
            pairs: idx.len(),
            positives: labels.iter().filter(|&&l| l == 1).count(),
            auc: roc_auc(&pick(&with), &labels).ok(),
            auc_graphs_withheld: roc_auc(&pick(&without), &labels).ok(),
        };
        out.insert(name, band);
    }
    Ok(out)
}
