//! Training pairs for response-selection models (the SLM of the AMR-enhanced evaluator,
//! BERT-RUBER's unreferenced scorer): deterministic under a seed.
//!
//! - [`ddpp_pairs`]: DailyDialog++ contexts → (context, response, label, kind), with optional
//!   extra negatives sampled from other contexts, honouring an exclusion list;
//! - [`diplomacy_pairs`]: consecutive Diplomacy messages with their gold AMR, plus negatives
//!   sampled from other conversations;
//! - [`split_of`]: a deterministic train/dev/test assignment for corpora without a split.

use std::collections::BTreeMap;

pub use dialeval_common::SplitMix64;
use serde::{Deserialize, Serialize};

use crate::amr::AmrBlock;
use crate::ddpp::{DdppContext, ExcludeList};
use crate::error::{Error, Result};

/// Where a training pair's response came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairKind {
    /// A relevant response (label 1).
    Positive,
    /// The corpus's random negative (label 0).
    RandomNegative,
    /// The corpus's adversarial negative (label 0).
    AdversarialNegative,
    /// A negative sampled here from another context or conversation (label 0).
    SampledNegative,
}

impl PairKind {
    /// 1 for positives, 0 for negatives.
    pub fn label(self) -> u8 {
        u8::from(self == Self::Positive)
    }
}

/// A (context, response, label) example.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainingPair {
    /// Stable id: source, context id, kind and index.
    pub id: String,
    /// Context turns, oldest first.
    pub context: Vec<String>,
    /// Candidate response.
    pub response: String,
    /// How the response was obtained.
    pub kind: PairKind,
    /// AMR (PENMAN) of each context turn, when known.
    pub context_amr: Vec<Option<String>>,
    /// AMR (PENMAN) of the response, when known.
    pub response_amr: Option<String>,
}

impl TrainingPair {
    /// 1 for a good continuation, 0 for a negative.
    pub fn label(&self) -> u8 {
        self.kind.label()
    }
}

/// Settings of [`ddpp_pairs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdppPairConfig {
    /// Include the corpus's random negatives.
    pub random_negatives: bool,
    /// Include the corpus's adversarial negatives.
    pub adversarial_negatives: bool,
    /// Extra negatives per context, sampled from other contexts' positives.
    pub sampled_negatives: usize,
    /// Keep only the last this many context turns (`None`: all).
    pub max_context_turns: Option<usize>,
    /// Seed of the sampling.
    pub seed: u64,
}

impl Default for DdppPairConfig {
    fn default() -> Self {
        Self { random_negatives: true, adversarial_negatives: true, sampled_negatives: 0, max_context_turns: None, seed: 0 }
    }
}

/// Builds DailyDialog++ training pairs from one file's contexts. `file` is the file's name as
/// the exclusion list spells it (`dev.json`); excluded contexts yield no pairs and are counted.
///
/// # Errors
/// [`Error::Config`] when negatives are to be sampled from fewer than two contexts.
pub fn ddpp_pairs(contexts: &[DdppContext], file: &str, exclude: Option<&ExcludeList>, config: &DdppPairConfig) -> Result<(Vec<TrainingPair>, usize)> {
    let kept: Vec<&DdppContext> = contexts.iter().filter(|c| !exclude.is_some_and(|e| e.contains(file, c.id))).collect();
    let excluded = contexts.len() - kept.len();
    if config.sampled_negatives > 0 && kept.len() < 2 {
        return Err(Error::Config("sampling negatives needs at least two contexts".into()));
    }
    let mut rng = SplitMix64(config.seed);
    let mut pairs = Vec::new();
    for (k, c) in kept.iter().enumerate() {
        let context = match config.max_context_turns {
            Some(n) => c.context[c.context.len().saturating_sub(n)..].to_vec(),
            None => c.context.clone(),
        };
        let mut push = |response: &str, kind: PairKind, j: usize| {
            pairs.push(TrainingPair {
                id: format!("{file}#{}/{kind:?}/{j}", c.id),
                context: context.clone(),
                response: response.to_owned(),
                kind,
                context_amr: vec![None; context.len()],
                response_amr: None,
            });
        };
        for (j, r) in c.positives.iter().enumerate() {
            push(r, PairKind::Positive, j);
        }
        if config.random_negatives {
            for (j, r) in c.random_negatives.iter().enumerate() {
                push(r, PairKind::RandomNegative, j);
            }
        }
        if config.adversarial_negatives {
            for (j, r) in c.adversarial_negatives.iter().enumerate() {
                push(r, PairKind::AdversarialNegative, j);
            }
        }
        for j in 0..config.sampled_negatives {
            let mut other = rng.below(kept.len() - 1);
            if other >= k {
                other += 1;
            }
            let donor = kept[other];
            if donor.positives.is_empty() {
                continue;
            }
            let r = &donor.positives[rng.below(donor.positives.len())];
            push(r, PairKind::SampledNegative, j);
        }
    }
    Ok((pairs, excluded))
}

/// Which split an item belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Training data.
    Train,
    /// Development data.
    Dev,
    /// Test data.
    Test,
}

/// Splits pairs into (train, dev, test) by group, so that all pairs of one context (or
/// conversation) land on the same side — never by response: each group's side is decided by
/// [`split_of`] on its key with `ratios` and `seed`.
///
/// # Errors
/// [`Error::Config`] when the ratios are negative or do not sum to 1.
pub fn split_by_group(pairs: Vec<TrainingPair>, ratios: [f64; 3], seed: u64, group: impl Fn(&TrainingPair) -> &str) -> Result<(Vec<TrainingPair>, Vec<TrainingPair>, Vec<TrainingPair>)> {
    let (mut train, mut dev, mut test) = (Vec::new(), Vec::new(), Vec::new());
    for p in pairs {
        match split_of(group(&p), ratios, seed)? {
            Split::Train => train.push(p),
            Split::Dev => dev.push(p),
            Split::Test => test.push(p),
        }
    }
    Ok((train, dev, test))
}

/// The context of a DailyDialog++ pair (`file#context`), the group of [`split_by_group`].
pub fn ddpp_context(pair: &TrainingPair) -> &str {
    pair.id.split('/').next().unwrap_or_default()
}

/// A deterministic split: `id` is hashed with `seed` (FNV-1a then SplitMix64) into [0, 1) and
/// compared with the cumulative `ratios` (train, dev, test). The same id always lands in the
/// same split, whatever else the corpus holds.
///
/// # Errors
/// [`Error::Config`] when the ratios are negative or do not sum to 1.
pub fn split_of(id: &str, ratios: [f64; 3], seed: u64) -> Result<Split> {
    if ratios.iter().any(|r| !(0.0..=1.0).contains(r)) || (ratios.iter().sum::<f64>() - 1.0).abs() > 1e-9 {
        return Err(Error::Config(format!("split ratios must be non-negative and sum to 1, got {ratios:?}")));
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let u = SplitMix64(h ^ seed).unit();
    Ok(if u < ratios[0] {
        Split::Train
    } else if u < ratios[0] + ratios[1] {
        Split::Dev
    } else {
        Split::Test
    })
}

/// A Diplomacy message id `dip_<split>_<conversation>.<message>` taken apart.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DiplomacyId {
    /// `train`, `test`, `validation`, or empty for ids without a split.
    pub split: String,
    /// The conversation.
    pub conversation: String,
    /// The message number within it.
    pub message: u32,
}

impl DiplomacyId {
    /// Parses `dip_train_0001.4`, `dip_0001.6`, …; `None` for other shapes.
    pub fn parse(id: &str) -> Option<Self> {
        let rest = id.strip_prefix("dip_")?;
        let (head, message) = rest.rsplit_once('.')?;
        let message = message.parse().ok()?;
        let (split, conversation) = match head.split_once('_') {
            Some((s, c)) if matches!(s, "train" | "test" | "validation") => (s.to_owned(), c.to_owned()),
            _ => (String::new(), head.to_owned()),
        };
        Some(Self { split, conversation, message })
    }
}

/// Settings of [`diplomacy_pairs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiplomacyPairConfig {
    /// Previous messages given as context (≥ 1).
    pub history: usize,
    /// Negatives per positive, sampled from other conversations.
    pub negatives: usize,
    /// Drop pairs whose response or last context message is the placeholder `(a / amr-empty)`.
    pub drop_empty: bool,
    /// Seed of the sampling.
    pub seed: u64,
}

impl Default for DiplomacyPairConfig {
    fn default() -> Self {
        Self { history: 1, negatives: 1, drop_empty: true, seed: 0 }
    }
}

/// Response-selection pairs from Diplomacy's gold AMR file: messages grouped by conversation
/// (split + conversation id) in message order; each message after the first is the positive
/// response to its predecessors; negatives are messages of other conversations. Both sides
/// carry their gold graphs. Blocks without a parsable id or `::snt` are skipped and counted.
///
/// # Errors
/// [`Error::Config`] for `history == 0` or fewer than two conversations.
pub fn diplomacy_pairs(blocks: &[AmrBlock], config: &DiplomacyPairConfig) -> Result<(Vec<TrainingPair>, usize)> {
    if config.history == 0 {
        return Err(Error::Config("history must be at least 1".into()));
    }
    let mut conversations: BTreeMap<(String, String), Vec<(u32, &AmrBlock)>> = BTreeMap::new();
    let mut skipped = 0;
    for b in blocks {
        match (b.id.as_deref().and_then(DiplomacyId::parse), &b.snt) {
            (Some(id), Some(_)) => conversations.entry((id.split, id.conversation)).or_default().push((id.message, b)),
            _ => skipped += 1,
        }
    }
    if conversations.len() < 2 {
        return Err(Error::Config("negatives need at least two conversations".into()));
    }
    let convs: Vec<Vec<&AmrBlock>> = conversations
        .into_values()
        .map(|mut msgs| {
            msgs.sort_by_key(|(m, _)| *m);
            msgs.into_iter().map(|(_, b)| b).collect()
        })
        .collect();
    let mut rng = SplitMix64(config.seed);
    let text = |b: &AmrBlock| b.snt.clone().unwrap_or_default();
    let mut pairs = Vec::new();
    for (ci, msgs) in convs.iter().enumerate() {
        for k in 1..msgs.len() {
            let (last, response) = (msgs[k - 1], msgs[k]);
            if config.drop_empty && (last.is_empty_placeholder() || response.is_empty_placeholder()) {
                continue;
            }
            let ctx = &msgs[k.saturating_sub(config.history)..k];
            let make = |r: &AmrBlock, kind: PairKind, j: usize| TrainingPair {
                id: format!("{}/{kind:?}/{j}", response.id.as_deref().unwrap_or("?")),
                context: ctx.iter().map(|b| text(b)).collect(),
                response: text(r),
                kind,
                context_amr: ctx.iter().map(|b| Some(b.penman.clone())).collect(),
                response_amr: Some(r.penman.clone()),
            };
            pairs.push(make(response, PairKind::Positive, 0));
            let mut made = 0;
            let mut attempts = 0;
            while made < config.negatives && attempts < 100 * config.negatives.max(1) {
                attempts += 1;
                let mut other = rng.below(convs.len() - 1);
                if other >= ci {
                    other += 1;
                }
                let donor = convs[other][rng.below(convs[other].len())];
                if config.drop_empty && donor.is_empty_placeholder() {
                    continue;
                }
                pairs.push(make(donor, PairKind::SampledNegative, made));
                made += 1;
            }
        }
    }
    Ok((pairs, skipped))
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn diplomacy_ids() {
        assert_eq!(DiplomacyId::parse("dip_train_0001.4"), Some(DiplomacyId { split: "train".into(), conversation: "0001".into(), message: 4 }));
        assert_eq!(DiplomacyId::parse("dip_0001.6").map(|d| d.split), Some(String::new()));
        assert_eq!(DiplomacyId::parse("lpp_1943.1"), None);
    }

    #[test]
    fn splits_are_deterministic_and_roughly_proportional() {
        let ids: Vec<String> = (0..3000).map(|i| format!("item-{i}")).collect();
        let a: Vec<Split> = ids.iter().map(|i| split_of(i, [0.8, 0.1, 0.1], 7).unwrap()).collect();
        let b: Vec<Split> = ids.iter().map(|i| split_of(i, [0.8, 0.1, 0.1], 7).unwrap()).collect();
        assert_eq!(a, b);
        let train = a.iter().filter(|s| **s == Split::Train).count();
        assert!((2250..2550).contains(&train), "{train}");
        assert!(split_of("x", [0.5, 0.6, 0.1], 0).is_err());
    }
}
