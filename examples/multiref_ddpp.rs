//! A sanity check of the multi-reference path on DailyDialog++: each context's five positives
//! serve as references for each other (leave one out, `dialeval_datasets::ddpp::leave_one_out`),
//! and every referenced metric is asked to separate the positives from the adversarial negatives
//! scored against the same references, once with one reference and once with `--references`
//! (default 4). Prints and writes (`OUT/multiref.md`, `OUT/multiref.json`) the ROC AUC per
//! metric with n and the Mann–Whitney p, and the gain of several references over one.
//!
//! ```text
//! cargo run --release --example multiref_ddpp -- [--input dev.json|test.json] [--contexts IDS.json] [--amr FILE,...] [--rule max|mean]
//! ```
//! Defaults: the bundled dev set restricted to the 200 contexts of the bundled silver AMR, so
//! Smatch takes part. The shipped BERT-RUBER's unreferenced model was trained on DailyDialog++
//! dev data: its own column (and so the hybrids) are not held out on the default input.
//!
//! The program is `dialeval_cli::commands::multiref_ddpp` (also `dialeval multiref-ddpp` once installed).

fn main() -> std::process::ExitCode {
    dialeval_cli::commands::multiref_ddpp::main(std::env::args_os())
}
