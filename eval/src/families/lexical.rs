//! BLEU-4 (sacrebleu's sentence BLEU), ROUGE-L (rouge-score, stemmed) and METEOR (nltk, with
//! WordNet synonyms) against every reference of an item.

use std::path::PathBuf;
use std::sync::Arc;

use std::sync::atomic::{AtomicUsize, Ordering};

use dialeval_datasets::DialogueItem;
use dialeval_metrics::text::bleu::{Bleu, BleuConfig};
use dialeval_metrics::text::meteor::{Meteor, MeteorParams};
use dialeval_metrics::text::rouge::{MAX_LCS_CELLS, Rouge, Stemming};
use dialeval_metrics::text::wordnet::WordNet;
use serde::Serialize;

use crate::digest::{FileDigest, sha256};
use crate::error::Result;
use crate::family::{FamilyOutput, FamilyScores, MetricFamily, Note, referenced_items, response, unscored_notes};
use crate::table::Column;

/// The lexical-overlap metrics. METEOR needs WordNet; without it the family says so in a note,
/// and the missing WordNet is part of the cache key, so a later run that finds it computes
/// METEOR instead of reusing the METEOR-less result.
pub struct LexicalFamily {
    bleu: Bleu,
    bleu_config: BleuConfig,
    rouge_stemming: Stemming,
    meteor: Result<(Meteor, MeteorParams, WordNetIdentity), String>,
}

impl std::fmt::Debug for LexicalFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalFamily").field("settings", &self.settings()).finish()
    }
}

/// Which WordNet METEOR read: its folder and a sha256 over its database files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WordNetIdentity {
    /// The folder.
    pub dir: PathBuf,
    /// sha256 of the sha256s of `index.*`, `data.*` and `*.exc`, in name order.
    pub sha256: String,
}

impl WordNetIdentity {
    /// Hashes the database files of `dir`.
    ///
    /// # Errors
    /// An unreadable folder or file.
    pub fn of(dir: &std::path::Path) -> Result<Self> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| crate::Error::io(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("index.") || n.starts_with("data.") || n.ends_with(".exc")))
            .collect();
        files.sort();
        let mut all = String::new();
        for f in &files {
            let d = FileDigest::of(f)?;
            all.push_str(&format!("{}={}\n", f.file_name().and_then(|n| n.to_str()).unwrap_or(""), d.sha256));
        }
        Ok(Self { dir: dir.to_owned(), sha256: sha256(all.as_bytes()) })
    }
}

/// What the lexical scores depend on.
#[derive(Debug, Clone, Serialize)]
pub struct LexicalSettings {
    /// BLEU's settings.
    pub bleu: BleuConfig,
    /// Stemming in ROUGE.
    pub rouge_stemming: Stemming,
    /// METEOR's parameters and WordNet, or why METEOR is left out.
    pub meteor: Result<(MeteorParams, WordNetIdentity), String>,
    /// How several references combine: each metric's own rule (BLEU pools n-gram counts over
    /// the references, ROUGE-L and METEOR take the best reference).
    pub references: &'static str,
}

impl LexicalFamily {
    /// sacrebleu sentence BLEU, stemmed ROUGE-L, and METEOR with nltk's parameters over the
    /// WordNet of [`WordNet::locate`] when there is one.
    ///
    /// # Errors
    /// An invalid configuration, or a WordNet that exists but cannot be read.
    pub fn new() -> Result<Self> {
        let wordnet = match WordNet::locate() {
            Ok(dir) => Ok((WordNet::load(&dir)?, WordNetIdentity::of(&dir)?)),
            Err(e) => Err(format!("METEOR left out: {e}")),
        };
        Self::with_wordnet(wordnet)
    }

    /// With a given WordNet (or the reason there is none).
    ///
    /// # Errors
    /// An invalid configuration.
    pub fn with_wordnet(wordnet: Result<(WordNet, WordNetIdentity), String>) -> Result<Self> {
        let bleu_config = BleuConfig::sentence();
        let params = MeteorParams::default();
        let meteor = match wordnet {
            Ok((wn, id)) => Ok((Meteor::new(Arc::new(wn), params)?, params, id)),
            Err(why) => Err(why),
        };
        Ok(Self { bleu: Bleu::new(bleu_config)?, bleu_config, rouge_stemming: Stemming::Porter, meteor })
    }
}

impl MetricFamily for LexicalFamily {
    type Settings = LexicalSettings;

    fn name(&self) -> &str {
        "lexical"
    }

    /// 2: empty responses and references are left out, named in a note. 3: a pair too long for
    /// ROUGE-L's LCS table ([`MAX_LCS_CELLS`]) leaves its ROUGE-L cell empty, named in a note.
    fn version(&self) -> &'static str {
        "lexical/3"
    }

    fn settings(&self) -> LexicalSettings {
        LexicalSettings {
            bleu: self.bleu_config,
            rouge_stemming: self.rouge_stemming,
            meteor: self.meteor.as_ref().map(|(_, p, id)| (*p, id.clone())).map_err(Clone::clone),
            references: "BLEU: pooled n-gram counts; ROUGE-L, METEOR: best reference",
        }
    }

    fn compute(&self, items: &[DialogueItem], progress: &(dyn Fn(usize, usize) + Sync)) -> Result<FamilyOutput> {
        let at = referenced_items(items);
        if at.is_empty() {
            return Ok(FamilyOutput::NoneScored { reason: "no item has a response and a reference".into(), notes: unscored_notes(items) });
        }
        let rouge = Rouge::new(self.rouge_stemming);
        let done = AtomicUsize::new(0);
        let scored = dialeval_common::par_map(&at, |&i| -> Result<(f64, Option<f64>, Option<f64>)> {
            if dialeval_common::interrupt::requested() {
                return Err(crate::Error::Interrupted);
            }
            let refs: Vec<&str> = items[i].references.iter().map(String::as_str).collect();
            let hyp = response(&items[i]);
            let meteor = match &self.meteor {
                Ok((meteor, _, _)) => Some(meteor.score(hyp, &refs)?),
                Err(_) => None,
            };
            // A pair too long for ROUGE-L's LCS table is an empty cell, named in the notes.
            let rouge_l = match rouge.score_multi_until(hyp, &refs, &dialeval_common::interrupt::requested) {
                Ok(s) => Some(s.rouge_l.fmeasure),
                Err(dialeval_metrics::Error::TooLong { .. }) => None,
                Err(e) => return Err(e.into()),
            };
            let row = (self.bleu.sentence(hyp, &refs)?.score, rouge_l, meteor);
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, at.len());
            Ok(row)
        });
        let (mut b, mut r, mut m) = (Vec::new(), Vec::new(), Vec::new());
        let (mut r_at, mut too_long) = (Vec::new(), Vec::new());
        for (row, &i) in scored.into_iter().zip(&at) {
            let (bleu, rouge_l, meteor) = row?;
            b.push(bleu);
            match rouge_l {
                Some(v) => {
                    r.push(v);
                    r_at.push(i);
                }
                None => too_long.push(items[i].id.as_str()),
            }
            m.extend(meteor);
        }
        let n = items.len();
        let mut columns = vec![Column::spread("BLEU-4", n, &at, &b)?, Column::spread("ROUGE-L", n, &r_at, &r)?];
        let mut scores = match &self.meteor {
            Ok(_) => {
                columns.push(Column::spread("METEOR", n, &at, &m)?);
                FamilyScores::new(columns)
            }
            Err(why) => FamilyScores::new(columns).with_note(why.clone()),
        };
        scores.notes.extend(unscored_notes(items));
        scores.notes.push(Note::items(
            format!("ROUGE-L: {{n}} items are too long for its LCS table (more than {MAX_LCS_CELLS} response × reference tokens) and are not scored: {{names}}"),
            &too_long,
            10,
            ", ",
        ));
        Ok(FamilyOutput::Scored(scores))
    }
}
