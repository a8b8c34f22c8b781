//! Arbitrary bytes at the entry points a user hands files to, beyond the corpus loaders (fuzzed
//! in dialeval-datasets): AMR side files through the whole pipeline (lenient and strict
//! loading, attaching, Smatch), `shard.json` files, and merges of shards whose tables were
//! tampered with. Each ends in a result or a typed error; none panics or overflows the stack.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use dialeval_datasets::DialogueItem;
use dialeval_datasets::amr::AmrIndex;
use dialeval_eval::digest::items_digest;
use dialeval_eval::families::{LengthFamily, SmatchFamily};
use dialeval_eval::shard::{Shard, ShardDigests, ShardScores, merge};
use dialeval_eval::{Evaluation, Pipeline};
use dialeval_metrics::report::ReportConfig;
use proptest::prelude::*;

mod common;
use common::{item, rated_corpus};

/// PENMAN-ish text: fragments of graphs, metadata, parentheses, quotes and noise in any order,
/// so that the generated files reach past the first syntax check.
fn penmanish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"# ::snt we stayed home\n".to_vec()),
        Just(b"# ::snt i went to the beach\n".to_vec()),
        Just(b"# ::id x\n".to_vec()),
        Just(b"(s / stay-01 :ARG1 (w / we) :location (h / home))\n".to_vec()),
        Just(b"(g / go-02 :ARG0 (i / i) :ARG4 (b / beach))\n".to_vec()),
        Just(b"(".to_vec()),
        Just(b")".to_vec()),
        Just(b"()".to_vec()),
        Just(b"\"".to_vec()),
        Just(b" :ARG0 ".to_vec()),
        Just(b"\n\n".to_vec()),
        Just(b"\xef\xbb\xbf".to_vec()),
        "(\\(a / b ){1,40}".prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..12),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|parts| parts.concat())
}

fn items() -> Vec<DialogueItem> {
    vec![item("a", "what did you do", "we stayed home", "i went to the beach"), item("b", "and then", "i went to the beach", "we stayed home"), item("c", "anything else", "nothing", "we stayed home")]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// An AMR file of any bytes: loaded strictly (an error, or an index) and leniently (always
    /// an index, its bad blocks named), attached, and scored by Smatch.
    #[test]
    fn any_amr_file_goes_through_the_pipeline(bytes in penmanish(), case in any::<u64>()) {
        let path = common::temp("fuzz-amr", &case.to_string());
        std::fs::create_dir_all(&path).unwrap();
        let file = path.join("side.amr.txt");
        std::fs::write(&file, &bytes).unwrap();
        let strict = AmrIndex::load(std::slice::from_ref(&file));
        match AmrIndex::load_lenient(std::slice::from_ref(&file)) {
            Ok(index) => {
                prop_assert!(strict.is_ok() == index.malformed.is_empty(), "strict and lenient disagree: {:?} / {:?}", strict.err().map(|e| e.to_string()), index.malformed);
                for bad in &index.malformed {
                    prop_assert!(bad.to_string().contains("side.amr.txt:"), "{bad}");
                }
                let mut items = items();
                index.attach(&mut items);
                let mut pipeline = Pipeline::new();
                pipeline.add(LengthFamily);
                pipeline.add(SmatchFamily::new(&index, std::slice::from_ref(&file), Default::default()).unwrap());
                let scored = pipeline.run(&items, &|_| {});
                prop_assert!(scored.is_ok(), "{:?}", scored.err().map(|e| e.to_string()));
            }
            // Only bytes that are not UTF-8 are refused as a whole, with their line and column.
            Err(e) => {
                prop_assert!(std::str::from_utf8(&bytes).is_err(), "{e}");
                prop_assert!(e.to_string().contains("invalid UTF-8"), "{e}");
            }
        }
        let _ = std::fs::remove_dir_all(&path);
    }

    /// `shard.json` of any bytes, or a real one with bytes flipped: read as shard scores or a
    /// typed error naming the file.
    #[test]
    fn any_shard_file_is_read_or_refused(noise in prop::collection::vec(any::<u8>(), 0..64), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6), case in any::<u64>()) {
        let dir = common::temp("fuzz-shard", &case.to_string());
        let items = rated_corpus(true);
        let shard = Shard { index: 1, of: 2 };
        let part = shard.select(&items);
        let report = Evaluation::of(&part).family(LengthFamily).analysis(ReportConfig { bootstrap: None, ..ReportConfig::default() }).run().unwrap();
        ShardScores::of(shard, &items_digest(&part).unwrap(), &report).unwrap().write(&dir).unwrap();
        let file = dir.join(dialeval_eval::shard::SHARD_FILE);
        let mut bytes = std::fs::read(&file).unwrap();
        for (at, b) in &flips {
            let k = at.index(bytes.len());
            bytes[k] = *b;
        }
        for content in [bytes, noise] {
            std::fs::write(&file, &content).unwrap();
            if let Err(e) = ShardScores::read(&dir) {
                prop_assert!(e.to_string().contains("shard.json"), "{e}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A merge of two real shards whose tables were tampered with (rows dropped or added, ids
    /// changed, metrics renamed, values made huge): a merged table or a typed error.
    #[test]
    fn tampered_shards_merge_or_are_refused(drop_row in any::<prop::sample::Index>(), rename in any::<bool>(), extra in any::<bool>(), huge in any::<bool>(), id_swap in any::<bool>()) {
        let items = rated_corpus(true);
        let mut shards: Vec<ShardScores> = (1..=2)
            .map(|index| {
                let shard = Shard { index, of: 2 };
                let part = shard.select(&items);
                let report = Evaluation::of(&part).family(LengthFamily).analysis(ReportConfig { bootstrap: None, ..ReportConfig::default() }).run().unwrap();
                ShardScores::of(shard, &items_digest(&part).unwrap(), &report).unwrap()
            })
            .collect();
        let s = &mut shards[1];
        if rename {
            s.columns[0].metric = "Something else".into();
        }
        if extra {
            s.ids.push("item-999".into());
        }
        if huge {
            s.columns[0].values.iter_mut().for_each(|v| *v = v.map(|_| f64::MAX));
        }
        if id_swap {
            let k = drop_row.index(s.ids.len());
            s.ids[k] = "item-0".into();
        } else {
            let k = drop_row.index(s.columns[0].values.len());
            s.columns[0].values.remove(k);
        }
        let scan = Pipeline::new().run(&items, &|_| {}).unwrap();
        match merge(&scan.rows.ids, &ShardDigests::of_items(&items, 2).unwrap(), &shards) {
            Ok((table, runs)) => {
                prop_assert!(!rename && !extra && id_swap, "a tampered shard was merged");
                prop_assert_eq!(table.items(), items.len());
                prop_assert!(!runs.is_empty());
            }
            // A table with a row too few or too many is refused, not read as empty cells.
            Err(e) => prop_assert!(e.to_string().starts_with("merge: "), "{e}"),
        }
    }
}
