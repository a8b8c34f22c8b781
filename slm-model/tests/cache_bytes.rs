//! The embedding cache's reader on arbitrary bytes: an error or a shorter cache, never a panic
//! and never an allocation the file cannot back.
#![allow(clippy::panic, clippy::unwrap_used)]

use dialeval_slm_model::ruber::{CachedText, EmbeddingCache};
use proptest::prelude::*;

fn temp(case: u64) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dialeval-cache-bytes-{}-{case}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("cache.bin")
}

/// One valid record of `text` with `n` tokens of width 4.
fn record(text: &str, n: usize) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend((text.len() as u32).to_le_bytes());
    b.extend(text.as_bytes());
    b.extend((n as u32).to_le_bytes());
    b.extend(4_u32.to_le_bytes());
    b.extend((0..n as u32).flat_map(u32::to_le_bytes));
    b.extend((0..4 * n).flat_map(|k| half::f16::from_f32(k as f32).to_le_bytes()));
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_after_a_valid_record_keep_the_record(tail in proptest::collection::vec(any::<u8>(), 0..64), case in any::<u64>()) {
        let path = temp(case);
        let mut bytes = record("hello", 3);
        bytes.extend(&tail);
        std::fs::write(&path, &bytes).unwrap();
        match EmbeddingCache::open(&path, 4) {
            Ok(cache) => {
                let entry = cache.get("hello").cloned();
                prop_assert_eq!(entry.map(|e| e.ids), Some(vec![0, 1, 2]));
                // What stays on disk is whole records only.
                let kept = std::fs::metadata(&path).unwrap().len();
                prop_assert!(kept >= record("hello", 3).len() as u64 && kept <= bytes.len() as u64);
            }
            // A whole record of another width is reported, not dropped silently.
            Err(e) => prop_assert!(e.to_string().contains("width"), "{e}"),
        }
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }

    #[test]
    fn huge_length_fields_are_refused_without_allocating(len in any::<u32>(), n in any::<u32>(), dim in any::<u32>(), case in any::<u64>()) {
        let path = temp(case);
        let mut bytes = Vec::new();
        bytes.extend(len.to_le_bytes());
        bytes.extend([b'a'; 16]);
        bytes.extend(n.to_le_bytes());
        bytes.extend(dim.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        // A text longer than the 28 bytes of the file is damage: the cache opens empty.
        match EmbeddingCache::open(&path, 4) {
            Ok(cache) => prop_assert!(len <= 16 || cache.is_empty()),
            Err(e) => prop_assert!(e.to_string().contains("width"), "{e}"),
        }
        std::fs::remove_dir_all(path.parent().unwrap()).ok();
    }
}

#[test]
fn an_inserted_record_reads_back() {
    let path = temp(u64::MAX);
    std::fs::remove_file(&path).ok();
    let mut cache = EmbeddingCache::open(&path, 4).unwrap();
    cache.insert("hi", CachedText { ids: vec![7], states: vec![half::f16::from_f32(0.5); 4] }).unwrap();
    let again = EmbeddingCache::open(&path, 4).unwrap();
    assert_eq!(again.get("hi").map(|e| e.ids.clone()), Some(vec![7]));
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}
