//! Scores items with a trained SLM: one probability per line of ITEMS.jsonl.
//!
//! ```text
//! cargo run --release --example score_slm -- CHECKPOINT_DIR ITEMS.jsonl
//! ```
//! ITEMS.jsonl is the generic format of `dialeval_datasets::jsonl` (context turns and response may
//! carry `amr`); each item is scored with the last context turns the model reads (two for the shipped one). Prints `{"id", "score"}`
//! per item. A model with the pretrained text head reads the sentence vectors of the encoder it
//! was trained on: all-mpnet-base-v2 (`scripts/fetch_mpnet.sh`, `$DIALEVAL_MPNET`) or
//! all-MiniLM-L6-v2 (`scripts/fetch_minilm.sh`, `$DIALEVAL_MINILM`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dialeval_eval::models::{Compute, score_items};
use dialeval_slm_model::scorer::Scorer;

#[derive(Debug, Parser)]
#[command(about = "Score the items of a JSONL corpus with a trained SLM")]
struct Args {
    /// The checkpoint directory (e.g. models/slm).
    checkpoint: PathBuf,
    /// Items in the generic JSONL format.
    items: PathBuf,
    /// Where the models run: cpu, wgpu (the default adapter) or wgpu:N (the N-th discrete GPU; needs the `wgpu` feature).
    #[arg(long, default_value = "cpu")]
    device: Compute,
}

/// Runs the command on `args` (the program name first, as `std::env::args_os` gives them).
pub fn main<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> ExitCode {
    crate::support::finish("score_slm", run(&Args::parse_from(args)))
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let scorer = Scorer::load(&args.checkpoint, args.device.device()?)?;
    let items = dialeval_datasets::jsonl::load(&args.items)?;
    let scores = score_items(&scorer, &items, &|_, _| {})?;
    for (it, score) in items.iter().zip(scores) {
        println!("{}", serde_json::json!({"id": it.id, "score": score}));
    }
    Ok(())
}
