//! The crate's error type.

use std::path::{Path, PathBuf};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `dialeval-slm-model`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Stopped by [`dialeval_common::interrupt`] (Ctrl-C in Python) between two batches.
    #[error("interrupted")]
    Interrupted,
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A saved file has the wrong content.
    #[error("bad format: {0}")]
    Format(String),
    /// A pretrained model directory lacks a file.
    #[error("{}: no {file}; fetch the default encoder all-mpnet-base-v2 with `scripts/fetch_mpnet.sh` (or all-MiniLM-L6-v2 with `scripts/fetch_minilm.sh`), or give the folder of a Hugging Face BERT or MPNet encoder", dir.display())]
    MissingModel {
        /// The directory searched.
        dir: PathBuf,
        /// The missing file.
        file: &'static str,
    },
    /// A setting is invalid.
    #[error("invalid setting: {0}")]
    Config(String),
    /// The dev set cannot choose checkpoints (one class only): training would stop on a
    /// meaningless AUC.
    #[error("dev set: {0} (the dev AUC picks the best checkpoint and drives early stopping)")]
    DevSet(dialeval_common::AucError),
    /// A model was trained on another pretrained encoder's vectors than the ones given.
    #[error("the model was trained on the vectors of encoder {expected}, but was given those of {found}")]
    EncoderMismatch {
        /// The encoder recorded in the checkpoint.
        expected: String,
        /// The encoder given.
        found: String,
    },
    /// A text's pretrained sentence vector was not computed.
    #[error("no sentence vector for {0:?} (encode every context and response first)")]
    MissingVector(String),
    /// A bundled checkpoint file does not match its recorded checksum.
    #[error("{}: sha256 {found}, expected {expected} (a corrupt or edited checkpoint)", path.display())]
    Checksum {
        /// The file.
        path: PathBuf,
        /// The recorded checksum.
        expected: String,
        /// The file's checksum.
        found: String,
    },
    /// A saved model's parameters do not fit the model its settings describe (missing,
    /// unexpected or differently shaped tensors): a checkpoint written by another version of the
    /// model, or a settings file (`train.json`, `featurizer.json`, `ruber.json`) edited or taken
    /// from another run.
    #[error("{}: the saved parameters do not fit the model described beside them ({detail})", path.display())]
    RecordMismatch {
        /// The parameter file.
        path: PathBuf,
        /// What did not fit, as burn reports it.
        detail: String,
    },
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io { path: path.to_owned(), source }
    }
}
