//! The learned scorers' inputs (feature `slm`): checkpoint identities, the shared token-state
//! cache of a pretrained encoder, SLM inputs from corpus items, and the retraining recipes of
//! the main job.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use burn::prelude::Device;
use dialeval_datasets::DialogueItem;
use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::ddpp::{self, ExcludeList};
use dialeval_datasets::pairs::{DdppPairConfig, PairKind, Split, TrainingPair, ddpp_context, ddpp_pairs, split_by_group, split_of};
use dialeval_slm_model::bert::PretrainedEncoder;
use dialeval_slm_model::model::Mode;
use dialeval_slm_model::ruber::{CachedSentenceVectors, EmbeddingCache, RuberConfig, Triple, train_unreferenced};
use dialeval_slm_model::train::{Scorer, TrainConfig, train};
use serde::Serialize;

use crate::digest::{FileDigest, sha256};
use crate::error::{Error, Result};

/// What identifies a checkpoint directory in a cache key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointIdentity {
    /// The directory.
    pub dir: PathBuf,
    /// The sha256 of its `SHA256SUMS` (a shipped checkpoint, verified), or of the sha256s of
    /// its top-level `*.json` files and everything in `best/`.
    pub sha256: String,
}

impl CheckpointIdentity {
    /// Verifies (a shipped checkpoint) or hashes the checkpoint in `dir`.
    ///
    /// # Errors
    /// A file that differs from its manifest, or an unreadable directory.
    pub fn of(dir: &Path) -> Result<Self> {
        if let Some(manifest) = dialeval_slm_model::bundle::verify(dir)? {
            return Ok(Self { dir: dir.to_owned(), sha256: manifest });
        }
        let mut files = Vec::new();
        for sub in [dir.to_owned(), dir.join("best")] {
            for entry in std::fs::read_dir(&sub).map_err(|e| Error::io(&sub, e))? {
                let path = entry.map_err(|e| Error::io(&sub, e))?.path();
                let in_best = sub != dir;
                if path.is_file() && (in_best || path.extension().is_some_and(|e| e == "json")) {
                    files.push(path);
                }
            }
        }
        files.sort();
        let mut all = String::new();
        for f in &files {
            let relative = f.strip_prefix(dir).unwrap_or(f);
            all.push_str(&format!("{}={}\n", relative.display(), FileDigest::of(f)?.sha256));
        }
        Ok(Self { dir: dir.to_owned(), sha256: sha256(all.as_bytes()) })
    }
}

/// The token-state cache of `encoder` in `dir`: `dir/<fingerprint>.bin`, keyed by the
/// encoder's files (two encoders never share one, whatever their folders are called).
///
/// # Errors
/// The cache cannot be created or read.
pub fn encoder_cache(encoder: &PretrainedEncoder, dir: &Path) -> Result<EmbeddingCache> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    Ok(EmbeddingCache::open(&cache_path(encoder, dir), encoder.hidden_size())?.with_encoder_id(encoder.fingerprint()))
}

/// `dir/<fingerprint>.bin`: the token-state cache file of `encoder`.
fn cache_path(encoder: &PretrainedEncoder, dir: &Path) -> PathBuf {
    dir.join(format!("{}.bin", encoder.fingerprint()))
}

/// The token-state cache of one encoder, shared by the families of a run and opened on first
/// use (a run whose learned families all come from the family cache never reads it).
#[derive(Debug)]
pub struct SharedCache {
    path: PathBuf,
    dim: usize,
    encoder_id: String,
    cache: Mutex<Option<EmbeddingCache>>,
}

impl SharedCache {
    /// The cache of `encoder` in `dir` (`dir/<fingerprint>.bin`), not opened yet.
    pub fn new(encoder: &PretrainedEncoder, dir: &Path) -> Self {
        Self { path: cache_path(encoder, dir), dim: encoder.hidden_size(), encoder_id: encoder.fingerprint().to_owned(), cache: Mutex::new(None) }
    }

    /// Runs `f` on the cache, opening it first if needed.
    ///
    /// # Errors
    /// The cache cannot be opened, or `f`'s error.
    pub fn with<R>(&self, f: impl FnOnce(&mut EmbeddingCache) -> Result<R>) -> Result<R> {
        let mut guard = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            }
            *guard = Some(EmbeddingCache::open(&self.path, self.dim)?.with_encoder_id(&self.encoder_id));
        }
        match guard.as_mut() {
            Some(cache) => f(cache),
            None => Err(Error::Config(format!("{}: cache not open", self.path.display()))),
        }
    }
}

/// `~/.cache/dialeval/embeddings`, where the examples keep token-state caches.
pub fn default_cache_dir() -> PathBuf {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".cache/dialeval/embeddings")
}

/// An item as an SLM input: its last `turns` context turns and its response, with their graphs
/// (the shipped SLM was trained on pairs with at most two context turns).
pub fn slm_pair(item: &DialogueItem, turns: usize) -> TrainingPair {
    let context = &item.context[item.context.len().saturating_sub(turns)..];
    TrainingPair {
        id: item.id.clone(),
        context: context.iter().map(|t| t.text.clone()).collect(),
        response: item.response.as_ref().map(|r| r.text.clone()).unwrap_or_default(),
        kind: PairKind::Positive,
        context_amr: context.iter().map(|t| t.amr.clone()).collect(),
        response_amr: item.response.as_ref().and_then(|r| r.amr.clone()),
    }
}

/// Encodes into `cache` every context ([`dialeval_slm_model::data::context_text`]) and response
/// of the pairs in `parts` not yet there: the texts whose vectors the SLM's pretrained head reads.
///
/// # Errors
/// Encoder or cache failures.
pub fn fill_pair_texts(cache: &mut EmbeddingCache, encoder: &PretrainedEncoder, parts: &[&[TrainingPair]], progress: &dyn Fn(usize, usize)) -> Result<()> {
    let pairs = || parts.iter().flat_map(|part| part.iter());
    let contexts: Vec<String> = pairs().map(dialeval_slm_model::data::context_text).collect();
    let texts: Vec<&str> = contexts.iter().map(String::as_str).chain(pairs().map(|p| p.response.as_str())).collect();
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
    let (encoder, cache) = encoder.ok_or_else(|| Error::Config("this SLM reads pretrained sentence vectors: fetch all-MiniLM-L6-v2 with scripts/fetch_minilm.sh".into()))?;
    cache.with(|cache| {
        fill_pair_texts(cache, encoder, &[pairs], progress)?;
        Ok(scorer.score(pairs, Some(&CachedSentenceVectors::new(cache, encoder.fingerprint())))?)
    })
}

/// Where a learned family's model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// A directory the user named.
    Given(PathBuf),
    /// The checkpoint shipped in the repository's `models/`, verified by its `SHA256SUMS`.
    Bundled(PathBuf),
    /// Trained here by a [`RetrainData`] recipe into this directory (one per seed).
    Retrain(PathBuf),
}

impl ModelSource {
    /// `given` when set; else the shipped `models/<name>` unless `retrain` or it is missing;
    /// else `out/models/<name>-seed<seed>`.
    pub fn resolve(given: Option<&Path>, models: &Path, name: &str, retrain: bool, out: &Path, seed: u64) -> Self {
        if let Some(dir) = given {
            return Self::Given(dir.to_owned());
        }
        let bundled = models.join(name);
        if !retrain && bundled.join(dialeval_slm_model::bundle::MANIFEST).is_file() {
            return Self::Bundled(bundled);
        }
        Self::Retrain(out.join(format!("models/{name}-seed{seed}")))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        match self {
            Self::Given(d) | Self::Bundled(d) | Self::Retrain(d) => d,
        }
    }
}

impl std::fmt::Display for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Given(d) => write!(f, "model {}", d.display()),
            Self::Bundled(d) => write!(f, "shipped checkpoint {} (SHA256SUMS verified on load)", d.display()),
            Self::Retrain(d) => write!(f, "trained here into {}", d.display()),
        }
    }
}

/// Where the main job's fallback training data lives: the bundled DailyDialog++ dev split and
/// the silver AMR of 200 of its contexts (`data/` of the repository).
#[derive(Debug, Clone)]
pub struct RetrainData {
    /// The repository's `data/` folder.
    pub data: PathBuf,
    /// Seed of splits, sampling and initialisation.
    pub seed: u64,
}

impl RetrainData {
    fn ddpp_dev(&self) -> Result<(Vec<ddpp::DdppContext>, ExcludeList)> {
        let dir = self.data.join("dailydialog-plusplus");
        Ok((ddpp::load(&dir.join("dev.json"))?, ExcludeList::load(&dir.join("overlap_exclude_ids.tsv"))?))
    }

    /// Trains the gated SLM on the 200 bundled DailyDialog++ dev contexts with silver AMR
    /// (positives against random and adversarial negatives; 10% of contexts held out) into
    /// `dir`, resuming from its checkpoints, and marks it done.
    ///
    /// # Errors
    /// Unreadable data or a training failure.
    pub fn train_slm(&self, dir: &Path, progress: &dyn Fn(usize, usize, usize)) -> Result<()> {
        let (contexts, exclude) = self.ddpp_dev()?;
        let ids_path = self.data.join("silver-amr/dailydialog-plusplus-dev200.context-ids.json");
        let ids_text = std::fs::read_to_string(&ids_path).map_err(|e| Error::io(&ids_path, e))?;
        let ids: Vec<u64> = serde_json::from_str(&ids_text).map_err(|e| Error::json(&ids_path, e))?;
        let chosen: Vec<ddpp::DdppContext> = contexts.into_iter().filter(|c| ids.contains(&c.id)).collect();
        let index = AmrIndex::load(&[self.data.join("silver-amr/dailydialog-plusplus-dev200.silver.amr.txt")])?;
        let (mut pairs, _) = ddpp_pairs(&chosen, "dev.json", Some(&exclude), &DdppPairConfig { max_context_turns: Some(2), seed: self.seed, ..DdppPairConfig::default() })?;
        index.attach_pairs(&mut pairs);
        let (train_p, dev_p, _) = split_by_group(pairs, [0.9, 0.1, 0.0], self.seed, ddpp_context)?;
        let config = TrainConfig { mode: Mode::Gated, epochs: 3, seed: self.seed, ..TrainConfig::default() };
        train(&train_p, &dev_p, &config, dir, None, progress)?;
        std::fs::write(dir.join("done"), "").map_err(|e| Error::io(dir.join("done"), e))
    }

    /// Trains BERT-RUBER's unreferenced model (max pooling, cross-entropy) on the bundled
    /// DailyDialog++ dev positives against their random negatives (10% of contexts held out)
    /// into `dir`, and marks it done.
    ///
    /// # Errors
    /// Unreadable data, encoder or training failures.
    pub fn train_ruber(&self, encoder: &PretrainedEncoder, cache: &mut EmbeddingCache, dir: &Path, progress: &dyn Fn(usize, usize, usize)) -> Result<()> {
        let (contexts, exclude) = self.ddpp_dev()?;
        let config = RuberConfig { epochs: 20, patience: 5, seed: self.seed, ..RuberConfig::default() };
        let (mut train_t, mut dev_t) = (Vec::new(), Vec::new());
        for c in contexts.iter().filter(|c| !exclude.contains("dev.json", c.id)) {
            let triples = c.positives.iter().zip(&c.random_negatives).map(|(p, n)| Triple { query: config.query(&c.context), positive: p.clone(), negative: n.clone() });
            if split_of(&c.id.to_string(), [0.9, 0.1, 0.0], self.seed)? == Split::Train {
                train_t.extend(triples);
            } else {
                dev_t.extend(triples);
            }
        }
        let texts: Vec<&str> = train_t.iter().chain(&dev_t).flat_map(|t| [t.query.as_str(), t.positive.as_str(), t.negative.as_str()]).collect();
        cache.fill(encoder, &texts, &|_, _| {})?;
        train_unreferenced(&train_t, &dev_t, cache, encoder.vocab_size(), &config, dir, progress)?;
        std::fs::write(dir.join("done"), "").map_err(|e| Error::io(dir.join("done"), e))
    }
}

/// The CPU device the examples score on (`flex`).
pub fn cpu() -> Device {
    Device::flex()
}
