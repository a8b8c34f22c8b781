//! Helpers shared by the example programs (`[[example]]` targets of this package): those of
//! the `dialeval` command's library, which runs most of them.

pub use dialeval_cli::support::*;
