//! The main job: score a corpus with every metric its inputs allow, correlate each with the
//! human ratings, and write a report with tables and plots.
//!
//! ```text
//! cargo run --release --example evaluate -- [--corpus usr|fed|grade|jsonl] [--input PATH]
//!     [--amr FILE[,FILE...]] [--out evaluation] [--slm DIR] [--ruber DIR] [--encoder DIR]
//!     [--llm-base-url URL] [--llm-model NAME] [--data data] [--seed 0]
//!     [--models models] [--retrain yes|no] [--skip length,lexical,embedding,bert_ruber,slm,smatch,llm]
//! ```
//! With no options it evaluates the bundled USR-PersonaChat (`data/usr-personachat`) with its
//! silver AMR (`data/silver-amr`), fully offline: BLEU, ROUGE-L, METEOR, BERTScore and the
//! embedding metrics (MiniLM, fetched by `scripts/fetch_minilm.sh`), BERT-RUBER (unreferenced,
//! referenced, hybrids), the AMR-gated SLM and Smatch of response vs reference graphs, and
//! response length in words as the plain baseline every learned score is read against. The
//! learned scorers come from the checkpoints shipped in `models/` (verified by their
//! `SHA256SUMS`; see `models/README.md` for how they were trained); `--retrain yes` trains weaker
//! ones afresh on the bundled DailyDialog++ dev data (`data/dailydialog-plusplus`, silver AMR of
//! 200 contexts) into `OUT/models/<name>-seed<seed>`. The LLM judge runs when
//! `--llm-base-url` is given or the local llama.cpp server (`scripts/llm_server.sh start`)
//! answers on its default address.
//!
//! Output (`--out`): `scores.jsonl`, `correlations.md`, `correlations.json`, `plots/*.png|svg`
//! and `report.md`. Every metric family is cached in `OUT/metrics/` as soon as it finishes, and
//! training resumes from its checkpoints, so a killed run restarts where it stopped. Skipped
//! metrics are listed with the reason.
//!
//! Other corpora: `--corpus fed --input fed_data.json`, `--corpus grade --input MODEL_DIR,JUDGEMENTS.json,DATASET,MODEL`,
//! or `--corpus jsonl --input items.jsonl` (the generic format of the datasets crate).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use burn::prelude::Device;
use dialeval_amr_graph::smatch::{Smatch, SmatchConfig};
use dialeval_common::TokenEmbedder;
use dialeval_datasets::DialogueItem;
use dialeval_datasets::amr::AmrIndex;
use dialeval_datasets::ddpp::{self, ExcludeList};
use dialeval_datasets::pairs::{DdppPairConfig, Split, TrainingPair, ddpp_context, ddpp_pairs, split_by_group, split_of};
use dialeval_examples::plot::{Panel, heatmap, scatter_grid};
use dialeval_examples::{Progress, embedding_cache, human_criteria};
use dialeval_llm_prompt::judge::CRITERIA;
use dialeval_llm_prompt::prompt::{PromptInput, Templates, Variant};
use dialeval_llm_prompt::{CachedClient, Judge, JudgeConfig, OpenAiClient, OpenAiConfig, Scoring};
use dialeval_metrics::correlation::CorrelationKind;
use dialeval_metrics::embedding::{BertScoreConfig, HybridStrategy, Pooling, bert_score, embedding_average, greedy_matching, hybrid, min_max_normalize, referenced_score, vector_extrema};
use dialeval_metrics::inference::{compare_metrics, system_level};
use dialeval_metrics::report::{CorrelationReport, ReportConfig, format_pvalue};
use dialeval_metrics::text::bleu::{Bleu, BleuConfig};
use dialeval_metrics::text::meteor::{Meteor, MeteorParams};
use dialeval_metrics::text::rouge::Rouge;
use dialeval_metrics::text::wordnet::WordNet;
use dialeval_slm_model::bert::{PretrainedEncoder, default_model_dir};
use dialeval_slm_model::model::Mode;
use dialeval_slm_model::ruber::{RuberConfig, RuberScorer, Triple, train_unreferenced};
use dialeval_slm_model::train::{Scorer, TrainConfig, train};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    dialeval_examples::finish("evaluate", run())
}

/// Scores of one metric, `None` where the item lacks what the metric needs.
type Column = (String, Vec<Option<f64>>);

/// A family of metrics computed together and cached together.
#[derive(Debug, Serialize, Deserialize)]
struct Family {
    /// Items and settings the scores belong to.
    fingerprint: String,
    /// The metrics.
    columns: Vec<Column>,
}

/// What happened to a family.
enum Outcome {
    Done(Vec<Column>),
    Skipped(String),
}

struct Run {
    opts: std::collections::HashMap<String, String>,
    out: PathBuf,
    data: PathBuf,
    items: Vec<DialogueItem>,
    item_key: String,
    amr: AmrIndex,
    encoder: Option<Result<Arc<PretrainedEncoder>, String>>,
    seed: u64,
    models: PathBuf,
    retrain: bool,
}

/// Computes one family of metrics over the run's items.
type FamilyFn = fn(&mut Run) -> AnyResult<Outcome>;

fn run() -> AnyResult<()> {
    let opts = dialeval_examples::flags(std::env::args().skip(1))?;
    let get = |k: &str, d: &str| opts.get(k).cloned().unwrap_or_else(|| d.to_owned());
    let data = PathBuf::from(get("data", "data"));
    let out = PathBuf::from(get("out", "evaluation"));
    std::fs::create_dir_all(out.join("metrics"))?;
    std::fs::create_dir_all(out.join("plots"))?;
    let corpus = get("corpus", "usr");
    let mut items = load_corpus(&corpus, opts.get("input").map(String::as_str), &data)?;
    let amr_files: Vec<PathBuf> = match opts.get("amr") {
        Some(list) => list.split(',').map(PathBuf::from).collect(),
        None if corpus == "usr" => vec![data.join("silver-amr/usr-personachat.silver.amr.txt")],
        None => Vec::new(),
    };
    let amr = AmrIndex::load(&amr_files)?;
    let coverage = amr.attach(&mut items);
    eprintln!("evaluate: {} items of {corpus}; AMR for {} of {} utterances", items.len(), coverage.with_amr, coverage.turns);
    let item_key = fingerprint(&items.iter().map(|i| format!("{}\t{}", i.id, i.response.as_ref().map_or("", |r| r.text.as_str()))).collect::<Vec<_>>().join("\n"));
    let seed = get("seed", "0").parse()?;
    let models = PathBuf::from(get("models", "models"));
    let retrain = match get("retrain", "no").as_str() {
        "yes" => true,
        "no" => false,
        other => return Err(format!("--retrain {other:?}: yes or no").into()),
    };
    let mut run = Run { opts, out, data, items, item_key, amr, encoder: None, seed, models, retrain };

    let families: Vec<(&str, FamilyFn)> = vec![("length", length), ("lexical", lexical), ("embedding", embedding), ("bert_ruber", bert_ruber), ("slm", slm), ("smatch", smatch), ("llm", llm)];
    let mut columns: Vec<Column> = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    let skip: Vec<String> = run.opts.get("skip").map(|s| s.split(',').map(str::to_owned).collect()).unwrap_or_default();
    if let Some(unknown) = skip.iter().find(|s| !families.iter().any(|(name, _)| name == s)) {
        return Err(format!("--skip {unknown:?}: not a family ({})", families.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")).into());
    }
    for (name, compute) in families {
        if skip.iter().any(|s| s == name) {
            skipped.push((name.to_owned(), "left out by --skip".to_owned()));
            continue;
        }
        let settings = family_settings(&run, name);
        let cache = run.out.join("metrics").join(format!("{name}.json"));
        let key = fingerprint(&format!("{}\n{settings}", run.item_key));
        if let Some(cached) = std::fs::read_to_string(&cache).ok().and_then(|t| serde_json::from_str::<Family>(&t).ok()).filter(|f| f.fingerprint == key) {
            eprintln!("evaluate: {name}: cached ({} metrics)", cached.columns.len());
            columns.extend(cached.columns);
            continue;
        }
        eprintln!("evaluate: {name} …");
        match compute(&mut run)? {
            Outcome::Done(cols) => {
                write_atomic(&cache, &serde_json::to_string(&Family { fingerprint: key, columns: cols.clone() })?)?;
                columns.extend(cols);
            }
            Outcome::Skipped(why) => {
                eprintln!("evaluate: {name}: skipped ({why})");
                skipped.push((name.to_owned(), why));
            }
        }
    }
    write_scores(&run, &columns)?;
    let summary = correlate_all(&run, &columns)?;
    write_report(&run, &columns, &skipped, &summary)?;
    println!("{}", summary.table);
    eprintln!("evaluate: report in {}", run.out.join("report.md").display());
    Ok(())
}

fn load_corpus(corpus: &str, input: Option<&str>, data: &Path) -> AnyResult<Vec<DialogueItem>> {
    Ok(match corpus {
        "usr" => dialeval_datasets::usr::load(&input.map_or_else(|| data.join("usr-personachat/pc_usr_data.json"), PathBuf::from))?,
        "fed" => dialeval_datasets::fed::load(Path::new(input.ok_or("--corpus fed needs --input fed_data.json")?))?.turns,
        "jsonl" => dialeval_datasets::jsonl::load(Path::new(input.ok_or("--corpus jsonl needs --input ITEMS.jsonl")?))?,
        "grade" => {
            let parts: Vec<&str> = input.ok_or("--corpus grade needs --input MODEL_DIR,JUDGEMENTS.json,DATASET,MODEL")?.split(',').collect();
            let [dir, judgements, dataset, model] = parts[..] else { return Err("--input for grade is MODEL_DIR,JUDGEMENTS.json,DATASET,MODEL".into()) };
            dialeval_datasets::grade::load(Path::new(dir), Path::new(judgements), dataset, model)?
        }
        other => return Err(format!("unknown --corpus {other:?} (usr, fed, grade, jsonl)").into()),
    })
}

/// Where a learned family's model comes from.
enum ModelSource {
    /// `--slm DIR` / `--ruber DIR`.
    Given(PathBuf),
    /// The checkpoint shipped in `--models` (default `models/`), verified by its `SHA256SUMS`.
    Bundled(PathBuf),
    /// `--retrain yes` (or no shipped checkpoint): trained here on the bundled DailyDialog++ dev
    /// data into `OUT/models/<name>-seed<seed>`.
    Retrain(PathBuf),
}

impl ModelSource {
    /// A line saying where the model comes from.
    fn describe(&self, family: &str) -> String {
        match self {
            Self::Given(d) => format!("evaluate: {family}: model {}", d.display()),
            Self::Bundled(d) => format!("evaluate: {family}: shipped checkpoint {} (SHA256SUMS verified on load)", d.display()),
            Self::Retrain(d) => format!("evaluate: {family}: training into {} (--retrain yes or no shipped checkpoint)", d.display()),
        }
    }
}

fn model_source(run: &Run, flag: &str, name: &str) -> ModelSource {
    if let Some(dir) = run.opts.get(flag) {
        return ModelSource::Given(PathBuf::from(dir));
    }
    let bundled = run.models.join(name);
    if !run.retrain && bundled.join(dialeval_slm_model::bundle::MANIFEST).is_file() {
        return ModelSource::Bundled(bundled);
    }
    ModelSource::Retrain(run.out.join(format!("models/{name}-seed{}", run.seed)))
}

/// What identifies a model source in a cache key: its directory and the manifest's sha256, or
/// the retraining seed.
fn model_identity(run: &Run, flag: &str, name: &str) -> String {
    match model_source(run, flag, name) {
        ModelSource::Given(dir) | ModelSource::Bundled(dir) => {
            let manifest = dialeval_slm_model::bundle::verify(&dir).ok().flatten();
            let stamp = std::fs::metadata(dir.join("best")).and_then(|m| m.modified()).map(|t| format!("{t:?}")).unwrap_or_default();
            format!("{}|{}|{stamp}", dir.display(), manifest.unwrap_or_default())
        }
        ModelSource::Retrain(dir) => format!("retrain|{}|{}", dir.display(), run.seed),
    }
}

/// The settings a family's cached scores depend on (besides the items).
fn family_settings(run: &Run, name: &str) -> String {
    let opt = |k: &str| run.opts.get(k).cloned().unwrap_or_default();
    match name {
        "embedding" => opt("encoder"),
        "bert_ruber" => format!("{}|{}", opt("encoder"), model_identity(run, "ruber", "bert-ruber")),
        "slm" => format!("{}|{}", opt("encoder"), model_identity(run, "slm", "slm")),
        "llm" => format!("{}|{}", opt("llm-base-url"), opt("llm-model")),
        _ => String::new(),
    }
}

/// 64-bit FNV-1a of `text`, in hex (cache keys, not security).
fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn write_atomic(path: &Path, text: &str) -> AnyResult<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn response(item: &DialogueItem) -> &str {
    item.response.as_ref().map_or("", |r| r.text.as_str())
}

/// Items that have a response and at least one reference.
fn referenced_items(items: &[DialogueItem]) -> Vec<usize> {
    (0..items.len()).filter(|&i| items[i].response.is_some() && !items[i].references.is_empty()).collect()
}

fn spread(n: usize, at: &[usize], values: Vec<f64>) -> Vec<Option<f64>> {
    let mut out = vec![None; n];
    for (&i, v) in at.iter().zip(values) {
        out[i] = Some(v);
    }
    out
}

/// The plain baseline every learned score is read against: response length in words.
fn length(run: &mut Run) -> AnyResult<Outcome> {
    let values: Vec<Option<f64>> = run.items.iter().map(|i| i.response.as_ref().map(|r| dialeval_common::word_count(&r.text) as f64)).collect();
    if values.iter().all(Option::is_none) {
        return Ok(Outcome::Skipped("no responses".into()));
    }
    Ok(Outcome::Done(vec![(LENGTH.to_owned(), values)]))
}

/// The name of the length baseline's column.
const LENGTH: &str = "Length (words)";

fn lexical(run: &mut Run) -> AnyResult<Outcome> {
    let at = referenced_items(&run.items);
    if at.is_empty() {
        return Ok(Outcome::Skipped("no references".into()));
    }
    let bleu = Bleu::new(BleuConfig::sentence())?;
    let rouge = Rouge::new(true);
    let mut b = Vec::new();
    let mut r = Vec::new();
    for &i in &at {
        let refs: Vec<&str> = run.items[i].references.iter().map(String::as_str).collect();
        b.push(bleu.sentence(response(&run.items[i]), &refs)?.score);
        r.push(rouge.score_multi(&refs, response(&run.items[i]))?.rouge_l.fmeasure);
    }
    let n = run.items.len();
    let mut cols = vec![("BLEU-4".to_owned(), spread(n, &at, b)), ("ROUGE-L".to_owned(), spread(n, &at, r))];
    match WordNet::load_default() {
        Ok(wordnet) => {
            let meteor = Meteor::new(Arc::new(wordnet), MeteorParams::default())?;
            let mut m = Vec::new();
            for &i in &at {
                let refs: Vec<&str> = run.items[i].references.iter().map(String::as_str).collect();
                m.push(meteor.score(&refs, response(&run.items[i]))?);
            }
            cols.push(("METEOR".to_owned(), spread(n, &at, m)));
        }
        Err(e) => eprintln!("evaluate: METEOR skipped: {e} (install Debian's wordnet-base)"),
    }
    Ok(Outcome::Done(cols))
}

fn encoder(run: &mut Run) -> Result<Arc<PretrainedEncoder>, String> {
    let dir = run.opts.get("encoder").map_or_else(default_model_dir, PathBuf::from);
    run.encoder.get_or_insert_with(|| PretrainedEncoder::load(&dir, &Device::flex()).map(Arc::new).map_err(|e| e.to_string())).clone()
}

fn embedding(run: &mut Run) -> AnyResult<Outcome> {
    let at = referenced_items(&run.items);
    if at.is_empty() {
        return Ok(Outcome::Skipped("no references".into()));
    }
    let enc = match encoder(run) {
        Ok(e) => e,
        Err(why) => return Ok(Outcome::Skipped(why)),
    };
    let hyps: Vec<&str> = at.iter().map(|&i| response(&run.items[i])).collect();
    let refs: Vec<&str> = at.iter().map(|&i| run.items[i].references[0].as_str()).collect();
    let bar = Progress::new("embedding");
    bar.update(0, 2);
    let h = enc.embed_tokens(&hyps).map_err(|e| e.to_string())?;
    bar.update(1, 2);
    let r = enc.embed_tokens(&refs).map_err(|e| e.to_string())?;
    bar.finish();
    let (mut bs, mut avg, mut greedy, mut extrema) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (x, y) in h.iter().zip(&r) {
        bs.push(bert_score(x, y, &BertScoreConfig::default())?.f1);
        avg.push(embedding_average(x, y)?);
        greedy.push(greedy_matching(x, y)?);
        extrema.push(vector_extrema(x, y)?);
    }
    let n = run.items.len();
    Ok(Outcome::Done(vec![
        ("BERTScore-F1".to_owned(), spread(n, &at, bs)),
        ("Embedding-Average".to_owned(), spread(n, &at, avg)),
        ("Greedy-Matching".to_owned(), spread(n, &at, greedy)),
        ("Vector-Extrema".to_owned(), spread(n, &at, extrema)),
    ]))
}

/// DailyDialog++ dev contexts (bundled), overlap exclusions honoured.
fn ddpp_dev(run: &Run) -> AnyResult<(Vec<ddpp::DdppContext>, ExcludeList)> {
    let dir = run.data.join("dailydialog-plusplus");
    Ok((ddpp::load(&dir.join("dev.json"))?, ExcludeList::load(&dir.join("overlap_exclude_ids.tsv"))?))
}

fn bert_ruber(run: &mut Run) -> AnyResult<Outcome> {
    let enc = match encoder(run) {
        Ok(e) => e,
        Err(why) => return Ok(Outcome::Skipped(why)),
    };
    let mut cache = embedding_cache(&enc)?;
    let source = model_source(run, "ruber", "bert-ruber");
    eprintln!("{}", source.describe("bert_ruber"));
    let model_dir = match source {
        ModelSource::Given(dir) | ModelSource::Bundled(dir) => dir,
        ModelSource::Retrain(dir) => {
            if !dir.join("done").is_file() {
                train_default_ruber(run, &enc, &mut cache, &dir)?;
            }
            dir
        }
    };
    let scorer = RuberScorer::load(&model_dir, Device::flex())?;
    let queries: Vec<String> = run.items.iter().map(|i| scorer.config.query(&i.context.iter().map(|t| t.text.as_str()).collect::<Vec<_>>())).collect();
    let texts: Vec<&str> = queries.iter().map(String::as_str).chain(run.items.iter().map(response)).collect();
    cache.fill(&enc, &texts, &|_, _| {})?;
    let pairs: Vec<(&str, &str)> = queries.iter().map(String::as_str).zip(run.items.iter().map(response)).collect();
    let unreferenced = scorer.score(&cache, &pairs)?;
    let n = run.items.len();
    let mut cols = vec![("BERT-RUBER-unref".to_owned(), unreferenced.iter().map(|&v| Some(v)).collect::<Vec<_>>())];
    let at = referenced_items(&run.items);
    if at.len() >= 2 {
        let mut referenced = Vec::new();
        for &i in &at {
            referenced.push(referenced_score(enc.as_ref(), response(&run.items[i]), &run.items[i].references[0], Pooling::MaxMin)?);
        }
        let unref: Vec<f64> = at.iter().map(|&i| unreferenced[i]).collect();
        let (nu, nr) = (min_max_normalize(&unref)?, min_max_normalize(&referenced)?);
        cols.push(("BERT-RUBER-ref".to_owned(), spread(n, &at, referenced)));
        for (name, s) in [("min", HybridStrategy::Min), ("max", HybridStrategy::Max), ("amean", HybridStrategy::ArithmeticMean), ("gmean", HybridStrategy::GeometricMean)] {
            cols.push((format!("BERT-RUBER-{name}"), spread(n, &at, hybrid(&nu, &nr, s)?)));
        }
    }
    Ok(Outcome::Done(cols))
}

/// BERT-RUBER (MiniLM, max pooling, cross-entropy — the paper's best cell) trained on the
/// bundled DailyDialog++ dev positives against their random negatives, 10% of contexts held out.
fn train_default_ruber(run: &Run, enc: &PretrainedEncoder, cache: &mut dialeval_slm_model::ruber::EmbeddingCache, dir: &Path) -> AnyResult<()> {
    let (contexts, exclude) = ddpp_dev(run)?;
    let config = RuberConfig { epochs: 20, patience: 5, seed: run.seed, ..RuberConfig::default() };
    let (mut train_t, mut dev_t) = (Vec::new(), Vec::new());
    for c in contexts.iter().filter(|c| !exclude.contains("dev.json", c.id)) {
        let triples = c.positives.iter().zip(&c.random_negatives).map(|(p, n)| Triple { query: config.query(&c.context), positive: p.clone(), negative: n.clone() });
        if split_of(&c.id.to_string(), [0.9, 0.1, 0.0], run.seed)? == Split::Train { train_t.extend(triples) } else { dev_t.extend(triples) }
    }
    eprintln!("evaluate: training BERT-RUBER on {} DailyDialog++ triples ({} dev) into {}", train_t.len(), dev_t.len(), dir.display());
    let texts: Vec<&str> = train_t.iter().chain(&dev_t).flat_map(|t| [t.query.as_str(), t.positive.as_str(), t.negative.as_str()]).collect();
    let bar = Progress::new("embedding");
    cache.fill(enc, &texts, &|d, t| bar.update(d, t))?;
    bar.finish();
    let bar = Progress::new("BERT-RUBER");
    train_unreferenced(&train_t, &dev_t, cache, enc.vocab_size(), &config, dir, &|e, s, n| bar.update_epoch(e, s, n))?;
    bar.finish();
    std::fs::write(dir.join("done"), "")?;
    Ok(())
}

fn slm(run: &mut Run) -> AnyResult<Outcome> {
    let source = model_source(run, "slm", "slm");
    eprintln!("{}", source.describe("slm"));
    let dir = match source {
        ModelSource::Given(dir) | ModelSource::Bundled(dir) => dir,
        ModelSource::Retrain(dir) => {
            if !dir.join("done").is_file() {
                train_default_slm(run, &dir)?;
            }
            dir
        }
    };
    let scorer = Scorer::load(&dir, Device::flex())?;
    let pairs: Vec<TrainingPair> = run.items.iter().map(|i| dialeval_examples::slm_pair(i, 2)).collect();
    let enc = if scorer.featurizer().encoder.is_some() { Some(encoder(run)?) } else { None };
    let scores = dialeval_examples::score_slm_pairs(&scorer, &pairs, enc.as_deref())?;
    let with_graphs = pairs.iter().filter(|p| p.response_amr.is_some()).count();
    eprintln!("evaluate: SLM scored {} items ({with_graphs} with a response graph)", scores.len());
    Ok(Outcome::Done(vec![("SLM".to_owned(), scores.into_iter().map(Some).collect())]))
}

/// The gated SLM trained on the 200 bundled DailyDialog++ dev contexts with silver AMR
/// (positives vs random and adversarial negatives), 10% of contexts held out.
fn train_default_slm(run: &Run, dir: &Path) -> AnyResult<()> {
    let (contexts, exclude) = ddpp_dev(run)?;
    let ids: Vec<u64> = serde_json::from_str(&std::fs::read_to_string(run.data.join("silver-amr/dailydialog-plusplus-dev200.context-ids.json"))?)?;
    let chosen: Vec<ddpp::DdppContext> = contexts.into_iter().filter(|c| ids.contains(&c.id)).collect();
    let index = AmrIndex::load(&[run.data.join("silver-amr/dailydialog-plusplus-dev200.silver.amr.txt")])?;
    let (mut pairs, _) = ddpp_pairs(&chosen, "dev.json", Some(&exclude), &DdppPairConfig { max_context_turns: Some(2), seed: run.seed, ..DdppPairConfig::default() })?;
    let coverage = index.attach_pairs(&mut pairs);
    eprintln!("evaluate: silver graphs for {} of {} DailyDialog++ turns and responses", coverage.with_amr, coverage.turns);
    let (train_p, dev_p, _) = split_by_group(pairs, [0.9, 0.1, 0.0], run.seed, ddpp_context)?;
    eprintln!("evaluate: training the SLM (gated, silver AMR) on {} DailyDialog++ pairs ({} dev) into {}", train_p.len(), dev_p.len(), dir.display());
    let config = TrainConfig { mode: Mode::Gated, epochs: 3, seed: run.seed, ..TrainConfig::default() };
    let bar = Progress::new("SLM");
    train(&train_p, &dev_p, &config, dir, None, &|e, s, n| bar.update_epoch(e, s, n))?;
    bar.finish();
    std::fs::write(dir.join("done"), "")?;
    Ok(())
}

fn smatch(run: &mut Run) -> AnyResult<Outcome> {
    let smatch = Smatch::new(SmatchConfig::default())?;
    let n = run.items.len();
    let mut values = vec![None; n];
    let mut found = 0;
    for (i, item) in run.items.iter().enumerate() {
        let (Some(test), Some(reference)) = (item.response.as_ref().and_then(|r| r.amr.as_deref()), item.references.first()) else { continue };
        let Some(gold) = run.amr.by_text(reference.trim()) else { continue };
        values[i] = Some(smatch.score_str(test, &gold.penman)?.f1());
        found += 1;
    }
    if found == 0 {
        return Ok(Outcome::Skipped("no item has both a response graph and a reference graph".into()));
    }
    Ok(Outcome::Done(vec![("Smatch".to_owned(), values)]))
}

fn llm(run: &mut Run) -> AnyResult<Outcome> {
    let explicit = run.opts.get("llm-base-url").cloned();
    let base_url = explicit.clone().unwrap_or_else(|| "http://127.0.0.1:8089/v1".to_owned());
    if explicit.is_none() && !reachable(&base_url) {
        return Ok(Outcome::Skipped("no LLM configured (give --llm-base-url or start scripts/llm_server.sh)".into()));
    }
    let client = OpenAiClient::new(OpenAiConfig { base_url, timeout: Duration::from_secs(300), ..OpenAiConfig::default() })?;
    let client = CachedClient::new(client, run.out.join("cache/llm"))?;
    let config = JudgeConfig { model: run.opts.get("llm-model").cloned().unwrap_or_else(|| "smollm2-135m".to_owned()), ..JudgeConfig::default() };
    let judge = Judge::new(client, Templates::builtin()?, config);
    let inputs: Vec<PromptInput> = run
        .items
        .iter()
        .map(|it| PromptInput {
            context: it.context.iter().map(|t| (t.speaker.clone(), t.text.clone())).collect(),
            response: response(it).to_owned(),
            knowledge: it.knowledge.clone(),
            slm_score: None,
            context_amr: it.context.iter().filter_map(|t| t.amr.clone()).collect(),
            response_amr: it.response.as_ref().and_then(|r| r.amr.clone()),
        })
        .collect();
    let bar = Progress::new("LLM judge");
    let results = judge.judge_batch(&inputs, &CRITERIA, Variant::NoSlm, Scoring::Parse, &|d, t| bar.update(d, t));
    bar.finish();
    let mut cols: Vec<Column> = CRITERIA.iter().map(|c| (format!("LLM-{}", c.name()), vec![None; inputs.len()])).collect();
    let mut failures = 0;
    for (i, row) in results.into_iter().enumerate() {
        for r in row {
            match r {
                Ok(j) => {
                    if let (Some(k), Some(score)) = (CRITERIA.iter().position(|&c| c == j.criterion), j.outcome.value()) {
                        cols[k].1[i] = Some(score);
                    }
                }
                Err(_) => failures += 1,
            }
        }
    }
    if failures > 0 {
        eprintln!("evaluate: {failures} LLM judgements failed; their items have no LLM score");
    }
    Ok(Outcome::Done(cols))
}

/// Whether something listens at the host and port of `url` (`http://host:port/...`).
fn reachable(url: &str) -> bool {
    use std::net::ToSocketAddrs;
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host_port = rest.split('/').next().unwrap_or(rest);
    let host_port = if host_port.contains(':') { host_port.to_owned() } else { format!("{host_port}:80") };
    host_port.to_socket_addrs().ok().and_then(|mut a| a.next()).is_some_and(|addr| std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok())
}

fn write_scores(run: &Run, columns: &[Column]) -> AnyResult<()> {
    let criteria = human_criteria(&run.items);
    let mut file = std::io::BufWriter::new(std::fs::File::create(run.out.join("scores.jsonl"))?);
    for (i, item) in run.items.iter().enumerate() {
        let human: BTreeMap<&str, f64> = criteria.iter().map(|(c, v)| (c.as_str(), v[i])).collect();
        let metrics: serde_json::Map<String, Value> = columns.iter().map(|(n, v)| (n.clone(), json!(v[i]))).collect();
        writeln!(file, "{}", json!({"id": item.id, "system": item.system, "response": response(item), "human": human, "metrics": metrics}))?;
    }
    Ok(())
}

struct Summary {
    table: String,
    json: Value,
}

/// Values of `metric` and `human` on the items where the metric is defined.
fn paired(metric: &[Option<f64>], human: &[f64]) -> (Vec<usize>, Vec<f64>, Vec<f64>) {
    let at: Vec<usize> = (0..metric.len()).filter(|&i| metric[i].is_some_and(f64::is_finite) && human[i].is_finite()).collect();
    (at.clone(), at.iter().filter_map(|&i| metric[i]).collect(), at.iter().map(|&i| human[i]).collect())
}

fn correlate_all(run: &Run, columns: &[Column]) -> AnyResult<Summary> {
    let criteria = human_criteria(&run.items);
    let systems: Vec<String> = run.items.iter().map(|i| i.system.clone().unwrap_or_default()).collect();
    let config = ReportConfig::default();
    let mut turn = CorrelationReport::default();
    let mut system_rows = Vec::new();
    let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
    let mut spearman = vec![vec![f64::NAN; criteria.len()]; columns.len()];
    let mut pearson = vec![vec![f64::NAN; criteria.len()]; columns.len()];
    for (m, (name, values)) in columns.iter().enumerate() {
        for (c, (criterion, human)) in criteria.iter().enumerate() {
            let (at, x, y) = paired(values, human);
            if x.len() < 4 {
                continue;
            }
            let report = CorrelationReport::build(&[(name.as_str(), &x)], &[(criterion.as_str(), &y)], &config)?;
            for r in &report.rows {
                match r.kind {
                    CorrelationKind::Spearman => spearman[m][c] = r.statistic,
                    CorrelationKind::Pearson => pearson[m][c] = r.statistic,
                    CorrelationKind::KendallTauB => {}
                }
            }
            turn.rows.extend(report.rows);
            let sys: Vec<String> = at.iter().map(|&i| systems[i].clone()).collect();
            if sys.iter().any(|s| s != &sys[0]) {
                for kind in [CorrelationKind::Pearson, CorrelationKind::Spearman] {
                    if let Ok(r) = system_level(kind, &x, &y, &sys) {
                        system_rows.push(json!({"metric": name, "criterion": criterion, "kind": kind.name(), "statistic": finite(r.statistic), "pvalue": finite(r.pvalue), "systems": r.n}));
                    }
                }
            }
        }
    }
    // Best metric per criterion by Spearman; Williams' test (on Pearson, common items) of each
    // other metric against it.
    let mut best = serde_json::Map::new();
    let mut marks = vec![vec![String::new(); criteria.len()]; columns.len()];
    let mut williams = Vec::new();
    for (c, (criterion, human)) in criteria.iter().enumerate() {
        let Some(b) = (0..columns.len()).filter(|&m| spearman[m][c].is_finite()).max_by(|&a, &b| spearman[a][c].total_cmp(&spearman[b][c])) else { continue };
        best.insert(criterion.clone(), json!(names[b]));
        marks[b][c] = " ★".to_owned();
        for m in (0..columns.len()).filter(|&m| m != b && spearman[m][c].is_finite()) {
            let common: Vec<usize> = (0..human.len()).filter(|&i| columns[b].1[i].is_some() && columns[m].1[i].is_some() && human[i].is_finite()).collect();
            let pick = |col: &[Option<f64>]| common.iter().filter_map(|&i| col[i]).collect::<Vec<f64>>();
            let h: Vec<f64> = common.iter().map(|&i| human[i]).collect();
            if let Ok(t) = compare_metrics(&pick(&columns[b].1), &pick(&columns[m].1), &h) {
                if t.pvalue_one_sided < 0.05 {
                    marks[m][c] = " ↓".to_owned();
                }
                williams.push(json!({"criterion": criterion, "best": names[b], "metric": names[m], "n": common.len(), "t": finite(t.t), "pvalue_one_sided": finite(t.pvalue_one_sided)}));
            }
        }
    }
    let header: Vec<&str> = criteria.iter().map(|(c, _)| c.as_str()).collect();
    if criteria.is_empty() {
        let table = "No criterion is rated on at least 3 items: scores only, nothing to correlate.\n".to_owned();
        return Ok(Summary { table, json: json!({"turn_level": [], "system_level": [], "best_by_spearman": {}, "williams_vs_best": []}) });
    }
    let mut table = format!("| metric | n | {} | ρ with length |\n|---|---|{}---|\n", header.join(" | "), "---|".repeat(header.len()));
    let lengths: Vec<f64> = run.items.iter().map(|i| i.response.as_ref().map_or(f64::NAN, |r| dialeval_common::word_count(&r.text) as f64)).collect();
    let mut length_rows = Vec::new();
    for (m, (name, values)) in columns.iter().enumerate() {
        let n = values.iter().filter(|v| v.is_some()).count();
        let cells: Vec<String> =
            (0..criteria.len()).map(|c| if spearman[m][c].is_finite() { format!("{:.3} / {:.3}{}", spearman[m][c], pearson[m][c], marks[m][c]) } else { "–".to_owned() }).collect();
        // Spearman of the metric with response length in words: how much of a score is length.
        let (_, x, l) = paired(values, &lengths);
        let rho = (x.len() >= 4).then(|| dialeval_metrics::correlation::spearman(&x, &l)).filter(|r| r.statistic.is_finite());
        let cell = rho.as_ref().map_or_else(|| "–".to_owned(), |r| format!("{:.3} (p={})", r.statistic, format_pvalue(r.pvalue)));
        if let Some(r) = &rho {
            length_rows.push(json!({"metric": name, "n": x.len(), "spearman": r.statistic, "pvalue": finite(r.pvalue)}));
        }
        table.push_str(&format!("| {name} | {n} | {} | {cell} |\n", cells.join(" | ")));
    }
    let plots = run.out.join("plots");
    heatmap(
        &plots.join("heatmap_spearman"),
        "Turn-level Spearman correlation with human ratings (★ best, ↓ worse by Williams' test)",
        &names.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
        &header.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
        &spearman,
        &marks,
    )?;
    for (c, (criterion, human)) in criteria.iter().enumerate() {
        let panels: Vec<Panel> = columns
            .iter()
            .enumerate()
            .map(|(m, (name, values))| {
                let (_, x, y) = paired(values, human);
                Panel { title: format!("{name} (ρ = {:.2})", spearman[m][c]), points: x.into_iter().zip(y).collect() }
            })
            .collect();
        scatter_grid(&plots.join(format!("scatter_{}", criterion.to_lowercase())), &format!("Metric scores against human {criterion}"), criterion, &panels)?;
    }
    let json = json!({"turn_level": turn.rows, "system_level": system_rows, "best_by_spearman": best, "williams_vs_best": williams, "spearman_with_length": length_rows});
    Ok(Summary { table, json })
}

fn finite(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

fn write_report(run: &Run, columns: &[Column], skipped: &[(String, String)], summary: &Summary) -> AnyResult<()> {
    let criteria = human_criteria(&run.items);
    let mut md = String::from("# Correlations with human ratings\n\n");
    md.push_str("Turn level, each cell `Spearman / Pearson`; ★ the best metric of the criterion (Spearman), ↓ significantly worse than it (Williams' test, one-sided p < 0.05, Pearson on common items). n = items the metric scores. The last column is each metric's Spearman with response length in words (the `Length (words)` row is that baseline itself).\n\n");
    md.push_str(&summary.table);
    md.push_str("\n## All coefficients (p-values, 95% intervals: Fisher z for Pearson, bootstrap for the others)\n\n");
    let rows: Vec<dialeval_metrics::report::ReportRow> = serde_json::from_value(summary.json["turn_level"].clone())?;
    md.push_str(&CorrelationReport { rows }.to_markdown());
    if let Some(system) = summary.json["system_level"].as_array().filter(|a| !a.is_empty()) {
        md.push_str("\n## System level (means per system)\n\n| metric | criterion | kind | r | p | systems |\n|---|---|---|---|---|---|\n");
        for r in system {
            let num = |k: &str, format: fn(f64) -> String| r[k].as_f64().map_or_else(|| "–".to_owned(), format);
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                r["metric"].as_str().unwrap_or(""),
                r["criterion"].as_str().unwrap_or(""),
                r["kind"].as_str().unwrap_or(""),
                num("statistic", |v| format!("{v:.3}")),
                num("pvalue", format_pvalue),
                r["systems"]
            ));
        }
    }
    write_atomic(&run.out.join("correlations.md"), &md)?;
    write_atomic(&run.out.join("correlations.json"), &serde_json::to_string_pretty(&summary.json)?)?;
    let mut report =
        format!("# Evaluation report\n\n{} items; {} metrics; human criteria: {}.\n\n", run.items.len(), columns.len(), criteria.iter().map(|(c, _)| c.as_str()).collect::<Vec<_>>().join(", "));
    report.push_str("- scores per item: [scores.jsonl](scores.jsonl)\n- correlations: [correlations.md](correlations.md), [correlations.json](correlations.json)\n- heat map: [plots/heatmap_spearman.png](plots/heatmap_spearman.png) ([svg](plots/heatmap_spearman.svg))\n");
    for (c, _) in &criteria {
        let stem = format!("plots/scatter_{}", c.to_lowercase());
        report.push_str(&format!("- scatter, {c}: [{stem}.png]({stem}.png) ([svg]({stem}.svg))\n"));
    }
    if !skipped.is_empty() {
        report.push_str("\n## Skipped\n\n");
        for (name, why) in skipped {
            report.push_str(&format!("- {name}: {why}\n"));
        }
    }
    report.push_str(&format!("\n## Turn-level correlations\n\n{}\n![heat map](plots/heatmap_spearman.png)\n", summary.table));
    write_atomic(&run.out.join("report.md"), &report)?;
    Ok(())
}
