//! What kind of corpus a file looks like, from its first bytes, so that a file given to the
//! wrong loader fails with a hint instead of a bare JSON error (a JSONL file read as USR stops
//! at `trailing characters at line 2`).
//!
//! The loaders of this crate ([`crate::usr::load`], [`crate::fed::load`],
//! [`crate::jsonl::load`], [`crate::grade::load_release`]) call [`with_hint`] on failure.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::error::Error;
use crate::item::Corpus;

/// How many bytes of a file [`guess`] reads.
const SNIFF_BYTES: u64 = 64 * 1024;

/// The corpus kind `path` looks like, or `None` when it looks like none (or cannot be read).
/// A directory with `eval_data/` is GRADE's release; a file is judged by its first line or
/// first record: a JSON object per line with `positive_responses` is DailyDialog++, one with
/// `context` the generic JSONL; an array whose first record has `responses` and `annotators` is
/// USR, one with `annotations` and `system` FED; an object of conversations with `content` and
/// `conversation_rating` is Topical-Chat.
pub fn guess(path: &Path) -> Option<Corpus> {
    if path.is_dir() {
        return path.join("eval_data").is_dir().then_some(Corpus::Grade);
    }
    // Only a regular file can be read again: a pipe or FIFO (`<(…)`) was read by the loader
    // whose error this guess explains, and opening it again would wait for a writer.
    if !path.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(SNIFF_BYTES).read_to_end(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head);
    let body = text.trim_start();
    if body.starts_with('[') {
        let first = first_array_record(body)?;
        return if has(&first, &["responses", "annotators"]) {
            Some(Corpus::Usr)
        } else if has(&first, &["annotations", "system"]) {
            Some(Corpus::FedTurn)
        } else {
            None
        };
    }
    if body.starts_with('{') {
        let line = body.lines().next()?;
        if let Ok(Value::Object(first)) = serde_json::from_str::<Value>(line) {
            let first = Value::Object(first);
            return if has(&first, &["positive_responses"]) {
                Some(Corpus::DailyDialogPlusPlus)
            } else if has(&first, &["context"]) {
                Some(Corpus::Jsonl)
            } else {
                None
            };
        }
        return (body.contains("\"content\"") && body.contains("\"conversation_rating\"")).then_some(Corpus::TopicalChat);
    }
    None
}

/// The first record of a JSON array that may be cut off after it.
fn first_array_record(body: &str) -> Option<Value> {
    let inner = body.strip_prefix('[')?;
    let mut stream = serde_json::Deserializer::from_str(inner).into_iter::<Value>();
    stream.next()?.ok()
}

fn has(record: &Value, keys: &[&str]) -> bool {
    keys.iter().all(|k| record.get(k).is_some())
}

/// What a kind is called in a hint, with the examples' `--corpus` value where there is one.
pub fn describe(kind: Corpus) -> &'static str {
    match kind {
        Corpus::Usr => "USR (`--corpus usr`)",
        Corpus::FedTurn | Corpus::FedDialogue => "FED (`--corpus fed` or `fed-dialogue`)",
        Corpus::DailyDialogPlusPlus => "DailyDialog++ (`datasets::ddpp`)",
        Corpus::TopicalChat => "Topical-Chat (`datasets::topical`)",
        Corpus::Grade => "GRADE's release (`--corpus grade`)",
        Corpus::Jsonl => "the generic JSONL format (`--corpus jsonl`)",
    }
}

/// `err` from reading `path` as `expected`, with a hint when the file looks like another kind
/// (only for syntax and record errors; I/O and setting errors are returned as they are).
pub fn with_hint(err: Error, path: &Path, expected: Corpus) -> Error {
    if !matches!(err, Error::Json { .. } | Error::Record { .. }) {
        return err;
    }
    let same = |a: Corpus, b: Corpus| a == b || matches!((a, b), (Corpus::FedTurn | Corpus::FedDialogue, Corpus::FedTurn | Corpus::FedDialogue));
    match guess(path) {
        Some(found) if !same(found, expected) => Error::WrongKind { expected, found, source: Box::new(err) },
        _ => err,
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("dialeval-sniff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn kinds_from_their_first_record() {
        let cases = [
            ("a.jsonl", "{\"id\": 1, \"context\": [\"hi\"], \"response\": \"yo\"}\n{\"id\": 2, \"context\": []}\n", Some(Corpus::Jsonl)),
            ("b.json", "{\"id\": 0, \"context\": [\"a\"], \"positive_responses\": [\"b\"]}\n", Some(Corpus::DailyDialogPlusPlus)),
            ("c.json", "[\n  {\"context\": \"a\", \"fact\": \"f\", \"responses\": [], \"annotators\": []}, {\"cut", Some(Corpus::Usr)),
            ("d.json", "[{\"context\": \"User: hi\", \"response\": \"x\", \"system\": \"Meena\", \"annotations\": {}}]", Some(Corpus::FedTurn)),
            ("e.json", "{\n \"t_1\": {\"article_url\": \"u\", \"config\": \"A\", \"content\": [], \"conversation_rating\": {}}}", Some(Corpus::TopicalChat)),
            ("f.txt", "(a / alpha)\n", None),
            ("g.json", "[1, 2]", None),
        ];
        for (name, text, want) in cases {
            assert_eq!(guess(&file(name, text)), want, "{name}");
        }
        assert_eq!(guess(Path::new("/nonexistent/dialeval")), None);
    }

    #[test]
    fn a_jsonl_file_read_as_usr_says_so() {
        let path = file("user.jsonl", "{\"id\": 1, \"context\": [\"hi\"], \"response\": \"yo\"}\n{\"id\": 2, \"context\": [\"a\"], \"response\": \"b\"}\n");
        let err = crate::usr::load(&path).unwrap_err();
        assert!(matches!(err, Error::WrongKind { expected: Corpus::Usr, found: Corpus::Jsonl, .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("invalid JSON") && msg.contains("--corpus jsonl"), "{msg}");
        // The right loader reads it; a malformed file of the right kind gets no hint.
        assert_eq!(crate::jsonl::load(&path).unwrap().len(), 2);
        let bad = file("bad.jsonl", "{\"id\": 1, \"context\": 3}\n");
        assert!(matches!(crate::jsonl::load(&bad).unwrap_err(), Error::Record { .. }));
    }
}
