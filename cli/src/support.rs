//! Flag plumbing shared by the commands (yes/no and serde-valued flags, exit codes, progress
//! bars); the data recipes they run live in the libraries (`dialeval_eval::models::mix`).

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

/// Runs a trainer job (`job` given the observer) with its progress shown: its lines prefixed by
/// `name`, a bar while the encoder fills its cache, then the bar `bar` over training, counted
/// in `unit`s (epoch, round).
///
/// # Errors
/// The job's.
pub fn with_training_progress<T>(name: &str, bar: &str, unit: &str, job: impl FnOnce(&dialeval_eval::models::training::TrainingObserver<'_>) -> dialeval_eval::Result<T>) -> dialeval_eval::Result<T> {
    let (encoding, training) = (Progress::new("embedding"), Progress::new(bar));
    let observer = dialeval_eval::models::training::TrainingObserver {
        say: &|line| eprintln!("{name}: {line}"),
        encoding: &|done, total| encoding.update(done, total),
        epochs: &|n, step, steps| {
            encoding.finish();
            training.update_in(unit, n, step, steps);
        },
    };
    let done = job(&observer);
    encoding.finish();
    training.finish();
    done
}

/// The DailyDialog pairs of the training mix for a `--dailydialog yes|no` value.
pub fn dailydialog_flag(value: YesNo) -> Option<dialeval_datasets::pairs::DailyDialogPairConfig> {
    value.yes().then(dialeval_datasets::pairs::DailyDialogPairConfig::default)
}

/// The Topical-Chat pairs of the training mix for a `--topical yes|no` value.
pub fn topical_flag(value: YesNo) -> Option<dialeval_datasets::pairs::TopicalPairConfig> {
    value.yes().then(dialeval_datasets::pairs::TopicalPairConfig::default)
}
