//! LlmAmrParser against a local HTTP server that answers with crafted graphs: repair rounds
//! carry the exact defect, the deterministic repair takes over after them, garbage is a typed
//! error, the cache makes a second run call nothing, and an endpoint failure is an LLM error.
#![allow(clippy::panic, clippy::unwrap_used)]

use std::time::Duration;

use dialeval_amr_parse::{AmrParser, Error, LlmAmrParser, LlmParserConfig};
use dialeval_llm_prompt::{CachedClient, OpenAiClient, OpenAiConfig};
use dialeval_testkit::http::Requests;

/// Serves the answers in order (the last repeats) as chat completions with `status`.
fn serve(answers: Vec<&'static str>, status: u16) -> (String, Requests) {
    let reply = |content: &str| serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string();
    dialeval_testkit::http::serve(answers.into_iter().map(|a| (status, Vec::new(), reply(a))).collect())
}

fn client(url: &str) -> OpenAiClient {
    OpenAiClient::new(OpenAiConfig {
        base_url: url.to_owned(),
        api_key_env: None,
        timeout: Duration::from_secs(5),
        max_retries: 1,
        backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        concurrency: 1,
    })
    .unwrap()
}

fn config() -> LlmParserConfig {
    LlmParserConfig { model: "scripted".into(), ..LlmParserConfig::default() }
}

#[test]
fn a_repair_round_sends_back_the_exact_defect() {
    let (url, bodies) = serve(vec!["(w / want-01 :agent (b / boy))", "(w / want-01 :ARG0 (b / boy))"], 200);
    let parser = LlmAmrParser::new(client(&url), config()).unwrap();
    let p = parser.parse("The boy wants.").unwrap();
    assert_eq!(p.attempts, 2);
    assert!(p.repairs.is_none());
    let bodies = bodies.bodies();
    assert_eq!(bodies.len(), 2);
    assert!(bodies[1].contains(":agent is not an AMR role"), "{}", bodies[1]);
    assert!(bodies[0].contains("Sentence: The boy wants."));
    assert!(bodies[0].contains("\"temperature\":0.0") || bodies[0].contains("\"temperature\":0"), "{}", bodies[0]);
}

#[test]
fn after_the_rounds_a_deterministic_repair_takes_over() {
    let (url, bodies) = serve(vec!["Here you go:\n(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b"], 200);
    let parser = LlmAmrParser::new(client(&url), config()).unwrap();
    let p = parser.parse("The boy wants to go.").unwrap();
    assert_eq!(p.attempts, 3, "two repair rounds after the first answer");
    let r = p.repairs.unwrap();
    assert!(r.trimmed && r.closed == 2, "{r:?}");
    assert_eq!(bodies.count(), 3);
    let block = p.block("u1", "The boy wants to go.", "llm", Some("scripted"));
    assert!(block.contains("::parser llm ::model scripted ::attempts 3 ::repaired"), "{block}");
}

#[test]
fn garbage_is_a_typed_error_and_no_graph_passes() {
    let (url, _) = serve(vec!["I am sorry, I cannot draw graphs."], 200);
    let parser = LlmAmrParser::new(client(&url), config()).unwrap();
    match parser.parse("Hello.") {
        Err(Error::Invalid { attempts: 3, sentence, .. }) => assert_eq!(sentence, "Hello."),
        other => panic!("{other:?}"),
    }
    // Two graphs for one sentence never pass as they are: the repair keeps the first and says so.
    let (url, _) = serve(vec!["(a / a)\n(b / b)"], 200);
    let parser = LlmAmrParser::new(client(&url), config()).unwrap();
    let p = parser.parse("Two.").unwrap();
    assert_eq!(p.penman, "(a / a)");
    assert!(p.repairs.is_some_and(|r| r.trimmed));
}

#[test]
fn an_endpoint_failure_is_an_llm_error_and_empty_text_needs_no_call() {
    let (url, bodies) = serve(vec!["{}"], 500);
    let parser = LlmAmrParser::new(client(&url), config()).unwrap();
    assert!(matches!(parser.parse("Hi."), Err(Error::Llm(_))));
    let before = bodies.count();
    assert_eq!(parser.parse(" ... ").unwrap().penman, "(a / amr-empty)");
    assert_eq!(bodies.count(), before);
}

#[test]
fn a_second_run_is_served_from_the_cache() {
    let (url, bodies) = serve(vec!["(w / want-01 :agent (b / boy))", "(w / want-01 :ARG0 (b / boy))", "(g / go-02)"], 200);
    let dir = std::env::temp_dir().join(format!("dialeval-amr-parse-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = || {
        let parser = LlmAmrParser::new(CachedClient::new(client(&url), dir.clone()).unwrap(), config()).unwrap();
        parser.parse_batch(&["The boy wants.", "Go!"]).into_iter().map(|r| r.unwrap().penman).collect::<Vec<_>>()
    };
    let first = run();
    let calls = bodies.count();
    assert_eq!(calls, 3);
    assert_eq!(run(), first);
    assert_eq!(bodies.count(), calls, "the resumed run made no call");
    let _ = std::fs::remove_dir_all(&dir);
}
