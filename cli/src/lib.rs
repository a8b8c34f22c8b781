//! # dialeval-cli
//!
//! The programs of the dialeval crates as one library, so that the `dialeval` command
//! (`cargo install --path cli`) and the example programs (`cargo run --example evaluate`) run
//! the same code: each module of [`commands`] is one program, with its flags (a clap parser)
//! and a `main` that takes the arguments. The work itself lives in the library crates
//! (`dialeval-eval`, `dialeval-datasets`, …); a command only turns flags into their values.
//! [`support`] holds what several programs share (progress bars, flag parsers).

pub mod commands;
pub mod support;
