//! What AMR adds to the SLM: trains the gated model (text + silver AMR), the text-only and the
//! graph-only ablation with the same seeds on the 500 annotated DailyDialog++ dev contexts,
//! evaluates each on the 100 annotated test contexts (positive vs adversarial, positive vs
//! random; ROC AUC) and on the rest of DailyDialog++ test (text only), scores USR-PersonaChat
//! with its silver graphs and correlates with every human criterion.
//!
//! ```text
//! cargo run --release --example amr_experiment -- --out DIR [--seeds 0,1,2] [--epochs 3]
//!     [--modes gated,text_only,graph_only] [--contexts 500] [--rest-contexts 300] [--shared ../shared]
//! ```
//! Dev split: 10% of the annotated contexts, by context id (never by response). Each run is a
//! resumable `train` directory `DIR/<mode>-seed<k>`; finished runs are reused. Prints a
//! Markdown table and writes `DIR/results.json` (runs of other modes or seeds already there are
//! kept, so the grid can be run one cell per process). `--contexts` caps the annotated dev
//! contexts used (in the order of the silver id files; for quick checks), `--rest-contexts` the
//! text-only rest of the test set (contexts in file order). Besides the tables on stdout it
//! writes `DIR/usr_correlations.md/.json` (every run × criterion; Pearson with Fisher-z
//! intervals, Spearman and Kendall with bootstrap intervals) and `DIR/usr_spearman.png/.svg`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::ddpp::{self, ExcludeList};
use dialeval_datasets::pairs::{PairKind, TrainingPair};
use dialeval_eval::models::{Compute, SlmPairing, ddpp_slm_pairs, slm_pair, split_contexts};
use dialeval_eval::plot::{Heatmap, heatmap};
use dialeval_examples::Progress;
use dialeval_metrics::correlation::CorrelationKind;
use dialeval_metrics::describe::MeanSd;
use dialeval_metrics::report::{CorrelationReport, ReportConfig};
use dialeval_slm_model::config::TrainConfig;
use dialeval_slm_model::model::Mode;
use dialeval_slm_model::scorer::Scorer;
use dialeval_slm_model::separation::auc_against;
use dialeval_slm_model::train::{TrainingData, train};
use serde::{Deserialize, Serialize};

#[derive(Debug, clap::Parser)]
#[command(about = "Gated vs text-only vs graph-only SLM on DailyDialog++ with silver AMR, over seeds")]
struct Args {
    /// Runs, tables and plots.
    #[arg(long)]
    out: PathBuf,
    /// Where the models run: cpu, wgpu (the default adapter) or wgpu:N (the N-th discrete GPU; needs the `wgpu` feature).
    #[arg(long, default_value = "cpu")]
    device: Compute,
    /// Seeds, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,1,2")]
    seeds: Vec<u64>,
    /// Modes, comma-separated (gated, text_only, graph_only, concat, residual).
    #[arg(long, value_delimiter = ',', default_value = "gated,text_only,graph_only", value_parser = dialeval_examples::serde_value::<Mode>)]
    modes: Vec<Mode>,
    /// Epochs per run.
    #[arg(long, default_value_t = 3)]
    epochs: usize,
    /// Annotated DailyDialog++ dev contexts used for training.
    #[arg(long, default_value_t = 500)]
    contexts: usize,
    /// Unannotated DailyDialog++ test contexts in the text-only test set.
    #[arg(long, default_value_t = 300)]
    rest_contexts: usize,
    /// The shared data folder.
    #[arg(long, default_value = "../shared")]
    shared: PathBuf,
}

fn main() -> ExitCode {
    dialeval_examples::finish("amr_experiment", run(&<Args as clap::Parser>::parse()))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (shared, out, seeds, modes, epochs) = (&args.shared, &args.out, &args.seeds, &args.modes, args.epochs);
    let dd = shared.join("data/dailydialog-plusplus");
    let silver = shared.join("data/silver-amr");
    let exclude = ExcludeList::load(&dd.join("overlap_exclude_ids.tsv"))?;
    let files: Vec<PathBuf> =
        ["dailydialog-plusplus-dev200", "dailydialog-plusplus-dev-more300", "dailydialog-plusplus-test100", "usr-personachat"].iter().map(|f| silver.join(format!("{f}.silver.amr.txt"))).collect();
    let index = AmrIndex::load(&files)?;
    let mut dev_ids = ddpp::context_ids(&silver.join("dailydialog-plusplus-dev200.context-ids.json"))?;
    dev_ids.extend(ddpp::context_ids(&silver.join("dailydialog-plusplus-dev-more300.context-ids.json"))?);
    let test_ids = ddpp::context_ids(&silver.join("dailydialog-plusplus-test100.context-ids.json"))?;
    dev_ids.truncate(args.contexts);
    let dev_contexts: Vec<_> = ddpp::load(&dd.join("dev.json"))?.into_iter().filter(|c| dev_ids.contains(&c.id)).collect();
    let test_all = ddpp::load(&dd.join("test.json"))?;
    let (annotated, mut rest): (Vec<_>, Vec<_>) = test_all.into_iter().partition(|c| test_ids.contains(&c.id));
    rest.truncate(args.rest_contexts);
    let pairing = SlmPairing { exclude: &exclude, index: &index, seed: 0 };
    let dev = ddpp_slm_pairs(&dev_contexts, "dev.json", &pairing)?;
    let (pairs, dev_coverage) = (dev.pairs, dev.coverage);
    let test = ddpp_slm_pairs(&annotated, "test.json", &pairing)?;
    let (test_pairs, test_coverage) = (test.pairs, test.coverage);
    // The rest of the test set has no silver graphs: an empty index leaves them text-only.
    let rest_pairs = ddpp_slm_pairs(&rest, "test.json", &SlmPairing { index: &AmrIndex::default(), ..pairing })?.pairs;
    eprintln!(
        "amr_experiment: {} dev contexts → {} pairs (graphs for {} of {} turns and responses); test: {} annotated pairs (graphs for {} of {}), {} text-only pairs",
        dev_contexts.len(),
        pairs.len(),
        dev_coverage.with_amr,
        dev_coverage.turns,
        test_pairs.len(),
        test_coverage.with_amr,
        test_coverage.turns,
        rest_pairs.len()
    );
    let mut usr = dialeval_datasets::usr::load(&shared.join("data/usr-personachat/pc_usr_data.json"))?;
    let usr_coverage = index.attach(&mut usr);
    eprintln!("amr_experiment: USR-PersonaChat: graphs for {} of {} utterances", usr_coverage.with_amr, usr_coverage.turns);
    let usr_pairs: Vec<TrainingPair> = usr.iter().map(|item| slm_pair(item, 2)).collect();
    let criteria = dialeval_eval::HumanScores::of(&usr).nan_columns();
    // Earlier runs into the same directory (other modes or seeds) are kept; a file that is
    // there and does not read is an error, not a fresh start.
    let results_path = out.join("results.json");
    let mut results: Vec<RunResult> = match std::fs::read_to_string(&results_path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", results_path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("{}: {e}", results_path.display()).into()),
    };
    for &seed in seeds {
        let (train_p, dev_p) = split_contexts(pairs.clone(), seed)?;
        for &mode in modes {
            let dir = out.join(format!("{}-seed{seed}", serde_json::to_value(mode)?.as_str().unwrap_or("mode")));
            let bar = Progress::new(&format!("{mode:?} seed {seed}"));
            let logs = train(&TrainingData { train: &train_p, dev: &dev_p, vectors: None }, &TrainConfig { mode, epochs, seed, compute: args.device, ..TrainConfig::default() }, &dir, &|e, s, n| {
                bar.update_epoch(e, s, n)
            })?;
            bar.finish();
            let log_text = std::fs::read_to_string(dir.join("log.jsonl"))?;
            let seconds: Vec<f64> = log_text.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok()?.get("seconds")?.as_f64()).collect();
            let scorer = Scorer::load(&dir, args.device.device()?)?;
            let test_scores = scorer.score(&test_pairs, None)?;
            // The rest of the test set has no graphs: a graph-only model scores it blind.
            let rest_scores = if mode == Mode::GraphOnly { Vec::new() } else { scorer.score(&rest_pairs, None)? };
            let rest_auc = |kind| auc_against(&rest_pairs, &rest_scores, kind).ok(); // None without scores
            let row = RunResult {
                mode,
                seed,
                epochs_run: seconds.len(),
                epochs_this_process: logs.len(),
                seconds_per_epoch: seconds.iter().sum::<f64>() / seconds.len().max(1) as f64,
                test100_auc_adversarial: auc_against(&test_pairs, &test_scores, PairKind::AdversarialNegative).ok(),
                test100_auc_random: auc_against(&test_pairs, &test_scores, PairKind::RandomNegative).ok(),
                test_rest_auc_adversarial: rest_auc(PairKind::AdversarialNegative),
                test_rest_auc_random: rest_auc(PairKind::RandomNegative),
                usr_scores: Some(scorer.score(&usr_pairs, None)?),
            };
            eprintln!("amr_experiment: {mode:?} seed {seed}: test100 AUC adversarial {:.3}, random {:.3}", row.test100_auc_adversarial.unwrap_or(f64::NAN), row.test100_auc_random.unwrap_or(f64::NAN));
            results.retain(|r| !(r.mode == row.mode && r.seed == row.seed));
            results.push(row);
            std::fs::write(out.join("results.json"), serde_json::to_string_pretty(&results)?)?;
        }
    }
    report(out, &results, &criteria)
}

/// One trained run: its mode and seed, its test AUCs and its USR-PersonaChat scores (rows of an
/// earlier version of this program have none; rerunning scores them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RunResult {
    mode: Mode,
    seed: u64,
    epochs_run: usize,
    epochs_this_process: usize,
    seconds_per_epoch: f64,
    test100_auc_adversarial: Option<f64>,
    test100_auc_random: Option<f64>,
    test_rest_auc_adversarial: Option<f64>,
    test_rest_auc_random: Option<f64>,
    #[serde(default)]
    usr_scores: Option<Vec<f64>>,
}

/// The summary table (stdout), the USR-PersonaChat correlations of every run with every
/// criterion (`usr_correlations.md/.json`: Pearson with Fisher-z intervals, Spearman and Kendall
/// with bootstrap intervals) and a heat map of the mean Spearman per mode and criterion.
fn report(out: &Path, results: &[RunResult], criteria: &[(String, Vec<f64>)]) -> Result<(), Box<dyn std::error::Error>> {
    let mode_name = |m: Mode| serde_json::to_value(m).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_else(|| format!("{m:?}"));
    let mut modes: Vec<String> = Vec::new();
    for r in results {
        let m = mode_name(r.mode);
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    // Rows of an earlier version of this program have no USR scores; rerunning scores them.
    let runs: Vec<(String, &RunResult, &[f64])> = results.iter().filter_map(|r| Some((format!("{} seed {}", mode_name(r.mode), r.seed), r, r.usr_scores.as_deref()?))).collect();
    let metric_refs: Vec<(&str, &[f64])> = runs.iter().map(|(name, _, s)| (name.as_str(), *s)).collect();
    let criteria_refs: Vec<(&str, &[f64])> = criteria.iter().map(|(c, v)| (c.as_str(), v.as_slice())).collect();
    let usr = CorrelationReport::build(&metric_refs, &criteria_refs, &ReportConfig::default())?;
    std::fs::write(out.join("usr_correlations.md"), usr.to_markdown())?;
    std::fs::write(out.join("usr_correlations.json"), serde_json::to_string_pretty(&usr)?)?;
    let statistic = |run: &str, criterion: &str, kind: CorrelationKind| usr.rows.iter().find(|r| r.metric == run && r.criterion == criterion && r.kind == kind).map_or(f64::NAN, |r| r.statistic);
    let per_mode = |mode: &str, f: &dyn Fn(&str, &RunResult) -> f64| -> Vec<f64> { runs.iter().filter(|(_, r, _)| mode_name(r.mode) == mode).map(|(name, r, _)| f(name, r)).collect() };
    let num = |k: fn(&RunResult) -> Option<f64>| move |_: &str, r: &RunResult| k(r).unwrap_or(f64::NAN);
    let mean_sd = |v: &[f64]| MeanSd::of(v).to_string();
    println!("| mode (seeds) | test100 AUC pos vs adv | test100 AUC pos vs rand | rest-of-test AUC adv | rest-of-test AUC rand | s/epoch |\n|---|---|---|---|---|---|");
    for mode in &modes {
        println!(
            "| {mode} ({}) | {} | {} | {} | {} | {} |",
            runs.iter().filter(|(_, r, _)| mode_name(r.mode) == *mode).count(),
            mean_sd(&per_mode(mode, &num(|r| r.test100_auc_adversarial))),
            mean_sd(&per_mode(mode, &num(|r| r.test100_auc_random))),
            mean_sd(&per_mode(mode, &num(|r| r.test_rest_auc_adversarial))),
            mean_sd(&per_mode(mode, &num(|r| r.test_rest_auc_random))),
            mean_sd(&per_mode(mode, &num(|r| Some(r.seconds_per_epoch)))),
        );
    }
    println!("\nUSR-PersonaChat, turn level, Spearman / Pearson (mean ± sd over seeds):\n");
    println!("| mode | {} |\n|---|{}", criteria.iter().map(|(c, _)| c.as_str()).collect::<Vec<_>>().join(" | "), "---|".repeat(criteria.len()));
    let mut heat = Vec::new();
    for mode in &modes {
        let (mut cells, mut means) = (Vec::new(), Vec::new());
        for (c, _) in criteria {
            let s = per_mode(mode, &|name, _| statistic(name, c, CorrelationKind::Spearman));
            let p = per_mode(mode, &|name, _| statistic(name, c, CorrelationKind::Pearson));
            cells.push(format!("{} / {}", mean_sd(&s), mean_sd(&p)));
            means.push(MeanSd::of(&s).mean.unwrap_or(f64::NAN));
        }
        println!("| {mode} | {} |", cells.join(" | "));
        heat.push(means);
    }
    let cols: Vec<String> = criteria.iter().map(|(c, _)| c.clone()).collect();
    let marks = vec![vec![String::new(); cols.len()]; modes.len()];
    heatmap(&out.join("usr_spearman"), &Heatmap { title: "SLM on USR-PersonaChat: mean Spearman over seeds", rows: &modes, cols: &cols, values: &heat, marks: &marks })?;
    eprintln!("amr_experiment: wrote {0}/results.json, {0}/usr_correlations.md and {0}/usr_spearman.png", out.display());
    Ok(())
}
