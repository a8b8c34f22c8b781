//! Turning an LLM answer into a score: parsing (JSON first, then documented textual forms),
//! G-Eval's probability-weighted score from `top_logprobs`, and sample averaging. An answer
//! that yields no score is [`Outcome::Unscorable`] with the raw text, never a silent 0.

use dialeval_common::Criterion;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::client::TokenLogprob;
use crate::error::{Error, Result};
use crate::prompt::Scale;

/// How a score was obtained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Method {
    /// Parsed from the answer text.
    Parsed,
    /// Expectation over the scale's tokens at the score position.
    Logprob {
        /// Probability mass of the scale's tokens found there (before renormalising).
        mass: f64,
    },
    /// Logprobs were requested but their mass was below the threshold (or absent): parsed.
    ParsedAfterLogprobFallback {
        /// The mass found (0 when no logprobs came back).
        mass: f64,
    },
    /// Mean of several sampled answers.
    Sampled {
        /// Answers that gave a score.
        scored: usize,
        /// Answers requested.
        samples: usize,
        /// Standard deviation of the scored answers.
        std: f64,
    },
}

/// The result for one criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// A score on the scale.
    Scored {
        /// The score.
        value: f64,
        /// How it was obtained.
        #[serde(flatten)]
        method: Method,
    },
    /// No score could be read.
    Unscorable {
        /// The answer (or answers, joined) as returned.
        raw: String,
        /// Why no score was read.
        reason: String,
    },
}

impl Outcome {
    /// The score, if any.
    pub fn value(&self) -> Option<f64> {
        match self {
            Self::Scored { value, .. } => Some(*value),
            Self::Unscorable { .. } => None,
        }
    }
}

/// Finds the first balanced `{…}` JSON object in `text`.
fn first_json_object(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(off) = text[start..].find('{') {
        let open = start + off;
        let (mut depth, mut in_str, mut esc) = (0_i32, false, false);
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            if in_str {
                match (esc, b) {
                    (true, _) => esc = false,
                    (false, b'\\') => esc = true,
                    (false, b'"') => in_str = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_str = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if let Ok(v) = serde_json::from_str::<Value>(&text[open..=i]) {
                            return Some(v);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
        start = open + 1;
    }
    None
}

fn number_at(s: &str) -> Option<(f64, usize)> {
    let s_trim = s.trim_start();
    let skipped = s.len() - s_trim.len();
    let len = s_trim.char_indices().take_while(|(i, c)| c.is_ascii_digit() || (*c == '.' && *i > 0)).map(|(i, c)| i + c.len_utf8()).last()?;
    let text = s_trim[..len].trim_end_matches('.');
    text.parse().ok().map(|v| (v, skipped + text.len()))
}

fn json_value(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// What [`parse_score`] does with a number outside the scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OffScale {
    /// An error ([`Error::OutOfScale`]): the answer is unscorable.
    #[default]
    Reject,
    /// The nearest end of the scale.
    Clamp,
}

/// Reads a score for `criterion` from an answer: a JSON object's `<Criterion>` or `score`
/// field; then `<Criterion>: 4`, `Score: 4.5`, `4/5` (denominator = the scale maximum), or an
/// answer that is just a number. `Ok(None)` when none of these forms is present.
///
/// # Errors
/// [`Error::OutOfScale`] for a number outside the scale with [`OffScale::Reject`].
pub fn parse_score(text: &str, criterion: Criterion, scale: Scale, off_scale: OffScale) -> Result<Option<f64>> {
    let found = find_score(text, criterion, scale);
    match found {
        Some(v) if scale.contains(v) => Ok(Some(v)),
        Some(v) if off_scale == OffScale::Clamp => Ok(Some(v.clamp(f64::from(scale.min()), f64::from(scale.max())))),
        Some(v) => Err(Error::OutOfScale { value: v, min: scale.min(), max: scale.max() }),
        None => Ok(None),
    }
}

fn find_score(text: &str, criterion: Criterion, scale: Scale) -> Option<f64> {
    let name = criterion.name();
    if let Some(Value::Object(map)) = first_json_object(text) {
        let by_key = |key: &str| map.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).and_then(|(_, v)| json_value(v));
        if let Some(v) = by_key(name).or_else(|| by_key("score")) {
            return Some(v);
        }
    }
    let lower = text.to_lowercase();
    for label in [name.to_lowercase(), "score".to_owned(), "rating".to_owned()] {
        let mut from = 0;
        while let Some(at) = lower[from..].find(&label) {
            let after = &lower[from + at + label.len()..];
            // `**Coherence**: 4`, and a JSON key cut off before its object closes (`"Coherence": 4,`).
            let after = after.trim_start_matches(['*', ' ', '"', '\'']);
            let after = after.strip_prefix(':').or_else(|| after.strip_prefix('=')).or_else(|| after.strip_prefix(" is")).or_else(|| after.strip_prefix("is"));
            if let Some((v, _)) = after.and_then(|a| number_at(a.trim_start_matches('*'))) {
                return Some(v);
            }
            from += at + label.len();
        }
    }
    // `4/5`
    for (i, _) in lower.match_indices('/') {
        let before = lower[..i].trim_end();
        let digits = before.len() - before.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.').len();
        if digits > 0
            && let (Ok(v), Some((den, _))) = (before[before.len() - digits..].parse::<f64>(), number_at(&lower[i + 1..]))
            && (den - f64::from(scale.max())).abs() < 1e-9
        {
            return Some(v);
        }
    }
    let bare = text.trim().trim_end_matches('.');
    bare.parse().ok()
}

/// G-Eval's probability-weighted score: at the first generated token that is a score on the
/// scale, sums the probabilities of the scale's values among the `top_logprobs` (merging
/// spellings such as `4` and ` 4`), renormalises and returns `(expectation, mass)`.
/// `None` when no generated token is a score.
pub fn logprob_score(tokens: &[TokenLogprob], scale: Scale) -> Option<(f64, f64)> {
    let score_of = |t: &str| -> Option<u8> { t.trim().parse::<u8>().ok().filter(|v| (scale.min()..=scale.max()).contains(v)) };
    let position = tokens.iter().find(|t| score_of(&t.token).is_some())?;
    let mut probs = vec![0.0_f64; usize::from(scale.max()) + 1];
    let alternatives: Vec<(&str, f64)> = if position.top.is_empty() { vec![(position.token.as_str(), position.logprob)] } else { position.top.iter().map(|(t, l)| (t.as_str(), *l)).collect() };
    for (t, lp) in alternatives {
        if let Some(v) = score_of(t) {
            probs[usize::from(v)] += lp.exp();
        }
    }
    let mass: f64 = probs.iter().sum();
    if mass <= 0.0 {
        return None;
    }
    let expectation = probs.iter().enumerate().map(|(v, p)| v as f64 * p).sum::<f64>() / mass;
    Some((expectation, mass))
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn p(text: &str) -> Option<f64> {
        parse_score(text, Criterion::Coherence, Scale::default(), OffScale::Reject).unwrap()
    }

    #[test]
    fn documented_forms_parse() {
        assert_eq!(p(r#"{"Coherence": 4}"#), Some(4.0));
        assert_eq!(p(r#"Sure! {"score": "3.5"} done"#), Some(3.5));
        assert_eq!(p("Coherence: 4"), Some(4.0));
        assert_eq!(p("**Coherence**: 2"), Some(2.0));
        assert_eq!(p("I'd say the score is 5."), Some(5.0));
        assert_eq!(p("Score: 4.5"), Some(4.5));
        assert_eq!(p("It deserves 3/5 overall"), Some(3.0));
        assert_eq!(p(" 2 "), Some(2.0));
        // A JSON answer cut off by the completion limit still names its scores.
        assert_eq!(p("{\n  \"Naturalness\": 4,\n  \"Coherence\": 3,\n  \"Engagingness\": "), Some(3.0));
        assert_eq!(p("The response is fine."), None);
        assert_eq!(p("I rate it 7/10"), None, "a denominator other than the scale's is not a score");
    }

    #[test]
    fn out_of_scale_is_an_error_unless_clamped() {
        assert!(matches!(parse_score("Coherence: 9", Criterion::Coherence, Scale::default(), OffScale::Reject), Err(Error::OutOfScale { .. })));
        assert_eq!(parse_score("Coherence: 9", Criterion::Coherence, Scale::default(), OffScale::Clamp).unwrap(), Some(5.0));
    }

    #[test]
    fn logprob_expectation_by_hand() {
        let tok = |t: &str, lp: f64, top: Vec<(&str, f64)>| TokenLogprob { token: t.into(), logprob: lp, top: top.into_iter().map(|(a, b)| (a.to_owned(), b)).collect() };
        let tokens = vec![
            tok("Co", -0.1, vec![]),
            tok("herence", -0.01, vec![]),
            tok(":", -0.01, vec![]),
            tok(" 4", 0.6_f64.ln(), vec![(" 4", 0.6_f64.ln()), ("4", 0.1_f64.ln()), (" 3", 0.2_f64.ln()), (" seven", 0.05_f64.ln())]),
        ];
        let (value, mass) = logprob_score(&tokens, Scale::default()).unwrap();
        assert!((mass - 0.9).abs() < 1e-12);
        assert!((value - (4.0 * 0.7 + 3.0 * 0.2) / 0.9).abs() < 1e-12);
        assert!(logprob_score(&tokens[..3], Scale::default()).is_none());
    }
}
