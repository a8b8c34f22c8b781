//! Parity with penman 1.3.1 on all 1,562 Little Prince v3.0 graphs
//! (`../shared/golden/little_prince_v3_penman.jsonl`; tolerance: exact).
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::fs::File;
use std::io::BufReader;

use dialeval_amr_graph::AmrGraph;
use dialeval_amr_graph::penman::PenmanReader;
use serde_json::Value;

#[test]
fn little_prince_v3_matches_penman_exactly() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let golden = dialeval_testkit::read_jsonl(&shared.join("golden/little_prince_v3_penman.jsonl"));
    let path = shared.join("data/amr-little-prince/amr-bank-struct-v3.0.txt");
    let file = File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let graphs: Vec<AmrGraph> = PenmanReader::new(BufReader::new(file)).map(|r| AmrGraph::from_tree(r.unwrap_or_else(|e| panic!("{e}")))).collect();
    assert_eq!(graphs.len(), 1562);
    assert_eq!(golden.len(), 1562);
    let mut n_triples = 0;
    for (g, want) in graphs.iter().zip(&golden) {
        let index = &want["index"];
        assert_eq!(g.metadata().get("id"), want["id"].as_str(), "graph {index}: id");
        assert_eq!(g.metadata().get("snt"), want["snt"].as_str(), "graph {index}: snt");
        assert_eq!(Some(g.top()), want["top"].as_str(), "graph {index}: top");
        let meta: Vec<(String, String)> = g.metadata().iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
        let want_meta: Vec<(String, String)> = want["metadata"].as_object().map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect()).unwrap_or_default();
        assert_eq!(meta, want_meta, "graph {index}: metadata and its order");
        let triples: Vec<Value> = g.triples_sorted().iter().map(|t| serde_json::json!([t.source, t.role, t.target])).collect();
        assert_eq!(Value::Array(triples), want["triples_sorted"], "graph {index}: triples");
        assert_eq!(g.instances().count() as u64, want["n_instances"].as_u64().unwrap_or(0), "graph {index}");
        assert_eq!(g.edges().count() as u64, want["n_edges"].as_u64().unwrap_or(0), "graph {index}");
        assert_eq!(g.attributes().count() as u64, want["n_attributes"].as_u64().unwrap_or(0), "graph {index}");
        assert_eq!(Some(g.encode_graph_only().as_str()), want["encoded_graph_only"].as_str(), "graph {index}");
        assert_eq!(Some(g.encode().as_str()), want["encoded"].as_str(), "graph {index}: encoded");
        assert!(g.issues().is_empty(), "graph {index}: {:?}", g.issues());
        n_triples += g.triples().len();
    }
    assert_eq!(n_triples, 21956);
}

#[test]
fn decode_of_encode_preserves_triples_on_little_prince() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let text = std::fs::read_to_string(shared.join("data/amr-little-prince/amr-bank-struct-v3.0.txt")).unwrap_or_else(|e| panic!("{e}"));
    for item in dialeval_amr_graph::penman::decode_all(&text) {
        let g = AmrGraph::from_tree(item.unwrap_or_else(|e| panic!("{e}")));
        let again = AmrGraph::decode(&g.encode()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(g.triples(), again.triples());
        assert_eq!(g.metadata(), again.metadata());
    }
}
