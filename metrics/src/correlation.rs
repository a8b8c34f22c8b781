//! Pearson, Spearman and Kendall tau-b with two-sided p-values, aligned to scipy 1.17
//! (`scipy.stats.pearsonr`, `spearmanr`, `kendalltau`); see `../shared/golden/README.md` §2.
//!
//! Where scipy returns NaN, these functions return NaN too, and say why in
//! [`Correlation::undefined`]; where scipy raises, they return an [`Error`].
//!
//! | input | Pearson | Spearman | Kendall |
//! |---|---|---|---|
//! | length mismatch | [`Error::LengthMismatch`] | same | same |
//! | n < 2 | [`Error::TooFewObservations`] | NaN, [`Undefined::TooFewObservations`] | same as Spearman |
//! | constant input | NaN, [`Undefined::ConstantInput`] | same | same |
//! | NaN, [`NanPolicy::Propagate`] | NaN, [`Undefined::NanInput`] | same | same |
//! | NaN, [`NanPolicy::Omit`] | pairs with a NaN dropped | same | same |
//! | NaN, [`NanPolicy::Raise`] | [`Error::NanInput`] | same | same |
//! | ±inf | NaN, [`Undefined::NonFiniteInput`] | finite (ranks) | finite (ranks) |
//! | n = 2 | ±1, p = 1 | ±1, p = NaN (0 degrees of freedom) | ±1, p = 1 |

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::special::{beta_inc, normal_sf, student_t_sf};

/// Which correlation coefficient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CorrelationKind {
    /// Pearson's r.
    Pearson,
    /// Spearman's rho (Pearson on average ranks).
    Spearman,
    /// Kendall's tau-b.
    KendallTauB,
}

impl CorrelationKind {
    /// All three, in the order reports list them.
    pub const ALL: [Self; 3] = [Self::Pearson, Self::Spearman, Self::KendallTauB];

    /// Short display name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pearson => "Pearson",
            Self::Spearman => "Spearman",
            Self::KendallTauB => "Kendall",
        }
    }
}

/// What to do with NaN in the input (scipy's `nan_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NanPolicy {
    /// The result is NaN ([`Undefined::NanInput`]).
    #[default]
    Propagate,
    /// Pairs where either value is NaN are dropped.
    Omit,
    /// [`Error::NanInput`].
    Raise,
}

/// How Kendall's p-value is computed (scipy's `method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KendallMethod {
    /// Exact when there are no ties and n ≤ 33 or the discordant count is ≤ 1, else asymptotic.
    #[default]
    Auto,
    /// The exact null distribution (no ties allowed).
    Exact,
    /// The tie-corrected normal approximation.
    Asymptotic,
}

/// Why a coefficient is NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Undefined {
    /// An input is constant.
    ConstantInput,
    /// Fewer than two observations.
    TooFewObservations,
    /// NaN in the input under [`NanPolicy::Propagate`].
    NanInput,
    /// An infinite value where the statistic needs finite ones.
    NonFiniteInput,
    /// The statistic is defined but its p-value is not (n = 2 for Spearman).
    NoDegreesOfFreedom,
    /// Finite values whose sum or spread overflows the float range (Pearson on values near
    /// ±1.8e308): NaN, as scipy gives.
    Overflow,
}

impl Undefined {
    /// The reason in words, for reports.
    pub fn reason(self) -> &'static str {
        match self {
            Self::ConstantInput => "constant input",
            Self::TooFewObservations => "fewer than two observations",
            Self::NanInput => "NaN in the input",
            Self::NonFiniteInput => "an infinite value",
            Self::NoDegreesOfFreedom => "no degrees of freedom for the p-value",
            Self::Overflow => "the values overflow the float range",
        }
    }
}

impl std::fmt::Display for Undefined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.reason())
    }
}

/// A coefficient and its two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Correlation {
    /// The coefficient, in [-1, 1], or NaN when undefined.
    #[serde(with = "crate::nan_as_null")]
    pub statistic: f64,
    /// Two-sided p-value, or NaN when undefined.
    #[serde(with = "crate::nan_as_null")]
    pub pvalue: f64,
    /// Number of observations used.
    pub n: usize,
    /// Why `statistic` or `pvalue` is NaN, if it is.
    pub undefined: Option<Undefined>,
}

impl Correlation {
    fn nan(n: usize, why: Undefined) -> Self {
        Self { statistic: f64::NAN, pvalue: f64::NAN, n, undefined: Some(why) }
    }

    /// Whether the statistic is a number.
    pub fn is_defined(&self) -> bool {
        self.undefined.is_none() || self.undefined == Some(Undefined::NoDegreesOfFreedom)
    }
}

/// Options shared by the three coefficients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CorrelationOptions {
    /// NaN handling.
    pub nan_policy: NanPolicy,
    /// Kendall p-value method.
    pub kendall_method: KendallMethod,
}

/// Computes `kind` with default options.
///
/// # Errors
/// See the table in the module docs.
///
/// # Examples
/// ```
/// use dialeval_metrics::correlation::{correlate, CorrelationKind};
/// let r = correlate(CorrelationKind::Spearman, &[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0])?;
/// assert!((r.statistic - 0.8).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn correlate(kind: CorrelationKind, x: &[f64], y: &[f64]) -> Result<Correlation> {
    correlate_with(kind, x, y, &CorrelationOptions::default())
}

/// Computes `kind` with explicit options.
///
/// # Errors
/// See the table in the module docs.
pub fn correlate_with(kind: CorrelationKind, x: &[f64], y: &[f64], options: &CorrelationOptions) -> Result<Correlation> {
    if x.len() != y.len() {
        return Err(Error::LengthMismatch { left: x.len(), right: y.len() });
    }
    if kind == CorrelationKind::Pearson
        && let Some(c) = pearson_finite(x, y)
    {
        // Finite input: no NaN to handle, and the pass that found it so also summed it.
        return Ok(c);
    }
    let has_nan = any_nan(x) || any_nan(y);
    let (xo, yo);
    let (x, y) = if has_nan {
        match options.nan_policy {
            NanPolicy::Raise => return Err(Error::NanInput),
            NanPolicy::Propagate => {
                if kind == CorrelationKind::Pearson && x.len() < 2 {
                    return Err(Error::TooFewObservations { n: x.len(), needed: 2 });
                }
                return Ok(Correlation::nan(x.len(), Undefined::NanInput));
            }
            NanPolicy::Omit => {
                (xo, yo) = x.iter().zip(y).filter(|(a, b)| !a.is_nan() && !b.is_nan()).map(|(a, b)| (*a, *b)).unzip::<_, _, Vec<f64>, Vec<f64>>();
                (xo.as_slice(), yo.as_slice())
            }
        }
    } else {
        (x, y)
    };
    match kind {
        CorrelationKind::Pearson => pearson(x, y),
        CorrelationKind::Spearman => spearman(x, y),
        CorrelationKind::KendallTauB => kendall_tau_b(x, y, options.kendall_method),
    }
}

/// Pearson's r with scipy's beta-distribution p-value (no NaN handling: see [`correlate_with`]).
///
/// # Errors
/// [`Error::TooFewObservations`] for n < 2, [`Error::LengthMismatch`].
pub fn pearson(x: &[f64], y: &[f64]) -> Result<Correlation> {
    let n = x.len();
    if n != y.len() {
        return Err(Error::LengthMismatch { left: n, right: y.len() });
    }
    if n < 2 {
        return Err(Error::TooFewObservations { n, needed: 2 });
    }
    Ok(pearson_finite(x, y).unwrap_or_else(|| {
        let why = if is_constant(x) || is_constant(y) { Undefined::ConstantInput } else { Undefined::NonFiniteInput };
        Correlation::nan(n, why)
    }))
}

/// Pearson on equally long input of n ≥ 2 finite values, or `None` where some value is not
/// finite or n < 2 (the caller decides what that means).
fn pearson_finite(x: &[f64], y: &[f64]) -> Option<Correlation> {
    let n = x.len();
    if n < 2 || n != y.len() {
        return None;
    }
    let ([tx, ty], [sx, sy]) = pairwise_sums_scanned([x, y], |[a, b]| [a, b]);
    if !sx.finite(tx, x) || !sy.finite(ty, y) {
        return None;
    }
    if sx.min == sx.max || sy.min == sy.max {
        return Some(Correlation::nan(n, Undefined::ConstantInput));
    }
    let r = pearson_r(x, y, [tx, ty], [sx, sy]);
    if r.is_nan() {
        // Finite values (checked above) whose sum or spread overflowed.
        return Some(Correlation::nan(n, Undefined::Overflow));
    }
    if n == 2 {
        return Some(Correlation { statistic: r.round(), pvalue: 1.0, n, undefined: None });
    }
    // scipy: 2 * beta(n/2 - 1, n/2 - 1, loc=-1, scale=2).sf(|r|)
    let ab = n as f64 / 2.0 - 1.0;
    let xs = (r.abs() + 1.0) / 2.0;
    let pvalue = 2.0 * beta_inc(ab, ab, 1.0 - xs, xs);
    Some(Correlation { statistic: r, pvalue, n, undefined: None })
}

/// r as scipy 1.17 defines it (centre, scale by the largest deviation, normalise, dot), from
/// the sums and extremes of a first pass and one more pass for the three scaled sums of products.
/// All sums are numpy-style pairwise sums.
///
/// The largest deviation `max |v − m|` comes from the extremes: rounding is monotone, so
/// `fl(max − m)` and `fl(m − min)` are the largest rounded deviations above and below the mean,
/// the same bits scipy's `abs(xm).max()` yields.
fn pearson_r(x: &[f64], y: &[f64], [tx, ty]: [f64; 2], [sx, sy]: [Scan; 2]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (tx / n, ty / n);
    let (ax, ay) = ((sx.max - mx).max(mx - sx.min), (sy.max - my).max(my - sy.min));
    let (ix, iy) = (1.0 / ax, 1.0 / ay);
    // Scaled by the largest deviation before summing, as scipy does. A multiplication by the
    // reciprocal is faster than scipy's division and as exact where the reciprocal is a normal
    // number.
    if ix.is_normal() && iy.is_normal() {
        let [sxx, syy, sxy] = pairwise_sums([x, y], |[a, b]| {
            let (dx, dy) = ((a - mx) * ix, (b - my) * iy);
            [dx * dx, dy * dy, dx * dy]
        });
        return (sxy / (sxx.sqrt() * syy.sqrt())).clamp(-1.0, 1.0);
    }
    // At the edges of the range (deviations below ~5.6e-309, whose reciprocal overflows, or
    // above ~4.5e307, whose reciprocal is subnormal) scipy's own steps, whose roundings decide
    // the result there: the norms `max · ‖d / max‖`, then the dot of the deviations divided by
    // them.
    let [sxx, syy] = pairwise_sums([x, y], |[a, b]| {
        let (dx, dy) = ((a - mx) / ax, (b - my) / ay);
        [dx * dx, dy * dy]
    });
    let (nx, ny) = (ax * sxx.sqrt(), ay * syy.sqrt());
    let [r] = pairwise_sums([x, y], |[a, b]| [((a - mx) / nx) * ((b - my) / ny)]);
    r.clamp(-1.0, 1.0)
}

/// Smallest and largest value of a series, from one pass the compiler can vectorise (eight
/// lanes, no branch, no early exit). NaN is skipped: a NaN is seen in the series' sum instead.
#[derive(Debug, Clone, Copy)]
struct Scan {
    min: f64,
    max: f64,
}

impl Scan {
    fn of(v: &[f64]) -> Self {
        let (mut lo, mut hi) = ([f64::INFINITY; 8], [f64::NEG_INFINITY; 8]);
        let mut lane = |j: usize, a: f64| {
            lo[j] = if a < lo[j] { a } else { lo[j] };
            hi[j] = if a > hi[j] { a } else { hi[j] };
        };
        let chunks = v.chunks_exact(8);
        let rest = chunks.remainder();
        for c in chunks {
            for (j, &a) in c.iter().enumerate() {
                lane(j, a);
            }
        }
        for (j, &a) in rest.iter().enumerate() {
            lane(j, a);
        }
        Self { min: lo.into_iter().fold(f64::INFINITY, f64::min), max: hi.into_iter().fold(f64::NEG_INFINITY, f64::max) }
    }

    /// The scan of two parts together.
    fn merge(self, other: Self) -> Self {
        Self { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    /// Whether the scanned series, whose sum is `sum`, is all finite: its extremes are, and its
    /// sum is (a NaN makes it NaN) or else the series holds no NaN (the sum overflowed).
    fn finite(self, sum: f64, v: &[f64]) -> bool {
        self.min.is_finite() && self.max.is_finite() && (sum.is_finite() || !v.iter().any(|a| a.is_nan()))
    }
}

/// Whether every value is finite, in one vectorisable pass: v * 0 is 0 for finite v and NaN
/// for ±inf and NaN, so the sum of them says whether all are.
fn all_finite(v: &[f64]) -> bool {
    let mut zero = [0.0_f64; 4];
    let chunks = v.chunks_exact(4);
    let rest = chunks.remainder();
    for c in chunks {
        for (z, a) in zero.iter_mut().zip(c) {
            *z += a * 0.0;
        }
    }
    for (z, a) in zero.iter_mut().zip(rest) {
        *z += a * 0.0;
    }
    zero.iter().sum::<f64>() == 0.0
}

/// Whether `v` holds a NaN: only input with a non-finite value is searched element by element.
fn any_nan(v: &[f64]) -> bool {
    !all_finite(v) && v.iter().any(|a| a.is_nan())
}

/// Terms from which [`pairwise_sums`] splits its work over two threads: a half of fewer terms
/// is summed in less time than handing it to another thread takes (a pass over 50,000 terms
/// takes a few tens of µs).
const PARALLEL_TERMS: usize = 1 << 16;

/// Observations from which the two rankings of Spearman and Kendall run on two threads.
const PARALLEL_RANKS: usize = 1 << 15;

/// numpy's pairwise summation (`pairwise_sum` in `numpy/_core/src/umath/loops_utils.h.src`),
/// so means agree with `np.mean` to the last bit.
pub(crate) fn pairwise_sum(a: &[f64]) -> f64 {
    pairwise_sums([a], |[v]| [v])[0]
}

/// numpy's pairwise summation of `K` series of terms at once, each term computed from the
/// elements at one position of `S` equally long input series, without materialising them:
/// below 8 terms a plain running sum, up to 128 eight interleaved accumulators, above that two
/// halves. The eight accumulators of each series sit side by side, so the compiler vectorises
/// the term and the additions across them.
///
/// Above [`PARALLEL_TERMS`] the two halves of a split are summed on two threads: the splits are
/// numpy's whatever the thread count, so the result is bit-identical.
fn pairwise_sums<const S: usize, const K: usize>(series: [&[f64]; S], term: impl Fn([f64; S]) -> [f64; K] + Copy + Send + Sync) -> [f64; K] {
    pairwise::<S, K, false>(series, term).0
}

/// [`pairwise_sums`] that also scans each input series for its extremes in the same pass:
/// each block of at most 128 elements is scanned while it is in the cache.
fn pairwise_sums_scanned<const S: usize, const K: usize>(series: [&[f64]; S], term: impl Fn([f64; S]) -> [f64; K] + Copy + Send + Sync) -> ([f64; K], [Scan; S]) {
    pairwise::<S, K, true>(series, term)
}

fn pairwise<const S: usize, const K: usize, const SCAN: bool>(series: [&[f64]; S], term: impl Fn([f64; S]) -> [f64; K] + Copy + Send + Sync) -> ([f64; K], [Scan; S]) {
    fn add<const K: usize>(mut a: [f64; K], b: [f64; K]) -> [f64; K] {
        for (o, v) in a.iter_mut().zip(b) {
            *o += v;
        }
        a
    }
    /// The terms at positions `at..at + 8`, one row of eight per output series.
    #[inline(always)]
    fn eight<const S: usize, const K: usize>(series: &[&[f64]; S], at: usize, term: impl Fn([f64; S]) -> [f64; K]) -> [[f64; 8]; K] {
        let blocks: [&[f64]; S] = std::array::from_fn(|s| &series[s][at..at + 8]);
        let mut out = [[0.0; 8]; K];
        for j in 0..8 {
            let t = term(std::array::from_fn(|s| blocks[s][j]));
            for (row, v) in out.iter_mut().zip(t) {
                row[j] = v;
            }
        }
        out
    }
    let n = series.first().map_or(0, |s| s.len());
    let at = |i: usize| term(std::array::from_fn(|s| series[s][i]));
    let scans = || if SCAN { series.map(Scan::of) } else { [Scan { min: 0.0, max: 0.0 }; S] };
    if n < 8 {
        ((0..n).fold([0.0; K], |acc, i| add(acc, at(i))), scans())
    } else if n <= 128 {
        let mut r = eight(&series, 0, term);
        let mut i = 8;
        while i < n - n % 8 {
            let t = eight(&series, i, term);
            for (row, add) in r.iter_mut().zip(&t) {
                for (o, v) in row.iter_mut().zip(add) {
                    *o += v;
                }
            }
            i += 8;
        }
        let mut res = r.map(|r| ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])));
        for k in i..n {
            res = add(res, at(k));
        }
        (res, scans())
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        let lo = series.map(|s| &s[..n2]);
        let hi = series.map(|s| &s[n2..]);
        let ((a, sa), (b, sb)) = if n >= PARALLEL_TERMS {
            dialeval_common::par_join(|| pairwise::<S, K, SCAN>(lo, term), || pairwise::<S, K, SCAN>(hi, term))
        } else {
            (pairwise::<S, K, SCAN>(lo, term), pairwise::<S, K, SCAN>(hi, term))
        };
        let mut scan = sa;
        for (s, t) in scan.iter_mut().zip(sb) {
            *s = s.merge(t);
        }
        (add(a, b), scan)
    }
}

/// Indices of `v` in ascending total order (NaN last), stable for equal values.
///
/// # Complexity
/// O(n) for large inputs with many distinct values (an LSD radix sort over the IEEE-754 bits);
/// O(n log k) for inputs of few distinct values, such as ratings on a scale (a stable sort,
/// which partitions equal keys together, where the radix sort would pass over every digit).
fn sorted_order(v: &[f64]) -> Vec<u32> {
    // Map f64 bits to u64 so that unsigned order is total order.
    let key = |x: f64| {
        let b = x.to_bits();
        if b >> 63 == 1 { !b } else { b | (1 << 63) }
    };
    let mut items: Vec<(u64, u32)> = v.iter().enumerate().map(|(i, &x)| (key(x), i as u32)).collect();
    if v.len() < 1024 {
        items.sort_unstable();
    } else if few_distinct(&items) {
        items.sort_by_key(|&(k, _)| k);
    } else {
        radix_sort(&mut items);
    }
    items.into_iter().map(|(_, i)| i).collect()
}

/// Whether the first 512 keys take at most 32 values: a scale of ratings rather than scores.
/// Either answer gives the same order; it only picks the faster sort.
fn few_distinct(items: &[(u64, u32)]) -> bool {
    let mut sample: Vec<u64> = items.iter().take(512).map(|&(k, _)| k).collect();
    sample.sort_unstable();
    sample.dedup();
    sample.len() <= 32
}

/// Bits per digit of [`radix_sort`]: 2,048 buckets keep the scatter's write streams in the cache.
const RADIX_BITS: u32 = 11;

/// Stable LSD radix sort of `(key, payload)` pairs by key, [`RADIX_BITS`] bits per pass. One
/// read pass counts every digit; passes whose digit is the same for every key are skipped.
fn radix_sort(items: &mut Vec<(u64, u32)>) {
    const BUCKETS: usize = 1 << RADIX_BITS;
    const DIGITS: usize = 64_usize.div_ceil(RADIX_BITS as usize);
    let digit = |k: u64, d: usize| ((k >> (d as u32 * RADIX_BITS)) as usize) & (BUCKETS - 1);
    let mut counts = vec![[0_u32; BUCKETS]; DIGITS];
    for &(k, _) in items.iter() {
        for (d, c) in counts.iter_mut().enumerate() {
            c[digit(k, d)] += 1;
        }
    }
    let mut buffer = vec![(0_u64, 0_u32); items.len()];
    for (d, c) in counts.iter_mut().enumerate() {
        if c.iter().any(|&m| m as usize == items.len()) {
            continue;
        }
        let mut sum = 0;
        for slot in c.iter_mut() {
            let here = *slot;
            *slot = sum;
            sum += here;
        }
        for &item in items.iter() {
            let b = digit(item.0, d);
            buffer[c[b] as usize] = item;
            c[b] += 1;
        }
        std::mem::swap(items, &mut buffer);
    }
}

fn is_constant(v: &[f64]) -> bool {
    v.first().is_some_and(|f| v.iter().all(|a| a == f))
}

/// Average ranks (1-based), ties sharing the mean of their positions (scipy's
/// `rankdata(method='average')`). NaN sorts last, as in numpy.
pub fn rank_average(v: &[f64]) -> Vec<f64> {
    let order = sorted_order(v);
    let mut ranks = vec![0.0; v.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && v[order[j] as usize] == v[order[i] as usize] {
            j += 1;
        }
        // positions i..j (0-based) share rank mean(i+1 ..= j)
        let rank = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            ranks[k as usize] = rank;
        }
        i = j;
    }
    ranks
}

/// Spearman's rho: Pearson on average ranks, p-value from t with n − 2 degrees of freedom
/// (no NaN handling: see [`correlate_with`]).
///
/// # Errors
/// [`Error::LengthMismatch`], as every correlation helper; n < 2 is NaN with
/// [`Undefined::TooFewObservations`], as scipy.
pub fn spearman(x: &[f64], y: &[f64]) -> Result<Correlation> {
    let n = x.len();
    if n != y.len() {
        return Err(Error::LengthMismatch { left: n, right: y.len() });
    }
    if n <= 1 {
        return Ok(Correlation::nan(n, Undefined::TooFewObservations));
    }
    if is_constant(x) || is_constant(y) {
        return Ok(Correlation::nan(n, Undefined::ConstantInput));
    }
    let (rx, ry) = if n >= PARALLEL_RANKS { dialeval_common::par_join(|| rank_average(x), || rank_average(y)) } else { (rank_average(x), rank_average(y)) };
    let rs = corrcoef(&rx, &ry);
    let dof = n as f64 - 2.0;
    let t = rs * (dof / ((rs + 1.0) * (1.0 - rs))).max(0.0).sqrt();
    let pvalue = 2.0 * student_t_sf(t.abs(), dof);
    let undefined = pvalue.is_nan().then_some(Undefined::NoDegreesOfFreedom);
    Ok(Correlation { statistic: rs, pvalue, n, undefined })
}

/// numpy's `corrcoef` for two variables: covariance over the product of standard deviations.
fn corrcoef(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let [tx, ty] = pairwise_sums([x, y], |[a, b]| [a, b]);
    let (mx, my) = (tx / n, ty / n);
    let [cxy, cxx, cyy] = pairwise_sums([x, y], |[a, b]| {
        let (dx, dy) = (a - mx, b - my);
        [dx * dy, dx * dx, dy * dy]
    });
    // numpy divides each by n − 1; the ratio is the same.
    (cxy / cxx.sqrt() / cyy.sqrt()).clamp(-1.0, 1.0)
}

/// Kendall's tau-b and its p-value (scipy's `kendalltau(variant='b')`).
///
/// # Complexity
/// O(n log n): sorting plus a Fenwick-tree count of discordant pairs (Knight 1966).
///
/// # Errors
/// [`Error::ExactWithTies`] when [`KendallMethod::Exact`] is asked for tied data.
pub fn kendall_tau_b(x: &[f64], y: &[f64], method: KendallMethod) -> Result<Correlation> {
    let n = x.len();
    if n != y.len() {
        return Err(Error::LengthMismatch { left: n, right: y.len() });
    }
    if n == 0 {
        return Ok(Correlation::nan(n, Undefined::TooFewObservations));
    }
    let c = KendallCounts::new(x, y);
    if c.xtie == c.tot || c.ytie == c.tot {
        let why = if n < 2 { Undefined::TooFewObservations } else { Undefined::ConstantInput };
        return Ok(Correlation::nan(n, why));
    }
    let con_minus_dis = c.tot as f64 - c.xtie as f64 - c.ytie as f64 + c.ntie as f64 - 2.0 * c.dis as f64;
    let tau = (con_minus_dis / (c.tot as f64 - c.xtie as f64).sqrt() / (c.tot as f64 - c.ytie as f64).sqrt()).clamp(-1.0, 1.0);
    let no_ties = c.xtie == 0 && c.ytie == 0;
    let exact = match method {
        KendallMethod::Exact if !no_ties => return Err(Error::ExactWithTies),
        KendallMethod::Exact => true,
        KendallMethod::Asymptotic => false,
        KendallMethod::Auto => no_ties && (n <= 33 || c.dis.min(c.tot - c.dis) <= 1),
    };
    let pvalue = if exact {
        kendall_p_exact(n as u64, c.tot - c.dis)
    } else {
        let size = n as f64;
        let m = size * (size - 1.0);
        let var = (m * (2.0 * size + 5.0) - c.x1 - c.y1) / 18.0 + (2.0 * c.xtie as f64 * c.ytie as f64) / m + c.x0 * c.y0 / (9.0 * m * (size - 2.0));
        let z = con_minus_dis / var.sqrt();
        2.0 * normal_sf(z.abs())
    };
    Ok(Correlation { statistic: tau, pvalue, n, undefined: None })
}

struct KendallCounts {
    tot: u64,
    dis: u64,
    ntie: u64,
    xtie: u64,
    ytie: u64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

/// Dense ranks (1-based) of `v` (equal values share a rank, ranks have no gaps), the number of
/// distinct values, and the positions of `v` in ascending order (stable for ties).
fn dense_ranks(v: &[f64]) -> (Vec<u32>, u32, Vec<u32>) {
    let order = sorted_order(v);
    let mut ranks = vec![0; v.len()];
    let mut rank = 0;
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || v[i as usize] != v[order[k - 1] as usize] {
            rank += 1;
        }
        ranks[i as usize] = rank;
    }
    (ranks, rank, order)
}

/// `(pairs tied, Σ t(t−1)(t−2), Σ t(t−1)(2t+5))` over tie groups of sizes `t`.
fn tie_stats(ranks: &[u32], distinct: u32) -> (u64, f64, f64) {
    let mut count = vec![0_u64; distinct as usize + 1];
    for &r in ranks {
        count[r as usize] += 1;
    }
    let mut out = (0, 0.0, 0.0);
    for &t in count.iter().filter(|&&t| t > 1) {
        let tf = t as f64;
        out.0 += t * (t - 1) / 2;
        out.1 += tf * (tf - 1.0) * (tf - 2.0);
        out.2 += tf * (tf - 1.0) * (2.0 * tf + 5.0);
    }
    out
}

impl KendallCounts {
    fn new(x: &[f64], y: &[f64]) -> Self {
        let n = x.len();
        let ((rx, x_distinct, by_x), (ry, y_distinct, by_y)) = if n >= PARALLEL_RANKS { dialeval_common::par_join(|| dense_ranks(x), || dense_ranks(y)) } else { (dense_ranks(x), dense_ranks(y)) };
        // Positions by (x rank, y rank): without ties in x the order by x; else a stable
        // counting sort by x rank of the order by y.
        let order = if x_distinct as usize == n {
            by_x
        } else {
            let mut start = vec![0_u32; x_distinct as usize + 2];
            for &r in &rx {
                start[r as usize + 1] += 1;
            }
            for r in 1..start.len() {
                start[r] += start[r - 1];
            }
            let mut order = vec![0_u32; n];
            for &i in &by_y {
                let slot = &mut start[rx[i as usize] as usize];
                order[*slot as usize] = i;
                *slot += 1;
            }
            order
        };
        let xs: Vec<u32> = order.iter().map(|&i| rx[i as usize]).collect();
        let ys: Vec<usize> = order.iter().map(|&i| ry[i as usize] as usize).collect();
        // Discordant pairs, scipy's `_kendall_dis` (Fenwick tree over y ranks).
        let sup = y_distinct as usize + 1;
        let mut tree = vec![0_u64; sup];
        let (mut dis, mut i, mut k) = (0_u64, 0, 0);
        while i < n {
            while k < n && xs[i] == xs[k] {
                dis += i as u64;
                let mut idx = ys[k];
                while idx != 0 {
                    dis -= tree[idx];
                    idx &= idx - 1;
                }
                k += 1;
            }
            while i < k {
                let mut idx = ys[i];
                while idx < sup {
                    tree[idx] += 1;
                    idx += idx & idx.wrapping_neg();
                }
                i += 1;
            }
        }
        let mut ntie = 0;
        let mut run = 1_u64;
        for j in 1..=n {
            if j < n && xs[j] == xs[j - 1] && ys[j] == ys[j - 1] {
                run += 1;
            } else {
                ntie += run * (run - 1) / 2;
                run = 1;
            }
        }
        let (xtie, x0, x1) = tie_stats(&rx, x_distinct);
        let (ytie, y0, y1) = tie_stats(&ry, y_distinct);
        let tot = (n as u64 * (n as u64).saturating_sub(1)) / 2;
        Self { tot, dis, ntie, xtie, ytie, x0, x1, y0, y1 }
    }
}

/// Exact two-sided p-value of Kendall's statistic with `c` concordant pairs among `n` untied
/// observations (scipy's `mstats_basic._kendall_p_exact`, Kendall 1970).
fn kendall_p_exact(n: u64, c: u64) -> f64 {
    let pairs = n * (n - 1) / 2;
    let c = c.min(pairs - c);
    let factorial = |k: u64| (1..=k).fold(1.0_f64, |f, i| f * i as f64);
    let prob = if n <= 2 {
        1.0
    } else if c == 0 {
        if n < 171 { 2.0 / factorial(n) } else { 0.0 }
    } else if c == 1 {
        if n < 172 { 2.0 / factorial(n - 1) } else { 0.0 }
    } else if 4 * c == n * (n - 1) {
        1.0
    } else {
        let c = c as usize;
        let mut new = vec![0.0_f64; c + 1];
        new[0] = 1.0;
        new[1] = 1.0;
        for j in 3..=n as usize {
            let mut acc = 0.0;
            for v in &mut new {
                acc += *v;
                *v = acc;
            }
            if n >= 171 {
                for v in &mut new {
                    *v /= j as f64;
                }
            }
            if j <= c {
                let old = new[..=c - j].to_vec();
                for (k, o) in old.iter().enumerate() {
                    new[j + k] -= o;
                }
            }
        }
        let total = crate::correlation::pairwise_sum(&new);
        if n < 171 { 2.0 * total / factorial(n) } else { total }
    };
    prob.clamp(0.0, 1.0)
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn every_helper_reports_a_length_mismatch_alike() {
        let (x, y) = ([1.0, 2.0, 3.0], [1.0, 2.0]);
        let mismatch = |r: Result<Correlation>| match r {
            Err(Error::LengthMismatch { left: 3, right: 2 }) => {}
            other => panic!("expected LengthMismatch {{ 3, 2 }}, got {other:?}"),
        };
        mismatch(pearson(&x, &y));
        mismatch(spearman(&x, &y));
        for method in [KendallMethod::Auto, KendallMethod::Exact, KendallMethod::Asymptotic] {
            mismatch(kendall_tau_b(&x, &y, method));
        }
        for kind in [CorrelationKind::Pearson, CorrelationKind::Spearman, CorrelationKind::KendallTauB] {
            mismatch(correlate(kind, &x, &y));
        }
        // n < 2 is scipy's NaN for the rank coefficients, an error for Pearson.
        assert_eq!(spearman(&[1.0], &[2.0]).unwrap().undefined, Some(Undefined::TooFewObservations));
        assert!(matches!(pearson(&[1.0], &[2.0]), Err(Error::TooFewObservations { n: 1, needed: 2 })));
    }

    #[test]
    fn ranks_average_ties() {
        assert_eq!(rank_average(&[10.0, 20.0, 10.0, 30.0]), vec![1.5, 3.0, 1.5, 4.0]);
    }

    fn lcg(n: usize, seed: u64, levels: f64) -> Vec<f64> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                ((state >> 11) as f64 / (1u64 << 53) as f64 * levels).floor() - levels / 3.0
            })
            .collect()
    }

    #[test]
    fn large_input_ranks_match_a_comparison_sort() {
        // 700 levels take the radix sort, 7 the stable sort for few distinct values.
        for levels in [700.0, 7.0] {
            let v = lcg(5000, 3, levels);
            assert_eq!(few_distinct(&v.iter().map(|&x| (x.to_bits(), 0)).collect::<Vec<_>>()), levels < 32.0);
            let mut order: Vec<usize> = (0..v.len()).collect();
            order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
            let fast = rank_average(&v);
            for (k, &i) in order.iter().enumerate() {
                let ties = v.iter().filter(|&&x| x == v[i]).count();
                let below = v.iter().filter(|&&x| x < v[i]).count();
                assert_eq!(fast[i], below as f64 + (ties as f64 + 1.0) / 2.0, "{levels} levels, element {k}");
            }
            let stable: Vec<u32> = order.iter().map(|&i| i as u32).collect();
            assert_eq!(sorted_order(&v), stable, "{levels} levels: ties keep their input order");
        }
    }

    #[test]
    fn kendall_counts_match_the_quadratic_definition() {
        // Ties on both sides (radix and stable-sort ranking), none in x (the x order is the
        // pair order), none in y, none at all, and a three-point scale.
        for (lx, ly) in [(40.0, 25.0), (1e12, 25.0), (25.0, 1e12), (1e12, 1e12), (3.0, 40.0)] {
            kendall_counts_match_for(&lcg(1500, 5, lx), &lcg(1500, 9, ly));
        }
    }

    fn kendall_counts_match_for(x: &[f64], y: &[f64]) {
        let (mut con, mut dis) = (0_i64, 0_i64);
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                // f64::signum(0.0) is 1.0, so compare explicitly.
                let sign = |d: f64| {
                    if d > 0.0 {
                        1.0
                    } else if d < 0.0 {
                        -1.0
                    } else {
                        0.0
                    }
                };
                let s = sign(x[i] - x[j]) * sign(y[i] - y[j]);
                if s > 0.0 {
                    con += 1;
                } else if s < 0.0 {
                    dis += 1;
                }
            }
        }
        let c = KendallCounts::new(x, y);
        assert_eq!(c.dis as i64, dis);
        let con_minus_dis = c.tot as f64 - c.xtie as f64 - c.ytie as f64 + c.ntie as f64 - 2.0 * c.dis as f64;
        assert_eq!(con_minus_dis as i64, con - dis);
    }

    #[test]
    fn pearson_sees_every_non_finite_value() {
        let opts = |nan_policy| CorrelationOptions { nan_policy, ..CorrelationOptions::default() };
        let base: Vec<f64> = (0..300).map(|i| f64::from(i % 17)).collect();
        let y: Vec<f64> = (0..300).map(|i| f64::from(i % 5)).collect();
        for at in [0, 7, 150, 299] {
            for (bad, why) in [(f64::INFINITY, Undefined::NonFiniteInput), (f64::NEG_INFINITY, Undefined::NonFiniteInput), (f64::NAN, Undefined::NanInput)] {
                let mut x = base.clone();
                x[at] = bad;
                let r = correlate_with(CorrelationKind::Pearson, &x, &y, &opts(NanPolicy::Propagate)).unwrap();
                assert_eq!(r.undefined, Some(why), "{bad} at {at}");
                let swapped = correlate_with(CorrelationKind::Pearson, &y, &x, &opts(NanPolicy::Propagate)).unwrap();
                assert_eq!(swapped.undefined, Some(why), "{bad} at {at}, second series");
            }
            let mut x = base.clone();
            x[at] = f64::NAN;
            let omitted = correlate_with(CorrelationKind::Pearson, &x, &y, &opts(NanPolicy::Omit)).unwrap();
            let mut keep: Vec<usize> = (0..300).collect();
            keep.remove(at);
            let by_hand = pearson(&keep.iter().map(|&i| base[i]).collect::<Vec<_>>(), &keep.iter().map(|&i| y[i]).collect::<Vec<_>>()).unwrap();
            assert_eq!(omitted.statistic.to_bits(), by_hand.statistic.to_bits());
        }
        // Constant before non-finite, as scipy checks them.
        assert_eq!(pearson(&[f64::INFINITY; 3], &[1.0, 2.0, 3.0]).unwrap().undefined, Some(Undefined::ConstantInput));
        assert_eq!(pearson(&[2.0; 300], &y).unwrap().undefined, Some(Undefined::ConstantInput));
    }

    #[test]
    fn kendall_exact_small() {
        // Perfect n = 5: p = 2/5! = 0.01666…
        let r = kendall_tau_b(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1.0, 2.0, 3.0, 4.0, 5.0], KendallMethod::Auto).unwrap();
        assert!((r.pvalue - 2.0 / 120.0).abs() < 1e-15);
        assert!(matches!(kendall_tau_b(&[1.0, 1.0, 2.0], &[1.0, 2.0, 3.0], KendallMethod::Exact), Err(Error::ExactWithTies)));
    }
}
