//! The SLM on the flex CPU backend: shapes, probabilities, the contrastive term's gradients in
//! both encoders, and a training step that lowers the loss.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use dialeval_slm_model::{Mode, contrastive_loss};

mod common;

use common::{BATCH, batch, config};

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
