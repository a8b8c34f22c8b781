//! The featuriser: from training pairs to tensors — word pieces of the scratch text side
//! ([`crate::wordpiece`]), sentence vectors or token states of the pretrained one
//! ([`crate::sentence_vectors`], read for the texts of [`crate::texts`]), the Graph-Transformer
//! input of each turn's AMR (amr-graph's concept sequence and relation-path matrix), and padded
//! batches.
//!
//! Context graphs of several turns are merged block-diagonally: nodes of different turns are
//! joined by the `<unreachable>` path label. A turn without AMR contributes one `<none>` node, so
//! text-only data runs through the same code.

use burn::prelude::*;
use dialeval_amr_graph::AmrGraph;
use dialeval_amr_graph::paths::{GraphInput, PathConfig, UNREACHABLE, Vocab};
use dialeval_datasets::amr::GraphPresence;
use dialeval_datasets::pairs::TrainingPair;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{CrossBatch, GraphBatch, KnowledgeBatch, SlmBatch, TextEncoderKind, pair_features};
use crate::sentence_vectors::{SentenceVectors, turn_features};
use crate::texts::{KnowledgeUnit, VectorInputs, context_text, knowledge_sentences, knowledge_text, turn_texts};
use crate::wordpiece::{CLS, PAD, SEP, WordPieceTokenizer};

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
    /// `[c; r; c ⊙ r; |c − r|]` of the pretrained sentence vectors, followed with the turn
    /// channel by [`turn_features`] (empty for the scratch text encoder).
    pub text_features: Vec<f32>,
    /// The sentence vector of the pair's knowledge or persona, for a featuriser with the
    /// knowledge channel (`None`: the pair has none, or the featuriser does not read it).
    pub knowledge: Option<Vec<f32>>,
    /// The texts whose token states the cross-encoder reads (`None` for the other text sides).
    pub cross: Option<CrossTexts>,
    /// Whether the pair has the AMR of its response or of a context turn.
    pub has_graph: bool,
}

/// The texts of one pair as the cross-encoder reads them; their token states are looked up
/// when a batch is built, so a corpus's states never sit in memory all at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrossTexts {
    /// The context ([`context_text`]).
    pub context: String,
    /// The response.
    pub response: String,
    /// The knowledge as the featuriser's [`KnowledgeUnit`] reads it (the whole text or the
    /// sentence nearest the response), when the featuriser reads knowledge and the pair has it.
    pub knowledge: Option<String>,
}

/// How many token states of each text the cross-encoder reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrossSpans {
    /// The context's last ones (the turns nearest the response).
    pub context: usize,
    /// The response's first ones.
    pub response: usize,
    /// The knowledge's first ones.
    pub knowledge: usize,
}

impl Default for CrossSpans {
    fn default() -> Self {
        Self { context: 48, response: 24, knowledge: 24 }
    }
}

/// Which examples of a batch [`Featurizer::collate_withholding`] gives the "absent" input
/// instead of their own graph or knowledge; examples beyond a slice's length keep theirs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Withheld<'a> {
    /// Flags: the example's graphs are withheld.
    pub graphs: &'a [bool],
    /// Flags: the example's knowledge is withheld.
    pub knowledge: &'a [bool],
}

/// Turns pairs into examples with fixed limits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Featurizer {
    /// The tokenizer.
    pub tokenizer: WordPieceTokenizer,
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
    /// The encoder whose sentence vectors the pretrained text head reads, and their width;
    /// `None` for the scratch text encoder (see [`Featurizer::text_encoder`]).
    #[serde(default)]
    pub encoder: Option<(String, usize)>,
    /// Whether the pretrained head reads the pairs' knowledge (its sentence vector); models
    /// saved before the channel existed read none.
    #[serde(default)]
    pub knowledge: bool,
    /// What of the knowledge the channel reads; models saved before the choice existed read
    /// the whole text.
    #[serde(default)]
    pub knowledge_unit: KnowledgeUnit,
    /// The token spans of the cross-encoded text side (`None`: the other text sides).
    #[serde(default)]
    pub cross: Option<CrossSpans>,
    /// The turn channel: the pretrained head also reads the last turn apart from the joined
    /// context, and the zero-shot cosines of the response with the last turn and with the last
    /// two ([`turn_features`]); models saved before it existed read the joined context only.
    #[serde(default)]
    pub turns: bool,
    /// Graphs are read only where a pair has all of them (the response's and every context
    /// turn's, [`GraphPresence::Complete`]); a pair with some reads none. Models saved before the
    /// rule read whatever graphs there were.
    #[serde(default)]
    pub complete_graphs: bool,
}

/// The position and vector of the one of `candidates` with the highest dot product with
/// `target` (the first of equals); `None` when there are none.
fn nearest(candidates: Vec<Vec<f32>>, target: &[f32]) -> Option<(usize, Vec<f32>)> {
    let dot = |v: &[f32]| v.iter().zip(target).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum::<f64>();
    let mut best: Option<(f64, usize, Vec<f32>)> = None;
    for (i, c) in candidates.into_iter().enumerate() {
        let d = dot(&c);
        if best.as_ref().is_none_or(|(b, _, _)| d > *b) {
            best = Some((d, i, c));
        }
    }
    best.map(|(_, i, v)| (i, v))
}

/// The Graph-Transformer input of a PENMAN string, or `None` when it does not parse.
pub fn graph_input(penman: &str, max_path: usize) -> Option<GraphInput> {
    graph_input_last(penman, max_path, None)
}

/// As [`graph_input`], with only the last `keep_last` nodes (see `PathConfig::keep_last`).
fn graph_input_last(penman: &str, max_path: usize, keep_last: Option<usize>) -> Option<GraphInput> {
    let g = AmrGraph::decode(penman).ok()?;
    GraphInput::new(&g, &PathConfig { max_path_len: max_path, eos: false, keep_last }).ok()
}

impl Featurizer {
    /// Builds the tokenizer (WordPiece, at most 8,000 pieces seen twice) and vocabularies from
    /// training pairs.
    ///
    /// # Errors
    /// [`Error::Config`] when the tokenizer cannot be trained.
    pub fn fit(pairs: &[TrainingPair], max_len: usize, max_nodes: usize, max_path: usize) -> Result<Self> {
        let texts = pairs.iter().flat_map(|p| p.context.iter().map(String::as_str).chain(std::iter::once(p.response.as_str())));
        let tokenizer = WordPieceTokenizer::train(texts, 8_000, 2)?;
        let graphs: Vec<GraphInput> = pairs.iter().flat_map(|p| p.context_amr.iter().flatten().chain(p.response_amr.iter())).filter_map(|g| graph_input(g, max_path)).collect();
        Ok(Self {
            tokenizer,
            concepts: Vocab::concepts(&graphs, 1),
            labels: Vocab::path_labels(&graphs, 1),
            max_len,
            max_nodes,
            max_path,
            encoder: None,
            knowledge: false,
            knowledge_unit: KnowledgeUnit::Whole,
            cross: None,
            turns: false,
            complete_graphs: false,
        })
    }

    /// Where the sentence representation comes from: the pretrained head when an encoder is
    /// recorded, else the scratch Transformer.
    pub fn text_encoder(&self) -> TextEncoderKind {
        match (&self.encoder, &self.cross) {
            (Some(_), Some(_)) => TextEncoderKind::Cross,
            (Some(_), None) => TextEncoderKind::Pretrained,
            (None, _) => TextEncoderKind::Scratch,
        }
    }

    /// Switches the featuriser to the cross-encoder over `vectors`' token states.
    pub fn with_cross(mut self, vectors: &dyn SentenceVectors, spans: CrossSpans) -> Self {
        self.encoder = Some((vectors.encoder_id().to_owned(), vectors.dim()));
        self.cross = Some(spans);
        self
    }

    /// Switches the featuriser to the pretrained head over `vectors`' encoder.
    pub fn with_pretrained(mut self, vectors: &dyn SentenceVectors) -> Self {
        self.encoder = Some((vectors.encoder_id().to_owned(), vectors.dim()));
        self
    }

    /// Switches on the knowledge channel (the pretrained head's knowledge vector; with the
    /// cross-encoder also the knowledge's token states).
    ///
    /// # Errors
    /// [`Error::Config`] for the scratch text encoder, which has no knowledge channel.
    pub fn with_knowledge(mut self) -> Result<Self> {
        if self.encoder.is_none() {
            return Err(Error::Config("the knowledge channel reads the pretrained encoder's vectors (--text-encoder pretrained or cross)".into()));
        }
        self.knowledge = true;
        Ok(self)
    }

    /// Switches on the turn channel ([`Featurizer::turns`]).
    ///
    /// # Errors
    /// [`Error::Config`] for the scratch text encoder, which reads no sentence vectors.
    pub fn with_turns(mut self) -> Result<Self> {
        if self.encoder.is_none() {
            return Err(Error::Config("the turn channel reads the pretrained encoder's vectors (--text-encoder pretrained or cross)".into()));
        }
        self.turns = true;
        Ok(self)
    }

    /// Reads graphs only where a pair has all of them ([`Featurizer::complete_graphs`]).
    pub fn with_complete_graphs(mut self) -> Self {
        self.complete_graphs = true;
        self
    }

    /// What of a pair this featuriser reads through sentence vectors (`None`: the scratch text
    /// encoder reads none).
    pub fn vector_inputs(&self) -> Option<VectorInputs> {
        self.encoder.as_ref().map(|_| VectorInputs { knowledge: self.knowledge.then_some(self.knowledge_unit), turns: self.turns })
    }

    /// Sets what of the knowledge the channel reads.
    pub fn with_knowledge_unit(mut self, unit: KnowledgeUnit) -> Self {
        self.knowledge_unit = unit;
        self
    }

    /// Checks that `vectors` come from the encoder this featuriser was fitted with (always true
    /// for the scratch text encoder, which needs none).
    ///
    /// # Errors
    /// [`Error::EncoderMismatch`] for another encoder; [`Error::Config`] when the pretrained
    /// head has no vectors.
    pub fn check_vectors(&self, vectors: Option<&dyn SentenceVectors>) -> Result<()> {
        match (&self.encoder, vectors) {
            (None, _) => Ok(()),
            (Some(_), None) => Err(Error::Config("this model reads pretrained sentence vectors; give it the encoder it was trained with".into())),
            (Some(_), Some(v)) => self.check_encoder(v.encoder_id(), v.dim()),
        }
    }

    /// Checks that the encoder `id` of width `dim` is the one this featuriser was fitted with
    /// (always true for the scratch text encoder): a caller can ask before encoding anything.
    ///
    /// # Errors
    /// [`Error::EncoderMismatch`] naming both encoders.
    pub fn check_encoder(&self, id: &str, dim: usize) -> Result<()> {
        match &self.encoder {
            Some((trained, trained_dim)) if trained != id || *trained_dim != dim => {
                Err(Error::EncoderMismatch { expected: format!("{trained} ({trained_dim} dims)"), found: format!("{id} ({dim} dims)") })
            }
            _ => Ok(()),
        }
    }

    /// Featurises one pair, with the pretrained pair features when the featuriser uses them.
    ///
    /// # Errors
    /// As [`Featurizer::check_vectors`]; [`Error::MissingVector`] naming a text whose vector
    /// was not computed.
    pub fn example_with(&self, pair: &TrainingPair, vectors: Option<&dyn SentenceVectors>) -> Result<Example> {
        let mut example = self.example(pair);
        if self.text_encoder() != TextEncoderKind::Scratch {
            self.check_vectors(vectors)?;
            let Some(v) = vectors else { return Err(Error::Config("no sentence vectors".into())) };
            let context = context_text(pair);
            let knowledge = if self.knowledge { knowledge_text(pair) } else { None };
            let look_up = |t: &str| v.vector(t).ok_or_else(|| Error::MissingVector(t.to_owned()));
            let response = look_up(&pair.response)?;
            example.text_features = pair_features(&look_up(&context)?, &response);
            if self.turns {
                let turns = turn_texts(pair).into_iter().map(look_up).collect::<Result<Vec<_>>>()?;
                example.text_features.extend(turn_features(&turns, &response));
            }
            // The knowledge text read: the whole, or its sentence nearest the response; the
            // cross-encoder reads the token states of the same text.
            let read = match self.knowledge_unit {
                KnowledgeUnit::Whole => knowledge.map(|k| Ok::<_, Error>((k, look_up(k)?))).transpose()?,
                KnowledgeUnit::Sentence => {
                    let sentences = knowledge.map(knowledge_sentences).unwrap_or_default();
                    let vectors = sentences.iter().map(|s| look_up(s)).collect::<Result<Vec<_>>>()?;
                    nearest(vectors, &response).map(|(i, v)| (sentences[i], v))
                }
            };
            let read_text: Option<&str> = read.as_ref().map(|(t, _)| *t);
            example.knowledge = read.map(|(_, v)| v);
            if self.text_encoder() == TextEncoderKind::Cross {
                example.cross = Some(CrossTexts { context, response: pair.response.clone(), knowledge: read_text.map(str::to_owned) });
            }
        }
        Ok(example)
    }

    fn graph(&self, graphs: &[Option<&str>]) -> (Vec<u32>, Vec<u32>) {
        // Only the last max_nodes nodes of all graphs together are kept (below), so no graph
        // needs more than its own last max_nodes: the path matrix is cut before it is built.
        let inputs: Vec<Option<GraphInput>> = graphs.iter().map(|g| g.and_then(|p| graph_input_last(p, self.max_path, Some(self.max_nodes)))).collect();
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

    /// Featurises one pair without the pretrained pair features (what the scratch text encoder
    /// reads; a pretrained featuriser needs [`Featurizer::example_with`]).
    pub fn example(&self, pair: &TrainingPair) -> Example {
        let context: Vec<u32> = pair
            .context
            .iter()
            .enumerate()
            .flat_map(|(k, t)| {
                let mut ids = self.tokenizer.encode(t);
                if k + 1 < pair.context.len() {
                    ids.push(SEP);
                }
                ids
            })
            .collect();
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
        // Under the complete-graph rule a pair with some of its graphs reads none.
        let usable = !self.complete_graphs || matches!(GraphPresence::of(pair), GraphPresence::Complete | GraphPresence::None);
        let context_graphs: Vec<Option<&str>> = if pair.context_amr.is_empty() || !usable { vec![None] } else { pair.context_amr.iter().map(Option::as_deref).collect() };
        let response_graph = pair.response_amr.as_deref().filter(|_| usable);
        Example {
            tokens,
            segments,
            context: self.graph(&context_graphs),
            response: self.graph(&[response_graph]),
            label: pair.label(),
            text_features: Vec::new(),
            knowledge: None,
            cross: None,
            has_graph: usable && (pair.response_amr.is_some() || pair.context_amr.iter().any(Option::is_some)),
        }
    }

    /// Pads examples into a batch on `device` (the cross-encoder's token states are read from
    /// `vectors`).
    ///
    /// # Errors
    /// [`Error::MissingVector`] naming a text whose token states the cross-encoder needs and
    /// `vectors` lacks.
    pub fn collate(&self, examples: &[&Example], vectors: Option<&dyn SentenceVectors>, device: &Device) -> Result<SlmBatch> {
        self.collate_withholding(examples, Withheld::default(), vectors, device)
    }

    /// Pads examples into a batch, with the graphs and the knowledge of the examples flagged in
    /// `withheld` replaced by the "no graph" input (one `<none>` node, as for a pair without
    /// AMR) and the "no knowledge" input: how the gated model learns to score items with
    /// partial or no AMR, and the knowledge channel items without knowledge.
    ///
    /// # Errors
    /// As [`Featurizer::collate`].
    pub fn collate_withholding(&self, examples: &[&Example], withheld: Withheld, vectors: Option<&dyn SentenceVectors>, device: &Device) -> Result<SlmBatch> {
        let Withheld { graphs: withheld, knowledge: knowledge_withheld } = withheld;
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
        let none = self.graph(&[None]);
        let graph = |pick: fn(&Example) -> &(Vec<u32>, Vec<u32>)| -> GraphBatch {
            let chosen: Vec<&(Vec<u32>, Vec<u32>)> = examples.iter().enumerate().map(|(b, e)| if withheld.get(b).copied().unwrap_or(false) { &none } else { pick(e) }).collect();
            let nodes = chosen.iter().map(|g| g.0.len()).max().unwrap_or(1).max(1);
            let p = self.max_path;
            let mut concepts = vec![0_i64; batch * nodes];
            let mut paths = vec![0_i64; batch * nodes * nodes * p];
            let mut gpad = vec![true; batch * nodes];
            for (b, (c, pth)) in chosen.iter().enumerate() {
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
        let width = examples.first().map_or(0, |e| e.text_features.len());
        let text_features = (width > 0 && examples.iter().all(|e| e.text_features.len() == width)).then(|| {
            let flat: Vec<f32> = examples.iter().flat_map(|e| e.text_features.iter().copied()).collect();
            Tensor::<2>::from_data(TensorData::new(flat, [batch, width]), device)
        });
        let knowledge = (self.knowledge && text_features.is_some()).then(|| {
            // The encoder's width (the features are wider: 4 × dim, and more with the turn channel).
            let dim = self.encoder.as_ref().map_or(width / 4, |(_, d)| *d);
            let mut vectors = vec![0.0_f32; batch * dim];
            let mut present = vec![0.0_f32; batch];
            for (b, e) in examples.iter().enumerate() {
                if let Some(k) = e.knowledge.as_ref().filter(|k| k.len() == dim && !knowledge_withheld.get(b).copied().unwrap_or(false)) {
                    vectors[b * dim..(b + 1) * dim].copy_from_slice(k);
                    present[b] = 1.0;
                }
            }
            KnowledgeBatch { vectors: Tensor::<2>::from_data(TensorData::new(vectors, [batch, dim]), device), present: Tensor::<2>::from_data(TensorData::new(present, [batch, 1]), device) }
        });
        let cross = match (self.cross, examples.iter().all(|e| e.cross.is_some())) {
            (Some(spans), true) if !examples.is_empty() => Some(self.cross_batch(examples, spans, knowledge_withheld, vectors, device)?),
            _ => None,
        };
        Ok(SlmBatch {
            text_features,
            knowledge,
            cross,
            tokens: Tensor::<2, Int>::from_data(TensorData::new(tokens, [batch, seq]), device),
            segments: Tensor::<2, Int>::from_data(TensorData::new(segments, [batch, seq]), device),
            pad: Tensor::<2, Bool>::from_data(TensorData::new(pad, [batch, seq]), device),
            context_graph: graph(|e| &e.context),
            response_graph: graph(|e| &e.response),
            graph_present: Tensor::<2>::from_data(
                TensorData::new(examples.iter().enumerate().map(|(b, e)| if e.has_graph && !withheld.get(b).copied().unwrap_or(false) { 1.0_f32 } else { 0.0 }).collect::<Vec<_>>(), [batch, 1]),
                device,
            ),
            labels: Tensor::<1, Int>::from_data(TensorData::new(examples.iter().map(|e| i64::from(e.label)).collect::<Vec<_>>(), [batch]), device),
        })
    }

    /// The joint sequences of the cross-encoder: `[CLS]`, the context's last token states, the
    /// response's first, then (with the knowledge channel) the knowledge's first or the one
    /// "no knowledge" slot.
    fn cross_batch(&self, examples: &[&Example], spans: CrossSpans, knowledge_withheld: &[bool], vectors: Option<&dyn SentenceVectors>, device: &Device) -> Result<CrossBatch> {
        use crate::model::segment;
        let Some(v) = vectors else { return Err(Error::Config("the cross-encoder reads token states; give it the encoder it was trained with".into())) };
        let dim = v.dim();
        let states_of = |t: &str| -> Result<Vec<half::f16>> {
            let states = v.token_states(t).ok_or_else(|| Error::MissingVector(t.to_owned()))?;
            if states.is_empty() || !states.len().is_multiple_of(dim) {
                return Err(Error::Format(format!("{t:?}: {} token-state values, not a whole number of {dim}-wide tokens", states.len())));
            }
            Ok(states)
        };
        // Per example: (states, segment) runs in order.
        let mut rows: Vec<Vec<(Vec<half::f16>, i64)>> = Vec::with_capacity(examples.len());
        for (b, e) in examples.iter().enumerate() {
            let Some(texts) = &e.cross else { return Err(Error::Config("an example without cross-encoder texts".into())) };
            let context = states_of(&texts.context)?;
            let tokens = context.len() / dim;
            let context = context[tokens.saturating_sub(spans.context.max(1)) * dim..].to_vec();
            let response = states_of(&texts.response)?;
            let response = response[..(response.len() / dim).min(spans.response.max(1)) * dim].to_vec();
            let mut row = vec![(vec![half::f16::ZERO; dim], segment::CLS), (context, segment::CONTEXT), (response, segment::RESPONSE)];
            if self.knowledge {
                match texts.knowledge.as_deref().filter(|_| !knowledge_withheld.get(b).copied().unwrap_or(false)) {
                    Some(k) => {
                        let k = states_of(k)?;
                        row.push((k[..(k.len() / dim).min(spans.knowledge.max(1)) * dim].to_vec(), segment::KNOWLEDGE));
                    }
                    None => row.push((vec![half::f16::ZERO; dim], segment::NO_KNOWLEDGE)),
                }
            }
            rows.push(row);
        }
        let lengths: Vec<usize> = rows.iter().map(|r| r.iter().map(|(s, _)| s.len() / dim).sum()).collect();
        let (batch, seq) = (rows.len(), lengths.iter().copied().max().unwrap_or(1).max(1));
        let mut states = vec![0.0_f32; batch * seq * dim];
        let mut segments = vec![0_i64; batch * seq];
        let mut pad = vec![true; batch * seq];
        for (b, row) in rows.iter().enumerate() {
            let mut at = b * seq;
            for (values, seg) in row {
                for (k, v) in values.iter().enumerate() {
                    states[at * dim + k] = v.to_f32();
                }
                let n = values.len() / dim;
                segments[at..at + n].fill(*seg);
                pad[at..at + n].fill(false);
                at += n;
            }
        }
        Ok(CrossBatch {
            states: Tensor::<3>::from_data(TensorData::new(states, [batch, seq, dim]), device),
            segments: Tensor::<2, Int>::from_data(TensorData::new(segments, [batch, seq]), device),
            pad: Tensor::<2, Bool>::from_data(TensorData::new(pad, [batch, seq]), device),
        })
    }
}

#[cfg(test)]
mod tests {
    use dialeval_datasets::pairs::PairKind;

    use super::*;

    #[test]
    fn featurising_a_graph_at_the_size_limits_costs_the_nodes_kept() {
        use dialeval_common::amr_limits::{MAX_DEPTH, MAX_NODES};
        let pair = |response_amr: Option<String>| TrainingPair {
            id: "p".into(),
            context: vec!["what did you do".into()],
            response: "we went out".into(),
            kind: PairKind::Positive,
            context_amr: vec![Some("(d / do-02 :ARG0 (y / you))".into())],
            response_amr,
            knowledge: None,
        };
        let featurizer = Featurizer::fit(&[pair(Some("(g / go-02 :ARG0 (w / we) :direction (o / out))".into()))], 32, 48, 4).unwrap_or_else(|e| panic!("{e}"));
        let (chain, star) = (dialeval_testkit::penman_chain(MAX_DEPTH), dialeval_testkit::penman_star(MAX_NODES));
        let too_deep = format!("{}{}", "(a :ARG0 ".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
        let started = std::time::Instant::now();
        for graph in [chain, star] {
            let example = featurizer.example(&pair(Some(graph)));
            assert!(example.has_graph);
            assert_eq!(example.response.0.len(), 48, "the last max_nodes nodes are kept");
        }
        // A graph beyond the limits is read as a missing graph, at once.
        let example = featurizer.example(&pair(Some(too_deep)));
        assert_eq!(example.response.0, [Vocab::UNK]);
        assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    }

    #[test]
    fn under_the_complete_graph_rule_a_pair_with_some_graphs_reads_none() {
        let pair = |context_amr: Option<&str>, response_amr: Option<&str>| TrainingPair {
            id: "p".into(),
            context: vec!["what did you do".into()],
            response: "we went out".into(),
            kind: PairKind::Positive,
            context_amr: vec![context_amr.map(str::to_owned)],
            response_amr: response_amr.map(str::to_owned),
            knowledge: None,
        };
        let (c, r) = (Some("(d / do-02 :ARG0 (y / you))"), Some("(g / go-02 :ARG0 (w / we))"));
        let loose = Featurizer::fit(&[pair(c, r)], 32, 48, 4).unwrap_or_else(|e| panic!("{e}"));
        let strict = loose.clone().with_complete_graphs();
        let none = loose.example(&pair(None, None));
        for (context, response) in [(c, None), (None, r)] {
            let (kept, dropped) = (loose.example(&pair(context, response)), strict.example(&pair(context, response)));
            assert!(kept.has_graph && !dropped.has_graph);
            assert_eq!((&dropped.context, &dropped.response), (&none.context, &none.response));
        }
        let (kept, complete) = (loose.example(&pair(c, r)), strict.example(&pair(c, r)));
        assert!(complete.has_graph);
        assert_eq!((&complete.context, &complete.response), (&kept.context, &kept.response));
        assert_ne!(complete.response, none.response);
    }

    /// Vectors and token states of exactly the texts given: a text nobody listed has neither.
    struct Listed(std::collections::HashMap<String, Vec<f32>>);

    impl SentenceVectors for Listed {
        fn dim(&self) -> usize {
            2
        }
        fn encoder_id(&self) -> &str {
            "listed"
        }
        fn vector(&self, text: &str) -> Option<Vec<f32>> {
            self.0.get(text).cloned()
        }
        fn token_states(&self, text: &str) -> Option<Vec<half::f16>> {
            self.0.get(text).map(|v| v.iter().copied().map(half::f16::from_f32).collect())
        }
    }

    #[test]
    fn the_cross_encoder_reads_the_knowledge_sentence_the_listed_texts_hold() {
        // Each text's vector: the response and the second sentence share a direction.
        let direction = |t: &str| if t.contains("space") { vec![0.0, 1.0] } else { vec![1.0, 0.0] };
        let pair = TrainingPair {
            id: "p".into(),
            context: vec!["do you like films".into()],
            response: "i love space operas".into(),
            kind: PairKind::Positive,
            context_amr: vec![],
            response_amr: None,
            knowledge: Some("Star Wars is a franchise. It is a space opera! It began in 1977.".into()),
        };
        for unit in [KnowledgeUnit::Sentence, KnowledgeUnit::Whole] {
            let fitted = Featurizer::fit(std::slice::from_ref(&pair), 32, 48, 4).unwrap_or_else(|e| panic!("{e}"));
            let empty = Listed(std::collections::HashMap::new());
            let featurizer = fitted.with_cross(&empty, CrossSpans::default()).with_knowledge().unwrap_or_else(|e| panic!("{e}")).with_knowledge_unit(unit);
            let inputs = featurizer.vector_inputs().unwrap_or_else(|| panic!("a cross featuriser reads vectors"));
            let listed = Listed(inputs.texts_of(&[std::slice::from_ref(&pair)]).iter().map(|t| (t.to_string(), direction(t))).collect());
            let example = featurizer.example_with(&pair, Some(&listed)).unwrap_or_else(|e| panic!("{unit:?}: {e}"));
            let read = example.cross.as_ref().and_then(|c| c.knowledge.clone());
            let expected = match unit {
                KnowledgeUnit::Sentence => "It is a space opera!",
                KnowledgeUnit::Whole => "Star Wars is a franchise. It is a space opera! It began in 1977.",
            };
            assert_eq!(read.as_deref(), Some(expected), "{unit:?}");
            assert_eq!(example.knowledge, Some(direction(expected)), "{unit:?}: the pooled channel reads the same text");
            let batch = featurizer.collate(&[&example], Some(&listed), &Device::flex()).unwrap_or_else(|e| panic!("{unit:?}: {e}"));
            assert!(batch.cross.is_some() && batch.knowledge.is_some(), "{unit:?}");
        }
    }

    #[test]
    fn the_nearest_knowledge_sentence_is_the_one_of_highest_dot_product() {
        assert_eq!(nearest(vec![vec![1.0, 0.0], vec![0.6, 0.8], vec![0.0, 1.0]], &[0.0, 1.0]), Some((2, vec![0.0, 1.0])));
        assert_eq!(nearest(vec![vec![0.6, 0.8], vec![0.8, 0.6]], &[1.0, 1.0]), Some((0, vec![0.6, 0.8])), "the first of equals");
        assert_eq!(nearest(Vec::new(), &[1.0]), None);
    }
}
