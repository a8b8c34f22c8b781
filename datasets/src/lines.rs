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

/// The longest line a JSONL file may have: 64 MiB. A longer line is an error naming it, read
/// no further (a file without newlines, `/dev/zero`, never fills memory).
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Non-empty lines of a JSONL file parsed one at a time, with their 1-based line numbers. A
/// byte-order mark before the first line is skipped; invalid UTF-8 is an error naming its line
/// and column. The file is opened once and read once, front to back, so a pipe, a FIFO or a
/// process substitution (`<(…)`) works as a file does. A line whose first byte that is not
/// blank cannot open a JSON object fails as soon as that byte is read, and a line longer than
/// [`MAX_LINE_BYTES`] as soon as it is that long.
pub(crate) struct JsonLines {
    path: PathBuf,
    reader: BufReader<File>,
    buf: Vec<u8>,
    line: usize,
    pass_over: Option<PassOver>,
}

/// Decides from a line's number and text, before it is parsed, that it is passed over.
pub(crate) type PassOver = Box<dyn FnMut(usize, &str) -> bool>;

impl JsonLines {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(Self { path: path.to_owned(), reader: BufReader::with_capacity(1 << 16, file), buf: Vec::new(), line: 0, pass_over: None })
    }

    /// Passes over (never parses) the non-blank lines `pass_over` picks; the line numbers of
    /// the others are unchanged.
    pub fn passing_over(mut self, pass_over: PassOver) -> Self {
        self.pass_over = Some(pass_over);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the next line (without its newline) into `buf`; `false` at the end of the file.
    fn read_line(&mut self) -> Result<bool> {
        self.buf.clear();
        let mut opened = false;
        let mut read_any = false;
        loop {
            let available = self.reader.fill_buf().map_err(|e| Error::io(&self.path, e))?;
            if available.is_empty() {
                return Ok(read_any);
            }
            read_any = true;
            let (take, end) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            let chunk = &available[..take];
            if !opened {
                // The first byte that is not blank (nor, on line 1, the byte-order mark).
                let skip = |b: u8| b.is_ascii_whitespace() || (self.line == 0 && [0xef, 0xbb, 0xbf].contains(&b));
                if let Some(&first) = chunk.iter().find(|&&b| !skip(b)) {
                    if first != b'{' {
                        let shown = if first.is_ascii_graphic() { format!("{:?}", first as char) } else { format!("byte 0x{first:02x}") };
                        return Err(Error::record(&self.path, Place::Line(self.line + 1), format!("expected a JSON object (a line starting with '{{'), found {shown}")));
                    }
                    opened = true;
                }
            }
            if self.buf.len() + take > MAX_LINE_BYTES {
                return Err(Error::record(&self.path, Place::Line(self.line + 1), format!("the line is longer than {} MiB (the most a JSONL line may have)", MAX_LINE_BYTES >> 20)));
            }
            self.buf.extend_from_slice(chunk);
            self.reader.consume(take);
            if end {
                return Ok(true);
            }
        }
    }
}

impl Iterator for JsonLines {
    type Item = Result<(usize, Value)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.read_line() {
                Ok(false) => return None,
                Ok(true) => {}
                Err(e) => {
                    self.line += 1;
                    return Some(Err(e));
                }
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
            if let Some(pass_over) = &mut self.pass_over
                && pass_over(self.line, line)
            {
                continue;
            }
            return Some(serde_json::from_str(line).map(|v| (self.line, v)).map_err(|source| Error::Json { path: self.path.clone(), place: Place::Line(self.line), source }));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)] // tests fail loudly
mod tests {
    use super::*;

    fn lines(name: &str, bytes: &[u8]) -> Vec<std::result::Result<usize, String>> {
        let dir = std::env::temp_dir().join(format!("dialeval-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let mut out = Vec::new();
        for item in JsonLines::open(&path).unwrap() {
            let stop = item.is_err();
            out.push(item.map(|(line, _)| line).map_err(|e| e.to_string()));
            if stop {
                break;
            }
        }
        out
    }

    #[test]
    fn lines_are_objects_read_once_with_a_bounded_length() {
        assert_eq!(lines("ok.jsonl", b"\xef\xbb\xbf{\"a\": 1}\n\n  {\"b\": 2}\r\n{}"), [Ok(1), Ok(3), Ok(4)]);
        let zero = lines("zero.jsonl", &[0_u8; 4096]);
        assert!(matches!(&zero[..], [Err(e)] if e.contains("zero.jsonl:1") && e.contains("found byte 0x00")), "{zero:?}");
        let array = lines("array.jsonl", b"{}\n[1, 2]\n");
        assert!(matches!(&array[..], [Ok(1), Err(e)] if e.contains("array.jsonl:2") && e.contains("found '['")), "{array:?}");
        let long = [b"{\"a\": \"".as_slice(), &vec![b'x'; MAX_LINE_BYTES], b"\"}\n"].concat();
        let too_long = lines("long.jsonl", &long);
        assert!(matches!(&too_long[..], [Err(e)] if e.contains("long.jsonl:1") && e.contains("longer than 64 MiB")), "{too_long:?}");
    }
}
