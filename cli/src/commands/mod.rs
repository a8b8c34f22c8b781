//! One module per program; each has `main(args)` (the program name first).

pub mod amr_parse;
pub mod bert_ruber;
pub mod correlate;
pub mod dataset_stats;
pub mod evaluate;
pub mod fine_tune;
pub mod idf_table;
pub mod llm_judge;
pub mod multiref_ddpp;
pub mod penman;
pub mod score_slm;
pub mod smatch;
pub mod text_metrics;
pub mod train_slm;

use std::ffi::OsString;
use std::process::ExitCode;

/// A subcommand of the `dialeval` command.
#[derive(Debug, Clone, Copy)]
pub struct Command {
    /// Its name (`dialeval <name> …`).
    pub name: &'static str,
    /// One line of help.
    pub about: &'static str,
    /// Arguments put before the user's (the program's own subcommand, e.g. `train` of
    /// `bert_ruber`).
    pub prefix: &'static [&'static str],
    /// The program.
    pub run: fn(Vec<OsString>) -> ExitCode,
}

/// Every subcommand, in the order `dialeval --help` lists them.
pub const COMMANDS: [Command; 16] = [
    Command { name: "evaluate", about: "score a corpus with every metric and correlate each with the human ratings (the main job)", prefix: &[], run: evaluate::main::<Vec<OsString>> },
    Command { name: "merge", about: "build the report of a corpus from its shards' folders (`evaluate --shard k/n`)", prefix: &["merge"], run: evaluate::main::<Vec<OsString>> },
    Command { name: "smatch", about: "Smatch between two PENMAN files, graphs paired by position", prefix: &[], run: smatch::main::<Vec<OsString>> },
    Command { name: "penman", about: "decode every graph of a PENMAN file and print it as JSON", prefix: &[], run: penman::main::<Vec<OsString>> },
    Command { name: "amr-parse", about: "parse the utterances of a corpus into AMR (LLM endpoint or external parser)", prefix: &[], run: amr_parse::main::<Vec<OsString>> },
    Command { name: "text-metrics", about: "BLEU, ROUGE and METEOR of every pair of a JSONL file", prefix: &[], run: text_metrics::main::<Vec<OsString>> },
    Command { name: "correlate", about: "Pearson, Spearman and Kendall between two fields of a JSONL file", prefix: &[], run: correlate::main::<Vec<OsString>> },
    Command { name: "dataset-stats", about: "counts for any supported corpus, as JSON", prefix: &[], run: dataset_stats::main::<Vec<OsString>> },
    Command { name: "llm-judge", about: "rate items with an LLM judge on the paper's four criteria", prefix: &[], run: llm_judge::main::<Vec<OsString>> },
    Command { name: "train-slm", about: "train the AMR-gated SLM on CPU (or a GPU through wgpu)", prefix: &[], run: train_slm::main::<Vec<OsString>> },
    Command { name: "score-slm", about: "score the items of a JSONL corpus with a trained SLM", prefix: &[], run: score_slm::main::<Vec<OsString>> },
    Command { name: "train-ruber", about: "train BERT-RUBER's unreferenced model", prefix: &[], run: bert_ruber::train_main::<Vec<OsString>> },
    Command { name: "fine-tune", about: "fine-tune the text encoder over context and response as one input", prefix: &[], run: fine_tune::main::<Vec<OsString>> },
    Command { name: "score-ruber", about: "score USR-PersonaChat with a BERT-RUBER checkpoint", prefix: &[], run: bert_ruber::score_main::<Vec<OsString>> },
    Command { name: "idf-table", about: "NIDF's document-frequency table from the DailyDialog train split", prefix: &[], run: idf_table::main::<Vec<OsString>> },
    Command { name: "multiref-ddpp", about: "DailyDialog++ leave-one-out: each referenced metric with one reference and with several", prefix: &[], run: multiref_ddpp::main::<Vec<OsString>> },
];

/// The command named `name`.
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|c| c.name == name)
}
