//! `dialeval._dialeval`: the Python extension module of the `dialeval` package (see
//! `pysrc/dialeval`, which arranges these functions into `dialeval.metrics`, `dialeval.stats`
//! and `dialeval.amr` with the call shapes of sacrebleu, rouge-score, nltk, scipy and penman).
//!
//! Every function releases the GIL while the Rust code works, and every Rust error becomes a
//! typed exception with the Rust message: [`InputError`] for bad input,
//! [`AmrError`] for PENMAN that does not parse, [`ResourceError`] for a missing resource
//! (WordNet), all subclasses of [`DialevalError`].

mod evaluate;

use std::sync::{Arc, OnceLock};

use dialeval_amr_graph::smatch::{Smatch, SmatchConfig};
use dialeval_amr_graph::{AmrGraph, Triple};
use dialeval_metrics::correlation::{Correlation, CorrelationKind, CorrelationOptions, KendallMethod, NanPolicy, correlate_with};
use dialeval_metrics::specificity::IdfTable;
use dialeval_metrics::text::bleu::{Bleu, BleuConfig};
use dialeval_metrics::text::meteor::{Meteor, MeteorParams};
use dialeval_metrics::text::rouge::{Rouge, RougeVariant, Stemming};
use dialeval_metrics::text::wordnet::WordNet;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

pyo3::create_exception!(_dialeval, DialevalError, PyException, "Base of every error dialeval raises.");
pyo3::create_exception!(_dialeval, InputError, DialevalError, "The input is not what the function takes.");
pyo3::create_exception!(_dialeval, AmrError, DialevalError, "PENMAN text that does not parse, or a graph that cannot be laid out.");
pyo3::create_exception!(_dialeval, ResourceError, DialevalError, "A resource the function needs is missing (WordNet 3.0 for METEOR).");

/// An [`InputError`] with the Rust message.
fn input_error(e: impl std::fmt::Display) -> PyErr {
    InputError::new_err(e.to_string())
}

fn metrics_error(e: dialeval_metrics::Error) -> PyErr {
    match e {
        dialeval_metrics::Error::WordNet(_) | dialeval_metrics::Error::Io { .. } => ResourceError::new_err(e.to_string()),
        _ => input_error(e),
    }
}

fn amr_error(e: dialeval_amr_graph::Error) -> PyErr {
    AmrError::new_err(e.to_string())
}

/// The value in `cell`, made by `make` on first use (the scorers, built once per process; a
/// failed `make` is returned and tried again on the next call).
fn once<T>(cell: &'static OnceLock<T>, make: impl FnOnce() -> PyResult<T>) -> PyResult<&'static T> {
    if let Some(v) = cell.get() {
        return Ok(v);
    }
    let v = make()?;
    Ok(cell.get_or_init(|| v))
}

fn sentence_bleu_scorer() -> PyResult<&'static Bleu> {
    static SCORER: OnceLock<Bleu> = OnceLock::new();
    once(&SCORER, || Bleu::new(BleuConfig::sentence()).map_err(metrics_error))
}

fn corpus_bleu_scorer() -> PyResult<&'static Bleu> {
    static SCORER: OnceLock<Bleu> = OnceLock::new();
    once(&SCORER, || Bleu::new(BleuConfig::corpus()).map_err(metrics_error))
}

fn meteor_scorer() -> PyResult<&'static Meteor> {
    static SCORER: OnceLock<Meteor> = OnceLock::new();
    once(&SCORER, || {
        let wordnet = WordNet::load_default().map_err(|e| ResourceError::new_err(format!("METEOR needs WordNet 3.0: {e}")))?;
        Meteor::new(Arc::new(wordnet), MeteorParams::default()).map_err(metrics_error)
    })
}

/// One reference or several.
#[derive(FromPyObject)]
enum References {
    One(String),
    Many(Vec<String>),
}

impl References {
    fn texts(&self) -> Vec<&str> {
        match self {
            Self::One(r) => vec![r.as_str()],
            Self::Many(rs) => rs.iter().map(String::as_str).collect(),
        }
    }
}

/// `sacrebleu.sentence_bleu(hypothesis, references).score`: 13a tokens, exp smoothing,
/// effective order, on the 0–100 scale.
#[pyfunction]
fn sentence_bleu(py: Python<'_>, hypothesis: &str, references: References) -> PyResult<f64> {
    let scorer = sentence_bleu_scorer()?;
    let refs = references.texts();
    py.detach(|| scorer.sentence(hypothesis, &refs)).map(|s| s.score).map_err(metrics_error)
}

/// `sacrebleu.corpus_bleu(hypotheses, references).score`, with sacrebleu's layout:
/// `references` is a list of reference streams, each holding one reference per hypothesis.
#[pyfunction]
fn corpus_bleu(py: Python<'_>, hypotheses: Vec<String>, references: Vec<Vec<String>>) -> PyResult<f64> {
    if references.is_empty() {
        return Err(input_error("corpus_bleu: no reference stream (give references as a list of streams, each with one reference per hypothesis)"));
    }
    if let Some((k, stream)) = references.iter().enumerate().find(|(_, s)| s.len() != hypotheses.len()) {
        return Err(input_error(format!("corpus_bleu: reference stream {k} has {} references for {} hypotheses", stream.len(), hypotheses.len())));
    }
    let scorer = corpus_bleu_scorer()?;
    py.detach(|| {
        let per_hypothesis: Vec<Vec<&str>> = (0..hypotheses.len()).map(|i| references.iter().map(|s| s[i].as_str()).collect()).collect();
        let hyps: Vec<&str> = hypotheses.iter().map(String::as_str).collect();
        scorer.corpus(&hyps, &per_hypothesis)
    })
    .map(|s| s.score)
    .map_err(metrics_error)
}

/// Precision, recall and F-measure (rouge-score's `Score`).
#[pyclass(frozen, module = "dialeval.metrics", name = "Score")]
struct Score {
    #[pyo3(get)]
    precision: f64,
    #[pyo3(get)]
    recall: f64,
    #[pyo3(get)]
    fmeasure: f64,
}

#[pymethods]
impl Score {
    fn __repr__(&self) -> String {
        format!("Score(precision={}, recall={}, fmeasure={})", self.precision, self.recall, self.fmeasure)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let tuple = (slf.precision, slf.recall, slf.fmeasure).into_pyobject(py)?;
        Ok(tuple.try_iter()?.into_any().unbind())
    }
}

/// ROUGE-L of `hypothesis` against the best of `references` (rouge-score's
/// `RougeScorer(['rougeL'], use_stemmer=stemming)`, `score` for one reference and
/// `score_multi` for several).
#[pyfunction]
#[pyo3(signature = (hypothesis, references, *, stemming = false))]
fn rouge_l(py: Python<'_>, hypothesis: &str, references: References, stemming: bool) -> PyResult<Score> {
    let refs = references.texts();
    let rouge = Rouge::new(if stemming { Stemming::Porter } else { Stemming::None });
    let scores = py.detach(|| rouge.score_multi(hypothesis, &refs)).map_err(metrics_error)?;
    let l = scores.get(RougeVariant::RougeL);
    Ok(Score { precision: l.precision, recall: l.recall, fmeasure: l.fmeasure })
}

/// nltk's `meteor_score([r.lower().split() for r in references], hypothesis.lower().split())`
/// with its defaults (alpha 0.9, beta 3, gamma 0.5, Porter stems, WordNet 3.0 synonyms).
#[pyfunction]
fn meteor(py: Python<'_>, hypothesis: &str, references: References) -> PyResult<f64> {
    let scorer = meteor_scorer()?;
    let refs = references.texts();
    py.detach(|| scorer.score(hypothesis, &refs)).map_err(metrics_error)
}

fn nidf_table() -> PyResult<&'static IdfTable> {
    static TABLE: OnceLock<IdfTable> = OnceLock::new();
    once(&TABLE, || IdfTable::dailydialog().map_err(metrics_error))
}

/// The response's specificity, NIDF (See et al. 2019): the mean normalised IDF of its words over
/// the bundled DailyDialog train table, in [0, 1]; `None` for a text without a word.
#[pyfunction]
fn nidf(py: Python<'_>, text: &str) -> PyResult<Option<f64>> {
    let table = nidf_table()?;
    Ok(py.detach(|| table.nidf(text)))
}

/// A correlation as scipy.stats returns it: `statistic`, `pvalue` (and `n`, the pairs used);
/// unpacks as `(statistic, pvalue)`.
#[pyclass(frozen, module = "dialeval.stats", name = "SignificanceResult")]
struct SignificanceResult {
    #[pyo3(get)]
    statistic: f64,
    #[pyo3(get)]
    pvalue: f64,
    #[pyo3(get)]
    n: usize,
}

#[pymethods]
impl SignificanceResult {
    fn __repr__(&self) -> String {
        format!("SignificanceResult(statistic={}, pvalue={})", self.statistic, self.pvalue)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let tuple = (slf.statistic, slf.pvalue).into_pyobject(py)?;
        Ok(tuple.try_iter()?.into_any().unbind())
    }

    fn __len__(&self) -> usize {
        2
    }

    fn __getitem__(&self, index: isize) -> PyResult<f64> {
        match index {
            0 | -2 => Ok(self.statistic),
            1 | -1 => Ok(self.pvalue),
            _ => Err(pyo3::exceptions::PyIndexError::new_err("SignificanceResult has two items: statistic, pvalue")),
        }
    }
}

fn nan_policy(name: &str) -> PyResult<NanPolicy> {
    match name {
        "propagate" => Ok(NanPolicy::Propagate),
        "omit" => Ok(NanPolicy::Omit),
        "raise" => Ok(NanPolicy::Raise),
        other => Err(input_error(format!("nan_policy {other:?}: one of 'propagate', 'omit', 'raise'"))),
    }
}

fn correlation(py: Python<'_>, kind: CorrelationKind, x: &[f64], y: &[f64], options: CorrelationOptions) -> PyResult<SignificanceResult> {
    let c: Correlation = py.detach(|| correlate_with(kind, x, y, &options)).map_err(metrics_error)?;
    Ok(SignificanceResult { statistic: c.statistic, pvalue: c.pvalue, n: c.n })
}

/// `scipy.stats.pearsonr(x, y)`.
#[pyfunction]
#[pyo3(signature = (x, y, *, nan_policy = "propagate"))]
fn pearson(py: Python<'_>, x: Vec<f64>, y: Vec<f64>, nan_policy: &str) -> PyResult<SignificanceResult> {
    let options = CorrelationOptions { nan_policy: self::nan_policy(nan_policy)?, ..CorrelationOptions::default() };
    correlation(py, CorrelationKind::Pearson, &x, &y, options)
}

/// `scipy.stats.spearmanr(x, y, nan_policy=...)`.
#[pyfunction]
#[pyo3(signature = (x, y, *, nan_policy = "propagate"))]
fn spearman(py: Python<'_>, x: Vec<f64>, y: Vec<f64>, nan_policy: &str) -> PyResult<SignificanceResult> {
    let options = CorrelationOptions { nan_policy: self::nan_policy(nan_policy)?, ..CorrelationOptions::default() };
    correlation(py, CorrelationKind::Spearman, &x, &y, options)
}

/// `scipy.stats.kendalltau(x, y, nan_policy=..., method=...)` (tau-b).
#[pyfunction]
#[pyo3(signature = (x, y, *, nan_policy = "propagate", method = "auto"))]
fn kendall(py: Python<'_>, x: Vec<f64>, y: Vec<f64>, nan_policy: &str, method: &str) -> PyResult<SignificanceResult> {
    let kendall_method = match method {
        "auto" => KendallMethod::Auto,
        "exact" => KendallMethod::Exact,
        "asymptotic" => KendallMethod::Asymptotic,
        other => return Err(input_error(format!("method {other:?}: one of 'auto', 'exact', 'asymptotic'"))),
    };
    let options = CorrelationOptions { nan_policy: self::nan_policy(nan_policy)?, kendall_method };
    correlation(py, CorrelationKind::KendallTauB, &x, &y, options)
}

/// An AMR graph (penman's `Graph`): `top`, `triples` as `(source, role, target)` with the
/// role's leading colon (`target` is `None` for a missing concept), `metadata` as a dict.
#[pyclass(frozen, module = "dialeval.amr", name = "Graph")]
struct Graph {
    graph: AmrGraph,
}

#[pymethods]
impl Graph {
    /// A graph from triples, laid out depth-first from `top` (the first triple's source by
    /// default), as penman lays out a graph it did not read.
    #[new]
    #[pyo3(signature = (triples, top = None, metadata = None))]
    fn new(triples: Vec<(String, String, Option<String>)>, top: Option<String>, metadata: Option<Vec<(String, String)>>) -> PyResult<Self> {
        let top = top.or_else(|| triples.first().map(|t| t.0.clone())).ok_or_else(|| input_error("Graph: no triples and no top"))?;
        let triples: Vec<Triple> = triples.into_iter().map(|(s, r, t)| Triple { source: s.into(), role: r.into(), target: t.map(Into::into) }).collect();
        let mut meta = dialeval_amr_graph::penman::Metadata::new();
        for (k, v) in metadata.unwrap_or_default() {
            meta.insert(k, v);
        }
        Ok(Self { graph: AmrGraph::from_triples(&top, &triples, meta).map_err(amr_error)? })
    }

    #[getter]
    fn top(&self) -> &str {
        self.graph.top()
    }

    #[getter]
    fn triples(&self) -> Vec<(String, String, Option<String>)> {
        self.graph.triples().iter().map(|t| (t.source.to_string(), t.role.to_string(), t.target.as_ref().map(ToString::to_string))).collect()
    }

    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (k, v) in self.graph.metadata().iter() {
            dict.set_item(k, v)?;
        }
        Ok(dict)
    }

    fn __repr__(&self) -> String {
        format!("<Graph top={} triples={}>", self.graph.top(), self.graph.triples().len())
    }
}

/// `penman.decode(text)`: exactly one graph (comments may follow it).
#[pyfunction]
fn decode(py: Python<'_>, text: &str) -> PyResult<Graph> {
    py.detach(|| AmrGraph::decode(text)).map(|graph| Graph { graph }).map_err(amr_error)
}

/// Every graph of a multi-graph PENMAN text (`penman.iterdecode`), in order; the first
/// malformed block is an [`AmrError`] naming its line.
#[pyfunction]
fn decode_all(py: Python<'_>, text: &str) -> PyResult<Vec<Graph>> {
    py.detach(|| AmrGraph::decode_all(text).into_iter().collect::<Result<Vec<_>, _>>()).map(|graphs| graphs.into_iter().map(|graph| Graph { graph }).collect()).map_err(amr_error)
}

/// `penman.encode(graph)`: PENMAN with penman's default layout, the metadata comments first
/// (`metadata=False` leaves them out).
#[pyfunction]
#[pyo3(signature = (graph, *, metadata = true))]
fn encode(graph: PyRef<'_, Graph>, metadata: bool) -> String {
    if metadata { graph.graph.encode() } else { graph.graph.encode_graph_only() }
}

/// Smatch of two one-graph PENMAN strings as `(precision, recall, f1)` (smatch 1.0.4's
/// `-f test gold`, deterministic).
#[pyfunction]
fn smatch(py: Python<'_>, test: &str, gold: &str) -> PyResult<(f64, f64, f64)> {
    static SCORER: OnceLock<Smatch> = OnceLock::new();
    let scorer = once(&SCORER, || Smatch::new(SmatchConfig::default()).map_err(amr_error))?;
    let score = py.detach(|| scorer.score_str(test, gold)).map_err(amr_error)?;
    Ok((score.precision(), score.recall(), score.f1()))
}

#[pymodule]
fn _dialeval(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("DialevalError", py.get_type::<DialevalError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("AmrError", py.get_type::<AmrError>())?;
    m.add("ResourceError", py.get_type::<ResourceError>())?;
    m.add_class::<Score>()?;
    m.add_class::<SignificanceResult>()?;
    m.add_class::<Graph>()?;
    for f in [
        wrap_pyfunction!(sentence_bleu, m)?,
        wrap_pyfunction!(corpus_bleu, m)?,
        wrap_pyfunction!(rouge_l, m)?,
        wrap_pyfunction!(meteor, m)?,
        wrap_pyfunction!(nidf, m)?,
        wrap_pyfunction!(pearson, m)?,
        wrap_pyfunction!(spearman, m)?,
        wrap_pyfunction!(kendall, m)?,
        wrap_pyfunction!(decode, m)?,
        wrap_pyfunction!(decode_all, m)?,
        wrap_pyfunction!(encode, m)?,
        wrap_pyfunction!(smatch, m)?,
        wrap_pyfunction!(evaluate::evaluate, m)?,
        wrap_pyfunction!(evaluate::merge, m)?,
    ] {
        m.add_function(f)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
