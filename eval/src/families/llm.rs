//! The LLM judge's four criteria (Naturalness, Coherence, Engagingness, Groundedness) from any
//! OpenAI-compatible endpoint.

use dialeval_datasets::DialogueItem;
use dialeval_llm_prompt::judge::CRITERIA;
use dialeval_llm_prompt::prompt::{PromptInput, Templates, Variant};
use dialeval_llm_prompt::{ChatClient, Judge, JudgeConfig, JudgeMode, Scoring};
use serde::Serialize;

use crate::error::Result;
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, Note, blank_response, empty_context_note, empty_response_note, response};
use crate::table::Column;

/// `LLM-<criterion>` columns. A judgement that fails (a refused connection, a timeout) leaves its
/// cell empty and marks the result incomplete, so it is not cached and the next run asks again
/// (the client's own cache keeps the answers that did arrive). An answer without a readable
/// score is final at temperature 0 and stays an empty cell, counted in a note.
pub struct LlmFamily<C> {
    judge: Judge<C>,
    settings: LlmSettings,
}

/// What the LLM scores depend on.
#[derive(Debug, Clone, Serialize)]
pub struct LlmSettings {
    /// The endpoint (base URL), which with the model name identifies the judge.
    pub endpoint: String,
    /// Model, scale, clamping, budget, completion length.
    pub judge: JudgeConfig,
    /// sha256 of the prompt templates.
    pub templates: String,
    /// Which information the prompt carries.
    pub variant: Variant,
    /// How answers become scores.
    pub scoring: Scoring,
}

/// How an [`LlmFamily`] judges.
#[derive(Debug, Clone)]
pub struct LlmJudging {
    /// The endpoint the client serves (base URL; with the model name it identifies the judge).
    pub endpoint: String,
    /// The prompt templates.
    pub templates: Templates,
    /// Model, scale, clamping, budget, completion length.
    pub judge: JudgeConfig,
    /// Which information the prompt carries.
    pub variant: Variant,
    /// How answers become scores.
    pub scoring: Scoring,
}

impl<C: ChatClient> LlmFamily<C> {
    /// The family judging through `client` as `judging` says.
    pub fn new(client: C, judging: LlmJudging) -> Self {
        let LlmJudging { endpoint, templates, judge, variant, scoring } = judging;
        let settings = LlmSettings { endpoint, judge: judge.clone(), templates: templates.fingerprint(), variant, scoring };
        Self { judge: Judge::new(client, templates, judge), settings }
    }
}

/// An item as the judge's prompt input (context with speakers, response, knowledge, graphs).
pub fn prompt_input(item: &DialogueItem) -> PromptInput {
    PromptInput {
        context: item.context.iter().map(|t| (t.speaker.clone(), t.text.clone())).collect(),
        response: response(item).to_owned(),
        knowledge: item.knowledge.clone(),
        slm_score: None,
        context_amr: item.context.iter().filter_map(|t| t.amr.clone()).collect(),
        response_amr: item.response.as_ref().and_then(|r| r.amr.clone()),
    }
}

impl<C: ChatClient> MetricFamily for LlmFamily<C> {
    type Settings = LlmSettings;

    fn name(&self) -> &str {
        "llm"
    }

    /// 2: the notes name the unscorable answers (cached with the scores). 3: a Multi call gets
    /// the completion limit once per criterion, and a cut-off JSON answer is read. 4: a blank
    /// response is not judged (an empty cell, named); an empty context is counted.
    fn version(&self) -> &'static str {
        "llm/4"
    }

    fn settings(&self) -> LlmSettings {
        self.settings.clone()
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        // A blank response is not sent to the judge.
        let at: Vec<usize> = (0..items.len()).filter(|&i| !blank_response(&items[i])).collect();
        let inputs: Vec<PromptInput> = at.iter().map(|&i| prompt_input(&items[i])).collect();
        let results = self.judge.judge_batch(&inputs, &CRITERIA, JudgeMode { variant: self.settings.variant, scoring: self.settings.scoring }, progress);
        let mut cells: Vec<Vec<Option<f64>>> = vec![vec![None; items.len()]; CRITERIA.len()];
        let (mut failed, mut unscorable) = (Vec::new(), Vec::new());
        for (&i, row) in at.iter().zip(results) {
            for r in row {
                match r {
                    Ok(j) => match (CRITERIA.iter().position(|&c| c == j.criterion), j.outcome.value()) {
                        (Some(k), Some(score)) => cells[k][i] = Some(score),
                        _ => unscorable.push(format!("{} ({})", items[i].id, j.criterion)),
                    },
                    Err(e) => failed.push(format!("{}: {e}", items[i].id)),
                }
            }
        }
        let columns = CRITERIA.iter().zip(cells).map(|(c, v)| Column::new(format!("LLM-{}", c.name()).as_str(), v)).collect();
        let mut scores = FamilyScores::new(columns);
        scores.notes.push(empty_response_note(items));
        scores.notes.push(empty_context_note(items));
        scores.notes.push(Note::items("{n} answers had no readable score; their cells are empty: {names}", &unscorable, 10, ", "));
        if !failed.is_empty() {
            scores.complete = false;
        }
        scores.notes.push(Note::items("{n} judgements failed and will be asked again on the next run (first: {names})", &failed, 1, ", "));
        Ok(FamilyOutput::Scored(scores))
    }
}
