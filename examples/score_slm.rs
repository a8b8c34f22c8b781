//! Scores items with a trained SLM: one probability per line of ITEMS.jsonl.
//!
//! ```text
//! cargo run --release --example score_slm -- CHECKPOINT_DIR ITEMS.jsonl
//! ```
//! ITEMS.jsonl is the generic format of `dialeval_datasets::jsonl` (context turns and response may
//! carry `amr`); each item is scored with its last two context turns. Prints `{"id", "score"}`
//! per item. A model with the pretrained text head reads all-MiniLM-L6-v2 sentence vectors
//! (`$DIALEVAL_MINILM`, default `~/.cache/dialeval/models/all-MiniLM-L6-v2`).

use std::process::ExitCode;

use burn::prelude::Device;
use dialeval_datasets::pairs::TrainingPair;
use dialeval_slm_model::bert::{PretrainedEncoder, default_model_dir};
use dialeval_slm_model::train::Scorer;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, items] = args.as_slice() else {
        eprintln!("usage: score_slm CHECKPOINT_DIR ITEMS.jsonl");
        return ExitCode::from(2);
    };
    let run = || -> Result<(), Box<dyn std::error::Error>> {
        let scorer = Scorer::load(dir.as_ref(), Device::flex())?;
        let items = dialeval_datasets::jsonl::load(items.as_ref())?;
        let pairs: Vec<TrainingPair> = items.iter().map(|it| dialeval_examples::slm_pair(it, 2)).collect();
        let encoder = match scorer.featurizer().encoder {
            Some(_) => Some(PretrainedEncoder::load(&default_model_dir(), &Device::flex())?),
            None => None,
        };
        for (it, score) in items.iter().zip(dialeval_examples::score_slm_pairs(&scorer, &pairs, encoder.as_ref())?) {
            println!("{}", serde_json::json!({"id": it.id, "score": score}));
        }
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("score_slm: {e}");
            ExitCode::FAILURE
        }
    }
}
