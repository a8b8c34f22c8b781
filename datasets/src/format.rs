//! One name for each rated corpus format and one loader for all of them: what a program's
//! `--corpus` flag chooses ([`CorpusFormat`]), read by [`CorpusFormat::load`].

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::grade::GradeCell;
use crate::item::DialogueItem;

/// A format of rated dialogue items, as a `--corpus` flag names it (`usr`, `fed`,
/// `fed-dialogue`, `grade`, `jsonl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CorpusFormat {
    /// USR's `pc_usr_data.json` (PersonaChat or TopicalChat layout).
    Usr,
    /// FED's `fed_data.json`, turn level.
    Fed,
    /// FED's `fed_data.json`, dialogue level (whole dialogues, no response).
    FedDialogue,
    /// GRADE's release (the `evaluation/` folder): every cell, or those of [`Selection`].
    Grade,
    /// The generic JSONL format of [`crate::jsonl`].
    Jsonl,
}

/// Which part of a corpus to read: GRADE's cells by dataset and model (other formats have
/// none and refuse a selection).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only the cells of this dataset (`convai2`, `dailydialog`, `empatheticdialogues`).
    pub dataset: Option<String>,
    /// Only the cells of this model.
    pub model: Option<String>,
}

/// A loaded corpus.
#[derive(Debug, Clone, Default)]
pub struct LoadedCorpus {
    /// The items, in the file's order.
    pub items: Vec<DialogueItem>,
    /// GRADE: each cell read with its item count (empty for other formats).
    pub cells: Vec<(GradeCell, usize)>,
}

impl CorpusFormat {
    /// Every format.
    pub const ALL: [Self; 5] = [Self::Usr, Self::Fed, Self::FedDialogue, Self::Grade, Self::Jsonl];

    /// The name a flag gives it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Usr => "usr",
            Self::Fed => "fed",
            Self::FedDialogue => "fed-dialogue",
            Self::Grade => "grade",
            Self::Jsonl => "jsonl",
        }
    }

    /// Whether items can be read a chunk at a time ([`crate::jsonl::JsonlReader`]) rather than
    /// the whole file at once.
    pub fn streams(self) -> bool {
        self == Self::Jsonl
    }

    /// Reads the corpus at `path` (a file, or GRADE's folder), keeping what `selection` names.
    ///
    /// # Errors
    /// The loader's typed error, naming the file and the line or JSON path; a `selection` for
    /// a format that has no cells.
    pub fn load(self, path: &Path, selection: &Selection) -> Result<LoadedCorpus> {
        if self != Self::Grade && *selection != Selection::default() {
            return Err(crate::Error::Config(format!("{}: a dataset or model selection is for GRADE's release, not the {} format", path.display(), self.name())));
        }
        let items = match self {
            Self::Usr => crate::usr::load(path)?,
            Self::Fed => crate::fed::load(path)?.turns,
            Self::FedDialogue => crate::fed::load(path)?.dialogues,
            Self::Jsonl => crate::jsonl::load(path)?,
            Self::Grade => {
                let release = crate::grade::load_release(path, selection.dataset.as_deref(), selection.model.as_deref())?;
                return Ok(LoadedCorpus { items: release.items, cells: release.cells });
            }
        };
        Ok(LoadedCorpus { items, cells: Vec::new() })
    }
}

impl std::fmt::Display for CorpusFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CorpusFormat {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Self::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| format!("{s:?}: one of {}", Self::ALL.map(Self::name).join(", ")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_match_serde() {
        for f in CorpusFormat::ALL {
            assert_eq!(f.name().parse::<CorpusFormat>().unwrap(), f);
            assert_eq!(serde_json::to_value(f).unwrap(), serde_json::Value::String(f.name().to_owned()));
        }
        assert!("fed_dialogue".parse::<CorpusFormat>().unwrap_err().contains("fed-dialogue"));
    }

    #[test]
    fn a_selection_is_refused_outside_grade() {
        let selection = Selection { dataset: Some("convai2".into()), model: None };
        let e = CorpusFormat::Usr.load(Path::new("pc_usr_data.json"), &selection).unwrap_err().to_string();
        assert!(e.contains("GRADE") && e.contains("usr"), "{e}");
    }
}
