//! Which texts of a training pair the model reads: the joined context, the last turns, the
//! knowledge (whole or as sentences), and all of them as one list for an encoder to fill
//! ([`VectorInputs`]).

use dialeval_datasets::pairs::TrainingPair;
use serde::{Deserialize, Serialize};

/// The text of a pair's context as the pretrained encoder sees it: its turns joined by spaces.
pub fn context_text(pair: &TrainingPair) -> String {
    pair.context.join(" ")
}

/// The last two context turns that have text, oldest first: what a featuriser with the turn
/// channel ([`Featurizer::turns`]) reads apart from the joined context.
pub fn turn_texts(pair: &TrainingPair) -> Vec<&str> {
    let turns: Vec<&str> = pair.context.iter().map(String::as_str).filter(|t| !t.trim().is_empty()).collect();
    turns[turns.len().saturating_sub(2)..].to_vec()
}

/// The knowledge a model with the knowledge channel reads for a pair: its knowledge or persona,
/// unless empty or blank.
pub fn knowledge_text(pair: &TrainingPair) -> Option<&str> {
    pair.knowledge.as_deref().filter(|k| !k.trim().is_empty())
}

/// What of a pair's knowledge the pretrained head's knowledge channel reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KnowledgeUnit {
    /// The sentence vector of the whole knowledge text (cut at the encoder's longest input).
    #[default]
    Whole,
    /// The vector of the knowledge sentence nearest the response (highest dot product, the
    /// cosine of the encoder's normalised vectors; [`knowledge_sentences`]): a persona is a list
    /// of facts and a Wikipedia section a list of sentences, of which a grounded response uses
    /// one; a pooled vector of all of them dilutes it, and the encoder reads only the first
    /// word pieces of a long text (256 for all-MiniLM-L6-v2).
    Sentence,
}

/// Most sentences of one knowledge text [`KnowledgeUnit::Sentence`] reads (the first ones).
pub const MAX_KNOWLEDGE_SENTENCES: usize = 32;

/// The sentences of a knowledge text: its lines, each split after `.`, `!` or `?` followed by
/// white space, trimmed, blank ones left out; at most [`MAX_KNOWLEDGE_SENTENCES`], the first.
/// A persona's `your persona:` lines are one sentence each.
pub fn knowledge_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let boundary = matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|&(_, n)| n.is_whitespace());
            if boundary {
                let end = i + c.len_utf8();
                out.push(&line[start..end]);
                start = end;
            }
        }
        out.push(&line[start..]);
    }
    out.into_iter().map(str::trim).filter(|s| !s.is_empty()).take(MAX_KNOWLEDGE_SENTENCES).collect()
}

/// The texts whose vectors a model with the knowledge channel reads for a pair's knowledge:
/// the whole text ([`knowledge_text`]) or its sentences ([`knowledge_sentences`]).
pub fn knowledge_texts(pair: &TrainingPair, unit: KnowledgeUnit) -> Vec<&str> {
    match (knowledge_text(pair), unit) {
        (None, _) => Vec::new(),
        (Some(k), KnowledgeUnit::Whole) => vec![k],
        (Some(k), KnowledgeUnit::Sentence) => knowledge_sentences(k),
    }
}

/// What of a pair a pretrained text side reads through sentence vectors, beside the joined
/// context and the response: the knowledge (as its unit reads it) and the last two turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VectorInputs {
    /// The knowledge channel's unit (`None`: no knowledge channel).
    pub knowledge: Option<KnowledgeUnit>,
    /// The turn channel ([`crate::data::Featurizer::turns`]).
    pub turns: bool,
}

impl VectorInputs {
    /// Every text whose sentence vector is read for `pair`: the joined context
    /// ([`context_text`]), the response, the knowledge ([`knowledge_texts`]) and the last two
    /// turns ([`turn_texts`]) as asked.
    pub fn texts<'a>(&self, pair: &'a TrainingPair) -> Vec<std::borrow::Cow<'a, str>> {
        use std::borrow::Cow;
        let mut out = vec![Cow::Owned(context_text(pair)), Cow::Borrowed(pair.response.as_str())];
        if let Some(unit) = self.knowledge {
            out.extend(knowledge_texts(pair, unit).into_iter().map(Cow::Borrowed));
        }
        if self.turns {
            out.extend(turn_texts(pair).into_iter().map(Cow::Borrowed));
        }
        out
    }

    /// [`VectorInputs::texts`] of every pair of `parts`, in order (repeats kept: an encoder's
    /// cache skips them).
    pub fn texts_of<'a>(&self, parts: &[&'a [TrainingPair]]) -> Vec<std::borrow::Cow<'a, str>> {
        parts.iter().flat_map(|part| part.iter()).flat_map(|p| self.texts(p)).collect()
    }
}

#[cfg(test)]
mod tests {
    use dialeval_datasets::pairs::PairKind;

    use super::*;

    #[test]
    fn knowledge_splits_into_lines_and_sentences() {
        let persona = "your persona: i like dogs.\nyour persona: i've three cats.\n\n";
        assert_eq!(knowledge_sentences(persona), ["your persona: i like dogs.", "your persona: i've three cats."]);
        let wiki = "The club was founded in 1902. It plays in Madrid! Who knows? e.g.the 3.5 rule\n  second line without stop  ";
        assert_eq!(knowledge_sentences(wiki), ["The club was founded in 1902.", "It plays in Madrid!", "Who knows?", "e.g.the 3.5 rule", "second line without stop"]);
        assert!(knowledge_sentences(" \n\t").is_empty());
        let many: String = (0..40).map(|i| format!("Fact {i}. ")).collect();
        let cut = knowledge_sentences(&many);
        assert_eq!(cut.len(), MAX_KNOWLEDGE_SENTENCES);
        assert_eq!(cut[0], "Fact 0.");
        let pair = |k: Option<&str>| TrainingPair {
            id: "p".into(),
            context: vec![],
            response: String::new(),
            kind: PairKind::Positive,
            context_amr: vec![],
            response_amr: None,
            knowledge: k.map(str::to_owned),
        };
        assert_eq!(knowledge_texts(&pair(Some("A. B.")), KnowledgeUnit::Whole), ["A. B."]);
        assert_eq!(knowledge_texts(&pair(Some("A. B.")), KnowledgeUnit::Sentence), ["A.", "B."]);
        assert!(knowledge_texts(&pair(Some("  ")), KnowledgeUnit::Sentence).is_empty());
        assert!(knowledge_texts(&pair(None), KnowledgeUnit::Whole).is_empty());
    }
}
