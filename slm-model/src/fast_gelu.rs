//! The exact (erf-based) GELU of BERT's feed-forward, evaluated on the host for the flex CPU
//! backend.
//!
//! flex evaluates `erf` one element at a time through libm: in all-MiniLM-L6-v2 that was ~17%
//! of an encoding pass (perf, release profile). On a plain flex device this module evaluates
//! `0.5 · x · (1 + erf(x / √2))` with a rational approximation of `erf` that the compiler
//! vectorises: `erf(z) ≈ z · P(z²) / Q(z²)` on `|z| ≤ 3.92` (beyond it `erf` rounds to ±1 in
//! f32), `P` of degree 6 and `Q` of degree 5, fitted for this crate by iteratively reweighted
//! least squares against mpmath's `erf` (max error 1.4e-9 in exact arithmetic, ≤ 4e-7 evaluated
//! in f32; libm's `erff` is within ~1 ulp). The GELU therefore differs from flex's by at most
//! ~1e-6 absolute (tested in `tests/bert.rs`), far inside the 1e-3 the embedding caches allow,
//! so the cache key does not change.
//!
//! Any other device, and an autodiff one (the tensor may need a gradient), gets burn's own
//! `gelu`.

use burn::prelude::*;
use burn::tensor::activation::gelu;
use burn::tensor::{DType, TensorData};

/// `|z|` beyond which `erf(z)` is ±1 in f32.
const ERF_SATURATION: f32 = 3.92;
/// Numerator coefficients, constant term first.
const P: [f32; 7] = [std::f32::consts::FRAC_2_SQRT_PI, 0.184_700_24, 0.054_278_38, 0.003_832_361_3, 0.000_380_377_6, 4.717_996e-6, -1.333_691_4e-8];
/// Denominator coefficients after the leading 1.
const Q: [f32; 5] = [0.497_019_85, 0.113_775_34, 0.015_430_934, 0.001_305_034, 6.342_084e-5];

/// `erf(z)` by the rational approximation, exactly ±1 from [`ERF_SATURATION`] on (as libm's
/// `erff` rounds there, so `gelu(x)` is exactly 0 for very negative `x`); NaN stays NaN.
pub fn erf(z: f32) -> f32 {
    let c = z.clamp(-ERF_SATURATION, ERF_SATURATION);
    let t = c * c;
    let p = ((((((P[6] * t + P[5]) * t + P[4]) * t + P[3]) * t + P[2]) * t + P[1]) * t) + P[0];
    let q = (((((Q[4] * t + Q[3]) * t + Q[2]) * t + Q[1]) * t + Q[0]) * t) + 1.0;
    // A select, not a branch: the loop over a tensor still vectorises.
    if c.abs() >= ERF_SATURATION { z.signum() } else { c * p / q }
}

/// `0.5 · x · (1 + erf(x / √2))`.
pub fn gelu_scalar(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// GELU of `x`: on the host with [`gelu_scalar`] when `x` lives on a plain flex device in f32,
/// burn's `gelu` otherwise.
pub fn gelu_exact<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    let device = x.device();
    if device != Device::flex() || device.is_autodiff() || x.dtype() != DType::F32 {
        return gelu(x);
    }
    let mut data: TensorData = x.into_data();
    match data.as_mut_slice::<f32>() {
        Ok(values) => values.iter_mut().for_each(|v| *v = gelu_scalar(*v)),
        // Not reached (the dtype was checked); burn's own path stays correct if it were.
        Err(_) => return gelu(Tensor::from_data(data, &device)),
    }
    Tensor::from_data(data, &device)
}
