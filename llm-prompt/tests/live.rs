//! Prompts for real USR-PersonaChat items (with silver AMR and an SLM score), and the judge
//! against a real local LLM server (llama.cpp serving SmolLM2-135M-Instruct, started by
//! `.ci/run` through `scripts/llm_server.sh`). The 135M model is no good judge: these tests
//! check the plumbing and its invariants, not the scores.
//!
//! The live tests read the server URL from `DIALEVAL_LLM_URL` (e.g. `http://127.0.0.1:8089/v1`)
//! and say SKIPPED without it, unless `DIALEVAL_REQUIRE_LLM=1` (set by `.ci/run`).
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dialeval_common::Criterion;
use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::usr;
use dialeval_llm_prompt::client::{ChatClient, ChatRequest, ChatResponse, Message};
use dialeval_llm_prompt::judge::CRITERIA;
use dialeval_llm_prompt::prompt::{Layout, PromptInput, Scale, Templates, Variant};
use dialeval_llm_prompt::score::{Method, Outcome};
use dialeval_llm_prompt::{CachedClient, Judge, JudgeConfig, JudgeMode, OpenAiClient, OpenAiConfig, Result, Scoring};

/// The first `n` USR-PersonaChat items as prompt inputs, with silver AMR and a made-up SLM score.
fn usr_inputs(n: usize) -> Option<Vec<PromptInput>> {
    let data = dialeval_testkit::shared_dir()?.join("data");
    let mut items = usr::load(&data.join("usr-personachat/pc_usr_data.json")).unwrap();
    AmrIndex::load(&[data.join("silver-amr/usr-personachat.silver.amr.txt")]).unwrap().attach(&mut items);
    Some(
        items
            .into_iter()
            .take(n)
            .enumerate()
            .map(|(k, it)| PromptInput {
                context: it.context.iter().map(|t| (t.speaker.clone(), t.text.clone())).collect(),
                response: it.response.as_ref().unwrap().text.clone(),
                knowledge: it.knowledge.clone(),
                slm_score: Some(0.05 + 0.9 * (k % 10) as f64 / 10.0),
                context_amr: it.context.iter().filter_map(|t| t.amr.clone()).collect(),
                response_amr: it.response.as_ref().unwrap().amr.clone(),
            })
            .collect(),
    )
}

#[test]
fn all_criteria_and_variants_render_from_real_usr_items() {
    let Some(inputs) = usr_inputs(10) else { return };
    let templates = Templates::builtin().unwrap();
    for input in &inputs {
        assert!(input.response_amr.is_some() && !input.context_amr.is_empty(), "silver AMR attached");
        for c in CRITERIA {
            for v in Variant::ALL {
                let p = templates.render(input, c, &Layout::new(v).within(12_000)).unwrap();
                assert!(p.user.contains(input.response.trim()));
                assert_eq!(p.user.contains(input.response_amr.as_deref().unwrap().lines().next().unwrap()), matches!(v, Variant::Full | Variant::NoSlm | Variant::Multi));
            }
        }
        // A tight budget drops the oldest turns first, and says so.
        let p = templates.render(input, Criterion::Coherence, &Layout::new(Variant::Full).within(3000)).unwrap();
        assert!(p.user.chars().count() + p.system.chars().count() <= 3000);
        assert!(p.truncation.dropped_turns > 0 || p.truncation.dropped_context_graphs > 0);
    }
}

/// The live tests share one single-slot server: run them one at a time.
static SERVER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Prompts of about 450 tokens: SmolLM2-135M reads about 90 prompt tokens a second on one CPU
/// thread, and these tests are about the protocol, not the prompt.
fn small_prompts() -> JudgeConfig {
    JudgeConfig { budget_chars: 1600, ..JudgeConfig::default() }
}

fn live_client(url: &str) -> OpenAiClient {
    OpenAiClient::new(OpenAiConfig { base_url: url.to_owned(), api_key_env: None, timeout: Duration::from_secs(120), ..OpenAiConfig::default() }).unwrap()
}

/// Counts the calls that reach the wrapped client.
struct Counting<C> {
    inner: C,
    calls: AtomicUsize,
}

impl<C: ChatClient> ChatClient for Counting<C> {
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.complete(request)
    }
    fn identity(&self) -> String {
        self.inner.identity()
    }
}

#[test]
fn live_parse_and_logprob_scoring_respect_their_invariants() {
    let _serial = SERVER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (Some(url), Some(inputs)) = (dialeval_testkit::llm_url(), usr_inputs(1)) else { return };
    let judge = Judge::new(live_client(&url), Templates::builtin().unwrap(), small_prompts());
    let (mut tokens, mut millis, mut calls) = (0_u64, 0.0, 0);
    for input in &inputs {
        for c in [Criterion::Coherence, Criterion::Groundedness] {
            let parsed = judge.judge(input, c, Variant::Full, Scoring::Parse).unwrap();
            match &parsed.outcome {
                Outcome::Scored { value, .. } => assert!(Scale::default().contains(*value)),
                Outcome::Unscorable { reason, .. } => assert!(!reason.is_empty(), "an unscorable answer says why"),
            }
            let weighted = judge.judge(input, c, Variant::Plain, Scoring::Logprob { top_logprobs: 10, min_mass: 0.05 }).unwrap();
            if let Outcome::Scored { value, method } = &weighted.outcome {
                assert!(Scale::default().contains(*value), "{value}");
                if let Method::Logprob { mass } = method {
                    assert!(*mass > 0.0 && *mass <= 1.0 + 1e-9, "{mass}");
                }
            }
            for call in parsed.calls.iter().chain(&weighted.calls) {
                tokens += call.completion_tokens.unwrap_or(0) + call.prompt_tokens.unwrap_or(0);
                millis += call.latency_ms;
                calls += 1;
            }
        }
    }
    eprintln!("live: {calls} calls, mean latency {:.0} ms, {:.1} tokens/s (prompt + completion)", millis / f64::from(calls), tokens as f64 / (millis / 1000.0));
}

#[test]
fn live_logprobs_are_log_probabilities_and_temperature_zero_repeats() {
    let _serial = SERVER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(url) = dialeval_testkit::llm_url() else { return };
    let client = live_client(&url);
    let request = ChatRequest {
        model: "smollm2-135m".into(),
        messages: vec![Message { role: "user".into(), content: "Rate the coherence of the reply \"Yes, I love tea.\" to \"Do you like tea?\" from 1 to 5. Answer: Coherence: <score>".into() }],
        temperature: 0.0,
        max_tokens: 12,
        top_logprobs: Some(5),
        seed: None,
    };
    let a = client.complete(&request).unwrap();
    let b = client.complete(&request).unwrap();
    assert_eq!(a.content, b.content, "temperature 0 is repeatable against the same server");
    let logprobs = a.logprobs.expect("the server returns logprobs");
    assert!(!logprobs.is_empty());
    for t in &logprobs {
        assert!(t.logprob <= 0.0);
        assert!(t.top.iter().all(|(_, lp)| *lp <= 0.0));
    }
}

#[test]
fn live_batch_resumes_from_the_cache_without_repeating_calls() {
    let _serial = SERVER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (Some(url), Some(inputs)) = (dialeval_testkit::llm_url(), usr_inputs(3)) else { return };
    let dir = std::env::temp_dir().join(format!("dialeval-live-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let criteria = [Criterion::Coherence, Criterion::Naturalness];
    // A first run "killed" after one of three items.
    let first = Counting { inner: CachedClient::new(live_client(&url), &dir).unwrap(), calls: AtomicUsize::new(0) };
    let judge = Judge::new(&first, Templates::builtin().unwrap(), small_prompts());
    let partial = judge.judge_batch(&inputs[..1], &criteria, JudgeMode { variant: Variant::Full, scoring: Scoring::Parse }, &|_, _| {});
    assert_eq!(partial.iter().flatten().count(), 2);
    // The restarted run reaches the server only for the two unfinished items.
    let server = Counting { inner: live_client(&url), calls: AtomicUsize::new(0) };
    let resumed = CachedClient::new(&server, &dir).unwrap();
    let judge = Judge::new(&resumed, Templates::builtin().unwrap(), small_prompts());
    let seen = AtomicUsize::new(0);
    let all = judge.judge_batch(&inputs, &criteria, JudgeMode { variant: Variant::Full, scoring: Scoring::Parse }, &|done, total| {
        assert!(done <= total);
        seen.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(seen.load(Ordering::SeqCst), 6);
    assert_eq!(server.calls.load(Ordering::SeqCst), 4, "finished calls are not repeated");
    for (a, b) in partial.iter().zip(&all) {
        let outcomes = |row: &Vec<Result<dialeval_llm_prompt::Judgement>>| row.iter().map(|r| r.as_ref().unwrap().outcome.clone()).collect::<Vec<_>>();
        assert_eq!(outcomes(a), outcomes(b));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Records the completion limit of every request it forwards.
struct Limits<C> {
    inner: C,
    max_tokens: std::sync::Arc<std::sync::Mutex<Vec<u32>>>,
}

impl<C: ChatClient> ChatClient for Limits<C> {
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse> {
        self.max_tokens.lock().unwrap().push(request.max_tokens);
        self.inner.complete(request)
    }
}

#[test]
fn live_multi_asks_once_with_room_for_every_criterion() {
    let _serial = SERVER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (Some(url), Some(inputs)) = (dialeval_testkit::llm_url(), usr_inputs(1)) else { return };
    let config = small_prompts();
    let limits = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let judge = Judge::new(Limits { inner: live_client(&url), max_tokens: limits.clone() }, Templates::builtin().unwrap(), config.clone());
    let all = judge.judge_all(&inputs[0], Variant::Multi, Scoring::Parse).unwrap();
    assert_eq!(all.iter().map(|j| j.criterion).collect::<Vec<_>>(), CRITERIA.to_vec());
    // One call whose answer holds four scores gets four times the per-criterion limit (with
    // the single-criterion limit the JSON object was cut off after two of them).
    assert_eq!(*limits.lock().unwrap(), vec![4 * config.max_tokens]);
    assert!(all.iter().all(|j| j.calls.len() == 1 && j.calls[0] == all[0].calls[0]), "the four judgements share the one call");
}
