//! The SLM on the flex CPU backend: shapes, probabilities, the contrastive term's gradients in
//! both encoders, and a training step that lowers the loss.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use dialeval_slm_model::{GraphBatch, GraphEncoderConfig, Mode, SlmBatch, SlmConfig, TextEncoderConfig, contrastive_loss};

const BATCH: usize = 4;
const SEQ: usize = 10;
const NODES: usize = 5;
const PATH: usize = 3;

fn ints<const D: usize>(values: Vec<i64>, shape: [usize; D], device: &Device) -> Tensor<D, Int> {
    Tensor::<D, Int>::from_data(TensorData::new(values, shape), device)
}

fn graph(seed: i64, device: &Device) -> GraphBatch {
    let concepts: Vec<i64> = (0..BATCH * NODES).map(|i| if i % NODES == NODES - 1 && i % 2 == 0 { 0 } else { 1 + (i as i64 * 7 + seed) % 19 }).collect();
    let pad: Vec<bool> = concepts.iter().map(|&c| c == 0).collect();
    let paths: Vec<i64> = (0..BATCH * NODES * NODES * PATH).map(|i| if i % PATH == PATH - 1 { 0 } else { 1 + (i as i64 * 5 + seed) % 11 }).collect();
    GraphBatch {
        concepts: ints(concepts, [BATCH, NODES], device),
        paths: ints(paths, [BATCH, NODES, NODES, PATH], device),
        pad: Tensor::<2, Bool>::from_data(TensorData::new(pad, [BATCH, NODES]), device),
    }
}

fn batch(device: &Device) -> SlmBatch {
    let tokens: Vec<i64> = (0..BATCH * SEQ).map(|i| if i % SEQ >= SEQ - 2 && i / SEQ == 1 { 0 } else { 2 + (i as i64 * 3) % 29 }).collect();
    let pad: Vec<bool> = tokens.iter().map(|&t| t == 0).collect();
    let segments: Vec<i64> = (0..BATCH * SEQ).map(|i| i64::from(i % SEQ >= SEQ / 2)).collect();
    SlmBatch {
        tokens: ints(tokens, [BATCH, SEQ], device),
        segments: ints(segments, [BATCH, SEQ], device),
        pad: Tensor::<2, Bool>::from_data(TensorData::new(pad, [BATCH, SEQ]), device),
        context_graph: graph(1, device),
        response_graph: graph(2, device),
        labels: ints(vec![1, 0, 1, 0], [BATCH], device),
    }
}

fn config() -> SlmConfig {
    SlmConfig::new(
        TextEncoderConfig::new(32).with_d_model(16).with_d_ff(32).with_n_heads(2).with_n_layers(1).with_max_len(SEQ).with_dropout(0.0),
        GraphEncoderConfig::new(20, 12).with_d_model(16).with_n_heads(2).with_n_layers(1),
    )
}

#[test]
fn forward_gives_probabilities_for_every_mode() {
    let device = Device::flex();
    device.seed(1);
    let model = config().init(&device);
    let b = batch(&device);
    for mode in [Mode::Gated, Mode::TextOnly, Mode::GraphOnly, Mode::Concat] {
        let out = model.forward(&b, mode);
        assert_eq!(out.logits.dims(), [BATCH, 2]);
        assert_eq!(out.sentence.dims(), [BATCH, 16]);
        let p: Vec<f32> = model.probability(&b, mode).into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(p.len(), BATCH);
        assert!(p.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)), "{p:?}");
    }
}

#[test]
fn contrastive_term_has_gradients_in_both_encoders() {
    let device = Device::flex().autodiff();
    device.seed(2);
    let model = config().init(&device);
    let b = batch(&device);
    let out = model.forward(&b, Mode::Gated);
    let loss = contrastive_loss(out.sentence, out.graph, b.labels.clone(), 0.1);
    assert!(loss.clone().into_scalar::<f32>() > 0.0);
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    let (text, graph) = model.embedding_grad_norms(&grads);
    assert!(text > 0.0, "text encoder gets no gradient from the contrastive term");
    assert!(graph > 0.0, "graph encoder gets no gradient from the contrastive term");
}

#[test]
fn training_steps_lower_the_loss() {
    let device = Device::flex().autodiff();
    device.seed(3);
    let mut model = config().init(&device);
    let mut optim = AdamConfig::new().init();
    let b = batch(&device);
    let first = model.loss(&b, Mode::Gated).0.into_scalar::<f32>();
    for _ in 0..30 {
        let (loss, _) = model.loss(&b, Mode::Gated);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
    }
    let last = model.loss(&b, Mode::Gated).0.into_scalar::<f32>();
    assert!(last < first * 0.5, "loss {first} -> {last}");
    // The inference copy scores without autodiff.
    let valid = model.valid();
    let p: Vec<f32> = valid.probability(&batch(&Device::flex()), Mode::Gated).into_data().try_to_vec::<f32>().unwrap();
    assert!(p[0] > 0.5 && p[1] < 0.5, "{p:?}");
}
