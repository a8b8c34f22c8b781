//! Streaming JSON-lines reading shared by the JSONL loaders.

use std::fs::File;
use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Place, Result};

/// Non-empty lines of a JSONL file parsed one at a time, with their 1-based line numbers.
pub(crate) struct JsonLines {
    path: PathBuf,
    lines: Lines<BufReader<File>>,
    line: usize,
}

impl JsonLines {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(Self { path: path.to_owned(), lines: BufReader::new(file).lines(), line: 0 })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Iterator for JsonLines {
    type Item = Result<(usize, Value)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let line = match self.lines.next()? {
                Ok(l) => l,
                Err(e) => return Some(Err(Error::io(&self.path, e))),
            };
            self.line += 1;
            if line.trim().is_empty() {
                continue;
            }
            return Some(serde_json::from_str(&line).map(|v| (self.line, v)).map_err(|source| Error::Json { path: self.path.clone(), place: Place::Line(self.line), source }));
        }
    }
}
