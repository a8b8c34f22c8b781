//! The data model: dialogue items with per-annotator judgments.

use dialeval_common::Criterion;
use serde::{Deserialize, Serialize};

/// Which corpus an item came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Corpus {
    /// USR (PersonaChat or TopicalChat layout).
    Usr,
    /// FED, turn level.
    FedTurn,
    /// FED, dialogue level.
    FedDialogue,
    /// DailyDialog++.
    DailyDialogPlusPlus,
    /// Topical-Chat.
    TopicalChat,
    /// GRADE's human-judgement layout.
    Grade,
    /// The generic JSONL format.
    Jsonl,
}

/// One turn of a dialogue.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Turn {
    /// Who spoke, when known (`User`, `System`, `agent_1`, …).
    pub speaker: Option<String>,
    /// What was said.
    pub text: String,
    /// AMR of the turn as PENMAN text, when attached from a side file.
    pub amr: Option<String>,
}

impl Turn {
    /// A turn without speaker or AMR.
    pub fn new(text: impl Into<String>) -> Self {
        Self { speaker: None, text: text.into(), amr: None }
    }
}

/// Human ratings of one quality, one entry per annotator (`None` where an annotator gave no
/// usable score, e.g. FED's `"N/A"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The corpus's own name of the quality (`Maintains Context`, `Fluent`, …).
    pub quality: String,
    /// The shared criterion it maps to, if any (see each loader's documented mapping).
    pub criterion: Option<Criterion>,
    /// Scores per annotator.
    pub scores: Vec<Option<f64>>,
}

impl Rating {
    /// Mean of the present scores, `None` when every annotator is missing. Finite scores have
    /// a finite mean: a sum that overflows (`[1e308, 1e308]`) is taken again over the scores
    /// divided by their number first.
    pub fn mean(&self) -> Option<f64> {
        let present: Vec<f64> = self.scores.iter().flatten().copied().collect();
        if present.is_empty() {
            return None;
        }
        let n = present.len() as f64;
        let mean = present.iter().sum::<f64>() / n;
        Some(if mean.is_finite() { mean } else { present.iter().map(|s| s / n).sum() })
    }
}

/// A (context, response) pair with references, knowledge and human judgments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogueItem {
    /// A stable id within the corpus.
    pub id: String,
    /// Source corpus.
    pub corpus: Corpus,
    /// Previous turns, oldest first.
    pub context: Vec<Turn>,
    /// The response under evaluation (`None` for dialogue-level items).
    pub response: Option<Turn>,
    /// Reference responses.
    pub references: Vec<String>,
    /// Grounding knowledge (persona, facts, Wikipedia snippet).
    pub knowledge: Option<String>,
    /// The system (model) that produced the response.
    pub system: Option<String>,
    /// Annotator names, when the corpus gives them.
    pub annotators: Vec<String>,
    /// Ratings, one per quality.
    pub ratings: Vec<Rating>,
}

impl DialogueItem {
    /// The rating mapped to `criterion`.
    pub fn rating(&self, criterion: Criterion) -> Option<&Rating> {
        self.ratings.iter().find(|r| r.criterion == Some(criterion))
    }

    /// Mean human score for `criterion`.
    pub fn mean(&self, criterion: Criterion) -> Option<f64> {
        self.rating(criterion).and_then(Rating::mean)
    }

    /// The rating of a corpus quality by its own name.
    pub fn quality(&self, name: &str) -> Option<&Rating> {
        self.ratings.iter().find(|r| r.quality == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_of_huge_scores_does_not_overflow() {
        let rating = |scores: &[Option<f64>]| Rating { quality: "overall".into(), criterion: Some(Criterion::Overall), scores: scores.to_vec() };
        assert_eq!(rating(&[Some(1e308), Some(1e308)]).mean(), Some(1e308));
        assert_eq!(rating(&[Some(-1e308), Some(-1e308), None]).mean(), Some(-1e308));
        assert_eq!(rating(&[Some(1.0), Some(2.0), None]).mean(), Some(1.5));
        assert_eq!(rating(&[None]).mean(), None);
    }
}
