//! Scores items with a trained SLM: one probability per line of ITEMS.jsonl.
//!
//! ```text
//! cargo run --release --example score_slm -- CHECKPOINT_DIR ITEMS.jsonl
//! ```
//! ITEMS.jsonl is the generic format of `dialeval_datasets::jsonl` (context turns and response may
//! carry `amr`). Prints `{"id", "score"}` per item.

use std::process::ExitCode;

use burn::prelude::Device;
use dialeval_datasets::pairs::{PairKind, TrainingPair};
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
        let pairs: Vec<TrainingPair> = items
            .iter()
            .map(|it| TrainingPair {
                id: it.id.clone(),
                context: it.context.iter().map(|t| t.text.clone()).collect(),
                response: it.response.as_ref().map(|r| r.text.clone()).unwrap_or_default(),
                kind: PairKind::Positive,
                context_amr: it.context.iter().map(|t| t.amr.clone()).collect(),
                response_amr: it.response.as_ref().and_then(|r| r.amr.clone()),
            })
            .collect();
        for (it, score) in items.iter().zip(scorer.score(&pairs)) {
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
