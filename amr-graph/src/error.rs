//! The crate's error type.

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `dialeval-amr-graph`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// PENMAN text could not be parsed.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// Reading the underlying input failed.
    #[error("I/O error while reading PENMAN input: {0}")]
    Io(#[from] std::io::Error),
    /// A graph violates a structural invariant (see [`crate::Issue`]).
    #[error("invalid AMR graph: {}", issues_to_string(.0))]
    Invalid(Vec<crate::graph::Issue>),
    /// A graph has no nodes, so the requested operation has nothing to work on.
    #[error("the AMR graph is empty")]
    EmptyGraph,
    /// A configuration value is out of its valid range.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A reversible map was asked to restore a placeholder it does not know.
    #[error("unknown placeholder {0:?}")]
    UnknownPlaceholder(String),
}

fn issues_to_string(issues: &[crate::graph::Issue]) -> String {
    issues.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// What kind of syntax error was found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A token of one kind was expected but another was found.
    Unexpected {
        /// What the grammar allowed at this point.
        expected: &'static str,
        /// The text that was found instead.
        found: String,
    },
    /// The input ended inside a graph.
    UnexpectedEnd {
        /// What the grammar allowed at this point.
        expected: &'static str,
    },
    /// Text that is neither a comment nor a graph appears between graphs.
    StrayText {
        /// The offending token.
        found: String,
    },
    /// Metadata comments at the end of the input are not followed by a graph.
    DanglingMetadata {
        /// The metadata keys that would have been attached to a graph.
        keys: Vec<String>,
    },
    /// `()`: a node with no variable.
    EmptyNode,
    /// Text after the one graph a single-graph reader ([`crate::penman::decode_one`]) accepts:
    /// an unbalanced `)`, a second graph, or anything but whitespace and comments.
    TrailingText {
        /// The first token after the graph.
        found: String,
    },
    /// A comment-only block whose metadata would be overwritten by the next block's
    /// (e.g. an `::id` whose graph is missing). Not reported in penman-compatible mode.
    OrphanMetadata {
        /// The block's `::id`, if it has one.
        id: Option<String>,
    },
    /// A node nested deeper than [`crate::penman::MAX_DEPTH`] levels.
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// A graph with more than [`crate::penman::MAX_NODES`] nodes.
    TooLarge {
        /// The limit.
        limit: usize,
    },
}

/// A syntax error with its position (1-based line and column, in characters) and the offending line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What went wrong.
    pub kind: ParseErrorKind,
    /// 1-based line number in the input.
    pub line: usize,
    /// 1-based column (in characters) on that line.
    pub column: usize,
    /// The text of the offending line.
    pub snippet: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ParseErrorKind::Unexpected { expected, found } => {
                write!(f, "expected {expected}, found {found:?}")?;
            }
            ParseErrorKind::UnexpectedEnd { expected } => {
                write!(f, "unexpected end of input, expected {expected}")?;
            }
            ParseErrorKind::StrayText { found } => {
                write!(f, "text outside a graph that is not a comment: {found:?}")?;
            }
            ParseErrorKind::DanglingMetadata { keys } => {
                write!(f, "metadata ({}) is not followed by a graph", keys.join(", "))?;
            }
            ParseErrorKind::EmptyNode => write!(f, "empty node `()` has no variable")?,
            ParseErrorKind::TrailingText { found } => {
                let what = match found.as_str() {
                    ")" => "an unbalanced `)`".to_owned(),
                    "(" => "a second graph".to_owned(),
                    other => format!("{other:?}"),
                };
                write!(f, "text after the graph (one graph expected): {what}")?;
            }
            ParseErrorKind::OrphanMetadata { id } => {
                write!(f, "metadata block {} has no graph (the next block starts new metadata)", id.as_deref().map_or_else(|| "without ::id".to_owned(), |id| format!("for {id:?}")))?
            }
            ParseErrorKind::TooDeep { limit } => write!(f, "graph nested deeper than {limit} levels (the reader's limit)")?,
            ParseErrorKind::TooLarge { limit } => write!(f, "graph with more than {limit} nodes (the reader's limit)")?,
        }
        write!(f, " at line {}, column {}: {}", self.line, self.column, self.snippet)
    }
}

impl std::error::Error for ParseError {}
