//! Deterministic repair of the defects parsers (LLMs above all) commonly make: text around the
//! graph (prose, code fences), unbalanced parentheses, a variable defined twice.

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
}

impl Repairs {
    /// Whether anything was changed.
    pub fn any(&self) -> bool {
        self.trimmed || self.closed > 0 || self.dropped_closers > 0 || self.renamed > 0
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
    let mut out = String::with_capacity(body.len() + 8);
    let (mut depth, mut in_quote, mut escaped) = (0_usize, false, false);
    let mut ended = false;
    for c in body.chars() {
        if ended {
            if !c.is_whitespace() {
                repairs.trimmed = true;
            }
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
            ')' if depth == 0 => repairs.dropped_closers += 1,
            ')' => {
                depth -= 1;
                out.push(c);
                ended = depth == 0;
            }
            '`' => repairs.trimmed = true,
            _ => out.push(c),
        }
    }
    if in_quote {
        out.push('"');
    }
    repairs.closed = depth;
    out.push_str(&")".repeat(depth));
    let (renamed, count) = rename_duplicates(&out);
    repairs.renamed = count;
    (renamed, repairs)
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
    }
}
