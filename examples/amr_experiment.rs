//! What AMR adds to the SLM: trains the gated model (text + silver AMR), the text-only and the
//! graph-only ablation with the same seeds on the 500 annotated DailyDialog++ dev contexts,
//! evaluates each on the 100 annotated test contexts (positive vs adversarial, positive vs
//! random; ROC AUC) and on the rest of DailyDialog++ test (text only), scores USR-PersonaChat
//! with its silver graphs and correlates with every human criterion.
//!
//! ```text
//! cargo run --release --example amr_experiment -- --out DIR [--seeds 0,1,2] [--epochs 3]
//!     [--modes gated,text_only,graph_only] [--rest-contexts 300] [--shared ../shared]
//! ```
//! Dev split: 10% of the annotated contexts, by context id (never by response). Each run is a
//! resumable `train` directory `DIR/<mode>-seed<k>`; finished runs are reused. Prints a
//! Markdown table and writes `DIR/results.json` (runs of other modes or seeds already there are
//! kept, so the grid can be run one cell per process). `--rest-contexts` caps the text-only
//! rest of the test set (contexts in file order).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use burn::prelude::Device;
use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::ddpp::{self, ExcludeList};
use dialeval_datasets::pairs::{DdppPairConfig, PairKind, Split, TrainingPair, ddpp_pairs, split_of};
use dialeval_examples::{Progress, human_criteria};
use dialeval_metrics::correlation::{pearson, spearman};
use dialeval_slm_model::model::Mode;
use dialeval_slm_model::train::{Scorer, TrainConfig, roc_auc, train};
use serde_json::json;

fn main() -> ExitCode {
    dialeval_examples::finish("amr_experiment", run())
}

fn ids(path: &Path) -> Result<Vec<u64>, Box<dyn std::error::Error>> {
    Ok(serde_json::from_str(&std::fs::read_to_string(path)?)?)
}

fn attach(pairs: &mut [TrainingPair], index: &AmrIndex) {
    for p in pairs {
        p.context_amr = p.context.iter().map(|t| index.by_text(t).map(|b| b.penman.clone())).collect();
        p.response_amr = index.by_text(&p.response).map(|b| b.penman.clone());
    }
}

/// AUC of positives against negatives of `kind`.
fn auc_against(pairs: &[TrainingPair], scores: &[f64], kind: PairKind) -> f64 {
    let (s, l): (Vec<f64>, Vec<u8>) = pairs.iter().zip(scores).filter(|(p, _)| p.kind == PairKind::Positive || p.kind == kind).map(|(p, s)| (*s, p.label())).unzip();
    roc_auc(&s, &l).unwrap_or(f64::NAN)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let opts = dialeval_examples::flags(std::env::args().skip(1))?;
    let get = |k: &str, d: &str| opts.get(k).cloned().unwrap_or_else(|| d.to_owned());
    let shared = PathBuf::from(get("shared", "../shared"));
    let out = PathBuf::from(opts.get("out").ok_or("--out DIR is required")?);
    let seeds: Vec<u64> = get("seeds", "0,1,2").split(',').map(str::parse).collect::<Result<_, _>>()?;
    let modes: Vec<Mode> = get("modes", "gated,text_only,graph_only").split(',').map(|m| serde_json::from_value(json!(m))).collect::<Result<_, _>>()?;
    let epochs: usize = get("epochs", "3").parse()?;
    let dd = shared.join("data/dailydialog-plusplus");
    let silver = shared.join("data/silver-amr");
    let exclude = ExcludeList::load(&dd.join("overlap_exclude_ids.tsv"))?;
    let files: Vec<PathBuf> = ["dailydialog-plusplus-dev200", "dailydialog-plusplus-dev-more300", "dailydialog-plusplus-test100", "usr-personachat"].iter().map(|f| silver.join(format!("{f}.silver.amr.txt"))).collect();
    let index = AmrIndex::load(&files)?;
    let mut dev_ids = ids(&silver.join("dailydialog-plusplus-dev200.context-ids.json"))?;
    dev_ids.extend(ids(&silver.join("dailydialog-plusplus-dev-more300.context-ids.json"))?);
    let test_ids = ids(&silver.join("dailydialog-plusplus-test100.context-ids.json"))?;
    let dev_contexts: Vec<_> = ddpp::load(&dd.join("dev.json"))?.into_iter().filter(|c| dev_ids.contains(&c.id)).collect();
    let test_all = ddpp::load(&dd.join("test.json"))?;
    let (annotated, mut rest): (Vec<_>, Vec<_>) = test_all.into_iter().partition(|c| test_ids.contains(&c.id));
    rest.truncate(get("rest-contexts", "300").parse()?);
    let config = |seed| DdppPairConfig { max_context_turns: Some(2), seed, ..DdppPairConfig::default() };
    let (mut pairs, _) = ddpp_pairs(&dev_contexts, "dev.json", Some(&exclude), &config(0))?;
    attach(&mut pairs, &index);
    let (mut test_pairs, _) = ddpp_pairs(&annotated, "test.json", Some(&exclude), &config(0))?;
    attach(&mut test_pairs, &index);
    let (rest_pairs, _) = ddpp_pairs(&rest, "test.json", Some(&exclude), &config(0))?;
    let coverage = |ps: &[TrainingPair]| ps.iter().filter(|p| p.response_amr.is_some() && p.context_amr.iter().all(Option::is_some)).count();
    eprintln!(
        "amr_experiment: {} dev contexts → {} pairs ({} with all graphs); test: {} annotated pairs ({} with all graphs), {} text-only pairs",
        dev_contexts.len(),
        pairs.len(),
        coverage(&pairs),
        test_pairs.len(),
        coverage(&test_pairs),
        rest_pairs.len()
    );
    let mut usr = dialeval_datasets::usr::load(&shared.join("data/usr-personachat/pc_usr_data.json"))?;
    let usr_coverage = index.attach(&mut usr);
    eprintln!("amr_experiment: USR-PersonaChat: graphs for {} of {} utterances", usr_coverage.with_amr, usr_coverage.turns);
    let usr_pairs: Vec<TrainingPair> = usr
        .iter()
        .map(|item| {
            let context: Vec<_> = item.context.iter().rev().take(2).rev().collect();
            TrainingPair {
                id: item.id.clone(),
                context: context.iter().map(|t| t.text.clone()).collect(),
                response: item.response.as_ref().map_or_else(String::new, |r| r.text.clone()),
                kind: PairKind::Positive,
                context_amr: context.iter().map(|t| t.amr.clone()).collect(),
                response_amr: item.response.as_ref().and_then(|r| r.amr.clone()),
            }
        })
        .collect();
    let criteria = human_criteria(&usr);
    // Earlier runs into the same directory (other modes or seeds) are kept.
    let mut results: Vec<serde_json::Value> = std::fs::read_to_string(out.join("results.json")).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    for &seed in &seeds {
        let (mut train_p, mut dev_p) = (Vec::new(), Vec::new());
        for p in &pairs {
            let context_id = p.id.split('/').next().unwrap_or_default().to_owned();
            if split_of(&context_id, [0.9, 0.1, 0.0], seed)? == Split::Train { train_p.push(p.clone()) } else { dev_p.push(p.clone()) }
        }
        for &mode in &modes {
            let dir = out.join(format!("{}-seed{seed}", serde_json::to_value(mode)?.as_str().unwrap_or("mode")));
            let bar = Progress::new(&format!("{mode:?} seed {seed}"));
            let logs = train(&train_p, &dev_p, &TrainConfig { mode, epochs, seed, ..TrainConfig::default() }, &dir, &|e, s, n| bar.update_epoch(e, s, n))?;
            bar.finish();
            let log_text = std::fs::read_to_string(dir.join("log.jsonl"))?;
            let seconds: Vec<f64> = log_text.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()?.get("seconds")?.as_f64()).collect();
            let scorer = Scorer::load(&dir, Device::flex())?;
            let test_scores = scorer.score(&test_pairs);
            let rest_scores = scorer.score(&rest_pairs);
            let usr_scores = scorer.score(&usr_pairs);
            let correlations: serde_json::Map<String, serde_json::Value> = criteria
                .iter()
                .map(|(c, human)| {
                    let p = pearson(&usr_scores, human).map(|r| (r.statistic, r.pvalue)).unwrap_or((f64::NAN, f64::NAN));
                    let s = spearman(&usr_scores, human);
                    (c.clone(), json!({"pearson": p.0, "pearson_p": p.1, "spearman": s.statistic, "spearman_p": s.pvalue}))
                })
                .collect();
            let row = json!({
                "mode": mode, "seed": seed, "epochs_run": logs.len(),
                "seconds_per_epoch": seconds.iter().sum::<f64>() / seconds.len().max(1) as f64,
                "test100_auc_adversarial": auc_against(&test_pairs, &test_scores, PairKind::AdversarialNegative),
                "test100_auc_random": auc_against(&test_pairs, &test_scores, PairKind::RandomNegative),
                "test_rest_auc_adversarial": auc_against(&rest_pairs, &rest_scores, PairKind::AdversarialNegative),
                "test_rest_auc_random": auc_against(&rest_pairs, &rest_scores, PairKind::RandomNegative),
                "usr": correlations,
            });
            eprintln!("{row}");
            results.retain(|r| !(r["mode"] == row["mode"] && r["seed"] == row["seed"]));
            results.push(row);
            std::fs::write(out.join("results.json"), serde_json::to_string_pretty(&results)?)?;
        }
    }
    println!("| mode | test100 AUC pos vs adv | test100 AUC pos vs rand | rest-of-test AUC adv / rand | USR Overall Spearman | USR Overall Pearson | s/epoch |\n|---|---|---|---|---|---|---|");
    let all_modes: Vec<serde_json::Value> = results.iter().map(|r| r["mode"].clone()).fold(Vec::new(), |mut v, m| {
        if !v.contains(&m) {
            v.push(m);
        }
        v
    });
    for mode in &all_modes {
        let rows: Vec<&serde_json::Value> = results.iter().filter(|r| &r["mode"] == mode).collect();
        let stat = |f: &dyn Fn(&serde_json::Value) -> f64| {
            let v: Vec<f64> = rows.iter().map(|r| f(r)).collect();
            let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
            let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len().max(2) - 1) as f64).sqrt();
            format!("{mean:.3} ± {sd:.3}")
        };
        let num = |k: &'static str| move |r: &serde_json::Value| r[k].as_f64().unwrap_or(f64::NAN);
        println!(
            "| {} ({} seeds) | {} | {} | {} / {} | {} | {} | {} |",
            mode.as_str().unwrap_or("?"),
            rows.len(),
            stat(&num("test100_auc_adversarial")),
            stat(&num("test100_auc_random")),
            stat(&num("test_rest_auc_adversarial")),
            stat(&num("test_rest_auc_random")),
            stat(&|r| r["usr"]["Overall"]["spearman"].as_f64().unwrap_or(f64::NAN)),
            stat(&|r| r["usr"]["Overall"]["pearson"].as_f64().unwrap_or(f64::NAN)),
            stat(&num("seconds_per_epoch")),
        );
    }
    Ok(())
}
