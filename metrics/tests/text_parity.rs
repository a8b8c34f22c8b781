//! Parity with sacrebleu 2.6.0, rouge-score 0.1.2 and nltk 3.10.4 on the 240 USR-PersonaChat
//! pairs of `../shared/golden/usr_personachat_text_metrics.jsonl` and the corpus BLEU file.
//!
//! Tolerances (golden README §1): BLEU counts, totals, lengths and every token list exact; BLEU
//! score, precisions and bp absolute 1e-9 (0–100 scale); ROUGE absolute 1e-12.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use dialeval_metrics::text::bleu::{Bleu, BleuConfig, BleuScore};
use dialeval_metrics::text::rouge::{PrfScore, Rouge, RougeScores, Stemming};
use dialeval_testkit::{read_json, read_jsonl, shared_dir};
use serde_json::Value;

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect()
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect()
}

fn check_bleu(label: &str, got: &BleuScore, want: &Value) {
    assert_eq!(got.counts, u64s(&want["counts"]), "{label}: counts");
    assert_eq!(got.totals, u64s(&want["totals"]), "{label}: totals");
    assert_eq!(got.sys_len, want["sys_len"].as_u64().unwrap(), "{label}: sys_len");
    assert_eq!(got.ref_len, want["ref_len"].as_u64().unwrap(), "{label}: ref_len");
    let close = |a: f64, b: &Value| (a - b.as_f64().unwrap()).abs() <= 1e-9;
    assert!(close(got.score, &want["score"]), "{label}: score {} vs {}", got.score, want["score"]);
    assert!(close(got.bp, &want["bp"]), "{label}: bp");
    for (k, p) in got.precisions.iter().enumerate() {
        assert!(close(*p, &want["precisions"][k]), "{label}: precision {k}");
    }
}

fn check_rouge(label: &str, got: &RougeScores, want: &Value) {
    for (name, s) in [("rouge1", got.rouge1), ("rouge2", got.rouge2), ("rougeL", got.rouge_l)] {
        let w = &want[name];
        let PrfScore { precision, recall, fmeasure } = s;
        for (field, v) in [("precision", precision), ("recall", recall), ("fmeasure", fmeasure)] {
            assert!((v - w[field].as_f64().unwrap()).abs() <= 1e-12, "{label}: {name}.{field} {v} vs {}", w[field]);
        }
    }
}

fn rows() -> Option<Vec<Value>> {
    let shared = shared_dir()?;
    let rows = read_jsonl(&shared.join("golden/usr_personachat_text_metrics.jsonl"));
    assert_eq!(rows.len(), 240);
    Some(rows)
}

#[test]
fn sentence_bleu_matches_sacrebleu_on_240_pairs() {
    let Some(rows) = rows() else { return };
    let bleu = Bleu::new(BleuConfig::sentence()).unwrap();
    for row in &rows {
        let label = format!("pair {}", row["pair_index"]);
        let (hyp, reference) = (row["hypothesis"].as_str().unwrap(), row["reference"].as_str().unwrap());
        assert_eq!(bleu.tokens(hyp.trim()), strings(&row["tokens"]["bleu_13a_hyp"]), "{label}: hyp tokens");
        assert_eq!(bleu.tokens(reference.trim()), strings(&row["tokens"]["bleu_13a_ref"]), "{label}: ref tokens");
        check_bleu(&label, &bleu.sentence(hyp.trim(), &[reference.trim()]).unwrap(), &row["sentence_bleu"]);
    }
}

#[test]
fn corpus_bleu_matches_sacrebleu_overall_and_per_system() {
    let Some(rows) = rows() else { return };
    let shared = shared_dir().unwrap();
    let golden = read_json(&shared.join("golden/usr_personachat_corpus_bleu.json"));
    let bleu = Bleu::new(BleuConfig::corpus()).unwrap();
    let select = |model: Option<&str>| -> (Vec<&str>, Vec<Vec<&str>>) {
        rows.iter().filter(|r| model.is_none_or(|m| r["model"] == m)).map(|r| (r["hypothesis"].as_str().unwrap().trim(), vec![r["reference"].as_str().unwrap().trim()])).unzip()
    };
    let (h, r) = select(None);
    check_bleu("corpus", &bleu.corpus(&h, &r).unwrap(), &golden["all"]);
    for (model, want) in golden["per_model"].as_object().unwrap() {
        let (h, r) = select(Some(model));
        assert_eq!(h.len() as u64, want["n_pairs"].as_u64().unwrap());
        check_bleu(model, &bleu.corpus(&h, &r).unwrap(), want);
    }
}

#[test]
fn rouge_matches_rouge_score_with_and_without_stemming() {
    let Some(rows) = rows() else { return };
    let (plain, stemmed) = (Rouge::new(Stemming::None), Rouge::new(Stemming::Porter));
    for row in &rows {
        let label = format!("pair {}", row["pair_index"]);
        let (hyp, reference) = (row["hypothesis"].as_str().unwrap().trim(), row["reference"].as_str().unwrap().trim());
        assert_eq!(plain.tokens(hyp), strings(&row["tokens"]["rouge_hyp"]), "{label}");
        assert_eq!(plain.tokens(reference), strings(&row["tokens"]["rouge_ref"]), "{label}");
        assert_eq!(stemmed.tokens(hyp), strings(&row["tokens"]["rouge_stem_hyp"]), "{label}: stemmed hyp");
        assert_eq!(stemmed.tokens(reference), strings(&row["tokens"]["rouge_stem_ref"]), "{label}: stemmed ref");
        check_rouge(&label, &plain.score(hyp, reference), &row["rouge"]);
        check_rouge(&format!("{label} (stem)"), &stemmed.score(hyp, reference), &row["rouge_stem"]);
    }
}

#[test]
fn porter_matches_nltk_on_40000_words() {
    // Written by scripts/make_porter_fixture.py with nltk 3.10.4 (bundled: runs without ../shared).
    let text = std::fs::read_to_string(dialeval_testkit::package_dir(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/porter_nltk.tsv")).unwrap();
    let mut n = 0;
    for line in text.lines() {
        let (word, want) = line.split_once('\t').unwrap();
        assert_eq!(dialeval_metrics::text::porter::stem(word), want, "{word}");
        n += 1;
    }
    assert!(n > 30_000);
}

#[test]
fn meteor_matches_nltk_on_240_pairs() {
    let Some(rows) = rows() else { return };
    let wordnet = match dialeval_metrics::text::wordnet::WordNet::load_default() {
        Ok(w) => std::sync::Arc::new(w),
        Err(e) if std::env::var("DIALEVAL_REQUIRE_SHARED").as_deref() != Ok("1") => {
            eprintln!("SKIPPED: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let meteor = dialeval_metrics::text::meteor::Meteor::new(wordnet, Default::default()).unwrap();
    for row in &rows {
        let (hyp, reference) = (row["hypothesis"].as_str().unwrap().trim(), row["reference"].as_str().unwrap().trim());
        let got = meteor.score(hyp, &[reference]).unwrap();
        let want = row["meteor"].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-12, "pair {}: METEOR {got} vs nltk {want}", row["pair_index"]);
    }
}

#[test]
fn wordnet_synonyms_match_nltk() {
    // Written by scripts/make_wordnet_fixture.py with nltk 3.10.4 over Debian's wordnet-base.
    let wordnet = match dialeval_metrics::text::wordnet::WordNet::load_default() {
        Ok(w) => w,
        Err(e) if std::env::var("DIALEVAL_REQUIRE_SHARED").as_deref() != Ok("1") => {
            eprintln!("SKIPPED: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let rows = read_jsonl(&dialeval_testkit::package_dir(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wordnet_synonyms_nltk.jsonl"));
    assert!(rows.len() > 800);
    for row in rows {
        let word = row["word"].as_str().unwrap();
        let mut got: Vec<String> = wordnet.synonyms(word).unwrap().into_iter().collect();
        got.sort();
        assert_eq!(got, strings(&row["synonyms"]), "{word}");
    }
}
