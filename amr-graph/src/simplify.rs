//! Simplification passes and the stripped linearisation of Konstas et al. (2017),
//! "Neural AMR: Sequence-to-Sequence Models for Parsing and Generation", as used by the
//! AMR-enhanced evaluator to put graphs into a prompt or a text encoder.
//!
//! A [`Pass`] rewrites a PENMAN [`Tree`]; a [`Pipeline`] runs passes in order. Anonymisation
//! records every replacement in [`Placeholders`], so it can be undone with
//! [`Placeholders::restore`]. Variables are dropped by [`linearize`], which writes concepts only
//! (a re-entrant variable is written as its concept).
//!
//! ```
//! use dialeval_amr_graph::penman::decode;
//! use dialeval_amr_graph::simplify::{Pipeline, linearize, LinearizeOptions};
//! let tree = decode(r#"(s / see-01 :ARG0 (p / person :wiki - :name (n / name :op1 "Anna")) :ARG1 p :quant 6)"#)?;
//! let (tree, placeholders) = Pipeline::konstas().run(tree);
//! let tokens = linearize(&tree, &LinearizeOptions::default());
//! assert_eq!(tokens.join(" "), "see :ARG0 person_name_0 :ARG1 person_name_0 :quant num_0");
//! assert_eq!(placeholders.surface("person_name_0"), Some("Anna"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::penman::{Edge, Node, Target, Tree, split_alignment};

/// One tree rewrite.
pub trait Pass {
    /// Rewrites `tree` in place, recording reversible replacements in `placeholders`.
    fn apply(&self, tree: &mut Tree, placeholders: &mut Placeholders);
}

impl<P: Pass + ?Sized> Pass for &P {
    fn apply(&self, tree: &mut Tree, placeholders: &mut Placeholders) {
        (**self).apply(tree, placeholders);
    }
}

impl<P: Pass + ?Sized> Pass for Box<P> {
    fn apply(&self, tree: &mut Tree, placeholders: &mut Placeholders) {
        (**self).apply(tree, placeholders);
    }
}

impl<P: Pass + ?Sized> Pass for std::sync::Arc<P> {
    fn apply(&self, tree: &mut Tree, placeholders: &mut Placeholders) {
        (**self).apply(tree, placeholders);
    }
}

/// Passes run in order.
#[derive(Default)]
pub struct Pipeline {
    passes: Vec<Box<dyn Pass + Send + Sync>>,
}

impl Pipeline {
    /// An empty pipeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// Konstas et al.'s preprocessing: drop wiki links, strip senses, anonymise names, dates
    /// and numbers.
    pub fn konstas() -> Self {
        Self::new().then(DropWiki).then(StripSenses).then(Anonymize::all())
    }

    /// Appends a pass.
    #[must_use]
    pub fn then(mut self, pass: impl Pass + Send + Sync + 'static) -> Self {
        self.passes.push(Box::new(pass));
        self
    }

    /// Runs every pass on `tree`.
    pub fn run(&self, mut tree: Tree) -> (Tree, Placeholders) {
        let mut placeholders = Placeholders::default();
        self.apply(&mut tree, &mut placeholders);
        (tree, placeholders)
    }
}

impl Pass for Pipeline {
    fn apply(&self, tree: &mut Tree, placeholders: &mut Placeholders) {
        for pass in &self.passes {
            pass.apply(tree, placeholders);
        }
    }
}

fn bare(s: &str) -> &str {
    split_alignment(s).0
}

/// Removes `:wiki` edges.
#[derive(Debug, Clone, Copy, Default)]
pub struct DropWiki;

impl Pass for DropWiki {
    fn apply(&self, tree: &mut Tree, _: &mut Placeholders) {
        tree.node.walk_mut(&mut |n| n.edges.retain(|e| bare(&e.role) != ":wiki"));
    }
}

/// Strips PropBank sense suffixes from concepts: `see-01` → `see`, `have-org-role-91` →
/// `have-org-role`. Alignments are kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct StripSenses;

/// `see-01` → `see`; concepts without a numeric sense (and quoted ones) are returned unchanged.
pub fn strip_sense(concept: &str) -> &str {
    if concept.starts_with('"') {
        return concept;
    }
    match concept.rfind('-') {
        Some(at) if at > 0 && at + 1 < concept.len() && concept[at + 1..].bytes().all(|b| b.is_ascii_digit()) => &concept[..at],
        _ => concept,
    }
}

impl Pass for StripSenses {
    fn apply(&self, tree: &mut Tree, _: &mut Placeholders) {
        tree.node.walk_mut(&mut |n| {
            if let Some(c) = &n.concept {
                let (concept, align) = split_alignment(c);
                let stripped = strip_sense(concept);
                if stripped.len() != concept.len() {
                    n.concept = Some(compact_str::format_compact!("{stripped}{}", align.unwrap_or("")));
                }
            }
        });
    }
}

/// What a placeholder replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlaceholderKind {
    /// A named entity: the node's `:name (n / name :op1 ...)` subgraph.
    Name,
    /// A `date-entity` node's constant attributes.
    Date,
    /// A numeric constant.
    Number,
}

/// One anonymised item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placeholder {
    /// What was replaced.
    pub kind: PlaceholderKind,
    /// Human-readable surface form: the name's words, `year=2012 month=6`, or the number.
    pub surface: String,
    /// The original concept (names, dates) or constant (numbers).
    pub original: CompactString,
    /// Edges removed from the node (names, dates), restored verbatim.
    pub removed: Vec<Edge>,
}

/// The reversible map from placeholder tokens to what they replaced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placeholders {
    entries: Vec<(String, Placeholder)>,
}

impl Placeholders {
    fn add(&mut self, stem: &str, entry: Placeholder) -> CompactString {
        let k = self.entries.iter().filter(|(t, _)| t.rsplit_once('_').is_some_and(|(s, _)| s == stem)).count();
        let token = format!("{stem}_{k}");
        self.entries.push((token.clone(), entry));
        token.into()
    }

    /// The entry of a placeholder token.
    pub fn get(&self, token: &str) -> Option<&Placeholder> {
        self.entries.iter().find(|(t, _)| t == token).map(|(_, p)| p)
    }

    /// The surface text a placeholder stands for.
    pub fn surface(&self, token: &str) -> Option<&str> {
        self.get(token).map(|p| p.surface.as_str())
    }

    /// `(token, entry)` pairs in creation order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Placeholder)> {
        self.entries.iter().map(|(t, p)| (t.as_str(), p))
    }

    /// Number of placeholders.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was anonymised.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Undoes anonymisation in `tree`.
    ///
    /// # Errors
    /// [`Error::UnknownPlaceholder`] for a token shaped like a placeholder (`*_name_3`,
    /// `date-entity_0`, `num_2`) that this map does not hold.
    pub fn restore(&self, tree: &mut Tree) -> Result<()> {
        let mut unknown = None;
        tree.node.walk_mut(&mut |n| {
            if let Some(c) = n.concept.clone() {
                match self.get(&c) {
                    Some(p) if p.kind != PlaceholderKind::Number => {
                        n.concept = Some(p.original.clone());
                        n.edges.extend(p.removed.iter().cloned());
                    }
                    _ if looks_like_placeholder(&c) => {
                        unknown.get_or_insert(c);
                    }
                    _ => {}
                }
            }
            for e in &mut n.edges {
                if let Target::Atom(a) = &mut e.target {
                    match self.get(a) {
                        Some(p) if p.kind == PlaceholderKind::Number => *a = p.original.clone(),
                        _ if looks_like_placeholder(a) => {
                            unknown.get_or_insert(a.clone());
                        }
                        _ => {}
                    }
                }
            }
        });
        match unknown {
            Some(token) => Err(Error::UnknownPlaceholder(token.into())),
            None => Ok(()),
        }
    }
}

fn looks_like_placeholder(s: &str) -> bool {
    let Some((stem, k)) = s.rsplit_once('_') else { return false };
    !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) && (stem == "num" || stem == "date-entity" || stem.ends_with("_name"))
}

/// Replaces names, dates and numbers by typed placeholders (`country_name_0`,
/// `date-entity_0`, `num_0`), numbered per type within the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anonymize {
    /// Replace `:name` subgraphs.
    pub names: bool,
    /// Replace `date-entity` attributes.
    pub dates: bool,
    /// Replace numeric constants.
    pub numbers: bool,
}

impl Anonymize {
    /// Names, dates and numbers.
    pub fn all() -> Self {
        Self { names: true, dates: true, numbers: true }
    }
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.parse::<f64>().is_ok_and(f64::is_finite) && !s.starts_with('"')
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(s)
}

impl Pass for Anonymize {
    fn apply(&self, tree: &mut Tree, placeholders: &mut Placeholders) {
        tree.node.walk_mut(&mut |n: &mut Node| {
            let Some(concept) = n.concept.clone() else { return };
            let bare_concept = bare(&concept).to_owned();
            if self.names {
                let name_at = n.edges.iter().position(|e| bare(&e.role) == ":name" && matches!(&e.target, Target::Node(m) if m.concept.as_deref().map(bare) == Some("name")));
                if let Some(at) = name_at {
                    let edge = n.edges.remove(at);
                    let surface = match &edge.target {
                        Target::Node(m) => m
                            .edges
                            .iter()
                            .filter_map(|e| match &e.target {
                                Target::Atom(a) if bare(&e.role).starts_with(":op") => Some(unquote(bare(a))),
                                _ => None,
                            })
                            .collect::<Vec<_>>()
                            .join(" "),
                        _ => String::new(),
                    };
                    let stem = format!("{}_name", strip_sense(&bare_concept));
                    let entry = Placeholder { kind: PlaceholderKind::Name, surface, original: concept.clone(), removed: vec![edge] };
                    n.concept = Some(placeholders.add(&stem, entry));
                    return;
                }
            }
            if self.dates && bare_concept == "date-entity" {
                let (removed, kept): (Vec<Edge>, Vec<Edge>) = n.edges.drain(..).partition(|e| matches!(e.target, Target::Atom(_)));
                n.edges = kept;
                let surface = removed
                    .iter()
                    .filter_map(|e| match &e.target {
                        Target::Atom(a) => Some(format!("{}={}", bare(&e.role).trim_start_matches(':'), unquote(bare(a)))),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                let entry = Placeholder { kind: PlaceholderKind::Date, surface, original: concept, removed };
                n.concept = Some(placeholders.add("date-entity", entry));
                return;
            }
            if self.numbers {
                for e in &mut n.edges {
                    if let Target::Atom(a) = &mut e.target
                        && is_number(bare(a))
                    {
                        let entry = Placeholder { kind: PlaceholderKind::Number, surface: bare(a).to_owned(), original: a.clone(), removed: Vec::new() };
                        *a = placeholders.add("num", entry);
                    }
                }
            }
        });
    }
}

/// Options of [`linearize`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinearizeOptions {
    /// Wrap nodes that have edges in `(` … `)`.
    pub parens: bool,
    /// Remove the quotes of string constants.
    pub unquote: bool,
    /// Strip alignments (`~e.3`).
    pub strip_alignments: bool,
}

impl Default for LinearizeOptions {
    /// Konstas et al.'s stripped form: no brackets around the top, brackets around other
    /// nodes with edges, quotes removed, no alignments.
    fn default() -> Self {
        Self { parens: true, unquote: true, strip_alignments: true }
    }
}

/// Depth-first linearisation without variables: `see :ARG0 ( boy :mod tall ) :ARG1 boy`.
/// A re-entrant variable is written as its concept.
pub fn linearize(tree: &Tree, options: &LinearizeOptions) -> Vec<String> {
    let mut concepts: HashMap<&str, &str> = HashMap::new();
    tree.node.walk(&mut |n| {
        concepts.entry(n.var.as_str()).or_insert_with(|| n.concept.as_deref().unwrap_or(n.var.as_str()));
    });
    let mut out = Vec::new();
    write(&tree.node, &concepts, options, &mut out, true);
    out
}

fn clean(s: &str, options: &LinearizeOptions) -> String {
    let s = if options.strip_alignments { bare(s) } else { s };
    if options.unquote { unquote(s).to_owned() } else { s.to_owned() }
}

fn write(node: &Node, concepts: &HashMap<&str, &str>, o: &LinearizeOptions, out: &mut Vec<String>, top: bool) {
    let concept = node.concept.as_deref().unwrap_or(node.var.as_str());
    let bracket = o.parens && !top && !node.edges.is_empty();
    if bracket {
        out.push("(".to_owned());
    }
    out.push(clean(concept, o));
    for e in &node.edges {
        match &e.target {
            Target::Missing => continue,
            Target::Atom(a) => {
                out.push(clean(&e.role, o));
                let a_bare = bare(a);
                out.push(match concepts.get(a_bare) {
                    Some(c) => clean(c, o),
                    None => clean(a, o),
                });
            }
            Target::Node(child) => {
                out.push(clean(&e.role, o));
                write(child, concepts, o, out, false);
            }
        }
    }
    if bracket {
        out.push(")".to_owned());
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;
    use crate::penman::{Indent, decode, encode};

    fn tree(s: &str) -> Tree {
        decode(s).unwrap_or_else(|e| panic!("{e}"))
    }

    const BOOK: &str = r#"(s / see-01 :ARG0 (i / i) :ARG1 (p / picture :location (b2 / book :wiki - :name (n / name :op1 "True" :op2 "Stories")))
        :time (a / age-01 :ARG1 i :ARG2 (t / temporal-quantity :quant 6 :unit (y / year)))
        :time (d / date-entity :year 2012 :month 6))"#;

    #[test]
    fn drop_wiki_and_strip_senses() {
        let (t, p) = Pipeline::new().then(DropWiki).then(StripSenses).run(tree(BOOK));
        assert!(p.is_empty());
        let text = encode(&t, Indent::SingleLine);
        assert!(!text.contains(":wiki"));
        assert!(text.starts_with("(s / see :ARG0"));
        assert!(text.contains("(a / age :ARG1 i"));
        assert_eq!(strip_sense("have-org-role-91"), "have-org-role");
        assert_eq!(strip_sense("-"), "-");
        assert_eq!(strip_sense("\"1-2\""), "\"1-2\"");
    }

    #[test]
    fn anonymisation_is_reversible() {
        let original = tree(BOOK);
        let (mut t, p) = Pipeline::new().then(Anonymize::all()).run(original.clone());
        assert_eq!(p.surface("book_name_0"), Some("True Stories"));
        assert_eq!(p.surface("num_0"), Some("6"));
        assert_eq!(p.surface("date-entity_0"), Some("year=2012 month=6"));
        let tokens = linearize(&t, &LinearizeOptions::default()).join(" ");
        assert_eq!(tokens, "see-01 :ARG0 i :ARG1 ( picture :location ( book_name_0 :wiki - ) ) :time ( age-01 :ARG1 i :ARG2 ( temporal-quantity :quant num_0 :unit year ) ) :time date-entity_0");
        p.restore(&mut t).unwrap_or_else(|e| panic!("{e}"));
        let a = crate::AmrGraph::from_tree(t);
        let b = crate::AmrGraph::from_tree(original);
        let mut ta = a.triples().to_vec();
        let mut tb = b.triples().to_vec();
        ta.sort();
        tb.sort();
        assert_eq!(ta, tb);
    }

    #[test]
    fn restoring_an_unknown_placeholder_fails() {
        let mut t = tree("(a / alpha :quant num_3)");
        assert!(matches!(Placeholders::default().restore(&mut t), Err(Error::UnknownPlaceholder(s)) if s == "num_3"));
    }
}
