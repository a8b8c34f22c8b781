//! Text-overlap metrics, each aligned to its Python reference.

pub mod bleu;
pub mod meteor;
pub mod ngram;
pub mod porter;
pub mod rouge;
pub mod tokenize;
pub mod wordnet;
