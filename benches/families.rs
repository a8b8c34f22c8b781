//! Criterion benchmarks of every family of the main job on the bundled USR-PersonaChat (300
//! items, silver AMR attached), of the corpus loaders it starts with, and of the LLM judge's
//! prompt rendering; `scripts/bench_report.py` runs them with the other benches.
//!
//! - `datasets/usr_load`, `datasets/ddpp_dev_load`, `datasets/amr_attach` (silver AMR index +
//!   attach);
//! - `families/length`, `families/lexical` (BLEU, ROUGE-L, METEOR with WordNet when installed),
//!   `families/smatch`;
//! - `families/embedding`, `families/bert_ruber`, `families/slm` with MiniLM and the shipped
//!   checkpoints, token vectors and states warmed first (so the metric and the models are
//!   timed, not the encoder; its speed is `minilm/…` in `slm.rs`); skipped without MiniLM;
//! - `llm/render_full`: the full prompt (SLM score and AMR) for every item and the four criteria.
//!
//! The LLM family itself is bound by its endpoint and is not benched.
#![allow(missing_docs, clippy::panic, clippy::unwrap_used)] // criterion macros; benches fail loudly

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use dialeval_amr_graph::smatch::SmatchConfig;
use dialeval_common::Criterion as Quality;
use dialeval_datasets::DialogueItem;
use dialeval_datasets::amr::AmrIndex;
use dialeval_eval::MetricFamily;
use dialeval_eval::families::llm::prompt_input;
use dialeval_eval::families::{BertRuberFamily, EmbeddingFamily, LengthFamily, LexicalFamily, SlmFamily, SmatchFamily};
use dialeval_eval::models::{CheckpointIdentity, EncoderSide, default_cache_dir};
use dialeval_llm_prompt::prompt::{Layout, Templates, Variant};
use dialeval_slm_model::bert::{PretrainedEncoder, minilm_dir};
use dialeval_slm_model::ruber::RuberScorer;
use dialeval_slm_model::scorer::Scorer;

fn root() -> std::path::PathBuf {
    dialeval_testkit::workspace_dir()
}

fn usr() -> (Vec<DialogueItem>, AmrIndex, Vec<std::path::PathBuf>) {
    let mut items = dialeval_datasets::usr::load(&root().join("data/usr-personachat/pc_usr_data.json")).unwrap();
    let files = vec![root().join("data/silver-amr/usr-personachat.silver.amr.txt")];
    let amr = AmrIndex::load(&files).unwrap();
    amr.attach(&mut items);
    (items, amr, files)
}

fn compute(family: &impl MetricFamily, items: &[DialogueItem]) -> usize {
    match family.compute(items, &|_, _| {}).unwrap() {
        dialeval_eval::FamilyOutput::Scored(s) => s.columns.len(),
        dialeval_eval::FamilyOutput::NoneScored { reason: why, .. } | dialeval_eval::FamilyOutput::Skipped(why) => panic!("skipped: {why}"),
    }
}

fn bench_datasets(c: &mut Criterion) {
    let mut g = c.benchmark_group("datasets");
    g.bench_function("usr_load", |b| b.iter(|| dialeval_datasets::usr::load(&root().join("data/usr-personachat/pc_usr_data.json")).unwrap().len()));
    g.bench_function("ddpp_dev_load", |b| b.iter(|| dialeval_datasets::ddpp::load(&root().join("data/dailydialog-plusplus/dev.json")).unwrap().len()));
    let items = dialeval_datasets::usr::load(&root().join("data/usr-personachat/pc_usr_data.json")).unwrap();
    g.bench_function("amr_attach", |b| {
        b.iter(|| {
            let mut items = items.clone();
            AmrIndex::load(&[root().join("data/silver-amr/usr-personachat.silver.amr.txt")]).unwrap().attach(&mut items).with_amr
        });
    });
    g.finish();
}

fn bench_families(c: &mut Criterion) {
    let (items, amr, files) = usr();
    let mut g = c.benchmark_group("families");
    g.sample_size(20);
    g.bench_function("length", |b| b.iter(|| compute(&LengthFamily, &items)));
    let lexical = LexicalFamily::new().unwrap();
    g.bench_function("lexical", |b| b.iter(|| compute(&lexical, &items)));
    let smatch = SmatchFamily::new(&amr, &files, SmatchConfig::default()).unwrap();
    g.bench_function("smatch", |b| b.iter(|| compute(&smatch, &items)));
    match PretrainedEncoder::load(&minilm_dir(), &burn::prelude::Device::flex()) {
        Ok(encoder) => {
            let side = EncoderSide::new(encoder, &default_cache_dir());
            let embedding = EmbeddingFamily::new(Arc::clone(&side.memo));
            compute(&embedding, &items);
            g.bench_function("embedding", |b| b.iter(|| compute(&embedding, &items)));
            let models = root().join("models");
            let ruber = BertRuberFamily::new(RuberScorer::load(&models.join("bert-ruber"), burn::prelude::Device::flex()).unwrap(), CheckpointIdentity::of(&models.join("bert-ruber")).unwrap(), &side);
            compute(&ruber, &items);
            g.bench_function("bert_ruber", |b| b.iter(|| compute(&ruber, &items)));
            let slm = SlmFamily::new(Scorer::load(&models.join("slm"), burn::prelude::Device::flex()).unwrap(), CheckpointIdentity::of(&models.join("slm")).unwrap(), Some((side.encoder, side.cache)));
            compute(&slm, &items);
            g.bench_function("slm", |b| b.iter(|| compute(&slm, &items)));
        }
        Err(e) => eprintln!("SKIPPED families/embedding, bert_ruber, slm: no MiniLM ({e}); run scripts/fetch_minilm.sh"),
    }
    g.finish();
}

fn bench_render(c: &mut Criterion) {
    let (items, _, _) = usr();
    let templates = &Templates::builtin().unwrap();
    let inputs: Vec<_> = items.iter().map(|i| dialeval_llm_prompt::prompt::PromptInput { slm_score: Some(0.7), ..prompt_input(i) }).collect();
    let criteria = [Quality::Naturalness, Quality::Coherence, Quality::Engagingness, Quality::Groundedness];
    c.bench_function("llm/render_full", |b| {
        b.iter(|| inputs.iter().flat_map(|input| criteria.iter().map(move |&q| templates.render(input, q, &Layout::new(Variant::Full).within(12_000)).unwrap().user.len())).sum::<usize>());
    });
}

criterion_group!(benches, bench_datasets, bench_families, bench_render);
criterion_main!(benches);
