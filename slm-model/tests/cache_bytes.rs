//! The embedding cache's reader on arbitrary bytes: an error or a shorter cache, never a panic
//! and never an allocation the file cannot back.
#![allow(clippy::panic, clippy::unwrap_used)]

use dialeval_slm_model::vectors::{CachedText, EmbeddingCache};
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
                let entry = cache.get("hello").unwrap();
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
    let hi = CachedText { ids: vec![7], states: vec![half::f16::from_f32(0.5); 4] };
    let there = CachedText { ids: vec![8, 9], states: (0..8).map(|k| half::f16::from_f32(k as f32)).collect() };
    cache.insert("hi", hi.clone()).unwrap();
    cache.insert("there", there.clone()).unwrap();
    // Read from the file by offset: in the session that wrote them and after reopening.
    assert_eq!(cache.get("hi").unwrap().as_ref(), Some(&hi));
    assert_eq!(cache.get("there").unwrap().as_ref(), Some(&there));
    let again = EmbeddingCache::open(&path, 4).unwrap();
    assert_eq!(again.get("hi").unwrap(), Some(hi));
    assert_eq!(again.get("there").unwrap(), Some(there));
    assert_eq!(again.get("nobody").unwrap(), None);
    assert!(again.contains("there") && !again.contains("nobody"));
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

#[test]
fn damage_is_quarantined_not_cut_away() {
    let path = temp(u64::MAX - 1);
    let (a, b, c) = (record("first", 2), record("second", 3), record("third", 1));
    // The second record's text length is out of bounds: damage, not a torn tail.
    let mut damaged = b.clone();
    damaged[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    let bytes: Vec<u8> = [a.clone(), damaged, c.clone()].concat();
    std::fs::write(&path, &bytes).unwrap();
    let cache = EmbeddingCache::open(&path, 4).unwrap();
    assert_eq!(cache.len(), 1, "the record before the damage is kept");
    assert!(cache.get("first").unwrap().is_some());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), a.len() as u64);
    let quarantine = std::path::PathBuf::from(format!("{}.damaged-at-{}", path.display(), a.len()));
    assert_eq!(std::fs::read(&quarantine).unwrap(), bytes[a.len()..], "every byte from the damage on is kept aside");

    // A torn last record (a killed write) is dropped and nothing is quarantined.
    let torn_path = temp(u64::MAX - 2);
    let torn: Vec<u8> = [a.clone(), b[..b.len() - 3].to_vec()].concat();
    std::fs::write(&torn_path, &torn).unwrap();
    assert_eq!(EmbeddingCache::open(&torn_path, 4).unwrap().len(), 1);
    assert_eq!(std::fs::metadata(&torn_path).unwrap().len(), a.len() as u64);
    assert!(std::fs::read_dir(torn_path.parent().unwrap()).unwrap().all(|e| !e.unwrap().path().to_string_lossy().contains("damaged")));
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
    std::fs::remove_dir_all(torn_path.parent().unwrap()).ok();
}

#[test]
fn a_text_over_the_record_limit_is_served_but_never_written() {
    let path = temp(u64::MAX - 3);
    std::fs::remove_file(&path).ok();
    let huge = "word ".repeat(300_000); // 1.5 MB, over the 1 MiB a record's text may hold
    let entry = CachedText { ids: vec![1, 2], states: vec![half::f16::from_f32(0.25); 8] };
    let mut cache = EmbeddingCache::open(&path, 4).unwrap();
    cache.insert("short", entry.clone()).unwrap();
    cache.insert(&huge, entry.clone()).unwrap();
    assert_eq!(cache.get(&huge).unwrap().as_ref(), Some(&entry), "served for this run");
    assert_eq!(cache.len(), 2);
    // The file holds only the record it can read back: the next run opens it without damage
    // (before, every later run reported "text length out of bounds" and re-encoded all).
    let file_len = std::fs::metadata(&path).unwrap().len();
    assert_eq!(file_len, record("short", 2).len() as u64);
    for _ in 0..2 {
        let again = EmbeddingCache::open(&path, 4).unwrap();
        assert_eq!(again.repair(), None);
        assert_eq!(again.len(), 1);
        assert!(again.get("short").unwrap().is_some() && !again.contains(&huge));
    }
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

#[test]
fn a_damaged_cache_heals_and_every_quarantine_is_kept() {
    use dialeval_slm_model::vectors::Repair;
    let path = temp(u64::MAX - 4);
    let dir = path.parent().unwrap().to_owned();
    let good = record("first", 2);
    let mut garbage = record("second", 1);
    garbage[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut moved = Vec::new();
    for round in 0..2_u8 {
        // The same damage at the same offset twice (a tool that keeps writing it).
        let mut bytes = good.clone();
        bytes.extend(&garbage);
        bytes.push(round);
        std::fs::write(&path, &bytes).unwrap();
        let cache = EmbeddingCache::open(&path, 4).unwrap();
        let Some(Repair::Damaged { at, moved_to, .. }) = cache.repair().cloned() else { panic!("damage not reported: {:?}", cache.repair()) };
        assert_eq!(at, good.len() as u64);
        assert_eq!(std::fs::read(&moved_to).unwrap(), bytes[good.len()..], "round {round}: the quarantine holds this round's bytes");
        moved.push(moved_to);
        // The next open finds a healthy cache.
        let healed = EmbeddingCache::open(&path, 4).unwrap();
        assert_eq!(healed.repair(), None);
        assert_eq!(healed.len(), 1);
    }
    assert_ne!(moved[0], moved[1], "an earlier quarantine is not overwritten");
    assert!(moved.iter().all(|m| m.is_file()));
    std::fs::remove_dir_all(dir).ok();
}
