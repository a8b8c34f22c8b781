//! LlmAmrParser against a local HTTP server that answers with crafted graphs: repair rounds
//! carry the exact defect, the deterministic repair takes over after them, garbage is a typed
//! error, the cache makes a second run call nothing, and an endpoint failure is an LLM error.
#![allow(clippy::panic, clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dialeval_amr_parse::{AmrParser, Error, LlmAmrParser, LlmParserConfig};
use dialeval_llm_prompt::{CachedClient, OpenAiClient, OpenAiConfig};

/// Serves the answers in order (the last repeats) and records every request body.
fn serve(answers: Vec<&'static str>, status: u16) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&bodies);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(50) {
            let Ok(mut stream) = stream else { continue };
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
            let k = {
                let mut s = seen.lock().unwrap();
                s.push(String::from_utf8_lossy(&body).into_owned());
                s.len() - 1
            };
            let content = answers[k.min(answers.len() - 1)];
            let reply = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string();
            let head = format!("HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", reply.len());
            let _ = stream.write_all(format!("{head}{reply}").as_bytes());
        }
    });
    (url, bodies)
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
    let bodies = bodies.lock().unwrap();
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
    assert_eq!(bodies.lock().unwrap().len(), 3);
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
    let before = bodies.lock().unwrap().len();
    assert_eq!(parser.parse(" ... ").unwrap().penman, "(a / amr-empty)");
    assert_eq!(bodies.lock().unwrap().len(), before);
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
    let calls = bodies.lock().unwrap().len();
    assert_eq!(calls, 3);
    assert_eq!(run(), first);
    assert_eq!(bodies.lock().unwrap().len(), calls, "the resumed run made no call");
    let _ = std::fs::remove_dir_all(&dir);
}
