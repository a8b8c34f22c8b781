//! The embedding memo stays within its bound, keeps the most recently used texts, encodes each
//! text once while it is kept, and an embedding family over more items than one chunk gives the
//! same scores as one over a memo large enough for the whole corpus.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dialeval_common::{EmbedError, TokenEmbedder, TokenEmbeddings};
use dialeval_eval::families::embedding::CHUNK_ITEMS;
use dialeval_eval::families::{EmbeddingFamily, MemoEmbedder};
use dialeval_eval::{FamilyOutput, MetricFamily};

mod common;
use common::{WordHash, item};

/// WordHash, counting the texts it encodes.
struct Counting(Arc<AtomicUsize>);

impl TokenEmbedder for Counting {
    fn dim(&self) -> usize {
        WordHash.dim()
    }

    fn embed_tokens(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>, EmbedError> {
        self.0.fetch_add(texts.len(), Ordering::Relaxed);
        WordHash.embed_tokens(texts)
    }
}

fn counting(capacity: usize) -> (MemoEmbedder<Counting>, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    (MemoEmbedder::new(Counting(Arc::clone(&count)), "counting").with_capacity(capacity), count)
}

#[test]
fn the_memo_is_bounded_and_keeps_recent_texts() {
    let (memo, count) = counting(4);
    for k in 0..10 {
        memo.get(&[format!("text number {k}").as_str(), "kept"]).unwrap();
    }
    assert!(memo.len() <= 5, "{} texts kept for a capacity of 4 (trimmed when a quarter over)", memo.len());
    assert_eq!(count.load(Ordering::Relaxed), 11, "ten texts and \"kept\" once: used with every request, never evicted");
    memo.get(&["kept", "text number 9"]).unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 11, "the most recent texts are still there");
    memo.get(&["text number 0"]).unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 12, "the oldest was forgotten and is encoded again");
    assert_eq!(*memo.get(&["text number 0"]).unwrap()[0], WordHash.embed_tokens(&["text number 0"]).unwrap()[0]);
}

#[test]
fn texts_are_encoded_once_while_kept() {
    let (memo, count) = counting(100);
    let got = memo.get(&["a b", "c d", "a b"]).unwrap();
    assert_eq!(got.len(), 3);
    assert!(Arc::ptr_eq(&got[0], &got[2]));
    memo.get(&["a b", "e f"]).unwrap();
    assert_eq!(count.load(Ordering::Relaxed), 3, "three distinct texts");
}

#[test]
fn chunked_scores_equal_whole_corpus_scores() {
    let n = CHUNK_ITEMS + 37;
    let items: Vec<_> = (0..n).map(|k| item(&format!("i{k}"), "how was it", &format!("it was fine {}", k % 97), &format!("quite good {}", k % 13))).collect();
    let scores = |memo: MemoEmbedder<WordHash>| match EmbeddingFamily::new(Arc::new(memo)).compute(&items, &|_, _| {}).unwrap() {
        FamilyOutput::Scored(s) => s.columns,
        other => panic!("{other:?}"),
    };
    let small = scores(MemoEmbedder::new(WordHash, "w").with_capacity(8));
    let large = scores(MemoEmbedder::new(WordHash, "w").with_capacity(10 * n));
    assert_eq!(small, large);
    assert!(small.iter().all(|c| c.values.iter().all(Option::is_some)));
}
