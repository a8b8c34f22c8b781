//! # dialeval-amr-parse
//!
//! AMR graphs for any text. The AMR-enhanced metric needs a graph of every context turn and
//! response; this crate makes them from a parser, and never lets an invalid graph through:
//!
//! ```text
//! sentences ─► AmrParser::parse_batch ─► one Result<Parsed> per sentence
//!                 ├─ LlmAmrParser: any OpenAI-compatible endpoint, AMR conventions + Little Prince
//!                 │  examples, temperature 0; invalid answers sent back with the exact error for
//!                 │  a few rounds, then a deterministic repair, then a typed error
//!                 └─ CommandAmrParser: an external parser (amrlib, SPRING, …) over a line protocol
//! every graph: validate() — PENMAN readable, one graph, AMR roles, well-formed concepts,
//!              no variable defined twice or used undefined
//! ```
//!
//! A sentence with no letter or digit gets the minimal graph `(a / amr-empty)` (the concept the
//! AMR 3.0 release uses for empty sentences) without a call.
//!
//! ```
//! use dialeval_amr_parse::validate::validate;
//! use dialeval_amr_parse::repair::repair;
//!
//! let answer = "Sure! Here is the graph:\n(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b)";
//! assert!(validate(answer).is_err());
//! let (fixed, repairs) = repair(answer);
//! assert!(validate(&fixed).is_ok() && repairs.closed == 1 && repairs.trimmed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod command;
mod error;
pub mod llm;
pub mod repair;
pub mod validate;

pub use command::CommandAmrParser;
pub use error::{Error, Invalid, Result};
pub use llm::{LlmAmrParser, LlmParserConfig};
pub use repair::{RUNAWAY_CHAIN, Repairs, collapse_runaway, repair};
pub use validate::validate;

use dialeval_amr_graph::AmrGraph;

/// A parsed sentence.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The graph.
    pub graph: AmrGraph,
    /// The graph as PENMAN, without metadata.
    pub penman: String,
    /// Answers asked for (1 when the first was valid; 0 for the `amr-empty` rule and for
    /// command parsers).
    pub attempts: usize,
    /// The deterministic repairs applied, when the graph needed them.
    pub repairs: Option<Repairs>,
}

impl Parsed {
    /// A PENMAN block with `::id`, `::snt` and the provenance (`::parser`, `::model`,
    /// `::attempts`, `::repaired`).
    pub fn block(&self, id: &str, sentence: &str, parser: &str, model: Option<&str>) -> String {
        let one_line = |s: &str| s.replace(['\n', '\r'], " ");
        let mut out = format!("# ::id {}\n# ::snt {}\n# ::parser {parser}", one_line(id), one_line(sentence));
        if let Some(m) = model {
            out.push_str(&format!(" ::model {}", one_line(m)));
        }
        out.push_str(&format!(" ::attempts {}", self.attempts));
        if let Some(r) = self.repairs {
            out.push_str(&format!(" ::repaired trimmed={} closed={} dropped={} renamed={} cut={} collapsed={}", r.trimmed, r.closed, r.dropped_closers, r.renamed, r.cut_incomplete, r.collapsed));
        }
        out.push('\n');
        out.push_str(&self.penman);
        out.push('\n');
        out
    }
}

/// Turns sentences into AMR graphs.
pub trait AmrParser {
    /// The parser's name for provenance (`llm`, `command`).
    fn name(&self) -> &str;

    /// The model behind it, when there is one.
    fn model(&self) -> Option<&str> {
        None
    }

    /// Everything its graphs depend on, as one line: the kind and, for an LLM, the endpoint,
    /// the served and requested model and a fingerprint of the prompt and settings; for a
    /// command, the exact command line. Stores of parsed graphs are keyed by it, so graphs of
    /// two parsers are never mixed.
    fn identity(&self) -> String {
        format!("{} model={}", self.name(), self.model().unwrap_or("-"))
    }

    /// One result per sentence, in order; a sentence that fails is its own typed error.
    fn parse_batch(&self, sentences: &[&str]) -> Vec<Result<Parsed>>;

    /// One sentence.
    ///
    /// # Errors
    /// As [`AmrParser::parse_batch`].
    fn parse(&self, sentence: &str) -> Result<Parsed> {
        self.parse_batch(&[sentence]).pop().unwrap_or_else(|| Err(Error::Config("the parser returned no result".into())))
    }
}

/// A reference or box of a parser is the parser.
macro_rules! forward_parser {
    ($($pointer:ty),+) => {$(
        impl<P: AmrParser + ?Sized> AmrParser for $pointer {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn model(&self) -> Option<&str> {
                (**self).model()
            }
            fn identity(&self) -> String {
                (**self).identity()
            }
            fn parse_batch(&self, sentences: &[&str]) -> Vec<Result<Parsed>> {
                (**self).parse_batch(sentences)
            }
        }
    )+};
}

forward_parser!(&P, Box<P>);

/// How a batch went: what a quality report states besides Smatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ParseStats {
    /// Sentences.
    pub sentences: usize,
    /// Valid on the first answer (or by the `amr-empty` rule, or from a command parser).
    pub valid_first: usize,
    /// Valid after one or more repair rounds.
    pub valid_after_rounds: usize,
    /// Valid only after the deterministic repair.
    pub valid_after_repair: usize,
    /// No valid graph.
    pub invalid: usize,
    /// The endpoint or command failed.
    pub failed: usize,
}

impl ParseStats {
    /// Counts `results`.
    pub fn of(results: &[Result<Parsed>]) -> Self {
        let mut s = Self { sentences: results.len(), ..Self::default() };
        for r in results {
            match r {
                Ok(p) if p.repairs.is_some() => s.valid_after_repair += 1,
                Ok(p) if p.attempts > 1 => s.valid_after_rounds += 1,
                Ok(_) => s.valid_first += 1,
                Err(Error::Invalid { .. }) => s.invalid += 1,
                Err(_) => s.failed += 1,
            }
        }
        s
    }

    /// Share of sentences with a valid graph before any repair (first answer or repair rounds).
    pub fn valid_before_repair(&self) -> f64 {
        (self.valid_first + self.valid_after_rounds) as f64 / self.sentences.max(1) as f64
    }

    /// Share of sentences with a valid graph in the end.
    pub fn valid_after_all(&self) -> f64 {
        (self.valid_first + self.valid_after_rounds + self.valid_after_repair) as f64 / self.sentences.max(1) as f64
    }
}

/// The graph of a sentence without letters or digits, when `sentence` is one.
pub fn empty_sentence_graph(sentence: &str) -> Option<Parsed> {
    if sentence.chars().any(char::is_alphanumeric) {
        return None;
    }
    let penman = "(a / amr-empty)".to_owned();
    let graph = validate(&penman).ok()?;
    Some(Parsed { graph, penman, attempts: 0, repairs: None })
}
