//! The main job's retraining recipes: what it trains when no checkpoint is shipped or
//! `--retrain` is asked for, from the data bundled in the repository.

use std::path::{Path, PathBuf};

use dialeval_common::SplitMix64;
use dialeval_datasets::amr::{AmrIndex, Coverage};
use dialeval_datasets::ddpp::{self, ExcludeList};
use dialeval_datasets::pairs::{DdppPairConfig, Split, TrainingPair, ddpp_context, ddpp_pairs, pair_group, split_by_group, split_of};
use dialeval_slm_model::bert::PretrainedEncoder;
use dialeval_slm_model::compute::Compute;
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::Mode;
use dialeval_slm_model::ruber::{RuberConfig, RuberData, Triple, train_unreferenced};
use dialeval_slm_model::train::{TrainingData, train};
use dialeval_slm_model::vectors::EmbeddingCache;

use crate::error::{Error, Result};

/// Where the main job's fallback training data lives: the bundled DailyDialog++ dev split and
/// the silver AMR of 200 of its contexts (`data/` of the repository).
#[derive(Debug, Clone)]
pub struct RetrainData {
    /// The repository's `data/` folder.
    pub data: PathBuf,
    /// Seed of splits, sampling and initialisation.
    pub seed: u64,
    /// Where the models train.
    pub compute: Compute,
}

impl RetrainData {
    fn ddpp_dev(&self) -> Result<(Vec<ddpp::DdppContext>, ExcludeList)> {
        let dir = self.data.join("dailydialog-plusplus");
        Ok((ddpp::load(&dir.join("dev.json"))?, ExcludeList::load(&dir.join("overlap_exclude_ids.tsv"))?))
    }

    /// Trains the gated SLM on the 200 bundled DailyDialog++ dev contexts with silver AMR
    /// (positives against random and adversarial negatives; 10% of contexts held out) into
    /// `dir`, resuming from its checkpoints, and marks it done.
    ///
    /// # Errors
    /// Unreadable data or a training failure.
    pub fn train_slm(&self, dir: &Path, progress: &dyn Fn(usize, usize, usize)) -> Result<()> {
        let (contexts, exclude) = self.ddpp_dev()?;
        let ids_path = self.data.join("silver-amr/dailydialog-plusplus-dev200.context-ids.json");
        let ids_text = std::fs::read_to_string(&ids_path).map_err(|e| Error::io(&ids_path, e))?;
        let ids: Vec<u64> = serde_json::from_str(&ids_text).map_err(|e| Error::json(&ids_path, e))?;
        let chosen: Vec<ddpp::DdppContext> = contexts.into_iter().filter(|c| ids.contains(&c.id)).collect();
        let index = AmrIndex::load(&[self.data.join("silver-amr/dailydialog-plusplus-dev200.silver.amr.txt")])?;
        let pairs = ddpp_slm_pairs(&chosen, "dev.json", &SlmPairing { exclude: &exclude, index: &index, seed: self.seed })?;
        let (train_p, dev_p) = split_contexts(pairs.pairs, self.seed)?;
        let config = TrainConfig { mode: Mode::Gated, epochs: 3, seed: self.seed, compute: self.compute, ..TrainConfig::default() };
        train(&TrainingData { train: &train_p, dev: &dev_p, vectors: None }, &config, dir, progress)?;
        std::fs::write(dir.join("done"), "").map_err(|e| Error::io(dir.join("done"), e))
    }

    /// Trains BERT-RUBER's unreferenced model (max pooling, cross-entropy) on the bundled
    /// DailyDialog++ dev positives against their random negatives (10% of contexts held out)
    /// into `dir`, and marks it done.
    ///
    /// # Errors
    /// Unreadable data, encoder or training failures.
    pub fn train_ruber(&self, encoder: &PretrainedEncoder, cache: &mut EmbeddingCache, dir: &Path, progress: &dyn Fn(usize, usize, usize)) -> Result<()> {
        let (contexts, exclude) = self.ddpp_dev()?;
        let config = RuberConfig { epochs: 20, patience: 5, seed: self.seed, compute: self.compute, ..RuberConfig::default() };
        let (mut train_t, mut dev_t) = (Vec::new(), Vec::new());
        for c in contexts.iter().filter(|c| !exclude.contains("dev.json", c.id)) {
            let triples = random_negative_triples(c, &config);
            if split_of(&c.id.to_string(), [0.9, 0.1, 0.0], self.seed)? == Split::Train {
                train_t.extend(triples);
            } else {
                dev_t.extend(triples);
            }
        }
        let texts: Vec<&str> = train_t.iter().chain(&dev_t).flat_map(|t| [t.query.as_str(), t.positive.as_str(), t.negative.as_str()]).collect();
        cache.fill(encoder, &texts, &|_, _| {})?;
        train_unreferenced(&RuberData { train: &train_t, dev: &dev_t, cache, vocab: encoder.vocab_size() }, &config, dir, progress)?;
        std::fs::write(dir.join("done"), "").map_err(|e| Error::io(dir.join("done"), e))
    }
}

/// The SLM pairs of a DailyDialog++ file ([`ddpp_slm_pairs`]).
#[derive(Debug, Clone)]
pub struct DdppSlmPairs {
    /// Positives against random and adversarial negatives.
    pub pairs: Vec<TrainingPair>,
    /// Contexts left out by the overlap list.
    pub excluded: usize,
    /// How many turns and responses have a graph.
    pub coverage: Coverage,
}

/// How [`ddpp_slm_pairs`] makes pairs: the contexts to leave out, the silver graphs to attach
/// (by sentence text) and the seed of the negative draws.
#[derive(Debug, Clone, Copy)]
pub struct SlmPairing<'a> {
    /// DailyDialog++'s overlap list (contexts also in DailyDialog's test split).
    pub exclude: &'a ExcludeList,
    /// Graphs by sentence text; an empty index leaves the pairs text-only.
    pub index: &'a AmrIndex,
    /// Seeds the negative draws.
    pub seed: u64,
}

/// The pairs every SLM recipe trains on from DailyDialog++ contexts of `file`: at most two
/// context turns, each positive against the context's random and adversarial negatives, made
/// as `pairing` says.
///
/// # Errors
/// As [`ddpp_pairs`].
pub fn ddpp_slm_pairs(contexts: &[ddpp::DdppContext], file: &str, pairing: &SlmPairing) -> Result<DdppSlmPairs> {
    let (mut pairs, excluded) = ddpp_pairs(contexts, file, Some(pairing.exclude), &DdppPairConfig { max_context_turns: Some(2), seed: pairing.seed, ..DdppPairConfig::default() })?;
    let coverage = pairing.index.attach_pairs(&mut pairs);
    Ok(DdppSlmPairs { pairs, excluded, coverage })
}

/// Training and dev pairs: 90% and 10% of the contexts (a context's pairs stay together),
/// chosen by `seed`.
///
/// # Errors
/// As [`split_by_group`].
pub fn split_contexts(pairs: Vec<TrainingPair>, seed: u64) -> Result<(Vec<TrainingPair>, Vec<TrainingPair>)> {
    let (train, dev, _) = split_by_group(pairs, [0.9, 0.1, 0.0], seed, ddpp_context)?;
    Ok((train, dev))
}

/// BERT-RUBER's training triples from the pairs of the training mix
/// ([`dialeval_datasets::mix`]): within each context (or conversation), the k-th positive with
/// the k-th negative, negatives reused in turn when there are fewer; contexts without a negative
/// give none.
pub fn mix_triples(pairs: &[TrainingPair], config: &RuberConfig) -> Vec<Triple> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < pairs.len() {
        let group = pair_group(&pairs[start]);
        let end = start + pairs[start..].iter().take_while(|p| pair_group(p) == group).count();
        let (positives, negatives): (Vec<_>, Vec<_>) = pairs[start..end].iter().partition(|p| p.label() == 1);
        if !negatives.is_empty() {
            for (k, p) in positives.iter().enumerate() {
                let n = negatives[k % negatives.len()];
                out.push(Triple { query: config.query(&p.context), positive: p.response.clone(), negative: n.response.clone(), knowledge: p.knowledge.clone() });
            }
        }
        start = end;
    }
    out
}

/// BERT-RUBER triples of negatives retrieved for the positives of `pairs`
/// ([`dialeval_datasets::negatives::retrieve_negatives`]): each retrieved negative against the
/// positive it was retrieved for (its id is that positive's id with `/lexical` or `/embedding`
/// appended), with the positive's query and knowledge. They come on top of [`mix_triples`]'
/// triples, so a positive with a retrieved negative is seen against both.
///
/// # Errors
/// [`Error::Config`] for a retrieved negative whose positive is not among `pairs` (named by id).
pub fn retrieved_triples(pairs: &[TrainingPair], retrieved: &[TrainingPair], config: &RuberConfig) -> Result<Vec<Triple>> {
    let positives: std::collections::HashMap<&str, &TrainingPair> = pairs.iter().filter(|p| p.label() == 1).map(|p| (p.id.as_str(), p)).collect();
    retrieved
        .iter()
        .map(|n| {
            let positive = n.id.rsplit_once('/').and_then(|(id, _)| positives.get(id)).ok_or_else(|| Error::Config(format!("retrieved negative {} names no positive of the training pairs", n.id)))?;
            Ok(Triple { query: config.query(&positive.context), positive: positive.response.clone(), negative: n.response.clone(), knowledge: positive.knowledge.clone() })
        })
        .collect()
}

/// One triple per positive of each context, against the context's random negative in turn
/// (DailyDialog++'s released negatives).
pub fn random_negative_triples(context: &ddpp::DdppContext, config: &RuberConfig) -> impl Iterator<Item = Triple> {
    let query = config.query(&context.context);
    context.positives.iter().zip(&context.random_negatives).map(move |(p, n)| Triple { query: query.clone(), positive: p.clone(), negative: n.clone(), knowledge: None })
}

/// One triple per positive: a positive of another context, drawn with `seed`, is its negative.
pub fn sampled_triples(contexts: &[ddpp::DdppContext], config: &RuberConfig, seed: u64) -> Vec<Triple> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::new();
    for (k, c) in contexts.iter().enumerate() {
        for p in &c.positives {
            let mut other = rng.below(contexts.len().saturating_sub(1).max(1));
            if other >= k {
                other = (other + 1) % contexts.len();
            }
            let donor = &contexts[other].positives;
            if other == k || donor.is_empty() {
                continue;
            }
            out.push(Triple { query: config.query(&c.context), positive: p.clone(), negative: donor[rng.below(donor.len())].clone(), knowledge: None });
        }
    }
    out
}

/// The earlier BERT-RUBER recipe: training triples from the first `contexts` contexts of
/// `data_positives.json` in `ddpp_dir` ([`sampled_triples`]), dev triples from 300 contexts of
/// `dev.json` ([`random_negative_triples`]); both honour `overlap_exclude_ids.tsv`.
///
/// # Errors
/// Unreadable DailyDialog++ files.
pub fn positives_triples(ddpp_dir: &Path, config: &RuberConfig, contexts: usize) -> Result<(Vec<Triple>, Vec<Triple>)> {
    let exclude = ExcludeList::load(&ddpp_dir.join("overlap_exclude_ids.tsv"))?;
    let keep = |file: &str, contexts: Vec<ddpp::DdppContext>| -> Vec<ddpp::DdppContext> { contexts.into_iter().filter(|c| !exclude.contains(file, c.id)).collect() };
    let mut positives = keep("data_positives.json", ddpp::load(&ddpp_dir.join("data_positives.json"))?);
    positives.truncate(contexts);
    let mut dev_contexts = keep("dev.json", ddpp::load(&ddpp_dir.join("dev.json"))?);
    dev_contexts.truncate(300);
    let train = sampled_triples(&positives, config, config.seed);
    let dev = dev_contexts.iter().flat_map(|c| random_negative_triples(c, config)).collect();
    Ok((train, dev))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;
    use dialeval_datasets::negatives::{RetrievedNegatives, retrieve_negatives};
    use dialeval_datasets::pairs::PairKind;

    fn pair(id: &str, context: &str, response: &str, kind: PairKind) -> TrainingPair {
        TrainingPair { id: id.into(), context: vec!["hello there".into(), context.into()], response: response.into(), kind, context_amr: vec![None, None], response_amr: None, knowledge: None }
    }

    fn pairs() -> Vec<TrainingPair> {
        vec![
            pair("a/positive/0", "do you like jazz music", "i love jazz", PairKind::Positive),
            pair("a/positive/1", "do you like jazz music", "not really my thing", PairKind::Positive),
            pair("a/random/0", "do you like jazz music", "the bus was late", PairKind::RandomNegative),
            pair("b/positive/0", "where is the station", "turn left at the bank", PairKind::Positive),
            pair("c/positive/0", "what music do you play", "mostly jazz music", PairKind::Positive),
            pair("c/random/0", "what music do you play", "i ate soup", PairKind::RandomNegative),
        ]
    }

    #[test]
    fn mix_triples_pair_each_positive_with_a_negative_of_its_own_context() {
        let config = RuberConfig { query_turns: 1, ..RuberConfig::default() };
        let triples = mix_triples(&pairs(), &config);
        let seen: Vec<(&str, &str, &str)> = triples.iter().map(|t| (t.query.as_str(), t.positive.as_str(), t.negative.as_str())).collect();
        assert_eq!(
            seen,
            [
                ("do you like jazz music", "i love jazz", "the bus was late"),
                ("do you like jazz music", "not really my thing", "the bus was late"),
                ("what music do you play", "mostly jazz music", "i ate soup"),
            ],
            "b has no negative, so no triple"
        );
    }

    #[test]
    fn retrieved_negatives_stand_against_the_positive_they_were_retrieved_for() {
        let config = RuberConfig { query_turns: 2, ..RuberConfig::default() };
        let mut training = pairs();
        training[0].knowledge = Some("jazz is a genre".into());
        let retrieved = retrieve_negatives(&training, &RetrievedNegatives { lexical_share: 1.0, ..RetrievedNegatives::default() }, None).unwrap();
        let triples = retrieved_triples(&training, &retrieved, &config).unwrap();
        assert_eq!(triples.len(), retrieved.len());
        assert_eq!(triples.len(), 4, "one per positive");
        // a's first positive: its query (two turns), its knowledge, and the response of another
        // group that shares most with its context ("jazz", "music").
        let first = &triples[0];
        assert_eq!((first.query.as_str(), first.positive.as_str(), first.negative.as_str()), ("hello there do you like jazz music", "i love jazz", "mostly jazz music"));
        assert_eq!(first.knowledge.as_deref(), Some("jazz is a genre"));
        for (t, n) in triples.iter().zip(&retrieved) {
            assert_eq!(t.negative, n.response);
            assert_ne!(t.positive, t.negative);
        }
        // A negative whose positive is not among the pairs is an error naming it.
        let err = retrieved_triples(&training[3..], &retrieved, &config).unwrap_err().to_string();
        assert!(err.contains("a/positive/0/lexical"), "{err}");
    }
}
