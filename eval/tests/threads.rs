//! The thread count never changes a result: the bundled USR-PersonaChat with its silver AMR,
//! scored by the length, lexical, embedding and Smatch families and analysed (bootstrap
//! intervals included) on a pool of 1 thread and on a pool of 4, must give the same bits.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::sync::Arc;

use dialeval_amr_graph::smatch::SmatchConfig;
use dialeval_datasets::amr::AmrIndex;
use dialeval_eval::families::{EmbeddingFamily, LengthFamily, LexicalFamily, MemoEmbedder, SmatchFamily};
use dialeval_eval::{Analysis, AnalysisInput, HumanScores, Pipeline};

mod common;
use common::WordHash;

fn run(threads: usize) -> (String, String) {
    let root = dialeval_testkit::workspace_dir();
    let mut items = dialeval_datasets::usr::load(&root.join("data/usr-personachat/pc_usr_data.json")).unwrap();
    let amr_files = vec![root.join("data/silver-amr/usr-personachat.silver.amr.txt")];
    let amr = AmrIndex::load(&amr_files).unwrap();
    amr.attach(&mut items);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut pipeline = Pipeline::new();
        pipeline.add(LengthFamily);
        pipeline.add(LexicalFamily::new().unwrap());
        pipeline.add(EmbeddingFamily::new(Arc::new(MemoEmbedder::new(WordHash, "word-hash"))));
        pipeline.add(SmatchFamily::new(&amr, &amr_files, SmatchConfig::default()).unwrap());
        let scored = pipeline.run(&items, &|_| {}).unwrap();
        let systems: Vec<Option<String>> = items.iter().map(|i| i.system.clone()).collect();
        let lengths: Vec<Option<f64>> = items.iter().map(|i| i.response.as_ref().map(|r| dialeval_common::word_count(&r.text) as f64)).collect();
        let analysis = Analysis::of(AnalysisInput { table: &scored.table, human: &HumanScores::of(&items), systems: &systems, lengths: &lengths }, &Default::default()).unwrap();
        let bits: Vec<Vec<Option<u64>>> = scored.table.columns().iter().map(|c| c.values.iter().map(|v| v.map(f64::to_bits)).collect()).collect();
        (format!("{bits:?}"), serde_json::to_string(&analysis).unwrap())
    })
}

#[test]
fn one_thread_and_four_give_identical_scores_and_analysis() {
    let (scores1, analysis1) = run(1);
    let (scores4, analysis4) = run(4);
    assert_eq!(scores1, scores4, "scores differ between 1 and 4 threads");
    assert_eq!(analysis1, analysis4, "the analysis differs between 1 and 4 threads");
    assert!(analysis1.contains("\"ci\":{"), "no bootstrap interval was computed");
}
