//! An AMR parser on any OpenAI-compatible endpoint: the AMR conventions and a few gold examples
//! in the prompt, temperature 0, every answer validated, invalid ones sent back with the exact
//! defect for a bounded number of rounds, then repaired deterministically, then a typed error.
//! With a [`CachedClient`](dialeval_llm_prompt::CachedClient) a killed run resumes without
//! repeating a call (every round's request is deterministic).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use dialeval_llm_prompt::ChatClient;
use dialeval_llm_prompt::client::{ChatRequest, Message};

use crate::error::{Error, Invalid, Result};
use crate::repair::{Repairs, collapse_runaway, repair};
use crate::validate::validate;
use crate::{AmrParser, Parsed, empty_sentence_graph};

/// The conventions the model is told (the AMR guidelines in brief).
pub const CONVENTIONS: &str = "You are an expert AMR (Abstract Meaning Representation) annotator. Write the AMR graph of the sentence in PENMAN notation, following the AMR guidelines:
- every node is (variable / concept); variables are short lowercase names (w, b, b2), each defined once; refer back to a node by its variable alone (re-entrancy);
- events and states are PropBank frames with a sense number (want-01, go-02, say-01) and take :ARG0, :ARG1, … as in PropBank;
- other roles: :mod, :domain, :poss, :location, :time, :manner, :purpose, :cause, :condition, :quant, :degree, :duration, :frequency, :instrument, :topic, :beneficiary, :accompanier, :source, :destination, :direction, :path, :part, :example, :polarity, :mode, :polite, :value, :unit, :li;
- negation is :polarity -; questions use amr-unknown or :mode interrogative; commands :mode imperative;
- names are (p / person :name (n / name :op1 \"John\" :op2 \"Smith\")); numbers and dates are values (date-entity :year 2020);
- coordination is (a / and :op1 … :op2 …); several sentences are (m / multi-sentence :snt1 … :snt2 …);
- inverse roles (:ARG0-of) attach a node to an event it takes part in; drop articles, auxiliaries and punctuation.
Answer with the graph only: no explanation, no code fences.";

/// The Little Prince gold graphs the examples are chosen from: the first 40 sentences of the ISI
/// AMR Bank v3.0 (`data/amr/little-prince-v3.0-first40.amr.txt`, ids lpp_1943.1–40), none of
/// which is in the Little Prince test split (lpp_1943.146–288) the parser is measured on.
const EXAMPLES: &str = include_str!("../data/little-prince-v3.0-first40.amr.txt");

/// Settings of [`LlmAmrParser`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LlmParserConfig {
    /// Model name sent to the endpoint.
    pub model: String,
    /// Gold examples in the prompt.
    pub examples: usize,
    /// Rounds in which an invalid answer is sent back with its defect.
    pub repair_rounds: usize,
    /// Completion length limit.
    pub max_tokens: u32,
}

impl Default for LlmParserConfig {
    fn default() -> Self {
        Self { model: "smollm2-135m".into(), examples: 3, repair_rounds: 2, max_tokens: 400 }
    }
}

/// The LLM parser.
#[derive(Debug)]
pub struct LlmAmrParser<C> {
    client: C,
    config: LlmParserConfig,
    shots: Vec<(String, String)>,
}

/// The gold examples, chosen deterministically: in file order, the first `k` graphs whose
/// sentence has 6 to 14 tokens and whose graph has 4 to 14 triples, one per sentence length, so
/// the examples differ in size. Returns `(id, sentence, graph)`.
pub fn examples(k: usize) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for block in EXAMPLES.split("\n\n") {
        let meta = |key: &str| block.lines().filter(|l| l.starts_with('#')).find_map(|l| l.split(&format!("::{key} ")).nth(1).map(|v| v.split(" ::").next().unwrap_or(v).trim().to_owned()));
        let (Some(id), Some(snt)) = (meta("id"), meta("snt")) else { continue };
        let graph: String = block.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
        let Ok(g) = validate(&graph) else { continue };
        let words = snt.split_whitespace().count();
        let triples = g.triples().len();
        if (6..=14).contains(&words) && (4..=14).contains(&triples) && !out.iter().any(|(_, s, _)| s.split_whitespace().count() == words) {
            out.push((id, snt, graph.trim().to_owned()));
        }
        if out.len() == k {
            break;
        }
    }
    out
}

impl<C: ChatClient> LlmAmrParser<C> {
    /// A parser asking `client`.
    ///
    /// # Errors
    /// [`Error::Config`] for a model name that is empty.
    pub fn new(client: C, config: LlmParserConfig) -> Result<Self> {
        if config.model.trim().is_empty() {
            return Err(Error::Config("the LLM parser needs a model name".into()));
        }
        let shots = examples(config.examples).into_iter().map(|(_, s, g)| (s, g)).collect();
        Ok(Self { client, config, shots })
    }

    /// The settings.
    pub fn config(&self) -> &LlmParserConfig {
        &self.config
    }

    fn request(&self, messages: Vec<Message>) -> ChatRequest {
        ChatRequest { model: self.config.model.clone(), messages, temperature: 0.0, max_tokens: self.config.max_tokens, top_logprobs: None, seed: None }
    }

    /// Parses one sentence (see the module docs).
    ///
    /// # Errors
    /// [`Error::Llm`] when the endpoint fails; [`Error::Invalid`] when no answer could be made
    /// valid.
    pub fn parse_one(&self, sentence: &str) -> Result<Parsed> {
        if let Some(p) = empty_sentence_graph(sentence) {
            return Ok(p);
        }
        let message = |role: &str, content: &str| Message { role: role.to_owned(), content: content.to_owned() };
        let mut messages = vec![message("system", CONVENTIONS)];
        for (s, g) in &self.shots {
            messages.push(message("user", &format!("Sentence: {s}")));
            messages.push(message("assistant", g));
        }
        messages.push(message("user", &format!("Sentence: {}", sentence.trim())));
        let mut answers = Vec::new();
        let mut last = Invalid::Empty;
        for round in 0..=self.config.repair_rounds {
            let answer = self.client.complete(&self.request(messages.clone()))?.content;
            match validate(&answer) {
                Ok(graph) => return Ok(without_runaway(Parsed { graph, penman: answer.trim().to_owned(), attempts: round + 1, repairs: None })),
                Err(e) => {
                    messages.push(message("assistant", &answer));
                    messages.push(message("user", &format!("That graph is invalid: {e}. Answer with the corrected graph only.")));
                    last = e;
                    answers.push(answer);
                }
            }
        }
        // The latest answer first: it had the most feedback.
        for answer in answers.iter().rev() {
            let (fixed, repairs) = repair(answer);
            if let Ok(graph) = validate(&fixed) {
                return Ok(without_runaway(Parsed { graph, penman: fixed, attempts: answers.len(), repairs: Some(repairs) }));
            }
        }
        Err(Error::Invalid { sentence: sentence.to_owned(), attempts: answers.len(), last })
    }
}

/// `parsed` with runaway repetition collapsed ([`collapse_runaway`]), counted in its repairs.
fn without_runaway(parsed: Parsed) -> Parsed {
    match collapse_runaway(&parsed.penman).and_then(|(text, n)| Some((validate(&text).ok()?, text, n))) {
        Some((graph, penman, collapsed)) => Parsed { graph, penman, repairs: Some(Repairs { collapsed, ..parsed.repairs.unwrap_or_default() }), ..parsed },
        None => parsed,
    }
}

impl<C: ChatClient> AmrParser for LlmAmrParser<C> {
    fn name(&self) -> &str {
        "llm"
    }

    fn model(&self) -> Option<&str> {
        Some(&self.config.model)
    }

    fn identity(&self) -> String {
        // FNV-1a over everything the prompt is made of: the conventions and the gold examples.
        let mut h = 0xcbf2_9ce4_8422_2325_u64;
        for part in std::iter::once(CONVENTIONS).chain(self.shots.iter().flat_map(|(s, g)| [s.as_str(), g.as_str()])) {
            for b in part.bytes().chain([0xff]) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        let c = &self.config;
        format!("llm endpoint=[{}] model={} examples={} repair_rounds={} max_tokens={} prompt={h:016x}", self.client.identity(), c.model, c.examples, c.repair_rounds, c.max_tokens)
    }

    /// Up to the client's concurrency in parallel; results in sentence order.
    fn parse_batch(&self, sentences: &[&str]) -> Vec<Result<Parsed>> {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Result<Parsed>>>> = Mutex::new((0..sentences.len()).map(|_| None).collect());
        let workers = self.client.concurrency().clamp(1, 64).min(sentences.len().max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    loop {
                        let k = next.fetch_add(1, Ordering::SeqCst);
                        let Some(sentence) = sentences.get(k) else { break };
                        let r = self.parse_one(sentence);
                        results.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[k] = Some(r);
                    }
                });
            }
        });
        let results = results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        results.into_iter().map(|r| r.unwrap_or_else(|| Err(Error::Config("a parser worker stopped before its sentence".into())))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_are_chosen_deterministically_outside_the_test_split() {
        let e = examples(3);
        assert_eq!(e.len(), 3);
        assert_eq!(e, examples(3));
        for (id, snt, graph) in &e {
            let n: u32 = id.trim_start_matches("lpp_1943.").parse().unwrap_or(u32::MAX);
            assert!(n <= 40, "{id} is not among the first 40 sentences");
            assert!(!snt.is_empty() && validate(graph).is_ok());
        }
    }
}
