//! The evaluation criteria shared by datasets, prompts and reports.

/// The evaluation criteria of the AMR-enhanced evaluator (Naturalness, Coherence,
/// Engagingness, Groundedness) plus Overall and Understandable. Each corpus maps its own
/// quality names onto these (see `dialeval-datasets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// How naturally the response is written.
    Naturalness,
    /// Whether the response is well-structured, logical and meaningful given the context.
    Coherence,
    /// How engaging the response is.
    Engagingness,
    /// Whether the response is grounded in facts of the context or of given knowledge.
    Groundedness,
    /// Overall quality.
    Overall,
    /// Whether the response is understandable.
    Understandable,
}

impl Criterion {
    /// All criteria, the paper's four first.
    pub const ALL: [Self; 6] = [Self::Naturalness, Self::Coherence, Self::Engagingness, Self::Groundedness, Self::Overall, Self::Understandable];

    /// The name used in prompts and reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Naturalness => "Naturalness",
            Self::Coherence => "Coherence",
            Self::Engagingness => "Engagingness",
            Self::Groundedness => "Groundedness",
            Self::Overall => "Overall",
            Self::Understandable => "Understandable",
        }
    }
}

impl std::fmt::Display for Criterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown criterion name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCriterion(pub String);

impl std::fmt::Display for UnknownCriterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown criterion {:?} (expected one of naturalness, coherence, engagingness, groundedness, overall, understandable)", self.0)
    }
}

impl std::error::Error for UnknownCriterion {}

impl std::str::FromStr for Criterion {
    type Err = UnknownCriterion;

    /// Case-insensitive: `Naturalness`, `coherence`, …
    fn from_str(s: &str) -> Result<Self, UnknownCriterion> {
        Self::ALL.into_iter().find(|c| c.name().eq_ignore_ascii_case(s.trim())).ok_or_else(|| UnknownCriterion(s.to_owned()))
    }
}
