//! Metric families: metrics computed together from the same inputs and cached together.

use dialeval_datasets::DialogueItem;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::table::Column;

/// A family of metrics (BLEU + ROUGE-L + METEOR, the embedding metrics, …).
///
/// [`MetricFamily::settings`] returns everything the scores depend on besides the items
/// themselves: configurations, the identities of the files and models read (sha256 digests,
/// encoder fingerprints), resources found or missing (WordNet), seeds. The
/// [`Pipeline`](crate::Pipeline) keys its cache by a hash of the items and this value, so a
/// result is never reused after any of them changed.
pub trait MetricFamily {
    /// What the scores depend on besides the items.
    type Settings: Serialize;

    /// The family's name (`lexical`, `embedding`, …): its cache folder and its line in reports.
    fn name(&self) -> &str;

    /// The version of the family's own computation (`"lexical/2"`): part of every cache key, so
    /// a change to how the scores are computed (tokenisation, a search, a featuriser, which items
    /// are left out) must bump it, or old scores would be served for the new code. Required:
    /// a family cannot leave it out.
    fn version(&self) -> &'static str;

    /// See the trait docs.
    fn settings(&self) -> Self::Settings;

    /// Scores `items` (context, response, references and graphs attached), calling
    /// `progress(done, total)` on long work.
    ///
    /// The [`Pipeline`](crate::Pipeline) calls it once per chunk of the corpus, so a score of
    /// an item must depend on that item alone; what is relative to the corpus (BERT-RUBER's
    /// normalised hybrids) is done in [`MetricFamily::finish`].
    ///
    /// # Errors
    /// Whatever stops the family as a whole; an item the family cannot score is a `None` cell,
    /// and a family that cannot run here at all returns [`FamilyOutput::Skipped`].
    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput>;

    /// The columns and notes of the whole corpus from those its chunks gave (columns put
    /// together in item order, notes added up): what depends on the corpus as a whole (a
    /// normalisation over it, whether it has enough items for one) is decided here, never per
    /// chunk, so that no result depends on how the corpus was cut. The default keeps them as
    /// they are.
    ///
    /// # Errors
    /// What the family's corpus-level step can fail with.
    fn finish(&self, whole: Whole) -> Result<Whole> {
        Ok(whole)
    }

    /// The models the scores come from, named for people: the sentence encoder by name with its
    /// fingerprint, each checkpoint by folder with its sha256. The report's provenance lists
    /// them; the cache key does not hold them beyond what [`MetricFamily::settings`] holds (a
    /// name is not an identity). The default: none.
    fn models(&self) -> Vec<ModelUse> {
        Vec::new()
    }
}

/// A model a family's scores come from ([`MetricFamily::models`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ModelUse {
    /// What it is.
    pub kind: ModelKind,
    /// Its name: an encoder's (`all-mpnet-base-v2`), or a checkpoint's folder.
    pub name: String,
    /// What identifies it: an encoder's fingerprint (sha256 of its configuration, weights and
    /// tokenizer, 16 hex digits), a checkpoint's sha256.
    pub digest: String,
}

/// The kinds of [`ModelUse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// A pretrained sentence encoder.
    Encoder,
    /// A trained checkpoint.
    Checkpoint,
}

impl ModelUse {
    /// A pretrained encoder.
    pub fn encoder(name: impl Into<String>, fingerprint: impl Into<String>) -> Self {
        Self { kind: ModelKind::Encoder, name: name.into(), digest: fingerprint.into() }
    }

    /// A checkpoint in `dir` with this sha256.
    pub fn checkpoint(dir: &std::path::Path, sha256: impl Into<String>) -> Self {
        Self { kind: ModelKind::Checkpoint, name: dir.display().to_string(), digest: sha256.into() }
    }
}

/// A family's columns and notes over the whole corpus (what [`MetricFamily::finish`] takes and
/// gives).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Whole {
    /// One column per metric, one cell per item of the corpus.
    pub columns: Vec<Column>,
    /// The chunks' notes, added up.
    pub notes: Vec<Note>,
}

/// What a family produced.
#[derive(Debug, Clone, PartialEq)]
pub enum FamilyOutput {
    /// Scores.
    Scored(FamilyScores),
    /// Nothing in these items can be scored (none has a reference, say): every cell empty. On a
    /// chunk of the corpus the family's other chunks may still have scores; a corpus of which
    /// no chunk has any is reported as skipped, with the reason. The notes count these items as
    /// a scored chunk's would, so that the notes of the whole add up.
    NoneScored {
        /// Why, for the report.
        reason: String,
        /// What the family says of these items.
        notes: Vec<Note>,
    },
    /// The family cannot run here at all, and why (no model, no endpoint).
    Skipped(String),
}

/// What a reader of the report should know about a family's scores, in a form that adds up over
/// the chunks of a corpus ([`Note::merge`]): the pipeline scores chunk by chunk and reports the
/// notes of the whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Note {
    /// Words about the family or its inputs as a whole (a metric left out, a file's malformed
    /// blocks): the same in every chunk, kept once.
    Text {
        /// The note.
        text: String,
    },
    /// Counts, added over chunks: `{0}`, `{1}`, … in `template` are `counts[0]`, `counts[1]`, ….
    /// Not shown while the first count is 0.
    Count {
        /// The words, with the counts' places.
        template: String,
        /// The counts.
        counts: Vec<usize>,
    },
    /// Items named: `{n}` in `template` is how many, `{names}` the first `shown` names joined by
    /// `sep` and then `… (N in all)` ([`named_list`]). Only the first `shown` names are kept.
    Items {
        /// The words, with the places of the count and the names.
        template: String,
        /// The first names.
        names: Vec<String>,
        /// How many items in all.
        total: usize,
        /// Names shown.
        shown: usize,
        /// Between names.
        sep: String,
    },
}

impl Note {
    /// A note about the family as a whole.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// A note of counts (see [`Note::Count`]).
    pub fn count(template: impl Into<String>, counts: &[usize]) -> Self {
        Self::Count { template: template.into(), counts: counts.to_vec() }
    }

    /// A note naming the first `shown` of `names` (see [`Note::Items`]).
    pub fn items(template: impl Into<String>, names: &[impl AsRef<str>], shown: usize, sep: &str) -> Self {
        Self::Items { template: template.into(), names: names.iter().take(shown).map(|n| n.as_ref().to_owned()).collect(), total: names.len(), shown, sep: sep.to_owned() }
    }

    /// The note with `prefix` before its words.
    #[must_use]
    pub fn prefixed(self, prefix: &str) -> Self {
        match self {
            Self::Text { text } => Self::Text { text: format!("{prefix}{text}") },
            Self::Count { template, counts } => Self::Count { template: format!("{prefix}{template}"), counts },
            Self::Items { template, names, total, shown, sep } => Self::Items { template: format!("{prefix}{template}"), names, total, shown, sep },
        }
    }

    /// Whether the report shows it (a count of 0 or no item named is nothing to say).
    pub fn is_shown(&self) -> bool {
        match self {
            Self::Text { text } => !text.is_empty(),
            Self::Count { counts, .. } => counts.first().is_some_and(|&c| c > 0),
            Self::Items { total, .. } => *total > 0,
        }
    }

    /// Puts the names of an [`Note::Items`] note in the order of `position` (stable for equal
    /// positions) and keeps the first `shown`: after notes of shards, each naming its own first
    /// items, were merged, the names a single run over the corpus would have.
    pub fn order_names(&mut self, position: impl Fn(&str) -> usize) {
        if let Self::Items { names, shown, .. } = self {
            names.sort_by_key(|n| position(n));
            names.truncate(*shown);
        }
    }

    /// Adds `other` into `self` when both are the same note of two chunks (same words); returns
    /// `other` back otherwise.
    ///
    /// # Errors
    /// `other` itself, when it is another note.
    pub fn merge(&mut self, other: Self) -> std::result::Result<(), Self> {
        match (self, other) {
            (Self::Text { text }, Self::Text { text: t }) if *text == t => Ok(()),
            (Self::Count { template, counts }, Self::Count { template: t, counts: c }) if *template == t && counts.len() == c.len() => {
                counts.iter_mut().zip(c).for_each(|(a, b)| *a += b);
                Ok(())
            }
            (Self::Items { template, names, total, shown, sep }, Self::Items { template: t, names: more, total: k, sep: s, .. }) if *template == t && *sep == s => {
                let room = shown.saturating_sub(names.len());
                names.extend(more.into_iter().take(room));
                *total += k;
                Ok(())
            }
            (_, other) => Err(other),
        }
    }
}

impl From<String> for Note {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for Note {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Text { text } => f.write_str(text),
            Self::Count { template, counts } => {
                let mut out = template.clone();
                for (k, c) in counts.iter().enumerate() {
                    out = out.replace(&format!("{{{k}}}"), &c.to_string());
                }
                f.write_str(&out)
            }
            Self::Items { template, names, total, sep, .. } => f.write_str(&template.replace("{n}", &total.to_string()).replace("{names}", &listed(names, *total, sep))),
        }
    }
}

/// `notes` of one chunk added into `into` (the notes so far): each merged into the same note
/// already there, or appended.
pub fn merge_notes(into: &mut Vec<Note>, notes: Vec<Note>) {
    'next: for mut note in notes {
        for existing in into.iter_mut() {
            match existing.merge(note) {
                Ok(()) => continue 'next,
                Err(back) => note = back,
            }
        }
        into.push(note);
    }
}

/// The notes a report shows, as text.
pub fn shown_notes(notes: &[Note]) -> Vec<String> {
    notes.iter().filter(|n| n.is_shown()).map(ToString::to_string).collect()
}

/// A family's columns and what a reader of the report should know about them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FamilyScores {
    /// One column per metric.
    pub columns: Vec<Column>,
    /// Notes for the report (items left unscored and why, a metric left out).
    pub notes: Vec<Note>,
    /// `false` when some items failed for a reason that may pass (a timed-out LLM call): the
    /// scores are used but not cached, so the next run tries those items again.
    pub complete: bool,
}

impl FamilyScores {
    /// Complete scores without notes.
    pub fn new(columns: Vec<Column>) -> Self {
        Self { columns, notes: Vec::new(), complete: true }
    }

    /// Adds a note.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<Note>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// The object-safe form of [`MetricFamily`] the pipeline holds: settings as canonical JSON.
pub(crate) trait ErasedFamily {
    fn name(&self) -> &str;
    fn version(&self) -> &'static str;
    fn settings_json(&self) -> Result<serde_json::Value>;
    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput>;
    fn finish(&self, whole: Whole) -> Result<Whole>;
    fn models(&self) -> Vec<ModelUse>;
}

impl<F: MetricFamily> ErasedFamily for F {
    fn name(&self) -> &str {
        MetricFamily::name(self)
    }

    fn version(&self) -> &'static str {
        MetricFamily::version(self)
    }

    fn settings_json(&self) -> Result<serde_json::Value> {
        serde_json::to_value(self.settings()).map_err(|e| crate::Error::json(format!("<settings of {}>", MetricFamily::name(self)), e))
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        MetricFamily::compute(self, items, progress)
    }

    fn finish(&self, whole: Whole) -> Result<Whole> {
        MetricFamily::finish(self, whole)
    }

    fn models(&self) -> Vec<ModelUse> {
        MetricFamily::models(self)
    }
}

/// Why an item cannot be scored against its references.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unreferenced {
    /// No response (a dialogue-level item).
    NoResponse,
    /// No reference (a corpus's ground-truth rows).
    NoReference,
    /// A reference that is empty or blank.
    EmptyReference,
    /// A response that is empty or blank.
    EmptyResponse,
}

impl Unreferenced {
    /// The reason in words.
    pub fn name(self) -> &'static str {
        match self {
            Self::NoResponse => "no response",
            Self::NoReference => "no reference",
            Self::EmptyResponse => "empty response",
            Self::EmptyReference => "empty reference",
        }
    }

    /// Whether the item's own text is at fault (named in the notes), not a missing field.
    pub fn is_empty_text(self) -> bool {
        matches!(self, Self::EmptyResponse | Self::EmptyReference)
    }
}

/// Why `item` cannot be scored against its references, or `None` when it can.
pub fn unreferenced_reason(item: &DialogueItem) -> Option<Unreferenced> {
    match &item.response {
        None => Some(Unreferenced::NoResponse),
        Some(r) if r.text.trim().is_empty() => Some(Unreferenced::EmptyResponse),
        Some(_) if item.references.is_empty() => Some(Unreferenced::NoReference),
        Some(_) if item.references.iter().any(|r| r.trim().is_empty()) => Some(Unreferenced::EmptyReference),
        Some(_) => None,
    }
}

/// The first `shown` of `names` joined by `sep`, then `, … (N in all)` (with `sep`'s
/// punctuation) when there are more: how notes name the items they are about.
pub fn named_list(names: &[impl AsRef<str>], shown: usize, sep: &str) -> String {
    listed(&names[..shown.min(names.len())], names.len(), sep)
}

/// `names` (the first of `total`) joined by `sep`, then `… (total in all)` when there are more.
fn listed(names: &[impl AsRef<str>], total: usize, sep: &str) -> String {
    let joined: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    let more = if total > names.len() { format!("{} … ({total} in all)", sep.trim_end()) } else { String::new() };
    format!("{}{more}", joined.join(sep))
}

/// The items a referenced metric scores: a non-empty response and references, none of them
/// empty ([`unreferenced_reason`]).
pub fn referenced_items(items: &[DialogueItem]) -> Vec<usize> {
    (0..items.len()).filter(|&i| unreferenced_reason(&items[i]).is_none()).collect()
}

/// The notes of a referenced family: how many items have no response or no reference (a
/// corpus's ground-truth rows), and, by name, the items whose response or a reference is
/// empty. Every note is given, with counts of 0 where none applies (not shown, but so that the
/// notes of chunks line up: [`merge_notes`]).
pub fn unscored_notes(items: &[DialogueItem]) -> Vec<Note> {
    let mut missing = 0;
    let mut empty: std::collections::BTreeMap<Unreferenced, Vec<&str>> = [Unreferenced::EmptyResponse, Unreferenced::EmptyReference].into_iter().map(|u| (u, Vec::new())).collect();
    for item in items {
        match unreferenced_reason(item) {
            Some(why) if why.is_empty_text() => empty.entry(why).or_default().push(&item.id),
            Some(_) => missing += 1,
            None => {}
        }
    }
    let mut notes = vec![Note::count("{0} of {1} items have no response or no reference and are not scored", &[missing, items.len()])];
    for (why, ids) in empty {
        notes.push(Note::items(format!("{{n}} items with an {} are not scored: {{names}}", why.name()), &ids, 10, ", "));
    }
    notes
}

/// Whether the item has a response that is empty or only whitespace. One rule for every
/// family: such a response gets an empty cell (it is not a response to score, and a learned
/// scorer's value for it would be an artefact), and the item is named in the family's notes
/// ([`empty_response_note`]); [`crate::combination`] then leaves it out too.
pub fn blank_response(item: &DialogueItem) -> bool {
    item.response.as_ref().is_some_and(|r| r.text.trim().is_empty())
}

/// The items a reference-free family scores: those with a response that is not blank.
pub fn responding_items(items: &[DialogueItem]) -> Vec<usize> {
    (0..items.len()).filter(|&i| items[i].response.is_some() && !blank_response(&items[i])).collect()
}

/// The note naming the items with a blank response ([`blank_response`]), worded as the
/// referenced families' ([`unscored_notes`]).
pub fn empty_response_note(items: &[DialogueItem]) -> Note {
    let ids: Vec<&str> = items.iter().filter(|i| blank_response(i)).map(|i| i.id.as_str()).collect();
    Note::items(format!("{{n}} items with an {} are not scored: {{names}}", Unreferenced::EmptyResponse.name()), &ids, 10, ", ")
}

/// Whether the item has a response but no context turn with text: the opening of a
/// conversation (or a context lost on the way). Its documented meaning for the families that
/// read a context: the context is the empty text, and the response is scored as an opening;
/// [`empty_context_note`] counts such items.
pub fn blank_context(item: &DialogueItem) -> bool {
    item.response.is_some() && item.context.iter().all(|t| t.text.trim().is_empty())
}

/// The note counting the items scored with an empty context ([`blank_context`]).
pub fn empty_context_note(items: &[DialogueItem]) -> Note {
    let n = items.iter().filter(|i| blank_context(i) && !blank_response(i)).count();
    Note::count("{0} items have an empty context and are scored as conversation openings (an empty context text)", &[n])
}

/// The response text of an item (empty for dialogue-level items).
pub fn response(item: &DialogueItem) -> &str {
    item.response.as_ref().map_or("", |r| r.text.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_lists_show_the_first_names_and_the_count() {
        assert_eq!(named_list(&["a", "b"], 5, ", "), "a, b");
        assert_eq!(named_list(&["a", "b", "c"], 2, ", "), "a, b, … (3 in all)");
        assert_eq!(named_list(&["x: bad", "y: bad", "z: bad"], 1, "; "), "x: bad; … (3 in all)");
    }

    #[test]
    fn notes_of_chunks_add_up_to_the_notes_of_the_whole() {
        let names: Vec<String> = (0..7).map(|k| format!("i{k}")).collect();
        let whole = vec![Note::count("{0} of {1} items lack it", &[3, 7]), Note::items("{n} bad: {names}", &names, 4, ", "), Note::text("METEOR left out")];
        let mut merged = Vec::new();
        merge_notes(&mut merged, vec![Note::count("{0} of {1} items lack it", &[0, 2]), Note::items("{n} bad: {names}", &names[..2], 4, ", "), Note::text("METEOR left out")]);
        merge_notes(&mut merged, vec![Note::count("{0} of {1} items lack it", &[3, 5]), Note::items("{n} bad: {names}", &names[2..], 4, ", "), Note::text("METEOR left out")]);
        assert_eq!(merged, whole);
        assert_eq!(shown_notes(&merged), ["3 of 7 items lack it", "7 bad: i0, i1, i2, i3, … (7 in all)", "METEOR left out"]);
        assert_eq!(shown_notes(&[Note::count("{0} of {1} items lack it", &[0, 2])]), Vec::<String>::new(), "a count of 0 is not shown");
        assert_eq!(Note::items("{n}: {names}", &names, 10, "; ").to_string(), format!("7: {}", names.join("; ")));
        assert_eq!(Note::count("{0} x", &[2]).prefixed("ref: ").to_string(), "ref: 2 x");
    }
}
