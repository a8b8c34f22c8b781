//! Several references in the families: every referenced value is the rule applied to the
//! single-reference values (computed here with the metrics directly), one reference gives the
//! single-reference value, reordering the references changes nothing, and the rule is part of
//! each family's settings (so of its cache key).
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::sync::Arc;

use dialeval_amr_graph::smatch::{Smatch, SmatchConfig, SmatchTriples};
use dialeval_common::{MultiRef, TokenEmbedder, TokenEmbeddings};
use dialeval_datasets::DialogueItem;
use dialeval_datasets::amr::AmrIndex;
use dialeval_eval::families::{EmbeddingFamily, MemoEmbedder, SmatchFamily};
use dialeval_eval::{Column, FamilyOutput, MetricFamily};
use dialeval_metrics::embedding::{BertScoreConfig, bert_score, embedding_average, greedy_matching, vector_extrema};

mod common;
use common::{WordHash, item};

fn with_refs(id: &str, response: &str, refs: &[&str]) -> DialogueItem {
    let mut i = item(id, "what did you do today", response, refs[0]);
    i.references = refs.iter().map(|r| (*r).to_owned()).collect();
    i
}

fn columns(family: &impl MetricFamily, items: &[DialogueItem]) -> Vec<Column> {
    match family.compute(items, &|_, _| {}).unwrap() {
        FamilyOutput::Scored(s) => s.columns,
        FamilyOutput::NoneScored { reason: why, .. } | FamilyOutput::Skipped(why) => panic!("skipped: {why}"),
    }
}

fn reversed(items: &[DialogueItem]) -> Vec<DialogueItem> {
    items
        .iter()
        .cloned()
        .map(|mut i| {
            i.references.reverse();
            i
        })
        .collect()
}

#[test]
fn embedding_family_takes_the_rule_over_every_reference() {
    let items = vec![
        with_refs("1", "i went to the beach", &["we stayed home", "i went swimming at the beach", "nothing much"]),
        with_refs("2", "nothing at all", &["i slept all day"]),
        with_refs("3", "played football with friends", &["football", "i watched a film", "played games with my friends", "work"]),
    ];
    let tokens = |t: &str| WordHash.embed_tokens(&[t]).unwrap().remove(0);
    for rule in [MultiRef::Max, MultiRef::Mean] {
        let family = EmbeddingFamily::new(Arc::new(MemoEmbedder::new(WordHash, "word-hash"))).with_references(rule);
        let got = columns(&family, &items);
        assert_eq!(got, columns(&family, &reversed(&items)), "{rule:?}: the order of references changed a score");
        for (k, item) in items.iter().enumerate() {
            let hyp = tokens(&item.response.as_ref().unwrap().text);
            let refs: Vec<TokenEmbeddings> = item.references.iter().map(|r| tokens(r)).collect();
            let combine = |f: &dyn Fn(&TokenEmbeddings) -> f64| -> f64 {
                let v: Vec<f64> = refs.iter().map(f).collect();
                match rule {
                    MultiRef::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    MultiRef::Mean => v.iter().sum::<f64>() / v.len() as f64,
                }
            };
            let expected = [
                combine(&|r| bert_score(&hyp, r, &BertScoreConfig::default()).unwrap().f1),
                combine(&|r| embedding_average(&hyp, r).unwrap()),
                combine(&|r| greedy_matching(&hyp, r).unwrap()),
                combine(&|r| vector_extrema(&hyp, r).unwrap()),
            ];
            for (column, want) in got.iter().zip(expected) {
                let value = column.values[k].unwrap();
                assert!((value - want).abs() < 1e-12, "{rule:?} {} item {}: {value} vs {want}", column.metric, item.id);
            }
        }
    }
    let settings = |rule| serde_json::to_value(EmbeddingFamily::new(Arc::new(MemoEmbedder::new(WordHash, "word-hash"))).with_references(rule).settings()).unwrap();
    assert_ne!(settings(MultiRef::Max), settings(MultiRef::Mean));
}

#[test]
fn smatch_family_takes_the_best_reference_graph() {
    let dir = std::env::temp_dir().join(format!("dialeval-eval-multiref-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("refs.amr.txt");
    let graphs = [
        ("we stayed home", "(s / stay-01 :ARG1 (w / we) :location (h / home))"),
        ("i went swimming at the beach", "(g / go-02 :ARG0 (i / i) :ARG1 (s / swim-01 :ARG0 i :location (b / beach)))"),
        ("nothing much", "(n / nothing :degree (m / much))"),
    ];
    let text: String = graphs.iter().enumerate().map(|(k, (snt, g))| format!("# ::id r{k}\n# ::snt {snt}\n{g}\n\n")).collect();
    std::fs::write(&file, text).unwrap();
    let index = AmrIndex::load(std::slice::from_ref(&file)).unwrap();
    let response = "(g / go-02 :ARG0 (i / i) :ARG4 (b / beach))";
    let mut items = vec![with_refs("1", "i went to the beach", &["we stayed home", "i went swimming at the beach", "nothing much", "a reference without a graph"])];
    items[0].response.as_mut().unwrap().amr = Some(response.to_owned());
    let smatch = Smatch::new(SmatchConfig::default()).unwrap();
    let test = SmatchTriples::parse(response).unwrap();
    let single: Vec<f64> = graphs.iter().map(|(_, g)| smatch.score(&test, &SmatchTriples::parse(g).unwrap()).f1()).collect();
    for (rule, want) in [(MultiRef::Max, single.iter().copied().fold(f64::NEG_INFINITY, f64::max)), (MultiRef::Mean, single.iter().sum::<f64>() / 3.0)] {
        let family = SmatchFamily::new(&index, std::slice::from_ref(&file), SmatchConfig::default()).unwrap().with_references(rule);
        let got = columns(&family, &items);
        assert_eq!(got, columns(&family, &reversed(&items)));
        assert!((got[0].values[0].unwrap() - want).abs() < 1e-12, "{rule:?}: {:?} vs {want}", got[0].values);
    }
    let mut one = items.clone();
    one[0].references.truncate(1);
    let family = SmatchFamily::new(&index, std::slice::from_ref(&file), SmatchConfig::default()).unwrap();
    assert_eq!(columns(&family, &one)[0].values[0], Some(single[0]));
    std::fs::remove_dir_all(&dir).unwrap();
}
