//! Descriptive statistics of repeated runs: the mean and sample standard deviation of the finite
//! values (a run that gave no value, NaN, is left out and counted apart).

use serde::{Deserialize, Serialize};

/// Mean ± sample standard deviation of the finite values of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanSd {
    /// Mean of the finite values (`None` when there is none).
    pub mean: Option<f64>,
    /// Sample standard deviation (n − 1; `None` for fewer than two finite values).
    pub sd: Option<f64>,
    /// Finite values.
    pub n: usize,
    /// Values left out for not being finite.
    pub left_out: usize,
}

impl MeanSd {
    /// The summary of `values`.
    pub fn of(values: &[f64]) -> Self {
        let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let n = finite.len();
        let mean = (n > 0).then(|| finite.iter().sum::<f64>() / n as f64);
        let sd = mean.filter(|_| n > 1).map(|m| (finite.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
        Self { mean, sd, n, left_out: values.len() - n }
    }
}

impl std::fmt::Display for MeanSd {
    /// `0.412 ± 0.013`, the mean alone for one value, `n/a` for none (three decimals, or the
    /// formatter's precision).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = f.precision().unwrap_or(3);
        match (self.mean, self.sd) {
            (None, _) => f.write_str("n/a"),
            (Some(m), None) => write!(f, "{m:.p$}"),
            (Some(m), Some(sd)) => write!(f, "{m:.p$} ± {sd:.p$}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_sd_of_the_finite_values() {
        let s = MeanSd::of(&[1.0, 2.0, f64::NAN, 3.0]);
        assert_eq!((s.mean, s.n, s.left_out), (Some(2.0), 3, 1));
        assert!((s.sd.unwrap_or(0.0) - 1.0).abs() < 1e-12, "{s:?}");
        assert_eq!(s.to_string(), "2.000 ± 1.000");
        assert_eq!(format!("{:.1}", MeanSd::of(&[0.26])), "0.3");
        assert_eq!(MeanSd::of(&[f64::NAN]).to_string(), "n/a");
        assert_eq!(MeanSd::of(&[]).mean, None);
    }
}
