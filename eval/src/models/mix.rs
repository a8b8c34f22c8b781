//! The training data of the reference-free scorers' commands (`train-slm`, `train-ruber`,
//! `fine-tune`), from a `../shared`-style folder: the training mix with its silver graphs, the
//! Topical-Chat conversations held out as a larger-graph test, and the record of a run's data
//! settings that a resumed run must match.

use std::path::Path;

use dialeval_datasets::amr::{AmrIndex, GraphPresenceTable};
use dialeval_datasets::mix::{Mix, MixConfig, MixSources, build_mix};
use dialeval_datasets::pairs::length_separation;

use crate::error::{Error, Result};

/// The training mix of the reference-free scorers from `shared` (`data/dailydialog-plusplus`,
/// `data/topical-chat`, `data/dailydialog` when the config asks for it, and the test split of
/// `data/silver-amr/dailydialog-plusplus-test100`), with every silver graph of
/// `data/silver-amr` attached by sentence text; `say` hears what was dropped and each split's
/// size, graph coverage and length-only AUC.
///
/// # Errors
/// A file that cannot be read.
pub fn training_mix(shared: &Path, config: &MixConfig, topical_test_ids: &[String], say: &dyn Fn(&str)) -> Result<Mix> {
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
        say(&format!("DailyDialog: dropped {listed} dialogues listed as touching its test split, {repeated} repeats, {sharing} sharing an utterance with the test split"));
    }
    let dir = data.join("silver-amr");
    let mut silver: Vec<std::path::PathBuf> =
        std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_string_lossy().ends_with(".silver.amr.txt")).collect();
    silver.sort();
    let index = AmrIndex::load(&silver)?;
    for (name, pairs) in [("train", &mut mix.train), ("dev", &mut mix.dev), ("test", &mut mix.test), ("Topical-Chat test", &mut mix.topical_test)] {
        if pairs.is_empty() {
            continue;
        }
        let coverage = index.attach_pairs(pairs);
        let length = length_separation(pairs).unwrap_or(f64::NAN);
        say(&format!("{name}: {} pairs, silver graphs for {} of {} turns and responses, length-only AUC {length:.3}", pairs.len(), coverage.with_amr, coverage.turns));
        say(&format!("{name}: graphs per pair: {}", GraphPresenceTable::of(pairs)));
    }
    Ok(mix)
}

/// The Topical-Chat conversations with silver AMR held out as a larger-graph test split: every
/// second one of `data/silver-amr/topical-chat-valid-rare.conversation-ids.json` in `shared`
/// (23 of 46, in file order).
///
/// # Errors
/// The file cannot be read or is not a JSON list of strings.
pub fn graph_test_conversations(shared: &Path) -> Result<Vec<String>> {
    let path = shared.join("data/silver-amr/topical-chat-valid-rare.conversation-ids.json");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let ids: Vec<String> = serde_json::from_str(&text).map_err(|e| Error::json(&path, e))?;
    Ok(ids.into_iter().skip(1).step_by(2).collect())
}

/// Writes the data settings to `out/data.json`, or, when a run there has recorded its own,
/// checks they are the same: a resumed run must train on the data it started on.
///
/// # Errors
/// [`Error::Config`] when the recorded settings differ; an unreadable or unwritable file.
pub fn record_data_settings(out: &Path, settings: &serde_json::Value) -> Result<()> {
    let path = out.join("data.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let recorded: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::json(&path, e))?;
            if &recorded != settings {
                return Err(Error::Config(format!("{} records other data settings than these ({recorded} against {settings}): resume with the same flags or give another --out", path.display())));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
            let text = serde_json::to_string_pretty(settings).map_err(|e| Error::json(&path, e))?;
            std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
        }
        Err(e) => Err(Error::io(&path, e)),
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
