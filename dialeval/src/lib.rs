//! # dialeval
//!
//! Automatic evaluation of open-domain dialogue responses, and how well each score agrees with
//! human judgment. This crate is the one dependency a user needs: it re-exports the dialeval
//! crates under features, like burn's `burn` facade.
//!
//! | module | crate | feature (default) |
//! |---|---|---|
//! | [`common`] | `dialeval-common`: embedder traits, `Criterion` | always |
//! | `amr` | `dialeval-amr-graph`: PENMAN, AMR graphs, Smatch | `amr` (yes) |
//! | `metrics` | `dialeval-metrics`: BLEU, ROUGE, METEOR, embedding metrics, correlations | `metrics` (yes) |
//! | `datasets` | `dialeval-datasets`: USR, FED, DailyDialog++, Topical-Chat, GRADE, JSONL | `datasets` (yes) |
//! | `llm` | `dialeval-llm-prompt`: judge prompts, OpenAI-compatible client | `llm` (yes) |
//! | `eval` | `dialeval-eval`: the pipeline (families, cache, analysis, writers) | `eval` (yes), `plots` |
//! | `slm` | `dialeval-slm-model`: the AMR-gated SLM, BERT-RUBER, MiniLM on burn | `slm`, `wgpu` |
//!
//! ```toml
//! [dependencies]
//! # Not on crates.io yet: a path (or git) dependency on a checkout.
//! dialeval = { path = "../dialeval/dialeval" }                       # metrics, AMR, datasets, LLM judge, pipeline
//! # dialeval = { path = "../dialeval/dialeval", features = ["slm"] }  # + the learned scorers on burn (CPU)
//! # dialeval = { path = "../dialeval/dialeval", features = ["wgpu"] } # + GPUs through wgpu (`--device wgpu`)
//! ```
//!
//! ## Score a response against references
//!
//! ```
//! # #[cfg(feature = "metrics")] {
//! use dialeval::metrics::text::bleu::{Bleu, BleuConfig};
//! use dialeval::metrics::text::rouge::{Rouge, Stemming};
//!
//! let bleu = Bleu::new(BleuConfig::sentence())?;
//! let refs = ["i have two cats at home", "yes , two cats"];
//! let b = bleu.sentence("i have two cats", &refs)?.score;
//! let r = Rouge::new(Stemming::Porter).score_multi("i have two cats", &refs)?.rouge_l.fmeasure;
//! assert!(b > 0.0 && r > 0.5);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Compare two AMR graphs (Smatch)
//!
//! ```
//! # #[cfg(feature = "amr")] {
//! use dialeval::amr::smatch::{Smatch, SmatchConfig};
//!
//! let smatch = Smatch::new(SmatchConfig::default())?;
//! let score = smatch.score_str("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))", "(w / want-01 :ARG0 (b / boy))")?;
//! assert!(score.f1() > 0.5 && score.f1() < 1.0);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Check a metric against human ratings
//!
//! ```
//! # #[cfg(feature = "metrics")] {
//! use dialeval::metrics::correlation::{pearson, spearman};
//!
//! let metric = [0.1, 0.4, 0.35, 0.8, 0.7, 0.2];
//! let human = [1.0, 3.0, 2.0, 5.0, 4.0, 2.0];
//! let rho = spearman(&metric, &human)?;
//! println!("Spearman {:.3} (p = {:.3}, n = {}), Pearson {:.3}", rho.statistic, rho.pvalue, rho.n, pearson(&metric, &human)?.statistic);
//! assert!(rho.statistic > 0.9);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Evaluate a corpus with the pipeline
//!
//! A JSONL corpus (the generic format of `dialeval::datasets::jsonl`) scored by the length
//! baseline and the lexical family, cached, correlated with its ratings and written as a
//! report:
//!
//! ```
//! # #[cfg(feature = "eval")] {
//! use dialeval::eval::families::{LengthFamily, LexicalFamily};
//! use dialeval::eval::Evaluation;
//!
//! let dir = std::env::temp_dir().join(format!("dialeval-facade-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let lines: Vec<String> = [("i like cats", 3), ("cats are great pets i think", 4), ("no", 1), ("i have two cats at home", 5), ("the weather", 2)]
//!     .iter()
//!     .enumerate()
//!     .map(|(i, (r, o))| format!(r#"{{"id": "{i}", "context": ["do you have pets?"], "response": "{r}", "references": ["yes , i have two cats"], "ratings": {{"overall": [{o}]}}}}"#))
//!     .collect();
//! std::fs::write(dir.join("items.jsonl"), lines.join("\n"))?;
//! let items = dialeval::datasets::jsonl::load(&dir.join("items.jsonl"))?;
//!
//! let config = dialeval::metrics::report::ReportConfig { bootstrap: None, ..Default::default() };
//! let report = Evaluation::of(&items)
//!     .family(LengthFamily)
//!     .family(LexicalFamily::new()?)
//!     .cache(&dir.join("metrics"))?
//!     .analysis(config)
//!     .run()?;
//! let best = report.analysis.best(dialeval::common::Criterion::Overall).ok_or("no best metric")?;
//! println!("best metric for Overall: {}", best.as_str());
//! report.write(&dir.join("report"))?;
//! assert!(dir.join("report/correlations.json").is_file());
//! # std::fs::remove_dir_all(&dir)?;
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

//!
//! ## AMR for the text no file covers (feature `amr-parse`)
//!
//! An external parser over the line protocol, or an LLM endpoint; each parser's identity keys
//! the store its graphs go to (`dialeval::eval::parse::ParseStore`).
//!
//! ```
//! # #[cfg(feature = "amr-parse")] {
//! use dialeval::amr_parse::{AmrParser, CommandAmrParser};
//!
//! let parser = CommandAmrParser::from_command_line("python3 my_parser.py --model spring")?;
//! assert_eq!(parser.identity(), "command python3 my_parser.py --model spring");
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use dialeval_common as common;

#[cfg(feature = "amr")]
pub use dialeval_amr_graph as amr;
#[cfg(feature = "amr-parse")]
pub use dialeval_amr_parse as amr_parse;
#[cfg(feature = "datasets")]
pub use dialeval_datasets as datasets;
#[cfg(feature = "eval")]
pub use dialeval_eval as eval;
#[cfg(feature = "llm")]
pub use dialeval_llm_prompt as llm;
#[cfg(feature = "metrics")]
pub use dialeval_metrics as metrics;
#[cfg(feature = "slm")]
pub use dialeval_slm_model as slm;
