//! The generic JSONL format for users' own data, one item per line:
//!
//! ```json
//! {"id": "d1-3",
//!  "context": ["Hi!", {"speaker": "B", "text": "Hello, how are you?", "amr": "(h / hello)"}],
//!  "response": "Fine, thanks.",            // or {"speaker": ..., "text": ..., "amr": ...}
//!  "references": ["Good, you?"],            // optional
//!  "knowledge": "B likes tea.",             // optional
//!  "system": "my-bot-v2",                   // optional
//!  "annotators": ["a1", "a2"],              // optional
//!  "ratings": {"coherence": [4, 5], "fluency": [5, null]}}   // optional; null = missing
//! ```
//! Rating names that are criteria (`naturalness`, `coherence`, `engagingness`,
//! `groundedness`, `overall`, `understandable`, any case) map to them; others are kept with
//! their own name. `id` defaults to the line number.

use std::path::Path;

use dialeval_common::Criterion;
use serde_json::Value;

use crate::error::Result;
use crate::item::{Corpus, DialogueItem, Rating, Turn};
use crate::json::{Doc, kind};
use crate::lines::JsonLines;

fn turn(doc: &Doc<'_>, v: &Value, at: &str) -> Result<Turn> {
    match v {
        Value::String(s) => Ok(Turn::new(s.clone())),
        Value::Object(_) => {
            let text = doc.str(doc.field(v, at, "text")?, &format!("{at}.text"))?.to_owned();
            let opt = |key: &str| -> Result<Option<String>> { v.get(key).filter(|x| !x.is_null()).map(|x| doc.str(x, &format!("{at}.{key}")).map(str::to_owned)).transpose() };
            Ok(Turn { speaker: opt("speaker")?, text, amr: opt("amr")? })
        }
        other => Err(doc.err(at, format!("expected a string or an object with `text`, found {}", kind(other)))),
    }
}

/// Streams a JSONL file in the format above.
///
/// # Errors
/// Opening fails; each item is an error naming its line and field when malformed.
pub fn read(path: &Path) -> Result<impl Iterator<Item = Result<DialogueItem>>> {
    let lines = JsonLines::open(path)?;
    let path = lines.path().to_owned();
    Ok(lines.map(move |item| {
        let (line, v) = item?;
        let doc = Doc { path: &path, line: Some(line) };
        doc.object(&v, "$")?;
        let context = doc.array(doc.field(&v, "$", "context")?, "$.context")?.iter().enumerate().map(|(i, t)| turn(&doc, t, &format!("$.context[{i}]"))).collect::<Result<Vec<_>>>()?;
        let response = match v.get("response") {
            Some(Value::Null) | None => None,
            Some(r) => Some(turn(&doc, r, "$.response")?),
        };
        let opt_str = |key: &str| -> Result<Option<String>> { v.get(key).filter(|x| !x.is_null()).map(|x| doc.str(x, &format!("$.{key}")).map(str::to_owned)).transpose() };
        let list = |key: &str| -> Result<Vec<String>> { v.get(key).map_or(Ok(Vec::new()), |x| doc.strings(x, &format!("$.{key}"))) };
        let mut ratings = Vec::new();
        if let Some(r) = v.get("ratings") {
            for (quality, scores) in doc.object(r, "$.ratings")? {
                let at = format!("$.ratings.{quality}");
                let scores =
                    doc.array(scores, &at)?.iter().enumerate().map(|(k, s)| if s.is_null() { Ok(None) } else { doc.number(s, &format!("{at}[{k}]")).map(Some) }).collect::<Result<Vec<_>>>()?;
                ratings.push(Rating { criterion: quality.parse::<Criterion>().ok(), quality: quality.clone(), scores });
            }
        }
        let id = match v.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            None | Some(Value::Null) => format!("line-{line}"),
            Some(other) => return Err(doc.err("$.id", format!("expected a string or a number, found {}", kind(other)))),
        };
        Ok(DialogueItem {
            id,
            corpus: Corpus::Jsonl,
            context,
            response,
            references: list("references")?,
            knowledge: opt_str("knowledge")?,
            system: opt_str("system")?,
            annotators: list("annotators")?,
            ratings,
        })
    }))
}

/// Reads a whole JSONL file.
///
/// # Errors
/// The first malformed line.
pub fn load(path: &Path) -> Result<Vec<DialogueItem>> {
    read(path)?.collect()
}
