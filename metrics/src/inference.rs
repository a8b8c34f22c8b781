//! Confidence intervals, the comparison of dependent correlations, and system-level
//! correlation.
//!
//! - Fisher-z interval for Pearson's r (Fisher 1921): `tanh(atanh r ± z_{1-α/2} / √(n − 3))`.
//! - Percentile bootstrap for any statistic of paired samples (Efron and Tibshirani 1993),
//!   seeded, with numpy's default (`linear`) percentile interpolation.
//! - Williams' test (Williams 1959; Steiger 1980, eq. 7) for whether two metrics correlate
//!   differently with the same human scores, as used for MT metrics by Graham and Baldwin (2014).
//! - System-level correlation: correlate the per-system means (as DialEvalMetrics and the
//!   WMT metrics tasks do); turn-level is the plain correlation over items.

use std::collections::BTreeMap;

use dialeval_common::SplitMix64;
use serde::{Deserialize, Serialize};

use crate::correlation::{Correlation, CorrelationKind, correlate};
use crate::error::{Error, Result};
use crate::special::{normal_ppf, student_t_sf};

/// A two-sided interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Coverage, e.g. 0.95.
    pub confidence: f64,
}

/// Fisher-z confidence interval for a Pearson correlation `r` from `n` pairs.
///
/// # Errors
/// [`Error::TooFewObservations`] for n ≤ 3; [`Error::Config`] for a confidence outside (0, 1)
/// or a non-finite `r` outside [-1, 1].
///
/// # Examples
/// ```
/// let ci = dialeval_metrics::inference::fisher_z_interval(0.5, 50, 0.95)?;
/// assert!((ci.low - 0.2575).abs() < 1e-4 && (ci.high - 0.6833).abs() < 1e-4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fisher_z_interval(r: f64, n: usize, confidence: f64) -> Result<Interval> {
    check_confidence(confidence)?;
    if n <= 3 {
        return Err(Error::TooFewObservations { n, needed: 4 });
    }
    if !(-1.0..=1.0).contains(&r) {
        return Err(Error::Config(format!("r must be in [-1, 1], got {r}")));
    }
    let z = r.atanh();
    let half = normal_ppf(0.5 + confidence / 2.0) / ((n - 3) as f64).sqrt();
    Ok(Interval { low: (z - half).tanh(), high: (z + half).tanh(), confidence })
}

/// Settings of [`bootstrap_interval`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BootstrapConfig {
    /// Number of resamples (≥ 2).
    pub resamples: usize,
    /// Coverage, e.g. 0.95.
    pub confidence: f64,
    /// Seed of the resampling generator.
    pub seed: u64,
}

fn check_confidence(confidence: f64) -> Result<()> {
    if confidence > 0.0 && confidence < 1.0 { Ok(()) } else { Err(Error::Config(format!("confidence must be in (0, 1), got {confidence}"))) }
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        Self { resamples: 1000, confidence: 0.95, seed: 0 }
    }
}

/// A bootstrap interval and how many resamples gave no value (e.g. a constant resample).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BootstrapInterval {
    /// The percentile interval over the defined resample statistics.
    pub interval: Interval,
    /// Resamples whose statistic was NaN and were left out.
    pub undefined_resamples: usize,
}

/// Percentile bootstrap interval of `statistic` over paired samples, resampling pairs with
/// replacement.
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::TooFewObservations`] for fewer than 2 pairs,
/// [`Error::Config`] for fewer than 2 resamples or a bad confidence, and
/// [`Error::Config`] when fewer than 2 resamples give a defined statistic.
pub fn bootstrap_interval(x: &[f64], y: &[f64], statistic: impl Fn(&[f64], &[f64]) -> f64, config: &BootstrapConfig) -> Result<BootstrapInterval> {
    let n = check_bootstrap(x, y, config)?;
    let mut rng = SplitMix64(config.seed);
    let (mut bx, mut by) = (vec![0.0; n], vec![0.0; n]);
    let mut values = Vec::with_capacity(config.resamples);
    for _ in 0..config.resamples {
        for k in 0..n {
            let i = rng.below(n);
            bx[k] = x[i];
            by[k] = y[i];
        }
        values.push(statistic(&bx, &by));
    }
    percentile_interval(values, config)
}

/// The checks of both bootstraps: a confidence in (0, 1), paired samples of at least 2 pairs,
/// at least 2 resamples. Returns the number of pairs.
fn check_bootstrap(x: &[f64], y: &[f64], config: &BootstrapConfig) -> Result<usize> {
    check_confidence(config.confidence)?;
    if x.len() != y.len() {
        return Err(Error::LengthMismatch { left: x.len(), right: y.len() });
    }
    let n = x.len();
    if n < 2 {
        return Err(Error::TooFewObservations { n, needed: 2 });
    }
    if config.resamples < 2 {
        return Err(Error::Config("at least 2 bootstrap resamples are needed".into()));
    }
    Ok(n)
}

/// The percentile interval of the resample statistics `values` (NaN: undefined, left out).
fn percentile_interval(mut values: Vec<f64>, config: &BootstrapConfig) -> Result<BootstrapInterval> {
    let undefined_resamples = values.iter().filter(|v| v.is_nan()).count();
    values.retain(|v| !v.is_nan());
    if values.len() < 2 {
        return Err(Error::Config(format!("only {} of {} resamples gave a defined statistic", values.len(), config.resamples)));
    }
    values.sort_by(f64::total_cmp);
    let alpha = (1.0 - config.confidence) / 2.0;
    let interval = Interval { low: percentile_linear(&values, alpha), high: percentile_linear(&values, 1.0 - alpha), confidence: config.confidence };
    Ok(BootstrapInterval { interval, undefined_resamples })
}

/// [`bootstrap_interval`] of Spearman's ρ or Kendall's τ-b, made cheap at large n: the same
/// resamples (the same draws of the same seeded generator), but each resample is read as how
/// often each pair was drawn, over orders of `x`, `y` and `(x, y)` sorted once. A resample then
/// costs O(n) for Spearman (group counts give each value's average rank) and O(n log k) for
/// Kendall (a Fenwick tree over the k distinct `y` values counts the discordant pairs), instead
/// of sorting the resample twice. Kendall's τ-b comes from the same integer pair counts as
/// [`crate::correlation::kendall_tau_b`] and is bit for bit its value; Spearman's ρ is the
/// Pearson correlation of the same ranks, summed in another order (equal within 1e-12).
///
/// # Errors
/// As [`bootstrap_interval`]; [`Error::Config`] for Pearson (not a rank statistic) or a
/// non-finite value (drop NaN pairs first).
pub fn rank_bootstrap_interval(kind: CorrelationKind, x: &[f64], y: &[f64], config: &BootstrapConfig) -> Result<BootstrapInterval> {
    let n = check_bootstrap(x, y, config)?;
    if kind == CorrelationKind::Pearson {
        return Err(Error::Config("the rank bootstrap is for Spearman and Kendall".into()));
    }
    if x.iter().chain(y).any(|v| !v.is_finite()) {
        return Err(Error::Config("the rank bootstrap needs finite values (drop NaN pairs first)".into()));
    }
    let groups = RankGroups::new(x, y);
    let mut rng = SplitMix64(config.seed);
    let mut counts = vec![0_u64; n];
    let mut scratch = RankScratch::new(&groups);
    let mut values = Vec::with_capacity(config.resamples);
    for _ in 0..config.resamples {
        counts.iter_mut().for_each(|c| *c = 0);
        for _ in 0..n {
            counts[rng.below(n)] += 1;
        }
        values.push(match kind {
            CorrelationKind::Spearman => groups.spearman(&counts, &mut scratch),
            _ => groups.kendall(&counts, &mut scratch),
        });
    }
    percentile_interval(values, config)
}

/// Tie groups of `x`, of `y` and of `(x, y)`, numbered in ascending order.
struct RankGroups {
    /// Per pair: its `x` group, `y` group and `(x, y)` group.
    gx: Vec<u32>,
    gy: Vec<u32>,
    gxy: Vec<u32>,
    /// The pairs in ascending `(x, y)` order (so in ascending `x`).
    order: Vec<u32>,
    kx: usize,
    ky: usize,
    kxy: usize,
}

/// Buffers of one resample's statistic.
struct RankScratch {
    cx: Vec<u64>,
    cy: Vec<u64>,
    cxy: Vec<u64>,
    rx: Vec<f64>,
    ry: Vec<f64>,
    tree: Vec<u64>,
}

impl RankScratch {
    fn new(g: &RankGroups) -> Self {
        Self { cx: vec![0; g.kx], cy: vec![0; g.ky], cxy: vec![0; g.kxy], rx: vec![0.0; g.kx], ry: vec![0.0; g.ky], tree: vec![0; g.ky + 1] }
    }
}

/// Group ids (0-based, ascending) of `v` and how many groups.
fn tie_groups(v: &[f64]) -> (Vec<u32>, usize) {
    let mut order: Vec<u32> = (0..v.len() as u32).collect();
    order.sort_by(|&a, &b| v[a as usize].total_cmp(&v[b as usize]));
    let mut ids = vec![0_u32; v.len()];
    let mut k = 0_u32;
    for (j, &i) in order.iter().enumerate() {
        if j > 0 && v[i as usize] != v[order[j - 1] as usize] {
            k += 1;
        }
        ids[i as usize] = k;
    }
    (ids, if v.is_empty() { 0 } else { k as usize + 1 })
}

impl RankGroups {
    fn new(x: &[f64], y: &[f64]) -> Self {
        let ((gx, kx), (gy, ky)) = (tie_groups(x), tie_groups(y));
        let mut order: Vec<u32> = (0..x.len() as u32).collect();
        order.sort_by_key(|&i| (gx[i as usize], gy[i as usize]));
        let mut gxy = vec![0_u32; x.len()];
        let mut k = 0_u32;
        for (j, &i) in order.iter().enumerate() {
            let (a, b) = (i as usize, order[j.saturating_sub(1)] as usize);
            if j > 0 && (gx[a], gy[a]) != (gx[b], gy[b]) {
                k += 1;
            }
            gxy[a] = k;
        }
        Self { gx, gy, gxy, order, kx, ky, kxy: k as usize + 1 }
    }

    /// Spearman's ρ of the resample that draws pair i `counts[i]` times: the Pearson
    /// correlation of average ranks, a tie group of c drawn pairs after m drawn smaller values
    /// having rank m + (c + 1) / 2.
    fn spearman(&self, counts: &[u64], s: &mut RankScratch) -> f64 {
        let n: u64 = counts.iter().sum();
        s.cx.iter_mut().for_each(|c| *c = 0);
        s.cy.iter_mut().for_each(|c| *c = 0);
        for (i, &c) in counts.iter().enumerate() {
            s.cx[self.gx[i] as usize] += c;
            s.cy[self.gy[i] as usize] += c;
        }
        let mean = (n as f64 + 1.0) / 2.0;
        let ranks = |groups: &[u64], ranks: &mut [f64]| {
            let (mut before, mut spread) = (0_u64, 0.0);
            for (r, &c) in ranks.iter_mut().zip(groups) {
                *r = before as f64 + (c as f64 + 1.0) / 2.0 - mean;
                spread += c as f64 * *r * *r;
                before += c;
            }
            spread
        };
        let (sxx, syy) = (ranks(&s.cx, &mut s.rx), ranks(&s.cy, &mut s.ry));
        if sxx == 0.0 || syy == 0.0 {
            return f64::NAN;
        }
        let sxy: f64 = counts.iter().enumerate().filter(|&(_, &c)| c > 0).map(|(i, &c)| c as f64 * s.rx[self.gx[i] as usize] * s.ry[self.gy[i] as usize]).sum();
        (sxy / sxx.sqrt() / syy.sqrt()).clamp(-1.0, 1.0)
    }

    /// Kendall's τ-b of the resample, from the pair counts
    /// [`crate::correlation::kendall_tau_b`] uses: pairs in all, tied in x, in y, in both, and
    /// discordant (a Fenwick tree over the y groups, filled in ascending x).
    fn kendall(&self, counts: &[u64], s: &mut RankScratch) -> f64 {
        let n: u64 = counts.iter().sum();
        let pairs = |c: u64| c * c.saturating_sub(1) / 2;
        s.cx.iter_mut().for_each(|c| *c = 0);
        s.cy.iter_mut().for_each(|c| *c = 0);
        s.cxy.iter_mut().for_each(|c| *c = 0);
        for (i, &c) in counts.iter().enumerate() {
            s.cx[self.gx[i] as usize] += c;
            s.cy[self.gy[i] as usize] += c;
            s.cxy[self.gxy[i] as usize] += c;
        }
        let tot = pairs(n);
        let (xtie, ytie, ntie): (u64, u64, u64) = (s.cx.iter().map(|&c| pairs(c)).sum(), s.cy.iter().map(|&c| pairs(c)).sum(), s.cxy.iter().map(|&c| pairs(c)).sum());
        if xtie == tot || ytie == tot {
            return f64::NAN;
        }
        // Discordant: x strictly smaller, y strictly greater. Insert each x group after all of
        // its pairs have been counted against the smaller x groups.
        s.tree.iter_mut().for_each(|t| *t = 0);
        let (mut inserted, mut dis) = (0_u64, 0_u64);
        let mut start = 0;
        while start < self.order.len() {
            let g = self.gx[self.order[start] as usize];
            let mut end = start;
            while end < self.order.len() && self.gx[self.order[end] as usize] == g {
                end += 1;
            }
            for &i in &self.order[start..end] {
                let c = counts[i as usize];
                if c > 0 {
                    let at_most = fenwick_prefix(&s.tree, self.gy[i as usize] as usize + 1);
                    dis += c * (inserted - at_most);
                }
            }
            for &i in &self.order[start..end] {
                let c = counts[i as usize];
                if c > 0 {
                    fenwick_add(&mut s.tree, self.gy[i as usize] as usize + 1, c);
                    inserted += c;
                }
            }
            start = end;
        }
        let con_minus_dis = tot as f64 - xtie as f64 - ytie as f64 + ntie as f64 - 2.0 * dis as f64;
        (con_minus_dis / (tot as f64 - xtie as f64).sqrt() / (tot as f64 - ytie as f64).sqrt()).clamp(-1.0, 1.0)
    }
}

/// Sum of the first `k` entries of a 1-based Fenwick tree.
fn fenwick_prefix(tree: &[u64], mut k: usize) -> u64 {
    let mut sum = 0;
    while k > 0 {
        sum += tree[k];
        k &= k - 1;
    }
    sum
}

/// Adds `w` at 1-based position `k`.
fn fenwick_add(tree: &mut [u64], mut k: usize, w: u64) {
    while k < tree.len() {
        tree[k] += w;
        k += k & k.wrapping_neg();
    }
}

/// numpy's default percentile (`method='linear'`) of sorted values, `q` in [0, 1].
fn percentile_linear(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// Result of [`williams_test`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WilliamsTest {
    /// The t statistic (positive when the first metric correlates more strongly).
    pub t: f64,
    /// Degrees of freedom, n − 3.
    pub df: f64,
    /// Two-sided p-value.
    pub pvalue_two_sided: f64,
    /// One-sided p-value for "the first metric correlates more strongly" (Graham and Baldwin).
    pub pvalue_one_sided: f64,
}

/// Williams' test of `H0: r12 = r13` for correlations sharing variable 1 (the human scores):
/// `r12` = corr(human, metric A), `r13` = corr(human, metric B), `r23` = corr(A, B), n items.
///
/// `t = (r12 − r13) √((n−1)(1+r23)) / √(2K (n−1)/(n−3) + ((r12+r13)²/4)(1−r23)³)`, with
/// `K = 1 − r12² − r13² − r23² + 2 r12 r13 r23`, on n − 3 degrees of freedom.
///
/// # Errors
/// [`Error::TooFewObservations`] for n ≤ 3, [`Error::Config`] for correlations outside [-1, 1]
/// or a degenerate (non-positive) denominator.
pub fn williams_test(r12: f64, r13: f64, r23: f64, n: usize) -> Result<WilliamsTest> {
    if n <= 3 {
        return Err(Error::TooFewObservations { n, needed: 4 });
    }
    if [r12, r13, r23].iter().any(|r| !(-1.0..=1.0).contains(r)) {
        return Err(Error::Config(format!("correlations must be in [-1, 1]: {r12}, {r13}, {r23}")));
    }
    let nf = n as f64;
    let k = 1.0 - r12 * r12 - r13 * r13 - r23 * r23 + 2.0 * r12 * r13 * r23;
    let denom = 2.0 * k * (nf - 1.0) / (nf - 3.0) + ((r12 + r13).powi(2) / 4.0) * (1.0 - r23).powi(3);
    if denom <= 0.0 {
        return Err(Error::Config("degenerate correlations: Williams' denominator is not positive".into()));
    }
    let t = (r12 - r13) * ((nf - 1.0) * (1.0 + r23)).sqrt() / denom.sqrt();
    let df = nf - 3.0;
    let one = student_t_sf(t, df);
    Ok(WilliamsTest { t, df, pvalue_two_sided: (2.0 * student_t_sf(t.abs(), df)).min(1.0), pvalue_one_sided: one })
}

/// Compares two metrics on the same items: correlates each with `human` (Pearson) and with
/// each other, then runs [`williams_test`].
///
/// # Errors
/// Length mismatches, undefined correlations, or the errors of [`williams_test`].
pub fn compare_metrics(metric_a: &[f64], metric_b: &[f64], human: &[f64]) -> Result<WilliamsTest> {
    if human.len() <= 3 {
        return Err(Error::TooFewObservations { n: human.len(), needed: 4 });
    }
    let defined = |c: Correlation| {
        if c.is_defined() { Ok(c.statistic) } else { Err(Error::Config(format!("correlation undefined: {:?}", c.undefined))) }
    };
    let r12 = defined(correlate(CorrelationKind::Pearson, human, metric_a)?)?;
    let r13 = defined(correlate(CorrelationKind::Pearson, human, metric_b)?)?;
    let r23 = defined(correlate(CorrelationKind::Pearson, metric_a, metric_b)?)?;
    williams_test(r12, r13, r23, human.len())
}

/// [`compare_metrics`] on the coefficient `kind`: Pearson as there, or Spearman — Williams'
/// test on rank correlations (each variable replaced by its average ranks, so every r is a
/// Spearman rho), the form that matches a best metric chosen by Spearman. Kendall is not
/// supported (Williams' formula assumes product-moment correlations).
///
/// # Errors
/// As [`compare_metrics`]; [`Error::Config`] for Kendall.
pub fn compare_metrics_by(kind: CorrelationKind, metric_a: &[f64], metric_b: &[f64], human: &[f64]) -> Result<WilliamsTest> {
    match kind {
        CorrelationKind::Pearson => compare_metrics(metric_a, metric_b, human),
        CorrelationKind::Spearman => {
            if metric_a.len() != human.len() || metric_b.len() != human.len() {
                return Err(Error::LengthMismatch { left: metric_a.len().max(metric_b.len()), right: human.len() });
            }
            compare_metrics(&crate::correlation::rank_average(metric_a), &crate::correlation::rank_average(metric_b), &crate::correlation::rank_average(human))
        }
        CorrelationKind::KendallTauB => Err(Error::Config("Williams' test takes Pearson or Spearman correlations, not Kendall's tau".into())),
    }
}

/// Per-system means of metric and human scores, systems in sorted order.
///
/// # Errors
/// [`Error::LengthMismatch`] when the three inputs differ in length.
pub fn system_means<S: Ord + Clone>(metric: &[f64], human: &[f64], systems: &[S]) -> Result<(Vec<S>, Vec<f64>, Vec<f64>)> {
    if metric.len() != human.len() || metric.len() != systems.len() {
        return Err(Error::LengthMismatch { left: metric.len(), right: human.len().min(systems.len()) });
    }
    let mut groups: BTreeMap<S, (f64, f64, usize)> = BTreeMap::new();
    for ((m, h), s) in metric.iter().zip(human).zip(systems) {
        let g = groups.entry(s.clone()).or_insert((0.0, 0.0, 0));
        g.0 += m;
        g.1 += h;
        g.2 += 1;
    }
    let names = groups.keys().cloned().collect();
    let (m, h) = groups.values().map(|(m, h, c)| (m / *c as f64, h / *c as f64)).unzip();
    Ok((names, m, h))
}

/// System-level correlation: `kind` over per-system means.
///
/// # Errors
/// As [`system_means`] and [`correlate`] (Pearson needs at least 2 systems).
pub fn system_level<S: Ord + Clone>(kind: CorrelationKind, metric: &[f64], human: &[f64], systems: &[S]) -> Result<Correlation> {
    let (_, m, h) = system_means(metric, human, systems)?;
    correlate(kind, &m, &h)
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;

    #[test]
    fn fisher_interval_by_hand() {
        // atanh(0.5) = 0.549306; half width 1.959964/sqrt(47) = 0.285890
        let ci = fisher_z_interval(0.5, 50, 0.95).unwrap();
        assert_abs_diff_eq!(ci.low, (0.5_f64.atanh() - 1.959_963_984_540_054 / 47.0_f64.sqrt()).tanh(), epsilon = 1e-14);
        assert_abs_diff_eq!(ci.high, (0.5_f64.atanh() + 1.959_963_984_540_054 / 47.0_f64.sqrt()).tanh(), epsilon = 1e-14);
        assert!(fisher_z_interval(0.5, 3, 0.95).is_err());
        assert!(fisher_z_interval(0.5, 10, 1.5).is_err());
    }

    #[test]
    fn bootstrap_is_seeded_and_covers_the_estimate() {
        let x: Vec<f64> = (0..60).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|v| v * 0.5 + (v * 1.7).sin() * 5.0).collect();
        let r = |a: &[f64], b: &[f64]| correlate(CorrelationKind::Pearson, a, b).map_or(f64::NAN, |c| c.statistic);
        let cfg = BootstrapConfig { resamples: 500, confidence: 0.9, seed: 7 };
        let a = bootstrap_interval(&x, &y, r, &cfg).unwrap();
        let b = bootstrap_interval(&x, &y, r, &cfg).unwrap();
        assert_eq!(a, b);
        let est = r(&x, &y);
        assert!(a.interval.low < est && est < a.interval.high);
        assert!(bootstrap_interval(&x, &y[..3], r, &cfg).is_err());
        // constant data: every resample undefined
        let c = vec![1.0; 10];
        assert!(bootstrap_interval(&c, &c, r, &cfg).is_err());
    }

    #[test]
    fn the_rank_bootstrap_draws_the_resamples_of_the_plain_bootstrap() {
        // Ties in both variables (ratings on a 1-5 scale, a metric rounded to tenths).
        let mut rng = SplitMix64(11);
        let x: Vec<f64> = (0..300).map(|_| (rng.below(40) as f64) / 10.0).collect();
        let y: Vec<f64> = x.iter().map(|v| ((v * 1.3 + rng.below(30) as f64 / 10.0) as u32 % 5 + 1) as f64).collect();
        let cfg = BootstrapConfig { resamples: 200, confidence: 0.95, seed: 3 };
        for kind in [CorrelationKind::Spearman, CorrelationKind::KendallTauB] {
            let stat = |a: &[f64], b: &[f64]| correlate(kind, a, b).map_or(f64::NAN, |c| c.statistic);
            let plain = bootstrap_interval(&x, &y, stat, &cfg).unwrap();
            let fast = rank_bootstrap_interval(kind, &x, &y, &cfg).unwrap();
            assert_eq!(fast.undefined_resamples, plain.undefined_resamples);
            if kind == CorrelationKind::KendallTauB {
                assert_eq!(fast.interval, plain.interval, "the same integer pair counts");
            } else {
                assert_abs_diff_eq!(fast.interval.low, plain.interval.low, epsilon = 1e-12);
                assert_abs_diff_eq!(fast.interval.high, plain.interval.high, epsilon = 1e-12);
            }
        }
        // Two pairs: many resamples draw one pair twice (constant), as in the plain bootstrap.
        let (a, b) = ([1.0, 2.0], [2.0, 1.0]);
        let stat = |p: &[f64], q: &[f64]| correlate(CorrelationKind::Spearman, p, q).map_or(f64::NAN, |c| c.statistic);
        let small = BootstrapConfig { resamples: 50, confidence: 0.9, seed: 1 };
        assert_eq!(rank_bootstrap_interval(CorrelationKind::Spearman, &a, &b, &small).unwrap().undefined_resamples, bootstrap_interval(&a, &b, stat, &small).unwrap().undefined_resamples);
        assert!(rank_bootstrap_interval(CorrelationKind::Pearson, &x, &y, &cfg).is_err());
        assert!(rank_bootstrap_interval(CorrelationKind::Spearman, &[1.0, f64::NAN, 2.0], &[1.0, 2.0, 3.0], &cfg).is_err());
        let c = vec![1.0; 10];
        assert!(rank_bootstrap_interval(CorrelationKind::KendallTauB, &c, &c, &cfg).is_err());
    }

    #[test]
    fn percentile_matches_numpy_linear() {
        // np.percentile([1, 2, 3, 4], 25) = 1.75
        assert_abs_diff_eq!(percentile_linear(&[1.0, 2.0, 3.0, 4.0], 0.25), 1.75);
    }

    #[test]
    fn williams_by_hand() {
        // r12 = 0.6, r13 = 0.4, r23 = 0.5, n = 100:
        // K = 1 - .36 - .16 - .25 + 2*.6*.4*.5 = 0.47
        // denom = 2*.47*99/97 + (1.0^2/4)*(.5^3) = 0.959381443 + 0.03125 = 0.990631443
        // t = 0.2*sqrt(99*1.5)/sqrt(0.990631443) = 2.44958...
        let w = williams_test(0.6, 0.4, 0.5, 100).unwrap();
        let expected = 0.2 * (99.0_f64 * 1.5).sqrt() / (2.0 * 0.47 * 99.0 / 97.0 + 0.25 * 0.125_f64).sqrt();
        assert_abs_diff_eq!(w.t, expected, epsilon = 1e-12);
        assert_abs_diff_eq!(w.df, 97.0);
        assert_abs_diff_eq!(w.pvalue_two_sided, 2.0 * w.pvalue_one_sided, epsilon = 1e-15);
        assert!(w.pvalue_one_sided < 0.01);
        assert!(williams_test(0.6, 0.4, 0.5, 3).is_err());
        assert!(williams_test(1.5, 0.4, 0.5, 30).is_err());
    }

    #[test]
    fn williams_matches_a_published_value() {
        // The documented example of R's psych::paired.r (Revelle), which implements Williams'
        // T2 (Steiger 1980, eq. 7): paired.r(xy = .5, xz = .3, yz = .4, n = 100) prints
        // "t = 2.06  With probability = 0.04" (two-sided).
        let w = williams_test(0.5, 0.3, 0.4, 100).unwrap();
        assert!((w.t - 2.06).abs() < 0.005, "t = {}", w.t);
        assert!((0.035..0.045).contains(&w.pvalue_two_sided), "p = {}", w.pvalue_two_sided);
    }

    #[test]
    fn system_level_means() {
        let metric = [1.0, 3.0, 2.0, 4.0, 10.0, 12.0];
        let human = [1.0, 1.0, 2.0, 2.0, 3.0, 5.0];
        let systems = ["a", "a", "b", "b", "c", "c"];
        let (names, m, h) = system_means(&metric, &human, &systems).unwrap();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(m, [2.0, 3.0, 11.0]);
        assert_eq!(h, [1.0, 2.0, 4.0]);
        let r = system_level(CorrelationKind::Spearman, &metric, &human, &systems).unwrap();
        assert_abs_diff_eq!(r.statistic, 1.0, epsilon = 1e-12);
    }
}
