//! Property tests: PENMAN round trips on generated graphs, and no panic on arbitrary input.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use dialeval_amr_graph::AmrGraph;
use dialeval_amr_graph::paths::{GraphInput, PathConfig};
use dialeval_amr_graph::penman::{self, Edge, Indent, Metadata, Node, Target, Tree};
use dialeval_amr_graph::simplify::{LinearizeOptions, Pipeline, linearize};
use dialeval_amr_graph::smatch::{Smatch, SmatchConfig, SmatchTriples};
use proptest::prelude::*;

/// A node shape before variables are assigned: concept, and edges to constants or children.
#[derive(Debug, Clone)]
enum Shape {
    Node(String, Vec<(String, Shape)>),
    Const(String),
    /// A re-entrancy to the k-th variable defined so far (modulo their number).
    Ref(usize),
}

fn role() -> impl Strategy<Value = String> {
    prop_oneof![
        "ARG[0-4]".prop_map(|r| format!(":{r}")),
        "ARG[0-2]-of".prop_map(|r| format!(":{r}")),
        Just(":mod".to_owned()),
        "op[1-3]".prop_map(|r| format!(":{r}")),
        Just(":consist-of".to_owned()),
        Just(":polarity".to_owned()),
    ]
}

fn constant() -> impl Strategy<Value = String> {
    prop_oneof![Just("-".to_owned()), "[0-9]{1,3}", "[a-z]{3,8}", "[A-Za-z ]{1,6}".prop_map(|s| format!("\"{s}\"")), Just("\"say \\\"hi\\\"\"".to_owned()),]
}

fn shape() -> impl Strategy<Value = Shape> {
    let concept = "[a-z]{2,7}(-0[1-9])?";
    let leaf = concept.prop_map(|c| Shape::Node(c, Vec::new()));
    leaf.prop_recursive(4, 24, 4, move |inner| {
        (concept, prop::collection::vec((role(), prop_oneof![inner, constant().prop_map(Shape::Const), (0..8usize).prop_map(Shape::Ref)]), 0..4)).prop_map(|(c, edges)| Shape::Node(c, edges))
    })
}

fn build(shape: &Shape, vars: &mut Vec<String>) -> Node {
    let Shape::Node(concept, edges) = shape else { unreachable!("the root is a node") };
    let var = format!("v{}", vars.len());
    vars.push(var.clone());
    let mut node = Node::new(var, concept.clone());
    for (role, target) in edges {
        let target = match target {
            Shape::Node(..) => Target::Node(build(target, vars)),
            Shape::Const(c) => Target::Atom(c.as_str().into()),
            Shape::Ref(k) => Target::Atom(vars[k % vars.len()].as_str().into()),
        };
        node.edges.push(Edge { role: role.as_str().into(), target });
    }
    node
}

fn tree() -> impl Strategy<Value = Tree> {
    (shape(), "[a-z0-9.]{1,8}").prop_map(|(s, id)| {
        let root = match s {
            Shape::Node(..) => s,
            other => Shape::Node("root".into(), vec![(":ARG0".into(), other)]),
        };
        let mut metadata = Metadata::new();
        metadata.insert("id", id);
        Tree { metadata, node: build(&root, &mut Vec::new()) }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decode_of_encode_is_identity(t in tree()) {
        for indent in [Indent::Adaptive, Indent::Fixed(4), Indent::SingleLine] {
            let text = penman::encode(&t, indent);
            let back = penman::decode(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&back, &t);
        }
    }

    #[test]
    fn triples_survive_relayout(t in tree()) {
        let g = AmrGraph::from_tree(t);
        let h = AmrGraph::from_triples(g.top(), g.triples(), g.metadata().clone())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let again = AmrGraph::decode(&h.encode()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (mut a, mut b) = (g.triples().to_vec(), again.triples().to_vec());
        a.sort();
        b.sort();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn smatch_of_a_graph_with_itself_is_one(t in tree()) {
        let s = SmatchTriples::from_tree(&t).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let score = Smatch::new(SmatchConfig::default()).map_err(|e| TestCaseError::fail(e.to_string()))?.score(&s, &s);
        prop_assert_eq!(score.matched, score.test_triples);
    }

    #[test]
    fn smatch_against_several_references_is_the_best_in_any_order(t in tree(), refs in prop::collection::vec(tree(), 1..4), rotate in 0_usize..4) {
        let triples = |t: &Tree| SmatchTriples::from_tree(t).map_err(|e| TestCaseError::fail(e.to_string()));
        let test = triples(&t)?;
        let golds: Vec<SmatchTriples> = refs.iter().map(triples).collect::<Result<_, _>>()?;
        let smatch = Smatch::default();
        let single: Vec<f64> = golds.iter().map(|g| smatch.score(&test, g).f1()).collect();
        let ordered: Vec<&SmatchTriples> = golds.iter().collect();
        let best = smatch.score_best(&test, &ordered).ok_or_else(|| TestCaseError::fail("no score"))?;
        prop_assert_eq!(best.f1().to_bits(), single.iter().copied().fold(f64::NEG_INFINITY, f64::max).to_bits());
        let mut shuffled = ordered.clone();
        shuffled.rotate_left(rotate % ordered.len());
        shuffled.reverse();
        prop_assert_eq!(Some(best), smatch.score_best(&test, &shuffled));
        prop_assert_eq!(smatch.score_best(&test, &ordered[..1]), Some(smatch.score(&test, ordered[0])));
    }

    #[test]
    fn keeping_the_last_nodes_gives_the_tail_of_the_whole_matrix(t in tree(), k in 1_usize..8, eos in any::<bool>()) {
        let g = AmrGraph::from_tree(t);
        let whole = GraphInput::new(&g, &PathConfig { max_path_len: 3, eos, keep_last: None }).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let cut = GraphInput::new(&g, &PathConfig { max_path_len: 3, eos, keep_last: Some(k) }).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let first = whole.len().saturating_sub(k);
        prop_assert_eq!(&cut.concepts[..], &whole.concepts[first..]);
        prop_assert_eq!(&cut.kinds[..], &whole.kinds[first..]);
        for i in 0..cut.len() {
            for j in 0..cut.len() {
                prop_assert_eq!(cut.path(i, j), whole.path(first + i, first + j), "cell ({}, {})", i, j);
            }
        }
    }

    #[test]
    fn path_matrix_is_antisymmetric_in_direction(t in tree()) {
        let g = AmrGraph::from_tree(t);
        let input = GraphInput::new(&g, &PathConfig { max_path_len: 64, eos: true, keep_last: None })
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let n = input.len();
        // Without re-entrancy (no node with two incoming edges, none into the top) the graph is
        // a tree and every shortest path is unique; with it, equally short paths may differ.
        let mut targets = std::collections::HashSet::new();
        let is_tree = g.edges().all(|e| targets.insert(e.target_str().to_owned())) && !targets.contains(g.top());
        for i in 0..n {
            for j in 0..n {
                let (Some(p), Some(q)) = (input.path(i, j), input.path(j, i)) else {
                    return Err(TestCaseError::fail(format!("no cell ({i}, {j}) in {n} nodes")));
                };
                prop_assert_eq!(p.len(), q.len(), "shortest paths ({}, {}) and ({}, {}) differ in length", i, j, j, i);
                if !is_tree {
                    continue;
                }
                // A tree's path walked backwards is the same labels in reverse order, each
                // followed in the other direction ("-:r" <-> "+:r").
                let flip = |l: &str| match l.split_at_checked(1) {
                    Some(("-", rest)) => format!("+{rest}"),
                    Some(("+", rest)) => format!("-{rest}"),
                    _ => l.to_owned(),
                };
                let back: Vec<String> = q.iter().rev().map(|l| flip(l)).collect();
                let forward: Vec<String> = p.iter().map(|l| l.to_string()).collect();
                prop_assert_eq!(forward, back, "path ({}, {}) against ({}, {})", i, j, j, i);
            }
        }
        let tokens = linearize(&Pipeline::konstas().run(g.into_layout()).0, &LinearizeOptions::default());
        prop_assert!(!tokens.is_empty());
    }

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        for tree in penman::decode_all(&s).into_iter().flatten() {
            let g = AmrGraph::from_tree(tree);
            let _ = g.encode();
            let _ = GraphInput::new(&g, &PathConfig::default());
            if let Ok(st) = SmatchTriples::from_tree(g.layout()) {
                let _ = Smatch::default().score(&st, &st);
            }
        }
    }

    #[test]
    fn penman_like_noise_never_panics(s in "[()/: \"a-c0-9~\\n#-]{0,120}") {
        for tree in penman::decode_all(&s).into_iter().flatten() {
            let _ = AmrGraph::from_tree(tree).encode();
        }
    }
}
