//! Simplification passes and Graph-Transformer input on real graphs: the bundled Little Prince
//! sample always, plus the full Little Prince corpus and the silver dialogue AMR from `../shared`.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::path::{Path, PathBuf};

use dialeval_amr_graph::AmrGraph;
use dialeval_amr_graph::paths::{GraphInput, PathConfig, SELF, Vocab};
use dialeval_amr_graph::penman::{Indent, Target, Tree, decode_all, encode};
use dialeval_amr_graph::simplify::{Anonymize, DropWiki, LinearizeOptions, Pipeline, StripSenses, linearize, strip_sense};

fn trees(path: &Path) -> Vec<Tree> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    decode_all(&text).into_iter().map(|r| r.unwrap_or_else(|e| panic!("{e}"))).collect()
}

fn corpora() -> Vec<PathBuf> {
    let mut files = vec![dialeval_testkit::workspace_dir().join("data/amr/little-prince-v3.0-first40.amr.txt")];
    if let Some(shared) = dialeval_testkit::shared_dir() {
        files.push(shared.join("data/amr-little-prince/amr-bank-struct-v3.0.txt"));
        files.push(shared.join("data/silver-amr/usr-personachat.silver.amr.txt"));
    }
    files
}

fn sorted_triples(t: Tree) -> Vec<dialeval_amr_graph::Triple> {
    let mut v = AmrGraph::from_tree(t).triples().to_vec();
    v.sort();
    v
}

#[test]
fn each_pass_does_its_job_on_real_graphs() {
    for file in corpora() {
        for tree in trees(&file) {
            let (no_wiki, _) = Pipeline::new().then(DropWiki).run(tree.clone());
            assert!(!encode(&no_wiki, Indent::SingleLine).contains(":wiki"));

            let (stripped, _) = Pipeline::new().then(StripSenses).run(tree.clone());
            stripped.node.walk(&mut |n| {
                if let Some(c) = &n.concept {
                    assert_eq!(strip_sense(c), c.as_str(), "{}: sense left on {c}", file.display());
                }
            });

            let (mut anon, placeholders) = Pipeline::new().then(Anonymize::all()).run(tree.clone());
            anon.node.walk(&mut |n| {
                assert_ne!(n.concept.as_deref(), Some("date-entity"));
                assert!(!n.edges.iter().any(|e| e.role == ":name" && matches!(&e.target, Target::Node(m) if m.concept.as_deref() == Some("name"))));
            });
            for (token, p) in placeholders.iter() {
                assert!(!p.surface.is_empty() || p.removed.is_empty(), "{token} has no surface form");
            }
            placeholders.restore(&mut anon).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(sorted_triples(anon), sorted_triples(tree.clone()), "{}: anonymisation not reversible", file.display());

            let (konstas, _) = Pipeline::konstas().run(tree);
            let tokens = linearize(&konstas, &LinearizeOptions::default());
            let opens = tokens.iter().filter(|t| *t == "(").count();
            assert_eq!(opens, tokens.iter().filter(|t| *t == ")").count());
            assert!(tokens.iter().all(|t| !t.contains('"')));
        }
    }
}

#[test]
fn graph_inputs_on_real_graphs() {
    for file in corpora() {
        let inputs: Vec<GraphInput> = trees(&file).into_iter().map(|t| GraphInput::new(&AmrGraph::from_tree(t), &PathConfig::default()).unwrap_or_else(|e| panic!("{e}"))).collect();
        for g in &inputs {
            let n = g.len();
            for i in 0..n {
                assert_eq!(g.path(i, i).map(|p| p[0].as_str()), Some(SELF));
                for j in 0..n {
                    let p = g.path(i, j).unwrap_or_else(|| panic!("no cell ({i}, {j})"));
                    assert!(!p.is_empty() && p.len() <= 4);
                    assert_ne!(p[0], "<unreachable>", "{}: graphs are connected", file.display());
                }
            }
        }
        let concepts = Vocab::concepts(&inputs, 1);
        let labels = Vocab::path_labels(&inputs, 1);
        let json = serde_json::to_string(&labels).unwrap_or_else(|e| panic!("{e}"));
        let back: Vocab = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, labels);
        for g in &inputs {
            let enc = g.encode(&concepts, &labels, 4);
            assert!(enc.concept_ids.iter().all(|&id| id != Vocab::UNK));
            assert!(enc.path_ids.iter().all(|&id| id != Vocab::UNK));
        }
    }
}
