//! The judge: renders prompts, calls a [`ChatClient`], scores answers, and runs batches
//! (items × criteria) with a concurrency limit and a progress callback.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use dialeval_common::Criterion;
use serde::{Deserialize, Serialize};

use crate::client::{ChatClient, ChatRequest, ChatResponse, Message};
use crate::error::{Error, Result};
use crate::prompt::{Layout, Prompt, PromptInput, Scale, Templates, Truncation, Variant};
use crate::score::{Method, OffScale, Outcome, logprob_score, parse_score};

/// How answers become scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Scoring {
    /// Temperature-0 answer, parsed.
    Parse,
    /// G-Eval: expectation over the score token's `top_logprobs`; below `min_mass`, parse.
    Logprob {
        /// Alternatives requested per token (≤ 20).
        top_logprobs: u8,
        /// Minimum probability mass of the scale's tokens to trust the expectation.
        min_mass: f64,
    },
    /// `samples` answers at `temperature`, averaged.
    Sample {
        /// Number of answers (one request each; never `n > 1`).
        samples: usize,
        /// Sampling temperature.
        temperature: f64,
    },
}

/// What a batch of judgements asks: the prompt variant and how answers become scores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JudgeMode {
    /// The prompt variant.
    pub variant: Variant,
    /// How answers become scores.
    pub scoring: Scoring,
}

/// Judge settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeConfig {
    /// Model name sent to the server.
    pub model: String,
    /// Rating scale.
    pub scale: Scale,
    /// What an out-of-scale number in an answer becomes.
    pub off_scale: OffScale,
    /// Prompt length budget in characters.
    pub budget_chars: usize,
    /// Completion length limit per criterion answered: a [`Variant::Multi`] call, which
    /// answers all four in one JSON object, gets it four times.
    pub max_tokens: u32,
}

impl Default for JudgeConfig {
    fn default() -> Self {
        Self { model: "smollm2-135m".into(), scale: Scale::default(), off_scale: OffScale::Reject, budget_chars: 12_000, max_tokens: 24 }
    }
}

/// One call's cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CallInfo {
    /// Milliseconds (0 for cache hits).
    pub latency_ms: f64,
    /// Prompt tokens, when reported.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens, when reported.
    pub completion_tokens: Option<u64>,
    /// Served from the cache.
    pub cached: bool,
}

impl From<&ChatResponse> for CallInfo {
    fn from(r: &ChatResponse) -> Self {
        Self { latency_ms: r.latency_ms, prompt_tokens: r.prompt_tokens, completion_tokens: r.completion_tokens, cached: r.cached }
    }
}

/// The judgement of one criterion for one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// The criterion.
    pub criterion: Criterion,
    /// The prompt variant.
    pub variant: Variant,
    /// The score or why there is none.
    pub outcome: Outcome,
    /// What the prompt budget removed.
    pub truncation: Truncation,
    /// The calls made.
    pub calls: Vec<CallInfo>,
}

/// The LLM judge.
pub struct Judge<C> {
    client: C,
    templates: Templates,
    config: JudgeConfig,
}

/// The paper's four criteria, which the judge rates.
pub const CRITERIA: [Criterion; 4] = [Criterion::Naturalness, Criterion::Coherence, Criterion::Engagingness, Criterion::Groundedness];

impl<C: ChatClient> Judge<C> {
    /// A judge.
    pub fn new(client: C, templates: Templates, config: JudgeConfig) -> Self {
        Self { client, templates, config }
    }

    /// The prompt for one item and criterion.
    ///
    /// # Errors
    /// As [`Templates::render`].
    pub fn prompt(&self, input: &PromptInput, criterion: Criterion, variant: Variant) -> Result<Prompt> {
        self.templates.render(input, criterion, &Layout { variant, scale: self.config.scale, budget_chars: self.config.budget_chars })
    }

    fn request(&self, prompt: &Prompt, temperature: f64, top_logprobs: Option<u8>, seed: Option<u64>) -> ChatRequest {
        ChatRequest {
            model: self.config.model.clone(),
            messages: vec![Message { role: "system".into(), content: prompt.system.clone() }, Message { role: "user".into(), content: prompt.user.clone() }],
            temperature,
            max_tokens: self.config.max_tokens,
            top_logprobs,
            seed,
        }
    }

    fn parsed(&self, text: &str, criterion: Criterion, method: Method) -> Result<Outcome> {
        Ok(match parse_score(text, criterion, self.config.scale, self.config.off_scale)? {
            Some(value) => Outcome::Scored { value, method },
            None => Outcome::Unscorable { raw: text.to_owned(), reason: "no score in any documented form (JSON, `Criterion: n`, `Score: n`, `n/max`, bare number)".into() },
        })
    }

    /// Judges one item on one criterion (for [`Variant::Multi`], use [`Judge::judge_all`]).
    ///
    /// # Errors
    /// Prompt, transport or protocol errors, and out-of-scale scores with [`OffScale::Reject`].
    pub fn judge(&self, input: &PromptInput, criterion: Criterion, variant: Variant, scoring: Scoring) -> Result<Judgement> {
        if variant == Variant::Multi {
            return Err(Error::Config("the multi variant rates all criteria in one call: use judge_all".into()));
        }
        let prompt = self.prompt(input, criterion, variant)?;
        let mut calls = Vec::new();
        let outcome = match scoring {
            Scoring::Parse => {
                let r = self.client.complete(&self.request(&prompt, 0.0, None, None))?;
                calls.push(CallInfo::from(&r));
                self.parsed(&r.content, criterion, Method::Parsed)?
            }
            Scoring::Logprob { top_logprobs, min_mass } => {
                if top_logprobs == 0 || top_logprobs > 20 {
                    return Err(Error::Config("top_logprobs must be 1..=20".into()));
                }
                let r = self.client.complete(&self.request(&prompt, 0.0, Some(top_logprobs), None))?;
                calls.push(CallInfo::from(&r));
                match r.logprobs.as_deref().and_then(|t| logprob_score(t, self.config.scale)) {
                    Some((value, mass)) if mass >= min_mass => Outcome::Scored { value, method: Method::Logprob { mass } },
                    found => self.parsed(&r.content, criterion, Method::ParsedAfterLogprobFallback { mass: found.map_or(0.0, |(_, m)| m) })?,
                }
            }
            Scoring::Sample { samples, temperature } => {
                if samples == 0 {
                    return Err(Error::Config("at least one sample".into()));
                }
                let mut values = Vec::new();
                let mut raws = Vec::new();
                for k in 0..samples {
                    let r = self.client.complete(&self.request(&prompt, temperature, None, Some(k as u64)))?;
                    calls.push(CallInfo::from(&r));
                    match parse_score(&r.content, criterion, self.config.scale, self.config.off_scale)? {
                        Some(v) => values.push(v),
                        None => raws.push(r.content),
                    }
                }
                if values.is_empty() {
                    Outcome::Unscorable { raw: raws.join("\n---\n"), reason: format!("none of {samples} samples held a score") }
                } else {
                    let mean = values.iter().sum::<f64>() / values.len() as f64;
                    let std = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64).sqrt();
                    Outcome::Scored { value: mean, method: Method::Sampled { scored: values.len(), samples, std } }
                }
            }
        };
        Ok(Judgement { criterion, variant, outcome, truncation: prompt.truncation, calls })
    }

    /// Judges all four criteria: one call per criterion, or one JSON-answer call for
    /// [`Variant::Multi`] (scored by parsing, whatever `scoring` says).
    ///
    /// # Errors
    /// As [`Judge::judge`].
    pub fn judge_all(&self, input: &PromptInput, variant: Variant, scoring: Scoring) -> Result<Vec<Judgement>> {
        if variant != Variant::Multi {
            return CRITERIA.iter().map(|&c| self.judge(input, c, variant, scoring)).collect();
        }
        let prompt = self.prompt(input, Criterion::Overall, variant)?;
        let mut request = self.request(&prompt, 0.0, None, None);
        request.max_tokens = self.config.max_tokens.saturating_mul(CRITERIA.len() as u32);
        let r = self.client.complete(&request)?;
        let call = CallInfo::from(&r);
        CRITERIA.iter().map(|&c| Ok(Judgement { criterion: c, variant, outcome: self.parsed(&r.content, c, Method::Parsed)?, truncation: prompt.truncation, calls: vec![call] })).collect()
    }

    /// Judges every item on `criteria` as `mode` says, with up to the client's concurrency in parallel,
    /// calling `progress(done, total)` after each judgement. Results come back in item order;
    /// a failure of one judgement is its own `Err` and does not stop the batch.
    pub fn judge_batch(&self, items: &[PromptInput], criteria: &[Criterion], mode: JudgeMode, progress: &(dyn Fn(usize, usize) + Sync)) -> Vec<Vec<Result<Judgement>>>
    where
        C: Sync,
    {
        let JudgeMode { variant, scoring } = mode;
        let units: Vec<(usize, Option<Criterion>)> =
            if variant == Variant::Multi { (0..items.len()).map(|i| (i, None)).collect() } else { (0..items.len()).flat_map(|i| criteria.iter().map(move |&c| (i, Some(c)))).collect() };
        let total = units.len();
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let results: Mutex<Vec<Vec<Result<Judgement>>>> = Mutex::new((0..items.len()).map(|_| Vec::new()).collect());
        let workers = self.client.concurrency().clamp(1, 64).min(total.max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    loop {
                        let k = next.fetch_add(1, Ordering::SeqCst);
                        let Some(&(i, criterion)) = units.get(k) else { break };
                        let out: Vec<Result<Judgement>> = match criterion {
                            Some(c) => vec![self.judge(&items[i], c, variant, scoring)],
                            None => match self.judge_all(&items[i], variant, scoring) {
                                Ok(all) => all.into_iter().filter(|j| criteria.contains(&j.criterion)).map(Ok).collect(),
                                Err(e) => vec![Err(e)],
                            },
                        };
                        // A worker that panicked cannot leave a row half-written (extend is the
                        // only write), so the results stay usable after poisoning.
                        results.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[i].extend(out);
                        progress(done.fetch_add(1, Ordering::SeqCst) + 1, total);
                    }
                });
            }
        });
        let mut results = results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        for row in &mut results {
            row.sort_by_key(|r| r.as_ref().ok().map(|j| j.criterion));
        }
        results
    }
}
