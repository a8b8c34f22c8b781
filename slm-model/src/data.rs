//! From training pairs to tensors: a WordPiece tokenizer trained on the training text, the
//! Graph-Transformer input of each turn's AMR (amr-graph's concept sequence and relation-path
//! matrix), and padded batches.
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

/// Frozen sentence vectors looked up by text: what the SLM's pretrained head reads.
pub trait SentenceVectors {
    /// Vector width.
    fn dim(&self) -> usize;
    /// Identity of the encoder that made the vectors (a checkpoint trained on one encoder's
    /// vectors refuses another's).
    fn encoder_id(&self) -> &str;
    /// The vector of `text`; `None` when it was not computed.
    fn vector(&self, text: &str) -> Option<Vec<f32>>;
    /// The token states of `text` (`tokens × dim`, row-major) that the cross-encoded text side
    /// reads; `None` when they were not computed or the source keeps only pooled vectors.
    fn token_states(&self, _text: &str) -> Option<Vec<half::f16>> {
        None
    }
}

impl<T: SentenceVectors + ?Sized> SentenceVectors for &T {
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn encoder_id(&self) -> &str {
        (**self).encoder_id()
    }
    fn vector(&self, text: &str) -> Option<Vec<f32>> {
        (**self).vector(text)
    }
    fn token_states(&self, text: &str) -> Option<Vec<half::f16>> {
        (**self).token_states(text)
    }
}

/// Sentence vectors seen as [`dialeval_datasets::negatives::PairVectors`], for negatives
/// retrieved in embedding space: a pair's context is the joined text the pretrained head reads
/// ([`context_text`]).
#[derive(Debug, Clone, Copy)]
pub struct PairSentenceVectors<V>(pub V);

impl<V: SentenceVectors + Sync> dialeval_datasets::negatives::PairVectors for PairSentenceVectors<V> {
    fn context(&self, pair: &TrainingPair) -> Option<Vec<f32>> {
        self.0.vector(&context_text(pair))
    }
    fn response(&self, text: &str) -> Option<Vec<f32>> {
        self.0.vector(text)
    }
}

/// The text of a pair's context as the pretrained encoder sees it: its turns joined by spaces.
pub fn context_text(pair: &TrainingPair) -> String {
    pair.context.join(" ")
}

/// The last two context turns that have text, oldest first: what a featuriser with the turn
/// channel ([`Featurizer::turns`]) reads apart from the joined context.
pub fn turn_texts(pair: &TrainingPair) -> Vec<&str> {
    let turns: Vec<&str> = pair.context.iter().map(String::as_str).filter(|t| !t.trim().is_empty()).collect();
    turns[turns.len().saturating_sub(2)..].to_vec()
}

/// Width of the turn channel's features beyond `[c; r; c ⊙ r; |c − r|]` for vectors of width
/// `dim`: `[l ⊙ r; |l − r|; cos(l, r); cos(m, r)]` ([`turn_features`]).
pub fn turn_width(dim: usize) -> usize {
    2 * dim + 2
}

/// The turn channel's features of a pair: with `l` the last turn's vector, `m` the mean of the
/// last two turns' unit vectors and `r` the response's, `[l ⊙ r; |l − r|; cos(l, r); cos(m, r)]`.
/// The two cosines are the zero-shot scores `Context-Cosine` and `Context-Cosine-2` of the eval
/// crate; the head adds a learned multiple of them to its logit, so training starts from what
/// the encoder already knows and cannot lose it. A pair without context turns reads zeros.
pub fn turn_features(turns: &[Vec<f32>], response: &[f32]) -> Vec<f32> {
    let dim = response.len();
    let Some(last) = turns.last() else { return vec![0.0; turn_width(dim)] };
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    let cosine = |a: &[f32], b: &[f32]| {
        let n = norm(a) * norm(b);
        if n > 0.0 { a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum::<f64>() / n } else { 0.0 }
    };
    let mean: Vec<f32> = (0..dim)
        .map(|k| {
            turns
                .iter()
                .map(|t| {
                    let n = norm(t);
                    if n > 0.0 { (f64::from(t[k]) / n) as f32 } else { 0.0 }
                })
                .sum()
        })
        .collect();
    let mut out = Vec::with_capacity(turn_width(dim));
    out.extend(last.iter().zip(response).map(|(a, b)| a * b));
    out.extend(last.iter().zip(response).map(|(a, b)| (a - b).abs()));
    out.push(cosine(last, response) as f32);
    out.push(cosine(&mean, response) as f32);
    out
}

/// The knowledge a model with the knowledge channel reads for a pair: its knowledge or persona,
/// unless empty or blank.
pub fn knowledge_text(pair: &TrainingPair) -> Option<&str> {
    pair.knowledge.as_deref().filter(|k| !k.trim().is_empty())
}

/// What of a pair's knowledge the pretrained head's knowledge channel reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KnowledgeUnit {
    /// The sentence vector of the whole knowledge text (cut at the encoder's longest input).
    #[default]
    Whole,
    /// The vector of the knowledge sentence nearest the response (highest dot product, the
    /// cosine of the encoder's normalised vectors; [`knowledge_sentences`]): a persona is a list
    /// of facts and a Wikipedia section a list of sentences, of which a grounded response uses
    /// one; a pooled vector of all of them dilutes it, and the encoder reads only the first
    /// word pieces of a long text (256 for all-MiniLM-L6-v2).
    Sentence,
}

/// Most sentences of one knowledge text [`KnowledgeUnit::Sentence`] reads (the first ones).
pub const MAX_KNOWLEDGE_SENTENCES: usize = 32;

/// The sentences of a knowledge text: its lines, each split after `.`, `!` or `?` followed by
/// white space, trimmed, blank ones left out; at most [`MAX_KNOWLEDGE_SENTENCES`], the first.
/// A persona's `your persona:` lines are one sentence each.
pub fn knowledge_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let boundary = matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|&(_, n)| n.is_whitespace());
            if boundary {
                let end = i + c.len_utf8();
                out.push(&line[start..end]);
                start = end;
            }
        }
        out.push(&line[start..]);
    }
    out.into_iter().map(str::trim).filter(|s| !s.is_empty()).take(MAX_KNOWLEDGE_SENTENCES).collect()
}

/// The texts whose vectors a model with the knowledge channel reads for a pair's knowledge:
/// the whole text ([`knowledge_text`]) or its sentences ([`knowledge_sentences`]).
pub fn knowledge_texts(pair: &TrainingPair, unit: KnowledgeUnit) -> Vec<&str> {
    match (knowledge_text(pair), unit) {
        (None, _) => Vec::new(),
        (Some(k), KnowledgeUnit::Whole) => vec![k],
        (Some(k), KnowledgeUnit::Sentence) => knowledge_sentences(k),
    }
}

/// What of a pair a pretrained text side reads through sentence vectors, beside the joined
/// context and the response: the knowledge (as its unit reads it) and the last two turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VectorInputs {
    /// The knowledge channel's unit (`None`: no knowledge channel).
    pub knowledge: Option<KnowledgeUnit>,
    /// The turn channel ([`Featurizer::turns`]).
    pub turns: bool,
}

impl VectorInputs {
    /// Every text whose sentence vector is read for `pair`: the joined context
    /// ([`context_text`]), the response, the knowledge ([`knowledge_texts`]) and the last two
    /// turns ([`turn_texts`]) as asked.
    pub fn texts<'a>(&self, pair: &'a TrainingPair) -> Vec<std::borrow::Cow<'a, str>> {
        use std::borrow::Cow;
        let mut out = vec![Cow::Owned(context_text(pair)), Cow::Borrowed(pair.response.as_str())];
        if let Some(unit) = self.knowledge {
            out.extend(knowledge_texts(pair, unit).into_iter().map(Cow::Borrowed));
        }
        if self.turns {
            out.extend(turn_texts(pair).into_iter().map(Cow::Borrowed));
        }
        out
    }

    /// [`VectorInputs::texts`] of every pair of `parts`, in order (repeats kept: an encoder's
    /// cache skips them).
    pub fn texts_of<'a>(&self, parts: &[&'a [TrainingPair]]) -> Vec<std::borrow::Cow<'a, str>> {
        parts.iter().flat_map(|part| part.iter()).flat_map(|p| self.texts(p)).collect()
    }
}

/// Special token ids of [`WordPieceTokenizer`].
pub const PAD: u32 = 0;
/// Unknown word piece.
pub const UNK: u32 = 1;
/// Start of the input.
pub const CLS: u32 = 2;
/// Separator after the context and after the response.
pub const SEP: u32 = 3;

const SPECIALS: [&str; 4] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"];

/// Lowercased runs of letters and digits, and single punctuation characters (BERT's
/// pre-tokenisation after its normaliser, up to accent stripping).
fn words_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            current.push(c);
        } else {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            if !c.is_whitespace() && !c.is_control() {
                out.push(c.to_string());
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// A WordPiece tokenizer (the `tokenizers` crate's model, BERT's normaliser — lowercasing,
/// accent stripping — and pre-tokeniser) with a vocabulary learned from the training text,
/// special tokens first so their ids are [`PAD`], [`UNK`], [`CLS`], [`SEP`]. Serialised as
/// Hugging Face tokenizer JSON, so the saved file also loads in Python's `tokenizers`.
#[derive(Debug, Clone)]
pub struct WordPieceTokenizer {
    inner: tokenizers::Tokenizer,
}

impl Serialize for WordPieceTokenizer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        self.inner.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for WordPieceTokenizer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let inner = tokenizers::Tokenizer::deserialize(deserializer)?;
        for (id, token) in SPECIALS.iter().enumerate() {
            if inner.token_to_id(token) != Some(id as u32) {
                return Err(serde::de::Error::custom(format!("special token {token} must have id {id}")));
            }
        }
        Ok(Self { inner })
    }
}

impl WordPieceTokenizer {
    /// Learns a vocabulary of at most `vocab_size` pieces from `texts`: the special tokens, every
    /// character seen (word-initial and `##` continuation forms, so no word is unknown), then
    /// whole words and `##` word endings of 2–6 characters seen at least `min_frequency` times,
    /// most frequent first (ties by string). The counting is deterministic — the `tokenizers`
    /// crate's own trainer breaks ties in hash order and gave different vocabularies from run to
    /// run — and tokenisation is the crate's WordPiece (greedy longest match) behind BERT's
    /// normaliser and pre-tokeniser.
    ///
    /// # Errors
    /// [`Error::Config`] when the tokenizers crate rejects the vocabulary.
    pub fn train<'a>(texts: impl Iterator<Item = &'a str>, vocab_size: usize, min_frequency: u64) -> Result<Self> {
        use std::collections::{BTreeMap, BTreeSet};
        use tokenizers::models::wordpiece::WordPiece;
        use tokenizers::normalizers::bert::BertNormalizer;
        use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
        use tokenizers::{AddedToken, DecoderWrapper, PostProcessorWrapper, TokenizerImpl};
        let fail = |e: tokenizers::Error| Error::Config(format!("WordPiece vocabulary: {e}"));
        let mut words: BTreeMap<String, u64> = BTreeMap::new();
        for t in texts {
            for w in words_of(t) {
                *words.entry(w).or_default() += 1;
            }
        }
        let mut chars: BTreeSet<String> = BTreeSet::new();
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for (w, &c) in &words {
            let cs: Vec<char> = w.chars().collect();
            for (i, ch) in cs.iter().enumerate() {
                chars.insert(if i == 0 { ch.to_string() } else { format!("##{ch}") });
            }
            *counts.entry(w.clone()).or_default() += c;
            for start in 1..cs.len() {
                if (2..=6).contains(&(cs.len() - start)) {
                    *counts.entry(format!("##{}", cs[start..].iter().collect::<String>())).or_default() += c;
                }
            }
        }
        let mut ranked: Vec<(String, u64)> = counts.into_iter().filter(|(p, c)| *c >= min_frequency && !chars.contains(p)).collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let pieces: Vec<String> = SPECIALS.iter().map(|s| (*s).to_owned()).chain(chars).chain(ranked.into_iter().map(|(p, _)| p)).take(vocab_size.max(SPECIALS.len())).collect();
        let mut tokenizer: TokenizerImpl<WordPiece, BertNormalizer, BertPreTokenizer, PostProcessorWrapper, DecoderWrapper> = TokenizerImpl::new(WordPiece::default());
        tokenizer.with_normalizer(Some(BertNormalizer::default())).map_err(fail)?.with_pre_tokenizer(Some(BertPreTokenizer));
        tokenizer.add_special_tokens(SPECIALS.iter().map(|t| AddedToken::from(*t, true)).collect::<Vec<_>>()).map_err(fail)?;
        let json = tokenizers::Tokenizer::from(tokenizer).to_string(false).map_err(fail)?;
        let mut value: serde_json::Value = serde_json::from_str(&json).map_err(|e| Error::Format(format!("tokenizer JSON: {e}")))?;
        value["model"]["vocab"] = serde_json::Value::Object(pieces.iter().enumerate().map(|(id, p)| (p.clone(), serde_json::Value::from(id))).collect());
        serde_json::from_value(value).map_err(|e| Error::Format(format!("tokenizer JSON: {e}")))
    }

    /// Vocabulary size, special tokens included.
    pub fn len(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// Whether only the special tokens exist.
    pub fn is_empty(&self) -> bool {
        self.len() <= SPECIALS.len()
    }

    /// Word-piece ids of `text` (no special tokens added).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        // Encoding a plain string with a trained WordPiece model cannot fail; an error would
        // mean an inconsistent vocabulary, which deserialisation has already checked.
        self.inner.encode(text, false).map(|e| e.get_ids().to_vec()).unwrap_or_else(|_| vec![UNK])
    }

    /// The word pieces of `text`.
    ///
    /// # Errors
    /// [`Error::Format`] when the tokenizer fails on the text.
    pub fn tokens(&self, text: &str) -> Result<Vec<String>> {
        self.inner.encode(text, false).map(|e| e.get_tokens().to_vec()).map_err(|e| Error::Format(format!("tokenizer on {text:?}: {e}")))
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

    #[test]
    fn knowledge_splits_into_lines_and_sentences() {
        let persona = "your persona: i like dogs.\nyour persona: i've three cats.\n\n";
        assert_eq!(knowledge_sentences(persona), ["your persona: i like dogs.", "your persona: i've three cats."]);
        let wiki = "The club was founded in 1902. It plays in Madrid! Who knows? e.g.the 3.5 rule\n  second line without stop  ";
        assert_eq!(knowledge_sentences(wiki), ["The club was founded in 1902.", "It plays in Madrid!", "Who knows?", "e.g.the 3.5 rule", "second line without stop"]);
        assert!(knowledge_sentences(" \n\t").is_empty());
        let many: String = (0..40).map(|i| format!("Fact {i}. ")).collect();
        let cut = knowledge_sentences(&many);
        assert_eq!(cut.len(), MAX_KNOWLEDGE_SENTENCES);
        assert_eq!(cut[0], "Fact 0.");
        let pair = |k: Option<&str>| TrainingPair {
            id: "p".into(),
            context: vec![],
            response: String::new(),
            kind: PairKind::Positive,
            context_amr: vec![],
            response_amr: None,
            knowledge: k.map(str::to_owned),
        };
        assert_eq!(knowledge_texts(&pair(Some("A. B.")), KnowledgeUnit::Whole), ["A. B."]);
        assert_eq!(knowledge_texts(&pair(Some("A. B.")), KnowledgeUnit::Sentence), ["A.", "B."]);
        assert!(knowledge_texts(&pair(Some("  ")), KnowledgeUnit::Sentence).is_empty());
        assert!(knowledge_texts(&pair(None), KnowledgeUnit::Whole).is_empty());
    }

    #[test]
    fn the_nearest_knowledge_sentence_is_the_one_of_highest_dot_product() {
        assert_eq!(nearest(vec![vec![1.0, 0.0], vec![0.6, 0.8], vec![0.0, 1.0]], &[0.0, 1.0]), Some(vec![0.0, 1.0]));
        assert_eq!(nearest(vec![vec![0.6, 0.8], vec![0.8, 0.6]], &[1.0, 1.0]), Some(vec![0.6, 0.8]), "the first of equals");
        assert_eq!(nearest(Vec::new(), &[1.0]), None);
    }

    #[test]
    fn wordpiece_round_trips_through_json_and_splits_unseen_words() {
        let texts = ["Hi there, how are you?", "hi, fine thanks", "I am playing football", "we played and we are playing", "hi there", "they were running", "running and playing"];
        let t = WordPieceTokenizer::train(texts.iter().copied(), 200, 2).unwrap_or_else(|e| panic!("{e}"));
        let json = serde_json::to_string(&t).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..5 {
            let again = WordPieceTokenizer::train(texts.iter().copied(), 200, 2).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(serde_json::to_string(&again).unwrap_or_else(|e| panic!("{e}")), json, "training is reproducible");
        }
        let back: WordPieceTokenizer = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.encode("hi there"), t.encode("hi there"));
        assert!(t.encode("Hi THERE").iter().all(|&id| id > SEP), "lowercased and known");
        // An unseen word is split into known pieces rather than one unknown token.
        let pieces = t.tokens("playings").unwrap_or_else(|e| panic!("{e}"));
        assert!(pieces.len() > 1 && pieces.iter().skip(1).all(|p| p.starts_with("##")), "{pieces:?}");
        assert!(t.encode("zebra").contains(&UNK) || t.tokens("zebra").unwrap_or_else(|e| panic!("{e}")).len() > 1);
        let bad = json.replace("[PAD]", "[PAX]");
        assert!(serde_json::from_str::<WordPieceTokenizer>(&bad).is_err());
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
    /// The knowledge, when the featuriser reads it and the pair has it.
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

/// The vector of `candidates` with the highest dot product with `target` (the first of equals);
/// `None` when there are none.
fn nearest(candidates: Vec<Vec<f32>>, target: &[f32]) -> Option<Vec<f32>> {
    let dot = |v: &[f32]| v.iter().zip(target).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum::<f64>();
    let mut best: Option<(f64, Vec<f32>)> = None;
    for c in candidates {
        let d = dot(&c);
        if best.as_ref().is_none_or(|(b, _)| d > *b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, v)| v)
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
            example.knowledge = match self.knowledge_unit {
                KnowledgeUnit::Whole => knowledge.map(look_up).transpose()?,
                KnowledgeUnit::Sentence => nearest(knowledge.map(knowledge_sentences).unwrap_or_default().into_iter().map(look_up).collect::<Result<Vec<_>>>()?, &response),
            };
            if self.text_encoder() == TextEncoderKind::Cross {
                example.cross = Some(CrossTexts { context, response: pair.response.clone(), knowledge: knowledge.map(str::to_owned) });
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
