//! The metric families of the main job. Those on burn (`BERT-RUBER`, the SLM, the context
//! cosines of the sentence encoder) need the `slm` feature; the LLM judge needs `llm`.

#[cfg(feature = "slm")]
pub mod context_cosine;
pub mod embedding;
#[cfg(feature = "slm")]
pub mod fine_tuned;
pub mod length;
pub mod lexical;
#[cfg(feature = "llm")]
pub mod llm;
#[cfg(feature = "slm")]
pub mod ruber;
#[cfg(feature = "slm")]
pub mod slm;
pub mod smatch;
pub mod specificity;

#[cfg(feature = "slm")]
pub use context_cosine::ContextCosineFamily;
pub use embedding::{EmbeddingFamily, MemoEmbedder};
#[cfg(feature = "slm")]
pub use fine_tuned::FineTunedFamily;
pub use length::{LENGTH, LengthFamily};
pub use lexical::LexicalFamily;
#[cfg(feature = "llm")]
pub use llm::LlmFamily;
#[cfg(feature = "slm")]
pub use ruber::BertRuberFamily;
#[cfg(feature = "slm")]
pub use slm::SlmFamily;
pub use smatch::SmatchFamily;
pub use specificity::{NIDF, SpecificityFamily};
