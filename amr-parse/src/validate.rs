//! What a graph must be before it is used: one PENMAN graph that `amr-graph` reads without
//! issues, whose roles are AMR roles, whose concepts are well-formed, with no variable used but
//! never defined and none defined twice.

use dialeval_amr_graph::{AmrGraph, Issue};

use crate::error::Invalid;

/// The non-core roles of the AMR guidelines (AMR 3.0), besides the numbered families
/// (`ARGn`, `opn`, `sntn`), `prep-*` / `conj-*` and `consist-of`, each also allowed inverted
/// (`-of`).
pub const ROLES: [&str; 51] = [
    "accompanier",
    "age",
    "beneficiary",
    "calendar",
    "cause",
    "century",
    "compared-to",
    "concession",
    "condition",
    "day",
    "dayperiod",
    "decade",
    "degree",
    "destination",
    "direction",
    "domain",
    "duration",
    "era",
    "example",
    "extent",
    "frequency",
    "instrument",
    "li",
    "location",
    "manner",
    "medium",
    "mod",
    "mode",
    "month",
    "name",
    "ord",
    "part",
    "path",
    "polarity",
    "polite",
    "poss",
    "purpose",
    "quant",
    "quarter",
    "range",
    "scale",
    "season",
    "source",
    "subevent",
    "subset",
    "superset",
    "time",
    "timezone",
    "topic",
    "unit",
    "value",
];

/// Roles accepted besides [`ROLES`]: `weekday`, `wiki`, `year`, `year2`.
const MORE_ROLES: [&str; 4] = ["weekday", "wiki", "year", "year2"];

/// Whether `role` (with or without its leading `:`) is an AMR role.
pub fn is_amr_role(role: &str) -> bool {
    let role = role.strip_prefix(':').unwrap_or(role);
    let base = role.strip_suffix("-of").filter(|b| *b != "consist").unwrap_or(role);
    let numbered = |prefix: &str| base.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    numbered("ARG")
        || numbered("op")
        || numbered("snt")
        || base.strip_prefix("prep-").is_some_and(|w| !w.is_empty())
        || base.strip_prefix("conj-").is_some_and(|w| !w.is_empty())
        || ROLES.contains(&base)
        || MORE_ROLES.contains(&base)
        || role == "consist-of"
}

/// Whether `concept` is a well-formed AMR concept: a PropBank frame (`want-01`), a word
/// (`boy`, `amr-unknown`, `date-entity`), or a number; no quotes, spaces, parentheses or colons.
pub fn is_concept(concept: &str) -> bool {
    !concept.is_empty()
        && !concept.starts_with('-')
        && concept.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '\'' | '.' | '+' | '/' | '@' | '$' | '%' | '&'))
        && concept.chars().any(char::is_alphanumeric)
}

/// Reads `penman` and checks it (see the module docs). Metadata lines (`# ::snt …`) are allowed.
///
/// # Errors
/// The first defect found, as an [`Invalid`] whose text is what a repair round sends back.
///
/// # Complexity
/// Linear in the text (the graph's triples are scanned twice).
pub fn validate(penman: &str) -> Result<AmrGraph, Invalid> {
    let body: String = penman.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return Err(Invalid::Empty);
    }
    if !trimmed.starts_with('(') {
        return Err(Invalid::Syntax { message: "a graph starts with `(`".into() });
    }
    let graphs = dialeval_amr_graph::penman::decode_all(trimmed);
    let mut graphs = graphs.into_iter();
    let tree = match graphs.next() {
        Some(Ok(tree)) => tree,
        Some(Err(e)) => return Err(Invalid::Syntax { message: e.to_string() }),
        None => return Err(Invalid::Empty),
    };
    if graphs.next().is_some() {
        return Err(Invalid::SeveralGraphs);
    }
    let graph = AmrGraph::from_tree(tree);
    if let Some(issue) = graph.issues().first() {
        return Err(match issue {
            Issue::DuplicateVariable { var } => Invalid::DuplicateVariable { var: var.to_string() },
            Issue::UndefinedVariable { target, .. } => Invalid::UndefinedVariable { var: target.to_string() },
            other => Invalid::Structure { message: other.to_string() },
        });
    }
    for t in graph.instances() {
        if !is_concept(t.target_str()) {
            return Err(Invalid::BadConcept { var: t.source.to_string(), concept: t.target_str().to_owned() });
        }
    }
    for t in graph.edges().chain(graph.attributes()) {
        if !is_amr_role(&t.role) {
            return Err(Invalid::UnknownRole { role: t.role.to_string() });
        }
    }
    Ok(graph)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_of_the_guidelines_pass_and_invented_ones_do_not() {
        for r in [":ARG0", ":ARG1-of", ":op12", ":snt2", ":mod", ":domain", ":prep-on", ":conj-as-if", ":consist-of", ":polarity", ":time-of", ":wiki", ":quant"] {
            assert!(is_amr_role(r), "{r}");
        }
        for r in [":agent", ":ARG", ":opx", ":subject", ":prep-", ":consist", ":Arg0"] {
            assert!(!is_amr_role(r), "{r}");
        }
    }

    #[test]
    fn every_defect_is_named() {
        assert!(validate("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))").is_ok());
        assert!(validate("# ::snt ok\n(o / okay-04)").is_ok());
        assert_eq!(validate("  ").err(), Some(Invalid::Empty));
        assert!(matches!(validate("want-01"), Err(Invalid::Syntax { .. })));
        assert!(matches!(validate("(w / want-01 :ARG0 (b / boy)"), Err(Invalid::Syntax { .. })));
        assert_eq!(validate("(a / a)\n(b / b)").err(), Some(Invalid::SeveralGraphs));
        assert_eq!(validate("(w / want-01 :ARG0 (b / boy) :ARG1 (b / girl))").err(), Some(Invalid::DuplicateVariable { var: "b".into() }));
        assert_eq!(validate("(w / want-01 :ARG0 x2)").err(), Some(Invalid::UndefinedVariable { var: "x2".into() }));
        assert_eq!(validate("(w / want-01 :agent (b / boy))").err(), Some(Invalid::UnknownRole { role: ":agent".into() }));
        assert!(matches!(validate("(w / \"want\")"), Err(Invalid::BadConcept { .. }) | Err(Invalid::Syntax { .. })));
    }
}
