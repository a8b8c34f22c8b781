//! Streaming PENMAN reader with block-level error recovery.
//!
//! Grammar and metadata handling follow penman 1.3.1 (`penman/_parse.py`); recovery is ours.
//! Behaviour on the oddities found in real corpora:
//!
//! | input | penman 1.3.1 | this reader |
//! |---|---|---|
//! | comment-only block (file header) | merged into the next graph's metadata | same |
//! | comment-only block whose keys the next block sets again (an `::id` whose graph is missing, as in the Diplomacy files) | merged: the next block's values overwrite it | a [`ParseErrorKind::OrphanMetadata`] error naming the `::id`; the next graph gets only its own metadata ([`PenmanReader::penman_compatible`] merges instead) |
//! | several graphs in one block | several graphs, later ones without metadata | same |
//! | stray text between graphs (e.g. a header line missing its `#`) | stops reading the whole file silently | a [`ParseErrorKind::StrayText`] error, then reading resumes at the next line that starts with `#` or `(`; pending metadata is kept |
//! | syntax error inside a graph | the whole file fails | a [`ParseError`] for that graph, its metadata is discarded, reading resumes at the next line that starts with `#` or `(` in column 1 |
//! | metadata at end of input with no graph | error (`Unexpected end of input`) | [`ParseErrorKind::DanglingMetadata`] naming the keys |
//! | `()` | a graph with no variable | [`ParseErrorKind::EmptyNode`] |
//! | a graph nested deeper than [`MAX_DEPTH`] or with more than [`MAX_NODES`] nodes | read (until Python's recursion limit, about 1,000 levels) | [`ParseErrorKind::TooDeep`] / [`ParseErrorKind::TooLarge`] at the node that crosses the limit; reading resumes as after a syntax error |
//!
//! Line breaks are `\n` (with an optional `\r` before it); penman also splits lines on
//! the rarer separators Python's `str.splitlines` knows (`\x1c`, `\u2028`, ...), which never
//! occur in AMR corpora.

use std::collections::VecDeque;
use std::io::BufRead;

use compact_str::CompactString;

use super::lex::{Kind, Lexer, Token, is_space};
use super::tree::{Edge, Metadata, Node, Target, Tree};
use crate::error::{Error, ParseError, ParseErrorKind, Result};

/// The deepest nesting of nodes a graph may have (the top node is at depth 1): the shared
/// [`dialeval_common::amr_limits::MAX_DEPTH`]. Every [`Tree`] this reader makes is at most this
/// deep, so every recursive walk over a tree (writing, simplification, Smatch's triples, path
/// matrices, dropping it) is bounded by it.
pub const MAX_DEPTH: usize = dialeval_common::amr_limits::MAX_DEPTH;

/// The most nodes (variables) one graph may have ([`dialeval_common::amr_limits::MAX_NODES`]):
/// it bounds the cost of everything quadratic in the nodes (Smatch's candidate tables, full
/// path matrices) for any text a user hands in.
pub const MAX_NODES: usize = dialeval_common::amr_limits::MAX_NODES;

/// Decodes every graph in `text`, reporting each malformed block as an error item.
///
/// # Examples
/// ```
/// let graphs = dialeval_amr_graph::penman::decode_all("# ::id 1\n(b / bark-01 :ARG0 (d / dog))");
/// let tree = graphs[0].as_ref().map_err(|e| e.to_string())?;
/// assert_eq!(tree.id(), Some("1"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// With the `parallel` feature a large text is cut into segments at block starts (a line that
/// begins with `#` or `(` after a blank line, where a reader always ends the block before) and
/// the segments are read on all cores. A cut is kept only if the reader of the segment before
/// it ends with no metadata waiting for a graph; otherwise the text is read in one piece. So the
/// items, their order and their error positions are those of one sequential reader.
pub fn decode_all(text: &str) -> Vec<Result<Tree>> {
    decode_all_with(text, Ok)
}

/// [`decode_all`] with `f` applied to each tree on the core that read it.
pub(crate) fn decode_all_with<T: Send>(text: &str, f: impl Fn(Tree) -> Result<T> + Sync + Send) -> Vec<Result<T>> {
    let parts = if dialeval_common::threads() < 2 || !cfg!(feature = "parallel") { 1 } else { text.len() / SEGMENT_BYTES };
    decode_cut(text, &block_starts(text, parts), f)
}

/// The bytes per segment [`decode_all`] aims at.
const SEGMENT_BYTES: usize = 64 * 1024;

/// [`decode_all_with`] over the segments of `text` between `cuts` (increasing block starts).
fn decode_cut<T: Send>(text: &str, cuts: &[usize], f: impl Fn(Tree) -> Result<T> + Sync + Send) -> Vec<Result<T>> {
    let read_all = |reader: PenmanReader<TextLines<'_>>| reader.map(|r| r.and_then(&f)).collect::<Vec<_>>();
    if cuts.is_empty() {
        return read_all(PenmanReader::from_text(text));
    }
    let mut segments = Vec::with_capacity(cuts.len() + 1);
    let (mut start, mut lines) = (0, 0);
    for &cut in cuts.iter().chain([&text.len()]) {
        segments.push((lines, &text[start..cut]));
        lines += text.as_bytes()[start..cut].iter().filter(|&&b| b == b'\n').count();
        start = cut;
    }
    let read = dialeval_common::par_map(&segments, |&(line, segment)| {
        let mut reader = PenmanReader::from_text(segment).starting_at_line(line);
        let items: Vec<Result<T>> = reader.by_ref().map(|r| r.and_then(&f)).collect();
        (items, reader.pending.metadata.is_empty())
    });
    if read[..read.len() - 1].iter().any(|(_, clean)| !clean) {
        // Metadata waits at a cut: a sequential reader carries it into the next segment's graph.
        return read_all(PenmanReader::from_text(text));
    }
    read.into_iter().flat_map(|(items, _)| items).collect()
}

/// Up to `parts − 1` cuts spreading `text` evenly: each the start of a line that begins with
/// `#` or `(` right after a blank line. [`PenmanReader`] ends a block at such a blank line
/// whatever the parentheses before it, and a reader starting there reads what it would next.
fn block_starts(text: &str, parts: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts: Vec<usize> = Vec::new();
    for i in 1..parts {
        let mut at = (text.len() / parts * i).max(cuts.last().map_or(0, |&c| c + 1));
        // Lines from the first full line at or after `at`.
        while let Some(nl) = memchr::memchr(b'\n', bytes.get(at..).unwrap_or_default()) {
            let line = at + nl + 1;
            let Some(end) = memchr::memchr(b'\n', &bytes[line..]).map(|e| line + e + 1) else { break };
            if bytes[line..end].iter().all(|&b| is_space(b)) && matches!(bytes.get(end), Some(b'#' | b'(')) {
                cuts.push(end);
                break;
            }
            at = line;
        }
    }
    cuts
}

/// Where a [`PenmanReader`] gets its lines: any [`BufRead`], or text already in memory
/// ([`TextLines`], which skips re-validating UTF-8).
pub trait LineSource {
    /// Appends the next line, with its `\n`, to `buf`; returns the bytes appended (0 at the end).
    ///
    /// # Errors
    /// I/O errors of the underlying reader, or invalid UTF-8.
    fn read_line_into(&mut self, buf: &mut String) -> std::io::Result<usize>;
}

impl<R: BufRead> LineSource for R {
    fn read_line_into(&mut self, buf: &mut String) -> std::io::Result<usize> {
        self.read_line(buf)
    }
}

/// Lines of an in-memory text.
#[derive(Debug, Clone)]
pub struct TextLines<'a>(&'a str);

impl LineSource for TextLines<'_> {
    fn read_line_into(&mut self, buf: &mut String) -> std::io::Result<usize> {
        let end = memchr::memchr(b'\n', self.0.as_bytes()).map_or(self.0.len(), |i| i + 1);
        let (line, rest) = self.0.split_at(end);
        buf.push_str(line);
        self.0 = rest;
        Ok(end)
    }
}

impl<'a> PenmanReader<TextLines<'a>> {
    /// A reader over text already in memory.
    pub fn from_text(text: &'a str) -> Self {
        Self::new(TextLines(text))
    }
}

/// Decodes exactly one graph.
///
/// # Errors
/// The first syntax error, or [`ParseErrorKind::UnexpectedEnd`] when `text` holds no graph.
/// Text after the first graph is ignored, as in `penman.decode`.
pub fn decode(text: &str) -> Result<Tree, ParseError> {
    first_graph(&mut Parser::new(text, 1))
}

/// The comments before the first graph and the graph; the parser stops after its `)`.
fn first_graph(parser: &mut Parser<'_>) -> Result<Tree, ParseError> {
    let mut pending = Metadata::new();
    loop {
        match parser.peek() {
            Some(tok) if tok.kind == Kind::Comment => {
                parser.bump();
                pending.absorb_comment(parser.text(tok));
            }
            Some(tok) if tok.kind == Kind::LParen => {
                let node = parser.graph()?;
                return Ok(Tree { metadata: pending, node });
            }
            Some(tok) => {
                return Err(parser.error_at(tok, ParseErrorKind::StrayText { found: parser.text(tok).to_owned() }));
            }
            None => return Err(parser.error_end("a graph")),
        }
    }
}

/// Decodes exactly one graph: like [`decode`], but after the graph only whitespace and
/// comments may follow. An extra `)`, a second graph or stray text is
/// [`ParseErrorKind::TrailingText`] at its position. The one-graph APIs of this crate
/// ([`crate::AmrGraph::decode`], [`crate::smatch::SmatchTriples::parse`] and so
/// [`crate::smatch::Smatch::score_str`]) read with it.
///
/// # Errors
/// As [`decode`], plus [`ParseErrorKind::TrailingText`].
pub fn decode_one(text: &str) -> Result<Tree, ParseError> {
    let mut parser = Parser::new(text, 1);
    let tree = first_graph(&mut parser)?;
    while let Some(tok) = parser.peek() {
        if tok.kind != Kind::Comment {
            return Err(parser.error_at(tok, ParseErrorKind::TrailingText { found: parser.text(tok).to_owned() }));
        }
        parser.bump();
    }
    Ok(tree)
}

/// Streaming reader over a multi-graph PENMAN file.
///
/// Yields one item per graph or per malformed block; an error never ends the iteration early
/// (except an I/O error, after which the reader stops).
///
/// # Examples
/// ```
/// use dialeval_amr_graph::penman::PenmanReader;
/// let text = "(a / alpha)\n\n(b / beta :ARG0 )\n\n(c / (oops))\n\n(d / delta)\n";
/// let items: Vec<_> = PenmanReader::new(text.as_bytes()).collect();
/// assert_eq!(items.len(), 4);
/// assert!(items[2].is_err());
/// assert_eq!(items[3].as_ref().map_err(|e| e.to_string())?.node.var, "d");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PenmanReader<R> {
    source: R,
    line_no: usize,
    peeked: Option<String>,
    pending: Pending,
    penman_compatible: bool,
    queue: VecDeque<Result<Tree>>,
    chunk: String,
    finished: bool,
}

impl<R: LineSource> PenmanReader<R> {
    /// Wraps a buffered source.
    pub fn new(source: R) -> Self {
        Self { source, line_no: 0, peeked: None, pending: Pending::default(), penman_compatible: false, queue: VecDeque::new(), chunk: String::new(), finished: false }
    }

    /// A reader whose first line is line `before + 1` of a larger text (error positions count
    /// from there).
    #[must_use]
    pub fn starting_at_line(mut self, before: usize) -> Self {
        self.line_no = before;
        self
    }

    /// Merges every comment-only block into the next graph's metadata, as penman 1.3.1 does,
    /// instead of reporting blocks whose keys the next block overwrites.
    #[must_use]
    pub fn penman_compatible(mut self) -> Self {
        self.penman_compatible = true;
        self
    }

    /// Appends the next line (with its newline) to `self.chunk`; `false` at end of input.
    fn read_line_into_chunk(&mut self) -> std::io::Result<bool> {
        if let Some(line) = self.peeked.take() {
            self.chunk.push_str(&line);
            return Ok(true);
        }
        Ok(self.source.read_line_into(&mut self.chunk)? > 0)
    }

    fn next_starts_block(&mut self) -> std::io::Result<bool> {
        if self.peeked.is_none() {
            let mut line = String::new();
            if self.source.read_line_into(&mut line)? == 0 {
                return Ok(false);
            }
            self.peeked = Some(line);
        }
        Ok(self.peeked.as_deref().is_some_and(|l| l.starts_with(['#', '('])))
    }

    /// Reads the next block into `self.chunk`: lines up to a blank line at which all
    /// parentheses are closed (or, with parentheses still open, a blank line followed by a line
    /// that starts a new block with `#` or `(`). Returns the 1-based line number of its first line.
    fn fill_chunk(&mut self) -> std::io::Result<Option<usize>> {
        self.chunk.clear();
        let mut first = None;
        let mut depth: i64 = 0;
        loop {
            let start = self.chunk.len();
            if !self.read_line_into_chunk()? {
                break;
            }
            self.line_no += 1;
            let line = &self.chunk.as_bytes()[start..];
            if !line.iter().all(|&b| is_space(b)) {
                first.get_or_insert(self.line_no);
                depth += paren_balance(line);
                continue;
            }
            self.chunk.truncate(start);
            if first.is_some() && (depth <= 0 || self.next_starts_block()?) {
                break;
            }
            if first.is_some() {
                // A blank line inside an open graph: keep the line count right for positions.
                self.chunk.push('\n');
            }
        }
        Ok(first)
    }
}

/// Net parentheses opened on one line, outside quoted strings and comments.
fn paren_balance(line: &[u8]) -> i64 {
    if memchr::memchr2(b'"', b'#', line).is_none() {
        // No string, no comment (the common line): count both brackets in one vectorisable pass.
        let (open, close) = line.iter().fold((0_i64, 0_i64), |(o, c), &b| (o + i64::from(b == b'('), c + i64::from(b == b')')));
        return open - close;
    }
    let indent = line.iter().take_while(|&&b| is_space(b)).count();
    if line.get(indent) == Some(&b'#') {
        return 0;
    }
    let mut depth = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut previous = b' ';
    for &b in line {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'#' if is_space(previous) => break,
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
        }
        previous = b;
    }
    depth
}

impl<R: LineSource> Iterator for PenmanReader<R> {
    type Item = Result<Tree>;

    fn next(&mut self) -> Option<Result<Tree>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item);
            }
            if self.finished {
                return None;
            }
            match self.fill_chunk() {
                Err(e) => {
                    self.finished = true;
                    return Some(Err(Error::Io(e)));
                }
                Ok(None) => {
                    self.finished = true;
                    let line = self.line_no.max(1);
                    return dangling(&self.pending.metadata, line, "").map(|e| Err(e.into()));
                }
                Ok(Some(first_line)) => {
                    self.pending.carried = !self.penman_compatible && !self.pending.metadata.is_empty();
                    let items = parse_chunk(&self.chunk, first_line, &mut self.pending);
                    self.queue.extend(items.into_iter().map(|r| r.map_err(Error::from)));
                }
            }
        }
    }
}

fn dangling(pending: &Metadata, line: usize, snippet: &str) -> Option<ParseError> {
    (!pending.is_empty()).then(|| ParseError { kind: ParseErrorKind::DanglingMetadata { keys: pending.iter().map(|(k, _)| k.to_owned()).collect() }, line, column: 1, snippet: snippet.to_owned() })
}

/// Metadata waiting for its graph.
#[derive(Default)]
struct Pending {
    metadata: Metadata,
    /// The line of its first comment.
    since: usize,
    /// Whether it came from an earlier block and is checked for being overwritten
    /// (never in penman-compatible mode).
    carried: bool,
}

/// The most characters of a line an error quotes.
const SNIPPET_CHARS: usize = 160;

/// The line, or the [`SNIPPET_CHARS`] characters of it around 1-based `column` with `…` where
/// it was cut: an error in a megabyte-long line quotes a window, not the line.
fn snippet_around(line: &str, column: usize) -> String {
    if line.len() <= SNIPPET_CHARS {
        return line.to_owned();
    }
    let from = column.saturating_sub(SNIPPET_CHARS / 2 + 1);
    let mut out = String::with_capacity(SNIPPET_CHARS + 8);
    if from > 0 {
        out.push('…');
    }
    let mut chars = line.chars().skip(from);
    out.extend(chars.by_ref().take(SNIPPET_CHARS));
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

/// Parses every graph of one block. Metadata not followed by a graph stays in `pending`.
fn parse_chunk(text: &str, first_line: usize, pending: &mut Pending) -> Vec<Result<Tree, ParseError>> {
    let mut out = Vec::new();
    let mut parser = Parser::new(text, first_line);
    while let Some(tok) = parser.peek() {
        match tok.kind {
            Kind::Comment => {
                parser.bump();
                let comment = parser.text(tok);
                if pending.metadata.is_empty() {
                    pending.since = parser.position(tok.start).0;
                } else if pending.carried {
                    let line = pending.since;
                    let mut fresh = Metadata::new();
                    fresh.absorb_comment(comment);
                    if fresh.iter().any(|(k, _)| pending.metadata.get(k).is_some()) {
                        let id = pending.metadata.get("id").map(str::to_owned);
                        let snippet = pending.metadata.iter().map(|(k, v)| format!("::{k} {v}")).collect::<Vec<_>>().join(" ");
                        out.push(Err(ParseError { kind: ParseErrorKind::OrphanMetadata { id }, line, column: 1, snippet }));
                        pending.metadata = Metadata::new();
                        pending.since = parser.position(tok.start).0;
                    }
                    pending.carried = false;
                }
                pending.metadata.absorb_comment(comment);
            }
            Kind::LParen => match parser.graph() {
                Ok(node) => {
                    out.push(Ok(Tree { metadata: std::mem::take(&mut pending.metadata), node }));
                }
                Err(err) => {
                    pending.metadata = Metadata::new();
                    parser.resync_after(tok.start.max(parser.last_end.saturating_sub(1)));
                    out.push(Err(err));
                }
            },
            _ => {
                let found = parser.text(tok).to_owned();
                out.push(Err(parser.error_at(tok, ParseErrorKind::StrayText { found })));
                parser.resync_after(tok.start);
            }
        }
    }
    out
}

struct Parser<'a> {
    text: &'a str,
    first_line: usize,
    lexer: Lexer<'a>,
    next: Option<Token>,
    last_end: usize,
    /// Nesting depth of the node being read (the top node is 1).
    depth: usize,
    /// Nodes of the graph being read so far.
    nodes: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, first_line: usize) -> Self {
        let mut lexer = Lexer::new(text);
        let next = lexer.next();
        Self { text, first_line, lexer, next, last_end: 0, depth: 0, nodes: 0 }
    }

    fn peek(&self) -> Option<Token> {
        self.next
    }

    fn bump(&mut self) -> Option<Token> {
        let tok = self.next.take()?;
        self.last_end = tok.end;
        self.next = self.lexer.next();
        Some(tok)
    }

    fn text(&self, tok: Token) -> &'a str {
        &self.text[tok.start..tok.end]
    }

    /// Skips to the first line after the one containing byte `pos` that starts with `#`
    /// (after indentation) or with `(` in column 1.
    fn resync_after(&mut self, pos: usize) {
        let bytes = self.text.as_bytes();
        let line_end = |from: usize| bytes[from..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| from + i);
        let mut at = (line_end(pos.min(bytes.len())) + 1).min(bytes.len());
        while at < bytes.len() {
            let end = line_end(at);
            let line = &bytes[at..end];
            let indent = line.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
            if line.first() == Some(&b'(') || line.get(indent) == Some(&b'#') {
                break;
            }
            at = end + 1;
        }
        self.lexer.seek(at);
        self.next = self.lexer.next();
    }

    fn position(&self, pos: usize) -> (usize, usize, String) {
        let before = &self.text[..pos];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.text[pos..].find('\n').map_or(self.text.len(), |i| pos + i);
        let line = self.first_line + before.matches('\n').count();
        let column = before[line_start..].chars().count() + 1;
        let snippet = snippet_around(self.text[line_start..line_end].trim_end_matches('\r'), column);
        (line, column, snippet)
    }

    fn error_at(&self, tok: Token, kind: ParseErrorKind) -> ParseError {
        let (line, column, snippet) = self.position(tok.start);
        ParseError { kind, line, column, snippet }
    }

    fn error_end(&self, expected: &'static str) -> ParseError {
        let (line, column, snippet) = self.position(self.last_end);
        ParseError { kind: ParseErrorKind::UnexpectedEnd { expected }, line, column, snippet }
    }

    fn expect(&mut self, kind: Kind, expected: &'static str) -> Result<Token, ParseError> {
        match self.peek() {
            Some(tok) if tok.kind == kind => {
                self.bump();
                Ok(tok)
            }
            Some(tok) => Err(self.unexpected(tok, expected)),
            None => Err(self.error_end(expected)),
        }
    }

    fn unexpected(&self, tok: Token, expected: &'static str) -> ParseError {
        self.error_at(tok, ParseErrorKind::Unexpected { expected, found: self.text(tok).to_owned() })
    }

    fn peek_or_end(&self, expected: &'static str) -> Result<Token, ParseError> {
        self.peek().ok_or_else(|| self.error_end(expected))
    }

    /// One whole graph: [`Parser::node`] with the depth and node limits counted from zero.
    fn graph(&mut self) -> Result<Node, ParseError> {
        self.depth = 0;
        self.nodes = 0;
        self.node()
    }

    /// `(` SYMBOL [`/` (SYMBOL|STRING) [ALIGNMENT]] edge* `)`, as penman's `_parse_node`;
    /// recursive, at most [`MAX_DEPTH`] levels deep.
    fn node(&mut self) -> Result<Node, ParseError> {
        let open = self.expect(Kind::LParen, "'('")?;
        if self.depth == MAX_DEPTH {
            return Err(self.error_at(open, ParseErrorKind::TooDeep { limit: MAX_DEPTH }));
        }
        if self.nodes == MAX_NODES {
            return Err(self.error_at(open, ParseErrorKind::TooLarge { limit: MAX_NODES }));
        }
        self.nodes += 1;
        self.depth += 1;
        let node = self.node_body(open);
        self.depth -= 1;
        node
    }

    fn node_body(&mut self, open: Token) -> Result<Node, ParseError> {
        let tok = self.peek_or_end("a variable")?;
        if tok.kind == Kind::RParen {
            return Err(self.error_at(open, ParseErrorKind::EmptyNode));
        }
        let var = self.expect(Kind::Symbol, "a variable")?;
        let mut node = Node { var: self.text(var).into(), concept: None, edges: Vec::new() };
        if self.peek_or_end("'/', a role or ')'")?.kind == Kind::Slash {
            self.bump();
            let tok = self.peek_or_end("a concept")?;
            if matches!(tok.kind, Kind::Symbol | Kind::String) {
                self.bump();
                node.concept = Some(self.with_alignment(tok));
            }
        }
        loop {
            let tok = self.peek_or_end("a role or ')'")?;
            if tok.kind == Kind::RParen {
                self.bump();
                return Ok(node);
            }
            node.edges.push(self.edge()?);
        }
    }

    /// Token text plus a directly following ALIGNMENT token, if any.
    fn with_alignment(&mut self, tok: Token) -> CompactString {
        let mut s = CompactString::from(self.text(tok));
        if let Some(next) = self.peek().filter(|t| t.kind == Kind::Alignment) {
            self.bump();
            s.push_str(self.text(next));
        }
        s
    }

    /// ROLE [ALIGNMENT] (SYMBOL|STRING [ALIGNMENT] | node | nothing), as penman's `_parse_edge`.
    fn edge(&mut self) -> Result<Edge, ParseError> {
        let role_tok = self.expect(Kind::Role, "a role or ')'")?;
        let role = self.with_alignment(role_tok);
        let tok = self.peek_or_end("a constant, a node or ')'")?;
        let target = match tok.kind {
            Kind::Symbol | Kind::String => {
                self.bump();
                Target::Atom(self.with_alignment(tok))
            }
            Kind::LParen => Target::Node(self.node()?),
            Kind::Role | Kind::RParen => Target::Missing,
            _ => return Err(self.unexpected(tok, "a constant, a node or a role")),
        };
        Ok(Edge { role, target })
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Result<Tree>> {
        PenmanReader::new(text.as_bytes()).collect()
    }

    #[test]
    fn any_cut_at_block_starts_reads_as_one_reader() {
        // Comment-only blocks, a graph with a blank line inside, an unclosed graph, stray text
        // after metadata, an extra ')' and metadata at the end: reading in segments at any one or
        // two block starts must give the items and positions of one reader over the whole text.
        let text = "# header\n\n# ::id 1\n(a / b\n\n   :ARG0 (c / d))\n\n# ::id 2\n# ::snt x\n\n(e / f)\n\n(g / h\n\n# ::id 4\n(i / j))\n\nstray words\n\n(k / l :ARG1 (m / n))\n# ::id 7\nmore stray\n\n(o / p) # ::snt tail\n\n(q / r)\n\n# ::id dangling\n";
        let whole: Vec<String> = read(text).iter().map(|r| format!("{r:?}")).collect();
        let starts: Vec<usize> = (1..text.len()).filter(|&i| text[..i].ends_with("\n\n") && text[i..].starts_with(['#', '('])).collect();
        assert!(starts.len() >= 8, "{starts:?}");
        let mut pairs = 0;
        for (k, &a) in starts.iter().enumerate() {
            for cuts in std::iter::once(vec![a]).chain(starts[k + 1..].iter().map(|&b| vec![a, b])) {
                let cut: Vec<String> = decode_cut(text, &cuts, Ok).iter().map(|r| format!("{r:?}")).collect();
                assert_eq!(whole, cut, "cuts {cuts:?}");
                pairs += 1;
            }
        }
        assert!(pairs > 30);
        // The evenly spread cuts are block starts.
        for parts in 2..40 {
            let cuts = block_starts(text, parts);
            assert!(cuts.iter().all(|c| starts.contains(c)) && cuts.windows(2).all(|w| w[0] < w[1]), "{parts}: {cuts:?}");
        }
        assert!(block_starts(text, 6).len() >= 3);
    }

    #[test]
    fn comment_only_block_merges_into_next_graph() {
        let items = read("# release header\n# ::file f\n\n# ::id b\n(a / alpha)\n");
        assert_eq!(items.len(), 1);
        let tree = items[0].as_ref().ok().cloned().unwrap_or_else(|| Tree::new(Node::new("?", "?")));
        assert_eq!(tree.metadata.iter().collect::<Vec<_>>(), [("file", "f"), ("id", "b")]);
    }

    #[test]
    fn metadata_block_without_graph_is_reported_unless_penman_compatible() {
        let text = "# ::id lost ::date d\n# ::snt gone\n\n# ::id kept\n# ::snt here\n(a / alpha)\n";
        let items = read(text);
        assert_eq!(items.len(), 2);
        match &items[0] {
            Err(Error::Parse(e)) => {
                assert_eq!(e.kind, ParseErrorKind::OrphanMetadata { id: Some("lost".into()) });
                assert_eq!(e.line, 1);
            }
            other => panic!("expected an orphan-metadata error, got {other:?}"),
        }
        assert!(matches!(&items[1], Ok(t) if t.metadata.len() == 2 && t.id() == Some("kept")));
        let merged: Vec<_> = PenmanReader::new(text.as_bytes()).penman_compatible().collect();
        assert_eq!(merged.len(), 1);
        assert!(matches!(&merged[0], Ok(t) if t.metadata.len() == 3 && t.id() == Some("kept")));
    }

    #[test]
    fn several_graphs_in_one_block() {
        let items = read("# ::id a\n(a / alpha) (b / beta)\n");
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[1], Ok(t) if t.metadata.is_empty() && t.node.var == "b"));
    }

    #[test]
    fn stray_header_line_is_reported_and_graph_kept() {
        let items = read(" ::snt hello\n# ::id 1\n(h / hello)\n");
        assert_eq!(items.len(), 2);
        match &items[0] {
            Err(Error::Parse(e)) => {
                assert_eq!((e.line, e.column), (1, 2));
                assert!(matches!(e.kind, ParseErrorKind::StrayText { .. }));
            }
            other => panic!("expected a stray-text error, got {other:?}"),
        }
        assert!(matches!(&items[1], Ok(t) if t.id() == Some("1")));
    }

    #[test]
    fn error_inside_graph_skips_to_next_block_only() {
        let text = "# ::id 1\n(a / alpha\n   :ARG0 (b / beta)\n   :ARG1 ~bad)\n\n# ::id 2\n(c / gamma)\n";
        let items = read(text);
        assert_eq!(items.len(), 2);
        match &items[0] {
            Err(Error::Parse(e)) => assert_eq!((e.line, e.column), (4, 10)),
            other => panic!("expected a parse error, got {other:?}"),
        }
        assert!(matches!(&items[1], Ok(t) if t.id() == Some("2")));
    }

    #[test]
    fn unclosed_graph_does_not_swallow_the_rest() {
        let items = read("(a / alpha :ARG0 (b / beta)\n\n(c / gamma)\n");
        assert_eq!(items.len(), 2);
        assert!(items[0].is_err());
        assert!(matches!(&items[1], Ok(t) if t.node.var == "c"));
    }

    #[test]
    fn dangling_metadata_is_reported() {
        let items = read("(a / alpha)\n\n# ::id lost\n");
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[1], Err(Error::Parse(ParseError { kind: ParseErrorKind::DanglingMetadata { .. }, .. }))));
    }

    #[test]
    fn missing_target_and_concept_are_tolerated() {
        let tree = decode("(a / :ARG0 :ARG1 (b))").map_err(|e| e.to_string());
        let tree = tree.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tree.node.concept, None);
        assert_eq!(tree.node.edges[0].target, Target::Missing);
    }

    #[test]
    fn empty_node_is_an_error() {
        assert!(matches!(decode("()"), Err(ParseError { kind: ParseErrorKind::EmptyNode, .. })));
    }

    #[test]
    fn decode_one_takes_exactly_one_graph() {
        let trailing = |text: &str| match decode_one(text) {
            Err(ParseError { kind: ParseErrorKind::TrailingText { found }, line, column, .. }) => (found, line, column),
            other => panic!("{text:?}: expected trailing text, got {other:?}"),
        };
        assert_eq!(trailing("(w / want-01 :ARG0 (b / boy)))"), (")".to_owned(), 1, 30));
        assert_eq!(trailing("(a / alpha)\n(b / beta)"), ("(".to_owned(), 2, 1));
        assert_eq!(trailing("(a / alpha) junk"), ("junk".to_owned(), 1, 13));
        assert!(decode_one("(a / alpha)").is_ok());
        assert!(decode_one("# ::snt hi\n(a / alpha)\n# a closing comment\n\n").is_ok());
        // `decode` keeps penman.decode's rule: what follows the first graph is ignored.
        assert!(decode("(a / alpha))").is_ok());
        let msg = decode_one("(a / alpha))").unwrap_err().to_string();
        assert!(msg.contains("unbalanced `)`") && msg.contains("line 1, column 12"), "{msg}");
    }
}
