//! DailyDialog (Li et al. 2017), the train split: human-written two-party everyday
//! conversations, one per line, utterances ended by ` __eou__`, tokenised with spaces around
//! punctuation (`dialogues_train.txt`, read plain or gzip-compressed). Utterances are
//! detokenised ([`detokenize`]) so they read as the evaluation sets do.
//!
//! [`OverlapList`] reads `overlap_with_test.tsv`, the train dialogues that repeat or share an
//! utterance with the official test split (from which evaluation sets such as GRADE's are
//! built); [`load_split`] drops them, repeated dialogues and dialogues that share an utterance
//! with any text given to keep out (a held-out test split).

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Place, Result};

/// One dialogue of the train file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DailyDialogue {
    /// 1-based line of `dialogues_train.txt` (the numbering of `overlap_with_test.tsv`).
    pub line: usize,
    /// Utterances, oldest first, detokenised; speakers alternate.
    pub turns: Vec<String>,
}

/// Joins a DailyDialog utterance's tokens as running text: no space before closing punctuation
/// (`, . ! ? ; : % )` and runs of them), none after an opening bracket or `$`, and contractions
/// rejoined (`it ’ s` → `it's`, `don ' t` → `don't`; curly apostrophes become straight ones).
pub fn detokenize(text: &str) -> String {
    const SUFFIXES: [&str; 8] = ["s", "t", "re", "ve", "ll", "d", "m", "S"];
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut out = String::with_capacity(text.len());
    let mut glue_next = false;
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        let apostrophe = t == "'" || t == "’";
        if apostrophe && !out.is_empty() && tokens.get(i + 1).is_some_and(|n| SUFFIXES.contains(n)) {
            out.push('\'');
            out.push_str(tokens[i + 1]);
            i += 2;
            glue_next = false;
            continue;
        }
        let closing = !t.is_empty() && t.chars().all(|c| matches!(c, ',' | '.' | '!' | '?' | ';' | ':' | '%' | ')'));
        let clitic = (t.starts_with('\'') || t.starts_with('’')) && t.len() > 1 && t.chars().skip(1).all(char::is_alphabetic);
        if !out.is_empty() && !glue_next && !closing && !clitic {
            out.push(' ');
        }
        out.push_str(&t.replace('’', "'"));
        glue_next = t == "(" || t == "$";
        i += 1;
    }
    out
}

/// Reads `dialogues_train.txt` (or its `.gz`): one dialogue per non-empty line.
///
/// # Errors
/// I/O or gzip failures; a line that is not UTF-8 or has an empty utterance (named by line).
pub fn load(path: &Path) -> Result<Vec<DailyDialogue>> {
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::GzDecoder::new(file).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    } else {
        std::io::BufReader::new(file).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    }
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = std::str::from_utf8(raw).map_err(|e| Error::record(path, Place::Line(i + 1), format!("not UTF-8: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.trim_end().trim_end_matches("__eou__").split("__eou__").collect();
        let mut turns = Vec::with_capacity(parts.len());
        for (k, part) in parts.iter().enumerate() {
            let text = detokenize(part);
            if text.is_empty() {
                return Err(Error::record(path, Place::Line(i + 1), format!("utterance {} is empty", k + 1)));
            }
            turns.push(text);
        }
        out.push(DailyDialogue { line: i + 1, turns });
    }
    Ok(out)
}

/// The train lines of `overlap_with_test.tsv` (`train_line<TAB>reason<TAB>test_lines`, with a
/// header): dialogues that repeat or share an utterance with the official test split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OverlapList {
    lines: HashSet<usize>,
}

impl OverlapList {
    /// Reads the TSV.
    ///
    /// # Errors
    /// I/O, a missing header, or a line without a positive integer train line.
    pub fn load(path: &Path) -> Result<Self> {
        let text = crate::lines::read_text(path)?;
        let mut rows = text.lines().enumerate();
        match rows.next() {
            Some((_, header)) if header.split('\t').next() == Some("train_line") => {}
            _ => return Err(Error::record(path, Place::Line(1), "expected a header starting `train_line<TAB>`")),
        }
        let mut lines = HashSet::new();
        for (i, row) in rows.filter(|(_, l)| !l.trim().is_empty()) {
            let line = row.split('\t').next().and_then(|s| s.trim().parse::<usize>().ok()).filter(|&n| n > 0);
            lines.insert(line.ok_or_else(|| Error::record(path, Place::Line(i + 1), format!("expected a positive train line first, found {row:?}")))?);
        }
        Ok(Self { lines })
    }

    /// Whether the 1-based train line is listed.
    pub fn contains(&self, line: usize) -> bool {
        self.lines.contains(&line)
    }

    /// Lines listed.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// An utterance as compared for overlap: lower-cased letters and digits only (the rule of
/// `overlap_with_test.tsv` and of DailyDialog++'s `overlap_exclude_ids.tsv`); `None` for one
/// of 20 such characters or fewer, too short to identify a dialogue.
pub fn overlap_key(text: &str) -> Option<String> {
    let key: String = text.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect();
    (key.chars().count() > 20).then_some(key)
}

/// What [`load_split`] kept and dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DailyDialogSplit {
    /// The dialogues kept.
    pub dialogues: Vec<DailyDialogue>,
    /// Dropped by the overlap list (they touch the official test split).
    pub overlapping_test: usize,
    /// Dropped as a repeat of an earlier line (same utterances).
    pub repeated: usize,
    /// Dropped for sharing an utterance with a text to keep out.
    pub sharing_kept_out: usize,
}

/// The train dialogues of `dir` (`dialogues_train.txt.gz` or `dialogues_train.txt`) without
/// those of `overlap_with_test.tsv`, repeats of an earlier line, and those sharing an utterance
/// ([`overlap_key`]) with any of `keep_out` (e.g. every turn and response of a held-out test
/// split).
///
/// # Errors
/// As [`load`] and [`OverlapList::load`]; a folder with neither file.
pub fn load_split<'a>(dir: &Path, keep_out: impl IntoIterator<Item = &'a str>) -> Result<DailyDialogSplit> {
    let gz = dir.join("dialogues_train.txt.gz");
    let path = if gz.exists() { gz } else { dir.join("dialogues_train.txt") };
    let dialogues = load(&path)?;
    let overlap = OverlapList::load(&dir.join("overlap_with_test.tsv"))?;
    let banned: HashSet<String> = keep_out.into_iter().filter_map(overlap_key).collect();
    let mut seen: HashSet<Vec<String>> = HashSet::new();
    let mut split = DailyDialogSplit::default();
    for d in dialogues {
        if overlap.contains(d.line) {
            split.overlapping_test += 1;
        } else if !seen.insert(d.turns.iter().map(|t| t.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()).collect()) {
            split.repeated += 1;
        } else if d.turns.iter().filter_map(|t| overlap_key(t)).any(|k| banned.contains(&k)) {
            split.sharing_kept_out += 1;
        } else {
            split.dialogues.push(d);
        }
    }
    Ok(split)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn detokenises_as_running_text() {
        assert_eq!(detokenize("Say , Jim , how about going for a few beers after dinner ? "), "Say, Jim, how about going for a few beers after dinner?");
        assert_eq!(detokenize("It ’ s true , isn ' t it ... I don't know !"), "It's true, isn't it... I don't know!");
        assert_eq!(detokenize("It costs $ 5 ( about 10 % less ) ."), "It costs $5 (about 10% less).");
        assert_eq!(detokenize("We ' ll see . You 're right"), "We'll see. You're right");
        assert_eq!(detokenize("' quoted"), "' quoted", "an opening quote is not a contraction");
        assert_eq!(detokenize("   "), "");
    }

    #[test]
    fn overlap_keys_ignore_case_and_punctuation_and_short_texts() {
        assert_eq!(overlap_key("How are you doing today, my friend?"), overlap_key("how are you doing TODAY my friend"));
        assert_eq!(overlap_key("Yes, of course."), None);
    }

    #[test]
    fn loads_and_drops_listed_repeated_and_kept_out_dialogues() {
        let dir = std::env::temp_dir().join(format!("dialeval-dailydialog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lines = [
            "Hello , how are you doing this morning ? __eou__ Fine , thanks . __eou__",
            "This one is listed as touching the test split . __eou__ Indeed . __eou__",
            "hello how are you doing this morning __eou__ fine thanks __eou__",
            "I will meet you at the station tomorrow evening . __eou__ See you there . __eou__",
            "What a lovely garden you have here ! __eou__ Thank you ! __eou__",
        ];
        std::fs::write(dir.join("dialogues_train.txt"), lines.join("\n") + "\n").unwrap();
        std::fs::write(dir.join("overlap_with_test.tsv"), "train_line\treason\ttest_lines\n2\texact_test_dialogue\t5\n").unwrap();
        let split = load_split(&dir, ["I will meet you at the station tomorrow evening!"]).unwrap();
        assert_eq!(split.dialogues.iter().map(|d| d.line).collect::<Vec<_>>(), [1, 5]);
        assert_eq!((split.overlapping_test, split.repeated, split.sharing_kept_out), (1, 1, 1));
        assert_eq!(split.dialogues[0].turns, ["Hello, how are you doing this morning?", "Fine, thanks."]);

        std::fs::write(dir.join("overlap_with_test.tsv"), "train_line\treason\ttest_lines\nseven\tx\t1\n").unwrap();
        let err = load_split(&dir, []).unwrap_err().to_string();
        assert!(err.contains("overlap_with_test.tsv:2") && err.contains("seven"), "{err}");
        std::fs::write(dir.join("dialogues_train.txt"), "Fine . __eou__  __eou__ Bye . __eou__\n").unwrap();
        let err = load(&dir.join("dialogues_train.txt")).unwrap_err().to_string();
        assert!(err.contains("dialogues_train.txt:1") && err.contains("utterance 2 is empty"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
