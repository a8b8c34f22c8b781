//! An external AMR parser (amrlib's or SPRING's command line, or any program) over a line
//! protocol:
//!
//! - the program is started once per batch with its arguments;
//! - it reads the sentences on stdin, one per line (line breaks inside a sentence become
//!   spaces), until end of input;
//! - it writes one PENMAN block per sentence on stdout, in order, blocks separated by blank
//!   lines; `#` comment lines are allowed and ignored; a sentence it cannot parse is the block
//!   `# ::error <reason>`;
//! - it exits with status 0.
//!
//! Every graph goes through [`validate`](crate::validate::validate); a wrong number of blocks or
//! a failing exit status is an error of the whole batch.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::error::{Error, Result};
use crate::validate::validate;
use crate::{AmrParser, Parsed, empty_sentence_graph};

/// A parser run as a child process.
#[derive(Debug, Clone)]
pub struct CommandAmrParser {
    program: String,
    args: Vec<String>,
}

impl CommandAmrParser {
    /// `program` with `args`.
    pub fn new(program: impl Into<String>, args: Vec<String>) -> Self {
        Self { program: program.into(), args }
    }

    /// From a command line split at whitespace (`"python3 parse.py --model x"`).
    ///
    /// # Errors
    /// [`Error::Config`] for an empty command line.
    pub fn from_command_line(line: &str) -> Result<Self> {
        let mut parts = line.split_whitespace().map(str::to_owned);
        let program = parts.next().ok_or_else(|| Error::Config("empty parser command".into()))?;
        Ok(Self::new(program, parts.collect()))
    }

    fn fail(&self, problem: impl Into<String>, source: Option<std::io::Error>) -> Error {
        Error::Command { command: format!("{} {}", self.program, self.args.join(" ")).trim().to_owned(), problem: problem.into(), source }
    }

    fn run(&self, sentences: &[&str]) -> Result<Vec<String>> {
        let mut child = Command::new(&self.program).args(&self.args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| self.fail("cannot start", Some(e)))?;
        let input: String = sentences.iter().map(|s| format!("{}\n", s.replace(['\n', '\r'], " "))).collect();
        let mut stdin = child.stdin.take().ok_or_else(|| self.fail("no stdin", None))?;
        // Written from a thread so a parser that answers while reading cannot deadlock us.
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let output = child.wait_with_output().map_err(|e| self.fail("lost while running", Some(e)))?;
        writer.join().map_err(|_| self.fail("the stdin writer panicked", None))?.map_err(|e| self.fail("cannot write the sentences", Some(e)))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(self.fail(format!("exited with {}: {}", output.status, stderr.trim()), None));
        }
        let stdout = String::from_utf8(output.stdout).map_err(|e| self.fail(format!("stdout is not UTF-8: {e}"), None))?;
        let blocks: Vec<String> = stdout.replace("\r\n", "\n").split("\n\n").map(str::trim).filter(|b| !b.is_empty()).map(str::to_owned).collect();
        if blocks.len() != sentences.len() {
            return Err(self.fail(format!("{} blocks for {} sentences (one PENMAN block per input line, separated by blank lines)", blocks.len(), sentences.len()), None));
        }
        Ok(blocks)
    }
}

impl AmrParser for CommandAmrParser {
    fn name(&self) -> &str {
        "command"
    }

    fn model(&self) -> Option<&str> {
        Some(&self.program)
    }

    fn identity(&self) -> String {
        std::iter::once(format!("command {}", self.program)).chain(self.args.iter().cloned()).collect::<Vec<_>>().join(" ")
    }

    fn parse_batch(&self, sentences: &[&str]) -> Vec<Result<Parsed>> {
        let asked: Vec<&str> = sentences.iter().copied().filter(|s| empty_sentence_graph(s).is_none()).collect();
        let mut blocks = match self.run(&asked) {
            Ok(b) => b.into_iter(),
            Err(e) => {
                let text = e.to_string();
                return sentences.iter().map(|_| Err(self.fail(text.clone(), None))).collect();
            }
        };
        sentences
            .iter()
            .map(|s| {
                if let Some(p) = empty_sentence_graph(s) {
                    return Ok(p);
                }
                let block = blocks.next().unwrap_or_default();
                if let Some(reason) = block.lines().find_map(|l| l.trim().strip_prefix("# ::error")) {
                    return Err(self.fail(format!("could not parse {s:?}: {}", reason.trim()), None));
                }
                let penman: String = block.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
                let graph = validate(&penman).map_err(|last| Error::Invalid { sentence: (*s).to_owned(), attempts: 1, last })?;
                Ok(Parsed { graph, penman: penman.trim().to_owned(), attempts: 0, repairs: None })
            })
            .collect()
    }
}
