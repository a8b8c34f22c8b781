//! The main job in one place (features `slm` and `llm`): read a corpus, attach its graphs,
//! build every family of the toolkit (or record why one is skipped), score the corpus or one
//! shard of it chunk by chunk with the family caches, analyse, and write the report — or merge
//! the shards' folders into the whole corpus's report. Everything comes from one typed
//! [`MainJob`] value; the `dialeval evaluate` command, the Python package and the examples only
//! turn their flags or keywords into it and show its progress.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use dialeval_datasets::amr::{AmrIndex, Coverage};
use dialeval_datasets::{CorpusFormat, DialogueItem, Selection};
use dialeval_llm_prompt::prompt::{Templates, Variant};
use dialeval_llm_prompt::{CachedClient, JudgeConfig, OpenAiClient, OpenAiConfig, Scoring};

use crate::digest::FileDigest;
use crate::error::{Error, Result};
use crate::families::LlmFamily;
use crate::families::llm::LlmJudging;
use crate::lock::OutputLock;
use crate::models::{Built, FamilyName, JobFamilies, JobObserver, ModelBundle, ModelSettings, add_families};
use crate::shard::{CorpusPrint, Placement, SHARD_FILE, Shard, ShardScores, merge_placed};
use crate::{Event, FamilyCache, ItemSource, JsonlSource, Pipeline, Report, RunSettings, Scored};

/// The endpoint of the local LLM server (`scripts/llm_server.sh start`).
pub const LOCAL_LLM: &str = "http://127.0.0.1:8089/v1";

/// Which corpus the job reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusInput {
    /// Its format.
    pub format: CorpusFormat,
    /// Its file (GRADE: the release's `evaluation/` folder).
    pub path: PathBuf,
    /// GRADE: only the cells of this dataset.
    pub subset: Option<String>,
}

/// The LLM judge of the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmChoice {
    /// No judge: the family is skipped with this reason.
    None(String),
    /// This OpenAI-compatible endpoint and model.
    Endpoint {
        /// The server's base URL (`http://host:port/v1`).
        base_url: String,
        /// The model it is asked for.
        model: String,
    },
    /// The local server ([`LOCAL_LLM`]) when it answers, else skipped with this reason.
    LocalIfReachable {
        /// The model it is asked for.
        model: String,
        /// Why the family is skipped when the server does not answer.
        otherwise: String,
    },
}

/// Where the graphs of the utterances no AMR file covers come from (run only in a build with
/// the feature `amr-parse`; otherwise choosing one is an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AmrParserChoice {
    /// The LLM endpoint of the job ([`LlmChoice`]; the local server when it names none).
    Llm,
    /// An external parser command over the line protocol of `dialeval-amr-parse`.
    Command(String),
}

/// The main job's settings: what a front end's flags or keywords become.
#[derive(Debug, Clone)]
pub struct MainJob {
    /// The corpus.
    pub corpus: CorpusInput,
    /// The report folder (locked for the run: one run per folder).
    pub out: PathBuf,
    /// PENMAN files whose graphs are attached to the utterances by sentence text.
    pub amr: Vec<PathBuf>,
    /// Whether a malformed AMR block is an error (otherwise it is skipped and named).
    pub strict_amr: bool,
    /// Graphs for the utterances the AMR files do not cover.
    pub amr_parser: Option<AmrParserChoice>,
    /// Families left out, and why, as the front end names the setting (`--skip`, `skip=`).
    pub skip: Vec<FamilyName>,
    /// The reason recorded for the families left out.
    pub skip_reason: String,
    /// The encoder and checkpoints of the learned families.
    pub models: ModelSettings,
    /// Chunk size, bootstrap resamples, confidence and seed.
    pub run: RunSettings,
    /// The LLM judge.
    pub llm: LlmChoice,
    /// Score only this shard of the corpus (and write its `shard.json` for the merge).
    pub shard: Option<Shard>,
}

/// How a [`MainJob`] shows its progress.
pub struct MainJobObserver<'a> {
    /// The pipeline's events (families started, chunks, progress, notes, analysis).
    pub event: &'a (dyn Fn(Event<'_>) + Sync),
    /// Where a checkpoint comes from, and a training run's progress.
    pub models: JobObserver<'a>,
    /// A line for people (items read, AMR coverage, shard sizes, skipped AMR blocks).
    pub say: &'a dyn Fn(&str),
}

impl MainJobObserver<'_> {
    /// Shows nothing.
    pub const SILENT: MainJobObserver<'static> = MainJobObserver { event: &|_| {}, models: JobObserver::SILENT, say: &|_| {} };
}

/// What a [`MainJob`] produced (its report is also written to [`MainJob::out`]).
pub struct MainJobOutput {
    /// The report.
    pub report: Report,
    /// What the job noted about its inputs (AMR blocks skipped, graphs that could not be
    /// parsed), each also said to the observer.
    pub notes: Vec<String>,
}

/// What [`MainJob::score_shard`] produced (also written to `out/shard.json`).
pub struct MainJobShard {
    /// The shard's scores.
    pub scores: ShardScores,
    /// What the job noted about its inputs, each also said to the observer.
    pub notes: Vec<String>,
}

/// The corpus as read: whole (the formats other than JSONL, or JSONL when every item must be
/// seen first), or streamed from its JSONL file a chunk at a time.
enum Items {
    Loaded { all: Vec<DialogueItem>, part: Vec<DialogueItem> },
    Streamed,
}

impl MainJob {
    /// The job over `corpus` into `out` with the defaults: no AMR files, every family, the
    /// models of [`ModelSettings::default`] (the default encoder, the shipped checkpoints of a
    /// clone's `models/`), the default run settings, no LLM judge, the whole corpus.
    pub fn new(corpus: CorpusInput, out: PathBuf) -> Self {
        Self {
            corpus,
            amr: Vec::new(),
            strict_amr: false,
            amr_parser: None,
            skip: Vec::new(),
            skip_reason: "left out".into(),
            models: ModelSettings { out: out.clone(), ..ModelSettings::default() },
            out,
            run: RunSettings::default(),
            llm: LlmChoice::None("no LLM configured".into()),
            shard: None,
        }
    }

    /// Scores the corpus (or its shard), analyses and writes the report into `out`; with a
    /// shard, also its `shard.json` for [`MainJob::merge`].
    ///
    /// # Errors
    /// A setting out of range (before anything is read), a folder in use by another run,
    /// unreadable inputs, a family that cannot be built, [`Error::Interrupted`].
    pub fn run(&self, observe: &MainJobObserver<'_>) -> Result<MainJobOutput> {
        // Checked before anything is read or locked (the same errors from every front end).
        self.run.check()?;
        let config = self.run.report_config()?;
        let _lock = self.lock(observe)?;
        let (scored, notes, shard_scores) = self.score(observe)?;
        let report = Report::analyse(scored, &config, observe.event)?;
        report.write(&self.out)?;
        if let Some(scores) = shard_scores {
            self.keep_shard(&scores, observe)?;
        }
        Ok(MainJobOutput { report, notes })
    }

    /// Scores the job's shard and writes only its `shard.json` into `out` (and the family
    /// caches), without analysing it or writing a report: the task of a scheduler (Ray, a Slurm
    /// job array) whose shards only [`MainJob::merge`] reads. The scores are those
    /// [`MainJob::run`] keeps for the shard.
    ///
    /// # Errors
    /// [`Error::Config`] when the job has no shard; as [`MainJob::run`].
    pub fn score_shard(&self, observe: &MainJobObserver<'_>) -> Result<MainJobShard> {
        let Some(shard) = self.shard else {
            return Err(Error::Config("scoring a shard needs the job's shard (k/n)".into()));
        };
        self.run.check()?;
        let _lock = self.lock(observe)?;
        let (_, notes, scores) = self.score(observe)?;
        let scores = scores.ok_or_else(|| Error::Config(format!("shard {shard}: scored without its placement")))?;
        self.keep_shard(&scores, observe)?;
        Ok(MainJobShard { scores, notes })
    }

    fn keep_shard(&self, scores: &ShardScores, observe: &MainJobObserver<'_>) -> Result<()> {
        scores.write(&self.out)?;
        (observe.say)(&format!("shard {}: {} items; scores for the merge in {}", scores.shard, scores.ids.len(), self.out.join(SHARD_FILE).display()));
        Ok(())
    }

    /// The corpus (or its shard) scored by every family, the notes on the inputs, and for a
    /// shard, what [`MainJob::merge`] reads of it: its scores and its items' placement in the
    /// corpus file.
    fn score(&self, observe: &MainJobObserver<'_>) -> Result<(Scored, Vec<String>, Option<ShardScores>)> {
        // A shard names the corpus file it was cut from by its bytes (before it is read: a
        // corpus that is not a regular file is refused first).
        let placing = match self.shard {
            Some(_) => Some(Arc::new(Mutex::new(Placement::new(CorpusPrint { format: self.corpus.format, sha256: self.shard_corpus_sha256()?, items: 0 }, amr_sha256(&self.amr)?)))),
            None => None,
        };
        let (items, amr, amr_files, coverage, notes) = self.read(observe)?;
        let source = self.source(&items, &amr, &coverage, self.shard.zip(placing.clone()))?;
        let mut pipeline = Pipeline::new().with_cache(FamilyCache::open(&self.out.join("metrics"))?);
        let bundle = ModelBundle::load(self.models.clone())?;
        let families = JobFamilies { skip: &self.skip, skip_reason: &self.skip_reason, amr: &amr, amr_files: &amr_files, references: self.models.references, llm: self.llm_family()? };
        add_families(&mut pipeline, &bundle, families, &observe.models)?;
        let scored = pipeline.run_source(source.as_ref(), self.run.chunk, observe.event)?;
        let c = *coverage.lock().unwrap_or_else(PoisonError::into_inner);
        (observe.say)(&format!("AMR for {} of {} utterances", c.with_amr, c.turns));
        let shard_scores = match (self.shard, placing) {
            (Some(shard), Some(placing)) => {
                let mut placed = placing.lock().unwrap_or_else(PoisonError::into_inner);
                let emptied = Placement::new(placed.corpus.clone(), Vec::new());
                let placement = std::mem::replace(&mut *placed, emptied);
                Some(ShardScores::of_scored(shard, &scored)?.placed(placement)?)
            }
            _ => None,
        };
        Ok((scored, notes, shard_scores))
    }

    /// The sha256 of the corpus file a shard is cut from, which every shard and the merge must
    /// agree on.
    ///
    /// # Errors
    /// [`Error::Config`] when the corpus is not a regular file (a folder, a pipe: the merge
    /// could not check the shards against it); [`Error::Io`].
    fn shard_corpus_sha256(&self) -> Result<String> {
        let path = &self.corpus.path;
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if !meta.is_file() {
            let kind = if meta.is_dir() { "a folder" } else { "not a regular file (a pipe?)" };
            return Err(Error::Config(format!("{} is {kind}: a shard is cut from one corpus file, which the merge checks every shard against (score a folder or a stream whole)", path.display())));
        }
        Ok(FileDigest::of(path)?.sha256)
    }

    /// The report of the whole corpus from its shards' folders (each scored by [`MainJob::run`]
    /// with a shard of `shards.len()`): byte for byte the files of one run, but the seconds.
    ///
    /// # Errors
    /// A shard missing, of another corpus or other settings, or unreadable; as
    /// [`MainJob::run`].
    pub fn merge(&self, shards: &[PathBuf], observe: &MainJobObserver<'_>) -> Result<MainJobOutput> {
        if self.shard.is_some() {
            return Err(Error::Config("a merge takes the shards' folders; a shard is for scoring one".into()));
        }
        let config = self.run.report_config()?;
        let _lock = self.lock(observe)?;
        let shards: Vec<ShardScores> = shards.iter().map(|d| ShardScores::read(d)).collect::<Result<_>>()?;
        // The shards carry their items' places, rows and ratings: the corpus is not read again,
        // only its bytes are checked against the shards' (and the AMR files').
        let corpus = FileDigest::of(&self.corpus.path)?.sha256;
        let merged = merge_placed(self.corpus.format, &corpus, &amr_sha256(&self.amr)?, &shards)?;
        (observe.say)(&format!("merged {} shards into {} items × {} metrics", shards.len(), merged.table.items(), merged.table.columns().len()));
        let report = Report::analyse_merged(merged, &config, observe.event)?;
        report.write(&self.out)?;
        Ok(MainJobOutput { report, notes: Vec::new() })
    }

    fn lock(&self, observe: &MainJobObserver<'_>) -> Result<OutputLock> {
        // One run per output folder: a second run into the same folder stops here.
        let lock = OutputLock::acquire(&self.out)?;
        if let Some(owner) = lock.stale_owner() {
            (observe.say)(&format!("{} was left by a run that did not finish ({owner}); taken over", lock.path().display()));
        }
        Ok(lock)
    }

    /// The corpus (loaded, or to be streamed), its graphs, the AMR files they came from, the
    /// coverage so far and the notes on the inputs.
    #[allow(clippy::type_complexity)] // one private step's results, named at the call
    fn read(&self, observe: &MainJobObserver<'_>) -> Result<(Items, Arc<AmrIndex>, Vec<PathBuf>, Arc<Mutex<Coverage>>, Vec<String>)> {
        let mut notes = Vec::new();
        // JSONL is read as a stream, a chunk at a time (graphs attached and the shard picked as
        // it is read); the other corpora are one JSON document each and are loaded whole.
        // Parsing the utterances that lack a graph needs them all first, so a parser loads
        // JSONL whole too.
        let stream = self.corpus.format.streams() && self.amr_parser.is_none();
        let mut all = if stream { Vec::new() } else { self.load(observe)? };
        let mut amr_files = self.amr.clone();
        if let Some(choice) = &self.amr_parser {
            let (file, failures) = self.parse_missing(choice, &all, &amr_files, observe)?;
            amr_files.push(file);
            notes.extend(failures);
        }
        let amr = Arc::new(if self.strict_amr { AmrIndex::load(&amr_files)? } else { AmrIndex::load_lenient(&amr_files)? });
        for bad in &amr.malformed {
            let note = format!("AMR block skipped: {bad}{}", if self.strict_amr { "" } else { " (strict AMR reading makes this an error)" });
            (observe.say)(&note);
            notes.push(note);
        }
        let coverage = Arc::new(Mutex::new(Coverage::default()));
        let items = if stream {
            Items::Streamed
        } else {
            *coverage.lock().unwrap_or_else(PoisonError::into_inner) = amr.attach(&mut all);
            (observe.say)(&format!("{} items of {}", all.len(), self.corpus.format));
            let part = self.shard.map_or_else(Vec::new, |shard| shard.select(&all));
            if let Some(shard) = self.shard {
                (observe.say)(&format!("shard {shard}: {} of the {} items", part.len(), all.len()));
            }
            Items::Loaded { all, part }
        };
        Ok((items, amr, amr_files, coverage, notes))
    }

    fn load(&self, observe: &MainJobObserver<'_>) -> Result<Vec<DialogueItem>> {
        let loaded = self.corpus.format.load(&self.corpus.path, &Selection { dataset: self.corpus.subset.clone(), model: None })?;
        for (cell, n) in &loaded.cells {
            (observe.say)(&format!("GRADE {}/{}: {n} items", cell.dataset, cell.model));
        }
        Ok(loaded.items)
    }

    /// The items scored: the shard's or all, from memory or streamed (the shard's items picked
    /// by id before they are parsed, and graphs attached, as they are read). A shard's items
    /// are also placed in `placing` as they are read: their positions among the corpus's
    /// items, their ratings, and the number of items the corpus has.
    fn source<'s>(&self, items: &'s Items, amr: &Arc<AmrIndex>, coverage: &Arc<Mutex<Coverage>>, shard: Option<(Shard, Arc<Mutex<Placement>>)>) -> Result<Box<dyn ItemSource + 's>> {
        if let Items::Loaded { all, part } = items {
            let Some((shard, placing)) = shard else { return Ok(Box::new(all.as_slice())) };
            let mut p = placing.lock().unwrap_or_else(PoisonError::into_inner);
            p.corpus.items = all.len();
            p.positions = all.iter().enumerate().filter(|(_, i)| shard.contains(&i.id)).map(|(k, _)| k).collect();
            p.add(part);
            return Ok(Box::new(part.as_slice()));
        }
        let (amr, coverage) = (Arc::clone(amr), Arc::clone(coverage));
        let placed = shard.as_ref().map(|(_, placing)| Arc::clone(placing));
        let jsonl = JsonlSource::new(&self.corpus.path).prepare(move |chunk| {
            let found = amr.attach(chunk);
            let mut c = coverage.lock().unwrap_or_else(PoisonError::into_inner);
            c.turns += found.turns;
            c.with_amr += found.with_amr;
            if let Some(placed) = &placed {
                placed.lock().unwrap_or_else(PoisonError::into_inner).add(chunk);
            }
            Ok(())
        });
        Ok(Box::new(match shard {
            // Only the shard's items are parsed in full; the others are passed over by id (and
            // counted: `keep_ids` asks once per item, in order).
            Some((shard, placing)) => jsonl.keep_ids(move |id| {
                let kept = shard.contains(id);
                let mut p = placing.lock().unwrap_or_else(PoisonError::into_inner);
                let position = p.corpus.items;
                p.corpus.items += 1;
                if kept {
                    p.positions.push(position);
                }
                kept
            }),
            None => jsonl.counted()?,
        }))
    }

    /// The LLM judge's family, or why it is skipped.
    fn llm_family(&self) -> Result<Built<LlmFamily<CachedClient<OpenAiClient>>>> {
        let (base_url, model) = match &self.llm {
            LlmChoice::None(why) => return Ok(Built::Skipped(why.clone())),
            LlmChoice::Endpoint { base_url, model } => (base_url.clone(), model.clone()),
            LlmChoice::LocalIfReachable { model, otherwise } => {
                if !reachable(LOCAL_LLM) {
                    return Ok(Built::Skipped(otherwise.clone()));
                }
                (LOCAL_LLM.to_owned(), model.clone())
            }
        };
        let client = self.llm_client(&base_url, "llm")?;
        let judge = JudgeConfig { model, ..JudgeConfig::default() };
        Ok(Built::Ready(LlmFamily::new(client, LlmJudging { endpoint: base_url, templates: Templates::builtin()?, judge, variant: Variant::NoSlm, scoring: Scoring::Parse })))
    }

    /// A client of the OpenAI-compatible endpoint at `base_url` (five minutes per request), its
    /// answers cached in `out/cache/<cache>`.
    fn llm_client(&self, base_url: &str, cache: &str) -> Result<CachedClient<OpenAiClient>> {
        let http = OpenAiClient::new(OpenAiConfig { base_url: base_url.to_owned(), timeout: Duration::from_secs(300), ..OpenAiConfig::default() })?;
        Ok(CachedClient::new(http, self.out.join("cache").join(cache))?)
    }

    /// The parser's graphs for the utterances no AMR file covers: its file
    /// (`OUT/amr/parsed-<parser>.amr.txt`) and a note per utterance left without a graph.
    #[cfg(feature = "amr-parse")]
    fn parse_missing(&self, choice: &AmrParserChoice, items: &[DialogueItem], files: &[PathBuf], observe: &MainJobObserver<'_>) -> Result<(PathBuf, Vec<String>)> {
        use dialeval_amr_parse::{AmrParser, CommandAmrParser, LlmAmrParser, LlmParserConfig};
        let parse_error = |e: dialeval_amr_parse::Error| Error::Config(format!("AMR parser: {e}"));
        let parser: Box<dyn AmrParser> = match choice {
            AmrParserChoice::Command(cmd) => Box::new(CommandAmrParser::from_command_line(cmd).map_err(parse_error)?),
            AmrParserChoice::Llm => {
                let (base_url, model) = match &self.llm {
                    LlmChoice::Endpoint { base_url, model } => (base_url.clone(), model.clone()),
                    LlmChoice::LocalIfReachable { model, .. } => (LOCAL_LLM.to_owned(), model.clone()),
                    LlmChoice::None(_) => (LOCAL_LLM.to_owned(), JudgeConfig::default().model),
                };
                let client = self.llm_client(&base_url, "amr-llm")?;
                Box::new(LlmAmrParser::new(client, LlmParserConfig { model, ..LlmParserConfig::default() }).map_err(parse_error)?)
            }
        };
        let dir = self.out.join("amr");
        let family = "AMR parsing";
        let started = std::time::Instant::now();
        (observe.event)(Event::Started { family });
        let done = crate::parse::ParseStore::new(parser.as_ref(), &dir).parse_missing(items, files, &|done, total| (observe.event)(Event::Progress { family, done, total }))?;
        (observe.event)(Event::Finished { family, seconds: started.elapsed().as_secs_f64() });
        let failures: Vec<String> = done.failures.iter().map(|(text, why)| format!("no graph for {text:?}: {why}")).collect();
        for f in &failures {
            (observe.say)(f);
        }
        (observe.say)(&format!("AMR parsing ({}): {:?}", parser.name(), done.stats));
        Ok((done.file, failures))
    }

    #[cfg(not(feature = "amr-parse"))]
    fn parse_missing(&self, _: &AmrParserChoice, _: &[DialogueItem], _: &[PathBuf], _: &MainJobObserver<'_>) -> Result<(PathBuf, Vec<String>)> {
        Err(Error::Config("AMR parsing needs dialeval-eval's feature amr-parse (the `dialeval` command has it)".into()))
    }
}

/// Whether a TCP connection to `url`'s host and port opens within two seconds.
pub fn reachable(url: &str) -> bool {
    use std::net::ToSocketAddrs;
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host_port = rest.split('/').next().unwrap_or(rest);
    let host_port = if host_port.contains(':') { host_port.to_owned() } else { format!("{host_port}:80") };
    host_port.to_socket_addrs().ok().and_then(|mut a| a.next()).is_some_and(|addr| std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok())
}

/// The default corpus of a clone's `data/` folder for `format` (the bundled USR-PersonaChat),
/// when the format has one.
pub fn bundled_corpus(format: CorpusFormat, data: &Path) -> Option<PathBuf> {
    (format == CorpusFormat::Usr).then(|| data.join("usr-personachat/pc_usr_data.json"))
}

/// The default AMR files of a clone's `data/` folder for `format` (the silver AMR of the
/// bundled USR-PersonaChat), when the format has them.
pub fn bundled_amr(format: CorpusFormat, data: &Path) -> Vec<PathBuf> {
    if format == CorpusFormat::Usr { vec![data.join("silver-amr/usr-personachat.silver.amr.txt")] } else { Vec::new() }
}

/// The sha256 of each AMR file in `files`, in order.
///
/// # Errors
/// [`Error::Io`] when one cannot be read.
fn amr_sha256(files: &[PathBuf]) -> Result<Vec<String>> {
    files.iter().map(|f| FileDigest::of(f).map(|d| d.sha256)).collect()
}
