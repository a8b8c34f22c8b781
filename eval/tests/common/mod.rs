//! Items and a deterministic token embedder for the integration tests.
#![allow(dead_code)] // each test binary uses a part

use dialeval_common::{EmbedError, TokenEmbedder, TokenEmbeddings};
use dialeval_datasets::{Corpus, DialogueItem, Turn};

/// An unrated item with one context turn, a response and one reference.
pub fn item(id: &str, context: &str, response: &str, reference: &str) -> DialogueItem {
    DialogueItem {
        id: id.to_owned(),
        corpus: Corpus::Jsonl,
        context: vec![Turn::new(context)],
        response: Some(Turn::new(response)),
        references: vec![reference.to_owned()],
        knowledge: None,
        system: None,
        annotators: Vec::new(),
        ratings: Vec::new(),
    }
}

/// Each word becomes a fixed pseudo-random vector (FNV-1a of the word seeds it): a deterministic
/// token embedder whose metric values differ between references.
pub struct WordHash;

impl TokenEmbedder for WordHash {
    fn dim(&self) -> usize {
        6
    }

    fn embed_tokens(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>, EmbedError> {
        let vector = |w: &str| {
            let mut h = w.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
            (0..6)
                .map(|_| {
                    h = h.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    ((h >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0 + 0.01
                })
                .collect::<Vec<f32>>()
        };
        Ok(texts.iter().map(|t| TokenEmbeddings { tokens: t.split_whitespace().map(str::to_owned).collect(), vectors: t.split_whitespace().map(vector).collect() }).collect())
    }
}
