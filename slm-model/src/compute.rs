//! Where the models run: burn's CPU backend (`flex`) or a GPU through wgpu, chosen at run time.
//!
//! Every entry point that builds tensors takes a [`Compute`] (training: [`crate::config::TrainConfig::compute`],
//! [`crate::ruber::RuberConfig::compute`]) or a `Device` made from one (scoring: `Scorer::load`,
//! `RuberScorer::load`, `PretrainedEncoder::load`). Checkpoints do not depend on it: a model
//! trained on one device loads, resumes and scores on any other.
//!
//! **Tolerance.** flex and wgpu agree to 1e-3 relative on logits and losses of one step and to
//! 2e-3 after an Adam step (`tests/wgpu.rs`), and a short training run on wgpu gives dev scores
//! within 1e-2 of flex (`tests/wgpu_train.rs`): float sums in another order, not another model.
//! Cache keys therefore leave the device out; so does the checkpoint's resume check.

use std::fmt;
use std::str::FromStr;

use burn::module::{ModuleVisitor, Param};
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A device choice: `cpu` (burn's flex backend) or `wgpu` / `wgpu:N` (the default wgpu
/// adapter, or the N-th discrete GPU; needs the `wgpu` feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compute {
    /// burn's CPU backend.
    #[default]
    Cpu,
    /// A wgpu adapter: `None` the default one (`CUBECL_WGPU_DEFAULT_DEVICE` overrides it), or
    /// the discrete GPU of that index.
    Wgpu(Option<usize>),
}

impl Compute {
    /// The burn device (without autodiff).
    ///
    /// # Errors
    /// [`Error::Config`] for a wgpu choice in a build without the `wgpu` feature.
    pub fn device(self) -> Result<Device> {
        match self {
            Self::Cpu => Ok(Device::flex()),
            #[cfg(feature = "wgpu")]
            Self::Wgpu(index) => {
                use burn::tensor::DeviceKind;
                Ok(Device::wgpu(index.map_or(DeviceKind::DefaultDevice, DeviceKind::DiscreteGpu)))
            }
            #[cfg(not(feature = "wgpu"))]
            Self::Wgpu(_) => Err(Error::Config(format!("device {self}: this build has no wgpu backend (build with the `wgpu` feature)"))),
        }
    }

    /// The choice is available in this build.
    pub fn available(self) -> bool {
        self == Self::Cpu || cfg!(feature = "wgpu")
    }
}

impl fmt::Display for Compute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cpu => f.write_str("cpu"),
            Self::Wgpu(None) => f.write_str("wgpu"),
            Self::Wgpu(Some(i)) => write!(f, "wgpu:{i}"),
        }
    }
}

impl FromStr for Compute {
    type Err = Error;

    /// `cpu` (or `flex`), `wgpu`, `wgpu:N`.
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "cpu" | "flex" => Ok(Self::Cpu),
            "wgpu" => Ok(Self::Wgpu(None)),
            other => match other.strip_prefix("wgpu:").map(str::parse::<usize>) {
                Some(Ok(i)) => Ok(Self::Wgpu(Some(i))),
                _ => Err(Error::Config(format!("unknown device {other:?} (expected cpu, wgpu or wgpu:N)"))),
            },
        }
    }
}

/// `module` with every parameter drawn now, on the device it was built on. burn initialises a
/// parameter lazily, on the device the parameter is on at first use: forking an untouched module
/// to a GPU would draw its weights there, from another random stream than the CPU's.
pub fn materialized<M: Module>(module: M) -> M {
    struct Touch;
    impl ModuleVisitor for Touch {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let _ = param.val();
        }
        fn visit_int<const D: usize>(&mut self, param: &Param<Tensor<D, Int>>) {
            let _ = param.val();
        }
        fn visit_bool<const D: usize>(&mut self, param: &Param<Tensor<D, Bool>>) {
            let _ = param.val();
        }
    }
    module.visit(&mut Touch);
    module
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_ones_are_errors() {
        for c in [Compute::Cpu, Compute::Wgpu(None), Compute::Wgpu(Some(1))] {
            assert_eq!(c.to_string().parse::<Compute>().ok(), Some(c));
        }
        assert_eq!("flex".parse::<Compute>().ok(), Some(Compute::Cpu));
        for bad in ["gpu", "wgpu:", "wgpu:x", "cuda"] {
            assert!(bad.parse::<Compute>().is_err(), "{bad}");
        }
        assert!(Compute::Cpu.device().is_ok());
        #[cfg(not(feature = "wgpu"))]
        assert!(Compute::Wgpu(None).device().unwrap_err().to_string().contains("the `wgpu` feature"));
    }
}
