//! A sanity check of the multi-reference path on DailyDialog++: each context's five positives
//! serve as references for each other (leave one out, `dialeval_datasets::ddpp::leave_one_out`),
//! and every referenced metric is asked to separate the positives from the adversarial negatives
//! scored against the same references, once with one reference and once with `--references`
//! (default 4). Prints and writes (`OUT/multiref.md`, `OUT/multiref.json`) the ROC AUC per
//! metric with n and the Mann–Whitney p, and the gain of several references over one.
//!
//! ```text
//! cargo run --release --example multiref_ddpp -- [--input dev.json|test.json] [--contexts IDS.json] [--amr FILE,...] [--rule max|mean]
//! ```
//! Defaults: the bundled dev set restricted to the 200 contexts of the bundled silver AMR, so
//! Smatch takes part. The shipped BERT-RUBER's unreferenced model was trained on DailyDialog++
//! dev data: its own column (and so the hybrids) are not held out on the default input.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dialeval_amr_graph::smatch::SmatchConfig;
use dialeval_common::MultiRef;
use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::ddpp::leave_one_out;
use dialeval_eval::families::{LexicalFamily, SmatchFamily};
use dialeval_eval::models::{Compute, ModelBundle, ModelSettings};
use dialeval_eval::separation::{Separation, separation};
use dialeval_eval::{FamilyCache, Pipeline};

#[derive(Debug, Parser)]
#[command(about = "DailyDialog++ leave-one-out: ROC AUC of each referenced metric with one reference and with several")]
struct Args {
    /// Where the models run: cpu, wgpu (the default adapter) or wgpu:N (the N-th discrete GPU; needs the `wgpu` feature).
    #[arg(long, default_value = "cpu")]
    device: Compute,
    /// A DailyDialog++ file with positives and adversarial negatives.
    #[arg(long, default_value = "data/dailydialog-plusplus/dev.json")]
    input: PathBuf,
    /// A JSON list of context ids to keep (the silver AMR's `*.context-ids.json`); `all` keeps every context.
    #[arg(long, default_value = "data/silver-amr/dailydialog-plusplus-dev200.context-ids.json")]
    contexts: String,
    /// PENMAN files with the responses' graphs (for Smatch).
    #[arg(long, value_delimiter = ',', default_value = "data/silver-amr/dailydialog-plusplus-dev200.silver.amr.txt")]
    amr: Vec<PathBuf>,
    /// References per response in the multi-reference run (at most 4 with five positives).
    #[arg(long, default_value_t = 4)]
    references: usize,
    /// How several references combine: max or mean.
    #[arg(long, default_value = "max", value_parser = crate::support::serde_value::<MultiRef>)]
    rule: MultiRef,
    /// Shipped checkpoints (BERT-RUBER).
    #[arg(long, default_value = "models")]
    models: PathBuf,
    /// Output folder.
    #[arg(long, default_value = "evaluation/multiref")]
    out: PathBuf,
}

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    crate::support::finish("multiref_ddpp", run(&Args::parse_from(args)))
}

#[derive(serde::Serialize)]
struct Row {
    metric: String,
    one: Separation,
    several: Separation,
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut contexts = dialeval_datasets::ddpp::load(&args.input)?;
    if args.contexts != "all" {
        let keep = dialeval_datasets::ddpp::context_ids(std::path::Path::new(&args.contexts))?;
        contexts.retain(|c| keep.contains(&c.id));
        if contexts.len() != keep.len() {
            return Err(format!("{} lists {} contexts, {} of them are in {}", args.contexts, keep.len(), contexts.len(), args.input.display()).into());
        }
    }
    let amr = AmrIndex::load(&args.amr)?;
    let bundle = ModelBundle::load(ModelSettings { compute: args.device, models: Some(args.models.clone()), out: args.out.clone(), references: args.rule, ..ModelSettings::default() })?;
    let mut pipeline = Pipeline::new().with_cache(FamilyCache::open(&args.out.join("metrics"))?);
    pipeline.add(LexicalFamily::new()?);
    pipeline.add(bundle.embedding().required()?);
    pipeline.add(bundle.bert_ruber(&|source| eprintln!("multiref_ddpp: bert_ruber: {source}"), &|_, _, _| {})?.required()?);
    pipeline.add(SmatchFamily::new(&amr, &args.amr, SmatchConfig::default())?.with_references(args.rule));
    let mut results = Vec::new();
    for k in [1, args.references] {
        let (mut items, labels): (Vec<_>, Vec<bool>) = leave_one_out(&contexts, k)?.into_iter().map(|l| (l.item, l.positive)).unzip();
        let coverage = amr.attach(&mut items);
        eprintln!("multiref_ddpp: {} contexts, {} responses, {k} reference(s) each; AMR for {} of {} utterances", contexts.len(), items.len(), coverage.with_amr, coverage.turns);
        let scored = pipeline.run(&items, &|_| {})?;
        results.push(separation(&scored.table, &labels)?);
    }
    let several = results.pop().unwrap_or_default();
    let one = results.pop().unwrap_or_default();
    let rows: Vec<Row> = one.into_iter().filter_map(|o| several.iter().find(|s| s.metric == o.metric).map(|s| Row { metric: o.metric.to_string(), one: o, several: s.clone() })).collect();
    let cell = |s: &Separation| s.auc.map_or_else(|| "–".to_owned(), |a| format!("{a:.3}"));
    let p = |s: &Separation| s.p_value.map_or_else(|| "–".to_owned(), |p| format!("{p:.1e}"));
    let mut md = format!(
        "DailyDialog++ leave-one-out ({}, {} contexts): ROC AUC of positives vs adversarial negatives, rule `{:?}`\n\n| metric | n (pos/neg) | AUC, 1 ref | p | AUC, {} refs | p | gain |\n|---|---|---|---|---|---|---|\n",
        args.input.display(),
        contexts.len(),
        args.rule,
        args.references
    );
    for r in &rows {
        let gain = match (r.one.auc, r.several.auc) {
            (Some(a), Some(b)) => format!("{:+.3}", b - a),
            _ => "–".into(),
        };
        md.push_str(&format!("| {} | {}/{} | {} | {} | {} | {} | {gain} |\n", r.metric, r.several.positives, r.several.negatives, cell(&r.one), p(&r.one), cell(&r.several), p(&r.several)));
    }
    std::fs::create_dir_all(&args.out)?;
    std::fs::write(args.out.join("multiref.md"), &md)?;
    std::fs::write(args.out.join("multiref.json"), serde_json::to_string_pretty(&rows)?)?;
    println!("{md}");
    Ok(())
}
