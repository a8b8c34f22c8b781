//! The crate's error type.

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `dialeval-metrics`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two paired inputs differ in length.
    #[error("paired inputs differ in length: {left} vs {right}")]
    LengthMismatch {
        /// Length of the first input.
        left: usize,
        /// Length of the second input.
        right: usize,
    },
    /// Too few observations for the statistic.
    #[error("{n} observations; at least {needed} are needed")]
    TooFewObservations {
        /// Observations given.
        n: usize,
        /// Observations needed.
        needed: usize,
    },
    /// NaN in the input under `NanPolicy::Raise`.
    #[error("the input contains NaN")]
    NanInput,
    /// The exact Kendall p-value was asked for tied data.
    #[error("ties found: the exact Kendall p-value needs untied data")]
    ExactWithTies,
    /// A parameter is out of range.
    #[error("invalid parameter: {0}")]
    Config(String),
    /// A hypothesis or reference is empty where the metric needs text.
    #[error("empty input: {0}")]
    Empty(&'static str),
    /// WordNet database files are missing or malformed.
    #[error("WordNet: {0}")]
    WordNet(String),
    /// An input too long for the metric's documented limit (ROUGE-L's LCS table).
    #[error("too long for {metric}: {size} (the limit is {limit})")]
    TooLong {
        /// The metric.
        metric: &'static str,
        /// How big the input is, in the limit's unit.
        size: String,
        /// The limit.
        limit: String,
    },
    /// A long computation was stopped by its caller (Ctrl-C in Python).
    #[error("interrupted")]
    Interrupted,
    /// Reading a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}
