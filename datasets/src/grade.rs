//! GRADE's evaluation layout (Huang et al. 2020): per dataset and dialogue model a folder with
//! line-aligned `human_ctx.txt` (turns separated by `|||`), `human_hyp.txt` and
//! `human_ref.txt`, plus `human_judgement.json`, a list of
//! `{ID, Dataset, DialogModel, Context, Response, HumanScores}` where `HumanScores` is a list of
//! coherence ratings (1–5), written as a list or as a string like `"[3, 5, 4]"`. Items rated by
//! fewer annotators keep only their scores; nothing is padded.
//!
//! GRADE rates coherence: its scores map to [`Criterion::Coherence`].

use std::path::Path;

use dialeval_common::Criterion;
use serde_json::Value;

use crate::error::{Error, Place, Result};
use crate::item::{Corpus, DialogueItem, Rating, Turn};
use crate::json::{Doc, kind, read_json};

/// One entry of `human_judgement.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeJudgement {
    /// `ID`: the line of the item in its model folder's text files.
    pub id: usize,
    /// `Dataset`, e.g. `dailydialog_EVAL`.
    pub dataset: String,
    /// `DialogModel`, e.g. `transformer_generator`.
    pub model: String,
    /// `Context` split at `|||`.
    pub context: Vec<String>,
    /// `Response`.
    pub response: String,
    /// `HumanScores`, one per annotator.
    pub scores: Vec<f64>,
}

/// Loads `human_judgement.json`.
///
/// # Errors
/// I/O, invalid JSON, or a malformed entry named by its JSON path.
pub fn load_judgements(path: &Path) -> Result<Vec<GradeJudgement>> {
    let root = read_json(path)?;
    let doc = Doc::file(path);
    let mut out = Vec::new();
    for (i, e) in doc.array(&root, "$")?.iter().enumerate() {
        let at = format!("[{i}]");
        let s = |key: &str| -> Result<String> { Ok(doc.str(doc.field(e, &at, key)?, &format!("{at}.{key}"))?.to_owned()) };
        let sat = format!("{at}.HumanScores");
        let raw = doc.field(e, &at, "HumanScores")?;
        let parsed;
        let list = match raw {
            Value::String(text) => {
                parsed = serde_json::from_str::<Value>(text).map_err(|err| doc.err(&sat, format!("scores string is not a JSON list: {err}")))?;
                &parsed
            }
            other => other,
        };
        let scores = doc.array(list, &sat)?.iter().enumerate().map(|(k, v)| doc.number(v, &format!("{sat}[{k}]"))).collect::<Result<Vec<_>>>()?;
        let id = doc.field(e, &at, "ID")?;
        let id = id.as_u64().ok_or_else(|| doc.err(&format!("{at}.ID"), format!("expected a non-negative integer, found {}", kind(id))))?;
        out.push(GradeJudgement {
            id: usize::try_from(id).map_err(|_| doc.err(&format!("{at}.ID"), "id too large"))?,
            dataset: s("Dataset")?,
            model: s("DialogModel")?,
            context: s("Context")?.split("|||").map(|t| t.trim().to_owned()).collect(),
            response: s("Response")?,
            scores,
        });
    }
    Ok(out)
}

/// One line of a model folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GradeLine {
    /// Context turns.
    pub context: Vec<String>,
    /// The model's response.
    pub hypothesis: String,
    /// The reference response.
    pub reference: String,
}

fn read_lines(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// Reads a model folder's three line-aligned files.
///
/// # Errors
/// I/O, or files whose line counts differ (the error names both files and counts).
pub fn load_model_dir(dir: &Path) -> Result<Vec<GradeLine>> {
    let (cp, hp, rp) = (dir.join("human_ctx.txt"), dir.join("human_hyp.txt"), dir.join("human_ref.txt"));
    let (ctx, hyp, refs) = (read_lines(&cp)?, read_lines(&hp)?, read_lines(&rp)?);
    for (path, lines) in [(&hp, &hyp), (&rp, &refs)] {
        if lines.len() != ctx.len() {
            return Err(Error::record(path, Place::File, format!("{} lines, but {} has {}: the three files must be line-aligned", lines.len(), cp.display(), ctx.len())));
        }
    }
    Ok(ctx
        .into_iter()
        .zip(hyp)
        .zip(refs)
        .map(|((c, h), r)| GradeLine { context: c.split("|||").map(|t| t.trim().to_owned()).collect(), hypothesis: h.trim().to_owned(), reference: r.trim().to_owned() })
        .collect())
}

/// Joins a model folder with its judgements (`dataset`, `model` select them; `ID` is the line).
///
/// # Errors
/// As the two loaders, plus a judgement whose `ID` has no line or whose response differs from
/// the line's hypothesis.
pub fn load(model_dir: &Path, judgements: &Path, dataset: &str, model: &str) -> Result<Vec<DialogueItem>> {
    let lines = load_model_dir(model_dir)?;
    let mut items = Vec::new();
    for j in load_judgements(judgements)?.into_iter().filter(|j| j.dataset == dataset && j.model == model) {
        let line = lines.get(j.id).ok_or_else(|| Error::record(judgements, Place::Json(format!("ID {}", j.id)), format!("no line {} in {} ({} lines)", j.id + 1, model_dir.display(), lines.len())))?;
        if line.hypothesis != j.response.trim() {
            return Err(Error::record(judgements, Place::Json(format!("ID {}", j.id)), format!("response differs from line {} of human_hyp.txt", j.id + 1)));
        }
        items.push(DialogueItem {
            id: format!("grade-{dataset}-{model}-{}", j.id),
            corpus: Corpus::Grade,
            context: line.context.iter().map(Turn::new).collect(),
            response: Some(Turn::new(line.hypothesis.clone())),
            references: vec![line.reference.clone()],
            knowledge: None,
            system: Some(model.to_owned()),
            annotators: Vec::new(),
            ratings: vec![Rating { quality: "coherence".to_owned(), criterion: Some(Criterion::Coherence), scores: j.scores.into_iter().map(Some).collect() }],
        });
    }
    Ok(items)
}
