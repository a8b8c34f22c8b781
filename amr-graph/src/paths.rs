//! Graph-Transformer input: the concept sequence and the relation-path matrix over every
//! ordered node pair (Zhu et al. 2019, "Modeling Graph Structure in Transformer for Better
//! AMR-to-Text Generation"; Song et al. 2020), plus serialisable vocabularies.
//!
//! Nodes are the graph's variables and its attribute constants (one node per attribute), in
//! depth-first order of the PENMAN layout, followed by an EOS node when
//! [`PathConfig::eos`] is set. Cell `(i, j)` holds the labels of the path from node `i` to
//! node `j`: `-:ARG0` for following an edge in its (normalised) direction, `+:op1` for following
//! one backwards, so `["-:ARG0", "+:op1"]` reads "i :ARG0 k, and j :op1 k".
//!
//! # Differences from the original preprocessing
//! Zhu et al.'s script took the first path a depth-first search found; this module takes a
//! **shortest** path (breadth-first search; among equally short paths, the first found when
//! neighbours are visited in layout order), so cells do not depend on how the graph was written.
//! Paths longer than [`PathConfig::max_path_len`] keep their first `max_path_len - 1` labels and
//! end with [`TRUNCATED`].

use std::collections::{HashMap, VecDeque};

use rustc_hash::FxHashSet;

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::graph::{AmrGraph, invert_role, is_inverted};
use crate::penman::{Node, Target, split_alignment};

/// Label on the diagonal (a node to itself).
pub const SELF: &str = "<self>";
/// Label of every path to or from the EOS node.
pub const EOS: &str = "<eos>";
/// Concept of the EOS node.
pub const EOS_CONCEPT: &str = "<eos>";
/// Last label of a path cut at [`PathConfig::max_path_len`].
pub const TRUNCATED: &str = "<trunc>";
/// Label between nodes with no connecting path (only in graphs built by hand).
pub const UNREACHABLE: &str = "<unreachable>";

/// Settings of [`GraphInput::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathConfig {
    /// The most labels a cell holds (≥ 1).
    pub max_path_len: usize,
    /// Append an EOS node.
    pub eos: bool,
    /// Keep only the last `k` nodes (EOS included) and the paths among them, found over the
    /// whole graph: what a consumer that cuts to its last `k` nodes needs, built in
    /// O(k · (n + e) + k² · max_path_len) instead of the whole n² matrix. `None` keeps every node.
    pub keep_last: Option<usize>,
}

impl Default for PathConfig {
    fn default() -> Self {
        Self { max_path_len: 4, eos: true, keep_last: None }
    }
}

/// What a node of the input sequence is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// A variable; its concept is the token.
    Concept,
    /// An attribute constant.
    Constant,
    /// The end-of-sequence node.
    Eos,
}

/// Concept sequence plus relation-path matrix of one graph.
///
/// The `n × n` cells are stored flat (row-major): cell `c` holds
/// `labels[offsets[c]..offsets[c + 1]]`, so a whole matrix is two allocations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphInput {
    /// Node tokens (concepts, constants, EOS), in depth-first layout order.
    pub concepts: Vec<CompactString>,
    /// Kind of each node.
    pub kinds: Vec<NodeKind>,
    labels: Vec<CompactString>,
    offsets: Vec<u32>,
}

impl GraphInput {
    /// Builds the input of `graph`.
    ///
    /// # Errors
    /// [`Error::Config`] when `max_path_len` is 0.
    ///
    /// # Complexity
    /// O(n · (n + e) + n² · max_path_len) for n nodes and e edges: one breadth-first search
    /// per node.
    pub fn new(graph: &AmrGraph, config: &PathConfig) -> Result<Self> {
        if config.max_path_len == 0 {
            return Err(Error::Config("max_path_len must be at least 1".into()));
        }
        let mut b = Collector { variables: graph.variables().collect(), ..Collector::default() };
        b.node(&graph.layout().node);
        for (from, role, to) in std::mem::take(&mut b.pending_refs) {
            if let Some(&to) = b.var_index.get(to.as_str()) {
                b.edge(from, &role, to);
            }
        }
        let Collector { mut concepts, mut kinds, adjacency, .. } = b;
        let n_graph = concepts.len();
        if config.eos {
            concepts.push(EOS_CONCEPT.into());
            kinds.push(NodeKind::Eos);
        }
        let n = concepts.len();
        // The kept nodes are first..n; indices below stay those of the whole graph.
        let first = config.keep_last.map_or(0, |k| n.saturating_sub(k));
        let kept = n - first;
        let mut labels = Vec::with_capacity(kept * kept * 2);
        let mut offsets = Vec::with_capacity(kept * kept + 1);
        offsets.push(0);
        let mut search = Bfs::new(n_graph, config.max_path_len);
        let mut path = Vec::new();
        for i in first..n {
            if i < n_graph {
                search.run(i, &adjacency);
            }
            for j in first..n {
                if i == j {
                    labels.push(CompactString::const_new(SELF));
                } else if i == n_graph || j == n_graph {
                    labels.push(CompactString::const_new(EOS));
                } else {
                    match search.path_to(j, &adjacency, &mut path) {
                        Some(truncated) => {
                            labels.extend(path.iter().map(|&l| l.clone()));
                            if truncated {
                                labels.push(CompactString::const_new(TRUNCATED));
                            }
                        }
                        None => labels.push(CompactString::const_new(UNREACHABLE)),
                    }
                }
                offsets.push(u32::try_from(labels.len()).unwrap_or(u32::MAX));
            }
        }
        concepts.drain(..first);
        kinds.drain(..first);
        Ok(Self { concepts, kinds, labels, offsets })
    }

    /// Number of nodes (including EOS).
    pub fn len(&self) -> usize {
        self.concepts.len()
    }

    /// Whether there is no node.
    pub fn is_empty(&self) -> bool {
        self.concepts.is_empty()
    }

    /// Labels of the path from node `i` to node `j`.
    pub fn path(&self, i: usize, j: usize) -> Option<&[CompactString]> {
        let n = self.len();
        (i < n && j < n).then(|| self.cell(i * n + j))
    }

    fn cell(&self, c: usize) -> &[CompactString] {
        &self.labels[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }

    /// Every cell's labels, row-major.
    pub fn cells(&self) -> impl Iterator<Item = &[CompactString]> {
        (0..self.offsets.len() - 1).map(|c| self.cell(c))
    }

    /// Every label of every cell.
    pub fn labels(&self) -> &[CompactString] {
        &self.labels
    }

    /// The path from `i` to `j` as one string, e.g. `-:ARG0+:op1`.
    pub fn path_string(&self, i: usize, j: usize) -> Option<String> {
        self.path(i, j).map(|p| p.iter().map(CompactString::as_str).collect())
    }

    /// Maps tokens to ids: concept ids (`n`), and path-label ids padded with [`Vocab::PAD`] to
    /// `max_path_len` per cell (`n × n × max_path_len`, row-major), with each cell's length.
    pub fn encode(&self, concepts: &Vocab, labels: &Vocab, max_path_len: usize) -> EncodedGraph {
        let n = self.len();
        let mut path_ids = vec![Vocab::PAD; n * n * max_path_len];
        let mut path_lens = vec![0_u8; n * n];
        for (cell, path) in self.cells().enumerate() {
            let len = path.len().min(max_path_len);
            path_lens[cell] = u8::try_from(len).unwrap_or(u8::MAX);
            for (k, label) in path.iter().take(len).enumerate() {
                path_ids[cell * max_path_len + k] = labels.id(label);
            }
        }
        EncodedGraph { concept_ids: self.concepts.iter().map(|c| concepts.id(c)).collect(), path_ids, path_lens, max_path_len }
    }
}

/// Token ids of a [`GraphInput`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncodedGraph {
    /// Concept id per node. Shape `[n]`.
    pub concept_ids: Vec<u32>,
    /// Label ids, padded. Shape `[n, n, max_path_len]`, row-major.
    pub path_ids: Vec<u32>,
    /// Number of real labels per cell. Shape `[n, n]`.
    pub path_lens: Vec<u8>,
    /// Padding length of each cell.
    pub max_path_len: usize,
}

/// Breadth-first search state, reused across sources.
struct Bfs {
    /// `(previous node, index into its adjacency)` per reached node.
    parent: Vec<Option<(usize, usize)>>,
    seen: Vec<bool>,
    /// Edges from the start.
    dist: Vec<usize>,
    /// The node on the path from the start at distance `min(dist, prefix)`: where a path too
    /// long for a cell is cut, so that writing a cell costs O(max_path_len), not O(distance).
    cut: Vec<usize>,
    /// How many labels a truncated cell keeps before [`TRUNCATED`].
    prefix: usize,
    queue: VecDeque<usize>,
}

impl Bfs {
    fn new(n: usize, max_path_len: usize) -> Self {
        Self { parent: vec![None; n], seen: vec![false; n], dist: vec![0; n], cut: vec![0; n], prefix: max_path_len - 1, queue: VecDeque::with_capacity(n) }
    }

    fn run(&mut self, start: usize, adjacency: &[Vec<(usize, CompactString)>]) {
        self.parent.fill(None);
        self.seen.fill(false);
        self.seen[start] = true;
        self.dist[start] = 0;
        self.cut[start] = start;
        self.queue.push_back(start);
        while let Some(u) = self.queue.pop_front() {
            for (k, (v, _)) in adjacency[u].iter().enumerate() {
                if !self.seen[*v] {
                    self.seen[*v] = true;
                    self.parent[*v] = Some((u, k));
                    self.dist[*v] = self.dist[u] + 1;
                    self.cut[*v] = if self.dist[*v] <= self.prefix { *v } else { self.cut[u] };
                    self.queue.push_back(*v);
                }
            }
        }
    }

    /// Writes the labels from the last start to `target` into `path`, at most `prefix + 1` of
    /// them: the whole path when it is that short, else its first `prefix` labels and
    /// `Some(true)` (the cell is truncated). `None` if unreachable.
    fn path_to<'a>(&self, target: usize, adjacency: &'a [Vec<(usize, CompactString)>], path: &mut Vec<&'a CompactString>) -> Option<bool> {
        path.clear();
        if !self.seen[target] {
            return None;
        }
        let truncated = self.dist[target] > self.prefix + 1;
        let mut at = if truncated { self.cut[target] } else { target };
        while let Some((u, k)) = self.parent[at] {
            path.push(&adjacency[u][k].1);
            at = u;
        }
        path.reverse();
        Some(truncated)
    }
}

#[derive(Default)]
struct Collector<'a> {
    concepts: Vec<CompactString>,
    kinds: Vec<NodeKind>,
    adjacency: Vec<Vec<(usize, CompactString)>>,
    var_index: HashMap<CompactString, usize>,
    /// Every variable the graph defines: an atom naming one is a re-entrancy, resolved once all
    /// nodes are numbered (as in penman, a constant spelled like a variable is a reference).
    variables: FxHashSet<&'a str>,
    pending_refs: Vec<(usize, String, String)>,
}

impl Collector<'_> {
    fn add(&mut self, token: &str, kind: NodeKind) -> usize {
        self.concepts.push(token.into());
        self.kinds.push(kind);
        self.adjacency.push(Vec::new());
        self.concepts.len() - 1
    }

    /// Records the surface edge `from role to`, normalising inverted roles.
    fn edge(&mut self, from: usize, role: &str, to: usize) {
        let (source, role, target) = if is_inverted(role) { (to, invert_role(role), from) } else { (from, role.to_owned(), to) };
        self.adjacency[source].push((target, compact_str::format_compact!("-{role}")));
        self.adjacency[target].push((source, compact_str::format_compact!("+{role}")));
    }

    fn node(&mut self, node: &Node) -> usize {
        if let Some(&i) = self.var_index.get(&node.var) {
            return i;
        }
        let concept = node.concept.as_deref().map_or(node.var.as_str(), |c| split_alignment(c).0);
        let i = self.add(concept, NodeKind::Concept);
        self.var_index.insert(node.var.clone(), i);
        for e in &node.edges {
            let role = split_alignment(&e.role).0;
            match &e.target {
                Target::Node(child) => {
                    let j = self.node(child);
                    self.edge(i, role, j);
                }
                Target::Atom(a) => {
                    let a = split_alignment(a).0;
                    if self.variables.contains(a) {
                        self.pending_refs.push((i, role.to_owned(), a.to_owned()));
                    } else {
                        let j = self.add(a, NodeKind::Constant);
                        self.edge(i, role, j);
                    }
                }
                Target::Missing => {}
            }
        }
        i
    }
}

/// A token vocabulary with `<pad>` = 0 and `<unk>` = 1, serialised as its token list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "VocabTokens", into = "VocabTokens")]
pub struct Vocab {
    tokens: Vec<String>,
    index: HashMap<String, u32>,
}

#[derive(Serialize, Deserialize)]
struct VocabTokens {
    tokens: Vec<String>,
}

impl From<VocabTokens> for Vocab {
    fn from(v: VocabTokens) -> Self {
        let mut vocab = Self { tokens: Vec::new(), index: HashMap::new() };
        for t in [PAD_TOKEN, UNK_TOKEN].into_iter().map(str::to_owned).chain(v.tokens) {
            vocab.push(t);
        }
        vocab
    }
}

impl From<Vocab> for VocabTokens {
    fn from(v: Vocab) -> Self {
        Self { tokens: v.tokens }
    }
}

const PAD_TOKEN: &str = "<pad>";
const UNK_TOKEN: &str = "<unk>";

impl Vocab {
    /// Id of the padding token.
    pub const PAD: u32 = 0;
    /// Id of the unknown token.
    pub const UNK: u32 = 1;

    fn push(&mut self, token: String) {
        if !self.index.contains_key(&token) {
            let id = u32::try_from(self.tokens.len()).unwrap_or(u32::MAX);
            self.index.insert(token.clone(), id);
            self.tokens.push(token);
        }
    }

    /// Builds a vocabulary from token occurrences: `specials` first, then tokens seen at least
    /// `min_count` times, most frequent first (ties alphabetical), so the result is deterministic.
    pub fn build<'a>(occurrences: impl IntoIterator<Item = &'a str>, min_count: usize, specials: &[&str]) -> Self {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for t in occurrences {
            *counts.entry(t).or_default() += 1;
        }
        let mut frequent: Vec<(&str, usize)> = counts.into_iter().filter(|&(_, c)| c >= min_count).collect();
        frequent.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let tokens = specials.iter().copied().chain(frequent.into_iter().map(|(t, _)| t)).map(str::to_owned).collect();
        Self::from(VocabTokens { tokens })
    }

    /// The concept vocabulary of some graph inputs (with the EOS concept).
    pub fn concepts<'a>(inputs: impl IntoIterator<Item = &'a GraphInput>, min_count: usize) -> Self {
        Self::build(inputs.into_iter().flat_map(|g| g.concepts.iter().map(CompactString::as_str)), min_count, &[EOS_CONCEPT])
    }

    /// The path-label vocabulary of some graph inputs (with the special labels).
    pub fn path_labels<'a>(inputs: impl IntoIterator<Item = &'a GraphInput>, min_count: usize) -> Self {
        Self::build(inputs.into_iter().flat_map(|g| g.labels.iter().map(CompactString::as_str)), min_count, &[SELF, EOS, TRUNCATED, UNREACHABLE])
    }

    /// The id of `token`, or [`Vocab::UNK`].
    pub fn id(&self, token: &str) -> u32 {
        self.index.get(token).copied().unwrap_or(Self::UNK)
    }

    /// The token of `id`.
    pub fn token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(String::as_str)
    }

    /// Number of tokens, specials included.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Always false: `<pad>` and `<unk>` are always present.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn input(s: &str, config: PathConfig) -> GraphInput {
        GraphInput::new(&AmrGraph::decode(s).unwrap_or_else(|e| panic!("{e}")), &config).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn concept_sequence_and_paths() {
        let g = input("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :polarity -))", PathConfig::default());
        assert_eq!(g.concepts, ["want-01", "boy", "go-02", "-", EOS_CONCEPT]);
        assert_eq!(g.path(0, 0), Some(&[CompactString::from(SELF)][..]));
        assert_eq!(g.path_string(0, 1).as_deref(), Some("-:ARG0"));
        assert_eq!(g.path_string(1, 0).as_deref(), Some("+:ARG0"));
        // shortest: go-02 reaches boy directly through the re-entrancy
        assert_eq!(g.path_string(2, 1).as_deref(), Some("-:ARG0"));
        assert_eq!(g.path_string(3, 1).as_deref(), Some("+:polarity-:ARG0"));
        assert_eq!(g.path_string(1, 4).as_deref(), Some(EOS));
        assert_eq!(g.path_string(4, 4).as_deref(), Some(SELF));
    }

    #[test]
    fn inverted_roles_are_normalised_and_long_paths_truncated() {
        let g = input("(a / a :ARG0-of (b / b :op1 (c / c :op2 (d / d :op3 (e / e)))))", PathConfig { max_path_len: 2, eos: false, keep_last: None });
        assert_eq!(g.path_string(0, 1).as_deref(), Some("+:ARG0"));
        assert_eq!(g.path(0, 4).map(<[CompactString]>::to_vec), Some(vec!["+:ARG0".into(), TRUNCATED.into()]));
        assert_eq!(g.len(), 5);
        assert!(GraphInput::new(&AmrGraph::decode("(a / a)").unwrap_or_else(|e| panic!("{e}")), &PathConfig { max_path_len: 0, eos: true, keep_last: None }).is_err());
    }

    #[test]
    fn vocab_round_trips_through_serde_and_encodes() {
        let g = input("(w / want-01 :ARG0 (b / boy))", PathConfig::default());
        let concepts = Vocab::concepts([&g], 1);
        let labels = Vocab::path_labels([&g], 1);
        assert_eq!(concepts.id("boy"), concepts.id("boy"));
        assert_eq!(concepts.id("never-seen"), Vocab::UNK);
        assert_eq!(concepts.token(Vocab::PAD), Some("<pad>"));
        let enc = g.encode(&concepts, &labels, 3);
        assert_eq!(enc.concept_ids.len(), 3);
        assert_eq!(enc.path_ids.len(), 3 * 3 * 3);
        assert_eq!(enc.path_lens[1], 1);
        assert_eq!(labels.token(enc.path_ids[3]), Some("-:ARG0"));
    }
}
