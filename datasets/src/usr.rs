//! USR human judgments (Mehri and Eskenazi 2020): `pc_usr_data.json` (PersonaChat) and the
//! TopicalChat file of the same release, which has the same layout.
//!
//! Each of the 60 contexts has 5 responses (one per system) rated by 3 annotators. The response
//! of `Original Ground Truth` is the reference of the other four (it has none itself).
//!
//! | USR quality | scale | [`Criterion`] |
//! |---|---|---|
//! | Natural | 1–3 | Naturalness |
//! | Maintains Context | 1–3 | Coherence |
//! | Engaging | 1–3 | Engagingness |
//! | Uses Knowledge | 0–1 | Groundedness |
//! | Overall | 1–5 | Overall |
//! | Understandable | 0–1 | Understandable |

use std::path::Path;

use dialeval_common::Criterion;

use crate::error::Result;
use crate::item::{Corpus, DialogueItem, Rating, Turn};
use crate::json::{Doc, read_json};

/// The system whose response is the reference.
pub const GROUND_TRUTH: &str = "Original Ground Truth";

/// Maps a USR quality name to a criterion.
pub fn criterion(quality: &str) -> Option<Criterion> {
    Some(match quality {
        "Natural" => Criterion::Naturalness,
        "Maintains Context" => Criterion::Coherence,
        "Engaging" => Criterion::Engagingness,
        "Uses Knowledge" => Criterion::Groundedness,
        "Overall" => Criterion::Overall,
        "Understandable" => Criterion::Understandable,
        _ => return None,
    })
}

/// Loads a USR file: one item per rated response, in file order.
///
/// # Errors
/// I/O, invalid JSON, or a malformed record (named by its JSON path), including a score list
/// whose length differs from the number of annotators; with a hint when the file looks like
/// another kind ([`crate::sniff`]).
pub fn load(path: &Path) -> Result<Vec<DialogueItem>> {
    read_usr(path).map_err(|e| crate::sniff::with_hint(e, path, Corpus::Usr))
}

fn read_usr(path: &Path) -> Result<Vec<DialogueItem>> {
    let root = read_json(path)?;
    let doc = Doc::file(path);
    let mut items = Vec::new();
    for (i, entry) in doc.array(&root, "$")?.iter().enumerate() {
        let at = format!("[{i}]");
        let context: Vec<Turn> = doc.str(doc.field(entry, &at, "context")?, &format!("{at}.context"))?.split('\n').map(str::trim).filter(|t| !t.is_empty()).map(Turn::new).collect();
        let knowledge = match entry.get("fact") {
            Some(f) => Some(doc.str(f, &format!("{at}.fact"))?.trim_end().to_owned()),
            None => None,
        };
        let annotators = doc.strings(doc.field(entry, &at, "annotators")?, &format!("{at}.annotators"))?;
        let responses = doc.array(doc.field(entry, &at, "responses")?, &format!("{at}.responses"))?;
        let mut group = Vec::new();
        for (j, r) in responses.iter().enumerate() {
            let rat = format!("{at}.responses[{j}]");
            let text = doc.str(doc.field(r, &rat, "response")?, &format!("{rat}.response"))?.trim().to_owned();
            let system = doc.str(doc.field(r, &rat, "model")?, &format!("{rat}.model"))?.to_owned();
            let mut ratings = Vec::new();
            for (quality, scores) in doc.object(r, &rat)? {
                if quality == "response" || quality == "model" {
                    continue;
                }
                let sat = format!("{rat}.{quality}");
                let scores: Vec<Option<f64>> = doc.array(scores, &sat)?.iter().enumerate().map(|(k, s)| doc.number(s, &format!("{sat}[{k}]")).map(Some)).collect::<Result<_>>()?;
                if scores.len() != annotators.len() {
                    return Err(doc.err(&sat, format!("{} scores for {} annotators", scores.len(), annotators.len())));
                }
                ratings.push(Rating { criterion: criterion(quality), quality: quality.clone(), scores });
            }
            ratings.sort_by_key(|r| (r.criterion.is_none(), r.criterion, r.quality.clone()));
            group.push(DialogueItem {
                id: format!("usr-{i}-{j}"),
                corpus: Corpus::Usr,
                context: context.clone(),
                response: Some(Turn::new(text)),
                references: Vec::new(),
                knowledge: knowledge.clone(),
                system: Some(system),
                annotators: annotators.clone(),
                ratings,
            });
        }
        let reference = group.iter().find(|it| it.system.as_deref() == Some(GROUND_TRUTH)).and_then(|it| it.response.as_ref().map(|t| t.text.clone()));
        for it in &mut group {
            if it.system.as_deref() != Some(GROUND_TRUTH) {
                it.references.extend(reference.clone());
            }
        }
        items.extend(group);
    }
    Ok(items)
}
