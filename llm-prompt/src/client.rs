//! Chat-completion clients: a small blocking trait, an OpenAI-compatible implementation (OpenAI,
//! vLLM, llama.cpp's server, Ollama) with retries, backoff and a concurrency limit, and an
//! on-disk cache that makes long runs resumable.

use std::path::PathBuf;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// A chat-completion request. Every field takes part in the cache key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Model name.
    pub model: String,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Sampling temperature.
    pub temperature: f64,
    /// Completion length limit.
    pub max_tokens: u32,
    /// Ask for `top_logprobs` alternatives per generated token (up to 20); `None`: no logprobs.
    pub top_logprobs: Option<u8>,
    /// Sampling seed, where the server honours one (also separates repeated samples in the cache).
    pub seed: Option<u64>,
}

/// A generated token with its log-probability and the most likely alternatives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    /// The token text.
    pub token: String,
    /// Its natural-log probability (≤ 0).
    pub logprob: f64,
    /// Alternatives at this position: `(token, logprob)`.
    pub top: Vec<(String, f64)>,
}

/// A chat-completion answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant message.
    pub content: String,
    /// Per-token log-probabilities, when requested and returned.
    pub logprobs: Option<Vec<TokenLogprob>>,
    /// Prompt tokens, when reported.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens, when reported.
    pub completion_tokens: Option<u64>,
    /// Wall time of the call in milliseconds (0 when served from the cache).
    pub latency_ms: f64,
    /// Whether the answer came from the cache.
    pub cached: bool,
}

/// Anything that answers chat requests.
pub trait ChatClient: Send + Sync {
    /// Sends one request.
    ///
    /// # Errors
    /// Transport, status or protocol errors.
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse>;

    /// How many requests may run at once (used by batch judging).
    fn concurrency(&self) -> usize {
        1
    }

    /// Who answers: for a served endpoint its normalised base URL and the model identity the
    /// server reports. [`CachedClient`] keys every answer by it, so two servers serving the
    /// same model name never share answers. Empty for a client with no server behind it; a
    /// wrapper (a counter, a rate limiter) forwards its inner client's.
    fn identity(&self) -> String {
        String::new()
    }
}

/// A reference, box or `Arc` of a client is the client.
macro_rules! forward_client {
    ($($pointer:ty),+) => {$(
        impl<C: ChatClient + ?Sized> ChatClient for $pointer {
            fn complete(&self, request: &ChatRequest) -> Result<ChatResponse> {
                (**self).complete(request)
            }
            fn concurrency(&self) -> usize {
                (**self).concurrency()
            }
            fn identity(&self) -> String {
                (**self).identity()
            }
        }
    )+};
}

forward_client!(&C, Box<C>, std::sync::Arc<C>);

/// Settings of [`OpenAiClient`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenAiConfig {
    /// Base URL up to `/v1`, e.g. `http://127.0.0.1:8089/v1` or `https://api.openai.com/v1`.
    pub base_url: String,
    /// Environment variable holding the API key (sent as a bearer token; never logged).
    pub api_key_env: Option<String>,
    /// Timeout of one attempt.
    pub timeout: Duration,
    /// Retries after the first attempt, on 429, 5xx and connection errors.
    pub max_retries: u32,
    /// First backoff; doubled each retry, with up to 100% random jitter.
    pub backoff: Duration,
    /// Longest backoff.
    pub max_backoff: Duration,
    /// Requests in flight at once.
    pub concurrency: usize,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8089/v1".into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            timeout: Duration::from_secs(120),
            max_retries: 4,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            concurrency: 1,
        }
    }
}

/// A counting semaphore.
struct Limit {
    free: Mutex<usize>,
    cv: Condvar,
}

impl Limit {
    fn acquire(&self) -> LimitGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *free -= 1;
        LimitGuard(self)
    }
}

struct LimitGuard<'a>(&'a Limit);

impl Drop for LimitGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
        self.0.cv.notify_one();
    }
}

/// An OpenAI-compatible `/chat/completions` client.
pub struct OpenAiClient {
    config: OpenAiConfig,
    agent: ureq::Agent,
    limit: Limit,
    jitter: Mutex<u64>,
    /// The models `GET /models` lists, asked once.
    served: std::sync::OnceLock<String>,
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key itself is read from the environment per request and never stored or printed.
        f.debug_struct("OpenAiClient").field("config", &self.config).finish_non_exhaustive()
    }
}

impl OpenAiClient {
    /// A client.
    ///
    /// # Errors
    /// [`Error::Config`] for an empty base URL or zero concurrency.
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        if config.base_url.trim().is_empty() || config.concurrency == 0 {
            return Err(Error::Config("base_url must be set and concurrency at least 1".into()));
        }
        let agent = ureq::AgentBuilder::new().timeout(config.timeout).build();
        let limit = Limit { free: Mutex::new(config.concurrency), cv: Condvar::new() };
        Ok(Self { config, agent, limit, jitter: Mutex::new(0x2545_F491_4F6C_DD1D), served: std::sync::OnceLock::new() })
    }

    /// `call` with the API key as a bearer token, when the configured variable holds one (read
    /// per request; never stored or printed).
    fn authorized(&self, call: ureq::Request) -> ureq::Request {
        match self.config.api_key_env.as_deref().and_then(|v| std::env::var(v).ok()).filter(|k| !k.is_empty()) {
            Some(key) => call.set("Authorization", &format!("Bearer {key}")),
            None => call,
        }
    }

    /// The base URL as the cache keys see it: trimmed, no trailing `/`, scheme and host in
    /// lower case (`HTTP://Host:8089/v1/` and `http://host:8089/v1` are one endpoint).
    pub fn normalised_base_url(&self) -> String {
        normalise_base_url(&self.config.base_url)
    }

    /// The ids of the models the server lists at `GET {base}/models`, sorted and joined by
    /// `,`; empty when it lists none or does not answer (asked once per client).
    pub fn served_models(&self) -> String {
        self.served
            .get_or_init(|| {
                let url = format!("{}/models", self.config.base_url.trim().trim_end_matches('/'));
                let listed = self.authorized(self.agent.get(&url).timeout(Duration::from_secs(10))).call().ok().and_then(|r| r.into_json::<Value>().ok());
                let mut ids: Vec<String> = listed
                    .as_ref()
                    .and_then(|v| v.get("data"))
                    .and_then(Value::as_array)
                    .map(|models| models.iter().filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned)).collect())
                    .unwrap_or_default();
                ids.sort();
                ids.join(",")
            })
            .clone()
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.config.base_url.trim_end_matches('/'))
    }

    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(d) = retry_after {
            return d.min(self.config.max_backoff);
        }
        let base = self.config.backoff.saturating_mul(1 << attempt.min(16)).min(self.config.max_backoff);
        let mut state = self.jitter.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let fraction = (*state >> 11) as f64 / (1u64 << 53) as f64;
        base.mul_f64(1.0 + fraction).min(self.config.max_backoff)
    }

    fn body(request: &ChatRequest) -> Value {
        let mut body = json!({
            "model": request.model,
            "messages": request.messages,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        });
        if let Some(k) = request.top_logprobs {
            body["logprobs"] = json!(true);
            body["top_logprobs"] = json!(k);
        }
        if let Some(seed) = request.seed {
            body["seed"] = json!(seed);
        }
        body
    }
}

fn parse_response(url: &str, v: &Value, latency_ms: f64) -> Result<ChatResponse> {
    let protocol = |problem: &str| Error::Protocol { url: url.to_owned(), problem: problem.to_owned() };
    let choice = v.get("choices").and_then(Value::as_array).and_then(|c| c.first()).ok_or_else(|| protocol("no `choices` in the answer"))?;
    let content = choice.pointer("/message/content").and_then(Value::as_str).ok_or_else(|| protocol("no `choices[0].message.content`"))?.to_owned();
    let logprobs = match choice.pointer("/logprobs/content") {
        Some(Value::Array(tokens)) => Some(
            tokens
                .iter()
                .map(|t| {
                    let token = t.get("token").and_then(Value::as_str).ok_or_else(|| protocol("logprob entry without `token`"))?.to_owned();
                    let logprob = t.get("logprob").and_then(Value::as_f64).ok_or_else(|| protocol("logprob entry without `logprob`"))?;
                    let top = t
                        .get("top_logprobs")
                        .and_then(Value::as_array)
                        .map(|alts| alts.iter().filter_map(|a| Some((a.get("token")?.as_str()?.to_owned(), a.get("logprob")?.as_f64()?))).collect())
                        .unwrap_or_default();
                    Ok(TokenLogprob { token, logprob, top })
                })
                .collect::<Result<Vec<_>>>()?,
        ),
        _ => None,
    };
    Ok(ChatResponse {
        content,
        logprobs,
        prompt_tokens: v.pointer("/usage/prompt_tokens").and_then(Value::as_u64),
        completion_tokens: v.pointer("/usage/completion_tokens").and_then(Value::as_u64),
        latency_ms,
        cached: false,
    })
}

impl ChatClient for OpenAiClient {
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let _slot = self.limit.acquire();
        let url = self.url();
        let body = Self::body(request);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let call = self.authorized(self.agent.post(&url).set("Content-Type", "application/json"));
            let started = Instant::now();
            let outcome = call.send_json(&body);
            let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
            let (retry, failure) = match outcome {
                Ok(resp) => {
                    let text = resp.into_string().map_err(|e| Error::Protocol { url: url.clone(), problem: format!("unreadable body: {e}") })?;
                    let v: Value = serde_json::from_str(&text).map_err(|e| Error::Protocol { url: url.clone(), problem: format!("body is not JSON ({e}): {}", snippet(&text)) })?;
                    return parse_response(&url, &v, latency_ms);
                }
                Err(ureq::Error::Status(status, resp)) => {
                    let retry_after = resp.header("Retry-After").and_then(|s| s.trim().parse::<f64>().ok()).map(Duration::from_secs_f64);
                    let body = resp.into_string().unwrap_or_default();
                    let err = Error::Status { url: url.clone(), status, attempts: attempt, body: snippet(&body) };
                    let retryable = status == 429 || (500..600).contains(&status);
                    (retryable.then_some(retry_after), err)
                }
                Err(ureq::Error::Transport(t)) => (Some(None), Error::Transport { url: url.clone(), attempts: attempt, message: t.to_string() }),
            };
            match retry {
                Some(after) if attempt <= self.config.max_retries => std::thread::sleep(self.backoff(attempt - 1, after)),
                _ => return Err(failure),
            }
        }
    }

    fn concurrency(&self) -> usize {
        self.config.concurrency
    }

    fn identity(&self) -> String {
        format!("openai-compatible {} models [{}]", self.normalised_base_url(), self.served_models())
    }
}

/// See [`OpenAiClient::normalised_base_url`].
fn normalise_base_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
            let path = if path.is_empty() { String::new() } else { format!("/{path}") };
            format!("{}://{}{path}", scheme.to_ascii_lowercase(), host.to_ascii_lowercase())
        }
        None => url.to_owned(),
    }
}

fn snippet(s: &str) -> String {
    s.chars().take(300).collect()
}

/// Wraps a client with an on-disk cache keyed by the SHA-256 of the answering server's
/// identity ([`ChatClient::identity`]: endpoint and served model) and the whole request: a
/// killed and restarted run repeats no finished call, and another server never replays this
/// one's answers. Entries are written atomically (temporary file,
/// then rename); an unreadable entry counts as a miss and is rewritten.
#[derive(Debug)]
pub struct CachedClient<C> {
    inner: C,
    dir: PathBuf,
}

impl<C: ChatClient> CachedClient<C> {
    /// Caches `inner`'s answers under `dir` (created when missing).
    ///
    /// # Errors
    /// [`Error::Cache`] when the folder cannot be created.
    pub fn new(inner: C, dir: impl Into<PathBuf>) -> Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|source| Error::Cache { path: dir.display().to_string(), source })?;
        Ok(Self { inner, dir })
    }

    /// The cache key of a request sent to the server `identity` ([`ChatClient::identity`]):
    /// sha256 of the identity and the request's JSON (model, messages, temperature, limits,
    /// logprobs, seed).
    ///
    /// # Errors
    /// [`Error::Config`] if the request cannot be serialised.
    pub fn key(identity: &str, request: &ChatRequest) -> Result<String> {
        let canonical = serde_json::to_vec(&(identity, request)).map_err(|e| Error::Config(format!("request not serialisable for the cache key: {e}")))?;
        Ok(Sha256::digest(&canonical).iter().map(|b| format!("{b:02x}")).collect())
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The wrapped client.
    pub fn inner(&self) -> &C {
        &self.inner
    }
}

impl<C: ChatClient> ChatClient for CachedClient<C> {
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let key = Self::key(&self.inner.identity(), request)?;
        let path = self.path(&key);
        if let Some(mut hit) = std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str::<ChatResponse>(&t).ok()) {
            hit.cached = true;
            hit.latency_ms = 0.0;
            return Ok(hit);
        }
        let response = self.inner.complete(request)?;
        let io = |source| Error::Cache { path: path.display().to_string(), source };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let text = serde_json::to_string(&response).map_err(|e| io(std::io::Error::other(e)))?;
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)?;
        Ok(response)
    }

    fn concurrency(&self) -> usize {
        self.inner.concurrency()
    }

    fn identity(&self) -> String {
        self.inner.identity()
    }
}
