//! The runaway-repetition rule of the repair never fires on human annotation: every gold graph
//! bundled in `data/amr` and, with `../shared`, the whole Little Prince bank and both Diplomacy
//! annotators' files pass through [`collapse_runaway`] unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use dialeval_amr_parse::collapse_runaway;

fn check(path: &PathBuf) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut graphs = 0;
    for block in text.split("\n\n").filter(|b| b.lines().any(|l| l.trim_start().starts_with('('))) {
        let graph: String = block.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
        assert_eq!(collapse_runaway(&graph), None, "{}: {block}", path.display());
        graphs += 1;
    }
    graphs
}

#[test]
fn gold_graphs_have_no_runaway_repetition() {
    let bundled = dialeval_testkit::workspace_dir().join("data/amr");
    let n: usize = ["little-prince-v1.6-first40.amr.txt", "little-prince-v3.0-first40.amr.txt"].iter().map(|f| check(&bundled.join(f))).sum();
    assert_eq!(n, 80);
    if let Some(shared) = dialeval_testkit::shared_dir() {
        let data = shared.join("data");
        let files = ["amr-little-prince/amr-bank-struct-v3.0.txt", "amr-diplomacy/dip-all-amr-jweinman-20220926.txt", "amr-diplomacy/dip-all-amr-smosher.txt"];
        let n: usize = files.iter().map(|f| check(&data.join(f))).sum();
        assert!(n > 2000, "only {n} gold graphs read");
    }
}
