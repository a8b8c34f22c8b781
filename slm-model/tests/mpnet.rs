//! all-mpnet-base-v2 in burn against the PyTorch reference (`../shared/golden/mpnet`, 28 inputs
//! computed by transformers + sentence-transformers): token ids exact; sentence embeddings,
//! last hidden states (first three tokens and the last) and the cosines of inputs 0–7 within
//! 1e-4. The same comparison with a wrong relative-position bucketing (max distance 64 instead
//! of 128) must fail: the bias is what tells MPNet apart from BERT.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use burn::prelude::*;
use burn::tensor::TensorData;
use dialeval_slm_model::bert::{Architecture, Bert, BertConfig, PretrainedEncoder, mpnet_dir, relative_position_bucket};
use serde_json::Value;

const TOLERANCE: f64 = 1e-4;

fn floats(v: &Value) -> Vec<f32> {
    dialeval_testkit::floats(v).into_iter().map(|x| x as f32).collect()
}

fn max_diff(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| f64::from((x - y).abs())).fold(0.0, f64::max)
}

/// The golden file and the model directory, or `None` (skipped) when either is missing.
fn inputs() -> Option<(Value, std::path::PathBuf)> {
    let shared = dialeval_testkit::shared_dir()?;
    let dir = dialeval_testkit::optional_dir(mpnet_dir(), "model.safetensors", "DIALEVAL_REQUIRE_MPNET")?;
    Some((dialeval_testkit::read_json(&shared.join("golden/mpnet/all_mpnet_base_v2_reference.json")), dir))
}

/// The last hidden states of one input (batch of one, no padding), `[seq · hidden]`.
fn hidden(model: &Bert, ids: &[u32], device: &Device) -> Vec<f32> {
    let seq = ids.len();
    let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids.iter().map(|&i| i64::from(i)).collect::<Vec<_>>(), [1, seq]), device);
    model.forward_unpadded(tokens, Tensor::zeros([1, seq], device)).into_data().convert::<f32>().try_to_vec::<f32>().unwrap()
}

/// The largest difference of the first three and the last hidden states from the reference.
fn hidden_diff(model: &Bert, record: &Value, device: &Device) -> f64 {
    let ids: Vec<u32> = record["token_ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
    let states = hidden(model, &ids, device);
    let d = states.len() / ids.len();
    let first: Vec<f32> = record["hidden_first3"].as_array().unwrap().iter().flat_map(floats).collect();
    let last = floats(&record["hidden_last"]);
    max_diff(&states[..first.len()], &first).max(max_diff(&states[states.len() - d..], &last))
}

#[test]
fn relative_buckets_follow_the_reference_formula() {
    // Hugging Face's MPNetEncoder.relative_position_bucket (32 buckets, max distance 128),
    // evaluated in float32 with Python: keys before the query (negative offsets) go to buckets
    // 0–15, keys after it to 16–31; distances 0–7 exact, then log-spaced up to 128.
    let bucket = |r: i64| relative_position_bucket(r, 32, 128);
    let expected = [
        (0, 0),
        (-1, 1),
        (-7, 7),
        (-8, 8),
        (-11, 8),
        (-12, 9),
        (-16, 10),
        (-23, 11),
        (-32, 12),
        (-64, 14),
        (-127, 15),
        (-128, 15),
        (-500, 15),
        (1, 17),
        (7, 23),
        (8, 24),
        (16, 26),
        (32, 28),
        (64, 30),
        (200, 31),
    ];
    for (relative, want) in expected {
        assert_eq!(bucket(relative), want, "offset {relative}");
    }
}

#[test]
fn mpnet_matches_the_pytorch_reference() {
    let Some((golden, dir)) = inputs() else { return };
    let device = Device::flex();
    let encoder = PretrainedEncoder::load(&dir, &device).unwrap();
    assert_eq!(encoder.window(), 384);
    assert_eq!(encoder.hidden_size(), 768);
    let records = golden["inputs"].as_array().unwrap();
    assert_eq!(records.len(), 28);
    let texts: Vec<&str> = records.iter().map(|r| r["text"].as_str().unwrap()).collect();
    let encoded = encoder.encode(&texts).unwrap();
    let mut worst_embedding = 0.0_f64;
    let mut embeddings = Vec::new();
    for (record, e) in records.iter().zip(&encoded) {
        let index = record["index"].as_u64().unwrap();
        let want: Vec<u32> = record["token_ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        assert_eq!(e.ids, want, "input {index}: token ids");
        assert_eq!(e.truncated, record["truncated"].as_bool().unwrap(), "input {index}: truncation");
        let embedding = encoder.pool(e, encoder.pooling);
        let diff = max_diff(&embedding, &floats(&record["embedding"]));
        assert!(diff <= TOLERANCE, "input {index}: embedding differs by {diff:e}");
        worst_embedding = worst_embedding.max(diff);
        embeddings.push(embedding);
    }
    // The cosines of inputs 0–7 (the embeddings are normalised).
    let cosines = golden["cosine_similarity_first8"].as_array().unwrap();
    for (i, row) in cosines.iter().enumerate() {
        for (j, want) in floats(row).into_iter().enumerate() {
            let got: f32 = embeddings[i].iter().zip(&embeddings[j]).map(|(a, b)| a * b).sum();
            assert!(f64::from((got - want).abs()) <= TOLERANCE, "cosine {i},{j}: {got} vs {want}");
        }
    }
    // Hidden states, one input at a time, with the model as PretrainedEncoder loads it.
    let config = BertConfig::load(&dir.join("config.json")).unwrap();
    assert_eq!(config.model_type, Architecture::Mpnet);
    let model = Bert::load(&config, &dir.join("model.safetensors"), &device).unwrap();
    let mut worst_hidden = 0.0_f64;
    for record in records {
        let diff = hidden_diff(&model, record, &device);
        assert!(diff <= TOLERANCE, "input {}: hidden states differ by {diff:e}", record["index"]);
        worst_hidden = worst_hidden.max(diff);
    }
    eprintln!("mpnet parity: 28 inputs, token ids exact, embeddings within {worst_embedding:.1e}, hidden states within {worst_hidden:.1e}");

    // A wrong bucketing (distances from 64 share the last bucket) moves the states of every
    // input longer than 20 tokens beyond the tolerance: the comparison above would catch it.
    let wrong = BertConfig { relative_attention_max_distance: 64, ..config };
    let wrong = Bert::load(&wrong, &dir.join("model.safetensors"), &device).unwrap();
    let long = records.iter().find(|r| r["n_tokens"].as_u64().unwrap() > 40).unwrap();
    let diff = hidden_diff(&wrong, long, &device);
    eprintln!("mpnet parity: with max distance 64 instead of 128, input {} ({} tokens) moves by {diff:.1e}", long["index"], long["n_tokens"]);
    assert!(diff > TOLERANCE, "a wrong relative-position bucket went unnoticed (max difference {diff:e})");
}
