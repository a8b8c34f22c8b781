//! The PENMAN tree: the surface layout of one graph, as written.

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

/// Ordered `# ::key value` metadata, with penman's dictionary semantics: setting an existing
/// key replaces its value but keeps the key at the position of its first occurrence.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata(Vec<(CompactString, CompactString)>);

impl Metadata {
    /// An empty metadata map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Sets `key` to `value`, keeping the key's first position when it already exists.
    pub fn insert(&mut self, key: impl Into<CompactString>, value: impl Into<CompactString>) {
        let key = key.into();
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => {
                if self.0.is_empty() {
                    // AMR-bank blocks carry about seven keys: grow once, not three times.
                    self.0.reserve(8);
                }
                self.0.push((key, value));
            }
        }
    }

    /// Removes `key` and returns its value.
    pub fn remove(&mut self, key: &str) -> Option<CompactString> {
        let at = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(at).1)
    }

    /// `(key, value)` pairs in stored order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Parses one comment line the way penman does: `::` separators are read from the right
    /// (`str.rpartition`), so several keys on one line are stored in reverse order; a key's value
    /// is the text after its first space, right-stripped.
    pub(crate) fn absorb_comment(&mut self, mut comment: &str) {
        while let Some(at) = rfind_double_colon(comment) {
            let meta = &comment[at + 2..];
            comment = &comment[..at];
            let (key, value) = meta.split_once(' ').unwrap_or((meta, ""));
            let value = value.trim_end_matches(|c: char| if c.is_ascii() { c.is_ascii_whitespace() || c == '\x0b' || ('\x1c'..='\x1f').contains(&c) } else { is_py_space(c) });
            self.insert(key, value);
        }
    }
}

/// `s.rfind("::")` without the substring-searcher set-up cost on short lines.
fn rfind_double_colon(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut end = bytes.len();
    while let Some(at) = memchr::memrchr(b':', &bytes[..end]) {
        if at > 0 && bytes[at - 1] == b':' {
            return Some(at - 1);
        }
        end = at;
    }
    None
}

/// Python's `str.isspace` for the characters that matter in metadata values.
pub(crate) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// One graph as written in PENMAN notation: metadata plus the root node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    /// `# ::key value` metadata that preceded the graph.
    pub metadata: Metadata,
    /// The top node.
    pub node: Node,
}

/// A node `(var / concept :role target ...)`.
///
/// The walks over a tree (writing, [`Node::walk`], Smatch's triples, path matrices, dropping it)
/// recurse once per level: the reader never makes a tree deeper than
/// [`MAX_DEPTH`](crate::penman::MAX_DEPTH), and a tree built by hand must stay within it too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// The variable, e.g. `s`.
    pub var: CompactString,
    /// The concept, e.g. `see-01`, including any surface alignment (`see-01~e.3`).
    /// `None` for `(a)` or `(a / )`.
    pub concept: Option<CompactString>,
    /// Outgoing edges in surface order.
    pub edges: Vec<Edge>,
}

/// A role and its target, e.g. `:ARG0 (b / boy)` or `:polarity -`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// The role with its leading colon and any alignment, e.g. `:ARG0-of`.
    pub role: CompactString,
    /// What the role points at.
    pub target: Target,
}

/// The target of an edge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Target {
    /// A symbol, number, quoted string (quotes kept) or variable reference.
    Atom(CompactString),
    /// A nested node.
    Node(Node),
    /// A role written without a target (`:ARG0 )`), which penman tolerates.
    Missing,
}

impl Node {
    /// A node with a concept and no edges.
    pub fn new(var: impl Into<CompactString>, concept: impl Into<CompactString>) -> Self {
        Self { var: var.into(), concept: Some(concept.into()), edges: Vec::new() }
    }

    /// Appends an edge and returns `self` (builder style).
    #[must_use]
    pub fn with(mut self, role: impl Into<CompactString>, target: Target) -> Self {
        self.edges.push(Edge { role: role.into(), target });
        self
    }

    /// Visits this node and its descendants in depth-first pre-order (surface order).
    pub fn walk<'a>(&'a self, visit: &mut impl FnMut(&'a Node)) {
        visit(self);
        for edge in &self.edges {
            if let Target::Node(child) = &edge.target {
                child.walk(visit);
            }
        }
    }

    /// Mutable depth-first pre-order visit.
    pub fn walk_mut(&mut self, visit: &mut impl FnMut(&mut Node)) {
        visit(self);
        for edge in &mut self.edges {
            if let Target::Node(child) = &mut edge.target {
                child.walk_mut(visit);
            }
        }
    }

    /// Variables of this node and all nested nodes, in pre-order.
    pub fn variables(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.walk(&mut |n| out.push(n.var.as_str()));
        out
    }
}

impl Tree {
    /// A tree without metadata.
    pub fn new(node: Node) -> Self {
        Self { metadata: Metadata::new(), node }
    }

    /// The `::id` metadata value.
    pub fn id(&self) -> Option<&str> {
        self.metadata.get("id")
    }

    /// The `::snt` metadata value.
    pub fn snt(&self) -> Option<&str> {
        self.metadata.get("snt")
    }
}

/// Splits a surface alignment (`~e.3`) off a concept, role or constant, as penman's
/// `layout._process_role` / `_process_atomic` do. Quoted strings split after their closing quote.
pub fn split_alignment(s: &str) -> (&str, Option<&str>) {
    if s.starts_with('"') {
        match s.rfind('"') {
            Some(q) if q > 0 && q + 1 < s.len() && s[q + 1..].starts_with('~') => (&s[..q + 1], Some(&s[q + 1..])),
            _ => (s, None),
        }
    } else {
        match s.bytes().position(|b| b == b'~') {
            Some(at) => (&s[..at], Some(&s[at..])),
            None => (s, None),
        }
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn metadata_keys_on_one_line_are_reversed_like_penman() {
        let mut m = Metadata::new();
        m.absorb_comment("# ::id lpp_1943.1 ::date 2012-06-07T17:06:07 ::annotator ISI-AMR-05 ::preferred");
        let keys: Vec<_> = m.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["preferred", "annotator", "date", "id"]);
        assert_eq!(m.get("id"), Some("lpp_1943.1"));
        assert_eq!(m.get("preferred"), Some(""));
    }

    #[test]
    fn overwriting_keeps_first_position() {
        let mut m = Metadata::new();
        m.absorb_comment("# ::id a");
        m.absorb_comment("# ::snt b");
        m.absorb_comment("# ::id c");
        assert_eq!(m.iter().collect::<Vec<_>>(), [("id", "c"), ("snt", "b")]);
    }

    #[test]
    fn alignment_split() {
        assert_eq!(split_alignment("see-01~e.3"), ("see-01", Some("~e.3")));
        assert_eq!(split_alignment("\"a~b\"~e.1"), ("\"a~b\"", Some("~e.1")));
        assert_eq!(split_alignment("\"a~b\""), ("\"a~b\"", None));
    }
}
