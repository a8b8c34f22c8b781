//! # dialeval-metrics
//!
//! Scores and statistics for dialogue evaluation, each aligned to its Python reference:
//!
//! - [`correlation`]: Pearson, Spearman, Kendall tau-b with scipy 1.17's p-values;
//! - [`special`]: the distribution functions behind them.

mod error;
pub mod correlation;
pub mod special;

pub use error::{Error, Result};
