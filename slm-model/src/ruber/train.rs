//! Training BERT-RUBER's unreferenced model on triples: Adam, decay on plateau, early stopping
//! on dev ROC AUC, a checkpoint every epoch from which a run resumes exactly.

use std::path::Path;
use std::time::Instant;

use burn::grad_clipping::GradientClippingConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use dialeval_common::roc_auc;
use serde::{Deserialize, Serialize};

use super::collate::Collator;
use super::config::{RuberConfig, RuberMeta, Triple};
use super::model::TripleBatch;
use super::score::score_pairs;
use crate::error::{Error, Result};
use crate::runs::{LoopState, append_log, begin_epoch, open_run, save_best};
use crate::separation::accuracy;
use crate::vectors::EmbeddingCache;

/// One epoch of [`train_unreferenced`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuberEpoch {
    /// 1-based epoch.
    pub epoch: usize,
    /// Mean training loss.
    pub train_loss: f64,
    /// Dev ROC AUC (positives vs negatives).
    pub dev_auc: f64,
    /// Dev accuracy at 0.5.
    pub dev_accuracy: f64,
    /// Learning rate used.
    pub lr: f64,
    /// Wall time.
    pub seconds: f64,
}

/// What [`train_unreferenced`] learns from: (query, positive, negative) triples whose texts
/// are all in `cache`, and the encoder's vocabulary size (for the static table).
#[derive(Debug, Clone, Copy)]
pub struct RuberData<'a> {
    /// The training triples.
    pub train: &'a [Triple],
    /// The dev triples (early stopping, the best model).
    pub dev: &'a [Triple],
    /// The token states of every text of both.
    pub cache: &'a EmbeddingCache,
    /// The encoder's vocabulary size.
    pub vocab: usize,
}

/// Trains (or resumes) the unreferenced model into `dir` on `data`. The best model by dev AUC
/// is kept in `dir/best`; `progress(epoch, step, steps)` is called after each step.
///
/// # Errors
/// Empty data, texts missing from the cache, or files that cannot be written or read.
pub fn train_unreferenced(data: &RuberData, config: &RuberConfig, dir: &Path, progress: &dyn Fn(usize, usize, usize)) -> Result<Vec<RuberEpoch>> {
    let RuberData { train, dev, cache, vocab } = *data;
    if train.is_empty() || dev.is_empty() || config.batch_size == 0 {
        return Err(Error::Config("need training and dev triples and batch_size > 0".into()));
    }
    if !(0.0..1.0).contains(&config.knowledge_dropout) {
        return Err(Error::Config(format!("knowledge_dropout must be in [0, 1), got {}", config.knowledge_dropout)));
    }
    let meta = RuberMeta { config: config.clone(), encoder_dim: cache.dim(), vocab, encoder_id: cache.encoder_id().map(str::to_owned) };
    let (checkpoint, resume) = open_run(dir, &meta)?;
    let device = config.compute.device()?.autodiff();
    let plain = device.clone().without_autodiff();
    // Drawn on the CPU under the seed and materialised before the move, as the SLM is: the same
    // initial weights on every device (burn draws a parameter lazily, on the device it lives on
    // at first use, and each backend has its own random stream).
    let init_device = Device::flex().autodiff();
    init_device.seed(config.seed);
    device.seed(config.seed);
    let mut model = crate::compute::materialized(config.init(cache.dim(), vocab, &init_device)).fork(&device);
    let mut optim = AdamConfig::new().with_grad_clipping(Some(GradientClippingConfig::Norm(5.0))).init();
    let mut state = LoopState::new(config.lr);
    if resume {
        (model, optim, state) = checkpoint.load(model, optim)?;
    }
    let dev_pairs: Vec<(&str, &str)> = dev.iter().flat_map(|t| [(t.query.as_str(), t.positive.as_str()), (t.query.as_str(), t.negative.as_str())]).collect();
    let dev_knowledge: Vec<Option<&str>> = dev.iter().flat_map(|t| [t.knowledge.as_deref(); 2]).collect();
    let dev_labels: Vec<u8> = dev.iter().flat_map(|_| [1, 0]).collect();
    let (collator, dev_collator) = (Collator::new(cache, config, &device), Collator::new(cache, config, &plain));
    let mut logs = Vec::new();
    let log_path = dir.join("log.jsonl");
    while let Some(epoch) = state.next_epoch(config.epochs, config.patience) {
        let started = Instant::now();
        let order = begin_epoch(&device, train.len(), config.seed, epoch);
        let steps = order.len().div_ceil(config.batch_size);
        let mut total = 0.0;
        for (step, chunk) in order.chunks(config.batch_size).enumerate() {
            let pick = |f: fn(&Triple) -> &str| chunk.iter().map(|&i| f(&train[i])).collect::<Vec<&str>>();
            let batch = TripleBatch {
                query: collator.queries(&pick(|t| &t.query))?,
                positive: collator.responses(&pick(|t| &t.positive))?,
                negative: collator.responses(&pick(|t| &t.negative))?,
                knowledge: if config.knowledge {
                    let withheld = crate::runs::withheld(chunk.len(), config.knowledge_dropout, crate::runs::DrawAt { seed: config.seed, epoch, step });
                    let texts: Vec<Option<&str>> = chunk.iter().enumerate().map(|(j, &i)| train[i].knowledge.as_deref().filter(|_| !withheld.get(j).copied().unwrap_or(false))).collect();
                    Some(collator.knowledge(&texts)?)
                } else {
                    None
                },
            };
            let loss = model.loss(&batch, config.margin);
            total += f64::from(loss.clone().into_scalar::<f32>());
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(state.lr, model, grads);
            progress(epoch, step + 1, steps);
        }
        let valid = model.valid();
        let scores = score_pairs(&valid, &dev_collator, &dev_pairs, &dev_knowledge)?;
        let auc = roc_auc(&scores, &dev_labels).map_err(Error::DevSet)?;
        let log =
            RuberEpoch { epoch, train_loss: total / steps as f64, dev_auc: auc, dev_accuracy: accuracy(&scores, &dev_labels).unwrap_or(0.0), lr: state.lr, seconds: started.elapsed().as_secs_f64() };
        if state.finish_epoch(epoch, auc, config.lr_decay) {
            save_best(dir, valid)?;
        }
        checkpoint.save(&model, &optim, &state)?;
        append_log(&log_path, &log)?;
        logs.push(log);
    }
    Ok(logs)
}
