//! Items for the integration tests.

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
