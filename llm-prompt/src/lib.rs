//! # dialeval-llm-prompt
//!
//! The LLM stage of the AMR-enhanced evaluator: prompts for Naturalness, Coherence,
//! Engagingness and Groundedness carrying the dialogue, the SLM score and the AMR graphs;
//! an OpenAI-compatible client with retries and a resumable on-disk cache; and scoring that
//! never turns an unreadable answer into a number.
//!
//! - [`prompt`]: templates (shipped in `templates/`, replaceable), variants after the paper's
//!   ablations, a length budget;
//! - [`client`]: [`ChatClient`], [`OpenAiClient`], [`CachedClient`];
//! - [`score`]: parsing, G-Eval's logprob-weighted score;
//! - [`judge`]: [`Judge`] for single items and batches.
//!
//! ```
//! use dialeval_llm_prompt::prompt::{Layout, PromptInput, Templates, Variant};
//! use dialeval_common::Criterion;
//! let input = PromptInput {
//!     context: vec![(Some("A".into()), "Do you like tea?".into())],
//!     response: "Yes, green tea.".into(),
//!     slm_score: Some(0.91),
//!     response_amr: Some("(l / like-01 :ARG1 (t / tea))".into()),
//!     ..PromptInput::default()
//! };
//! let prompt = Templates::builtin()?.render(&input, Criterion::Coherence, &Layout::new(Variant::Full).within(8000))?;
//! assert!(prompt.user.contains("Coherence: <score>") && prompt.user.contains("0.91"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod client;
mod error;
pub mod judge;
pub mod prompt;
pub mod score;

pub use client::{CachedClient, ChatClient, ChatRequest, ChatResponse, OpenAiClient, OpenAiConfig};
pub use error::{Error, Result};
pub use judge::{Judge, JudgeConfig, JudgeMode, Judgement, Scoring};
