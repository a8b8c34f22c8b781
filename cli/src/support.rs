//! Helpers shared by the example programs (`[[example]]` targets of this package).

use std::process::ExitCode;

/// A `yes`/`no` option value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum YesNo {
    /// Yes.
    Yes,
    /// No.
    No,
}

impl YesNo {
    /// Whether it is `yes`.
    pub fn yes(self) -> bool {
        self == Self::Yes
    }
}

/// A clap value parser for the serde enums of the library crates (`gated`, `text_only`, …).
///
/// # Errors
/// A value the type does not name.
pub fn serde_value<T: serde::de::DeserializeOwned>(value: &str) -> Result<T, String> {
    serde_json::from_value(serde_json::Value::String(value.to_owned())).map_err(|e| format!("{value:?}: {e}"))
}

/// The exit status of a program's `run`: success, or the error on stderr prefixed by `name`.
pub fn finish(name: &str, result: Result<(), Box<dyn std::error::Error>>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Progress of a long step on stderr: a bar on a terminal; elsewhere (CI logs, redirected
/// output) a plain line at most every 30 s and when a count completes.
pub struct Progress {
    bar: indicatif::ProgressBar,
    what: String,
    plain: Option<std::sync::Mutex<std::time::Instant>>,
}

impl Progress {
    /// A bar labelled `what`.
    pub fn new(what: &str) -> Self {
        let bar = indicatif::ProgressBar::new(0);
        let style = indicatif::ProgressStyle::with_template(&format!("{what} {{msg}} {{bar:40}} {{pos}}/{{len}}, eta {{eta}}")).unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
        bar.set_style(style);
        let plain = (!std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| std::sync::Mutex::new(std::time::Instant::now()));
        Self { bar, what: what.to_owned(), plain }
    }

    /// `done` of `total`.
    pub fn update(&self, done: usize, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
        self.log_line(done, total);
    }

    /// Step `step` of `steps` in epoch `epoch`.
    pub fn update_epoch(&self, epoch: usize, step: usize, steps: usize) {
        self.update_in("epoch", epoch, step, steps);
    }

    /// Step `step` of `steps` in the `unit` numbered `n` (`round 3`).
    pub fn update_in(&self, unit: &str, n: usize, step: usize, steps: usize) {
        self.bar.set_message(format!("{unit} {n}"));
        self.update(step, steps);
    }

    fn log_line(&self, done: usize, total: usize) {
        let Some(last) = &self.plain else { return };
        let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if done == total || last.elapsed().as_secs() >= 30 {
            *last = std::time::Instant::now();
            let msg = self.bar.message();
            let elapsed = self.bar.elapsed().as_secs();
            eprintln!("{} {msg}{}{done}/{total} ({elapsed} s)", self.what, if msg.is_empty() { "" } else { ": " });
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The token-state cache of `encoder` in `~/.cache/dialeval/embeddings` (see
/// [`dialeval_eval::models::encoder_cache`]).
///
/// # Errors
/// The cache cannot be created or read.
pub fn embedding_cache(encoder: &dialeval_slm_model::bert::PretrainedEncoder) -> Result<dialeval_slm_model::vectors::EmbeddingCache, Box<dyn std::error::Error>> {
    Ok(dialeval_eval::models::encoder_cache(encoder, &dialeval_eval::models::default_cache_dir())?)
}

/// Whether something listens at the host and port of `url` (`http://host:port/...`).
pub fn reachable(url: &str) -> bool {
    use std::net::ToSocketAddrs;
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host_port = rest.split('/').next().unwrap_or(rest);
    let host_port = if host_port.contains(':') { host_port.to_owned() } else { format!("{host_port}:80") };
    host_port.to_socket_addrs().ok().and_then(|mut a| a.next()).is_some_and(|addr| std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(2)).is_ok())
}

/// The training mix of the reference-free scorers from `shared` (`data/dailydialog-plusplus`,
/// `data/topical-chat`, `data/dailydialog` when the config asks for it, and the test split of `data/silver-amr/dailydialog-plusplus-test100`),
/// with every silver graph of `data/silver-amr` attached by sentence text.
///
/// # Errors
/// A file that cannot be read.
pub fn training_mix(shared: &std::path::Path, config: &dialeval_datasets::mix::MixConfig, topical_test_ids: &[String]) -> Result<dialeval_datasets::mix::Mix, Box<dyn std::error::Error>> {
    use dialeval_datasets::mix::{MixSources, build_mix};
    let data = shared.join("data");
    let test_ids = dialeval_datasets::ddpp::context_ids(&data.join("silver-amr/dailydialog-plusplus-test100.context-ids.json"))?;
    let sources = MixSources {
        ddpp_dir: &data.join("dailydialog-plusplus"),
        topical_dir: Some(&data.join("topical-chat")),
        dailydialog_dir: Some(&data.join("dailydialog")),
        test_ids: &test_ids,
        topical_test_ids,
    };
    let mut mix = build_mix(&sources, config)?;
    if config.dailydialog.is_some() {
        let [listed, repeated, sharing] = mix.dailydialog_dropped;
        eprintln!("mix: DailyDialog: dropped {listed} dialogues listed as touching its test split, {repeated} repeats, {sharing} sharing an utterance with the test split");
    }
    let mut silver: Vec<std::path::PathBuf> =
        std::fs::read_dir(data.join("silver-amr"))?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_string_lossy().ends_with(".silver.amr.txt")).collect();
    silver.sort();
    let index = dialeval_datasets::amr::AmrIndex::load(&silver)?;
    for (name, pairs) in [("train", &mut mix.train), ("dev", &mut mix.dev), ("test", &mut mix.test), ("Topical-Chat test", &mut mix.topical_test)] {
        if pairs.is_empty() {
            continue;
        }
        let coverage = index.attach_pairs(pairs);
        let length = dialeval_datasets::pairs::length_separation(pairs).unwrap_or(f64::NAN);
        eprintln!("mix: {name}: {} pairs, silver graphs for {} of {} turns and responses, length-only AUC {length:.3}", pairs.len(), coverage.with_amr, coverage.turns);
        eprintln!("mix: {name}: graphs per pair: {}", dialeval_datasets::amr::GraphPresenceTable::of(pairs));
    }
    Ok(mix)
}

/// The Topical-Chat conversations with silver AMR held out as a larger-graph test split: every
/// second one of `data/silver-amr/topical-chat-valid-rare.conversation-ids.json` (23 of 46, in
/// file order).
///
/// # Errors
/// The file cannot be read or is not a JSON list of strings.
pub fn graph_test_conversations(shared: &std::path::Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let path = shared.join("data/silver-amr/topical-chat-valid-rare.conversation-ids.json");
    let ids: Vec<String> = serde_json::from_str(&std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(ids.into_iter().skip(1).step_by(2).collect())
}

/// The DailyDialog pairs of the training mix for a `--dailydialog yes|no` value.
pub fn dailydialog_flag(value: YesNo) -> Option<dialeval_datasets::pairs::DailyDialogPairConfig> {
    value.yes().then(dialeval_datasets::pairs::DailyDialogPairConfig::default)
}

/// The Topical-Chat pairs of the training mix for a `--topical yes|no` value.
pub fn topical_flag(value: YesNo) -> Option<dialeval_datasets::pairs::TopicalPairConfig> {
    value.yes().then(dialeval_datasets::pairs::TopicalPairConfig::default)
}

/// The human qualities of `items` ([`dialeval_eval::HumanScores::of`]) as the columns
/// [`dialeval_metrics::report::CorrelationReport::build`] takes: NaN where an item has no rating
/// (which the correlations leave out or propagate, as their NaN policy says).
pub fn human_criteria(items: &[dialeval_datasets::DialogueItem]) -> Vec<(String, Vec<f64>)> {
    dialeval_eval::HumanScores::of(items).qualities.into_iter().map(|(q, v)| (q.name().to_owned(), v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect())).collect()
}

/// Writes the data settings to `out/data.json`, or, when a run there has recorded its own, checks
/// they are the same: a resumed run must train on the data it started on.
pub fn record_data_settings(out: &std::path::Path, settings: &serde_json::Value) -> Result<(), Box<dyn std::error::Error>> {
    let path = out.join("data.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let recorded: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            if &recorded != settings {
                return Err(format!("{} records other data settings than these ({recorded} against {settings}): resume with the same flags or give another --out", path.display()).into());
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(out)?;
            std::fs::write(&path, serde_json::to_string_pretty(settings)?)?;
            Ok(())
        }
        Err(e) => Err(format!("{}: {e}", path.display()).into()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_resumed_run_must_keep_its_data_settings() {
        let out = std::env::temp_dir().join(format!("dialeval-data-settings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let settings = json!({"data": "mix", "retrieved_negatives": {"lexical_share": 0.5}});
        record_data_settings(&out, &settings).unwrap();
        record_data_settings(&out, &settings).unwrap();
        let other = json!({"data": "mix", "retrieved_negatives": {"lexical_share": 0.0}});
        let err = record_data_settings(&out, &other).unwrap_err().to_string();
        assert!(err.contains("data.json") && err.contains("another --out"), "{err}");
        std::fs::write(out.join("data.json"), "not json").unwrap();
        assert!(record_data_settings(&out, &settings).is_err());
        let _ = std::fs::remove_dir_all(&out);
    }
}
