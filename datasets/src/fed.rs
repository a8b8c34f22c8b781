//! FED (Mehri and Eskenazi 2020): 375 turn-level and 125 dialogue-level records, 5 annotators
//! each. Scores that are strings beginning with `N/A` are **missing values** (`None`), never
//! zeros; any other string is an error.
//!
//! Turns are `User: …` / `System: …`; the prefix becomes the speaker.
//!
//! | FED quality | [`Criterion`] |
//! |---|---|
//! | Fluent (turn) | Naturalness |
//! | Relevant (turn) | Coherence |
//! | Engaging (turn) | Engagingness |
//! | Understandable (turn) | Understandable |
//! | Coherent (dialogue) | Coherence |
//! | Overall (both) | Overall |
//!
//! Interesting, Specific, Correct, Semantically appropriate and the other dialogue-level
//! qualities are kept under their own names without a criterion; FED has no groundedness.

use std::path::Path;

use dialeval_common::Criterion;
use serde_json::Value;

use crate::error::Result;
use crate::item::{Corpus, DialogueItem, Rating, Turn};
use crate::json::{Doc, kind, read_json};

/// FED's two levels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fed {
    /// Turn-level items (with a response).
    pub turns: Vec<DialogueItem>,
    /// Dialogue-level items (the whole dialogue as context, no response).
    pub dialogues: Vec<DialogueItem>,
}

/// Where a FED judgement is made: on one system turn, or on the whole dialogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A system turn (an item with a response).
    Turn,
    /// The whole dialogue.
    Dialogue,
}

/// Maps a FED quality to a criterion at its level.
pub fn criterion(quality: &str, level: Level) -> Option<Criterion> {
    Some(match (quality, level) {
        ("Fluent", Level::Turn) => Criterion::Naturalness,
        ("Relevant", Level::Turn) | ("Coherent", Level::Dialogue) => Criterion::Coherence,
        ("Engaging", Level::Turn) => Criterion::Engagingness,
        ("Understandable", Level::Turn) => Criterion::Understandable,
        ("Overall", _) => Criterion::Overall,
        _ => return None,
    })
}

fn turn(line: &str) -> Turn {
    for speaker in ["User", "System"] {
        if let Some(text) = line.strip_prefix(speaker).and_then(|r| r.strip_prefix(':')) {
            return Turn { speaker: Some(speaker.to_owned()), text: text.trim().to_owned(), amr: None };
        }
    }
    Turn::new(line.trim())
}

/// Loads `fed_data.json`.
///
/// # Errors
/// I/O, invalid JSON, or a malformed record named by its JSON path; with a hint when the file
/// looks like another kind ([`crate::sniff`]).
pub fn load(path: &Path) -> Result<Fed> {
    read_fed(path).map_err(|e| crate::sniff::with_hint(e, path, Corpus::FedTurn))
}

fn read_fed(path: &Path) -> Result<Fed> {
    let root = read_json(path)?;
    let doc = Doc::file(path);
    let mut fed = Fed::default();
    for (i, entry) in doc.array(&root, "$")?.iter().enumerate() {
        let at = format!("[{i}]");
        let context: Vec<Turn> = doc.str(doc.field(entry, &at, "context")?, &format!("{at}.context"))?.split('\n').filter(|l| !l.trim().is_empty()).map(turn).collect();
        let response = match entry.get("response") {
            Some(r) => Some(turn(doc.str(r, &format!("{at}.response"))?)),
            None => None,
        };
        let turn_level = response.is_some();
        let system = doc.str(doc.field(entry, &at, "system")?, &format!("{at}.system"))?.to_owned();
        let mut ratings = Vec::new();
        for (quality, scores) in doc.object(doc.field(entry, &at, "annotations")?, &format!("{at}.annotations"))? {
            let sat = format!("{at}.annotations.{quality}");
            let scores = doc
                .array(scores, &sat)?
                .iter()
                .enumerate()
                .map(|(k, s)| match s {
                    Value::Number(n) => n.as_f64().map(Some).ok_or_else(|| doc.err(&format!("{sat}[{k}]"), "not a finite number")),
                    Value::String(t) if t.starts_with("N/A") => Ok(None),
                    other => Err(doc.err(&format!("{sat}[{k}]"), format!("expected a number or \"N/A ...\", found {}", kind(other)))),
                })
                .collect::<Result<Vec<_>>>()?;
            ratings.push(Rating { criterion: criterion(quality, if turn_level { Level::Turn } else { Level::Dialogue }), quality: quality.clone(), scores });
        }
        let item = DialogueItem {
            id: format!("fed-{i}"),
            corpus: if turn_level { Corpus::FedTurn } else { Corpus::FedDialogue },
            context,
            response,
            references: Vec::new(),
            knowledge: None,
            system: Some(system),
            annotators: Vec::new(),
            ratings,
        };
        if turn_level { fed.turns.push(item) } else { fed.dialogues.push(item) }
    }
    Ok(fed)
}
