//! Every loader on its real files in `../shared/data`, with the counts of each SOURCE.md, and
//! the builders' determinism.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::collections::HashMap;
use std::path::PathBuf;

use dialeval_datasets::amr::{AmrIndex, read_blocks, read_blocks_lenient};
use dialeval_datasets::pairs::{DdppPairConfig, DiplomacyPairConfig, PairKind, ddpp_context, ddpp_pairs, diplomacy_pairs, split_by_group};
use dialeval_datasets::{Corpus, Criterion, ddpp, fed, topical, usr};
use dialeval_testkit::shared_dir;

fn data() -> Option<PathBuf> {
    shared_dir().map(|s| s.join("data"))
}

#[test]
fn usr_personachat_has_300_rated_responses() {
    let Some(data) = data() else { return };
    let items = usr::load(&data.join("usr-personachat/pc_usr_data.json")).unwrap();
    assert_eq!(items.len(), 300);
    let mut systems: HashMap<&str, usize> = HashMap::new();
    for it in &items {
        *systems.entry(it.system.as_deref().unwrap()).or_default() += 1;
        assert_eq!(it.annotators.len(), 3);
        for c in Criterion::ALL {
            assert_eq!(it.rating(c).unwrap().scores.len(), 3, "{c}");
        }
        assert_eq!(it.references.len(), usize::from(it.system.as_deref() != Some(usr::GROUND_TRUTH)));
        assert!(it.knowledge.as_deref().unwrap().starts_with("your persona:"));
    }
    assert_eq!(systems.len(), 5);
    assert!(systems.values().all(|&n| n == 60));
    // The golden vectors' human means: pair 0 is context 0's KV-MemNN response.
    let first = items.iter().find(|i| i.system.as_deref() == Some("KV-MemNN")).unwrap();
    assert_eq!(first.quality("Maintains Context").unwrap().scores, [Some(1.0); 3]);
    assert_eq!(first.references, ["ha ha i'm so shy"]);
}

#[test]
fn fed_has_375_turns_and_125_dialogues_with_missing_values() {
    let Some(data) = data() else { return };
    let f = fed::load(&data.join("fed/fed_data.json")).unwrap();
    assert_eq!((f.turns.len(), f.dialogues.len()), (375, 125));
    let mut systems: HashMap<String, usize> = HashMap::new();
    for it in f.turns.iter().chain(&f.dialogues) {
        *systems.entry(it.system.clone().unwrap()).or_default() += 1;
        assert!(it.ratings.iter().all(|r| r.scores.len() == 5));
    }
    assert_eq!(systems["Mitsuku"], 176);
    assert_eq!(systems["Human"], 164);
    assert_eq!(systems["Meena"], 160);
    assert!(f.turns.iter().all(|t| t.corpus == Corpus::FedTurn && t.response.is_some() && t.rating(Criterion::Naturalness).is_some()));
    assert!(f.dialogues.iter().all(|t| t.response.is_none() && t.rating(Criterion::Coherence).is_some()));
    let missing: usize = f.dialogues.iter().flat_map(|d| &d.ratings).map(|r| r.scores.iter().filter(|s| s.is_none()).count()).sum();
    assert!(missing > 0, "FED's N/A scores must be missing values");
    assert_eq!(f.turns[0].context[0].speaker.as_deref(), Some("User"));
}

#[test]
fn dailydialog_plusplus_counts_and_exclusions() {
    let Some(data) = data() else { return };
    let dir = data.join("dailydialog-plusplus");
    let dev = ddpp::load(&dir.join("dev.json")).unwrap();
    let test = ddpp::load(&dir.join("test.json")).unwrap();
    let positives = ddpp::load(&dir.join("data_positives.json")).unwrap();
    assert_eq!((dev.len(), test.len(), positives.len()), (1028, 1142, 7641));
    for c in dev.iter().chain(&test) {
        assert_eq!((c.positives.len(), c.random_negatives.len(), c.adversarial_negatives.len()), (5, 5, 5), "context {}", c.id);
    }
    assert!(positives.iter().all(|c| c.positives.len() == 5 && c.random_negatives.is_empty()));
    let exclude = ddpp::ExcludeList::load(&dir.join("overlap_exclude_ids.tsv")).unwrap();
    assert_eq!(exclude.len(), 1157);
    assert_eq!((exclude.count_for("dev.json"), exclude.count_for("test.json"), exclude.count_for("data_positives.json")), (88, 140, 929));

    let config = DdppPairConfig { sampled_negatives: 2, seed: 11, ..DdppPairConfig::default() };
    let (pairs, excluded) = ddpp_pairs(&dev, "dev.json", Some(&exclude), &config).unwrap();
    assert_eq!(excluded, 88);
    assert_eq!(pairs.len(), (1028 - 88) * 17);
    assert_eq!(pairs.iter().filter(|p| p.kind == PairKind::Positive).count(), (1028 - 88) * 5);
    let (again, _) = ddpp_pairs(&dev, "dev.json", Some(&exclude), &config).unwrap();
    assert_eq!(pairs, again, "same seed, same pairs");
    let (other, _) = ddpp_pairs(&dev, "dev.json", Some(&exclude), &DdppPairConfig { seed: 12, ..config }).unwrap();
    assert_ne!(pairs, other);
    // A sampled negative never comes from the context itself.
    for p in pairs.iter().filter(|p| p.kind == PairKind::SampledNegative) {
        let own = dev.iter().find(|c| p.id.starts_with(&format!("dev.json#{}/", c.id))).unwrap();
        assert!(!own.positives.contains(&p.response) || dev.iter().filter(|c| c.positives.contains(&p.response)).count() > 1);
    }
}

#[test]
fn topical_chat_rare_splits_and_knowledge() {
    let Some(data) = data() else { return };
    let dir = data.join("topical-chat");
    let wiki = topical::load_wiki(&dir.join("wiki.json")).unwrap();
    assert_eq!((wiki.shortened.len(), wiki.summarized.len()), (261, 255));
    for (split, turns) in [("valid_rare", 11_692), ("test_rare", 11_770)] {
        let convs = topical::load_conversations(&dir.join(format!("conversations/{split}.json"))).unwrap();
        assert_eq!(convs.len(), 539);
        assert_eq!(convs.iter().map(|c| c.turns.len()).sum::<usize>(), turns);
        let sets = topical::load_reading_sets(&dir.join(format!("reading_sets/pre-build/{split}.json"))).unwrap();
        assert_eq!(sets.len(), 539);
        let items = topical::to_items(&convs, &sets, &wiki);
        assert_eq!(items.len(), turns - 539);
        let grounded = items.iter().filter(|i| i.knowledge.is_some()).count();
        assert!(grounded > items.len() / 3, "{grounded} of {} items carry Wikipedia knowledge", items.len());
        // Resolved onto the turns, the knowledge travels with the next-turn pairs: a turn's
        // positive and its negatives all carry the turn's knowledge, the item's.
        let mut resolved = convs.clone();
        let turns_with = topical::resolve_knowledge(&mut resolved, &sets, &wiki);
        assert_eq!(turns_with, resolved.iter().flat_map(|c| &c.turns).filter(|t| t.knowledge.is_some()).count());
        assert!(turns_with >= grounded);
        let config = dialeval_datasets::pairs::TopicalPairConfig { negatives: 1, ..Default::default() };
        let pairs = dialeval_datasets::pairs::topical_pairs(&resolved, &config).unwrap();
        let by_id: HashMap<String, Option<&str>> = items.iter().map(|i| (i.id.clone(), i.knowledge.as_deref())).collect();
        for p in pairs.iter().take(3000) {
            // topical#<conversation>/<kind>/<turn>-<j> ↔ item <conversation>#<turn>
            let (conv, rest) = p.id.trim_start_matches("topical#").split_once('/').unwrap();
            let turn = rest.rsplit_once('/').unwrap().1.split_once('-').unwrap().0;
            assert_eq!(p.knowledge.as_deref(), by_id[&format!("{conv}#{turn}")], "{}", p.id);
        }
        assert_eq!(pairs.iter().filter(|p| p.knowledge.is_some()).count(), 2 * grounded);
        assert!(dialeval_datasets::pairs::topical_pairs(&convs, &config).unwrap().iter().all(|p| p.knowledge.is_none()));
    }
}

#[test]
fn silver_amr_covers_every_usr_utterance() {
    let Some(data) = data() else { return };
    let mut items = usr::load(&data.join("usr-personachat/pc_usr_data.json")).unwrap();
    let index = AmrIndex::load(&[data.join("silver-amr/usr-personachat.silver.amr.txt")]).unwrap();
    assert_eq!(index.len(), 771);
    let coverage = index.attach(&mut items);
    assert_eq!(coverage.with_amr, coverage.turns, "every USR turn and response has a silver graph");
    assert!(items[0].response.as_ref().unwrap().amr.as_deref().unwrap().starts_with('('));
}

#[test]
fn silver_amr_covers_the_listed_dailydialog_contexts() {
    let Some(data) = data() else { return };
    let silver = data.join("silver-amr");
    let files: Vec<PathBuf> =
        ["dailydialog-plusplus-dev200", "dailydialog-plusplus-dev-more300", "dailydialog-plusplus-test100", "usr-personachat"].iter().map(|f| silver.join(format!("{f}.silver.amr.txt"))).collect();
    let index = AmrIndex::load(&files).unwrap();
    assert_eq!(index.len(), 3117 + 3728 + 1581 + 771);
    let dev = ddpp::load(&data.join("dailydialog-plusplus/dev.json")).unwrap();
    let ids: Vec<u64> = serde_json::from_str(&std::fs::read_to_string(silver.join("dailydialog-plusplus-dev200.context-ids.json")).unwrap()).unwrap();
    assert_eq!(ids.len(), 200);
    for id in ids {
        let c = dev.iter().find(|c| c.id == id).unwrap();
        for text in c.context.iter().rev().take(2).chain(&c.positives).chain(&c.random_negatives).chain(&c.adversarial_negatives) {
            assert!(index.by_text(text).is_some(), "context {id}: no silver graph for {text:?}");
        }
    }
    // The 500 annotated dev contexts as training pairs: every turn and response gets its graph,
    // and the dev split keeps each context's 15 pairs together.
    let mut ids: Vec<u64> = serde_json::from_str(&std::fs::read_to_string(silver.join("dailydialog-plusplus-dev200.context-ids.json")).unwrap()).unwrap();
    ids.extend(serde_json::from_str::<Vec<u64>>(&std::fs::read_to_string(silver.join("dailydialog-plusplus-dev-more300.context-ids.json")).unwrap()).unwrap());
    let chosen: Vec<_> = dev.into_iter().filter(|c| ids.contains(&c.id)).collect();
    let (mut pairs, excluded) = ddpp_pairs(&chosen, "dev.json", None, &DdppPairConfig { max_context_turns: Some(2), ..DdppPairConfig::default() }).unwrap();
    assert_eq!((pairs.len(), excluded), (7500, 0));
    let coverage = index.attach_pairs(&mut pairs);
    assert_eq!((coverage.turns, coverage.with_amr), (7500 * 3 - pairs.iter().filter(|p| p.context.len() < 2).count(), coverage.turns));
    assert!(pairs.iter().all(|p| p.response_amr.is_some() && p.context_amr.len() == p.context.len()));
    let (train, dev, test) = split_by_group(pairs, [0.8, 0.1, 0.1], 7, ddpp_context).unwrap();
    assert_eq!(train.len() + dev.len() + test.len(), 7500);
    let dev_contexts: std::collections::HashSet<&str> = dev.iter().map(ddpp_context).collect();
    assert!(train.iter().chain(&test).all(|p| !dev_contexts.contains(ddpp_context(p))), "a context is on two sides");
    assert_eq!(dev.len() % 15, 0);
    assert!((20..=80).contains(&dev_contexts.len()), "{} dev contexts of 500", dev_contexts.len());
}

#[test]
fn diplomacy_pairs_carry_gold_graphs_and_are_seeded() {
    let Some(data) = data() else { return };
    let file = data.join("amr-diplomacy/dip-all-amr-smosher.txt");
    // One sentence of the file has no graph: the strict reader names it, the lenient one skips it.
    let err = read_blocks(&file).unwrap_err().to_string();
    assert!(err.contains("dip-all-amr-smosher.txt") && err.contains("no graph"), "{err}");
    let (blocks, malformed) = read_blocks_lenient(&file).unwrap();
    assert_eq!(malformed.len(), 1);
    assert_eq!(malformed[0].id.as_deref(), Some("dip_test_0039.1"));
    assert_eq!(blocks.len(), 8882);
    assert_eq!(blocks.iter().filter(|b| b.is_empty_placeholder()).count(), 4412);
    let config = DiplomacyPairConfig { history: 2, negatives: 1, drop_empty: true, seed: 5 };
    let (pairs, skipped) = diplomacy_pairs(&blocks, &config).unwrap();
    assert_eq!(skipped, 0);
    assert!(pairs.len() > 1000);
    assert!(pairs.iter().all(|p| p.response_amr.is_some() && p.context_amr.iter().all(Option::is_some) && p.context.len() <= 2));
    assert!(pairs.iter().all(|p| !p.response_amr.as_deref().unwrap().contains("amr-empty")));
    assert_eq!(pairs.iter().filter(|p| p.label() == 1).count(), pairs.iter().filter(|p| p.label() == 0).count());
    assert_eq!(pairs, diplomacy_pairs(&blocks, &config).unwrap().0);
    let (all, _) = diplomacy_pairs(&blocks, &DiplomacyPairConfig { drop_empty: false, ..config }).unwrap();
    assert!(all.len() > pairs.len());
}

#[test]
fn training_mix_keeps_evaluation_contexts_out_and_length_uninformative() {
    use dialeval_datasets::mix::{MixConfig, MixSources, build_mix};
    use dialeval_datasets::pairs::{length_separation, pair_group};
    let Some(data) = data() else { return };
    let ids: Vec<u64> = serde_json::from_str(&std::fs::read_to_string(data.join("silver-amr/dailydialog-plusplus-test100.context-ids.json")).unwrap()).unwrap();
    let sources = MixSources {
        ddpp_dir: &data.join("dailydialog-plusplus"),
        topical_dir: Some(&data.join("topical-chat")),
        dailydialog_dir: Some(&data.join("dailydialog")),
        test_ids: &ids,
        topical_test_ids: &[],
    };
    let config = MixConfig::default();
    let mix = build_mix(&sources, &config).unwrap();
    assert_eq!(mix.excluded, 1157, "every overlap entry is dropped");
    // The test split is the 100 annotated test contexts, 15 pairs each, and nothing else.
    assert_eq!(mix.test.len(), 1500);
    let test_groups: std::collections::HashSet<&str> = mix.test.iter().map(pair_group).collect();
    assert_eq!(test_groups.len(), 100);
    for p in mix.train.iter().chain(&mix.dev) {
        assert!(!test_groups.contains(pair_group(p)), "{} is a test context", p.id);
    }
    let dev_groups: std::collections::HashSet<&str> = mix.dev.iter().map(pair_group).collect();
    assert!(mix.train.iter().all(|p| !dev_groups.contains(pair_group(p))), "no context on two sides");
    // Every source is there.
    for prefix in ["dev.json#", "test.json#", "data_positives.json#", "topical#"] {
        assert!(mix.train.iter().any(|p| p.id.starts_with(prefix)), "{prefix}");
    }
    assert!(mix.train.len() > 100_000, "{}", mix.train.len());
    // Length-controlled training data: length alone hardly separates the classes, while the
    // uncontrolled DailyDialog++ pairs are separated by it (negatives are longer).
    for prefix in ["dev.json#", "test.json#", "data_positives.json#", "topical#"] {
        let part: Vec<_> = mix.train.iter().filter(|p| p.id.starts_with(prefix)).cloned().collect();
        let pos = part.iter().filter(|p| p.label() == 1).count();
        eprintln!("{prefix}: {} pairs, {pos} positive, length AUC {:?}", part.len(), length_separation(&part));
    }
    let sep = length_separation(&mix.train).unwrap();
    assert!((sep - 0.5).abs() < 0.05, "length AUC of the controlled mix {sep}");
    let raw = build_mix(&sources, &MixConfig { ddpp_length_tolerance: None, positives_negatives: 0, topical: None, ..config }).unwrap();
    let raw_sep = length_separation(&raw.train).unwrap();
    assert!(raw_sep < 0.40, "length AUC of DailyDialog++ as released {raw_sep}");
    assert_eq!(build_mix(&sources, &config).unwrap(), mix, "seeded");

    // Held-out Topical-Chat conversations: their pairs only in the second test split.
    let held: Vec<String> =
        serde_json::from_str::<Vec<String>>(&std::fs::read_to_string(data.join("silver-amr/topical-chat-valid-rare.conversation-ids.json")).unwrap()).unwrap().into_iter().step_by(2).collect();
    let with_test = build_mix(&MixSources { topical_test_ids: &held, ..sources }, &config).unwrap();
    let held_groups: std::collections::HashSet<String> = held.iter().map(|id| format!("topical#{id}")).collect();
    assert!(!with_test.topical_test.is_empty() && with_test.topical_test.iter().all(|p| held_groups.contains(pair_group(p))));
    assert!(with_test.train.iter().chain(&with_test.dev).all(|p| !held_groups.contains(pair_group(p))), "a held-out conversation is trained on");
    // Its negatives come from held-out conversations too.
    let held_texts: std::collections::HashSet<&str> = with_test.topical_test.iter().filter(|p| p.label() == 1).map(|p| p.response.as_str()).collect();
    let from_held = with_test.topical_test.iter().filter(|p| p.label() == 0 && held_texts.contains(p.response.as_str())).count();
    let negatives = with_test.topical_test.iter().filter(|p| p.label() == 0).count();
    assert!(from_held * 10 >= negatives * 9, "{from_held} of {negatives} negatives are turns of held-out conversations");
}

#[test]
fn topical_pairs_are_next_turns_with_length_matched_negatives() {
    use dialeval_datasets::pairs::{TopicalPairConfig, length_separation, topical_pairs};
    let Some(data) = data() else { return };
    let convs = topical::load_conversations(&data.join("topical-chat/conversations/valid_rare.json")).unwrap();
    let config = TopicalPairConfig { history: 2, negatives: 2, length_matched_share: 0.5, candidates: 8, seed: 5 };
    let pairs = topical_pairs(&convs, &config).unwrap();
    let positives = 11_692 - 539;
    assert_eq!(pairs.len(), 3 * positives);
    let matched_share = pairs.iter().filter(|p| p.kind == PairKind::LengthMatchedNegative).count() as f64 / (2 * positives) as f64;
    assert!((matched_share - 0.5).abs() < 0.02, "{matched_share}");
    let first = &pairs[0];
    assert_eq!((first.kind, first.context.len()), (PairKind::Positive, 1));
    assert_eq!(first.response, convs[0].turns[1].message);
    let words = |t: &str| t.split_whitespace().count() as f64;
    let gap = |kind: PairKind| {
        let (mut total, mut n) = (0.0, 0.0);
        for w in pairs.chunks(3) {
            for neg in w.iter().filter(|p| p.kind == kind) {
                total += (words(&neg.response) - words(&w[0].response)).abs();
                n += 1.0;
            }
        }
        total / n
    };
    assert!(gap(PairKind::LengthMatchedNegative) < 0.5 * gap(PairKind::SampledNegative), "{} vs {}", gap(PairKind::LengthMatchedNegative), gap(PairKind::SampledNegative));
    let matched: Vec<_> = pairs.iter().filter(|p| p.kind != PairKind::SampledNegative).cloned().collect();
    assert!((length_separation(&matched).unwrap() - 0.5).abs() < 0.03);
    // No negative comes from its own conversation.
    let conv_of = |id: &str| id.split('/').next().unwrap().trim_start_matches("topical#").to_owned();
    let by_id: HashMap<&str, &topical::TopicalConversation> = convs.iter().map(|c| (c.id.as_str(), c)).collect();
    for p in pairs.iter().filter(|p| p.label() == 0).take(2000) {
        let own = by_id[conv_of(&p.id).as_str()];
        assert!(!own.turns.iter().any(|t| t.message == p.response) || convs.iter().filter(|c| c.turns.iter().any(|t| t.message == p.response)).count() > 1);
    }
    assert!(topical_pairs(&convs[..1], &config).is_err());
    assert!(topical_pairs(&convs, &TopicalPairConfig { history: 0, ..config }).is_err());
    assert!(topical_pairs(&convs, &TopicalPairConfig { length_matched_share: 1.5, ..config }).is_err());
}

#[test]
fn dailydialog_train_split_without_test_overlap_and_its_pairs() {
    use dialeval_datasets::dailydialog::{load, load_split, overlap_key};
    use dialeval_datasets::mix::{MixConfig, MixSources, build_mix};
    use dialeval_datasets::pairs::{DailyDialogPairConfig, dailydialog_pairs, length_separation};
    let Some(data) = data() else { return };
    let dir = data.join("dailydialog");
    let all = load(&dir.join("dialogues_train.txt.gz")).unwrap();
    assert_eq!(all.len(), 11_118, "SOURCE.md's count");
    assert_eq!(all.iter().map(|d| d.turns.len()).sum::<usize>(), 87_171);
    assert_eq!(all[2].turns[0], "Can you study with the radio on?");
    let split = load_split(&dir, []).unwrap();
    assert_eq!(split.overlapping_test, 588, "every line of overlap_with_test.tsv is dropped");
    // SOURCE.md counts 603 lines that repeat another byte for byte; compared on lower-cased
    // letters and digits, more do.
    assert_eq!(split.repeated, 842);
    assert_eq!(split.dialogues.len(), 11_118 - 588 - split.repeated);

    // In the mix: the dialogues that share an utterance with the DailyDialog++ test split go.
    let ids: Vec<u64> = serde_json::from_str(&std::fs::read_to_string(data.join("silver-amr/dailydialog-plusplus-test100.context-ids.json")).unwrap()).unwrap();
    let sources = MixSources { ddpp_dir: &data.join("dailydialog-plusplus"), topical_dir: None, dailydialog_dir: Some(&dir), test_ids: &ids, topical_test_ids: &[] };
    let mix = build_mix(&sources, &MixConfig { topical: None, positives_negatives: 0, dailydialog: Some(DailyDialogPairConfig::default()), ..MixConfig::default() }).unwrap();
    eprintln!("DailyDialog dropped: {:?} (listed, repeated, sharing with the test split)", mix.dailydialog_dropped);
    let test_keys: std::collections::HashSet<String> = mix.test.iter().flat_map(|p| p.context.iter().chain([&p.response])).filter_map(|t| overlap_key(t)).collect();
    let dd: Vec<_> = mix.train.iter().chain(&mix.dev).filter(|p| p.id.starts_with("dailydialog#")).collect();
    assert!(dd.len() > 100_000, "{}", dd.len());
    for p in &dd {
        assert!(p.context.iter().chain([&p.response]).all(|t| overlap_key(t).is_none_or(|k| !test_keys.contains(&k))), "{} shares a test utterance", p.id);
    }

    // The pairs: one negative per positive, half lexical, length controlled, seeded.
    let config = DailyDialogPairConfig { seed: 3, ..DailyDialogPairConfig::default() };
    let pairs = dailydialog_pairs(&split.dialogues, &config).unwrap();
    let positives = pairs.iter().filter(|p| p.label() == 1).count();
    assert_eq!(positives, split.dialogues.iter().map(|d| d.turns.len() - 1).sum::<usize>());
    assert_eq!(pairs.len(), 2 * positives);
    let lexical = pairs.iter().filter(|p| p.kind == PairKind::LexicalNegative).count() as f64 / positives as f64;
    assert!((lexical - 0.5).abs() < 0.02, "{lexical}");
    let sep = length_separation(&pairs).unwrap();
    assert!((sep - 0.5).abs() < 0.05, "length AUC {sep}");
    // Lexical negatives share more content words with their context than uniform ones.
    let overlap = |kind: PairKind| {
        let words = |t: &str| t.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 4).map(str::to_owned).collect::<std::collections::HashSet<_>>();
        let chosen: Vec<_> = pairs.iter().filter(|p| p.kind == kind).collect();
        chosen.iter().filter(|p| !words(&p.response).is_disjoint(&p.context.iter().flat_map(|c| words(c)).collect())).count() as f64 / chosen.len() as f64
    };
    let (lex, uniform) = (overlap(PairKind::LexicalNegative), overlap(PairKind::SampledNegative));
    eprintln!("share of negatives sharing a word of 4+ letters with the context: lexical {lex:.3}, uniform {uniform:.3}");
    assert!(lex > uniform + 0.2, "lexical {lex} vs uniform {uniform}");
    assert_eq!(dailydialog_pairs(&split.dialogues, &config).unwrap(), pairs, "seeded");
}
