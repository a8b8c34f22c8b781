//! # dialeval-common
//!
//! The few types that several dialeval crates must agree on, kept in one tiny crate so that no
//! crate has to depend on another's internals (see `ARCHITECTURE.md`):
//!
//! - [`SentenceEmbedder`] and [`TokenEmbedder`]: what an encoder (the burn BERT of
//!   `dialeval-slm-model`, an ONNX model, a fixed table in a test) offers to the embedding
//!   metrics of `dialeval-metrics`.

use std::sync::Arc;

/// Errors an embedder may return (object-safe: any error type boxed).
pub type EmbedError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Embeds whole sentences into fixed-size vectors.
pub trait SentenceEmbedder {
    /// Vector size.
    fn dim(&self) -> usize;

    /// One vector of length [`SentenceEmbedder::dim`] per text.
    ///
    /// # Errors
    /// Whatever the encoder reports (tokenisation, model, device).
    fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// One text's vector.
    ///
    /// # Errors
    /// As [`SentenceEmbedder::embed_sentences`].
    fn embed_sentence(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_sentences(&[text])?.pop().ok_or_else(|| "the embedder returned no vector".into())
    }
}

/// The contextual (or static) vectors of a text's tokens.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct TokenEmbeddings {
    /// The tokens, as the embedder split them.
    pub tokens: Vec<String>,
    /// One vector per token, each of the embedder's dimension.
    pub vectors: Vec<Vec<f32>>,
}

/// Embeds each token of a text.
pub trait TokenEmbedder {
    /// Vector size.
    fn dim(&self) -> usize;

    /// Token vectors per text.
    ///
    /// # Errors
    /// Whatever the encoder reports.
    fn embed_tokens(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>, EmbedError>;
}

macro_rules! forward {
    ($($ptr:ty),*) => {$(
        impl<T: SentenceEmbedder + ?Sized> SentenceEmbedder for $ptr {
            fn dim(&self) -> usize {
                (**self).dim()
            }
            fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
                (**self).embed_sentences(texts)
            }
        }
        impl<T: TokenEmbedder + ?Sized> TokenEmbedder for $ptr {
            fn dim(&self) -> usize {
                (**self).dim()
            }
            fn embed_tokens(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>, EmbedError> {
                (**self).embed_tokens(texts)
            }
        }
    )*};
}

forward!(&T, Box<T>, Arc<T>);
