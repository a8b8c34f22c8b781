//! AMR side files: PENMAN blocks with `# ::id` / `# ::snt` metadata (as amrlib, the AMR bank
//! and `../shared/data/silver-amr` write them), indexed by id and by sentence text so they can
//! be attached to dialogue turns. The PENMAN text is kept as written; parsing it belongs to
//! `dialeval-amr-graph`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Place, Result};
use crate::item::{DialogueItem, Turn};
use crate::pairs::TrainingPair;

/// One graph of a side file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AmrBlock {
    /// `::id`, if given.
    pub id: Option<String>,
    /// `::snt`, if given.
    pub snt: Option<String>,
    /// The graph lines (without comments), as written.
    pub penman: String,
    /// Where it came from.
    pub file: PathBuf,
    /// 1-based line of the block's first line.
    pub line: usize,
}

impl AmrBlock {
    /// Whether the graph is the Diplomacy placeholder `(a / amr-empty)`.
    pub fn is_empty_placeholder(&self) -> bool {
        self.penman.split_whitespace().collect::<String>() == "(a/amr-empty)"
    }
}

/// The value of `::key` in a comment line (up to the next ` ::`).
fn meta<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let tag = format!("::{key}");
    let mut rest = line;
    while let Some(at) = rest.find(&tag) {
        let after = &rest[at + tag.len()..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            let value = after.trim_start();
            let end = value.find(" ::").unwrap_or(value.len());
            return Some(value[..end].trim_end());
        }
        rest = after;
    }
    None
}

/// A block of a side file that is not a graph: skipped by the lenient readers, an error for
/// the strict ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MalformedBlock {
    /// The file.
    pub file: PathBuf,
    /// 1-based line of the block's first line.
    pub line: usize,
    /// `::id`, if given.
    pub id: Option<String>,
    /// What is wrong with it.
    pub problem: String,
}

impl std::fmt::Display for MalformedBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.problem)?;
        if let Some(id) = &self.id {
            write!(f, " (::id {id})")?;
        }
        Ok(())
    }
}

/// What is wrong with a block's graph lines that one pass can tell (the full syntax belongs to
/// `dialeval-amr-graph`): no `(` to open it, the empty graph `()`, unbalanced parentheses, or a
/// graph beyond the shared size limits ([`dialeval_common::amr_limits`]: nesting depth and
/// nodes, counted as the `(` outside quoted constants, as the PENMAN reader counts them).
fn graph_problem(graph: &[&str]) -> Option<String> {
    use dialeval_common::amr_limits::{MAX_DEPTH, MAX_NODES};
    let mut chars = graph.iter().flat_map(|l| l.chars()).filter(|c| !c.is_whitespace());
    match (chars.next(), chars.next()) {
        (Some('('), Some(')')) => return Some("the graph `()` has no node".into()),
        (Some('('), _) => {}
        _ => return Some("the graph does not start with `(`".into()),
    }
    let (mut depth, mut deepest, mut nodes, mut quoted, mut escaped) = (0_i64, 0_i64, 0_usize, false, false);
    for b in graph.iter().flat_map(|l| l.bytes().chain(std::iter::once(b'\n'))) {
        match b {
            _ if escaped => escaped = false,
            b'\\' if quoted => escaped = true,
            b'"' => quoted = !quoted,
            b'(' if !quoted => {
                depth += 1;
                nodes += 1;
                deepest = deepest.max(depth);
            }
            b')' if !quoted => depth -= 1,
            _ => {}
        }
    }
    if deepest > MAX_DEPTH as i64 {
        return Some(format!("the graph is nested {deepest} levels deep (the limit is {MAX_DEPTH})"));
    }
    if nodes > MAX_NODES {
        return Some(format!("the graph has {nodes} nodes (the limit is {MAX_NODES})"));
    }
    // A quote left open may hide parentheses: the syntax check is the parser's.
    (depth != 0 && !quoted).then(|| "unbalanced parentheses in the graph".into())
}

/// Splits a side file into blocks at blank lines. Comment-only blocks without `::id` or `::snt`
/// (headers) are skipped.
///
/// # Errors
/// I/O; a malformed block (named by its line): one with `::id` or `::snt` but no graph, a graph
/// that is `()`, does not start with `(`, has unbalanced parentheses, or is beyond the size
/// limits of [`dialeval_common::amr_limits`]. To keep the other
/// graphs of a file with a bad block, use [`read_blocks_lenient`].
pub fn read_blocks(path: &Path) -> Result<Vec<AmrBlock>> {
    let (blocks, malformed) = read_blocks_lenient(path)?;
    match malformed.into_iter().next() {
        Some(bad) => Err(Error::record(&bad.file, Place::Line(bad.line), bad.problem)),
        None => Ok(blocks),
    }
}

/// [`read_blocks`] that keeps every good graph of the file and returns the bad blocks beside
/// them, each with its file and line.
///
/// # Errors
/// I/O only.
pub fn read_blocks_lenient(path: &Path) -> Result<(Vec<AmrBlock>, Vec<MalformedBlock>)> {
    let text = crate::lines::read_text(path)?;
    let mut blocks = Vec::new();
    let mut malformed = Vec::new();
    let (mut id, mut snt, mut graph, mut start) = (None, None, Vec::new(), 0);
    let mut flush = |id: &mut Option<String>, snt: &mut Option<String>, graph: &mut Vec<&str>, start: usize| {
        let problem = if graph.is_empty() {
            // A header (comments without ::id or ::snt) is no block; a sentence without its graph is.
            (id.is_some() || snt.is_some()).then(|| "a block with ::id or ::snt but no graph".to_owned())
        } else {
            graph_problem(graph)
        };
        match problem {
            Some(problem) => malformed.push(MalformedBlock { file: path.to_owned(), line: start, id: id.take(), problem }),
            None if !graph.is_empty() => blocks.push(AmrBlock { id: id.take(), snt: snt.take(), penman: graph.join("\n"), file: path.to_owned(), line: start }),
            None => {}
        }
        graph.clear();
        *id = None;
        *snt = None;
    };
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            flush(&mut id, &mut snt, &mut graph, start);
            continue;
        }
        if graph.is_empty() && id.is_none() && snt.is_none() {
            start = n + 1;
        }
        if line.trim_start().starts_with('#') {
            if let Some(v) = meta(line, "id") {
                id = Some(v.to_owned());
            }
            if let Some(v) = line.split_once("::snt").map(|(_, v)| v.strip_prefix(' ').unwrap_or(v)) {
                snt = Some(v.trim_end().to_owned());
            }
        } else {
            graph.push(line);
        }
    }
    flush(&mut id, &mut snt, &mut graph, start);
    Ok((blocks, malformed))
}

/// How many turns got a graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Coverage {
    /// Turns and responses looked up.
    pub turns: usize,
    /// Of which a graph was found.
    pub with_amr: usize,
}

/// Which of a pair's graphs are there: none, the context's alone (every turn or some), the
/// response's alone, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GraphPresence {
    /// No graph at all.
    None,
    /// Some context turns have graphs, the response has none.
    ContextOnly,
    /// The response has a graph, no context turn has one.
    ResponseOnly,
    /// The response and some, but not all, context turns.
    Partial,
    /// The response and every context turn.
    Complete,
}

impl GraphPresence {
    /// Every pattern, in the order of [`GraphPresenceTable::counts`].
    pub const ALL: [GraphPresence; 5] = [Self::None, Self::ContextOnly, Self::ResponseOnly, Self::Partial, Self::Complete];

    /// The pattern of `pair`.
    pub fn of(pair: &TrainingPair) -> Self {
        let context = pair.context_amr.iter().filter(|g| g.is_some()).count();
        match (pair.response_amr.is_some(), context) {
            (false, 0) => Self::None,
            (false, _) => Self::ContextOnly,
            (true, 0) => Self::ResponseOnly,
            (true, n) if n < pair.context.len() => Self::Partial,
            (true, _) => Self::Complete,
        }
    }

    /// The pattern's name, as serde writes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ContextOnly => "context_only",
            Self::ResponseOnly => "response_only",
            Self::Partial => "partial",
            Self::Complete => "complete",
        }
    }
}

/// Negatives and positives per [`GraphPresence`] pattern: whether having graphs tells the
/// classes apart. A pattern met by one class far more than the other is a label a graph-reading
/// model can learn without reading the graph (a Topical-Chat positive inside a conversation
/// with silver AMR has its graphs, its negative, drawn from another conversation, has only the
/// context's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GraphPresenceTable {
    /// `[negatives, positives]` per pattern, in the order of [`GraphPresence::ALL`].
    pub counts: [[usize; 2]; 5],
}

impl GraphPresenceTable {
    /// Counts the patterns of `pairs`.
    pub fn of(pairs: &[TrainingPair]) -> Self {
        let mut table = Self::default();
        for p in pairs {
            let at = GraphPresence::ALL.iter().position(|g| *g == GraphPresence::of(p)).unwrap_or(0);
            table.counts[at][usize::from(p.label())] += 1;
        }
        table
    }

    /// `[negatives, positives]` of `pattern`.
    pub fn get(&self, pattern: GraphPresence) -> [usize; 2] {
        self.counts[GraphPresence::ALL.iter().position(|g| *g == pattern).unwrap_or(0)]
    }

    /// Pairs with some but not all of their graphs (what [`keep_complete_graphs`] strips).
    pub fn partial(&self) -> usize {
        [GraphPresence::ContextOnly, GraphPresence::ResponseOnly, GraphPresence::Partial].iter().map(|&g| self.get(g).iter().sum::<usize>()).sum()
    }

    /// The table after [`keep_complete_graphs`]: the partial patterns counted as no graph.
    pub fn complete_only(&self) -> Self {
        let mut none = self.get(GraphPresence::None);
        for g in [GraphPresence::ContextOnly, GraphPresence::ResponseOnly, GraphPresence::Partial] {
            let [n, p] = self.get(g);
            none = [none[0] + n, none[1] + p];
        }
        let mut counts = [[0; 2]; 5];
        counts[0] = none;
        counts[4] = self.get(GraphPresence::Complete);
        Self { counts }
    }
}

impl std::fmt::Display for GraphPresenceTable {
    /// `pattern negatives/positives` for each pattern met, e.g. `none 5/3, complete 2/2`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = GraphPresence::ALL.iter().zip(&self.counts).filter(|(_, c)| c[0] + c[1] > 0).map(|(g, c)| format!("{} {}/{}", g.name(), c[0], c[1])).collect();
        write!(f, "{} (negatives/positives)", parts.join(", "))
    }
}

/// Drops the graphs of every pair whose graphs are not [`GraphPresence::Complete`], so that
/// what a model sees of the graphs is all or nothing per pair and the pattern of presence
/// cannot stand in for the label. Returns how many pairs lost graphs.
pub fn keep_complete_graphs(pairs: &mut [TrainingPair]) -> usize {
    let mut stripped = 0;
    for p in pairs.iter_mut() {
        if !matches!(GraphPresence::of(p), GraphPresence::Complete | GraphPresence::None) {
            p.context_amr.iter_mut().for_each(|g| *g = None);
            p.response_amr = None;
            stripped += 1;
        }
    }
    stripped
}

/// Side-file graphs indexed by id and by sentence.
#[derive(Debug, Clone, Default)]
pub struct AmrIndex {
    blocks: Vec<AmrBlock>,
    by_id: HashMap<String, usize>,
    by_snt: HashMap<String, usize>,
    /// Sentences that occurred more than once (the first graph is kept).
    pub duplicate_sentences: usize,
    /// Blocks skipped by [`AmrIndex::load_lenient`] (always empty after [`AmrIndex::load`]).
    pub malformed: Vec<MalformedBlock>,
}

impl AmrIndex {
    /// Reads and indexes several side files (the first graph of a repeated sentence wins);
    /// strict: a malformed block is an error.
    ///
    /// # Errors
    /// As [`read_blocks`].
    pub fn load(paths: &[PathBuf]) -> Result<Self> {
        let index = Self::load_lenient(paths)?;
        match index.malformed.first() {
            Some(bad) => Err(Error::record(&bad.file, Place::Line(bad.line), bad.problem.clone())),
            None => Ok(index),
        }
    }

    /// [`AmrIndex::load`] that serves every good graph and lists the malformed blocks in
    /// [`AmrIndex::malformed`] (file and line each) instead of failing.
    ///
    /// # Errors
    /// I/O only.
    pub fn load_lenient(paths: &[PathBuf]) -> Result<Self> {
        let mut index = Self::default();
        for p in paths {
            let (blocks, malformed) = read_blocks_lenient(p)?;
            index.malformed.extend(malformed);
            for block in blocks {
                let k = index.blocks.len();
                if let Some(id) = &block.id {
                    index.by_id.entry(id.clone()).or_insert(k);
                }
                if let Some(snt) = &block.snt {
                    match index.by_snt.entry(snt.trim().to_owned()) {
                        std::collections::hash_map::Entry::Occupied(_) => index.duplicate_sentences += 1,
                        std::collections::hash_map::Entry::Vacant(slot) => {
                            slot.insert(k);
                        }
                    }
                }
                index.blocks.push(block);
            }
        }
        Ok(index)
    }

    /// Number of graphs.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether there is no graph.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// All graphs in file order.
    pub fn blocks(&self) -> &[AmrBlock] {
        &self.blocks
    }

    /// The graph with this `::id`.
    pub fn by_id(&self, id: &str) -> Option<&AmrBlock> {
        self.by_id.get(id).map(|&k| &self.blocks[k])
    }

    /// The graph whose `::snt` equals `text` (both trimmed).
    pub fn by_text(&self, text: &str) -> Option<&AmrBlock> {
        self.by_snt.get(text.trim()).map(|&k| &self.blocks[k])
    }

    fn attach_turn(&self, turn: &mut Turn, coverage: &mut Coverage) {
        coverage.turns += 1;
        if let Some(b) = self.by_text(&turn.text) {
            turn.amr = Some(b.penman.clone());
            coverage.with_amr += 1;
        }
    }

    /// Attaches graphs to every context turn and response, matched by sentence text.
    pub fn attach(&self, items: &mut [DialogueItem]) -> Coverage {
        let mut coverage = Coverage::default();
        for item in items {
            for t in &mut item.context {
                self.attach_turn(t, &mut coverage);
            }
            if let Some(r) = &mut item.response {
                self.attach_turn(r, &mut coverage);
            }
        }
        coverage
    }

    /// Attaches graphs to the context turns and response of every training pair, matched by
    /// sentence text; pairs without a graph keep `None` there (flagged, never dropped).
    pub fn attach_pairs(&self, pairs: &mut [TrainingPair]) -> Coverage {
        let mut coverage = Coverage::default();
        let mut look_up = |text: &str| {
            coverage.turns += 1;
            let graph = self.by_text(text).map(|b| b.penman.clone());
            coverage.with_amr += usize::from(graph.is_some());
            graph
        };
        for p in pairs {
            p.context_amr = p.context.iter().map(|t| look_up(t)).collect();
            p.response_amr = look_up(&p.response);
        }
        coverage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_graphs_and_blocks_without_a_graph_are_malformed_headers_are_not() {
        let path = std::env::temp_dir().join(format!("dialeval-amr-blocks-{}.txt", std::process::id()));
        let text = "# AMR release header\n\n# ::id a\n# ::snt fine\n(f / fine)\n\n# ::id b\n# ::snt no node\n()\n\n\
                    # ::id c\n# ::snt sentence only\n\n# ::id d\n# ::snt words\nfine words\n\n# ::snt last\n(l / last)\n";
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        let (blocks, malformed) = read_blocks_lenient(&path).unwrap_or_else(|e| panic!("{e}"));
        let found: Vec<(usize, Option<&str>, &str)> = malformed.iter().map(|m| (m.line, m.id.as_deref(), m.problem.as_str())).collect();
        assert_eq!(found, [(7, Some("b"), "the graph `()` has no node"), (11, Some("c"), "a block with ::id or ::snt but no graph"), (14, Some("d"), "the graph does not start with `(`")]);
        assert_eq!(blocks.iter().map(|b| b.snt.as_deref()).collect::<Vec<_>>(), [Some("fine"), Some("last")]);
        let strict = read_blocks(&path).map(|b| b.len()).map_err(|e| e.to_string());
        assert!(matches!(&strict, Err(e) if e.contains(":7") && e.contains("`()`")), "{strict:?}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn graphs_beyond_the_size_limits_are_malformed_blocks() {
        use dialeval_common::amr_limits::{MAX_DEPTH, MAX_NODES};
        let path = std::env::temp_dir().join(format!("dialeval-amr-limits-{}.txt", std::process::id()));
        use dialeval_testkit::{penman_chain as chain, penman_star as star};
        let text = format!(
            "# ::id ok-deep\n# ::snt a\n{}\n\n# ::id too-deep\n# ::snt b\n{}\n\n# ::id ok-wide\n# ::snt c\n{}\n\n# ::id too-wide\n# ::snt d\n{}\n\n# ::id quoted\n# ::snt e\n(q / say-01 :ARG1 \"((((\")\n",
            chain(MAX_DEPTH),
            chain(100_000),
            star(MAX_NODES),
            star(MAX_NODES + 1)
        );
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        let (blocks, malformed) = read_blocks_lenient(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(blocks.iter().map(|b| b.id.as_deref().unwrap_or_default()).collect::<Vec<_>>(), ["ok-deep", "ok-wide", "quoted"]);
        let found: Vec<(usize, &str, &str)> = malformed.iter().map(|m| (m.line, m.id.as_deref().unwrap_or_default(), m.problem.as_str())).collect();
        assert_eq!(found, [(5, "too-deep", "the graph is nested 100000 levels deep (the limit is 512)"), (13, "too-wide", "the graph has 10001 nodes (the limit is 10000)")]);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn metadata_values() {
        assert_eq!(meta("# ::id dip_1.2 ::date 2022", "id"), Some("dip_1.2"));
        assert_eq!(meta("# ::idx 3 ::id a", "id"), Some("a"));
        assert_eq!(meta("# ::snt hi", "id"), None);
    }

    fn pair(kind: crate::pairs::PairKind, context: [Option<&str>; 2], response: Option<&str>) -> TrainingPair {
        TrainingPair {
            id: "p".into(),
            context: vec!["a".into(), "b".into()],
            response: "r".into(),
            kind,
            context_amr: context.iter().map(|g| g.map(str::to_owned)).collect(),
            response_amr: response.map(str::to_owned),
            knowledge: None,
        }
    }

    #[test]
    fn graph_presence_patterns_are_counted_per_class_and_partial_ones_dropped() {
        use crate::pairs::PairKind::{Positive, SampledNegative};
        let g = Some("(x / x)");
        let mut pairs = vec![pair(Positive, [g, g], g), pair(SampledNegative, [g, g], None), pair(Positive, [None, g], g), pair(SampledNegative, [None, None], g), pair(Positive, [None, None], None)];
        let patterns: Vec<GraphPresence> = pairs.iter().map(GraphPresence::of).collect();
        assert_eq!(patterns, [GraphPresence::Complete, GraphPresence::ContextOnly, GraphPresence::Partial, GraphPresence::ResponseOnly, GraphPresence::None]);
        let table = GraphPresenceTable::of(&pairs);
        assert_eq!(table.get(GraphPresence::Complete), [0, 1]);
        assert_eq!(table.get(GraphPresence::ContextOnly), [1, 0]);
        assert_eq!(table.to_string(), "none 0/1, context_only 1/0, response_only 1/0, partial 0/1, complete 0/1 (negatives/positives)");
        assert_eq!(table.partial(), 3);
        assert_eq!(keep_complete_graphs(&mut pairs), 3);
        let after = GraphPresenceTable::of(&pairs);
        assert_eq!(table.complete_only(), after);
        assert_eq!(after.get(GraphPresence::None), [2, 2]);
        assert_eq!(after.get(GraphPresence::Complete), [0, 1]);
        assert!(pairs[0].response_amr.is_some() && pairs[1].context_amr.iter().all(Option::is_none));
    }
}
