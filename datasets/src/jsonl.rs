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
//!
//! Strict by design: a key outside the list above (a misspelt `"ratngs"`) is an error naming
//! the line and the nearest known key; so are two items with one `id`, and a file without
//! items. A missing or `null` response is no response (`None`), distinct from `""`.

use std::path::Path;

use dialeval_common::Criterion;
use serde_json::Value;

use crate::error::{Error, Place, Result};
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

/// The top-level keys of an item.
pub const KEYS: [&str; 8] = ["id", "context", "response", "references", "knowledge", "system", "annotators", "ratings"];

/// Levenshtein distance, for the nearest known key.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + usize::from(ca != *cb));
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Streams a JSONL file in the format above.
///
/// # Errors
/// Opening fails; each item is an error naming its line and field when malformed: an unknown
/// key (with the nearest known one), or an `id` an earlier line already has.
pub fn read(path: &Path) -> Result<impl Iterator<Item = Result<DialogueItem>>> {
    Ok(items(JsonLines::open(path)?))
}

/// [`read`], only the items whose `id` `keep_id` accepts, the other lines passed over without
/// parsing the rest of them: a shard's items out of a whole corpus, the other shards' items
/// never parsed. The id is read as [`read`] reads it (a string, a number, or `line-N` when
/// absent). A line whose id cannot be read that way before parsing (not JSON, an id of another
/// type, a key given twice) is parsed in full: its error comes out whoever keeps it, and an
/// item it makes is kept or not by its parsed id. `keep_id` is asked once per item, in the
/// file's order (never for a line that is an error).
/// Every line that comes out is checked as by [`read`], and duplicate ids among them are an
/// error (an id's lines are kept or passed over together).
///
/// # Errors
/// As [`read`].
pub fn read_where(path: &Path, keep_id: impl FnMut(&str) -> bool + 'static) -> Result<impl Iterator<Item = Result<DialogueItem>>> {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    let keep_id = Rc::new(RefCell::new(keep_id));
    // Whether the line the next item comes from had its id probed (and so was already kept).
    let probed = Rc::new(Cell::new(false));
    let (probe_keep, probe_probed) = (Rc::clone(&keep_id), Rc::clone(&probed));
    let pass_over = move |line: usize, text: &str| {
        let id = probe_id(line, text);
        probe_probed.set(id.is_some());
        id.is_some_and(|id| !(probe_keep.borrow_mut())(&id))
    };
    let items = items(JsonLines::open(path)?.passing_over(Box::new(pass_over)));
    Ok(items.filter(move |item| match item {
        Ok(item) if !probed.get() => (keep_id.borrow_mut())(&item.id),
        _ => true,
    }))
}

/// Only the `id` of an item's line (serde skips the other keys without building them).
#[derive(serde::Deserialize)]
struct IdProbe {
    #[serde(default)]
    id: Option<Value>,
}

/// The id [`read`] gives the item on line `line` with text `text`, when the line is a JSON
/// object whose id is a string, a number or absent; `None` otherwise.
fn probe_id(line: usize, text: &str) -> Option<String> {
    match serde_json::from_str::<IdProbe>(text).ok()?.id {
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        None | Some(Value::Null) => Some(format!("line-{line}")),
        Some(_) => None,
    }
}

fn items(lines: JsonLines) -> impl Iterator<Item = Result<DialogueItem>> {
    let path = lines.path().to_owned();
    let mut ids = std::collections::HashMap::<String, usize>::new();
    lines.map(move |item| {
        let (line, v) = item?;
        let doc = Doc { path: &path, line: Some(line) };
        for key in doc.object(&v, "$")?.keys() {
            if !KEYS.contains(&key.as_str()) {
                let near = KEYS.iter().min_by_key(|k| distance(key, k)).filter(|k| distance(key, k) <= 2);
                let hint = near.map_or_else(|| format!(" (known keys: {})", KEYS.join(", ")), |k| format!(" (did you mean {k:?}?)"));
                return Err(doc.err(&format!("$.{key}"), format!("unknown key {key:?}{hint}")));
            }
        }
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
        if let Some(first) = ids.insert(id.clone(), line) {
            return Err(doc.err("$.id", format!("duplicate id {id:?} (also on line {first})")));
        }
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
    })
}

/// Reads a whole JSONL file.
///
/// # Errors
/// The first malformed line (with a hint when the file looks like another kind:
/// [`crate::sniff`]), or a file without items.
pub fn load(path: &Path) -> Result<Vec<DialogueItem>> {
    let items: Vec<DialogueItem> = read(path)?.collect::<Result<_>>().map_err(|e| crate::sniff::with_hint(e, path, Corpus::Jsonl))?;
    if items.is_empty() {
        return Err(Error::record(path, Place::File, "no items (the file is empty or has only blank lines)"));
    }
    Ok(items)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn read_where_passes_over_the_refused_ids_and_parses_what_it_cannot_probe() {
        let dir = std::env::temp_dir().join(format!("dialeval-jsonl-where-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("items.jsonl");
        let lines = [
            r#"{"id": "a", "context": ["hi"], "response": "x"}"#,
            r#"{"id": "b", "context": ["hi"], "response": "y"}"#,
            r#"{"id": 7, "context": ["hi"], "response": "z"}"#,
            "",
            r#"{"context": ["hi"], "response": "no id"}"#,
            r#"{"id": "c", "contxt": ["a key misspelt on a line passed over"]}"#,
            r#"{"id": ["not", "an", "id"], "context": ["hi"], "response": "z"}"#,
            r#"{"id": "d", "context": ["hi"], "response": "z""#,
            r#"{"id": "e", "id": "f", "context": ["hi"], "response": "an id given twice: the last one counts"}"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let kept = |ids: &'static [&'static str]| -> Vec<std::result::Result<String, String>> {
            let mut out = Vec::new();
            for item in read_where(&path, move |id| ids.contains(&id)).unwrap() {
                out.push(item.map(|i| i.id).map_err(|e| e.to_string()));
            }
            out
        };
        // The ids read as `read` reads them: a number's digits, `line-N` when absent.
        let got = kept(&["b", "7", "line-5"]);
        assert_eq!(got[..3], [Ok("b".to_owned()), Ok("7".to_owned()), Ok("line-5".to_owned())]);
        // What cannot be probed is parsed in full: its own error, at its own line.
        assert!(matches!(&got[3], Err(e) if e.contains("items.jsonl:7") && e.contains("$.id")), "{got:?}");
        assert!(matches!(&got[4], Err(e) if e.contains("items.jsonl:8")), "{got:?}");
        // A line parsed in full because its id could not be probed is kept by its parsed id.
        assert_eq!(got.len(), 5, "{got:?}");
        assert_eq!(kept(&["f"]).last(), Some(&Ok("f".to_owned())));
        assert!(!kept(&["e"]).contains(&Ok("e".to_owned())));
        // Asked once per item, in order: the probed ids, then the one parsed in full.
        let asked = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let log = std::rc::Rc::clone(&asked);
        let errors = read_where(&path, move |id| {
            log.borrow_mut().push(id.to_owned());
            false
        })
        .unwrap()
        .filter(Result::is_err)
        .count();
        assert_eq!(*asked.borrow(), ["a", "b", "7", "line-5", "c", "f"]);
        assert_eq!(errors, 2, "the lines that are errors come out whoever keeps what");
        // The misspelt key is an error for whoever keeps its line, as for `read`.
        let c = kept(&["c"]);
        assert!(matches!(&c[0], Err(e) if e.contains("items.jsonl:6") && e.contains("contxt")), "{c:?}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
