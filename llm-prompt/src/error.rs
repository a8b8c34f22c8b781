//! The crate's error type.

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `dialeval-llm-prompt`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A template references a slot that does not exist, or cannot be read.
    #[error("template {name}: {problem}")]
    Template {
        /// Template name or file.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// The prompt does not fit the length budget even after truncation.
    #[error("prompt of {chars} characters does not fit the budget of {budget} even without context and AMR")]
    TooLong {
        /// Characters of the smallest prompt.
        chars: usize,
        /// The budget.
        budget: usize,
    },
    /// The server could not be reached (after retries).
    #[error("request to {url} failed after {attempts} attempt(s): {message}")]
    Transport {
        /// Endpoint.
        url: String,
        /// Attempts made.
        attempts: u32,
        /// Last failure.
        message: String,
    },
    /// The server answered with an error status (after retries, for 429 and 5xx).
    #[error("{url} answered HTTP {status} after {attempts} attempt(s): {body}")]
    Status {
        /// Endpoint.
        url: String,
        /// HTTP status.
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// Start of the response body.
        body: String,
    },
    /// The server's answer is not a chat completion.
    #[error("unexpected response from {url}: {problem}")]
    Protocol {
        /// Endpoint.
        url: String,
        /// What is wrong.
        problem: String,
    },
    /// A score outside the scale (with `OffScale::Reject`).
    #[error("score {value} is outside the scale {min}-{max}")]
    OutOfScale {
        /// The parsed score.
        value: f64,
        /// Scale minimum.
        min: u8,
        /// Scale maximum.
        max: u8,
    },
    /// A setting is invalid.
    #[error("invalid setting: {0}")]
    Config(String),
    /// The request cache could not be read or written.
    #[error("cache {path}: {source}")]
    Cache {
        /// The cache file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}
