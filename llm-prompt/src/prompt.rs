//! Prompt templates: one per criterion with the AMR paper's definitions, a multi-criteria
//! (LLM-Eval style) template, and optional blocks for knowledge, the SLM score and the AMR
//! graphs. Rendering is a safe substitution of `{{slot}}` markers in the *template* only:
//! values are inserted verbatim, so braces in dialogue text are never interpreted.

use std::collections::BTreeMap;
use std::path::Path;

use dialeval_common::Criterion;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Which information a prompt carries, after the paper's ablations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// SLM score and AMR graphs.
    Full,
    /// AMR graphs, no SLM score.
    NoSlm,
    /// SLM score, no AMR graphs.
    NoAmr,
    /// Neither (a G-Eval-style baseline).
    Plain,
    /// All criteria in one call with a JSON answer (LLM-Eval style), with SLM score and AMR.
    Multi,
}

impl Variant {
    /// All variants.
    pub const ALL: [Self; 5] = [Self::Full, Self::NoSlm, Self::NoAmr, Self::Plain, Self::Multi];

    /// Whether the prompt shows the SLM's probability ([`PromptInput::slm_score`]).
    pub fn uses_slm(self) -> bool {
        matches!(self, Self::Full | Self::NoAmr | Self::Multi)
    }

    /// Whether the prompt shows the AMR graphs.
    pub fn uses_amr(self) -> bool {
        matches!(self, Self::Full | Self::NoSlm | Self::Multi)
    }
}

impl std::str::FromStr for Variant {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "full" => Self::Full,
            "no-slm" => Self::NoSlm,
            "no-amr" => Self::NoAmr,
            "plain" => Self::Plain,
            "multi" => Self::Multi,
            other => return Err(Error::Config(format!("unknown variant {other:?} (full, no-slm, no-amr, plain, multi)"))),
        })
    }
}

/// How a prompt is laid out: the variant, the rating scale it asks for and its length budget
/// in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// What the prompt holds besides the dialogue.
    pub variant: Variant,
    /// The scale the answer is asked on.
    pub scale: Scale,
    /// The longest prompt (system and user message together), in characters.
    pub budget_chars: usize,
}

impl Layout {
    /// `variant` on the default scale, within 12,000 characters (the judge's default).
    pub fn new(variant: Variant) -> Self {
        Self { variant, scale: Scale::default(), budget_chars: 12_000 }
    }

    /// The same, within `budget_chars`.
    #[must_use]
    pub fn within(self, budget_chars: usize) -> Self {
        Self { budget_chars, ..self }
    }
}

/// A rating scale, validated: `min < max ≤ 9` so that scores are single tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scale {
    min: u8,
    max: u8,
}

impl Scale {
    /// A scale from `min` to `max`.
    ///
    /// # Errors
    /// [`Error::Config`] unless `min < max ≤ 9`.
    pub fn new(min: u8, max: u8) -> Result<Self> {
        if min < max && max <= 9 { Ok(Self { min, max }) } else { Err(Error::Config(format!("scale {min}-{max}: need min < max <= 9"))) }
    }

    /// Lowest score.
    pub fn min(self) -> u8 {
        self.min
    }

    /// Highest score.
    pub fn max(self) -> u8 {
        self.max
    }

    /// Whether `v` lies on the scale.
    pub fn contains(self, v: f64) -> bool {
        v >= f64::from(self.min) && v <= f64::from(self.max)
    }
}

impl Default for Scale {
    /// 1–5.
    fn default() -> Self {
        Self { min: 1, max: 5 }
    }
}

/// What a prompt is about: one dialogue turn to judge.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptInput {
    /// Context turns, oldest first, with speakers when known.
    pub context: Vec<(Option<String>, String)>,
    /// The response to judge.
    pub response: String,
    /// Optional grounding knowledge.
    pub knowledge: Option<String>,
    /// The SLM's probability that the response is a good continuation.
    pub slm_score: Option<f64>,
    /// PENMAN (or linearised) graphs of the context turns, oldest first.
    pub context_amr: Vec<String>,
    /// PENMAN (or linearised) graph of the response.
    pub response_amr: Option<String>,
}

/// What the length budget removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Truncation {
    /// Context turns dropped, oldest first.
    pub dropped_turns: usize,
    /// Context graphs dropped, oldest first.
    pub dropped_context_graphs: usize,
    /// Whether the response graph was dropped.
    pub dropped_response_graph: bool,
}

/// A rendered prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// The system message.
    pub system: String,
    /// The user message.
    pub user: String,
    /// What the budget removed.
    pub truncation: Truncation,
}

/// A template with `{{slot}}` markers, checked against the allowed slots at load time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    name: String,
    text: String,
}

const MAIN_SLOTS: [&str; 7] = ["scale_min", "scale_max", "context", "knowledge_block", "response", "slm_block", "amr_block"];

impl Template {
    /// Parses `text`, allowing only `slots`.
    ///
    /// # Errors
    /// [`Error::Template`] for an unknown or unterminated slot.
    pub fn new(name: &str, text: &str, slots: &[&str]) -> Result<Self> {
        let mut rest = text;
        while let Some(at) = rest.find("{{") {
            let after = &rest[at + 2..];
            let end = after.find("}}").ok_or_else(|| Error::Template { name: name.to_owned(), problem: "unterminated {{".into() })?;
            let slot = after[..end].trim();
            if !slots.contains(&slot) {
                return Err(Error::Template { name: name.to_owned(), problem: format!("unknown slot {{{{{slot}}}}} (allowed: {})", slots.join(", ")) });
            }
            rest = &after[end + 2..];
        }
        Ok(Self { name: name.to_owned(), text: text.to_owned() })
    }

    /// Fills the slots; values are inserted verbatim.
    pub fn render(&self, values: &BTreeMap<&str, String>) -> String {
        let mut out = String::with_capacity(self.text.len() + 256);
        let mut rest = self.text.as_str();
        while let Some(at) = rest.find("{{") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let end = after.find("}}").unwrap_or(after.len());
            if let Some(v) = values.get(after[..end].trim()) {
                out.push_str(v);
            }
            rest = after.get(end + 2..).unwrap_or("");
        }
        out.push_str(rest);
        out
    }
}

/// The full set of templates.
#[derive(Debug, Clone)]
pub struct Templates {
    criteria: BTreeMap<Criterion, Template>,
    multi: Template,
    slm: Template,
    amr: Template,
    system: String,
}

const FILES: [(&str, &str); 8] = [
    ("naturalness", include_str!("../templates/naturalness.txt")),
    ("coherence", include_str!("../templates/coherence.txt")),
    ("engagingness", include_str!("../templates/engagingness.txt")),
    ("groundedness", include_str!("../templates/groundedness.txt")),
    ("multi", include_str!("../templates/multi.txt")),
    ("slm", include_str!("../templates/slm.txt")),
    ("amr", include_str!("../templates/amr.txt")),
    ("system", include_str!("../templates/system.txt")),
];

impl Templates {
    /// The templates shipped with the crate (`llm-prompt/templates/*.txt`).
    ///
    /// # Errors
    /// Never for the shipped files (a test checks them); kept fallible like [`Templates::from_dir`].
    pub fn builtin() -> Result<Self> {
        Self::from_texts(|name| Ok(FILES.iter().find(|(n, _)| *n == name).map(|(_, t)| (*t).to_owned())))
    }

    /// The shipped templates, with any of the same file names in `dir` (`coherence.txt`, …,
    /// `system.txt`) replacing them.
    ///
    /// # Errors
    /// An unreadable file or an invalid template.
    pub fn from_dir(dir: &Path) -> Result<Self> {
        Self::from_texts(|name| {
            let path = dir.join(format!("{name}.txt"));
            if path.is_file() {
                std::fs::read_to_string(&path).map(Some).map_err(|e| Error::Template { name: path.display().to_string(), problem: e.to_string() })
            } else {
                Ok(FILES.iter().find(|(n, _)| *n == name).map(|(_, t)| (*t).to_owned()))
            }
        })
    }

    /// sha256 (hex) of every template's name and text and the system message: what a cache of
    /// judgements made with these templates must be keyed by.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let mut add = |name: &str, text: &str| {
            h.update((name.len() as u64).to_le_bytes());
            h.update(name.as_bytes());
            h.update((text.len() as u64).to_le_bytes());
            h.update(text.as_bytes());
        };
        for (c, t) in &self.criteria {
            add(c.name(), &t.text);
        }
        add("multi", &self.multi.text);
        add("slm", &self.slm.text);
        add("amr", &self.amr.text);
        add("system", &self.system);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn from_texts(get: impl Fn(&str) -> Result<Option<String>>) -> Result<Self> {
        let text = |name: &str| -> Result<String> { get(name)?.ok_or_else(|| Error::Template { name: name.to_owned(), problem: "missing".into() }) };
        let mut criteria = BTreeMap::new();
        for c in [Criterion::Naturalness, Criterion::Coherence, Criterion::Engagingness, Criterion::Groundedness] {
            let name = c.name().to_lowercase();
            criteria.insert(c, Template::new(&name, &text(&name)?, &MAIN_SLOTS)?);
        }
        Ok(Self {
            criteria,
            multi: Template::new("multi", &text("multi")?, &MAIN_SLOTS)?,
            slm: Template::new("slm", &text("slm")?, &["slm_score"])?,
            amr: Template::new("amr", &text("amr")?, &["context_amr", "response_amr"])?,
            system: text("system")?.trim().to_owned(),
        })
    }

    /// Renders the prompt for one criterion (ignored by [`Variant::Multi`]) as `layout` says,
    /// fitting its budget by dropping the oldest context turns, then the oldest context graphs,
    /// then the response graph.
    ///
    /// # Errors
    /// [`Error::Config`] for a criterion without a template (Overall, Understandable) in a
    /// single-criterion variant; [`Error::TooLong`] when even the smallest prompt is too long.
    pub fn render(&self, input: &PromptInput, criterion: Criterion, layout: &Layout) -> Result<Prompt> {
        let Layout { variant, budget_chars, .. } = *layout;
        let template = if variant == Variant::Multi {
            &self.multi
        } else {
            self.criteria.get(&criterion).ok_or_else(|| Error::Config(format!("no prompt template for {criterion}: the judge rates the paper's four criteria")))?
        };
        let mut t = Truncation::default();
        loop {
            let user = self.fill(template, input, layout, &t);
            if user.chars().count() + self.system.chars().count() <= budget_chars {
                return Ok(Prompt { system: self.system.clone(), user, truncation: t });
            }
            let graphs = variant.uses_amr() && (input.response_amr.is_some() || !input.context_amr.is_empty());
            if t.dropped_turns + 1 < input.context.len() {
                t.dropped_turns += 1;
            } else if graphs && t.dropped_context_graphs < input.context_amr.len() {
                t.dropped_context_graphs += 1;
            } else if graphs && input.response_amr.is_some() && !t.dropped_response_graph {
                t.dropped_response_graph = true;
            } else {
                return Err(Error::TooLong { chars: user.chars().count(), budget: budget_chars });
            }
        }
    }

    fn fill(&self, template: &Template, input: &PromptInput, layout: &Layout, t: &Truncation) -> String {
        let Layout { variant, scale, .. } = *layout;
        let context = input.context[t.dropped_turns..]
            .iter()
            .map(|(speaker, text)| match speaker {
                Some(s) => format!("{s}: {}", text.trim()),
                None => format!("- {}", text.trim()),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let mut v: BTreeMap<&str, String> = BTreeMap::new();
        v.insert("scale_min", scale.min.to_string());
        v.insert("scale_max", scale.max.to_string());
        v.insert("context", if context.is_empty() { "(none)".into() } else { context });
        v.insert("response", input.response.trim().to_owned());
        v.insert("knowledge_block", input.knowledge.as_ref().map_or_else(String::new, |k| format!("\nKnowledge:\n{}\n", k.trim())));
        v.insert(
            "slm_block",
            match (variant.uses_slm(), input.slm_score) {
                (true, Some(s)) => self.slm.render(&BTreeMap::from([("slm_score", format!("{s:.2}"))])),
                _ => String::new(),
            },
        );
        let context_graphs: Vec<&str> = input.context_amr[t.dropped_context_graphs.min(input.context_amr.len())..].iter().map(|g| g.trim()).collect();
        let response_graph = if t.dropped_response_graph { None } else { input.response_amr.as_deref() };
        v.insert(
            "amr_block",
            if variant.uses_amr() && (!context_graphs.is_empty() || response_graph.is_some()) {
                self.amr.render(&BTreeMap::from([
                    ("context_amr", if context_graphs.is_empty() { "(not available)".to_owned() } else { context_graphs.join("\n") }),
                    ("response_amr", response_graph.map_or_else(|| "(not available)".to_owned(), |g| g.trim().to_owned())),
                ]))
            } else {
                String::new()
            },
        );
        template.render(&v)
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn input() -> PromptInput {
        PromptInput {
            context: vec![(Some("A".into()), "Do you like {{tea}}?".into()), (None, "I do, with {milk}.".into())],
            response: "Me too! {{response}} is my favourite.".into(),
            knowledge: Some("A drinks tea daily.".into()),
            slm_score: Some(0.8312),
            context_amr: vec!["(l / like-01)".into(), "(d / do-02)".into()],
            response_amr: Some("(f / favor-01)".into()),
        }
    }

    #[test]
    fn every_criterion_and_variant_renders() {
        let t = Templates::builtin().unwrap();
        for c in [Criterion::Naturalness, Criterion::Coherence, Criterion::Engagingness, Criterion::Groundedness] {
            for v in Variant::ALL {
                let p = t.render(&input(), c, &Layout::new(v).within(100_000)).unwrap();
                assert!(p.user.contains("Me too! {{response}} is my favourite."), "braces in dialogue text stay verbatim");
                assert!(p.user.contains("A: Do you like {{tea}}?"));
                assert!(p.user.contains("1 (worst) to 5 (best)") || v == Variant::Multi);
                assert_eq!(p.user.contains("0.83"), matches!(v, Variant::Full | Variant::NoAmr | Variant::Multi), "{c} {v:?}");
                assert_eq!(p.user.contains("(f / favor-01)"), matches!(v, Variant::Full | Variant::NoSlm | Variant::Multi), "{c} {v:?}");
                assert!(p.user.contains("A drinks tea daily."));
            }
        }
        assert!(t.render(&input(), Criterion::Overall, &Layout::new(Variant::Full).within(100_000)).is_err());
    }

    #[test]
    fn budget_drops_oldest_turns_then_graphs() {
        let t = Templates::builtin().unwrap();
        let full = t.render(&input(), Criterion::Coherence, &Layout::new(Variant::Full).within(100_000)).unwrap();
        let budget = full.user.chars().count() + full.system.chars().count() - 5;
        let p = t.render(&input(), Criterion::Coherence, &Layout::new(Variant::Full).within(budget)).unwrap();
        assert_eq!(p.truncation.dropped_turns, 1);
        assert!(!p.user.contains("Do you like"));
        let tiny = t.render(&input(), Criterion::Coherence, &Layout::new(Variant::Full).within(budget - 60)).unwrap();
        assert!(tiny.truncation.dropped_context_graphs >= 1);
        assert!(matches!(t.render(&input(), Criterion::Coherence, &Layout::new(Variant::Full).within(50)), Err(Error::TooLong { .. })));
    }

    #[test]
    fn templates_are_validated() {
        assert!(Template::new("x", "{{nope}}", &MAIN_SLOTS).is_err());
        assert!(Template::new("x", "{{context", &MAIN_SLOTS).is_err());
        assert!(Scale::new(5, 1).is_err());
        assert!("sideways".parse::<Variant>().is_err());
    }
}
