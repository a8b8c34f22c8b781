//! The pretrained-encoder loader: a tiny random BERT written in the Hugging Face layout loads
//! (with and without the `bert.` prefix) and reports bad files; the real all-MiniLM-L6-v2
//! matches an independent numpy forward pass (`scripts/make_minilm_fixture.py`) within 1e-4.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;

use burn::prelude::*;
use burn::tensor::TensorData;
use dialeval_common::{SentenceEmbedder, SplitMix64, TokenEmbedder};
use dialeval_slm_model::Error;
use dialeval_slm_model::bert::{Bert, BertConfig, PretrainedEncoder, minilm_dir};
use safetensors::{Dtype, View};
use std::borrow::Cow;

fn tiny_config() -> BertConfig {
    serde_json::from_str(r#"{"vocab_size": 12, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 16}"#).unwrap()
}

struct Raw(Vec<usize>, Vec<u8>);

impl View for &Raw {
    fn dtype(&self) -> Dtype {
        Dtype::F32
    }
    fn shape(&self) -> &[usize] {
        &self.0
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.1)
    }
    fn data_len(&self) -> usize {
        self.1.len()
    }
}

/// Every tensor of a BERT checkpoint in PyTorch layout, seeded random values.
fn tiny_weights(c: &BertConfig) -> Vec<(String, Raw)> {
    let (h, f) = (c.hidden_size, c.intermediate_size);
    let mut shapes: Vec<(String, Vec<usize>)> = vec![
        ("embeddings.word_embeddings.weight".into(), vec![c.vocab_size, h]),
        ("embeddings.position_embeddings.weight".into(), vec![c.max_position_embeddings, h]),
        ("embeddings.token_type_embeddings.weight".into(), vec![2, h]),
        ("embeddings.LayerNorm.weight".into(), vec![h]),
        ("embeddings.LayerNorm.bias".into(), vec![h]),
    ];
    for i in 0..c.num_hidden_layers {
        let p = format!("encoder.layer.{i}.");
        for (name, out, inp) in
            [("attention.self.query", h, h), ("attention.self.key", h, h), ("attention.self.value", h, h), ("attention.output.dense", h, h), ("intermediate.dense", f, h), ("output.dense", h, f)]
        {
            shapes.push((format!("{p}{name}.weight"), vec![out, inp]));
            shapes.push((format!("{p}{name}.bias"), vec![out]));
        }
        for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
            shapes.push((format!("{p}{name}.weight"), vec![h]));
            shapes.push((format!("{p}{name}.bias"), vec![h]));
        }
    }
    let mut rng = SplitMix64(7);
    shapes
        .into_iter()
        .map(|(name, shape)| {
            let n: usize = shape.iter().product();
            let bytes = (0..n).flat_map(|_| ((rng.unit() as f32 - 0.5) * 0.4).to_le_bytes()).collect();
            (name, Raw(shape, bytes))
        })
        .collect()
}

fn write(weights: &[(String, Raw)], prefix: &str, path: &Path) {
    let named: Vec<(String, &Raw)> = weights.iter().map(|(n, r)| (format!("{prefix}{n}"), r)).collect();
    safetensors::serialize_to_file(named, None, path).unwrap();
}

fn run(model: &Bert, device: &Device) -> Vec<f32> {
    let tokens = Tensor::<2, Int>::from_data(TensorData::new(vec![2_i64, 5, 7, 3, 2, 9, 3, 0], [2, 4]), device);
    let types = Tensor::<2, Int>::zeros([2, 4], device);
    let pad = Tensor::<2, Bool>::from_data(TensorData::new(vec![false, false, false, false, false, false, false, true], [2, 4]), device);
    model.forward(tokens, types, pad).into_data().convert::<f32>().try_into_vec::<f32>().unwrap()
}

#[test]
fn tiny_random_bert_loads_with_or_without_prefix_and_padding_does_not_leak() {
    let dir = std::env::temp_dir().join(format!("dialeval-bert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = tiny_config();
    let weights = tiny_weights(&config);
    let device = Device::flex();
    write(&weights, "", &dir.join("plain.safetensors"));
    write(&weights, "bert.", &dir.join("prefixed.safetensors"));
    let a = run(&Bert::load(&config, &dir.join("plain.safetensors"), &device).unwrap(), &device);
    let b = run(&Bert::load(&config, &dir.join("prefixed.safetensors"), &device).unwrap(), &device);
    assert_eq!(a.len(), 2 * 4 * 8);
    assert_eq!(a, b);
    // The second row's first three states do not depend on what sits in its padded slot.
    let device2 = Device::flex();
    let model = Bert::load(&config, &dir.join("plain.safetensors"), &device2).unwrap();
    let tokens = Tensor::<2, Int>::from_data(TensorData::new(vec![2_i64, 5, 7, 3, 2, 9, 3, 11], [2, 4]), &device2);
    let pad = Tensor::<2, Bool>::from_data(TensorData::new(vec![false, false, false, false, false, false, false, true], [2, 4]), &device2);
    let c = model.forward(tokens, Tensor::zeros([2, 4], &device2), pad).into_data().convert::<f32>().try_into_vec::<f32>().unwrap();
    for i in 32..32 + 24 {
        assert!((a[i] - c[i]).abs() < 1e-5, "state {i}: {} vs {}", a[i], c[i]);
    }
    // LayerNorm output: every state has mean ≈ beta-weighted, finite values.
    assert!(a.iter().all(|v| v.is_finite()));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_checkpoints_name_the_tensor() {
    let dir = std::env::temp_dir().join(format!("dialeval-bert-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = tiny_config();
    let mut weights = tiny_weights(&config);
    weights.retain(|(n, _)| n != "encoder.layer.1.output.dense.bias");
    write(&weights, "", &dir.join("missing.safetensors"));
    let err = Bert::load(&config, &dir.join("missing.safetensors"), &Device::flex()).unwrap_err().to_string();
    assert!(err.contains("encoder.layer.1.output.dense.bias") && err.contains("missing"), "{err}");
    let mut wide = tiny_config();
    wide.intermediate_size = 32;
    let err = Bert::load(&wide, &dir.join("missing.safetensors"), &Device::flex()).unwrap_err().to_string();
    assert!(err.contains("intermediate.dense.weight") && err.contains("shape"), "{err}");
    let err = PretrainedEncoder::load(&dir, &Device::flex()).unwrap_err();
    assert!(matches!(err, Error::MissingModel { file: "config.json", .. }), "{err}");
    assert!(err.to_string().contains("scripts/fetch_minilm.sh"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn minilm_matches_the_numpy_reference() {
    let Some(dir) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let fixture = dialeval_testkit::read_json(&dialeval_testkit::workspace_dir().join("slm-model/tests/fixtures/minilm_reference.json"));
    let rows = fixture["sentences"].as_array().unwrap();
    let texts: Vec<&str> = rows.iter().map(|r| r["text"].as_str().unwrap()).collect();
    let mut encoder = PretrainedEncoder::load(&dir, &Device::flex()).unwrap();
    encoder.batch_tokens = 40; // several batches of mixed lengths
    let encoded = encoder.encode(&texts).unwrap();
    // The batching does not change a bit: one sentence per batch gives the same states.
    encoder.batch_tokens = 1;
    assert_eq!(encoder.encode(&texts).unwrap(), encoded);
    encoder.batch_tokens = 40;
    // The batches run on all cores: one thread and four give the same bits.
    let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    assert_eq!(pool(1).install(|| encoder.encode(&texts).unwrap()), encoded);
    assert_eq!(pool(4).install(|| encoder.encode(&texts).unwrap()), encoded);
    let sentences = encoder.embed_sentences(&texts).unwrap();
    let mut worst: f64 = 1.0;
    for ((row, enc), got) in rows.iter().zip(&encoded).zip(&sentences) {
        let ids: Vec<u32> = row["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        assert_eq!(enc.ids, ids, "{}", row["text"]);
        let want = dialeval_testkit::floats(&row["sentence"]);
        let dot: f64 = want.iter().zip(got).map(|(a, b)| a * f64::from(*b)).sum();
        worst = worst.min(dot);
        for (a, b) in want.iter().zip(got) {
            assert!((a - f64::from(*b)).abs() < 1e-4, "{}: {a} vs {b}", row["text"]);
        }
        for (want, got) in row["first_tokens"].as_array().unwrap().iter().zip(&enc.states) {
            for (a, b) in dialeval_testkit::floats(want).iter().zip(got) {
                assert!((a - f64::from(*b)).abs() < 1e-3 * a.abs().max(1.0), "{}: token state {a} vs {b}", row["text"]);
            }
        }
    }
    assert!(worst >= 0.9999, "worst cosine {worst}");
    // Token embeddings drop [CLS] and [SEP].
    let tokens = encoder.embed_tokens(&texts[..2]).unwrap();
    assert_eq!(tokens[0].tokens.len(), encoded[0].tokens.len() - 2);
    let counts: HashMap<&str, usize> = tokens.iter().flat_map(|t| t.tokens.iter().map(String::as_str)).fold(HashMap::new(), |mut m, t| {
        *m.entry(t).or_default() += 1;
        m
    });
    assert!(!counts.contains_key("[CLS]") && !counts.contains_key("[SEP]"));
}

#[test]
fn forward_flops_count_the_matmuls_of_every_layer() {
    // tiny: h 8, f 16, 2 layers; a 5-token sentence: per layer 2·5·(4·64 + 2·128) + 4·25·8.
    let c = tiny_config();
    assert_eq!(c.forward_flops(5), 2 * (2 * 5 * (4 * 64 + 2 * 128) + 4 * 25 * 8));
    assert_eq!(c.forward_flops(0), 0);
    // all-MiniLM-L6-v2 (h 384, f 1536, 6 layers) at 16 tokens: ≈ 0.34 GFLOP.
    let minilm: BertConfig =
        serde_json::from_str(r#"{"vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12, "intermediate_size": 1536, "max_position_embeddings": 512}"#).unwrap();
    assert_eq!(minilm.forward_flops(16), 6 * (2 * 16 * (4 * 384 * 384 + 2 * 384 * 1536) + 4 * 256 * 384));
}

#[test]
fn host_gelu_matches_burns_exact_gelu() {
    use dialeval_slm_model::fast_gelu::{erf, gelu_exact};
    // Every 1/256 on [-12, 12], and the f32 values around the saturation point.
    let mut xs: Vec<f32> = (-3072..=3072).map(|i| i as f32 / 256.0).collect();
    xs.extend([5.5437, 5.5438, -5.5437, -5.5438, 1e-30, -1e-30, 0.0, f32::MAX, f32::MIN]);
    let n = xs.len();
    let plain = Device::flex();
    // The autodiff device takes burn's own gelu (libm's erf), the plain one the host path.
    let reference = Device::flex().autodiff();
    let run = |device: &Device| gelu_exact(Tensor::<1>::from_data(TensorData::new(xs.clone(), [n]), device)).into_data().try_to_vec::<f32>().unwrap();
    let (fast, exact) = (run(&plain), run(&reference));
    let mut worst = 0.0f32;
    for ((x, a), b) in xs.iter().zip(&fast).zip(&exact) {
        let err = (a - b).abs();
        assert!(err <= 1.5e-6 * b.abs().max(1.0), "gelu({x}): host {a} vs burn {b}");
        worst = worst.max(err);
    }
    assert!(worst > 0.0, "the two paths are the same code");
    // erf itself: odd, bounded, NaN stays NaN.
    for z in [0.1f32, 0.5, 1.0, 2.0, 3.0, 4.0, 100.0] {
        assert_eq!(erf(-z), -erf(z));
        assert!(erf(z).abs() <= 1.0);
    }
    assert!(erf(f32::NAN).is_nan());
    let nan = gelu_exact(Tensor::<1>::from_data(TensorData::new(vec![f32::NAN, 1.0], [2]), &plain)).into_data().try_to_vec::<f32>().unwrap();
    assert!(nan[0].is_nan() && (nan[1] - 0.841_344_7).abs() < 1e-6);
}

#[test]
fn a_huge_text_is_cut_to_the_window_before_tokenising() {
    let Some(dir) = dialeval_testkit::optional_dir(minilm_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MINILM") else { return };
    let encoder = PretrainedEncoder::load(&dir, &Device::flex()).unwrap();
    assert_eq!(encoder.window(), 256);
    // 12 MB: tokenising it whole took 16 s and 2 GB; cut first, it is as fast as a sentence.
    let huge = "the weather is lovely today and we walk along the river. ".repeat(200_000);
    let head: String = huge.split_whitespace().take(400).collect::<Vec<_>>().join(" ");
    let started = std::time::Instant::now();
    let encoded = encoder.encode(&[huge.as_str(), head.as_str(), "a short one"]).unwrap();
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    assert_eq!(encoded[0].ids.len(), 256);
    assert!(encoded[0].truncated && encoded[1].truncated && !encoded[2].truncated);
    // The pieces read are those of the whole text.
    assert_eq!(encoded[0].ids, encoded[1].ids);
    assert_eq!(encoded[0].states, encoded[1].states);
    assert_eq!(dialeval_common::TokenEmbedder::max_tokens(&encoder), Some(254));
    // A single word of a megabyte is one unknown piece either way.
    let word = "x".repeat(1 << 20);
    assert_eq!(encoder.encode(&[word.as_str()]).unwrap()[0].tokens, ["[CLS]", "[UNK]", "[SEP]"]);
}
