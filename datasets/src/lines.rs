//! Streaming JSON-lines reading shared by the JSONL loaders.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Place, Result};

/// The UTF-8 byte-order mark, which some editors put at the start of a file.
const BOM: &str = "\u{feff}";

/// `bytes` (line `line` of `path`, or the whole file from line `line` on) as UTF-8, or an error
/// naming the line and column (in characters) of the first invalid byte.
pub(crate) fn utf8(path: &Path, line: usize, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        // The prefix is valid UTF-8 by construction.
        let valid = std::str::from_utf8(valid).unwrap_or_default();
        let lines_before = valid.matches('\n').count();
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        let bad = e.as_bytes()[e.utf8_error().valid_up_to()];
        Error::record(path, Place::LineColumn(line + lines_before, column), format!("invalid UTF-8 (byte 0x{bad:02x}); the file must be UTF-8"))
    })
}

/// A whole text file as UTF-8 without a leading byte-order mark.
///
/// # Errors
/// I/O; invalid UTF-8, named by line and column.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut text = utf8(path, 1, bytes)?;
    if text.starts_with(BOM) {
        text.drain(..BOM.len());
    }
    Ok(text)
}

/// Non-empty lines of a JSONL file parsed one at a time, with their 1-based line numbers. A
/// byte-order mark before the first line is skipped; invalid UTF-8 is an error naming its line
/// and column.
pub(crate) struct JsonLines {
    path: PathBuf,
    reader: BufReader<File>,
    buf: Vec<u8>,
    line: usize,
}

impl JsonLines {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(Self { path: path.to_owned(), reader: BufReader::new(file), buf: Vec::new(), line: 0 })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Iterator for JsonLines {
    type Item = Result<(usize, Value)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.buf.clear();
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(Error::io(&self.path, e))),
            }
            self.line += 1;
            if self.buf.ends_with(b"\n") {
                self.buf.pop();
                if self.buf.ends_with(b"\r") {
                    self.buf.pop();
                }
            }
            let line = match utf8(&self.path, self.line, std::mem::take(&mut self.buf)) {
                Ok(l) => l,
                Err(e) => return Some(Err(e)),
            };
            let line = if self.line == 1 { line.strip_prefix(BOM).unwrap_or(&line) } else { &line };
            if line.trim().is_empty() {
                continue;
            }
            return Some(serde_json::from_str(line).map(|v| (self.line, v)).map_err(|source| Error::Json { path: self.path.clone(), place: Place::Line(self.line), source }));
        }
    }
}
