//! GRADE's evaluation release (Huang et al. 2020), laid out as published:
//!
//! ```text
//! evaluation/
//!   eval_data/<dataset>/<model>/human_ctx.txt     turns separated by `|||`, one item per line
//!   eval_data/<dataset>/<model>/human_hyp.txt     the model's responses, line-aligned
//!   eval_data/<dataset>/<model>/human_ref.txt     the references, line-aligned
//!   human_score/<dataset>/<model>/human_score.txt per-line mean score (not read: the
//!                                                 judgements below carry every rating)
//!   human_score/human_judgement.json              {ID, Dataset, DialogModel, Context,
//!                                                 Response, HumanScores} for every cell
//! ```
//!
//! `Dataset` is the folder name with an `_EVAL` suffix (`dailydialog_EVAL`). `ID` numbers the
//! judgements across the whole file (0–1199 in the release), cell after cell: each (dataset,
//! model) cell is one contiguous block of the file, and an item's line in its cell's
//! `human_{ctx,hyp,ref}.txt` is its rank inside that block (ID 300, the first judgement of
//! `convai2/bert_ranker`, is that folder's first line). Every `Response` must equal its line of
//! `human_hyp.txt`, which guards the join. `HumanScores` is a list of coherence ratings (1–5), written as a list or
//! as a string like `"[3, 5, 4]"`; items carry 8 to 11 ratings and keep exactly theirs (nothing
//! is padded). [`load_release`] reads every (dataset, model) cell or a chosen one; [`load`]
//! joins one model folder with a judgement file.
//!
//! GRADE rates coherence: its scores map to [`Criterion::Coherence`].

use std::path::{Path, PathBuf};

use dialeval_common::Criterion;
use serde_json::Value;

use crate::error::{Error, Place, Result};
use crate::item::{Corpus, DialogueItem, Rating, Turn};
use crate::json::{Doc, kind, read_json};

/// One entry of `human_judgement.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeJudgement {
    /// `ID`: the judgement's number in the file (unique; it runs on across cells).
    pub id: usize,
    /// The item's line (0-based) in its cell's text files: its rank inside the cell's block.
    pub line: usize,
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
/// I/O, invalid JSON, a malformed entry named by its JSON path, a duplicate `ID`, or a cell
/// whose judgements are not one contiguous block (the line of an item would be ambiguous).
pub fn load_judgements(path: &Path) -> Result<Vec<GradeJudgement>> {
    let root = read_json(path)?;
    let doc = Doc::file(path);
    let mut out: Vec<GradeJudgement> = Vec::new();
    let mut seen_ids = std::collections::HashMap::new();
    let mut closed_cells = std::collections::HashSet::new();
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
        let id = usize::try_from(id).map_err(|_| doc.err(&format!("{at}.ID"), "id too large"))?;
        if let Some(first) = seen_ids.insert(id, i) {
            return Err(doc.err(&format!("{at}.ID"), format!("duplicate ID {id} (also at [{first}])")));
        }
        let (dataset, model) = (s("Dataset")?, s("DialogModel")?);
        let line = match out.last() {
            Some(prev) if prev.dataset == dataset && prev.model == model => prev.line + 1,
            prev => {
                if let Some(prev) = prev {
                    closed_cells.insert((prev.dataset.clone(), prev.model.clone()));
                }
                if closed_cells.contains(&(dataset.clone(), model.clone())) {
                    return Err(doc.err(&at, format!("judgements of {dataset}/{model} resume after another cell's: each cell must be one contiguous block (an item's line is its rank in the block)")));
                }
                0
            }
        };
        out.push(GradeJudgement { id, line, dataset, model, context: s("Context")?.split("|||").map(|t| t.trim().to_owned()).collect(), response: s("Response")?, scores });
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
    let text = crate::lines::read_text(path)?;
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

/// Joins a model folder with its judgements (`dataset`, `model` select them; an item's line is
/// its rank in the cell's block of the file).
///
/// # Errors
/// As the two loaders, plus a judgement whose `ID` has no line or whose response differs from
/// the line's hypothesis.
pub fn load(model_dir: &Path, judgements: &Path, dataset: &str, model: &str) -> Result<Vec<DialogueItem>> {
    let lines = load_model_dir(model_dir)?;
    let folder = dataset.strip_suffix("_EVAL").unwrap_or(dataset);
    load_judgements(judgements)?.iter().filter(|j| j.dataset == dataset && j.model == model).map(|j| join(judgements, model_dir, &lines, j, folder, model)).collect()
}

/// One (dataset, model) cell of the release.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct GradeCell {
    /// The folder under `eval_data/` (`dailydialog`, `convai2`, …).
    pub dataset: String,
    /// The model folder (`transformer_ranker`, …).
    pub model: String,
}

/// The items of a release and how many each cell gave.
#[derive(Debug, Clone, PartialEq)]
pub struct GradeRelease {
    /// Items of every chosen cell, cell by cell in name order, then by line.
    pub items: Vec<DialogueItem>,
    /// Each chosen cell with its item count.
    pub cells: Vec<(GradeCell, usize)>,
}

/// The cells of the release under `root` (the `evaluation/` folder): every
/// `eval_data/<dataset>/<model>` folder holding `human_ctx.txt`, in name order.
///
/// # Errors
/// I/O, or a root without `eval_data/`.
pub fn cells(root: &Path) -> Result<Vec<GradeCell>> {
    let data = root.join("eval_data");
    let dirs = |dir: &Path| -> Result<Vec<(String, PathBuf)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let path = entry.map_err(|e| Error::io(dir, e))?.path();
            if let (true, Some(name)) = (path.is_dir(), path.file_name().and_then(|n| n.to_str())) {
                out.push((name.to_owned(), path.clone()));
            }
        }
        out.sort();
        Ok(out)
    };
    let mut out = Vec::new();
    for (dataset, dataset_dir) in dirs(&data)? {
        for (model, model_dir) in dirs(&dataset_dir)? {
            if model_dir.join("human_ctx.txt").is_file() {
                out.push(GradeCell { dataset: dataset.clone(), model });
            }
        }
    }
    Ok(out)
}

/// Reads the release under `root` (`evaluation/`): every cell, or those of `dataset` and/or
/// `model` when given, each joined with its entries of `human_score/human_judgement.json`.
///
/// # Errors
/// As [`cells`], [`load_judgements`] and [`load_model_dir`]; a `dataset` or `model` that names
/// no cell; a judgement whose `ID` has no line or whose response differs from its line; a
/// judgement of a cell that is not in `eval_data/`.
pub fn load_release(root: &Path, dataset: Option<&str>, model: Option<&str>) -> Result<GradeRelease> {
    read_release(root, dataset, model).map_err(|e| crate::sniff::with_hint(e, root, Corpus::Grade))
}

fn read_release(root: &Path, dataset: Option<&str>, model: Option<&str>) -> Result<GradeRelease> {
    let judgements_path = root.join("human_score/human_judgement.json");
    let all_cells = cells(root)?;
    let chosen: Vec<GradeCell> = all_cells.iter().filter(|c| dataset.is_none_or(|d| c.dataset == d) && model.is_none_or(|m| c.model == m)).cloned().collect();
    if chosen.is_empty() {
        let names: Vec<String> = all_cells.iter().map(|c| format!("{}/{}", c.dataset, c.model)).collect();
        return Err(Error::record(&root.join("eval_data"), Place::File, format!("no cell matches dataset {dataset:?} and model {model:?} (cells: {})", names.join(", "))));
    }
    let judgements = load_judgements(&judgements_path)?;
    let folder = |j: &GradeJudgement| j.dataset.strip_suffix("_EVAL").unwrap_or(&j.dataset).to_owned();
    if let Some(j) = judgements.iter().find(|j| !all_cells.iter().any(|c| c.dataset == folder(j) && c.model == j.model)) {
        return Err(Error::record(&judgements_path, Place::Json(format!("ID {} of {}/{}", j.id, j.dataset, j.model)), format!("no folder eval_data/{}/{}", folder(j), j.model)));
    }
    let mut release = GradeRelease { items: Vec::new(), cells: Vec::new() };
    for cell in chosen {
        let dir = root.join("eval_data").join(&cell.dataset).join(&cell.model);
        let lines = load_model_dir(&dir)?;
        let mine: Vec<&GradeJudgement> = judgements.iter().filter(|j| folder(j) == cell.dataset && j.model == cell.model).collect();
        for j in &mine {
            release.items.push(join(&judgements_path, &dir, &lines, j, &cell.dataset, &cell.model)?);
        }
        release.cells.push((cell, mine.len()));
    }
    Ok(release)
}

/// The item of judgement `j` on its line.
fn join(judgements: &Path, dir: &Path, lines: &[GradeLine], j: &GradeJudgement, dataset: &str, model: &str) -> Result<DialogueItem> {
    let place = || Place::Json(format!("ID {} ({}/{} judgement {})", j.id, j.dataset, j.model, j.line + 1));
    let line = lines.get(j.line).ok_or_else(|| Error::record(judgements, place(), format!("no line {} in {} ({} lines)", j.line + 1, dir.display(), lines.len())))?;
    if line.hypothesis != j.response.trim() {
        return Err(Error::record(judgements, place(), format!("response differs from line {} of {}", j.line + 1, dir.join("human_hyp.txt").display())));
    }
    Ok(DialogueItem {
        id: format!("grade-{dataset}-{model}-{}", j.line),
        corpus: Corpus::Grade,
        context: line.context.iter().map(Turn::new).collect(),
        response: Some(Turn::new(line.hypothesis.clone())),
        references: vec![line.reference.clone()],
        knowledge: None,
        system: Some(model.to_owned()),
        annotators: Vec::new(),
        ratings: vec![Rating { quality: "coherence".to_owned(), criterion: Some(Criterion::Coherence), scores: j.scores.iter().copied().map(Some).collect() }],
    })
}
