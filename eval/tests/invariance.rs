//! A result is a function of the items and the settings alone: however a corpus is cut into
//! chunks (1 item up to all of them) or shards (merged afterwards), `scores.jsonl` and
//! `correlations.json` are byte for byte those of one run over the whole, on corpora with
//! references, with some, and with none (issue 53: BERT-RUBER's referenced score and hybrids
//! once depended on the chunk size).
//!
//! The property test runs the families without models over random corpora; the test with the
//! models runs the main job's families (the embedding metrics, the context cosines, BERT-RUBER
//! and the SLM with the shipped checkpoints on all-MiniLM-L6-v2) on real dialogue turns.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use std::sync::Arc;

use dialeval_common::Criterion;
use dialeval_datasets::{DialogueItem, Rating, Turn};
use dialeval_eval::families::{EmbeddingFamily, LengthFamily, LexicalFamily, MemoEmbedder, SpecificityFamily};
use dialeval_eval::{Evaluation, Pipeline, Report};
use dialeval_metrics::report::ReportConfig;
use proptest::prelude::*;

mod common;
use common::{WordHash, cut_free_files, item, merged_report};

fn light() -> Pipeline {
    let mut p = Pipeline::new();
    p.add(LengthFamily).add(SpecificityFamily::new().unwrap()).add(LexicalFamily::new().unwrap()).add(EmbeddingFamily::new(Arc::new(MemoEmbedder::new(WordHash, "word-hash"))));
    p
}

fn written(report: &Report, dir: &std::path::Path) -> Vec<Vec<u8>> {
    report.write(dir).unwrap();
    let files = cut_free_files(dir);
    let _ = std::fs::remove_dir_all(dir);
    files
}

/// Where two sets of files first differ (file, line and both lines), or "" when they do not.
fn difference(a: &[Vec<u8>], b: &[Vec<u8>]) -> String {
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let (x, y) = (String::from_utf8_lossy(x), String::from_utf8_lossy(y));
        // The metrics that differ, by line, when the lines are score rows.
        let mut differ = Vec::new();
        for (line, (p, q)) in x.lines().zip(y.lines()).enumerate().filter(|(_, (p, q))| p != q) {
            let (p, q): (serde_json::Value, serde_json::Value) = (serde_json::from_str(p).unwrap_or_default(), serde_json::from_str(q).unwrap_or_default());
            let metrics = p["metrics"].as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
            differ.extend(
                metrics
                    .iter()
                    .filter(|m| p["metrics"][m.as_str()] != q["metrics"][m.as_str()])
                    .map(|m| format!("line {}: {m}: {} against {}", line + 1, p["metrics"][m.as_str()], q["metrics"][m.as_str()])),
            );
        }
        if !differ.is_empty() {
            return format!("{}: {}", common::CUT_FREE_FILES[k], differ.join("; "));
        }
        if let Some((line, (p, q))) = x.lines().zip(y.lines()).enumerate().find(|(_, (p, q))| p != q) {
            return format!("{} line {}:\n{p}\n{q}", common::CUT_FREE_FILES[k], line + 1);
        }
        if x != y {
            return format!("{}: lengths differ", common::CUT_FREE_FILES[k]);
        }
    }
    String::new()
}

/// `n` items whose references are present where `with_reference` says (none for an empty one),
/// rated by two annotators, from three systems.
fn corpus(with_reference: &[bool], ratings: &[u8]) -> Vec<DialogueItem> {
    let words = ["we", "went", "to", "the", "beach", "and", "swam", "all", "day", "it", "was", "fun", "cold"];
    with_reference
        .iter()
        .enumerate()
        .map(|(k, &has)| {
            let response: Vec<&str> = (0..1 + k % 6).map(|j| words[(k * 5 + j * 3) % words.len()]).collect();
            let reference: Vec<&str> = (0..2 + k % 4).map(|j| words[(k + j * 2) % words.len()]).collect();
            let mut i = item(&format!("item-{k}"), "what did you do", &response.join(" "), &reference.join(" "));
            if !has {
                i.references.clear();
            }
            i.system = Some(format!("system-{}", k % 3));
            let r = f64::from(ratings[k % ratings.len()] % 5 + 1);
            i.ratings = vec![Rating { quality: "overall".into(), criterion: Some(Criterion::Overall), scores: vec![Some(r), Some((r + f64::from(ratings[(k + 1) % ratings.len()] % 2)).min(5.0))] }];
            i
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn chunks_and_shards_never_change_the_files(
        with_reference in prop::collection::vec(prop::bool::weighted(0.7), 2..26),
        ratings in prop::collection::vec(any::<u8>(), 4),
        chunk_seed in any::<usize>(),
        shards in 1_usize..6,
    ) {
        let items = corpus(&with_reference, &ratings);
        let n = items.len();
        let config = ReportConfig::default();
        let dir = std::env::temp_dir().join(format!("dialeval-invariance-{}-{chunk_seed}", std::process::id()));
        let whole = written(&Evaluation::of(&items).pipeline(light()).chunk_items(n).analysis(config).run().unwrap(), &dir.join("whole"));
        let chunk = 1 + chunk_seed % n;
        let chunked = written(&Evaluation::of(&items).pipeline(light()).chunk_items(chunk).analysis(config).run().unwrap(), &dir.join("chunked"));
        prop_assert!(whole == chunked, "chunks of {} of {} items changed the files", chunk, n);
        let run = |part: &[DialogueItem]| Evaluation::of(part).pipeline(light()).chunk_items(1 + chunk_seed % 3).analysis(config).run().unwrap();
        let merged = written(&merged_report(&items, shards, &run, &config), &dir.join("merged"));
        prop_assert!(whole == merged, "{} shards changed the files", shards);
    }
}

/// The main job's learned families: every chunk size and 1 to 4 shards, on a corpus with
/// references on most items, and on one without any.
#[cfg(feature = "slm")]
#[test]
fn the_learned_families_give_the_same_files_however_the_corpus_is_cut() {
    use dialeval_datasets::amr::AmrIndex;
    use dialeval_eval::models::{Built, FamilyName, JobFamilies, JobObserver, ModelBundle, ModelSettings, Retrain, add_families};
    use dialeval_slm_model::bert::minilm_dir;

    let Some(minilm) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let dir = common::temp("invariance", "models");
    let settings = ModelSettings {
        encoder: Some(minilm),
        models: Some(dialeval_testkit::workspace_dir().join("models")),
        retrain: Retrain::Never,
        out: dir.clone(),
        cache_dir: dir.join("cache"),
        ..ModelSettings::default()
    };
    let bundle = ModelBundle::load(settings).unwrap();
    let amr = AmrIndex::load(&[]).unwrap();
    let pipeline = || {
        let mut p = Pipeline::new();
        let families = JobFamilies {
            skip: &[FamilyName::FineTuned],
            skip_reason: "not tested here",
            amr: &amr,
            amr_files: &[],
            references: dialeval_common::MultiRef::Max,
            llm: Built::<LengthFamily>::Skipped("no LLM here".into()),
        };
        add_families(&mut p, &bundle, families, &JobObserver::SILENT).unwrap();
        p
    };
    let turns = [
        ("do you have any pets?", "yes, two cats and a very old dog.", "i have a cat named tom."),
        ("what did you do this weekend?", "i went hiking with my sister in the hills.", "we stayed home and watched films."),
        ("i just got back from paris.", "how was the food there?", "oh nice, did you see the tower?"),
        ("can you recommend a good book?", "i love reading.", "try the hobbit, it is a classic."),
        ("my car broke down again.", "that sounds frustrating, what happened?", "oh no, do you need a ride?"),
        ("what kind of music do you like?", "mostly jazz and some old rock.", "i listen to pop all day."),
        ("i am learning to cook.", "bananas are yellow.", "what dishes have you tried so far?"),
        ("it is raining so hard today.", "i hope you have an umbrella!", "yes, stay inside and keep dry."),
        ("do you play any sports?", "i play tennis on sundays.", "i used to swim in school."),
        ("where did you grow up?", "in a small town by the sea.", "i grew up in the city."),
        ("i failed my exam.", "the weather is nice.", "sorry to hear that, you will pass next time."),
        ("what is your favourite food?", "pizza, no doubt about it.", "i really like sushi."),
        ("i start a new job on monday.", "congratulations! what will you be doing?", "good luck with the new job."),
    ];
    for references in [true, false] {
        let items: Vec<DialogueItem> = turns
            .iter()
            .enumerate()
            .map(|(k, (context, response, reference))| {
                let mut i = item(&format!("turn-{k}"), context, response, reference);
                // Some items without a reference even in the referenced corpus.
                if !references || k % 5 == 2 {
                    i.references.clear();
                }
                i.context = vec![Turn::new(*context)];
                i.system = Some(format!("system-{}", k % 3));
                let overall = [4.0, 5.0, 3.0, 2.0, 5.0, 4.0, 1.0, 4.0, 4.0, 3.0, 1.0, 3.0, 5.0][k];
                i.ratings = vec![Rating { quality: "overall".into(), criterion: Some(Criterion::Overall), scores: vec![Some(overall)] }];
                i
            })
            .collect();
        let n = items.len();
        let config = ReportConfig::default();
        let out = dir.join(format!("references-{references}"));
        let whole_report = Evaluation::of(&items).pipeline(pipeline()).chunk_items(n).analysis(config).run().unwrap();
        let has = |m: &str| whole_report.table.column(&m.into()).is_some();
        assert!(has("BERT-RUBER-unref") && has("SLM") && has("Context-Cosine"), "{:?}", whole_report.table.metrics().collect::<Vec<_>>());
        assert_eq!(has("BERT-RUBER-ref") && has("BERT-RUBER-gmean"), references, "referenced score and hybrids exactly where references are");
        let whole = written(&whole_report, &out.join("whole"));
        for chunk in 1..n {
            let report = Evaluation::of(&items).pipeline(pipeline()).chunk_items(chunk).analysis(config).run().unwrap();
            let files = written(&report, &out.join("chunked"));
            assert!(files == whole, "chunks of {chunk} changed the files (references: {references}): {}", difference(&whole, &files));
        }
        for shards in 2..=4 {
            let run = |part: &[DialogueItem]| Evaluation::of(part).pipeline(pipeline()).chunk_items(2).analysis(config).run().unwrap();
            let files = written(&merged_report(&items, shards, &run, &config), &out.join("merged"));
            assert!(files == whole, "{shards} shards changed the files (references: {references}): {}", difference(&whole, &files));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
