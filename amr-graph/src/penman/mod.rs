//! PENMAN notation: a streaming reader, the tree it produces, and a writer with penman's layout.
//!
//! Parity target: penman 1.3.1 (`penman.iterdecode` / `penman.encode` with default arguments),
//! checked on all 1,562 Little Prince graphs by `tests/penman_parity.rs`.

mod lex;
pub(crate) mod read;
mod tree;
mod write;

pub use read::{LineSource, MAX_DEPTH, MAX_NODES, PenmanReader, TextLines, decode, decode_all, decode_one};
pub use tree::{Edge, Metadata, Node, Target, Tree, split_alignment};
pub use write::{Indent, encode, encode_node};
