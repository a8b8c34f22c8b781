//! Training with Adam, gradient clipping, learning-rate decay on plateau and early stopping on
//! the dev ROC AUC; a checkpoint every epoch (model, optimiser, tokenizer and vocabularies,
//! configs, loop state; [`crate::runs`]) from which [`train`] resumes, and a JSONL log. The
//! settings are [`crate::config::TrainConfig`]; the trained model scores through
//! [`crate::scorer::Scorer`].
//!
//! Reproducibility: the shuffle of epoch `e` and the device seed are derived from `seed + e`, so
//! a run resumed from the checkpoint of epoch `e − 1` takes the same steps as an uninterrupted
//! one.

use std::path::Path;
use std::time::Instant;

use burn::grad_clipping::GradientClippingConfig;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use dialeval_common::{SplitMix64, roc_auc};
use dialeval_datasets::pairs::TrainingPair;
use serde::{Deserialize, Serialize};

use crate::compute::materialized;
use crate::config::{TrainConfig, model_config};
use crate::data::{Example, Featurizer, Withheld};
use crate::error::{Error, Result};
use crate::model::{Mode, Slm, TextEncoderKind};
use crate::runs::{Checkpoint, DrawAt, LoopState, append_log, begin_epoch, knowledge_withheld, read_json, save_best, shuffle, withheld, write_json};
use crate::scorer::{Graphs, Predictor, featurize};
use crate::sentence_vectors::SentenceVectors;
use crate::separation::{accuracy, check_dev_labels};

/// One line of `log.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochLog {
    /// 1-based epoch.
    pub epoch: usize,
    /// Mean training loss.
    pub train_loss: f64,
    /// Dev accuracy at threshold 0.5.
    pub dev_accuracy: f64,
    /// Dev ROC AUC.
    pub dev_auc: f64,
    /// Learning rate used.
    pub lr: f64,
    /// Wall time of the epoch.
    pub seconds: f64,
    /// The turn channel's weights of the two zero-shot cosines in the positive logit after the
    /// epoch (absent without the channel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cosine_weights: Option<[f32; 2]>,
}

/// The batches of an epoch: the shuffled `order` split into pairs with and without AMR, each
/// cut into batches, and the batches shuffled together (seeded by `seed` and `epoch`). A batch
/// is padded to its largest graph, so one graph among text-only pairs made the whole batch pay
/// for it; kept apart, the text-only batches cost almost nothing in the graph encoder.
fn batches_by_graph(order: &[usize], examples: &[Example], batch_size: usize, seed: u64, epoch: usize) -> Vec<Vec<usize>> {
    let (with, without): (Vec<usize>, Vec<usize>) = order.iter().partition(|&&i| examples[i].has_graph);
    let mut batches: Vec<Vec<usize>> = with.chunks(batch_size).chain(without.chunks(batch_size)).map(<[usize]>::to_vec).collect();
    shuffle(&mut batches, &mut SplitMix64(seed ^ 0xBA7C_4E55 ^ (epoch as u64).wrapping_mul(0x9E37_79B9)));
    batches
}

/// Examples per forward pass when training measures its dev set.
const DEV_BATCH: usize = 64;

/// What [`train`] learns from: training and dev pairs and, for the pretrained text sides,
/// the sentence vectors of their texts.
#[derive(Clone, Copy)]
pub struct TrainingData<'a> {
    /// The training pairs.
    pub train: &'a [TrainingPair],
    /// The dev pairs (early stopping, the best model).
    pub dev: &'a [TrainingPair],
    /// The sentence vectors (`None` for the scratch text encoder).
    pub vectors: Option<&'a dyn SentenceVectors>,
}

impl std::fmt::Debug for TrainingData<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrainingData").field("train", &self.train.len()).field("dev", &self.dev.len()).field("vectors", &self.vectors.is_some()).finish()
    }
}

/// Trains (or resumes training) into `dir` on `data`, calling `progress(epoch, step, steps)`.
/// The best model by dev AUC is kept in `dir/best`; with [`TrainConfig::keep_epochs`], every
/// epoch's in `dir/epochs/<epoch>`. With [`TextEncoderKind::Pretrained`], `data.vectors` must
/// hold the sentence vector of every context ([`crate::texts::context_text`]) and response, with
/// [`TrainConfig::knowledge`] of every pair's knowledge, and with [`TrainConfig::turns`] of its
/// last two turns: every text of [`crate::texts::VectorInputs::texts`] of
/// [`TrainConfig::vector_inputs`].
///
/// # Errors
/// Empty data, invalid settings, missing or mismatched sentence vectors, or files that cannot
/// be written or read back.
pub fn train(data: &TrainingData, config: &TrainConfig, dir: &Path, progress: &dyn Fn(usize, usize, usize)) -> Result<Vec<EpochLog>> {
    let TrainingData { train: train_pairs, dev: dev_pairs, vectors } = *data;
    if train_pairs.is_empty() || dev_pairs.is_empty() || config.batch_size == 0 || !config.d_model.is_multiple_of(4) {
        return Err(Error::Config("need training and dev pairs, batch_size > 0 and d_model divisible by 4".into()));
    }
    if !(0.0..1.0).contains(&config.graph_dropout) {
        return Err(Error::Config(format!("graph_dropout must be in [0, 1), got {}", config.graph_dropout)));
    }
    if !(config.graph_term_penalty >= 0.0 && config.graph_term_penalty.is_finite()) || (config.graph_term_penalty > 0.0 && config.mode != Mode::Residual) {
        return Err(Error::Config(format!("graph_term_penalty must be finite, at least 0, and above 0 only with mode residual; got {} with {:?}", config.graph_term_penalty, config.mode)));
    }
    if !(0.0..1.0).contains(&config.knowledge_dropout) {
        return Err(Error::Config(format!("knowledge_dropout must be in [0, 1), got {}", config.knowledge_dropout)));
    }
    if config.knowledge && config.text_encoder == TextEncoderKind::Scratch {
        return Err(Error::Config("the knowledge channel reads the pretrained encoder's vectors (text_encoder: pretrained or cross)".into()));
    }
    if config.turns && config.text_encoder == TextEncoderKind::Scratch {
        return Err(Error::Config("the turn channel reads the pretrained encoder's vectors (text_encoder: pretrained or cross)".into()));
    }
    let checkpoint = Checkpoint::open(dir)?;
    let resume = checkpoint.exists();
    let featurizer: Featurizer = if resume {
        let saved: TrainConfig = read_json(&dir.join("train.json"))?;
        if saved != (TrainConfig { epochs: saved.epochs, compute: saved.compute, keep_epochs: saved.keep_epochs, ..config.clone() }) {
            return Err(Error::Config(format!(
                "{} holds a run with other settings (only --epochs and --keep-epochs may change); resume it with the same settings or train into a new directory",
                dir.display()
            )));
        }
        read_json(&dir.join("featurizer.json"))?
    } else {
        let mut f = Featurizer::fit(train_pairs, config.max_len, config.max_nodes, config.max_path)?;
        if config.text_encoder != TextEncoderKind::Scratch {
            let Some(v) = vectors else { return Err(Error::Config("the pretrained text encoder needs sentence vectors".into())) };
            f = if config.text_encoder == TextEncoderKind::Cross { f.with_cross(v, crate::data::CrossSpans::default()) } else { f.with_pretrained(v) };
            if config.knowledge {
                f = f.with_knowledge()?.with_knowledge_unit(config.knowledge_unit);
            }
            if config.turns {
                f = f.with_turns()?;
            }
        }
        if config.complete_graphs {
            f = f.with_complete_graphs();
        }
        write_json(&dir.join("featurizer.json"), &f)?;
        write_json(&dir.join("train.json"), config)?;
        f
    };
    featurizer.check_vectors(vectors)?;
    let device = config.compute.device()?.autodiff();
    let plain = device.clone().without_autodiff();
    // Drawn on the CPU under the seed, then moved to the device: the same initial weights on
    // every device (each backend has its own random stream, and burn draws a parameter lazily,
    // on the device it lives on at first use, so it is materialised before the move).
    let init_device = Device::flex().autodiff();
    init_device.seed(config.seed);
    device.seed(config.seed);
    let model_config = model_config(&featurizer, config);
    let mut model = materialized(model_config.init(&init_device)).fork(&device);
    let mut optim = AdamConfig::new().with_weight_decay(Some(WeightDecayConfig::new(1e-5))).with_grad_clipping(Some(GradientClippingConfig::Norm(config.clip_norm))).init();
    let mut state = LoopState::new(config.lr);
    if resume {
        (model, optim, state) = checkpoint.load(model, optim)?;
    }
    let train_examples = featurize(&featurizer, train_pairs, vectors)?;
    let dev_examples = featurize(&featurizer, dev_pairs, vectors)?;
    let dev_labels: Vec<u8> = dev_examples.iter().map(|e| e.label).collect();
    check_dev_labels(&dev_labels)?;
    let mut logs = Vec::new();
    let log_path = dir.join("log.jsonl");
    while let Some(epoch) = state.next_epoch(config.epochs, config.patience) {
        let started = Instant::now();
        let order = begin_epoch(&device, train_examples.len(), config.seed, epoch);
        let batches = batches_by_graph(&order, &train_examples, config.batch_size, config.seed, epoch);
        let steps = batches.len();
        let mut total = 0.0;
        for (step, chunk) in batches.iter().enumerate() {
            let refs: Vec<&Example> = chunk.iter().map(|&i| &train_examples[i]).collect();
            let at = DrawAt { seed: config.seed, epoch, step };
            let graphs_out = withheld(refs.len(), config.graph_dropout, at);
            let knowledge_out = knowledge_withheld(refs.len(), config.knowledge_dropout, at);
            let batch = featurizer.collate_withholding(&refs, Withheld { graphs: &graphs_out, knowledge: &knowledge_out }, vectors, &device)?;
            let (loss, _) = model.loss(&batch, config.mode);
            total += f64::from(loss.clone().into_scalar::<f32>());
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(state.lr, model, grads);
            progress(epoch, step + 1, steps);
        }
        let valid = model.valid();
        let scores = Predictor { model: &valid, featurizer: &featurizer, mode: config.mode, device: &plain, batch: DEV_BATCH }.predict(&dev_examples, vectors, Graphs::Use)?;
        let auc = roc_auc(&scores, &dev_labels).map_err(Error::DevSet)?;
        let log = EpochLog {
            epoch,
            train_loss: total / steps as f64,
            dev_accuracy: accuracy(&scores, &dev_labels).unwrap_or(0.0),
            dev_auc: auc,
            lr: state.lr,
            seconds: started.elapsed().as_secs_f64(),
            cosine_weights: valid.cosine_weights(),
        };
        if config.keep_epochs {
            keep_epoch(dir, valid.clone(), config.mode, &log)?;
        }
        if state.finish_epoch(epoch, auc, config.lr_decay) {
            save_best(dir, valid)?;
            write_json(&dir.join("best/mode.json"), &config.mode)?;
        }
        checkpoint.save(&model, &optim, &state)?;
        append_log(&log_path, &log)?;
        logs.push(log);
    }
    Ok(logs)
}

/// Writes `dir/epochs/<epoch>` ([`TrainConfig::keep_epochs`]): a run directory of its own, with
/// the run's `train.json` and `featurizer.json`, the epoch's model as `best/` and its log line as
/// `epoch.json`. It is written beside its place and renamed into it, so an interrupted run leaves
/// the whole directory or none; a resumed run that repeats the epoch replaces it.
fn keep_epoch(dir: &Path, model: Slm, mode: Mode, log: &EpochLog) -> Result<()> {
    let epochs = dir.join("epochs");
    let partial = epochs.join(format!(".{}.partial", log.epoch));
    let kept = epochs.join(log.epoch.to_string());
    for stale in [&partial, &kept] {
        if stale.exists() {
            std::fs::remove_dir_all(stale).map_err(|e| Error::io(stale, e))?;
        }
    }
    std::fs::create_dir_all(&partial).map_err(|e| Error::io(&partial, e))?;
    for name in ["train.json", "featurizer.json"] {
        let from = dir.join(name);
        std::fs::copy(&from, partial.join(name)).map_err(|e| Error::io(&from, e))?;
    }
    save_best(&partial, model)?;
    write_json(&partial.join("best/mode.json"), &mode)?;
    write_json(&partial.join("epoch.json"), log)?;
    std::fs::rename(&partial, &kept).map_err(|e| Error::io(&kept, e))
}
