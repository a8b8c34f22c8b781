//! # dialeval-amr-graph
//!
//! Abstract Meaning Representation (AMR) graphs for dialogue evaluation:
//!
//! 1. [`penman`]: read PENMAN files (streaming, with per-block error recovery) and write them
//!    with penman 1.3.1's layout;
//! 2. [`AmrGraph`]: penman's triple view on a petgraph graph, with queries and validation;
//! 3. [`simplify`]: composable simplification passes and the stripped linearisation of
//!    Konstas et al. (2017);
//! 4. [`paths`]: Graph-Transformer input (concept sequence plus relation-path matrix, Zhu et al.
//!    2019) and serialisable vocabularies;
//! 5. [`smatch`]: Smatch (Cai and Knight 2013) with deterministic seeded hill climbing.
//!
//! ```
//! use dialeval_amr_graph::{AmrGraph, smatch::{Smatch, SmatchConfig}};
//! let a = AmrGraph::decode("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))")?;
//! let b = AmrGraph::decode("(w / want-01 :ARG0 (g / girl) :ARG1 (l / leave-11 :ARG0 g))")?;
//! let score = Smatch::new(SmatchConfig::default())?.score_graphs(&a, &b)?;
//! assert!(score.f1() > 0.4 && score.f1() < 1.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
pub mod graph;
pub mod paths;
pub mod penman;
pub mod simplify;
pub mod smatch;

pub use error::{Error, ParseError, ParseErrorKind, Result};
pub use graph::{AmrGraph, AmrNode, Issue, Triple};
