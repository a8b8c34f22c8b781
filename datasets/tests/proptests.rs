//! The corpus loaders on arbitrary bytes: a located error or items, never a panic.
#![allow(clippy::panic, clippy::unwrap_used)]

use proptest::prelude::*;

fn write(name: &str, case: u64, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dialeval-datasets-prop-{}-{case}", std::process::id()));
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

/// JSON-ish noise: brackets, quotes, keys the loaders look for, numbers.
fn jsonish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("[".to_owned()),
            Just("]".to_owned()),
            Just(",".to_owned()),
            Just(":".to_owned()),
            Just("\"context\"".to_owned()),
            Just("\"response\"".to_owned()),
            Just("\"ratings\"".to_owned()),
            Just("\"id\"".to_owned()),
            Just("\"references\"".to_owned()),
            Just("null".to_owned()),
            Just("\n".to_owned()),
            "\"[a-z]{0,5}\"",
            "-?[0-9]{1,3}(\\.[0-9])?"
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn loaders_never_panic_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200), case in any::<u64>()) {
        let path = write("any.json", case, &bytes);
        let _ = dialeval_datasets::jsonl::load(&path);
        let _ = dialeval_datasets::usr::load(&path);
        let _ = dialeval_datasets::fed::load(&path);
        let _ = dialeval_datasets::ddpp::load(&path);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[test]
    fn loaders_never_panic_on_json_like_text(text in jsonish(), case in any::<u64>()) {
        let path = write("jsonish.json", case, text.as_bytes());
        if let Err(e) = dialeval_datasets::jsonl::load(&path) {
            // Errors name the file.
            prop_assert!(e.to_string().contains("jsonish.json"), "{e}");
        }
        let _ = dialeval_datasets::usr::load(&path);
        let _ = dialeval_datasets::fed::load(&path);
        let _ = dialeval_datasets::ddpp::load(&path);
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }
}

proptest! {
    /// GRADE's release (every file of a cell and the judgements), Topical-Chat, AMR side files
    /// and the kind sniffer on arbitrary bytes and JSON-ish text.
    #[test]
    fn the_other_readers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), text in jsonish(), case in any::<u64>()) {
        for (k, content) in [bytes, text.into_bytes()].iter().enumerate() {
            let judgements = write(&format!("grade{k}/human_score/human_judgement.json"), case, content);
            let root = judgements.parent().unwrap().parent().unwrap().to_owned();
            let cell = root.join("eval_data/convai2/model");
            std::fs::create_dir_all(&cell).unwrap();
            for f in ["human_ctx.txt", "human_hyp.txt", "human_ref.txt"] {
                std::fs::write(cell.join(f), content).unwrap();
            }
            let _ = dialeval_datasets::grade::load_release(&root, None, None);
            let _ = dialeval_datasets::grade::load_judgements(&judgements);
            let _ = dialeval_datasets::sniff::guess(&root);
            let path = write(&format!("other{k}.json"), case, content);
            let _ = dialeval_datasets::topical::load_conversations(&path);
            let _ = dialeval_datasets::topical::load_reading_sets(&path);
            let _ = dialeval_datasets::sniff::guess(&path);
            let _ = dialeval_datasets::amr::read_blocks_lenient(&path);
            let _ = dialeval_datasets::amr::AmrIndex::load_lenient(std::slice::from_ref(&path));
        }
        std::fs::remove_dir_all(std::env::temp_dir().join(format!("dialeval-datasets-prop-{}-{case}", std::process::id()))).ok();
    }
}
