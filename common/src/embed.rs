//! What an encoder offers the embedding metrics: sentence and token embedders.

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

    /// The most tokens of a text the embedder reads (its window, without special tokens):
    /// a text with this many tokens may have been cut to them. `None` (the default) for an
    /// embedder that reads every token.
    fn max_tokens(&self) -> Option<usize> {
        None
    }
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
            fn max_tokens(&self) -> Option<usize> {
                (**self).max_tokens()
            }
        }
    )*};
}

forward!(&T, Box<T>, Arc<T>);
