//! A resumable training run's files and seeded draws, shared by the SLM ([`crate::train`]),
//! BERT-RUBER ([`crate::ruber`]) and fine-tuning ([`crate::finetune`]): the checkpoint of every
//! epoch (model, optimiser, loop state, settings), the best model, the JSONL log, and the
//! shuffles and withheld inputs drawn from the seed and the step, so a resumed run takes the
//! same steps as an uninterrupted one.

use std::io::Write;
use std::path::{Path, PathBuf};

use burn::optim::ModuleOptimizer;
use burn::prelude::*;
use burn::store::ModuleRecord;
use dialeval_common::SplitMix64;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LoopState {
    pub(crate) epoch: usize,
    pub(crate) lr: f64,
    pub(crate) best_auc: f64,
    pub(crate) bad_epochs: usize,
}

impl LoopState {
    /// The state before the first epoch.
    pub(crate) fn new(lr: f64) -> Self {
        Self { epoch: 0, lr, best_auc: f64::NEG_INFINITY, bad_epochs: 0 }
    }

    /// The next epoch to run, unless `epochs` are done or the patience is spent.
    pub(crate) fn next_epoch(&self, epochs: usize, patience: usize) -> Option<usize> {
        (self.epoch < epochs && self.bad_epochs < patience).then_some(self.epoch + 1)
    }

    /// Records the dev AUC of `epoch`: a better one resets the patience count (and the caller
    /// saves the best model); otherwise the count grows and the rate decays by `lr_decay`.
    /// Returns whether the epoch was the best so far.
    pub(crate) fn finish_epoch(&mut self, epoch: usize, auc: f64, lr_decay: f64) -> bool {
        self.epoch = epoch;
        if auc > self.best_auc {
            self.best_auc = auc;
            self.bad_epochs = 0;
            true
        } else {
            self.bad_epochs += 1;
            self.lr *= lr_decay;
            false
        }
    }
}

/// The per-epoch checkpoint of a training run, in `<run>/checkpoint`: `model-<epoch>` and
/// `optim-<epoch>` (burn records), then `state.json` naming that epoch, written last and
/// atomically, so a run killed at any moment resumes from its last complete epoch.
pub(crate) struct Checkpoint {
    dir: PathBuf,
}

impl Checkpoint {
    /// The checkpoint directory of the run in `run_dir` (created).
    pub(crate) fn open(run_dir: &Path) -> Result<Self> {
        let dir = run_dir.join("checkpoint");
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Self { dir })
    }

    /// Whether an epoch has been saved.
    pub(crate) fn exists(&self) -> bool {
        self.dir.join("state.json").is_file()
    }

    /// The record of `name` at `epoch` (runs written before epoch-numbered files: `name`).
    fn record_path(&self, name: &str, epoch: usize) -> PathBuf {
        let numbered = self.dir.join(format!("{name}-{epoch}"));
        if numbered.with_extension("bpk").is_file() { numbered } else { self.dir.join(name) }
    }

    /// Loads the last saved epoch into `model` and `optim`.
    pub(crate) fn load<M: Module>(&self, model: M, optim: ModuleOptimizer) -> Result<(M, ModuleOptimizer, LoopState)> {
        let state: LoopState = read_json(&self.dir.join("state.json"))?;
        let path = self.record_path("model", state.epoch);
        let model = load_module(model, &path)?;
        let path = self.record_path("optim", state.epoch);
        let optim = optim.load(&path).map_err(|e| record_error(&path, e))?;
        Ok((model, optim, state))
    }

    /// Saves the epoch `state.epoch`, then removes the records of earlier epochs.
    pub(crate) fn save<M: Module>(&self, model: &M, optim: &ModuleOptimizer, state: &LoopState) -> Result<()> {
        let path = self.dir.join(format!("model-{}", state.epoch));
        model.clone().into_record().save(&path).map_err(|e| record_error(&path, e))?;
        let path = self.dir.join(format!("optim-{}", state.epoch));
        optim.save(&path).map_err(|e| record_error(&path, e))?;
        write_json(&self.dir.join("state.json"), state)?;
        let current = [format!("model-{}.bpk", state.epoch), format!("optim-{}.bpk", state.epoch)];
        let entries = std::fs::read_dir(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".bpk") && !current.contains(&name) {
                std::fs::remove_file(entry.path()).map_err(|e| Error::io(&entry.path(), e))?;
            }
        }
        Ok(())
    }
}

/// The settings a training run records beside its checkpoint, which a resumed run must match.
pub(crate) trait RunMeta: PartialEq + Serialize + for<'de> Deserialize<'de> {
    /// The file in the run's folder.
    const FILE: &'static str;
    /// What differs when they do not match, for the error.
    const DIFFERS: &'static str;
    /// The settings with what a resumed run may change (more epochs, another device) blanked.
    fn comparable(&self) -> Self;
}

/// Opens the checkpoint of the run in `dir` and records the run's settings `meta`. A run that
/// resumes (a checkpoint exists) must have been started with the same settings, but for what
/// [`RunMeta::comparable`] blanks; otherwise [`Error::Config`]. Returns the checkpoint and
/// whether the run resumes.
pub(crate) fn open_run<M: RunMeta>(dir: &Path, meta: &M) -> Result<(Checkpoint, bool)> {
    let checkpoint = Checkpoint::open(dir)?;
    let resume = checkpoint.exists();
    if resume {
        let saved: M = read_json(&dir.join(M::FILE))?;
        if saved.comparable() != meta.comparable() {
            return Err(Error::Config(format!("{}: the checkpoint was trained with {}; use a fresh directory", dir.display(), M::DIFFERS)));
        }
    }
    write_json(&dir.join(M::FILE), meta)?;
    Ok((checkpoint, resume))
}

/// Saves `model` as the best one so far, `<run>/best/model`.
pub(crate) fn save_best<M: Module>(run_dir: &Path, model: M) -> Result<()> {
    let best = run_dir.join("best");
    std::fs::create_dir_all(&best).map_err(|e| Error::io(&best, e))?;
    let path = best.join("model");
    model.into_record().save(&path).map_err(|e| record_error(&path, e))
}

/// Seeds `device` for `epoch` and returns that epoch's order of the `n` training items (both
/// derived from `seed` and the epoch, so a resumed run repeats them).
pub(crate) fn begin_epoch(device: &Device, n: usize, seed: u64, epoch: usize) -> Vec<usize> {
    device.seed(seed.wrapping_add(epoch as u64));
    epoch_order(n, seed, epoch)
}

/// The order of `n` training items in `epoch`: a shuffle derived from `seed` and the epoch, so a
/// resumed run repeats it.
pub(crate) fn epoch_order(n: usize, seed: u64, epoch: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    shuffle(&mut order, &mut SplitMix64(seed ^ (epoch as u64).wrapping_mul(0x9E37_79B9)));
    order
}

/// Fisher–Yates shuffle of `items` with `rng` (the same permutation for the same seed on every
/// platform).
pub(crate) fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

/// Appends one JSON line to the log at `path`.
pub(crate) fn append_log(path: &Path, line: &impl Serialize) -> Result<()> {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::io(path, e))?;
    let text = serde_json::to_string(line).map_err(|e| Error::Format(format!("{}: {e}", path.display())))?;
    writeln!(file, "{text}").map_err(|e| Error::io(path, e))
}

/// Where a seeded draw of a training run happens: a resumed run makes the same draws.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DrawAt {
    pub(crate) seed: u64,
    pub(crate) epoch: usize,
    pub(crate) step: usize,
}

/// Which examples of a step have their graphs withheld: a seeded draw per example from
/// `at`, so a resumed run withholds the same ones.
pub(crate) fn withheld(n: usize, p: f64, at: DrawAt) -> Vec<bool> {
    withheld_salted(n, p, 0x5EED_6A7F, at)
}

/// As [`withheld`], for the knowledge (its own stream, so graphs and knowledge are withheld
/// independently).
pub(crate) fn knowledge_withheld(n: usize, p: f64, at: DrawAt) -> Vec<bool> {
    withheld_salted(n, p, 0x0C0F_FEE5_4B1D, at)
}

fn withheld_salted(n: usize, p: f64, salt: u64, at: DrawAt) -> Vec<bool> {
    if p <= 0.0 {
        return Vec::new();
    }
    let mut rng = SplitMix64((at.seed ^ salt) ^ ((at.epoch as u64) << 32) ^ at.step as u64);
    (0..n).map(|_| rng.unit() < p).collect()
}

pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let text = serde_json::to_string_pretty(value).map_err(|e| Error::Format(format!("{}: {e}", path.display())))?;
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

pub(crate) fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Format(format!("{}: {e}", path.display())))
}

pub(crate) fn record_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Format(format!("{}: {e}", path.display()))
}

/// `module` with the parameters saved at `path` (a burnpack record).
///
/// # Errors
/// An unreadable record ([`Error::Format`]); [`Error::RecordMismatch`] when its tensors do not
/// fit `module` (missing, unexpected or differently shaped), which burn's `load_record` would
/// panic on.
pub(crate) fn load_module<M: Module>(module: M, path: &Path) -> Result<M> {
    let record = ModuleRecord::load(path).map_err(|e| record_error(path, e))?;
    module.try_load_record(record).map_err(|e| Error::RecordMismatch { path: path.to_owned(), detail: e.to_string() })
}
