//! `dialeval.evaluate`: the main job of `dialeval evaluate` (the library's [`MainJob`], with the
//! same lock, families, caches and report files) over a JSONL corpus (the Python layer stages a
//! list of item dicts in one), its scores and correlations handed back as Python values.

use std::path::PathBuf;

use dialeval_datasets::CorpusFormat;
use dialeval_eval::models::main_job::{CorpusInput, LlmChoice, MainJob, MainJobObserver, MainJobShard};
use dialeval_eval::models::{Compute, FamilyName, ModelSettings, Retrain, default_cache_dir};
use dialeval_eval::pipeline::FamilyStatus;
use dialeval_eval::shard::Shard;
use dialeval_eval::{Report, RunSettings};
use dialeval_metrics::embedding::MultiRef;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::{DialevalError, InputError, ResourceError};

fn eval_error(e: dialeval_eval::Error) -> PyErr {
    if e.is_interrupted() {
        return pyo3::exceptions::PyKeyboardInterrupt::new_err("dialeval.evaluate stopped; the chunks it finished are cached in out, and the next call resumes from them");
    }
    match e {
        dialeval_eval::Error::Datasets(dialeval_datasets::Error::Io { .. }) => ResourceError::new_err(e.to_string()),
        dialeval_eval::Error::Datasets(_) | dialeval_eval::Error::Config(_) | dialeval_eval::Error::Setting { .. } | dialeval_eval::Error::Column { .. } => InputError::new_err(e.to_string()),
        dialeval_eval::Error::Io { .. } | dialeval_eval::Error::Busy { .. } => ResourceError::new_err(e.to_string()),
        _ => DialevalError::new_err(e.to_string()),
    }
}

/// `job()` on another thread while this one (Python's main thread, GIL released) looks for
/// signals every 50 ms: on Ctrl-C it asks the job to stop ([`dialeval_common::interrupt`]),
/// waits for it (the pipeline stops between two batches, items or families, within seconds)
/// and raises `KeyboardInterrupt`, leaving the output folder as the next call resumes from.
fn interruptible<T: Send>(py: Python<'_>, job: impl FnOnce() -> dialeval_eval::Result<T> + Send) -> PyResult<T> {
    dialeval_common::interrupt::clear();
    let (result, signal) = py.detach(|| {
        std::thread::scope(|scope| {
            let worker = scope.spawn(job);
            let mut signal: Option<PyErr> = None;
            while !worker.is_finished() {
                std::thread::sleep(std::time::Duration::from_millis(50));
                if signal.is_none()
                    && let Err(e) = Python::attach(|py| py.check_signals())
                {
                    dialeval_common::interrupt::request();
                    signal = Some(e);
                }
            }
            (worker.join(), signal)
        })
    });
    dialeval_common::interrupt::clear();
    let result = result.map_err(|_| DialevalError::new_err("the evaluation panicked (a bug: please report it)"))?;
    match (result, signal) {
        // Stopped by the signal (whatever error the stop surfaced as), or finished just before
        // it was seen: the signal's own error.
        (_, Some(signal)) => Err(signal),
        (result, None) => result.map_err(eval_error),
    }
}

/// What a call produced: the analysed report, or (`report=False`) only a shard's scores.
enum Done {
    Report(Box<Report>, Vec<String>),
    Shard(Box<MainJobShard>),
}

/// Scores, analyses and writes the report into `out` (the work the GIL is released for): the
/// main job of `dialeval evaluate` ([`MainJob`]), its lock, caches and files; with
/// `report == false` only the shard's scores ([`MainJob::score_shard`]). The corpus is read a
/// chunk at a time, its graphs attached as it is read, so a corpus of a million items is never
/// in memory whole.
fn run(job: &MainJob, report: bool) -> dialeval_eval::Result<Done> {
    if report {
        let done = job.run(&MainJobObserver::SILENT)?;
        Ok(Done::Report(Box::new(done.report), done.notes))
    } else {
        job.score_shard(&MainJobObserver::SILENT).map(|s| Done::Shard(Box::new(s)))
    }
}

/// The corpus format of a Python keyword (`jsonl`, `usr`, `fed`, `fed-dialogue`, `grade`), named
/// as the command's `--corpus`.
fn corpus_format(format: &str) -> PyResult<CorpusFormat> {
    format.parse::<CorpusFormat>().map_err(|e| InputError::new_err(format!("format {e}")))
}

/// The shard `(k, n)` of a Python keyword, checked as the command's `--shard k/n` is.
fn shard_of(shard: Option<(i64, i64)>) -> PyResult<Option<Shard>> {
    shard.map(|(k, n)| format!("{k}/{n}").parse::<Shard>().map_err(eval_error)).transpose()
}

/// A shard's scores as Python values, in the shape of [`to_python`]'s (`human` empty: the
/// ratings are read by the merge; no correlations).
fn shard_to_python<'py>(py: Python<'py>, done: &MainJobShard) -> PyResult<Bound<'py, PyDict>> {
    let scores = PyList::empty(py);
    for (i, id) in done.scores.ids.iter().enumerate() {
        let metrics = PyDict::new(py);
        for column in &done.scores.columns {
            metrics.set_item(column.metric.as_str(), column.values.get(i).copied().flatten())?;
        }
        let item = PyDict::new(py);
        item.set_item("id", id)?;
        item.set_item("metrics", metrics)?;
        item.set_item("human", PyDict::new(py))?;
        scores.append(item)?;
    }
    let skipped = PyDict::new(py);
    for run in &done.scores.runs {
        if let FamilyStatus::Skipped { reason } = &run.status {
            skipped.set_item(&run.family, reason)?;
        }
    }
    let out = PyDict::new(py);
    out.set_item("scores", scores)?;
    out.set_item("correlations", PyList::empty(py))?;
    out.set_item("skipped", skipped)?;
    out.set_item("notes", done.notes.clone())?;
    Ok(out)
}

/// The report as Python values: `scores` (one dict per item: `id`, `metrics`, `human`),
/// `correlations` (one dict per row: `metric`, `criterion`, `level`, `kind`, `statistic`,
/// `pvalue`, `n`), `skipped` (family → reason) and `notes`.
fn to_python<'py>(py: Python<'py>, report: &Report, notes: &[String]) -> PyResult<Bound<'py, PyDict>> {
    let scores = PyList::empty(py);
    for (i, id) in report.rows.ids.iter().enumerate() {
        let metrics = PyDict::new(py);
        for column in report.table.columns() {
            metrics.set_item(column.metric.as_str(), column.values[i])?;
        }
        let human = PyDict::new(py);
        for (quality, values) in &report.human.qualities {
            human.set_item(quality.name(), values[i])?;
        }
        let item = PyDict::new(py);
        item.set_item("id", id)?;
        item.set_item("metrics", metrics)?;
        item.set_item("human", human)?;
        scores.append(item)?;
    }
    let correlations = PyList::empty(py);
    let finite = |v: f64| v.is_finite().then_some(v);
    for row in &report.analysis.turn_level.rows {
        let d = PyDict::new(py);
        d.set_item("metric", &row.metric)?;
        d.set_item("criterion", &row.criterion)?;
        d.set_item("level", "turn")?;
        d.set_item("kind", row.kind.name().to_lowercase())?;
        d.set_item("statistic", finite(row.statistic))?;
        d.set_item("pvalue", finite(row.pvalue))?;
        d.set_item("n", row.n)?;
        correlations.append(d)?;
    }
    for row in &report.analysis.system_level {
        let d = PyDict::new(py);
        d.set_item("metric", row.metric.as_str())?;
        d.set_item("criterion", row.quality.name())?;
        d.set_item("level", "system")?;
        d.set_item("kind", row.kind.name().to_lowercase())?;
        d.set_item("statistic", row.statistic)?;
        d.set_item("pvalue", row.pvalue)?;
        d.set_item("n", row.systems)?;
        correlations.append(d)?;
    }
    let skipped = PyDict::new(py);
    for run in &report.runs {
        if let FamilyStatus::Skipped { reason } = &run.status {
            skipped.set_item(&run.family, reason)?;
        }
    }
    let out = PyDict::new(py);
    out.set_item("scores", scores)?;
    out.set_item("correlations", correlations)?;
    out.set_item("skipped", skipped)?;
    out.set_item("notes", notes.to_vec())?;
    Ok(out)
}

/// Runs the main job over the JSONL corpus at `path` into `out` and returns its scores,
/// correlations, skipped families and notes (see `dialeval.evaluate`).
#[pyfunction]
#[pyo3(signature = (path, out, *, skip = Vec::new(), amr = Vec::new(), encoder = None, models = None, slm = None, ruber = None, fine_tuned = None, references = "max", bootstrap = 1000, chunk = 10_000, device = "cpu", llm_base_url = None, llm_model = "smollm2-135m", shard = None, report = true, format = "jsonl"))]
#[allow(clippy::too_many_arguments)] // the Python keywords, gathered into a `MainJob` at once
pub fn evaluate<'py>(
    py: Python<'py>,
    path: PathBuf,
    out: PathBuf,
    skip: Vec<String>,
    amr: Vec<PathBuf>,
    encoder: Option<PathBuf>,
    models: Option<PathBuf>,
    slm: Option<PathBuf>,
    ruber: Option<PathBuf>,
    fine_tuned: Option<PathBuf>,
    references: &str,
    bootstrap: i64,
    chunk: i64,
    device: &str,
    llm_base_url: Option<String>,
    llm_model: &str,
    shard: Option<(i64, i64)>,
    report: bool,
    format: &str,
) -> PyResult<Bound<'py, PyDict>> {
    if !report && shard.is_none() {
        return Err(InputError::new_err("report=False keeps only a shard's scores for the merge: give shard=(k, n)"));
    }
    // The library's checks, the same as the command's.
    let count = |name, value| dialeval_eval::settings::count(name, value).map_err(eval_error);
    let run_settings = RunSettings { chunk: count("chunk", chunk)?, bootstrap: count("bootstrap", bootstrap)?, ..RunSettings::default() };
    let skip = skip.iter().map(|s| s.parse::<FamilyName>()).collect::<Result<Vec<_>, _>>().map_err(|e| InputError::new_err(e.to_string()))?;
    let references = match references {
        "max" => MultiRef::Max,
        "mean" => MultiRef::Mean,
        other => return Err(InputError::new_err(format!("references={other:?}: \"max\" or \"mean\""))),
    };
    let compute: Compute = device.parse().map_err(|e: dialeval_slm_model::Error| InputError::new_err(e.to_string()))?;
    let corpus = CorpusInput { format: corpus_format(format)?, path, subset: None };
    let job = MainJob {
        amr,
        skip,
        skip_reason: "left out by skip=".into(),
        models: ModelSettings {
            encoder,
            compute,
            // No folder of shipped checkpoints: the learned families are skipped with the reason.
            models: models.or_else(|| std::env::var_os("DIALEVAL_MODELS").map(PathBuf::from)),
            slm,
            ruber,
            fine_tuned,
            retrain: Retrain::Never,
            out: out.clone(),
            cache_dir: default_cache_dir(),
            references,
            ..ModelSettings::default()
        },
        run: run_settings,
        llm: match llm_base_url {
            Some(base_url) => LlmChoice::Endpoint { base_url, model: llm_model.to_owned() },
            None => LlmChoice::None("no LLM configured (give llm_base_url=)".into()),
        },
        shard: shard_of(shard)?,
        ..MainJob::new(corpus, out)
    };
    match interruptible(py, || run(&job, report))? {
        Done::Report(report, notes) => to_python(py, &report, &notes),
        Done::Shard(shard) => shard_to_python(py, &shard),
    }
}

/// Builds the report of the whole JSONL corpus at `path` into `out` from the folders of its
/// shards (each scored by `evaluate(..., shard=(k, n))`), as `dialeval evaluate merge` does:
/// byte for byte the files of one run, but the seconds (see `dialeval.merge`).
#[pyfunction]
#[pyo3(signature = (path, out, shards, *, amr = Vec::new(), bootstrap = 1000, chunk = 10_000, format = "jsonl"))]
#[allow(clippy::too_many_arguments)] // the Python keywords, gathered into a `MainJob` at once
pub fn merge<'py>(py: Python<'py>, path: PathBuf, out: PathBuf, shards: Vec<PathBuf>, amr: Vec<PathBuf>, bootstrap: i64, chunk: i64, format: &str) -> PyResult<Bound<'py, PyDict>> {
    let count = |name, value| dialeval_eval::settings::count(name, value).map_err(eval_error);
    let run = RunSettings { chunk: count("chunk", chunk)?, bootstrap: count("bootstrap", bootstrap)?, ..RunSettings::default() };
    let job = MainJob { amr, run, ..MainJob::new(CorpusInput { format: corpus_format(format)?, path, subset: None }, out) };
    let (report, notes) = interruptible(py, || job.merge(&shards, &MainJobObserver::SILENT).map(|done| (done.report, done.notes)))?;
    to_python(py, &report, &notes)
}
