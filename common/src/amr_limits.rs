//! The size limits of one AMR graph that every dialeval crate applies: the PENMAN reader of
//! `dialeval-amr-graph` refuses a graph beyond them with a typed error, and the side-file reader
//! of `dialeval-datasets` names such a block as malformed (file, line, `::id`) before anything
//! parses it. They bound every walk over a graph (recursion depth, quadratic tables) for any
//! text a user hands in; real AMR is far inside them (sentence graphs have tens of nodes and
//! are rarely 20 levels deep).

/// The deepest nesting of nodes (the top node is at depth 1): 512 levels of the recursive
/// walks stay far below a 2 MiB thread stack.
pub const MAX_DEPTH: usize = 512;
/// The most nodes (variables) one graph may have.
pub const MAX_NODES: usize = 10_000;
