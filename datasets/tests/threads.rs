//! The thread count never changes a training set: the pair builders draw their samples on one
//! thread and materialise pairs on all, so 1 and 4 threads give the same pairs in the same
//! order — on synthetic corpora, and on the real training mix when `../shared` is present.
#![allow(clippy::unwrap_used)] // tests fail loudly

use std::collections::BTreeMap;
use std::path::PathBuf;

use dialeval_datasets::amr::AmrBlock;
use dialeval_datasets::ddpp::DdppContext;
use dialeval_datasets::mix::{MixConfig, MixSources, build_mix};
use dialeval_datasets::pairs::{DdppPairConfig, DiplomacyPairConfig, NegativeSampling, TopicalPairConfig, TrainingPair, ddpp_pairs, diplomacy_pairs, topical_pairs};
use dialeval_datasets::topical::{TopicalConversation, TopicalTurn};

fn on<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

/// A sentence of `n` words.
fn words(n: usize, tag: usize) -> String {
    (0..n).map(|w| format!("w{tag}_{w}")).collect::<Vec<_>>().join(" ")
}

#[test]
fn pair_builders_give_the_same_pairs_on_any_thread_count() {
    let contexts: Vec<DdppContext> = (0..400)
        .map(|i| DdppContext {
            id: i as u64,
            context: vec![words(5, i), words(3 + i % 4, i + 1)],
            positives: (0..1 + i % 3).map(|p| words(2 + (i * 7 + p) % 11, i * 10 + p)).collect(),
            random_negatives: vec![words(4, i + 2)],
            adversarial_negatives: vec![words(9, i + 3), words(3, i + 4)],
        })
        .collect();
    let ddpp = |sampling| {
        let config = DdppPairConfig { sampled_negatives: 3, sampling, max_context_turns: Some(1), length_tolerance: Some(1), seed: 5, ..DdppPairConfig::default() };
        ddpp_pairs(&contexts, "dev.json", None, &config).unwrap().0
    };
    let conversations: Vec<TopicalConversation> = (0..120)
        .map(|c| TopicalConversation {
            id: format!("t_{c}"),
            article_url: String::new(),
            config: "A".into(),
            turns: (0..2 + c % 9)
                .map(|t| TopicalTurn {
                    message: words(1 + (c + t) % 13, c * 100 + t),
                    agent: format!("agent_{}", 1 + t % 2),
                    sentiment: String::new(),
                    knowledge_source: Vec::new(),
                    turn_rating: String::new(),
                    knowledge: None,
                })
                .collect(),
            conversation_rating: BTreeMap::new(),
        })
        .collect();
    let topical = || topical_pairs(&conversations, &TopicalPairConfig { negatives: 3, seed: 9, ..TopicalPairConfig::default() }).unwrap();
    let blocks: Vec<AmrBlock> = (0..300)
        .map(|b| AmrBlock {
            id: Some(format!("dip_train_{:04}.{}", b / 10, b % 10)),
            snt: Some(words(1 + b % 6, b)),
            penman: if b % 17 == 0 { "(a / amr-empty)".into() } else { format!("(s{b} / say-01)") },
            file: PathBuf::from("synthetic.amr"),
            line: 1 + 4 * b,
        })
        .collect();
    let diplomacy = || diplomacy_pairs(&blocks, &DiplomacyPairConfig { negatives: 2, seed: 3, ..DiplomacyPairConfig::default() }).unwrap().0;
    let all = || -> Vec<Vec<TrainingPair>> { vec![ddpp(NegativeSampling::Uniform), ddpp(NegativeSampling::LengthMatched { candidates: 8 }), topical(), diplomacy()] };
    let one = on(1, all);
    assert_eq!(one, on(4, all));
    assert!(one.iter().all(|set| set.len() > 500), "{:?}", one.iter().map(Vec::len).collect::<Vec<_>>());
}

#[test]
fn the_training_mix_is_the_same_on_any_thread_count() {
    let Some(shared) = dialeval_testkit::shared_dir() else { return };
    let (ddpp_dir, topical_dir) = (shared.join("data/dailydialog-plusplus"), shared.join("data/topical-chat"));
    let sources = MixSources { ddpp_dir: &ddpp_dir, topical_dir: Some(&topical_dir), dailydialog_dir: None, test_ids: &[1, 5, 9, 77, 123], topical_test_ids: &[] };
    let mix = || build_mix(&sources, &MixConfig::default()).unwrap();
    let one = on(1, mix);
    assert_eq!(one, on(4, mix));
    assert!(one.train.len() > 100_000);
}
