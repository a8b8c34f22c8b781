//! The learned side of a run in one place: the sentence encoder, its memo and its token-state
//! cache loaded once, when a family first needs them, and the families that read them built from it,
//! each either ready or skipped with its reason ([`Built`]), the checkpoints chosen by
//! [`ModelSource::resolve`] under the run's [`Retrain`] rule.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dialeval_metrics::embedding::MultiRef;
use dialeval_slm_model::bert::{PretrainedEncoder, default_encoder_dir};
use dialeval_slm_model::finetune::FineTunedScorer;
use dialeval_slm_model::ruber::RuberScorer;
use dialeval_slm_model::scorer::Scorer;

use crate::error::Result;
use crate::families::{BertRuberFamily, ContextCosineFamily, EmbeddingFamily, FineTunedFamily, MemoEmbedder, SlmFamily};
use crate::models::{CheckpointIdentity, Compute, ModelRequest, ModelSource, Retrain, RetrainData, SharedCache, default_cache_dir};

/// A family built from the bundle, or the reason it cannot run here (for the report's list of
/// skipped families).
#[derive(Debug)]
pub enum Built<F> {
    /// Ready to add to a pipeline.
    Ready(F),
    /// Not run, and why.
    Skipped(String),
}

impl<F> Built<F> {
    /// The family, or the reason it was skipped as the error (for a program that needs it).
    ///
    /// # Errors
    /// The skip reason.
    pub fn required(self) -> std::result::Result<F, String> {
        match self {
            Self::Ready(f) => Ok(f),
            Self::Skipped(why) => Err(why),
        }
    }
}

/// What a [`ModelBundle`] loads and how it finds its checkpoints.
#[derive(Debug, Clone)]
pub struct ModelSettings {
    /// The sentence encoder's folder (`None`: all-mpnet-base-v2 from `scripts/fetch_mpnet.sh`).
    pub encoder: Option<PathBuf>,
    /// Where the models run.
    pub compute: Compute,
    /// The shipped checkpoints' root (a clone's `models/`); `None`: there are none.
    pub models: Option<PathBuf>,
    /// An SLM checkpoint to use instead of the shipped one.
    pub slm: Option<PathBuf>,
    /// A BERT-RUBER checkpoint to use instead of the shipped one.
    pub ruber: Option<PathBuf>,
    /// A checkpoint of the fine-tuned text encoder (`dialeval fine-tune`; none ships yet).
    pub fine_tuned: Option<PathBuf>,
    /// Whether a shipped checkpoint may be used.
    pub retrain: Retrain,
    /// The repository's `data/` folder (what a checkpoint trained here learns from).
    pub data: PathBuf,
    /// Seed of a checkpoint trained here.
    pub seed: u64,
    /// The run's output folder (checkpoints trained here go to its `models/`).
    pub out: PathBuf,
    /// The token-state caches' folder.
    pub cache_dir: PathBuf,
    /// How the embedding metrics and BERT-RUBER's referenced score combine several references.
    pub references: MultiRef,
}

impl Default for ModelSettings {
    fn default() -> Self {
        Self {
            encoder: None,
            compute: Compute::Cpu,
            models: Some(PathBuf::from("models")),
            slm: None,
            ruber: None,
            fine_tuned: None,
            retrain: Retrain::IfNotShipped,
            data: PathBuf::from("data"),
            seed: 0,
            out: PathBuf::from("evaluation"),
            cache_dir: default_cache_dir(),
            references: MultiRef::Max,
        }
    }
}

/// A sentence encoder with its memo of token vectors and its token-state cache, loaded once
/// and shared by every family that encodes (cloning shares them).
#[derive(Clone)]
pub struct EncoderSide {
    /// The encoder.
    pub encoder: Arc<PretrainedEncoder>,
    /// The run's memo of token vectors (BERTScore, the embedding metrics, BERT-RUBER-ref).
    pub memo: Arc<MemoEmbedder<Arc<PretrainedEncoder>>>,
    /// The encoder's token-state cache on disk.
    pub cache: Arc<SharedCache>,
}

impl EncoderSide {
    /// `encoder` with a fresh memo and its token-state cache under `cache_dir`.
    pub fn new(encoder: PretrainedEncoder, cache_dir: &Path) -> Self {
        let encoder = Arc::new(encoder);
        let memo = Arc::new(MemoEmbedder::new(Arc::clone(&encoder), encoder.fingerprint()).named(encoder.name()));
        let cache = Arc::new(SharedCache::new(&encoder, cache_dir));
        Self { encoder, memo, cache }
    }
}

/// The learned side of a run: see the module documentation.
pub struct ModelBundle {
    settings: ModelSettings,
    device: burn::prelude::Device,
    /// Loaded when a family first asks for it, so a run whose families read no encoder
    /// (the lexical ones alone, a shard of them) neither reads nor fingerprints its weights.
    loaded: std::sync::OnceLock<std::result::Result<EncoderSide, String>>,
}

impl ModelBundle {
    /// The bundle of `settings`: its device opened; the encoder is loaded once, when a family
    /// first needs it (a missing or unreadable one is not an error: the families that need it
    /// are skipped with the reason).
    ///
    /// # Errors
    /// The device cannot be opened.
    pub fn load(settings: ModelSettings) -> Result<Self> {
        let device = settings.compute.device()?;
        Ok(Self { settings, device, loaded: std::sync::OnceLock::new() })
    }

    /// The encoder side, loaded on first use, or why there is none.
    fn loaded(&self) -> &std::result::Result<EncoderSide, String> {
        self.loaded.get_or_init(|| {
            let dir = self.settings.encoder.clone().unwrap_or_else(default_encoder_dir);
            PretrainedEncoder::load(&dir, &self.device).map(|encoder| EncoderSide::new(encoder, &self.settings.cache_dir)).map_err(|e| format!("no sentence encoder: {e}"))
        })
    }

    /// The encoder, when it loads.
    pub fn encoder(&self) -> Option<&Arc<PretrainedEncoder>> {
        self.loaded().as_ref().ok().map(|l| &l.encoder)
    }

    /// The settings.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// BERTScore and the embedding metrics over the encoder's token vectors.
    pub fn embedding(&self) -> Built<EmbeddingFamily<Arc<PretrainedEncoder>>> {
        match self.loaded() {
            Ok(l) => Built::Ready(EmbeddingFamily::new(Arc::clone(&l.memo)).with_references(self.settings.references)),
            Err(why) => Built::Skipped(why.clone()),
        }
    }

    /// The zero-shot context cosines.
    pub fn context_cosine(&self) -> Built<ContextCosineFamily> {
        match self.loaded() {
            Ok(l) => Built::Ready(ContextCosineFamily::new(Arc::clone(&l.encoder), Arc::clone(&l.cache))),
            Err(why) => Built::Skipped(why.clone()),
        }
    }

    /// Where the checkpoint of `name` comes from (see [`ModelSource::resolve`]).
    fn source(&self, name: &str, given: Option<&Path>, encoder: Option<&str>, fits: &dyn Fn(&Path) -> Result<bool>) -> Result<ModelSource> {
        let s = &self.settings;
        ModelSource::resolve(&ModelRequest { name, given, models: s.models.as_deref(), retrain: s.retrain, out: &s.out, seed: s.seed, encoder }, fits)
    }

    /// Why a family is skipped when no checkpoint fits and the settings never train.
    fn never_trained(&self, name: &str, source: &ModelSource) -> Option<String> {
        (matches!(source, ModelSource::Retrain(_)) && self.settings.retrain == Retrain::Never).then(|| match &self.settings.models {
            Some(models) => format!("no shipped {name} checkpoint for this encoder under {} (give the folder of shipped checkpoints, or a checkpoint of its own)", models.display()),
            None => format!("no shipped {name} checkpoint: no folder of shipped checkpoints was given (give one, or a checkpoint of its own)"),
        })
    }

    fn retrain_data(&self) -> RetrainData {
        RetrainData { data: self.settings.data.clone(), seed: self.settings.seed, compute: self.settings.compute }
    }

    /// BERT-RUBER over the first shipped checkpoint trained on this encoder's vectors, the
    /// given one, or one trained here (reporting `epoch, step, steps` to `progress`). `notice`
    /// hears where the checkpoint comes from.
    ///
    /// # Errors
    /// A checkpoint that cannot be read or trained.
    pub fn bert_ruber(&self, notice: &dyn Fn(&ModelSource), progress: &dyn Fn(usize, usize, usize)) -> Result<Built<BertRuberFamily>> {
        let l = match self.loaded() {
            Ok(l) => l,
            Err(why) => return Ok(Built::Skipped(why.clone())),
        };
        let (id, dim) = (l.encoder.fingerprint(), l.encoder.hidden_size());
        // Only the checkpoint's settings are read to choose it; the one chosen is loaded once.
        let fits = |dir: &Path| -> Result<bool> { Ok(RuberScorer::fits_encoder(dir, Some(id), dim)?) };
        let source = self.source("bert-ruber", self.settings.ruber.as_deref(), Some(id), &fits)?;
        if let Some(why) = self.never_trained("bert-ruber", &source) {
            return Ok(Built::Skipped(why));
        }
        notice(&source);
        if matches!(source, ModelSource::Retrain(_)) && !source.dir().join("done").is_file() {
            l.cache.with(|c| self.retrain_data().train_ruber(&l.encoder, c, source.dir(), progress))?;
        }
        let scorer = RuberScorer::load(source.dir(), self.device.clone())?;
        // A given checkpoint of another encoder is refused before anything is encoded.
        if let Err(e) = scorer.check_encoder(Some(id), dim) {
            return Ok(Built::Skipped(format!("{e} (train a checkpoint on this encoder, or leave --encoder out)")));
        }
        let family = BertRuberFamily::new(scorer, CheckpointIdentity::of(source.dir())?, l);
        Ok(Built::Ready(family.with_references(self.settings.references)))
    }

    /// The fine-tuned text encoder of [`ModelSettings::fine_tuned`] over this run's pretrained
    /// encoder (the one it was fine-tuned from). Skipped when no checkpoint is given (none ships
    /// yet), when the encoder is missing, or when the checkpoint was fine-tuned from another one.
    ///
    /// # Errors
    /// A checkpoint that cannot be read.
    pub fn fine_tuned(&self) -> Result<Built<FineTunedFamily>> {
        let Some(dir) = &self.settings.fine_tuned else {
            return Ok(Built::Skipped("no fine-tuned checkpoint given (none ships yet; `dialeval fine-tune` trains one)".into()));
        };
        let l = match self.loaded() {
            Ok(l) => l,
            Err(why) => return Ok(Built::Skipped(why.clone())),
        };
        match FineTunedScorer::load(dir, &l.encoder, self.device.clone()) {
            Ok(scorer) => Ok(Built::Ready(FineTunedFamily::new(scorer, CheckpointIdentity::of(dir)?))),
            Err(e @ dialeval_slm_model::Error::EncoderMismatch { .. }) => Ok(Built::Skipped(format!("{e} (give the encoder it was fine-tuned from)"))),
            Err(e) => Err(e.into()),
        }
    }

    /// The SLM, its checkpoint found as BERT-RUBER's is; the one trained here reads no encoder
    /// (its text side is trained too).
    ///
    /// # Errors
    /// A checkpoint that cannot be read or trained.
    pub fn slm(&self, notice: &dyn Fn(&ModelSource), progress: &dyn Fn(usize, usize, usize)) -> Result<Built<SlmFamily>> {
        let encoder = self.loaded().as_ref().ok();
        let fits = |dir: &Path| -> Result<bool> {
            match encoder {
                Some(l) => Ok(Scorer::fits_encoder(dir, l.encoder.fingerprint(), l.encoder.hidden_size())?),
                None => Ok(true),
            }
        };
        let source = self.source("slm", self.settings.slm.as_deref(), None, &fits)?;
        if let Some(why) = self.never_trained("slm", &source) {
            return Ok(Built::Skipped(why));
        }
        notice(&source);
        if matches!(source, ModelSource::Retrain(_)) && !source.dir().join("done").is_file() {
            self.retrain_data().train_slm(source.dir(), progress)?;
        }
        let scorer = Scorer::load(source.dir(), self.device.clone())?;
        if let Some(l) = encoder
            && let Err(e) = scorer.featurizer().check_encoder(l.encoder.fingerprint(), l.encoder.hidden_size())
        {
            return Ok(Built::Skipped(format!("{e} (train a checkpoint on this encoder, or leave --encoder out)")));
        }
        let text_side = match (self.loaded(), scorer.featurizer().encoder.is_some()) {
            (Ok(l), _) => Some((Arc::clone(&l.encoder), Arc::clone(&l.cache))),
            // This model reads sentence vectors: without the encoder it cannot score.
            (Err(why), true) => return Ok(Built::Skipped(why.clone())),
            (Err(_), false) => None,
        };
        Ok(Built::Ready(SlmFamily::new(scorer, CheckpointIdentity::of(source.dir())?, text_side)))
    }
}
