//! From training pairs to tensors: a word-level tokenizer trained on the training text, the
//! Graph-Transformer input of each turn's AMR (amr-graph's concept sequence and relation-path
//! matrix), and padded batches.
//!
//! Context graphs of several turns are merged block-diagonally: nodes of different turns are
//! joined by the `<unreachable>` path label. A turn without AMR contributes one `<none>` node, so
//! text-only data runs through the same code.

use std::collections::HashMap;
use std::path::Path;

use burn::prelude::*;
use dialeval_amr_graph::AmrGraph;
use dialeval_amr_graph::paths::{GraphInput, PathConfig, UNREACHABLE, Vocab};
use dialeval_datasets::pairs::TrainingPair;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{GraphBatch, SlmBatch};

/// Special token ids of [`WordTokenizer`].
pub const PAD: u32 = 0;
/// Unknown word.
pub const UNK: u32 = 1;
/// Start of the input.
pub const CLS: u32 = 2;
/// Separator after the context and after the response.
pub const SEP: u32 = 3;

/// A lowercasing word-and-punctuation tokenizer with a vocabulary from the training text,
/// serialised as its token list (the index is rebuilt on load).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<String>", into = "Vec<String>")]
pub struct WordTokenizer {
    tokens: Vec<String>,
    index: HashMap<String, u32>,
}

impl From<Vec<String>> for WordTokenizer {
    fn from(tokens: Vec<String>) -> Self {
        Self::from_tokens(tokens)
    }
}

impl From<WordTokenizer> for Vec<String> {
    fn from(t: WordTokenizer) -> Self {
        t.tokens
    }
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '\'' {
            current.push(c);
        } else {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_round_trips_through_json() {
        let t = WordTokenizer::train(["Hi there, how are you?", "hi, fine"], 1, 100);
        let back: WordTokenizer = serde_json::from_str(&serde_json::to_string(&t).unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.encode("hi there"), t.encode("hi there"));
        assert!(t.encode("hi there").iter().all(|&id| id != UNK));
        assert_eq!(t.encode("zebra"), [UNK]);
    }
}

impl WordTokenizer {
    /// Keeps words seen at least `min_count` times, most frequent first (ties alphabetical),
    /// at most `max_size` in all.
    pub fn train<'a>(texts: impl IntoIterator<Item = &'a str>, min_count: usize, max_size: usize) -> Self {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for t in texts {
            for w in words(t) {
                *counts.entry(w).or_default() += 1;
            }
        }
        let mut frequent: Vec<(String, usize)> = counts.into_iter().filter(|(_, c)| *c >= min_count).collect();
        frequent.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut tokens: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"].iter().map(|s| (*s).to_owned()).collect();
        tokens.extend(frequent.into_iter().map(|(w, _)| w).take(max_size.saturating_sub(4)));
        Self::from_tokens(tokens)
    }

    /// The token list, specials first.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    fn from_tokens(tokens: Vec<String>) -> Self {
        let index = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        Self { tokens, index }
    }

    /// Vocabulary size.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether only the special tokens exist.
    pub fn is_empty(&self) -> bool {
        self.tokens.len() <= 4
    }

    /// Token ids of `text`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        words(text).map(|w| self.index.get(&w).copied().unwrap_or(UNK)).collect()
    }

    /// Writes the vocabulary as JSON.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn save(&self, path: &Path) -> Result<()> {
        std::fs::write(path, serde_json::to_string(self).unwrap_or_default()).map_err(|e| Error::io(path, e))
    }

    /// Reads a vocabulary written by [`WordTokenizer::save`].
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Format`].
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        serde_json::from_str(&text).map_err(|e| Error::Format(format!("{}: {e}", path.display())))
    }
}

/// One featurised pair, before padding.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// `[CLS] context [SEP] response [SEP]`, truncated from the left of the context.
    pub tokens: Vec<u32>,
    /// 0 for `[CLS]` and context, 1 for the response.
    pub segments: Vec<u32>,
    /// Context graph: concept ids and flattened `nodes × nodes × path_len` label ids.
    pub context: (Vec<u32>, Vec<u32>),
    /// Response graph, same layout.
    pub response: (Vec<u32>, Vec<u32>),
    /// 1 or 0.
    pub label: u8,
}

/// Turns pairs into examples with fixed limits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Featurizer {
    /// The tokenizer.
    pub tokenizer: WordTokenizer,
    /// Concept vocabulary (amr-graph's).
    pub concepts: Vocab,
    /// Path-label vocabulary (amr-graph's).
    pub labels: Vocab,
    /// Longest token sequence.
    pub max_len: usize,
    /// Most nodes per graph (extra nodes are cut).
    pub max_nodes: usize,
    /// Labels per relation path.
    pub max_path: usize,
}

/// The Graph-Transformer input of a PENMAN string, or `None` when it does not parse.
pub fn graph_input(penman: &str, max_path: usize) -> Option<GraphInput> {
    let g = AmrGraph::decode(penman).ok()?;
    GraphInput::new(&g, &PathConfig { max_path_len: max_path, eos: false }).ok()
}

impl Featurizer {
    /// Builds the tokenizer and vocabularies from training pairs.
    pub fn fit(pairs: &[TrainingPair], max_len: usize, max_nodes: usize, max_path: usize) -> Self {
        let texts = pairs.iter().flat_map(|p| p.context.iter().map(String::as_str).chain(std::iter::once(p.response.as_str())));
        let tokenizer = WordTokenizer::train(texts, 2, 20_000);
        let graphs: Vec<GraphInput> = pairs
            .iter()
            .flat_map(|p| p.context_amr.iter().flatten().chain(p.response_amr.iter()))
            .filter_map(|g| graph_input(g, max_path))
            .collect();
        Self { tokenizer, concepts: Vocab::concepts(&graphs, 1), labels: Vocab::path_labels(&graphs, 1), max_len, max_nodes, max_path }
    }

    fn graph(&self, graphs: &[Option<&str>]) -> (Vec<u32>, Vec<u32>) {
        let inputs: Vec<Option<GraphInput>> = graphs.iter().map(|g| g.and_then(|p| graph_input(p, self.max_path))).collect();
        let mut concepts: Vec<u32> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        let mut local: Vec<usize> = Vec::new();
        for (k, input) in inputs.iter().enumerate() {
            match input {
                Some(g) => {
                    for (i, c) in g.concepts.iter().enumerate() {
                        concepts.push(self.concepts.id(c));
                        owner.push(k);
                        local.push(i);
                    }
                }
                None => {
                    concepts.push(Vocab::UNK);
                    owner.push(k);
                    local.push(usize::MAX);
                }
            }
        }
        // Keep the last nodes: the most recent turns matter most.
        let start = concepts.len().saturating_sub(self.max_nodes);
        let n = concepts.len() - start;
        let unreachable = self.labels.id(UNREACHABLE);
        let mut paths = vec![0_u32; n * n * self.max_path];
        for a in 0..n {
            for b in 0..n {
                let (ia, ib) = (start + a, start + b);
                let cell = &mut paths[(a * n + b) * self.max_path..(a * n + b + 1) * self.max_path];
                match (&inputs[owner[ia]], owner[ia] == owner[ib]) {
                    (Some(g), true) if local[ia] != usize::MAX => {
                        for (k, label) in g.path(local[ia], local[ib]).unwrap_or_default().iter().take(self.max_path).enumerate() {
                            cell[k] = self.labels.id(label);
                        }
                    }
                    _ if ia == ib => cell[0] = self.labels.id(dialeval_amr_graph::paths::SELF),
                    _ => cell[0] = unreachable,
                }
            }
        }
        (concepts[start..].to_vec(), paths)
    }

    /// Featurises one pair.
    pub fn example(&self, pair: &TrainingPair) -> Example {
        let context: Vec<u32> = pair.context.iter().enumerate().flat_map(|(k, t)| {
            let mut ids = self.tokenizer.encode(t);
            if k + 1 < pair.context.len() {
                ids.push(SEP);
            }
            ids
        }).collect();
        let response = self.tokenizer.encode(&pair.response);
        let budget = self.max_len.saturating_sub(3);
        let response: Vec<u32> = response.into_iter().take(budget / 2).collect();
        let keep = budget - response.len();
        let context = &context[context.len().saturating_sub(keep)..];
        let mut tokens = vec![CLS];
        tokens.extend_from_slice(context);
        tokens.push(SEP);
        let mut segments = vec![0; tokens.len()];
        tokens.extend(&response);
        tokens.push(SEP);
        segments.resize(tokens.len(), 1);
        let context_graphs: Vec<Option<&str>> = if pair.context_amr.is_empty() { vec![None] } else { pair.context_amr.iter().map(Option::as_deref).collect() };
        Example {
            tokens,
            segments,
            context: self.graph(&context_graphs),
            response: self.graph(&[pair.response_amr.as_deref()]),
            label: pair.label(),
        }
    }

    /// Pads examples into a batch on `device`.
    pub fn collate(&self, examples: &[&Example], device: &Device) -> SlmBatch {
        let batch = examples.len();
        let seq = examples.iter().map(|e| e.tokens.len()).max().unwrap_or(1).max(1);
        let mut tokens = vec![PAD as i64; batch * seq];
        let mut segments = vec![0_i64; batch * seq];
        let mut pad = vec![true; batch * seq];
        for (b, e) in examples.iter().enumerate() {
            for (i, (&t, &s)) in e.tokens.iter().zip(&e.segments).enumerate() {
                tokens[b * seq + i] = i64::from(t);
                segments[b * seq + i] = i64::from(s);
                pad[b * seq + i] = false;
            }
        }
        let graph = |pick: fn(&Example) -> &(Vec<u32>, Vec<u32>)| -> GraphBatch {
            let nodes = examples.iter().map(|e| pick(e).0.len()).max().unwrap_or(1).max(1);
            let p = self.max_path;
            let mut concepts = vec![0_i64; batch * nodes];
            let mut paths = vec![0_i64; batch * nodes * nodes * p];
            let mut gpad = vec![true; batch * nodes];
            for (b, e) in examples.iter().enumerate() {
                let (c, pth) = pick(e);
                let n = c.len();
                for i in 0..n {
                    concepts[b * nodes + i] = i64::from(c[i]);
                    gpad[b * nodes + i] = false;
                    for j in 0..n {
                        for k in 0..p {
                            paths[((b * nodes + i) * nodes + j) * p + k] = i64::from(pth[(i * n + j) * p + k]);
                        }
                    }
                }
            }
            GraphBatch {
                concepts: Tensor::<2, Int>::from_data(TensorData::new(concepts, [batch, nodes]), device),
                paths: Tensor::<4, Int>::from_data(TensorData::new(paths, [batch, nodes, nodes, p]), device),
                pad: Tensor::<2, Bool>::from_data(TensorData::new(gpad, [batch, nodes]), device),
            }
        };
        SlmBatch {
            tokens: Tensor::<2, Int>::from_data(TensorData::new(tokens, [batch, seq]), device),
            segments: Tensor::<2, Int>::from_data(TensorData::new(segments, [batch, seq]), device),
            pad: Tensor::<2, Bool>::from_data(TensorData::new(pad, [batch, seq]), device),
            context_graph: graph(|e| &e.context),
            response_graph: graph(|e| &e.response),
            labels: Tensor::<1, Int>::from_data(TensorData::new(examples.iter().map(|e| i64::from(e.label)).collect::<Vec<_>>(), [batch]), device),
        }
    }
}
