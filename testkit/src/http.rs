//! A local HTTP server that answers with canned responses, for client tests that need an
//! endpoint misbehaving in a chosen way.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// A canned answer: status, extra headers, body (sent as `application/json`).
pub type Canned = (u16, Vec<(&'static str, String)>, String);

/// The bodies of the requests the server received, in order.
#[derive(Debug, Clone, Default)]
pub struct Requests(Arc<Mutex<Vec<String>>>);

impl Requests {
    /// Requests received so far.
    pub fn count(&self) -> usize {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }

    /// Their bodies.
    pub fn bodies(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// Serves `responses` in order (the last one repeats) on 127.0.0.1, one connection per request,
/// for up to 64 requests. Returns the base URL (`http://127.0.0.1:PORT/v1`) and the requests.
/// `GET …/models` (a client asking which model is served) is answered with
/// [`SERVED_MODEL`] and is neither counted nor given a canned response.
pub fn serve(responses: Vec<Canned>) -> (String, Requests) {
    assert!(!responses.is_empty(), "serve needs at least one response");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests = Requests::default();
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(64) {
            let Ok(mut stream) = stream else { continue };
            let (line, body) = read_request(&mut stream);
            if line.starts_with("GET ") && line.split_whitespace().nth(1).is_some_and(|p| p.ends_with("/models")) {
                respond(&mut stream, 200, &[], &format!("{{\"object\":\"list\",\"data\":[{{\"id\":\"{SERVED_MODEL}\"}}]}}"));
                continue;
            }
            let k = {
                let mut bodies = seen.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                bodies.push(body);
                bodies.len() - 1
            };
            let (status, headers, body) = &responses[k.min(responses.len() - 1)];
            respond(&mut stream, *status, headers, body);
        }
    });
    (url, requests)
}

/// Writes one `application/json` response and closes the connection.
fn respond(stream: &mut TcpStream, status: u16, headers: &[(&'static str, String)], body: &str) {
    let mut head = format!("HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    for (h, v) in headers {
        head.push_str(&format!("{h}: {v}\r\n"));
    }
    let _ = stream.write_all(format!("{head}\r\n{body}").as_bytes());
}

/// The model id [`serve`] lists at `GET …/models`.
pub const SERVED_MODEL: &str = "scripted-model";

/// Reads one request and returns its request line and body.
fn read_request(stream: &mut TcpStream) -> (String, String) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut len = 0;
    let mut first = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if first.is_empty() {
            first = line.trim_end().to_owned();
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    let _ = reader.read_exact(&mut body);
    (first, String::from_utf8_lossy(&body).into_owned())
}
