//! The OpenAI-compatible client against local misbehaving endpoints: connection refused,
//! timeout, 500 then success, 429 with Retry-After, malformed JSON, empty choices.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use dialeval_llm_prompt::client::{ChatClient, ChatRequest, Message, OpenAiClient, OpenAiConfig};
use dialeval_llm_prompt::{CachedClient, Error};

const OK_BODY: &str = r#"{"choices":[{"message":{"role":"assistant","content":"Coherence: 4"}}],"usage":{"prompt_tokens":10,"completion_tokens":3}}"#;

/// A canned answer: status, extra headers, body.
type Canned = (u16, Vec<(&'static str, String)>, String);

/// Serves canned HTTP responses in order (the last one repeats), counting requests.
fn serve(responses: Vec<Canned>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(20) {
            let Ok(mut stream) = stream else { continue };
            read_request(&mut stream);
            let k = counter.fetch_add(1, Ordering::SeqCst);
            let (status, headers, body) = &responses[k.min(responses.len() - 1)];
            let mut head = format!("HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
            for (h, v) in headers {
                head.push_str(&format!("{h}: {v}\r\n"));
            }
            let _ = stream.write_all(format!("{head}\r\n{body}").as_bytes());
        }
    });
    (url, hits)
}

fn read_request(stream: &mut TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut len = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    let _ = reader.read_exact(&mut body);
}

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
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = client(&format!("http://127.0.0.1:{port}/v1"), 500, 2).complete(&request()).unwrap_err();
    assert!(matches!(err, Error::Transport { attempts: 3, .. }), "{err}");
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
    assert_eq!(hits.load(Ordering::SeqCst), 3);
}

#[test]
fn rate_limit_honours_retry_after() {
    let (url, hits) = serve(vec![(429, vec![("Retry-After", "0.3".into())], "{}".into()), (200, vec![], OK_BODY.into())]);
    let started = Instant::now();
    let r = client(&url, 2000, 2).complete(&request()).unwrap();
    assert_eq!(r.content, "Coherence: 4");
    assert!(started.elapsed() >= Duration::from_millis(200), "waited {:?}", started.elapsed());
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[test]
fn client_errors_are_not_retried() {
    let (url, hits) = serve(vec![(400, vec![], "{\"error\":\"bad request\"}".into())]);
    let err = client(&url, 2000, 3).complete(&request()).unwrap_err();
    assert!(matches!(err, Error::Status { status: 400, attempts: 1, .. }), "{err}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
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
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    let mut other = request();
    other.seed = Some(1);
    assert!(!cached.complete(&other).unwrap().cached, "a different request is a different key");
    let _ = std::fs::remove_dir_all(dir);
}
