//! PENMAN serialisation with penman 1.3.1's layout (`penman/_format.py`).

use super::tree::{Edge, Node, Target, Tree};

/// How nested nodes are indented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Indent {
    /// penman's default (`indent=-1`): children line up one column after the variable,
    /// i.e. at `column_of('(') + len(var) + 2`.
    #[default]
    Adaptive,
    /// A fixed number of spaces per nesting level.
    Fixed(usize),
    /// Everything on one line.
    SingleLine,
}

/// Encodes a tree with its metadata as `# ::key value` lines, like `penman.encode(g)`.
///
/// # Examples
/// ```
/// use dialeval_amr_graph::penman::{decode, encode, Indent};
/// let tree = decode("(s / see-01 :ARG0 (i / i) :ARG1 (p / picture :mod (m / magnificent)))")?;
/// assert_eq!(
///     encode(&tree, Indent::Adaptive),
///     "(s / see-01\n   :ARG0 (i / i)\n   :ARG1 (p / picture\n            :mod (m / magnificent)))"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode(tree: &Tree, indent: Indent) -> String {
    let mut out = String::with_capacity(512);
    for (key, value) in tree.metadata.iter() {
        out.push_str("# ::");
        out.push_str(key);
        if !value.is_empty() {
            out.push(' ');
            out.push_str(value);
        }
        out.push('\n');
    }
    write_node(&mut out, &tree.node, indent, 0);
    out
}

/// Encodes only the graph, without metadata.
pub fn encode_node(node: &Node, indent: Indent) -> String {
    let mut out = String::with_capacity(256);
    write_node(&mut out, node, indent, 0);
    out
}

fn write_node(out: &mut String, node: &Node, indent: Indent, column: usize) {
    if node.concept.is_none() && node.edges.is_empty() {
        out.push('(');
        out.push_str(&node.var);
        out.push(')');
        return;
    }
    let column = match indent {
        Indent::Adaptive => column + node.var.chars().count() + 2,
        Indent::Fixed(n) => column + n,
        Indent::SingleLine => column,
    };
    out.push('(');
    out.push_str(&node.var);
    out.push(' ');
    let mut first = true;
    if let Some(concept) = &node.concept {
        out.push_str("/ ");
        out.push_str(concept);
        first = false;
    }
    for edge in &node.edges {
        if !first {
            joiner(out, indent, column);
        }
        first = false;
        write_edge(out, edge, indent, column);
    }
    out.push(')');
}

fn joiner(out: &mut String, indent: Indent, column: usize) {
    if indent == Indent::SingleLine {
        out.push(' ');
    } else {
        out.push('\n');
        const SPACES: &str = "                                                                ";
        let mut left = column;
        while left > 0 {
            let n = left.min(SPACES.len());
            out.push_str(&SPACES[..n]);
            left -= n;
        }
    }
}

fn write_edge(out: &mut String, edge: &Edge, indent: Indent, column: usize) {
    if !edge.role.starts_with(':') {
        out.push(':');
    }
    out.push_str(&edge.role);
    let role_len = edge.role.chars().count() + usize::from(!edge.role.starts_with(':'));
    match &edge.target {
        Target::Missing => {}
        Target::Atom(atom) if atom.is_empty() => {}
        Target::Atom(atom) => {
            out.push(' ');
            out.push_str(atom);
        }
        Target::Node(child) => {
            out.push(' ');
            let column = if indent == Indent::Adaptive { column + role_len + 1 } else { column };
            write_node(out, child, indent, column);
        }
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;
    use crate::penman::decode;

    #[test]
    fn layouts() {
        let tree = decode("(a / alpha :ARG0 (b / beta) :polarity -)").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(encode_node(&tree.node, Indent::SingleLine), "(a / alpha :ARG0 (b / beta) :polarity -)");
        assert_eq!(encode_node(&tree.node, Indent::Fixed(2)), "(a / alpha\n  :ARG0 (b / beta)\n  :polarity -)");
    }

    #[test]
    fn var_only_and_missing_target() {
        let tree = decode("(a :ARG0 (b) :ARG1)").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(encode_node(&tree.node, Indent::Adaptive), "(a :ARG0 (b)\n   :ARG1)");
    }
}
