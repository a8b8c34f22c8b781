//! A sanity check of the multi-reference path on DailyDialog++: each context's five positives serve
//! as references for each other (leave one out, `dialeval_datasets::ddpp::leave_one_out`), and
//! every referenced metric is asked to separate the positives from the adversarial negatives scored
//! against the same references, once with one reference and once with `--references` (default 4).
//! Prints and writes (`OUT/multiref.md`, `OUT/multiref.json`) the ROC AUC per metric with n and the
//! Mann–Whitney p, and the gain of several references over one.
//!
//! A thin `main` over [`dialeval_cli::commands::multiref_ddpp`], whose documentation says what it does
//! and how (`cli/src/commands/multiref_ddpp.rs`); its flags: `cargo run --release --example multiref_ddpp -- --help`
//! (the same program as the installed `dialeval` command's, `dialeval --help`).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::multiref_ddpp::main(std::env::args_os())
}
