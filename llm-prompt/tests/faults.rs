//! The OpenAI-compatible client against local misbehaving endpoints: connection refused,
//! timeout, 500 then success, 429 with Retry-After, malformed JSON, empty choices.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::net::TcpListener;
use std::time::{Duration, Instant};

use dialeval_llm_prompt::client::{ChatClient, ChatRequest, Message, OpenAiClient, OpenAiConfig};
use dialeval_llm_prompt::{CachedClient, Error};
use dialeval_testkit::http::serve;

const OK_BODY: &str = r#"{"choices":[{"message":{"role":"assistant","content":"Coherence: 4"}}],"usage":{"prompt_tokens":10,"completion_tokens":3}}"#;

fn client(url: &str, timeout_ms: u64, retries: u32) -> OpenAiClient {
    OpenAiClient::new(OpenAiConfig {
        base_url: url.to_owned(),
        api_key_env: None,
        timeout: Duration::from_millis(timeout_ms),
        max_retries: retries,
        backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(200),
        concurrency: 2,
    })
    .unwrap()
}

fn request() -> ChatRequest {
    ChatRequest { model: "m".into(), messages: vec![Message { role: "user".into(), content: "hi".into() }], temperature: 0.0, max_tokens: 8, top_logprobs: None, seed: None }
}

#[test]
fn connection_refused_is_a_transport_error_after_retries() {
    // A port is free once its listener is dropped, but another test of this binary may bind
    // the same ephemeral port before the client connects (CI saw it answer once). A port that
    // answered proves nothing about refusal, so such a port is given up for a fresh one.
    for _ in 0..8 {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        match client(&format!("http://127.0.0.1:{port}/v1"), 500, 2).complete(&request()) {
            Err(err) => {
                assert!(matches!(err, Error::Transport { attempts: 3, .. }), "{err}");
                return;
            }
            Ok(_) => continue,
        }
    }
    panic!("eight closed ports in a row answered: the client does not reach the address it is given");
}

#[test]
fn timeout_is_a_transport_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(2).collect();
        std::thread::sleep(Duration::from_secs(3));
        drop(held);
    });
    let started = Instant::now();
    let err = client(&url, 300, 1).complete(&request()).unwrap_err();
    assert!(matches!(err, Error::Transport { attempts: 2, .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn server_error_then_success_is_retried() {
    let (url, hits) = serve(vec![(500, vec![], "{\"error\":\"boom\"}".into()), (503, vec![], String::new()), (200, vec![], OK_BODY.into())]);
    let r = client(&url, 2000, 3).complete(&request()).unwrap();
    assert_eq!(r.content, "Coherence: 4");
    assert_eq!(r.completion_tokens, Some(3));
    assert_eq!(hits.count(), 3);
}

#[test]
fn rate_limit_honours_retry_after() {
    let (url, hits) = serve(vec![(429, vec![("Retry-After", "0.3".into())], "{}".into()), (200, vec![], OK_BODY.into())]);
    let started = Instant::now();
    let r = client(&url, 2000, 2).complete(&request()).unwrap();
    assert_eq!(r.content, "Coherence: 4");
    assert!(started.elapsed() >= Duration::from_millis(200), "waited {:?}", started.elapsed());
    assert_eq!(hits.count(), 2);
}

#[test]
fn client_errors_are_not_retried() {
    let (url, hits) = serve(vec![(400, vec![], "{\"error\":\"bad request\"}".into())]);
    let err = client(&url, 2000, 3).complete(&request()).unwrap_err();
    assert!(matches!(err, Error::Status { status: 400, attempts: 1, .. }), "{err}");
    assert_eq!(hits.count(), 1);
}

#[test]
fn malformed_bodies_are_protocol_errors() {
    let (url, _) = serve(vec![(200, vec![], "{\"choices\": [".into())]);
    assert!(matches!(client(&url, 2000, 0).complete(&request()).unwrap_err(), Error::Protocol { .. }));
    let (url, _) = serve(vec![(200, vec![], "{\"choices\": []}".into())]);
    let err = client(&url, 2000, 0).complete(&request()).unwrap_err();
    assert!(err.to_string().contains("choices"), "{err}");
}

#[test]
fn cache_answers_repeated_requests_without_calls() {
    let (url, hits) = serve(vec![(200, vec![], OK_BODY.into())]);
    let dir = std::env::temp_dir().join(format!("dialeval-cache-{}", std::process::id()));
    let cached = CachedClient::new(client(&url, 2000, 0), &dir).unwrap();
    let first = cached.complete(&request()).unwrap();
    let second = cached.complete(&request()).unwrap();
    assert!(!first.cached && second.cached);
    assert_eq!(first.content, second.content);
    assert_eq!(hits.count(), 1);
    let mut other = request();
    other.seed = Some(1);
    assert!(!cached.complete(&other).unwrap().cached, "a different request is a different key");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cached_answers_belong_to_the_server_that_gave_them() {
    const OTHER_BODY: &str = r#"{"choices":[{"message":{"role":"assistant","content":"Coherence: 1"}}]}"#;
    let (first_url, first_hits) = serve(vec![(200, vec![], OK_BODY.into())]);
    let (second_url, second_hits) = serve(vec![(200, vec![], OTHER_BODY.into())]);
    let dir = std::env::temp_dir().join(format!("dialeval-cache-endpoint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let first = CachedClient::new(client(&first_url, 2000, 0), &dir).unwrap();
    assert_eq!(first.complete(&request()).unwrap().content, "Coherence: 4");
    // Same model name, same request, same folder, another endpoint: asked, not replayed.
    let second = CachedClient::new(client(&second_url, 2000, 0), &dir).unwrap();
    let answer = second.complete(&request()).unwrap();
    assert!(!answer.cached);
    assert_eq!(answer.content, "Coherence: 1");
    assert_eq!((first_hits.count(), second_hits.count()), (1, 1));
    // Each server's answer is then served from the cache, to it alone.
    assert_eq!(first.complete(&request()).unwrap().content, "Coherence: 4");
    assert_eq!(second.complete(&request()).unwrap().content, "Coherence: 1");
    assert_eq!((first_hits.count(), second_hits.count()), (1, 1));
    // The identity is the normalised URL and the model the server lists.
    let id = client(&first_url.replace("http://", "HTTP://"), 2000, 0).identity();
    assert!(id.contains(&first_url) && id.contains(dialeval_testkit::http::SERVED_MODEL), "{id}");
    assert_eq!(client(&format!("{first_url}/"), 2000, 0).identity(), client(&first_url, 2000, 0).identity());
    let _ = std::fs::remove_dir_all(dir);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 16, ..proptest::prelude::ProptestConfig::default() })]

    /// Arbitrary bytes in every cache entry of a folder: read as a miss, asked again and
    /// rewritten, never a panic.
    #[test]
    fn damaged_cache_entries_are_asked_again(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200), case in proptest::prelude::any::<u64>()) {
        let (url, hits) = serve(vec![(200, vec![], OK_BODY.into())]);
        let dir = std::env::temp_dir().join(format!("dialeval-cache-bytes-{}-{case}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cached = CachedClient::new(client(&url, 2000, 0), &dir).unwrap();
        cached.complete(&request()).unwrap();
        let entries: Vec<_> = walk(&dir);
        proptest::prop_assert_eq!(entries.len(), 1);
        std::fs::write(&entries[0], &bytes).unwrap();
        let again = cached.complete(&request()).unwrap();
        proptest::prop_assert_eq!(again.content.as_str(), "Coherence: 4");
        proptest::prop_assert_eq!(hits.count(), 2, "the damaged entry was asked again");
        proptest::prop_assert!(cached.complete(&request()).unwrap().cached, "and rewritten");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Every file below `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out
}
