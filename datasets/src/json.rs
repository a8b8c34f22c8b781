//! Typed access to parsed JSON that reports the file and JSON path of every problem.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Place, Result};

/// Reads and parses a whole JSON file.
pub(crate) fn read_json(path: &Path) -> Result<Value> {
    let text = crate::lines::read_text(path)?;
    serde_json::from_str(&text).map_err(|source| Error::Json { path: path.to_owned(), place: Place::File, source })
}

/// A JSON document (or one JSONL line) and where it came from.
#[derive(Clone, Copy)]
pub(crate) struct Doc<'a> {
    pub path: &'a Path,
    pub line: Option<usize>,
}

impl<'a> Doc<'a> {
    pub fn file(path: &'a Path) -> Self {
        Self { path, line: None }
    }

    pub fn err(&self, at: &str, problem: impl Into<String>) -> Error {
        let place = match self.line {
            Some(l) => Place::LineJson(l, at.to_owned()),
            None => Place::Json(at.to_owned()),
        };
        Error::record(self.path, place, problem)
    }

    pub fn field<'v>(&self, v: &'v Value, at: &str, key: &str) -> Result<&'v Value> {
        match v {
            Value::Object(m) => m.get(key).ok_or_else(|| self.err(at, format!("missing field `{key}`"))),
            other => Err(self.err(at, format!("expected an object with `{key}`, found {}", kind(other)))),
        }
    }

    pub fn str<'v>(&self, v: &'v Value, at: &str) -> Result<&'v str> {
        v.as_str().ok_or_else(|| self.err(at, format!("expected a string, found {}", kind(v))))
    }

    pub fn array<'v>(&self, v: &'v Value, at: &str) -> Result<&'v [Value]> {
        v.as_array().map(Vec::as_slice).ok_or_else(|| self.err(at, format!("expected a list, found {}", kind(v))))
    }

    pub fn object<'v>(&self, v: &'v Value, at: &str) -> Result<&'v serde_json::Map<String, Value>> {
        v.as_object().ok_or_else(|| self.err(at, format!("expected an object, found {}", kind(v))))
    }

    /// A finite number (a score, a count).
    pub fn number(&self, v: &Value, at: &str) -> Result<f64> {
        let x = v.as_f64().ok_or_else(|| self.err(at, format!("expected a number, found {}", kind(v))))?;
        if x.is_finite() { Ok(x) } else { Err(self.err(at, format!("{v} is not a finite number"))) }
    }

    pub fn strings(&self, v: &Value, at: &str) -> Result<Vec<String>> {
        self.array(v, at)?.iter().enumerate().map(|(i, s)| self.str(s, &format!("{at}[{i}]")).map(str::to_owned)).collect()
    }
}

/// The JSON type of a value, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
