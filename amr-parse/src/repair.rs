//! Deterministic repair of the defects parsers (LLMs above all) commonly make: text around the
//! graph (prose, code fences), unbalanced parentheses, a variable defined twice, a last relation
//! cut off at the completion limit, runaway repetition.

use dialeval_amr_graph::penman::{Indent, Node, Target, decode, encode_node};

use crate::validate::validate;

/// Nested nodes of one concept, each the child of the previous, from which on a chain is runaway
/// repetition rather than meaning ("I think you think he thinks" nests three).
pub const RUNAWAY_CHAIN: usize = 4;

/// What [`repair`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Repairs {
    /// Text before the first `(` or after the graph was cut.
    pub trimmed: bool,
    /// Closing parentheses added at the end.
    pub closed: usize,
    /// Unmatched closing parentheses removed.
    pub dropped_closers: usize,
    /// Second definitions of a variable renamed to a fresh one.
    pub renamed: usize,
    /// An unfinished last relation (an answer cut at the completion limit) was dropped.
    pub cut_incomplete: bool,
    /// Nodes removed as runaway repetition (see [`collapse_runaway`]).
    #[serde(default)]
    pub collapsed: usize,
}

impl Repairs {
    /// Whether anything was changed.
    pub fn any(&self) -> bool {
        self.trimmed || self.closed > 0 || self.dropped_closers > 0 || self.renamed > 0 || self.cut_incomplete || self.collapsed > 0
    }
}

/// The graph text of an answer with the common defects fixed, and what was fixed: the graph
/// runs from the first `(` to its matching `)`, or to a blank line or a code fence when it is
/// never closed (then the missing `)` are added); quoted strings are respected (a parenthesis
/// inside `"…"` is not structure).
///
/// # Complexity
/// Linear in the text, plus one pass per renamed variable.
pub fn repair(answer: &str) -> (String, Repairs) {
    let mut repairs = Repairs::default();
    let Some(start) = answer.find('(') else { return (answer.trim().to_owned(), repairs) };
    repairs.trimmed = !answer[..start].trim().is_empty();
    let body = &answer[start..];
    let cut = [body.find("\n\n"), body.find("\n\r\n"), body.find("```")].into_iter().flatten().min();
    // Text after a blank line or a fence belongs to the graph only if the graph is still open
    // there and the rest is graph-like; an LLM's closing remark is not.
    let body = match cut {
        Some(at) if !body[at..].trim_start_matches(['\n', '\r', '`', ' ']).starts_with([':', '(', ')']) => {
            repairs.trimmed |= !body[at..].trim().is_empty();
            &body[..at]
        }
        _ => body,
    };
    let balanced = balance(body);
    repairs.trimmed |= balanced.trailing;
    repairs.dropped_closers = balanced.dropped;
    repairs.closed = balanced.depth;
    let (renamed, count) = rename_duplicates(&balanced.closed());
    repairs.renamed = count;
    if balanced.depth > 0 && validate(&renamed).is_err() {
        // An answer cut mid-node (at the completion limit): back off to the last relation that
        // starts before the damage, close what is open there, keep the first version that is valid.
        for at in role_starts(&balanced.text).into_iter().rev().take(64) {
            let shorter = balance(&balanced.text[..at]);
            let (candidate, count) = rename_duplicates(&shorter.closed());
            if validate(&candidate).is_ok() {
                repairs.cut_incomplete = true;
                repairs.closed = shorter.depth;
                repairs.renamed = count;
                return (candidate, repairs);
            }
        }
    }
    (renamed, repairs)
}

/// The graph without runaway repetition, the way small models loop until the completion limit,
/// and the number of nodes removed; `None` when there is none (or the text does not decode, or
/// removing it would leave a variable undefined). Two rules, both keeping the first occurrence:
/// - a chain of [`RUNAWAY_CHAIN`] or more nested nodes of one concept (`(c / chapter :ARG1 (c2 /
///   chapter :ARG2 (c3 / chapter …`) keeps its first node and loses the edges into the chain;
/// - a sibling that repeats an earlier sibling (same role, same subtree up to variable names)
///   is dropped.
///
/// No gold graph of the Little Prince or Diplomacy corpora contains either pattern (tested).
pub fn collapse_runaway(penman: &str) -> Option<(String, usize)> {
    let mut tree = decode(penman).ok()?;
    let removed = collapse(&mut tree.node);
    if removed == 0 {
        return None;
    }
    let text = encode_node(&tree.node, Indent::Adaptive);
    validate(&text).ok()?;
    Some((text, removed))
}

/// Removes runaway repetition below `node`; returns the number of nodes removed.
fn collapse(node: &mut Node) -> usize {
    let mut removed = 0;
    if chain_length(node) >= RUNAWAY_CHAIN {
        let concept = node.concept.clone();
        node.edges.retain(|e| match &e.target {
            Target::Node(child) if child.concept == concept && chain_length(child) >= RUNAWAY_CHAIN - 1 => {
                removed += size(child);
                false
            }
            _ => true,
        });
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    node.edges.retain(|e| {
        let Target::Node(child) = &e.target else { return true };
        let shape = (e.role.to_string(), shape(child));
        if seen.contains(&shape) {
            removed += size(child);
            false
        } else {
            seen.push(shape);
            true
        }
    });
    for edge in &mut node.edges {
        if let Target::Node(child) = &mut edge.target {
            removed += collapse(child);
        }
    }
    removed
}

/// The longest chain of nested nodes with `node`'s concept that starts at `node`.
fn chain_length(node: &Node) -> usize {
    1 + node.edges.iter().filter_map(|e| if let Target::Node(c) = &e.target { Some(c) } else { None }).filter(|c| c.concept.is_some() && c.concept == node.concept).map(chain_length).max().unwrap_or(0)
}

/// Nodes in the subtree.
fn size(node: &Node) -> usize {
    1 + node.edges.iter().map(|e| if let Target::Node(c) = &e.target { size(c) } else { 0 }).sum::<usize>()
}

/// The subtree written without its variables (references to variables stay as written).
fn shape(node: &Node) -> String {
    let mut out = format!("({}", node.concept.as_deref().unwrap_or(""));
    for e in &node.edges {
        out.push(' ');
        out.push_str(&e.role);
        out.push(' ');
        match &e.target {
            Target::Node(c) => out.push_str(&shape(c)),
            Target::Atom(a) => out.push_str(a),
            Target::Missing => {}
        }
    }
    out.push(')');
    out
}

/// A graph's text up to its matching `)` (or the end), with what was left open.
struct Balanced {
    /// The text kept, without the closing parentheses still needed.
    text: String,
    /// Parentheses left open at the end.
    depth: usize,
    /// Unmatched `)` dropped.
    dropped: usize,
    /// Non-space text after the graph closed, or a backtick, was dropped.
    trailing: bool,
}

impl Balanced {
    fn closed(&self) -> String {
        format!("{}{}", self.text, ")".repeat(self.depth))
    }
}

fn balance(body: &str) -> Balanced {
    let mut out = String::with_capacity(body.len() + 8);
    let (mut depth, mut dropped, mut trailing) = (0_usize, 0_usize, false);
    let (mut in_quote, mut escaped, mut ended) = (false, false, false);
    for c in body.chars() {
        if ended {
            trailing |= !c.is_whitespace();
            continue;
        }
        if in_quote {
            out.push(c);
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => in_quote = false,
                _ => escaped = false,
            }
            continue;
        }
        match c {
            '"' => {
                in_quote = true;
                out.push(c);
            }
            '(' => {
                depth += 1;
                out.push(c);
            }
            ')' if depth == 0 => dropped += 1,
            ')' => {
                depth -= 1;
                out.push(c);
                ended = depth == 0;
            }
            '`' => trailing = true,
            _ => out.push(c),
        }
    }
    if in_quote {
        out.push('"');
    }
    Balanced { text: out, depth, dropped, trailing }
}

/// Byte offsets of the `:` that start a relation (after whitespace, outside quotes).
fn role_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let (mut in_quote, mut prev_space) = (false, false);
    for (i, c) in text.char_indices() {
        if c == '"' {
            in_quote = !in_quote;
        } else if c == ':' && !in_quote && prev_space {
            starts.push(i);
        }
        prev_space = c.is_whitespace();
    }
    starts
}

/// Renames the second and later definitions `(v / …` of a variable to `v_2`, `v_3`, …
/// (references elsewhere keep pointing at the first definition).
fn rename_duplicates(text: &str) -> (String, usize) {
    let mut seen: Vec<String> = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut renamed = 0;
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let var_len = rest.find(|c: char| c.is_whitespace() || c == '/' || c == ')' || c == '(').unwrap_or(rest.len());
        let var = rest[..var_len].trim();
        let defines = rest[var_len..].trim_start().starts_with('/');
        if defines && !var.is_empty() && seen.iter().any(|v| v == var) {
            let mut k = 2;
            while seen.iter().any(|v| *v == format!("{var}_{k}")) || text.contains(&format!("{var}_{k}")) {
                k += 1;
            }
            let fresh = format!("{var}_{k}");
            out.push_str(&fresh);
            seen.push(fresh);
            renamed += 1;
        } else {
            out.push_str(&rest[..var_len]);
            if defines {
                seen.push(var.to_owned());
            }
        }
        rest = &rest[var_len..];
    }
    out.push_str(rest);
    (out, renamed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::validate;

    #[test]
    fn common_defects_are_fixed_and_counted() {
        let (g, r) = repair("Here is the AMR:\n```\n(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b\n```\nHope it helps.");
        assert!(validate(&g).is_ok(), "{g}");
        assert!(r.trimmed && r.closed == 2 && r.renamed == 0, "{r:?}");
        let (g, r) = repair("(w / want-01 :ARG0 (b / boy)))) extra");
        assert_eq!(g, "(w / want-01 :ARG0 (b / boy))");
        assert!(r.trimmed, "{r:?}");
        let (g, r) = repair("(w / want-01 :ARG0 (b / boy) :ARG1 (b / girl))");
        assert_eq!(r.renamed, 1);
        assert!(validate(&g).is_ok(), "{g}");
        let (g, r) = repair("(p / person :name (n / name :op1 \"Dr. (Who\"))");
        assert!(!r.any(), "{r:?}");
        assert!(validate(&g).is_ok(), "{g}");
        let (_, r) = repair("(o / okay-04)");
        assert!(!r.any());
        // Cut at the completion limit inside a node: the unfinished relation is dropped.
        let (g, r) = repair("(s / say-01\n   :ARG0 (i / i)\n   :ARG1 (w /");
        assert_eq!(validate(&g).ok().map(|g| g.triples().len()), Some(3), "{g}");
        assert!(r.cut_incomplete && r.closed == 1, "{r:?}");
        let (g, r) = repair("(s / say-01 :ARG0 (i / i) :ARG2");
        assert!(validate(&g).is_ok() && r.cut_incomplete, "{g} {r:?}");
    }

    #[test]
    fn runaway_repetition_is_collapsed_to_its_first_occurrence() {
        // SmolLM2's answer for "Chapter 4 ." (Little Prince test), shortened.
        let (g, n) = collapse_runaway("(f / chapter-4 :ARG1 (h / chapter-4 :ARG2 (h_2 / chapter-4 :ARG3 (h_3 / chapter-4 :ARG4 (h_4 / chapter-4)))))").unwrap_or_default();
        assert_eq!((g.as_str(), n), ("(f / chapter-4)", 4));
        // The chain starts below other nodes: only the chain goes.
        let (g, n) = collapse_runaway("(s / surprise-01 :ARG1 (r / surprise :ARG2 (r2 / surprise-01 :ARG3 (r3 / surprise-01 :ARG4 (r4 / surprise-01 :ARG5 (r5 / surprise-01))))))").unwrap_or_default();
        assert_eq!(validate(&g).map(|g| g.triples().len()).ok(), Some(5), "{g}");
        assert_eq!(n, 3);
        // A repeated sibling (same role, same subtree up to variables) goes; other roles stay.
        let (g, n) = collapse_runaway("(f / father :ARG1 (d / dog :mod (a / amr-unknown)) :ARG1 (d2 / dog :mod (a2 / amr-unknown)) :ARG2 (d3 / dog))").unwrap_or_default();
        assert_eq!((g.replace(char::is_whitespace, ""), n), ("(f/father:ARG1(d/dog:mod(a/amr-unknown)):ARG2(d3/dog))".to_owned(), 2));
        // Three nested frames of one concept and distinct siblings are meaning, not runaway.
        assert_eq!(collapse_runaway("(t / think-01 :ARG0 (i / i) :ARG1 (t2 / think-01 :ARG0 (y / you) :ARG1 (t3 / think-01 :ARG0 (h / he))))"), None);
        assert_eq!(collapse_runaway("(a / and :op1 (d / dog) :op2 (d2 / dog))"), None);
        // A removal that would leave a reference dangling is not made.
        assert_eq!(collapse_runaway("(f / f :ARG1 (x / y :ARG0 (z / z)) :ARG1 (x2 / y :ARG0 (z2 / z)) :ARG2 x2)"), None);
    }
}
