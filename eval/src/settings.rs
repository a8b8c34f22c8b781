//! The settings of a run that every surface gives (the `dialeval evaluate` command, Rust's
//! [`Evaluation`](crate::Evaluation), Python's `dialeval.evaluate`), checked in one place, so
//! that the same mistake is the same typed error ([`Error::Setting`]) wherever it is made.

use dialeval_metrics::inference::BootstrapConfig;
use dialeval_metrics::report::ReportConfig;

use crate::error::{Error, Result};
use crate::pipeline::DEFAULT_CHUNK_ITEMS;

/// How a corpus is cut into chunks and how its correlations are analysed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSettings {
    /// Items per chunk (at least 1): each family scores and caches this many at a time. The
    /// scores never depend on it.
    pub chunk: usize,
    /// Bootstrap resamples of the Spearman and Kendall intervals: 0 for none, otherwise at
    /// least 2.
    pub bootstrap: usize,
    /// Coverage of every interval, in (0, 1).
    pub confidence: f64,
    /// Seed of the bootstrap.
    pub seed: u64,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self { chunk: DEFAULT_CHUNK_ITEMS, bootstrap: 1000, confidence: 0.95, seed: 0 }
    }
}

impl RunSettings {
    /// Checks every setting.
    ///
    /// # Errors
    /// [`Error::Setting`] naming the first bad one.
    pub fn check(&self) -> Result<()> {
        check_chunk(self.chunk)?;
        if self.bootstrap == 1 {
            return Err(setting("bootstrap", "1", "0 (no intervals) or at least 2 resamples"));
        }
        check_confidence(self.confidence)
    }

    /// The analysis these settings ask for.
    ///
    /// # Errors
    /// As [`RunSettings::check`].
    pub fn report_config(&self) -> Result<ReportConfig> {
        self.check()?;
        Ok(self.unchecked_report_config())
    }

    /// [`RunSettings::report_config`] before the check (which the run does).
    pub(crate) fn unchecked_report_config(&self) -> ReportConfig {
        let bootstrap = (self.bootstrap > 0).then_some(BootstrapConfig { resamples: self.bootstrap, confidence: self.confidence, seed: self.seed });
        ReportConfig { confidence: self.confidence, bootstrap, ..ReportConfig::default() }
    }
}

/// Checks a chunk size: at least 1 item.
///
/// # Errors
/// [`Error::Setting`] for 0.
pub fn check_chunk(chunk: usize) -> Result<()> {
    if chunk == 0 { Err(setting("chunk", "0", "at least 1 item per chunk")) } else { Ok(()) }
}

/// Checks a coverage: in (0, 1), so 0.95 for 95% intervals.
///
/// # Errors
/// [`Error::Setting`] otherwise (NaN included).
pub fn check_confidence(confidence: f64) -> Result<()> {
    if confidence > 0.0 && confidence < 1.0 { Ok(()) } else { Err(setting("confidence", &confidence.to_string(), "a coverage in (0, 1), e.g. 0.95")) }
}

/// Checks an analysis configuration built by hand ([`ReportConfig`]).
///
/// # Errors
/// [`Error::Setting`] for a confidence outside (0, 1) (its own or the bootstrap's) or fewer
/// than 2 resamples.
pub fn check_report(config: &ReportConfig) -> Result<()> {
    check_confidence(config.confidence)?;
    if let Some(b) = &config.bootstrap {
        check_confidence(b.confidence)?;
        if b.resamples < 2 {
            return Err(setting("bootstrap", &b.resamples.to_string(), "0 (no intervals) or at least 2 resamples"));
        }
    }
    Ok(())
}

/// A count given as a signed integer (a Python `int`, a JSON number): `value` when it is not
/// negative.
///
/// # Errors
/// [`Error::Setting`] naming `setting` for a negative value.
pub fn count(setting_name: &'static str, value: i64) -> Result<usize> {
    usize::try_from(value).map_err(|_| setting(setting_name, &value.to_string(), "a count, not negative"))
}

fn setting(name: &'static str, value: &str, expected: &str) -> Error {
    Error::Setting { setting: name, value: value.to_owned(), expected: expected.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bad_setting_is_named() {
        assert!(RunSettings::default().check().is_ok());
        let bad = |s: RunSettings| s.check().map_err(|e| e.to_string()).err().unwrap_or_default();
        assert_eq!(bad(RunSettings { chunk: 0, ..RunSettings::default() }), "chunk = 0: expected at least 1 item per chunk");
        assert!(bad(RunSettings { bootstrap: 1, ..RunSettings::default() }).starts_with("bootstrap = 1"));
        for c in [0.0, 1.0, 7.0, -0.5, f64::NAN] {
            assert!(bad(RunSettings { confidence: c, ..RunSettings::default() }).starts_with("confidence = "), "{c}");
        }
        assert!(RunSettings { bootstrap: 0, ..RunSettings::default() }.report_config().is_ok_and(|c| c.bootstrap.is_none()));
        assert!(count("bootstrap", -1).is_err_and(|e| e.to_string() == "bootstrap = -1: expected a count, not negative"));
        assert_eq!(count("chunk", 3).ok(), Some(3));
        let mut config = ReportConfig::default();
        assert!(check_report(&config).is_ok());
        config.confidence = 7.0;
        assert!(matches!(check_report(&config), Err(Error::Setting { setting: "confidence", .. })));
    }
}
