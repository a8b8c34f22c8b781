//! The crate's errors.

/// Why a graph is not accepted. Its text is what a repair round sends back to the parser.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Invalid {
    /// No graph at all.
    #[error("the answer holds no graph")]
    Empty,
    /// Not readable as PENMAN.
    #[error("not valid PENMAN: {message}")]
    Syntax {
        /// What the reader said.
        message: String,
    },
    /// More than one graph (a sentence gets one; several sentences use `multi-sentence`).
    #[error("more than one graph: give exactly one (several sentences go under `multi-sentence` with :snt1, :snt2, …)")]
    SeveralGraphs,
    /// A variable defined by two nodes.
    #[error("variable {var:?} is defined twice; give every node its own variable and refer back to it by name")]
    DuplicateVariable {
        /// The variable.
        var: String,
    },
    /// A variable used but never defined.
    #[error("variable {var:?} is used but never defined")]
    UndefinedVariable {
        /// The variable.
        var: String,
    },
    /// A role outside the AMR inventory.
    #[error("{role} is not an AMR role (use :ARG0–:ARG5, :op1…, :mod, :domain, :name, :time, :location, :polarity, …)")]
    UnknownRole {
        /// The role as written.
        role: String,
    },
    /// A concept that is not a word, frame or number.
    #[error("node {var:?} has the malformed concept {concept:?} (concepts are words or PropBank frames such as want-01)")]
    BadConcept {
        /// The variable.
        var: String,
        /// The concept.
        concept: String,
    },
    /// Another structural defect reported by the graph reader.
    #[error("{message}")]
    Structure {
        /// The defect.
        message: String,
    },
}

/// Errors of a parser.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The endpoint failed (after its retries).
    #[error(transparent)]
    Llm(#[from] dialeval_llm_prompt::Error),
    /// Every answer, after the repair rounds and the deterministic repair, was invalid.
    #[error("no valid graph for {sentence:?} after {attempts} attempts: {last}")]
    Invalid {
        /// The sentence.
        sentence: String,
        /// Answers tried.
        attempts: usize,
        /// The last defect.
        #[source]
        last: Invalid,
    },
    /// The external parser could not be run or broke the line protocol.
    #[error("parser command {command:?}: {problem}")]
    Command {
        /// The command.
        command: String,
        /// What went wrong.
        problem: String,
        /// The I/O error, when there is one.
        #[source]
        source: Option<std::io::Error>,
    },
    /// An invalid setting.
    #[error("{0}")]
    Config(String),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
