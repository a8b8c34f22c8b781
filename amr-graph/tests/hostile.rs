//! Hostile graphs: deep nesting, long re-entrant chains and wide stars of 10^4–10^5 nodes end
//! in a typed error or a result, never in a stack overflow or a cubic-time stall. Every tree the
//! reader makes is at most `penman::MAX_DEPTH` deep and `penman::MAX_NODES` large, and every
//! walk over it works at that size on a 2 MiB thread stack (the size of a test thread and of a
//! rayon worker).
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::fmt::Write as _;

use dialeval_amr_graph::paths::{GraphInput, PathConfig, TRUNCATED};
use dialeval_amr_graph::penman::{self, Indent, MAX_DEPTH, MAX_NODES};
use dialeval_amr_graph::simplify::{LinearizeOptions, Pipeline, linearize};
use dialeval_amr_graph::smatch::{Smatch, SmatchConfig, SmatchTriples};
use dialeval_amr_graph::{AmrGraph, Error, ParseError, ParseErrorKind};
use dialeval_testkit::{penman_chain as nested_chain, penman_star as star};
use proptest::prelude::*;

/// A chain `n0 → n1 → … → n{n-1}` of `:ARG0` re-entrancies written as a two-level tree (each
/// node also hangs off the top by an `:op` edge): laying its `:ARG0` triples out from the top,
/// first occurrence first, nests them `n` levels deep.
fn reentrant_chain(n: usize) -> String {
    let mut s = String::from("(n0 / thing :ARG0 n1");
    for i in 1..n {
        write!(s, " :op{i} (n{i} / thing").unwrap();
        if i + 1 < n {
            write!(s, " :ARG0 n{}", i + 1).unwrap();
        }
        s.push(')');
    }
    s.push(')');
    s
}

fn kind(r: Result<penman::Tree, ParseError>) -> Option<ParseErrorKind> {
    r.err().map(|e| e.kind)
}

/// Runs `f` on a thread with a 2 MiB stack, as rayon's workers have.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(2 << 20).spawn(f).unwrap().join().unwrap_or_else(|_| panic!("the walk failed on a 2 MiB stack"));
}

#[test]
fn deep_nesting_is_a_typed_error_and_reading_goes_on() {
    for n in [MAX_DEPTH + 1, 10_000, 100_000] {
        let text = nested_chain(n);
        assert_eq!(kind(penman::decode(&text)), Some(ParseErrorKind::TooDeep { limit: MAX_DEPTH }), "{n} levels");
        assert!(matches!(AmrGraph::decode(&text), Err(Error::Parse(ParseError { kind: ParseErrorKind::TooDeep { .. }, .. }))));
        assert!(SmatchTriples::parse(&text).is_err());
        assert!(Smatch::new(SmatchConfig::default()).unwrap().score_str(&text, "(a / thing)").is_err());
        // The next graph of the file is still read.
        let all = penman::decode_all(&format!("# ::id deep\n{text}\n\n# ::id next\n(a / fine)\n"));
        assert_eq!(all.len(), 2);
        let err = all[0].as_ref().unwrap_err();
        assert!(err.to_string().contains("deeper than 512"), "{err}");
        // The error quotes a window of the megabyte line, not the line.
        assert!(err.to_string().len() < 400, "{} bytes", err.to_string().len());
        assert_eq!(all[1].as_ref().unwrap().id(), Some("next"));
    }
}

#[test]
fn too_many_nodes_is_a_typed_error() {
    for n in [MAX_NODES + 1, 100_000] {
        let text = star(n);
        let err = penman::decode(&text).unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::TooLarge { limit: MAX_NODES });
        assert_eq!(err.line, 1);
        assert!(err.column > 10 * MAX_NODES, "the error points at the node that crosses the limit: column {}", err.column);
    }
    // At the limit the star is a graph like any other.
    let g = AmrGraph::decode(&star(MAX_NODES)).unwrap();
    assert_eq!(g.variables().count(), MAX_NODES);
    assert_eq!(g.depth(), 1);
}

#[test]
fn every_walk_works_at_the_depth_limit_on_a_small_stack() {
    on_small_stack(|| {
        let text = nested_chain(MAX_DEPTH);
        let tree = penman::decode(&text).unwrap();
        assert_eq!(penman::decode(&penman::encode(&tree, Indent::Adaptive)).unwrap(), tree);
        assert_eq!(penman::decode(&penman::encode(&tree, Indent::SingleLine)).unwrap(), tree);
        let graph = AmrGraph::decode(&text).unwrap();
        assert_eq!(graph.depth(), MAX_DEPTH - 1);
        assert!(graph.validate().is_ok());
        let laid_out = AmrGraph::from_triples(graph.top(), graph.triples(), penman::Metadata::new()).unwrap();
        assert_eq!(laid_out.triples().len(), graph.triples().len());
        let triples = SmatchTriples::parse(&text).unwrap();
        let smatch = Smatch::new(SmatchConfig::default()).unwrap();
        assert!((smatch.score(&triples, &triples).f1() - 1.0).abs() < 1e-12);
        let (simple, _) = Pipeline::konstas().run(tree.clone());
        assert_eq!(linearize(&simple, &LinearizeOptions::default()).iter().filter(|t| *t == "thing").count(), MAX_DEPTH);
        let input = GraphInput::new(&graph, &PathConfig { max_path_len: 4, eos: true, keep_last: None }).unwrap();
        assert_eq!(input.len(), MAX_DEPTH + 1);
        assert_eq!(input.path(0, MAX_DEPTH - 1).unwrap().last().map(|l| l.as_str()), Some(TRUNCATED));
        drop(graph);
        drop(tree);
    });
}

#[test]
fn a_long_chain_of_reentrancies_is_read_and_its_layout_refused() {
    let n = MAX_NODES - 1;
    let text = reentrant_chain(n);
    let graph = AmrGraph::decode(&text).unwrap();
    assert_eq!(graph.depth(), 1);
    assert_eq!(graph.reentrancy_count(), n - 1);
    // Laying the chain out from its top, first occurrence first, would nest it n levels deep.
    let err = AmrGraph::from_triples(graph.top(), graph.triples(), penman::Metadata::new()).unwrap_err();
    assert!(err.to_string().contains("deeper than 512"), "{err}");
    on_small_stack(move || {
        let triples = SmatchTriples::parse(&text).unwrap();
        assert_eq!(triples.node_count(), n);
        let input = GraphInput::new(&graph, &PathConfig { max_path_len: 4, eos: false, keep_last: Some(48) }).unwrap();
        assert_eq!(input.len(), 48);
    });
}

#[test]
fn path_cells_of_a_deep_graph_cost_their_length_not_the_distance() {
    // The last 48 nodes of a 512-level chain, as the SLM keeps them: every cell is cut at
    // max_path_len labels, and building them does not walk the whole path back.
    let graph = AmrGraph::decode(&nested_chain(MAX_DEPTH)).unwrap();
    let started = std::time::Instant::now();
    for _ in 0..20 {
        let input = GraphInput::new(&graph, &PathConfig { max_path_len: 4, eos: false, keep_last: Some(48) }).unwrap();
        assert_eq!(input.len(), 48);
        let far = input.path(0, 47).unwrap();
        assert_eq!(far.iter().map(|l| l.as_str()).collect::<Vec<_>>(), ["-:ARG0", "-:ARG0", "-:ARG0", TRUNCATED]);
        assert_eq!(input.path(0, 3).unwrap().len(), 3);
        assert_eq!(input.path(3, 0).unwrap()[0].as_str(), "+:ARG0");
    }
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    Nested,
    Star,
    Reentrant,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever the shape and size (up to 10^5 nodes), reading ends in a tree within the
    /// limits or in the limit's typed error, and a tree is walked on a small stack.
    #[test]
    fn any_shape_and_size_reads_within_the_limits(shape in prop_oneof![Just(Shape::Nested), Just(Shape::Star), Just(Shape::Reentrant)], n in 1usize..100_000) {
        let (text, depth) = match shape {
            Shape::Nested => (nested_chain(n), n),
            Shape::Star => (star(n), n.min(2)),
            Shape::Reentrant => (reentrant_chain(n), n.min(2)),
        };
        let expected = if depth > MAX_DEPTH {
            Some(ParseErrorKind::TooDeep { limit: MAX_DEPTH })
        } else if n > MAX_NODES {
            Some(ParseErrorKind::TooLarge { limit: MAX_NODES })
        } else {
            None
        };
        let read = penman::decode(&text);
        prop_assert_eq!(read.as_ref().err().map(|e| e.kind.clone()), expected);
        if let Ok(tree) = read {
            on_small_stack(move || {
                let encoded = penman::encode(&tree, Indent::Adaptive);
                assert_eq!(penman::decode(&encoded).unwrap(), tree);
                assert_eq!(SmatchTriples::from_tree(&tree).unwrap().node_count(), n);
            });
        }
    }
}
