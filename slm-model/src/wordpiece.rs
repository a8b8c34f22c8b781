//! A WordPiece tokenizer learned from the training text (the scratch text encoder's input).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

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

    use super::*;

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
