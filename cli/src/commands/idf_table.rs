//! Writes the document-frequency table of NIDF (`dialeval_metrics::specificity`) from the
//! DailyDialog train split: every utterance of the dialogues `load_split` keeps (without those of
//! `overlap_with_test.tsv`, which touch the official test split, and repeats) is one document.
//! The table the crate bundles (`metrics/data/dailydialog-train.df.tsv`) is this command's output.
//!
//! ```text
//! dialeval idf-table [--shared ../shared] [--min-df 2] --out metrics/data/dailydialog-train.df.tsv
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dialeval_metrics::specificity::IdfTable;

#[derive(Debug, Parser)]
#[command(about = "NIDF's document-frequency table from the DailyDialog train split")]
struct Args {
    /// The shared data folder (reads `data/dailydialog/`).
    #[arg(long, default_value = "../shared")]
    shared: PathBuf,
    /// Leave out words held by fewer utterances (up to 2 changes no score: an unseen word counts
    /// as held by one).
    #[arg(long, default_value_t = 2)]
    min_df: u64,
    /// The table to write.
    #[arg(long)]
    out: PathBuf,
}

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    crate::support::finish("idf-table", run(&Args::parse_from(args)))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let split = dialeval_datasets::dailydialog::load_split(&args.shared.join("data/dailydialog"), [])?;
    let table = IdfTable::from_documents(split.dialogues.iter().flat_map(|d| d.turns.iter().map(String::as_str)))?;
    let text = table.to_tsv(args.min_df);
    std::fs::write(&args.out, &text).map_err(|e| format!("{}: {e}", args.out.display()))?;
    eprintln!(
        "idf-table: {} utterances of {} dialogues ({} touching the test split and {} repeats left out), {} words, wrote {}",
        table.documents(),
        split.dialogues.len(),
        split.overlapping_test,
        split.repeated,
        text.lines().count() - 1,
        args.out.display()
    );
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    /// The bundled table is this command's output on the DailyDialog train split of ../shared.
    #[test]
    fn the_bundled_table_is_remade_from_the_train_split() {
        let Some(shared) = dialeval_testkit::shared_dir() else { return };
        let out = std::env::temp_dir().join(format!("dialeval-idf-{}.tsv", std::process::id()));
        run(&Args { shared, min_df: 2, out: out.clone() }).unwrap();
        let made = std::fs::read_to_string(&out).unwrap();
        let _ = std::fs::remove_file(&out);
        assert!(made == IdfTable::dailydialog_text(), "metrics/data/dailydialog-train.df.tsv differs from `dialeval idf-table` output: remake it");
    }
}
