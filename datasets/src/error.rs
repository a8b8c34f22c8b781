//! The crate's error type: every error names the file and the place in it.

use std::fmt;
use std::path::{Path, PathBuf};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where in a file something went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Place {
    /// A whole file.
    File,
    /// A 1-based line (JSONL, text files).
    Line(usize),
    /// A JSON path such as `[12].responses[3].Natural`.
    Json(String),
    /// A JSON path within a line of a JSONL file.
    LineJson(usize, String),
    /// A 1-based line and column (in characters).
    LineColumn(usize, usize),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File => Ok(()),
            Self::Line(l) => write!(f, ":{l}"),
            Self::Json(p) => write!(f, " at {p}"),
            Self::LineJson(l, p) => write!(f, ":{l} at {p}"),
            Self::LineColumn(l, c) => write!(f, ":{l}:{c}"),
        }
    }
}

/// Everything that can go wrong in `dialeval-datasets`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file (or line) is not valid JSON.
    #[error("{}{place}: invalid JSON: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The line, for JSONL.
        place: Place,
        /// The parser's message (with its own line and column).
        #[source]
        source: serde_json::Error,
    },
    /// A record is malformed: a missing field, a wrong type, an out-of-range value.
    #[error("{}{place}: {problem}", path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// Where in the file.
        place: Place,
        /// What was wrong.
        problem: String,
    },
    /// A setting is invalid.
    #[error("invalid setting: {0}")]
    Config(String),
    /// A file failed to load as one kind and looks like another ([`crate::sniff::guess`]).
    #[error("{source}\n  hint: read as {}, but it looks like {}", crate::sniff::describe(*expected), crate::sniff::describe(*found))]
    WrongKind {
        /// The kind it was read as.
        expected: crate::item::Corpus,
        /// The kind it looks like.
        found: crate::item::Corpus,
        /// The loader's error.
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io { path: path.to_owned(), source }
    }

    pub(crate) fn record(path: &Path, place: Place, problem: impl Into<String>) -> Self {
        Self::Record { path: path.to_owned(), place, problem: problem.into() }
    }
}
