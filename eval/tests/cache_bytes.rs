//! The family cache's reader on arbitrary bytes in an entry: a quarantined entry (named, moved
//! aside) or a hit, never a panic, and a valid entry beside it is never touched.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use dialeval_eval::{CacheKey, Column, Computed, FamilyCache, Lookup, Stored};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_entry_bytes_are_quarantined_or_read(bytes in proptest::collection::vec(any::<u8>(), 0..300), case in any::<u64>()) {
        let dir = std::env::temp_dir().join(format!("dialeval-eval-cache-bytes-{}-{case}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = FamilyCache::open(&dir).unwrap();
        let settings = serde_json::json!({});
        let key = CacheKey::new("f", "f/1", &settings, "items").unwrap();
        let other = CacheKey::new("f", "f/1", &settings, "other").unwrap();
        cache.store(&Computed { family: "f", version: "f/1", settings: &settings }, &other, &Stored { columns: &[Column::new("m", vec![Some(1.0)])], notes: &[] }).unwrap();
        std::fs::create_dir_all(cache.path("f", &key).parent().unwrap()).unwrap();
        std::fs::write(cache.path("f", &key), &bytes).unwrap();
        match cache.load("f", &key, 1).unwrap() {
            Lookup::Damaged { quarantined, problem, .. } => {
                prop_assert!(quarantined.is_file() && !problem.is_empty());
                prop_assert_eq!(cache.load("f", &key, 1).unwrap(), Lookup::Miss);
            }
            Lookup::Hit(_) => {}
            Lookup::Miss => prop_assert!(false, "an existing file is never a plain miss"),
        }
        prop_assert!(matches!(cache.load("f", &other, 1).unwrap(), Lookup::Hit(_)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
