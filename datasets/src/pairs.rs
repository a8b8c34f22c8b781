//! Training pairs for response-selection models (the SLM of the AMR-enhanced evaluator,
//! BERT-RUBER's unreferenced scorer): deterministic under a seed.
//!
//! - [`ddpp_pairs`]: DailyDialog++ contexts → (context, response, label, kind), with optional
//!   extra negatives sampled from other contexts, honouring an exclusion list;
//! - [`diplomacy_pairs`]: consecutive Diplomacy messages with their gold AMR, plus negatives
//!   sampled from other conversations;
//! - [`topical_pairs`]: next-turn pairs of Topical-Chat conversations, with negatives from other
//!   conversations, uniform and matched in length to the positive;
//! - [`length_separation`]: how well response length alone separates a set's classes (ROC
//!   AUC), the check that negatives do not teach a model "short = good";
//! - [`split_of`]: a deterministic train/dev/test assignment for corpora without a split.

use std::collections::BTreeMap;

pub use dialeval_common::SplitMix64;
use dialeval_common::{roc_auc, word_count};
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
    /// A negative sampled here from another context or conversation, chosen to be as long in
    /// words as the positive it stands against (label 0).
    LengthMatchedNegative,
    /// A negative retrieved here from another conversation for sharing words with the context
    /// (as GRADE and DEB make their hard negatives), of about the positive's length (label 0).
    LexicalNegative,
    /// A negative retrieved here from another context or conversation for being close to the
    /// context in a sentence encoder's space, of about the positive's length (label 0;
    /// [`crate::negatives`]).
    EmbeddingNegative,
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
    /// What the response should be grounded in (persona, facts, a Wikipedia snippet), when the
    /// source has it: a Topical-Chat turn's resolved knowledge, for its positive and negatives.
    #[serde(default)]
    pub knowledge: Option<String>,
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
    /// How the extra negatives are drawn.
    #[serde(default)]
    pub sampling: NegativeSampling,
    /// Length matching of the corpus's own negatives: with `Some(t)`, each random or
    /// adversarial negative is kept only when it can be matched one-to-one to a positive of its
    /// context whose length differs by at most `t` words (greedily, shortest difference first;
    /// each kind matched on its own); `None` keeps them all. DailyDialog++'s adversarial
    /// negatives are 4 words longer than its positives on average, which teaches a model that
    /// short responses are good.
    #[serde(default)]
    pub length_tolerance: Option<usize>,
}

impl Default for DdppPairConfig {
    fn default() -> Self {
        Self { random_negatives: true, adversarial_negatives: true, sampled_negatives: 0, max_context_turns: None, seed: 0, sampling: NegativeSampling::Uniform, length_tolerance: None }
    }
}

/// How negatives are drawn from other contexts or conversations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum NegativeSampling {
    /// One uniform draw.
    #[default]
    Uniform,
    /// Of `candidates` uniform draws, the one whose length in words is closest to the positive
    /// it stands against (the first drawn on ties); such negatives are
    /// [`PairKind::LengthMatchedNegative`].
    LengthMatched {
        /// Draws compared (≥ 1).
        candidates: usize,
    },
}

impl NegativeSampling {
    /// Draws one donor text with `draw`, which gives a text and its length in words (`None`:
    /// that draw failed and is not counted), matched to `target_words` when length matching;
    /// `None` when no draw succeeded.
    fn pick<'a>(self, rng: &mut SplitMix64, target_words: usize, mut draw: impl FnMut(&mut SplitMix64) -> Option<(&'a str, usize)>) -> Option<&'a str> {
        let tries = match self {
            Self::Uniform => 1,
            Self::LengthMatched { candidates } => candidates.max(1),
        };
        let mut best: Option<(&str, usize)> = None;
        for _ in 0..tries {
            if let Some((text, words)) = draw(rng) {
                let gap = words.abs_diff(target_words);
                if best.is_none_or(|(_, g)| gap < g) {
                    best = Some((text, gap));
                }
            }
        }
        best.map(|(t, _)| t)
    }

    /// The kind of the negatives this sampling makes.
    pub fn kind(self) -> PairKind {
        match self {
            Self::Uniform => PairKind::SampledNegative,
            Self::LengthMatched { .. } => PairKind::LengthMatchedNegative,
        }
    }
}

/// Which of `negatives` can be matched one-to-one to `positives` within `tolerance` words:
/// candidate (negative, positive) pairs are taken by increasing length difference, each side
/// used once. Returns the kept negatives' indices in their original order.
fn length_matched(positives: &[String], negatives: &[String], tolerance: usize) -> Vec<usize> {
    let (pw, nw): (Vec<usize>, Vec<usize>) = (positives.iter().map(|t| word_count(t)).collect(), negatives.iter().map(|t| word_count(t)).collect());
    let mut candidates: Vec<(usize, usize, usize)> = Vec::new();
    for (n, &a) in nw.iter().enumerate() {
        for (p, &b) in pw.iter().enumerate() {
            if a.abs_diff(b) <= tolerance {
                candidates.push((a.abs_diff(b), n, p));
            }
        }
    }
    candidates.sort_unstable();
    let (mut used_n, mut used_p) = (vec![false; nw.len()], vec![false; pw.len()]);
    for (_, n, p) in candidates {
        if !used_n[n] && !used_p[p] {
            used_n[n] = true;
            used_p[p] = true;
        }
    }
    (0..nw.len()).filter(|&n| used_n[n]).collect()
}

/// ROC AUC of response length in words as a score for the positive class: 0.5 when length
/// tells nothing, above 0.5 when positives are longer, below when they are shorter. `None`
/// when a class is missing.
pub fn length_separation(pairs: &[TrainingPair]) -> Option<f64> {
    let lengths: Vec<f64> = pairs.iter().map(|p| word_count(&p.response) as f64).collect();
    let labels: Vec<u8> = pairs.iter().map(TrainingPair::label).collect();
    roc_auc(&lengths, &labels).ok()
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
    // Sequential: the sampled donors, in the order the seeded generator draws them (word
    // counts computed once, on all cores).
    let words: Vec<Vec<usize>> = if config.sampled_negatives > 0 { dialeval_common::par_map(&kept, |c| c.positives.iter().map(|p| word_count(p)).collect()) } else { Vec::new() };
    let mut rng = SplitMix64(config.seed);
    let sampled: Vec<Vec<(usize, &str)>> = (0..kept.len())
        .map(|k| {
            let c = kept[k];
            (0..config.sampled_negatives)
                .filter_map(|j| {
                    let target = if c.positives.is_empty() { 0 } else { words[k][j % c.positives.len()] };
                    let donor = config.sampling.pick(&mut rng, target, |rng| {
                        let mut other = rng.below(kept.len() - 1);
                        if other >= k {
                            other += 1;
                        }
                        let donor = kept[other];
                        (!donor.positives.is_empty()).then(|| {
                            let i = rng.below(donor.positives.len());
                            (donor.positives[i].as_str(), words[other][i])
                        })
                    });
                    donor.map(|r| (j, r))
                })
                .collect()
        })
        .collect();
    // In parallel: each context's pairs, kept in context order.
    let work: Vec<(&DdppContext, &[(usize, &str)])> = kept.iter().copied().zip(sampled.iter().map(Vec::as_slice)).collect();
    let per_context = dialeval_common::par_map(&work, |&(c, sampled)| {
        let context = match config.max_context_turns {
            Some(n) => c.context[c.context.len().saturating_sub(n)..].to_vec(),
            None => c.context.clone(),
        };
        let mut pairs = Vec::new();
        let mut push = |response: &str, kind: PairKind, j: usize| {
            pairs.push(TrainingPair {
                id: format!("{file}#{}/{kind:?}/{j}", c.id),
                context: context.clone(),
                response: response.to_owned(),
                kind,
                context_amr: vec![None; context.len()],
                response_amr: None,
                knowledge: None,
            });
        };
        for (j, r) in c.positives.iter().enumerate() {
            push(r, PairKind::Positive, j);
        }
        for (wanted, negatives, kind) in
            [(config.random_negatives, &c.random_negatives, PairKind::RandomNegative), (config.adversarial_negatives, &c.adversarial_negatives, PairKind::AdversarialNegative)]
        {
            if !wanted {
                continue;
            }
            let keep = match config.length_tolerance {
                Some(t) => length_matched(&c.positives, negatives, t),
                None => (0..negatives.len()).collect(),
            };
            for j in keep {
                push(&negatives[j], kind, j);
            }
        }
        for &(j, r) in sampled {
            push(r, config.sampling.kind(), j);
        }
        pairs
    });
    Ok((per_context.into_iter().flatten().collect(), excluded))
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

/// The context of a DailyDialog++ pair (`file#context`), the group of [`split_by_group`]
/// (the same as [`pair_group`]).
pub fn ddpp_context(pair: &TrainingPair) -> &str {
    pair_group(pair)
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
    // Sequential: each response's negatives, in the order the seeded generator draws them.
    let mut rng = SplitMix64(config.seed);
    let plan: Vec<Vec<(usize, Vec<&AmrBlock>)>> = convs
        .iter()
        .enumerate()
        .map(|(ci, msgs)| {
            (1..msgs.len())
                .filter(|&k| !(config.drop_empty && (msgs[k - 1].is_empty_placeholder() || msgs[k].is_empty_placeholder())))
                .map(|k| {
                    let mut donors = Vec::with_capacity(config.negatives);
                    let mut attempts = 0;
                    while donors.len() < config.negatives && attempts < 100 * config.negatives.max(1) {
                        attempts += 1;
                        let mut other = rng.below(convs.len() - 1);
                        if other >= ci {
                            other += 1;
                        }
                        let donor = convs[other][rng.below(convs[other].len())];
                        if !(config.drop_empty && donor.is_empty_placeholder()) {
                            donors.push(donor);
                        }
                    }
                    (k, donors)
                })
                .collect()
        })
        .collect();
    // In parallel: each conversation's pairs, kept in conversation order.
    let text = |b: &AmrBlock| b.snt.clone().unwrap_or_default();
    let order: Vec<usize> = (0..convs.len()).collect();
    let per_conversation = dialeval_common::par_map(&order, |&c| {
        let msgs = &convs[c];
        let mut pairs = Vec::new();
        for (k, donors) in &plan[c] {
            let (k, response) = (*k, msgs[*k]);
            let ctx = &msgs[k.saturating_sub(config.history)..k];
            let make = |r: &AmrBlock, kind: PairKind, j: usize| TrainingPair {
                id: format!("{}/{kind:?}/{j}", response.id.as_deref().unwrap_or("?")),
                context: ctx.iter().map(|b| text(b)).collect(),
                response: text(r),
                kind,
                context_amr: ctx.iter().map(|b| Some(b.penman.clone())).collect(),
                response_amr: Some(r.penman.clone()),
                knowledge: None,
            };
            pairs.push(make(response, PairKind::Positive, 0));
            for (j, donor) in donors.iter().enumerate() {
                pairs.push(make(donor, PairKind::SampledNegative, j));
            }
        }
        pairs
    });
    Ok((per_conversation.into_iter().flatten().collect(), skipped))
}

/// One turn of a conversation as a next-turn training example: the turns before it and its
/// knowledge, shared by its positive and its drawn negatives ([`topical_pairs`],
/// [`dailydialog_pairs`]).
struct NextTurn {
    /// The conversation's group (`topical#<id>`, `dailydialog#<line>`), the id's first part.
    group: String,
    /// The turn's index in the conversation.
    turn: usize,
    context: Vec<String>,
    knowledge: Option<String>,
}

impl NextTurn {
    /// Appends the positive (the turn itself) and the negatives `(j, kind, response)`, with
    /// ids `<group>/<kind>/<turn>-<j>`.
    fn push_pairs(&self, pairs: &mut Vec<TrainingPair>, positive: &str, negatives: &[(usize, PairKind, &str)]) {
        let make = |response: &str, kind: PairKind, j: usize| TrainingPair {
            id: format!("{}/{kind:?}/{}-{j}", self.group, self.turn),
            context: self.context.clone(),
            response: response.to_owned(),
            kind,
            context_amr: vec![None; self.context.len()],
            response_amr: None,
            knowledge: self.knowledge.clone(),
        };
        pairs.push(make(positive, PairKind::Positive, 0));
        pairs.extend(negatives.iter().map(|&(j, kind, r)| make(r, kind, j)));
    }
}

/// Settings of [`topical_pairs`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TopicalPairConfig {
    /// Previous turns given as context (≥ 1).
    pub history: usize,
    /// Negatives per positive, from other conversations' turns.
    pub negatives: usize,
    /// Share of them matched in length to the positive ([`PairKind::LengthMatchedNegative`],
    /// decided per negative by a seeded draw); the rest are uniform
    /// ([`PairKind::SampledNegative`]).
    pub length_matched_share: f64,
    /// Draws compared for each length-matched negative.
    pub candidates: usize,
    /// Seed of the sampling.
    pub seed: u64,
}

impl Default for TopicalPairConfig {
    fn default() -> Self {
        Self { history: 2, negatives: 1, length_matched_share: 0.5, candidates: 8, seed: 0 }
    }
}

/// Next-turn pairs of Topical-Chat conversations: each turn after the first is the positive
/// response to the `history` turns before it; negatives are turns of other conversations,
/// uniform and length-matched ([`NegativeSampling`]). Ids are
/// `topical#<conversation>/<kind>/<turn>-<j>`, so [`pair_group`] keeps a conversation on one
/// side of a split.
///
/// # Errors
/// [`Error::Config`] for `history == 0`, a share outside [0, 1], or fewer than two
/// conversations with turns.
pub fn topical_pairs(conversations: &[crate::topical::TopicalConversation], config: &TopicalPairConfig) -> Result<Vec<TrainingPair>> {
    if config.history == 0 {
        return Err(Error::Config("history must be at least 1".into()));
    }
    if !(0.0..=1.0).contains(&config.length_matched_share) {
        return Err(Error::Config(format!("length_matched_share must be in [0, 1], got {}", config.length_matched_share)));
    }
    let convs: Vec<&crate::topical::TopicalConversation> = conversations.iter().filter(|c| !c.turns.is_empty()).collect();
    if convs.len() < 2 {
        return Err(Error::Config("negatives need at least two conversations with turns".into()));
    }
    // Sequential: every turn's negatives, in the order the seeded generator draws them (word
    // counts computed once, on all cores).
    let words: Vec<Vec<usize>> = dialeval_common::par_map(&convs, |c| c.turns.iter().map(|t| word_count(&t.message)).collect());
    let mut rng = SplitMix64(config.seed);
    // Per conversation, per turn after the first: (j, kind, donor text).
    type Drawn<'a> = Vec<Vec<(usize, PairKind, &'a str)>>;
    let negatives: Vec<Drawn<'_>> = convs
        .iter()
        .enumerate()
        .map(|(ci, conv)| {
            (1..conv.turns.len())
                .map(|k| {
                    let target = words[ci][k];
                    let mut draw = |rng: &mut SplitMix64| {
                        let mut other = rng.below(convs.len() - 1);
                        if other >= ci {
                            other += 1;
                        }
                        let turns = &convs[other].turns;
                        let i = rng.below(turns.len());
                        Some((turns[i].message.as_str(), words[other][i]))
                    };
                    let mut out = Vec::with_capacity(config.negatives);
                    for j in 0..config.negatives {
                        let sampling = if rng.unit() < config.length_matched_share { NegativeSampling::LengthMatched { candidates: config.candidates } } else { NegativeSampling::Uniform };
                        if let Some(r) = sampling.pick(&mut rng, target, &mut draw) {
                            out.push((j, sampling.kind(), r));
                        }
                    }
                    out
                })
                .collect()
        })
        .collect();
    // In parallel: each conversation's pairs, kept in conversation order.
    let order: Vec<usize> = (0..convs.len()).collect();
    let per_conversation = dialeval_common::par_map(&order, |&c| {
        let conv = convs[c];
        let mut pairs = Vec::new();
        for (k, negatives) in (1..conv.turns.len()).zip(&negatives[c]) {
            let context: Vec<String> = conv.turns[k.saturating_sub(config.history)..k].iter().map(|t| t.message.clone()).collect();
            let turn = NextTurn { group: format!("topical#{}", conv.id), turn: k, context, knowledge: conv.turns[k].knowledge.clone() };
            turn.push_pairs(&mut pairs, &conv.turns[k].message, negatives);
        }
        pairs
    });
    Ok(per_conversation.into_iter().flatten().collect())
}

/// Settings of [`dailydialog_pairs`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DailyDialogPairConfig {
    /// Previous turns given as context (≥ 1).
    pub history: usize,
    /// Negatives per positive, from other dialogues' turns.
    pub negatives: usize,
    /// Share of them retrieved for sharing words with the context ([`PairKind::LexicalNegative`]),
    /// decided per negative by a seeded draw.
    pub lexical_share: f64,
    /// Share of the others matched in length ([`PairKind::LengthMatchedNegative`]); the rest
    /// are uniform ([`PairKind::SampledNegative`]).
    pub length_matched_share: f64,
    /// Draws compared for each length-matched negative.
    pub candidates: usize,
    /// Draws searched for each lexical negative.
    pub lexical_candidates: usize,
    /// Seed of the sampling.
    pub seed: u64,
}

impl Default for DailyDialogPairConfig {
    fn default() -> Self {
        Self { history: 2, negatives: 1, lexical_share: 0.5, length_matched_share: 0.5, candidates: 8, lexical_candidates: 64, seed: 0 }
    }
}

/// Words too common to make two turns look related.
const STOPWORDS: [&str; 60] = [
    "the", "and", "you", "for", "are", "but", "not", "was", "have", "has", "had", "this", "that", "with", "what", "your", "can", "will", "would", "could", "should", "there", "they", "them", "their",
    "then", "than", "from", "about", "just", "like", "yes", "yeah", "well", "okay", "how", "why", "when", "where", "who", "which", "all", "any", "some", "been", "were", "our", "out", "its", "it's",
    "i'm", "don't", "that's", "very", "much", "more", "here", "too", "also", "one",
];

/// The distinct content words of a text: lower-cased words of three letters or more outside
/// [`STOPWORDS`], sorted.
pub(crate) fn content_words(text: &str) -> Vec<String> {
    distinct_sorted(text.split(|c: char| !(c.is_alphanumeric() || c == '\'')).map(|w| w.trim_matches('\'').to_lowercase()).filter(|w| w.chars().count() >= 3 && !STOPWORDS.contains(&w.as_str())))
}

/// `words` sorted, each once (the form [`shared`] reads).
pub(crate) fn distinct_sorted(words: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut words: Vec<String> = words.into_iter().collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// How far in words a retrieved negative may be from its positive's length (`words`) to count
/// as length-matched: 2 words, or a fifth of the positive's length when that is more.
pub(crate) fn length_window(words: usize) -> usize {
    2.max(words / 5)
}

/// Words two sorted, distinct lists share.
pub(crate) fn shared(a: &[String], b: &[String]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Next-turn pairs of DailyDialog dialogues: each turn after the first is the positive response
/// to the `history` turns before it; negatives are turns of other dialogues, as GRADE and DEB
/// make them: uniform, length-matched ([`NegativeSampling`]) and lexical (of
/// `lexical_candidates` draws within a length window of the positive — at most 2 words or a
/// fifth of its length apart, if any draw is — the one sharing most content words with the
/// context, the closest in length on ties). Ids are `dailydialog#<line>/<kind>/<turn>-<j>`, so
/// [`pair_group`] keeps a dialogue on one side of a split.
///
/// # Errors
/// [`Error::Config`] for `history == 0`, a share outside [0, 1], or fewer than two dialogues.
pub fn dailydialog_pairs(dialogues: &[crate::dailydialog::DailyDialogue], config: &DailyDialogPairConfig) -> Result<Vec<TrainingPair>> {
    if config.history == 0 {
        return Err(Error::Config("history must be at least 1".into()));
    }
    for (name, share) in [("lexical_share", config.lexical_share), ("length_matched_share", config.length_matched_share)] {
        if !(0.0..=1.0).contains(&share) {
            return Err(Error::Config(format!("{name} must be in [0, 1], got {share}")));
        }
    }
    let dialogues: Vec<&crate::dailydialog::DailyDialogue> = dialogues.iter().filter(|d| !d.turns.is_empty()).collect();
    if dialogues.len() < 2 {
        return Err(Error::Config("negatives need at least two dialogues with turns".into()));
    }
    let words: Vec<Vec<usize>> = dialeval_common::par_map(&dialogues, |d| d.turns.iter().map(|t| word_count(t)).collect());
    let content: Vec<Vec<Vec<String>>> = dialeval_common::par_map(&dialogues, |d| d.turns.iter().map(|t| content_words(t)).collect());
    let mut rng = SplitMix64(config.seed);
    // Sequential: every turn's negatives, in the order the seeded generator draws them.
    type Drawn<'a> = Vec<Vec<(usize, PairKind, &'a str)>>;
    let mut negatives: Vec<Drawn<'_>> = Vec::with_capacity(dialogues.len());
    for (di, dialogue) in dialogues.iter().enumerate() {
        let mut per_turn = Vec::with_capacity(dialogue.turns.len().saturating_sub(1));
        for k in 1..dialogue.turns.len() {
            let target = words[di][k];
            let draw_place = |rng: &mut SplitMix64| {
                let mut other = rng.below(dialogues.len() - 1);
                if other >= di {
                    other += 1;
                }
                (other, rng.below(dialogues[other].turns.len()))
            };
            let mut out = Vec::with_capacity(config.negatives);
            for j in 0..config.negatives {
                if rng.unit() < config.lexical_share {
                    let context = distinct_sorted(content[di][k.saturating_sub(config.history)..k].iter().flatten().cloned());
                    let window = length_window(target);
                    // (in window, shared words, -gap): the largest wins; the first drawn on ties.
                    let mut best: Option<((bool, usize, i64), usize, usize)> = None;
                    for _ in 0..config.lexical_candidates.max(1) {
                        let (o, t) = draw_place(&mut rng);
                        let gap = words[o][t].abs_diff(target);
                        let key = (gap <= window, shared(&context, &content[o][t]), -(gap as i64));
                        if best.as_ref().is_none_or(|(b, _, _)| key > *b) {
                            best = Some((key, o, t));
                        }
                    }
                    if let Some((_, o, t)) = best {
                        out.push((j, PairKind::LexicalNegative, dialogues[o].turns[t].as_str()));
                    }
                } else {
                    let sampling = if rng.unit() < config.length_matched_share { NegativeSampling::LengthMatched { candidates: config.candidates } } else { NegativeSampling::Uniform };
                    let mut draw = |rng: &mut SplitMix64| {
                        let (o, t) = draw_place(rng);
                        Some((dialogues[o].turns[t].as_str(), words[o][t]))
                    };
                    if let Some(r) = sampling.pick(&mut rng, target, &mut draw) {
                        out.push((j, sampling.kind(), r));
                    }
                }
            }
            per_turn.push(out);
        }
        negatives.push(per_turn);
    }
    let order: Vec<usize> = (0..dialogues.len()).collect();
    let per_dialogue = dialeval_common::par_map(&order, |&d| {
        let dialogue = dialogues[d];
        let mut pairs = Vec::new();
        for (k, drawn) in (1..dialogue.turns.len()).zip(&negatives[d]) {
            let context: Vec<String> = dialogue.turns[k.saturating_sub(config.history)..k].to_vec();
            let turn = NextTurn { group: format!("dailydialog#{}", dialogue.line), turn: k, context, knowledge: None };
            turn.push_pairs(&mut pairs, &dialogue.turns[k], drawn);
        }
        pairs
    });
    Ok(per_dialogue.into_iter().flatten().collect())
}

/// The group of a pair built here: its id up to the first `/` (`dev.json#12`,
/// `topical#t_…`), so that [`split_by_group`] keeps a context or conversation on one side.
pub fn pair_group(pair: &TrainingPair) -> &str {
    pair.id.split('/').next().unwrap_or_default()
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

    fn ctx(id: u64, positives: &[&str], random: &[&str], adversarial: &[&str]) -> DdppContext {
        let v = |x: &[&str]| x.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        DdppContext { id, context: vec![format!("context {id}")], positives: v(positives), random_negatives: v(random), adversarial_negatives: v(adversarial) }
    }

    #[test]
    fn length_matching_keeps_only_negatives_close_to_a_distinct_positive() {
        let pos: Vec<String> = ["a b", "a b c d e f"].iter().map(|s| (*s).to_owned()).collect();
        let neg: Vec<String> = ["x y", "x y z", "one two three four five six seven eight nine ten"].iter().map(|s| (*s).to_owned()).collect();
        // "x y" takes "a b" (gap 0); "x y z" would need "a b" too (gap 1) and the other positive is 3 words away.
        assert_eq!(length_matched(&pos, &neg, 1), vec![0]);
        assert_eq!(length_matched(&pos, &neg, 3), vec![0, 1]);
        assert_eq!(length_matched(&pos, &neg, 100), vec![0, 1]);
        let c = ctx(1, &["a b", "a b c d e f"], &["x y", "x y z"], &["one two three four five six seven eight nine ten"]);
        let config = DdppPairConfig { length_tolerance: Some(1), ..DdppPairConfig::default() };
        let (pairs, _) = ddpp_pairs(&[c], "dev.json", None, &config).unwrap();
        let kinds: Vec<PairKind> = pairs.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, vec![PairKind::Positive, PairKind::Positive, PairKind::RandomNegative]);
    }

    #[test]
    fn length_matched_sampling_is_closer_in_length_than_uniform_and_seeded() {
        let long = "w ".repeat(30);
        let contexts: Vec<DdppContext> = (0..40).map(|i| if i % 2 == 0 { ctx(i, &["short one", "two words"], &[], &[]) } else { ctx(i, &[long.as_str(), long.as_str()], &[], &[]) }).collect();
        let build = |sampling| {
            let config = DdppPairConfig { random_negatives: false, adversarial_negatives: false, sampled_negatives: 4, sampling, seed: 3, ..DdppPairConfig::default() };
            ddpp_pairs(&contexts, "data_positives.json", None, &config).unwrap().0
        };
        let uniform = build(NegativeSampling::Uniform);
        let matched = build(NegativeSampling::LengthMatched { candidates: 8 });
        assert_eq!(matched, build(NegativeSampling::LengthMatched { candidates: 8 }), "seeded");
        assert!(matched.iter().filter(|p| p.label() == 0).all(|p| p.kind == PairKind::LengthMatchedNegative));
        let sep = |pairs: &[TrainingPair]| (length_separation(pairs).unwrap() - 0.5).abs();
        assert!(sep(&matched) < 0.05, "matched {}", sep(&matched));
        // Uniform negatives come from the other length group about half the time.
        assert!(sep(&matched) < sep(&uniform) || sep(&uniform) < 0.05);
        let gap = |pairs: &[TrainingPair]| {
            pairs
                .iter()
                .filter(|p| p.label() == 0)
                .map(|p| word_count(&p.response).abs_diff(word_count(&contexts[p.id.split('#').nth(1).unwrap().split('/').next().unwrap().parse::<usize>().unwrap()].positives[0])))
                .sum::<usize>()
        };
        assert!(gap(&matched) < gap(&uniform), "{} vs {}", gap(&matched), gap(&uniform));
    }

    #[test]
    fn length_separation_by_hand() {
        let pair = |response: &str, kind| TrainingPair { id: String::new(), context: vec![], response: response.into(), kind, context_amr: vec![], response_amr: None, knowledge: None };
        let pairs = [pair("a b c", PairKind::Positive), pair("a", PairKind::RandomNegative), pair("a b", PairKind::Positive), pair("a b c d", PairKind::AdversarialNegative)];
        assert_eq!(length_separation(&pairs), Some(0.5));
        assert_eq!(length_separation(&pairs[..2]), Some(1.0));
        assert_eq!(length_separation(&pairs[..1]), None);
    }
}
