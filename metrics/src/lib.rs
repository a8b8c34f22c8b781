//! # dialeval-metrics
//!
//! Scores and statistics for dialogue evaluation, each aligned to its Python reference:
//!
//! - [`correlation`]: Pearson, Spearman, Kendall tau-b with scipy 1.17's p-values;
//! - [`special`]: the distribution functions behind them;
//! - [`describe`]: mean ± sample standard deviation over repeated runs ([`describe::MeanSd`]);
//! - [`specificity`]: NIDF, a response's mean normalised IDF over a bundled DailyDialog table.

pub mod correlation;
pub mod describe;
pub mod embedding;
mod error;
pub mod inference;
pub mod report;
pub mod special;
pub mod specificity;
pub mod text;

pub use error::{Error, Result};

/// Serde helper: NaN is written as `null` (JSON has no NaN) and `null` is read back as NaN.
pub(crate) mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_nan() { s.serialize_none() } else { s.serialize_f64(*v) }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}
