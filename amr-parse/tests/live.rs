//! LlmAmrParser against the local llama.cpp server (`scripts/llm_server.sh`, SmolLM2-135M) when
//! `DIALEVAL_LLM_URL` is set: every result is a valid graph or a typed error, and a second run is
//! served from the cache. (Quality is measured by the `amr_parse` example, not asserted here.)
#![allow(clippy::panic, clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dialeval_amr_parse::{AmrParser, Error, LlmAmrParser, LlmParserConfig, validate};
use dialeval_llm_prompt::client::{ChatClient, ChatRequest, ChatResponse};
use dialeval_llm_prompt::{CachedClient, OpenAiClient, OpenAiConfig};

/// Counts the calls that reach the server.
struct Counting<C>(C, AtomicUsize);

impl<C: ChatClient> ChatClient for Counting<C> {
    fn complete(&self, request: &ChatRequest) -> dialeval_llm_prompt::Result<ChatResponse> {
        self.1.fetch_add(1, Ordering::SeqCst);
        self.0.complete(request)
    }
    fn identity(&self) -> String {
        self.0.identity()
    }
}

#[test]
fn the_local_server_gives_valid_graphs_or_typed_errors_and_resumes_from_the_cache() {
    let Some(url) = dialeval_testkit::llm_url() else { return };
    let dir = std::env::temp_dir().join(format!("dialeval-amr-parse-live-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sentences = ["Do you have any pets?", "ok"];
    let run = || {
        let http = OpenAiClient::new(OpenAiConfig { base_url: url.clone(), timeout: Duration::from_secs(300), ..OpenAiConfig::default() }).unwrap();
        let counting = Counting(http, AtomicUsize::new(0));
        let parser = LlmAmrParser::new(CachedClient::new(&counting, dir.clone()).unwrap(), LlmParserConfig { repair_rounds: 1, max_tokens: 256, ..LlmParserConfig::default() }).unwrap();
        let results: Vec<String> = parser
            .parse_batch(&sentences)
            .into_iter()
            .map(|r| match r {
                Ok(p) => {
                    assert!(validate(&p.penman).is_ok(), "an invalid graph passed: {}", p.penman);
                    p.penman
                }
                Err(Error::Invalid { attempts, .. }) => format!("invalid after {attempts}"),
                Err(e) => panic!("the server failed: {e}"),
            })
            .collect();
        (results, counting.1.load(Ordering::SeqCst))
    };
    let (first, calls) = run();
    assert_eq!(first.len(), 2);
    assert!(calls >= 2, "{calls} calls");
    let (second, again) = run();
    assert_eq!(second, first);
    assert_eq!(again, 0, "the second run was served from the cache");
    let _ = std::fs::remove_dir_all(&dir);
}
