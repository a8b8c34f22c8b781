//! The crate's error type.

use std::path::PathBuf;

/// Errors of the evaluation pipeline. Sources are kept, so a caller can tell a metric's failure
/// from a file's.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A metric computation failed.
    #[error(transparent)]
    Metrics(#[from] dialeval_metrics::Error),
    /// A corpus or AMR side file could not be read.
    #[error(transparent)]
    Datasets(#[from] dialeval_datasets::Error),
    /// An AMR graph could not be read or compared.
    #[error(transparent)]
    Amr(#[from] dialeval_amr_graph::Error),
    /// The LLM judge failed as a whole (single judgements that fail are counted, not raised).
    #[cfg(feature = "llm")]
    #[error(transparent)]
    Llm(#[from] dialeval_llm_prompt::Error),
    /// A burn-backed scorer or the pretrained encoder failed.
    #[cfg(feature = "slm")]
    #[error(transparent)]
    Slm(#[from] dialeval_slm_model::Error),
    /// An embedder failed.
    #[error("embedder: {0}")]
    Embed(#[source] dialeval_common::EmbedError),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file (a family cache, a report) could not be read or written.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// What serde said.
        #[source]
        source: serde_json::Error,
    },
    /// A plot could not be drawn.
    #[error("plot {}: {source}", path.display())]
    Plot {
        /// The plot's file stem.
        path: PathBuf,
        /// What plotters said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A family returned a column of the wrong length, a non-finite score or a duplicate name.
    #[error("metric {metric}: {problem}")]
    Column {
        /// The metric.
        metric: String,
        /// What was wrong.
        problem: String,
    },
    /// An invalid setting.
    #[error("{0}")]
    Config(String),
    /// A setting out of its range ([`crate::settings`]): the same error from every surface.
    #[error("{setting} = {value}: expected {expected}")]
    Setting {
        /// The setting's name (`chunk`, `confidence`, `bootstrap`).
        setting: &'static str,
        /// The value given.
        value: String,
        /// What it must be.
        expected: String,
    },
    /// Stopped by [`dialeval_common::interrupt`] (Ctrl-C in Python) between two units of work;
    /// what was finished is cached, and the next run resumes from it.
    #[error("interrupted")]
    Interrupted,
    /// The output folder is in use by another run ([`crate::lock::OutputLock`]).
    #[error("{}: the output folder is in use by another run{} (wait for it to finish, or give another --out)", dir.display(), owner.as_deref().map_or_else(String::new, |o| format!(" ({o})")))]
    Busy {
        /// The folder.
        dir: PathBuf,
        /// What the lock file says of its owner (`pid 1234 since …`), when readable.
        owner: Option<String>,
    },
}

impl Error {
    /// Whether this error is (or wraps) a stop asked for by [`dialeval_common::interrupt`].
    pub fn is_interrupted(&self) -> bool {
        match self {
            Self::Interrupted | Self::Metrics(dialeval_metrics::Error::Interrupted) => true,
            #[cfg(feature = "slm")]
            Self::Slm(dialeval_slm_model::Error::Interrupted) => true,
            // An encoder behind the embedder traits (the embedding family's memo).
            #[cfg(feature = "slm")]
            Self::Embed(e) => matches!(e.downcast_ref::<dialeval_slm_model::Error>(), Some(dialeval_slm_model::Error::Interrupted)),
            _ => false,
        }
    }

    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }

    /// An [`Error::Json`] for `path`.
    pub fn json(path: impl Into<PathBuf>, source: serde_json::Error) -> Self {
        Self::Json { path: path.into(), source }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
