//! Helpers shared by the example programs (`[[example]]` targets of this package): those of
//! the `dialeval` command's library, which runs most of them.

pub use dialeval_cli::support::*;

/// The README's crate samples, compiled as doc-tests (this package depends on the facade).
#[doc = include_str!("../../README.md")]
mod readme {}
