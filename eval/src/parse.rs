//! Graphs for the utterances a corpus's AMR files do not cover (feature `amr-parse`): every
//! context turn, response and reference without a graph is parsed once, and the graphs are
//! appended to one PENMAN file as soon as they are made, so a killed run keeps them and the next
//! run parses only what is still missing. The file then joins the AMR files of the run (and so
//! the cache keys of the families that read graphs).

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use dialeval_amr_parse::{AmrParser, ParseStats};
use dialeval_datasets::DialogueItem;
use dialeval_datasets::amr::AmrIndex;

use crate::error::{Error, Result};

/// What [`ParseStore::parse_missing`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedMissing {
    /// The PENMAN file holding every graph this parser made for the corpus (old and new).
    pub file: PathBuf,
    /// How this run's sentences went.
    pub stats: ParseStats,
    /// Sentences left without a graph, with the reason.
    pub failures: Vec<(String, String)>,
}

/// The file of `parser`'s graphs in `dir`: `parsed-<name>-<16 hex digits of the sha256 of its
/// identity>.amr.txt` ([`AmrParser::identity`]), so each parser identity has its own store.
pub fn parsed_file(parser: &dyn AmrParser, dir: &Path) -> PathBuf {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(parser.identity().as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    dir.join(format!("parsed-{}-{hex}.amr.txt", parser.name()))
}

const IDENTITY_TAG: &str = "# ::parser-identity ";

/// One parser's graphs in a folder: the file [`parsed_file`] names, which keeps every graph the
/// parser made there, run after run.
#[derive(Clone, Copy)]
pub struct ParseStore<'a> {
    parser: &'a dyn AmrParser,
    dir: &'a Path,
}

impl std::fmt::Debug for ParseStore<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParseStore").field("parser", &self.parser.identity()).field("dir", &self.dir).finish()
    }
}

impl<'a> ParseStore<'a> {
    /// `parser`'s store in `dir` (created on the first parse).
    pub fn new(parser: &'a dyn AmrParser, dir: &'a Path) -> Self {
        Self { parser, dir }
    }

    /// The store's file ([`parsed_file`]).
    pub fn file(&self) -> PathBuf {
        parsed_file(self.parser, self.dir)
    }

    /// Parses the utterances of `items` that none of `files` (nor the store, this parser's
    /// output of earlier runs) has a graph for, in batches of 8, calling `progress(done,
    /// total)`. The store starts with a comment naming the parser's full identity; a store
    /// whose comment names another identity is refused, never mixed.
    ///
    /// # Errors
    /// Unreadable AMR files or an unwritable output; [`Error::Config`] when the parser failed
    /// on every sentence (an endpoint or command that does not work at all) or the store
    /// belongs to another parser identity.
    pub fn parse_missing(&self, items: &[DialogueItem], files: &[PathBuf], progress: &dyn Fn(usize, usize)) -> Result<ParsedMissing> {
        let (parser, dir) = (self.parser, self.dir);
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let file = self.file();
        let identity = parser.identity();
        if file.is_file() {
            // Only the first line names the identity.
            let mut first = String::new();
            std::io::BufReader::new(std::fs::File::open(&file).map_err(|e| Error::io(&file, e))?).read_line(&mut first).map_err(|e| Error::io(&file, e))?;
            let found = first.trim_end_matches(['\n', '\r']).strip_prefix(IDENTITY_TAG);
            if found != Some(identity.as_str()) {
                return Err(Error::Config(format!("{} holds graphs of parser {:?}, not of {identity:?}; move it away to parse afresh", file.display(), found.unwrap_or("(no identity line)"))));
            }
        } else {
            std::fs::write(&file, format!("{IDENTITY_TAG}{identity}\n\n")).map_err(|e| Error::io(&file, e))?;
        }
        // The store exists from here on: it is read once, with the other files.
        let mut known_files = files.to_vec();
        if !known_files.contains(&file) {
            known_files.push(file.clone());
        }
        let known = AmrIndex::load(&known_files)?;
        let mut next_id = known.blocks().iter().filter(|b| b.file == file).count();
        let mut seen = HashSet::new();
        let texts = items.iter().flat_map(|i| i.context.iter().map(|t| t.text.as_str()).chain(i.response.iter().map(|r| r.text.as_str())).chain(i.references.iter().map(String::as_str)));
        let missing: Vec<&str> = texts.filter(|t| known.by_text(t).is_none() && seen.insert(t.trim().to_owned())).collect();
        let mut out = std::fs::OpenOptions::new().create(true).append(true).open(&file).map_err(|e| Error::io(&file, e))?;
        let mut results = Vec::with_capacity(missing.len());
        let mut failures = Vec::new();
        for (k, chunk) in missing.chunks(8).enumerate() {
            let batch = parser.parse_batch(chunk);
            for (text, r) in chunk.iter().zip(&batch) {
                match r {
                    Ok(p) => {
                        next_id += 1;
                        let block = p.block(&format!("parsed-{next_id}"), text, parser.name(), parser.model());
                        writeln!(out, "{block}").map_err(|e| Error::io(&file, e))?;
                    }
                    Err(e) => failures.push(((*text).to_owned(), e.to_string())),
                }
            }
            results.extend(batch);
            progress((k * 8 + chunk.len()).min(missing.len()), missing.len());
        }
        let stats = ParseStats::of(&results);
        if stats.sentences > 0 && stats.failed == stats.sentences {
            let first = failures.first().map_or_else(String::new, |(_, e)| e.clone());
            return Err(Error::Config(format!("the AMR parser ({}) failed on every sentence: {first}", parser.name())));
        }
        Ok(ParsedMissing { file, stats, failures })
    }
}
