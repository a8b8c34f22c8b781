//! The training mix for the reference-free scorers (the SLM, BERT-RUBER's unreferenced model) at
//! the scale the public releases allow, with everything that touches an evaluation set kept out:
//!
//! - DailyDialog++ `dev.json` + `test.json` with their random and adversarial negatives (contexts
//!   of `overlap_exclude_ids.tsv` dropped); the annotated test contexts (`test_ids`, the 100 of the
//!   silver-AMR set) are the test split, never trained on;
//! - DailyDialog++ `data_positives.json` with negatives sampled from other contexts;
//! - Topical-Chat `valid_rare` + `test_rare` next-turn pairs ([`topical_pairs`]), with the
//!   knowledge each turn cites when asked ([`MixConfig::topical_knowledge`]);
//! - when asked ([`MixConfig::dailydialog`]), DailyDialog train next-turn pairs
//!   ([`dailydialog_pairs`]: uniform, length-matched and lexical negatives), without the
//!   dialogues of `overlap_with_test.tsv`, repeats, and any dialogue that shares an utterance with
//!   the test split ([`crate::dailydialog::load_split`]).
//!
//! Dev is a seeded share of the remaining contexts and conversations ([`split_by_group`] over
//! [`pair_group`]), so no context is on two sides. USR, FED and GRADE items are never read.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::ddpp::{self, ExcludeList};
use crate::error::Result;
use crate::pairs::{DailyDialogPairConfig, DdppPairConfig, NegativeSampling, TopicalPairConfig, TrainingPair, dailydialog_pairs, ddpp_pairs, pair_group, split_by_group, topical_pairs};
use crate::topical;

/// Settings of [`build_mix`]; everything the mix depends on, so it can key a cache.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MixConfig {
    /// Keep only the last this many context turns.
    pub max_context_turns: usize,
    /// Length matching of DailyDialog++'s own negatives ([`DdppPairConfig::length_tolerance`]).
    pub ddpp_length_tolerance: Option<usize>,
    /// Negatives sampled per `data_positives.json` context (0: that file is left out).
    pub positives_negatives: usize,
    /// How they are sampled.
    pub positives_sampling: NegativeSampling,
    /// Topical-Chat pairs (`None`: left out).
    pub topical: Option<TopicalPairConfig>,
    /// Give each Topical-Chat pair its turn's knowledge (the Wikipedia text of the fact
    /// sections the turn cites, [`topical::resolve_knowledge`]; reads `reading_sets/pre-build/`
    /// and `wiki.json` beside the conversations). DailyDialog++ pairs have none.
    #[serde(default)]
    pub topical_knowledge: bool,
    /// DailyDialog train pairs (`None`: left out; needs [`MixSources::dailydialog_dir`]).
    #[serde(default)]
    pub dailydialog: Option<DailyDialogPairConfig>,
    /// Share of contexts and conversations held out as dev.
    pub dev_share: f64,
    /// Seed of sampling and split.
    pub seed: u64,
}

impl Default for MixConfig {
    fn default() -> Self {
        Self {
            max_context_turns: 2,
            ddpp_length_tolerance: Some(1),
            positives_negatives: 5,
            positives_sampling: NegativeSampling::LengthMatched { candidates: 8 },
            topical: Some(TopicalPairConfig::default()),
            topical_knowledge: false,
            dailydialog: None,
            dev_share: 0.05,
            seed: 0,
        }
    }
}

/// Where the mix comes from: the public releases' folders.
#[derive(Debug, Clone, Copy)]
pub struct MixSources<'a> {
    /// DailyDialog++'s `dataset/` folder (`dev.json`, `test.json`, `data_positives.json`,
    /// `overlap_exclude_ids.tsv`).
    pub ddpp_dir: &'a Path,
    /// Topical-Chat's folder (`conversations/valid_rare.json`, `conversations/test_rare.json`),
    /// when used.
    pub topical_dir: Option<&'a Path>,
    /// DailyDialog's folder (`dialogues_train.txt.gz` or `dialogues_train.txt`,
    /// `overlap_with_test.tsv`), when used.
    pub dailydialog_dir: Option<&'a Path>,
    /// The `test.json` contexts that form the test split.
    pub test_ids: &'a [u64],
    /// Topical-Chat conversations held out as a second test split ([`Mix::topical_test`]):
    /// their pairs are neither trained on nor used as dev, and their negatives are drawn among
    /// them (e.g. part of the conversations with silver AMR, whose graphs are about twice the
    /// DailyDialog++ ones: every response of the split then has its graph).
    pub topical_test_ids: &'a [String],
}

/// Train, dev and test pairs of the mix.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mix {
    /// Training pairs.
    pub train: Vec<TrainingPair>,
    /// Dev pairs (early stopping, model choice).
    pub dev: Vec<TrainingPair>,
    /// The annotated DailyDialog++ test contexts' pairs, every negative kept.
    pub test: Vec<TrainingPair>,
    /// The pairs of the held-out Topical-Chat conversations ([`MixSources::topical_test_ids`]).
    pub topical_test: Vec<TrainingPair>,
    /// Contexts dropped by the overlap list.
    pub excluded: usize,
    /// DailyDialog dialogues dropped: listed as touching its test split, repeated, or sharing an
    /// utterance with the test split here.
    pub dailydialog_dropped: [usize; 3],
}

/// Builds the mix (see the module docs). Deterministic under `config.seed`.
///
/// # Errors
/// A file that cannot be read or parsed (named with its line), or invalid settings.
pub fn build_mix(sources: &MixSources<'_>, config: &MixConfig) -> Result<Mix> {
    let dir = sources.ddpp_dir;
    let exclude = ExcludeList::load(&dir.join("overlap_exclude_ids.tsv"))?;
    let test_ids: HashSet<u64> = sources.test_ids.iter().copied().collect();
    let base = DdppPairConfig { max_context_turns: Some(config.max_context_turns), seed: config.seed, length_tolerance: config.ddpp_length_tolerance, ..DdppPairConfig::default() };
    let mut pool = Vec::new();
    let mut mix = Mix::default();
    let (dev, excluded) = ddpp_pairs(&ddpp::load(&dir.join("dev.json"))?, "dev.json", Some(&exclude), &base)?;
    pool.extend(dev);
    mix.excluded += excluded;
    let (test_contexts, rest): (Vec<_>, Vec<_>) = ddpp::load(&dir.join("test.json"))?.into_iter().partition(|c| test_ids.contains(&c.id));
    let (test, excluded) = ddpp_pairs(&test_contexts, "test.json", Some(&exclude), &DdppPairConfig { length_tolerance: None, ..base })?;
    mix.test = test;
    mix.excluded += excluded;
    let (rest, excluded) = ddpp_pairs(&rest, "test.json", Some(&exclude), &base)?;
    pool.extend(rest);
    mix.excluded += excluded;
    if config.positives_negatives > 0 {
        let positives = ddpp::load(&dir.join("data_positives.json"))?;
        let sampled = DdppPairConfig { random_negatives: false, adversarial_negatives: false, sampled_negatives: config.positives_negatives, sampling: config.positives_sampling, ..base };
        let (pairs, excluded) = ddpp_pairs(&positives, "data_positives.json", Some(&exclude), &sampled)?;
        pool.extend(pairs);
        mix.excluded += excluded;
    }
    if let (Some(topical_config), Some(topical_dir)) = (config.topical, sources.topical_dir) {
        let mut conversations = Vec::new();
        let wiki = if config.topical_knowledge { Some(topical::load_wiki(&topical_dir.join("wiki.json"))?) } else { None };
        for split in ["valid_rare", "test_rare"] {
            let mut part = topical::load_conversations(&topical_dir.join(format!("conversations/{split}.json")))?;
            if let Some(wiki) = &wiki {
                let sets = topical::load_reading_sets(&topical_dir.join(format!("reading_sets/pre-build/{split}.json")))?;
                topical::resolve_knowledge(&mut part, &sets, wiki);
            }
            conversations.extend(part);
        }
        // Held-out conversations form their own pairs, negatives drawn among themselves: every
        // response of the split then comes from a conversation of the split (with silver AMR,
        // for the held-out part of the annotated ones), so having a graph cannot tell a positive
        // from a negative.
        let held_out: HashSet<&str> = sources.topical_test_ids.iter().map(String::as_str).collect();
        let (test, rest): (Vec<_>, Vec<_>) = conversations.into_iter().partition(|c| held_out.contains(c.id.as_str()));
        let pairs_config = TopicalPairConfig { seed: config.seed, ..topical_config };
        if test.len() >= 2 {
            mix.topical_test = topical_pairs(&test, &pairs_config)?;
        } else if !test.is_empty() {
            return Err(crate::Error::Config("a held-out Topical-Chat test needs at least two conversations (negatives are drawn among them)".into()));
        }
        pool.extend(topical_pairs(&rest, &pairs_config)?);
    }
    match (config.dailydialog, sources.dailydialog_dir) {
        (Some(dd_config), Some(dd_dir)) => {
            let keep_out = mix.test.iter().flat_map(|p| p.context.iter().map(String::as_str).chain([p.response.as_str()]));
            let split = crate::dailydialog::load_split(dd_dir, keep_out)?;
            mix.dailydialog_dropped = [split.overlapping_test, split.repeated, split.sharing_kept_out];
            pool.extend(dailydialog_pairs(&split.dialogues, &DailyDialogPairConfig { seed: config.seed, history: config.max_context_turns, ..dd_config })?);
        }
        (Some(_), None) => return Err(crate::Error::Config("the mix asks for DailyDialog pairs but no DailyDialog folder was given".into())),
        (None, _) => {}
    }
    let (train, dev, _) = split_by_group(pool, [1.0 - config.dev_share, config.dev_share, 0.0], config.seed, pair_group)?;
    mix.train = train;
    mix.dev = dev;
    Ok(mix)
}
