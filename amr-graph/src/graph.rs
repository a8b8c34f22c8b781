//! The AMR graph: penman's triple view plus a petgraph adjacency structure.
//!
//! [`AmrGraph::from_tree`] is a port of penman 1.3.1's `layout.interpret` with the default model:
//! every role ending in `-of` is inverted into its base role when its target is a variable
//! (`:ARG1-of (r / resemble-01)` becomes `(r, :ARG1, t)`; so does `:consist-of`), alignments are
//! split off into their own map, and a node written without a concept gets an `:instance` triple
//! with no target. The surface tree is kept as the graph's layout, so encoding a decoded graph
//! reproduces penman's output byte for byte.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::sync::OnceLock;

use compact_str::CompactString;
use rustc_hash::{FxHashMap, FxHashSet};

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::penman::{self, Indent, Metadata, Node, Target, Tree, split_alignment};

/// The role of instance (concept) triples.
pub const INSTANCE: &str = ":instance";

/// A `(source, role, target)` triple in penman's normalised form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Triple {
    /// The source variable.
    pub source: CompactString,
    /// The role with its leading colon (`:ARG0`, `:instance`).
    pub role: CompactString,
    /// A variable, a constant (quoted strings keep their quotes), or `None` for a missing
    /// concept or target.
    pub target: Option<CompactString>,
}

impl Triple {
    /// A triple from its parts.
    pub fn new(source: &str, role: &str, target: Option<&str>) -> Self {
        Self { source: source.into(), role: role.into(), target: target.map(CompactString::from) }
    }

    /// The target or `""`, the way the golden files sort and print `None`.
    pub fn target_str(&self) -> &str {
        self.target.as_deref().unwrap_or("")
    }
}

/// A node of the petgraph view: a variable with its concept, or an attribute's constant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum AmrNode {
    /// A variable and its concept (without sense stripping or alignment).
    Variable {
        /// The variable name, e.g. `s2`.
        var: CompactString,
        /// Its concept, e.g. `see-01`; `None` when the graph gives none.
        concept: Option<CompactString>,
    },
    /// A constant target of an attribute (`-`, `6`, `"Germany"`); one node per attribute.
    Constant {
        /// The constant as written (quoted strings keep their quotes).
        value: CompactString,
    },
}

impl AmrNode {
    /// The concept of a variable, or the value of a constant.
    pub fn label(&self) -> &str {
        match self {
            Self::Variable { concept, .. } => concept.as_deref().unwrap_or(""),
            Self::Constant { value } => value,
        }
    }
}

/// A structural problem found by [`AmrGraph::issues`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Issue {
    /// The same variable is defined by two nodes.
    DuplicateVariable {
        /// The variable.
        var: CompactString,
    },
    /// A target looks like a variable (`b2`, `x`) but no node defines it, so it is read as
    /// a constant. Heuristic: one to three lowercase ASCII letters, then digits (or a single
    /// letter), and not an AMR constant such as `-` or `imperative`.
    UndefinedVariable {
        /// The source of the edge.
        source: CompactString,
        /// The role of the edge.
        role: CompactString,
        /// The undefined name.
        target: CompactString,
    },
    /// A node has no concept.
    MissingConcept {
        /// The variable.
        var: CompactString,
    },
    /// A role has no target.
    MissingTarget {
        /// The source variable.
        source: CompactString,
        /// The role.
        role: CompactString,
    },
    /// An inverted role (`:ARG0-of`) points at a constant, so it cannot be normalised.
    InvertedAttribute {
        /// The source variable.
        source: CompactString,
        /// The role as written.
        role: CompactString,
        /// The constant.
        target: CompactString,
    },
    /// The same triple occurs twice.
    DuplicateTriple {
        /// The repeated triple.
        triple: Triple,
    },
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuplicateVariable { var } => write!(f, "variable {var:?} is defined twice"),
            Self::UndefinedVariable { source, role, target } => {
                write!(f, "{source} {role} {target}: {target:?} looks like a variable but is never defined")
            }
            Self::MissingConcept { var } => write!(f, "node {var:?} has no concept"),
            Self::MissingTarget { source, role } => write!(f, "{source} {role} has no target"),
            Self::InvertedAttribute { source, role, target } => {
                write!(f, "{source} {role} {target}: inverted role on a constant cannot be normalised")
            }
            Self::DuplicateTriple { triple } => write!(f, "triple ({}, {}, {}) occurs twice", triple.source, triple.role, triple.target_str()),
        }
    }
}

/// Whether penman's default model treats `role` as inverted.
pub fn is_inverted(role: &str) -> bool {
    role.ends_with("-of")
}

/// penman's `Model.invert_role`: strips a trailing `-of`, or appends one.
pub fn invert_role(role: &str) -> String {
    match role.strip_suffix("-of") {
        Some(base) => base.to_owned(),
        None => format!("{role}-of"),
    }
}

/// An AMR graph: triples, top, metadata, a petgraph view and the surface layout.
#[derive(Debug, Clone)]
pub struct AmrGraph {
    triples: Vec<Triple>,
    kinds: Vec<TripleKind>,
    alignments: Vec<(usize, CompactString)>,
    layout: Tree,
    /// Found on first use, like the view: decoding alone never pays for them.
    issues: OnceLock<Vec<Issue>>,
    /// Built on first use.
    view: OnceLock<View>,
}

/// What a triple is, decided once while interpreting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TripleKind {
    Instance,
    Edge,
    Attribute,
}

#[derive(Debug, Clone)]
struct View {
    graph: DiGraph<AmrNode, CompactString>,
    index: FxHashMap<CompactString, NodeIndex>,
}

impl AmrGraph {
    /// Interprets a PENMAN tree (penman's `layout.interpret`).
    ///
    /// Never fails: structural problems are recorded and reported by [`AmrGraph::issues`] and
    /// [`AmrGraph::validate`].
    pub fn from_tree(tree: Tree) -> Self {
        let mut variables = Vec::with_capacity(16);
        tree.node.walk(&mut |n| variables.push(n.var.as_str()));
        variables.sort_unstable();
        let capacity = variables.len() * 3;
        let mut b = Builder { variables: &variables, triples: Vec::with_capacity(capacity), kinds: Vec::with_capacity(capacity), alignments: Vec::new() };
        b.interpret(&tree.node);
        let Builder { triples, kinds, alignments, .. } = b;
        Self { triples, kinds, alignments, layout: tree, issues: OnceLock::new(), view: OnceLock::new() }
    }

    /// Builds a graph from triples, laying it out depth-first from `top`.
    ///
    /// Triples whose source is `top` come first, each variable is nested at its first
    /// occurrence, and a triple reachable only through its target is written inverted (`-of`).
    /// penman's `layout.configure` makes the same choices for triples without epigraph data
    /// except in rare orderings; decoding the result always gives back the same triples.
    ///
    /// # Errors
    /// [`Error::Config`] when `top` has no instance triple, some triple is not connected to it,
    /// or the layout would nest deeper than [`penman::MAX_DEPTH`] (a chain of that many
    /// variables): a tree the reader would refuse is not made here either.
    pub fn from_triples(top: &str, triples: &[Triple], metadata: Metadata) -> Result<Self> {
        let node = configure(top, triples)?;
        Ok(Self::from_tree(Tree { metadata, node }))
    }

    /// Decodes exactly one graph from PENMAN text ([`penman::decode_one`]: comments may follow
    /// the graph, nothing else).
    ///
    /// # Errors
    /// The syntax error, with line and column; text after the graph.
    pub fn decode(text: &str) -> Result<Self> {
        Ok(Self::from_tree(penman::decode_one(text)?))
    }

    /// Every graph of a multi-graph PENMAN text, or the error of each malformed block, in order
    /// ([`penman::decode_all`], each tree interpreted on the core that read it).
    ///
    /// # Examples
    /// ```
    /// let graphs = dialeval_amr_graph::AmrGraph::decode_all("(a / alpha)\n\n(b / beta :ARG0 )\n\n(c / (oops))\n");
    /// assert_eq!(graphs.len(), 3);
    /// assert!(graphs[2].is_err());
    /// ```
    pub fn decode_all(text: &str) -> Vec<Result<Self>> {
        penman::read::decode_all_with(text, |tree| Ok(Self::from_tree(tree)))
    }

    /// The top variable.
    pub fn top(&self) -> &str {
        &self.layout.node.var
    }

    /// All triples in penman's order.
    pub fn triples(&self) -> &[Triple] {
        &self.triples
    }

    /// Triples sorted by `(source, role, target)`, `None` sorting as `""` (the golden files' order).
    pub fn triples_sorted(&self) -> Vec<&Triple> {
        let mut sorted: Vec<&Triple> = self.triples.iter().collect();
        sorted.sort_by(|a, b| (&a.source, &a.role, a.target_str()).cmp(&(&b.source, &b.role, b.target_str())));
        sorted
    }

    fn of_kind(&self, kind: TripleKind) -> impl Iterator<Item = &Triple> {
        self.triples.iter().zip(&self.kinds).filter(move |(_, k)| **k == kind).map(|(t, _)| t)
    }

    /// Instance (concept) triples.
    pub fn instances(&self) -> impl Iterator<Item = &Triple> {
        self.of_kind(TripleKind::Instance)
    }

    /// Relation triples: non-instance triples whose target is a variable.
    pub fn edges(&self) -> impl Iterator<Item = &Triple> {
        self.of_kind(TripleKind::Edge)
    }

    /// Attribute triples: non-instance triples whose target is a constant (or missing).
    pub fn attributes(&self) -> impl Iterator<Item = &Triple> {
        self.of_kind(TripleKind::Attribute)
    }

    /// Surface alignments (`~e.3`) as `(position in [`AmrGraph::triples`], alignment)`.
    pub fn alignments(&self) -> &[(usize, CompactString)] {
        &self.alignments
    }

    /// Variables in order of first definition.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        let mut seen = FxHashSet::default();
        self.instances().map(|t| t.source.as_str()).filter(move |v| seen.insert(*v))
    }

    /// The concept of `var`.
    pub fn concept(&self, var: &str) -> Option<&str> {
        self.instances().find(|t| t.source == var).and_then(|t| t.target.as_deref())
    }

    fn view(&self) -> &View {
        self.view.get_or_init(|| build_view(&self.layout.node, &self.triples, &self.kinds))
    }

    /// Metadata of the graph.
    pub fn metadata(&self) -> &Metadata {
        &self.layout.metadata
    }

    /// The surface tree this graph was read from or laid out as.
    pub fn layout(&self) -> &Tree {
        &self.layout
    }

    /// Consumes the graph and returns its surface tree.
    pub fn into_layout(self) -> Tree {
        self.layout
    }

    /// The petgraph view: one node per variable (in definition order) and one per attribute
    /// constant; edges carry roles in normalised direction.
    ///
    /// Built on first use and kept.
    pub fn graph(&self) -> &DiGraph<AmrNode, CompactString> {
        &self.view().graph
    }

    /// The petgraph index of a variable.
    pub fn node_index(&self, var: &str) -> Option<NodeIndex> {
        self.view().index.get(var).copied()
    }

    /// Re-entrant variables and how often each is re-entered, as penman's
    /// `Graph.reentrancies()` (the top counts as entered once).
    pub fn reentrancies(&self) -> Vec<(&str, usize)> {
        let mut count: FxHashMap<&str, usize> = FxHashMap::default();
        *count.entry(self.top()).or_default() += 1;
        for t in self.edges() {
            if let Some(target) = &t.target {
                *count.entry(target.as_str()).or_default() += 1;
            }
        }
        let mut out: Vec<(&str, usize)> = self.variables().filter_map(|v| count.get(v).filter(|&&c| c >= 2).map(|&c| (v, c - 1))).collect();
        out.sort_unstable();
        out
    }

    /// Total number of re-entrancies.
    pub fn reentrancy_count(&self) -> usize {
        self.reentrancies().iter().map(|(_, c)| c).sum()
    }

    /// The largest number of relation edges between the top and any variable, following edges
    /// in either direction (0 for a single node).
    ///
    /// # Complexity
    /// O(V + E), one breadth-first search.
    pub fn depth(&self) -> usize {
        let Some(start) = self.node_index(self.top()) else { return 0 };
        let graph = self.graph();
        let mut dist = vec![usize::MAX; graph.node_count()];
        dist[start.index()] = 0;
        let mut queue = VecDeque::from([start]);
        let mut deepest = 0;
        while let Some(n) = queue.pop_front() {
            let d = dist[n.index()];
            deepest = deepest.max(d);
            for m in graph.neighbors_undirected(n) {
                if matches!(graph[m], AmrNode::Variable { .. }) && dist[m.index()] == usize::MAX {
                    dist[m.index()] = d + 1;
                    queue.push_back(m);
                }
            }
        }
        deepest
    }

    /// Relations touching `var`: `(role, other node, direction)` with
    /// [`Direction::Outgoing`] for `var role other`.
    pub fn neighbours(&self, var: &str) -> Vec<(&str, &AmrNode, Direction)> {
        let Some(n) = self.node_index(var) else { return Vec::new() };
        let graph = self.graph();
        let mut out = Vec::new();
        for dir in [Direction::Outgoing, Direction::Incoming] {
            for e in graph.edges_directed(n, dir) {
                let other = if dir == Direction::Outgoing { e.target() } else { e.source() };
                out.push((e.weight().as_str(), &graph[other], dir));
            }
        }
        out
    }

    /// Structural problems, in the order found.
    pub fn issues(&self) -> &[Issue] {
        self.issues.get_or_init(|| find_issues(&self.layout.node, &self.triples))
    }

    /// Checks the graph's invariants.
    ///
    /// # Errors
    /// [`Error::Invalid`] listing every [`Issue`].
    pub fn validate(&self) -> Result<()> {
        let issues = self.issues();
        if issues.is_empty() { Ok(()) } else { Err(Error::Invalid(issues.to_vec())) }
    }

    /// PENMAN text of the graph with penman's default layout, metadata included.
    pub fn encode(&self) -> String {
        penman::encode(&self.layout, Indent::Adaptive)
    }

    /// PENMAN text of the graph without metadata.
    pub fn encode_graph_only(&self) -> String {
        penman::encode_node(&self.layout.node, Indent::Adaptive)
    }

    /// Graphviz DOT source: variables as ellipses `var / concept`, constants as boxes.
    pub fn to_dot(&self) -> String {
        let graph = self.graph();
        let mut out = String::from("digraph amr {\n  rankdir=TB;\n");
        for idx in graph.node_indices() {
            let (label, shape) = match &graph[idx] {
                AmrNode::Variable { var, concept } => {
                    let label = match concept {
                        Some(c) => format!("{var} / {c}"),
                        None => var.to_string(),
                    };
                    (label, if var == self.top() { "doublecircle" } else { "ellipse" })
                }
                AmrNode::Constant { value } => (value.to_string(), "box"),
            };
            out.push_str(&format!("  n{} [label=\"{}\", shape={shape}];\n", idx.index(), dot_escape(&label)));
        }
        for e in graph.edge_references() {
            out.push_str(&format!("  n{} -> n{} [label=\"{}\"];\n", e.source().index(), e.target().index(), dot_escape(e.weight())));
        }
        out.push_str("}\n");
        out
    }
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

const CONSTANT_WORDS: [&str; 5] = ["imperative", "expressive", "interrogative", "amr-unknown", "amr-choice"];

fn looks_like_variable(s: &str) -> bool {
    if CONSTANT_WORDS.contains(&s) {
        return false;
    }
    let letters = s.bytes().take_while(u8::is_ascii_lowercase).count();
    let rest = &s[letters..];
    let digits_ok = !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    (letters == 1 && rest.is_empty()) || ((1..=3).contains(&letters) && digits_ok)
}

/// Every structural problem of a graph, in tree order, then repeated triples.
fn find_issues(root: &Node, triples: &[Triple]) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut defined = FxHashSet::default();
    root.walk(&mut |n| {
        if !defined.insert(n.var.as_str()) {
            issues.push(Issue::DuplicateVariable { var: n.var.clone() });
        }
    });
    root.walk(&mut |n| {
        if n.concept.is_none() {
            issues.push(Issue::MissingConcept { var: n.var.clone() });
        }
        for edge in &n.edges {
            let role = split_alignment(&edge.role).0;
            match &edge.target {
                Target::Atom(atom) => {
                    let target = split_alignment(atom).0;
                    if defined.contains(target) {
                        continue;
                    }
                    let inverted = is_inverted(role);
                    let undefined = !inverted && looks_like_variable(target);
                    let (source, role, target) = (n.var.clone(), CompactString::from(role), CompactString::from(target));
                    if inverted {
                        issues.push(Issue::InvertedAttribute { source, role, target });
                    } else if undefined {
                        issues.push(Issue::UndefinedVariable { source, role, target });
                    }
                }
                Target::Missing => issues.push(Issue::MissingTarget { source: n.var.clone(), role: role.into() }),
                Target::Node(_) => {}
            }
        }
    });
    let mut seen = FxHashSet::default();
    for t in triples {
        if !seen.insert(t) {
            issues.push(Issue::DuplicateTriple { triple: t.clone() });
        }
    }
    issues
}

struct Builder<'a> {
    /// Sorted variables of the tree.
    variables: &'a [&'a str],
    triples: Vec<Triple>,
    kinds: Vec<TripleKind>,
    alignments: Vec<(usize, CompactString)>,
}

impl Builder<'_> {
    fn push(&mut self, triple: Triple, kind: TripleKind, alignment: Option<&str>) {
        if let Some(a) = alignment {
            self.alignments.push((self.triples.len(), a.into()));
        }
        self.triples.push(triple);
        self.kinds.push(kind);
    }

    fn interpret(&mut self, node: &Node) {
        let var = node.var.as_str();
        match &node.concept {
            Some(c) => {
                let (concept, align) = split_alignment(c);
                let concept = if align.is_none() { c.clone() } else { concept.into() };
                let triple = Triple { source: node.var.clone(), role: INSTANCE.into(), target: Some(concept) };
                self.push(triple, TripleKind::Instance, align);
            }
            None => self.push(Triple::new(var, INSTANCE, None), TripleKind::Instance, None),
        }
        for edge in &node.edges {
            let (role, role_align) = split_alignment(&edge.role);
            let role_text = || if role_align.is_none() { edge.role.clone() } else { role.into() };
            match &edge.target {
                Target::Atom(atom) => {
                    let (target, target_align) = split_alignment(atom);
                    let align = role_align.or(target_align);
                    let is_var = self.variables.binary_search(&target).is_ok();
                    let kind = if is_var { TripleKind::Edge } else { TripleKind::Attribute };
                    let triple = if is_inverted(role) && is_var {
                        Triple::new(target, &invert_role(role), Some(var))
                    } else {
                        let target = if target_align.is_none() { atom.clone() } else { target.into() };
                        Triple { source: node.var.clone(), role: role_text(), target: Some(target) }
                    };
                    self.push(triple, kind, align);
                }
                Target::Node(child) => {
                    let triple = if is_inverted(role) {
                        Triple::new(&child.var, &invert_role(role), Some(var))
                    } else {
                        Triple { source: node.var.clone(), role: role_text(), target: Some(child.var.clone()) }
                    };
                    self.push(triple, TripleKind::Edge, role_align);
                    self.interpret(child);
                }
                Target::Missing => {
                    let triple = Triple { source: node.var.clone(), role: role_text(), target: None };
                    self.push(triple, TripleKind::Attribute, role_align);
                }
            }
        }
    }
}

fn build_view(root: &Node, triples: &[Triple], kinds: &[TripleKind]) -> View {
    let mut graph = DiGraph::with_capacity(triples.len(), triples.len());
    let mut index = FxHashMap::default();
    root.walk(&mut |n| {
        index.entry(n.var.clone()).or_insert_with(|| {
            let concept = n.concept.as_deref().map(|c| CompactString::from(split_alignment(c).0));
            graph.add_node(AmrNode::Variable { var: n.var.clone(), concept })
        });
    });
    for (t, kind) in triples.iter().zip(kinds) {
        let (Some(&source), Some(target)) = (index.get(&t.source), &t.target) else { continue };
        let target = match kind {
            TripleKind::Instance => continue,
            TripleKind::Edge => match index.get(target) {
                Some(&v) => v,
                None => continue,
            },
            TripleKind::Attribute => graph.add_node(AmrNode::Constant { value: target.clone() }),
        };
        graph.add_edge(source, target, t.role.clone());
    }
    View { graph, index }
}

/// Lays out triples as a tree rooted at `top` (see [`AmrGraph::from_triples`]).
fn configure(top: &str, triples: &[Triple]) -> Result<Node> {
    let variables: HashSet<&str> = triples.iter().filter(|t| t.role == INSTANCE).map(|t| t.source.as_str()).collect();
    if !variables.contains(top) {
        return Err(Error::Config(format!("top {top:?} has no instance triple")));
    }
    let mut placed = vec![false; triples.len()];
    let mut defined = HashSet::new();
    let node = place(top, triples, &variables, &mut placed, &mut defined, 1)?;
    if let Some(i) = placed.iter().position(|p| !p) {
        let t = &triples[i];
        return Err(Error::Config(format!("triple ({}, {}, {}) is not connected to top {top:?}", t.source, t.role, t.target_str())));
    }
    Ok(node)
}

/// The node of `var` at nesting `depth` (recursive, at most [`penman::MAX_DEPTH`] deep).
fn place<'a>(var: &'a str, triples: &'a [Triple], variables: &HashSet<&str>, placed: &mut [bool], defined: &mut HashSet<&'a str>, depth: usize) -> Result<Node> {
    if depth > penman::MAX_DEPTH {
        return Err(Error::Config(format!("the layout from the top nests deeper than {} levels (the PENMAN reader's limit)", penman::MAX_DEPTH)));
    }
    defined.insert(var);
    let mut node = Node { var: var.into(), concept: None, edges: Vec::new() };
    for i in 0..triples.len() {
        if placed[i] {
            continue;
        }
        let t = &triples[i];
        let (role, target) = if t.source == var {
            (t.role.clone(), t.target.as_deref())
        } else if t.target.as_deref() == Some(var) && t.role != INSTANCE && variables.contains(t.source.as_str()) {
            (CompactString::from(invert_role(&t.role)), Some(t.source.as_str()))
        } else {
            continue;
        };
        placed[i] = true;
        if role == INSTANCE {
            node.concept = target.map(CompactString::from);
            continue;
        }
        let target = match target {
            None => Target::Missing,
            Some(v) if variables.contains(v) && !defined.contains(v) => Target::Node(place(v, triples, variables, placed, defined, depth + 1)?),
            Some(v) => Target::Atom(v.into()),
        };
        node.edges.push(penman::Edge { role, target });
    }
    Ok(node)
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn graph(text: &str) -> AmrGraph {
        AmrGraph::decode(text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn inverted_roles_are_normalised() {
        let g = graph("(t / toilet :ARG1-of (r / resemble-01) :consist-of (w / wood))");
        let t: Vec<_> = g.triples().iter().map(|t| (t.source.as_str(), t.role.as_str(), t.target_str())).collect();
        assert_eq!(t, [("t", ":instance", "toilet"), ("r", ":ARG1", "t"), ("r", ":instance", "resemble-01"), ("w", ":consist", "t"), ("w", ":instance", "wood"),]);
        assert_eq!(g.encode_graph_only(), "(t / toilet\n   :ARG1-of (r / resemble-01)\n   :consist-of (w / wood))");
    }

    #[test]
    fn queries() {
        let g = graph("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :polarity -))");
        assert_eq!(g.reentrancies(), [("b", 1)]);
        // b is one edge from the top even though it is written two levels deep.
        assert_eq!(g.depth(), 1);
        assert_eq!(graph("(a / a :ARG0 (b / b :ARG0 (c / c)))").depth(), 2);
        assert_eq!(g.edges().count(), 3);
        assert_eq!(g.attributes().count(), 1);
        assert_eq!(g.neighbours("b").len(), 2);
        assert!(g.validate().is_ok());
        assert!(g.to_dot().contains("n0 -> n1 [label=\":ARG0\"]"));
    }

    #[test]
    fn validation_reports_each_issue() {
        let g = graph("(a / alpha :ARG0 (a / beta) :ARG1 b2 :ARG2-of 5 :ARG3)");
        let issues = g.issues();
        assert!(issues.contains(&Issue::DuplicateVariable { var: "a".into() }));
        assert!(issues.iter().any(|i| matches!(i, Issue::UndefinedVariable { target, .. } if target == "b2")));
        assert!(issues.iter().any(|i| matches!(i, Issue::InvertedAttribute { .. })));
        assert!(issues.iter().any(|i| matches!(i, Issue::MissingTarget { .. })));
        assert!(matches!(g.validate(), Err(Error::Invalid(v)) if v.len() == issues.len()));
    }

    #[test]
    fn from_triples_round_trips() {
        let g = graph("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :ARG1-of (q / quick)))");
        let h = AmrGraph::from_triples("w", g.triples(), Metadata::new()).unwrap_or_else(|e| panic!("{e}"));
        let mut a = g.triples().to_vec();
        let mut b = h.triples().to_vec();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        assert!(AmrGraph::from_triples("zz", g.triples(), Metadata::new()).is_err());
    }
}
