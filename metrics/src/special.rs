//! Special functions behind the p-values: the regularised incomplete beta function (Student t,
//! beta distributions) and the normal tail and quantile.
//!
//! The incomplete beta uses the continued fraction of Numerical Recipes (3rd ed., §6.4) with
//! modified Lentz evaluation and `lgamma` from `libm` (a port of FreeBSD's msun); relative
//! accuracy is about 1e-14 over the arguments correlation tests use, which the parity tests with
//! scipy (relative 1e-9) confirm.

/// Regularised incomplete beta `I_x(a, b)`, given both `x` and `y = 1 - x` so that callers can
/// pass the complement without cancellation. NaN outside `0 ≤ x ≤ 1` or for `a, b ≤ 0`.
pub fn beta_inc(a: f64, b: f64, x: f64, y: f64) -> f64 {
    if !(a > 0.0 && b > 0.0 && (0.0..=1.0).contains(&x)) {
        return f64::NAN;
    }
    if x == 0.0 {
        return 0.0;
    }
    if y == 0.0 {
        return 1.0;
    }
    let ln_front = a * x.ln() + b * y.ln() - ln_beta(a, b);
    if x < (a + 1.0) / (a + b + 2.0) { ln_front.exp() * continued_fraction(a, b, x) / a } else { 1.0 - ln_front.exp() * continued_fraction(b, a, y) / b }
}

/// `ln B(a, b)`.
fn ln_beta(a: f64, b: f64) -> f64 {
    libm::lgamma(a) + libm::lgamma(b) - libm::lgamma(a + b)
}

/// Continued fraction for `I_x(a, b)`, modified Lentz.
fn continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const EPS: f64 = 1e-16;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = guard(1.0 - qab * x / qap).recip();
    let mut h = d;
    for m in 1..=10_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &mut c, &mut d);
        let del = lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), &mut c, &mut d);
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// Keeps a Lentz denominator away from zero.
fn guard(v: f64) -> f64 {
    const TINY: f64 = 1e-300;
    if v.abs() < TINY { TINY } else { v }
}

/// One modified-Lentz update with coefficient `aa`; returns the factor `c·d` for `h`.
fn lentz_step(aa: f64, c: &mut f64, d: &mut f64) -> f64 {
    *d = guard(1.0 + aa * *d).recip();
    *c = guard(1.0 + aa / *c);
    *c * *d
}

/// Upper tail of Student's t with `df` degrees of freedom, `P(T > t)` (scipy's
/// `stdtr(df, -t)`). NaN for `df ≤ 0` or NaN input.
pub fn student_t_sf(t: f64, df: f64) -> f64 {
    if df.is_nan() || t.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 0.0 } else { 1.0 };
    }
    let t2 = t * t;
    // I_{df/(df+t²)}(df/2, 1/2) is the two-sided tail.
    let x = df / (df + t2);
    let y = t2 / (df + t2);
    let tail = 0.5 * beta_inc(df / 2.0, 0.5, x, y);
    if t > 0.0 { tail } else { 1.0 - tail }
}

/// Upper tail of the standard normal, `P(Z > z)` (scipy's `ndtr(-z)`).
pub fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// Lower tail of the standard normal, `P(Z ≤ z)`.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// Quantile of the standard normal (inverse of [`normal_cdf`]): Acklam's rational
/// approximation refined by one Halley step, accurate to about 1e-15. NaN outside (0, 1).
pub fn normal_ppf(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return match p {
            0.0 => f64::NEG_INFINITY,
            1.0 => f64::INFINITY,
            _ => f64::NAN,
        };
    }
    #[allow(clippy::excessive_precision)] // Acklam's published coefficients, verbatim
    const A: [f64; 6] = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.383577518672690e2, -3.066479806614716e1, 2.506628277459239];
    #[allow(clippy::excessive_precision)]
    const B: [f64; 5] = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    #[allow(clippy::excessive_precision)]
    const C: [f64; 6] = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
    #[allow(clippy::excessive_precision)]
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    const LOW: f64 = 0.02425;
    let x = if p < LOW {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    // One Halley step on the exact cdf.
    let e = normal_cdf(x) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn known_values() {
        // scipy.special.betainc(2, 3, 0.4) = 0.5248
        assert_relative_eq!(beta_inc(2.0, 3.0, 0.4, 0.6), 0.5248, max_relative = 1e-13);
        // symmetric: I_0.5(a, a) = 0.5
        assert_relative_eq!(beta_inc(7.5, 7.5, 0.5, 0.5), 0.5, max_relative = 1e-13);
        // scipy.stats.t.sf(2.0, 10) = 0.036694017385370196
        assert_relative_eq!(student_t_sf(2.0, 10.0), 0.036_694_017_385_370_196, max_relative = 1e-12);
        // scipy.stats.norm.sf(3) = 0.0013498980316300946
        assert_relative_eq!(normal_sf(3.0), 0.001_349_898_031_630_094_6, max_relative = 1e-14);
        assert_relative_eq!(normal_ppf(0.975), 1.959_963_984_540_054, max_relative = 1e-14);
        assert_relative_eq!(normal_ppf(1e-10), -6.361_340_902_404_056, max_relative = 1e-12);
    }

    #[test]
    fn edges() {
        assert!(beta_inc(-1.0, 2.0, 0.5, 0.5).is_nan());
        assert!(student_t_sf(1.0, 0.0).is_nan());
        assert_eq!(student_t_sf(f64::INFINITY, 3.0), 0.0);
        assert!(normal_ppf(2.0).is_nan());
    }
}
