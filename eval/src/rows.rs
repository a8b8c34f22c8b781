//! What the report keeps of each item once it is scored: its id, system, response and length.
//! A corpus read as a stream is dropped chunk by chunk; these rows stay.

use dialeval_datasets::DialogueItem;
use serde::{Deserialize, Serialize};

/// One entry per item, in corpus order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ItemRows {
    /// Item ids.
    pub ids: Vec<String>,
    /// The system of each item, where named.
    pub systems: Vec<Option<String>>,
    /// The response text (`None` for a dialogue-level item, distinct from `""`).
    pub responses: Vec<Option<String>>,
    /// The response's length in words ([`dialeval_common::word_count`]).
    pub lengths: Vec<Option<f64>>,
}

impl ItemRows {
    /// The rows of `items`.
    pub fn of(items: &[DialogueItem]) -> Self {
        let mut rows = Self::default();
        rows.add(items);
        rows
    }

    /// Adds the rows of `items` (after those added before).
    pub fn add(&mut self, items: &[DialogueItem]) {
        for i in items {
            self.push(i.id.clone(), i.system.clone(), i.response.as_ref().map(|r| r.text.clone()));
        }
    }

    /// Adds the row of an item with id `id`, system `system` and response text `response`
    /// (a shard's rows, put back in corpus order by the merge).
    pub fn push(&mut self, id: String, system: Option<String>, response: Option<String>) {
        self.lengths.push(response.as_deref().map(|r| dialeval_common::word_count(r) as f64));
        self.ids.push(id);
        self.systems.push(system);
        self.responses.push(response);
    }

    /// Items.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}
