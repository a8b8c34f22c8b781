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
    let model = config().with_graph_residual(true).init(&device);
    let b = batch(&device);
    for mode in [Mode::Gated, Mode::TextOnly, Mode::GraphOnly, Mode::Concat, Mode::Residual] {
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

fn logits(model: &dialeval_slm_model::Slm, b: &dialeval_slm_model::SlmBatch, mode: Mode) -> Vec<f32> {
    model.forward(b, mode).logits.into_data().convert::<f32>().try_to_vec::<f32>().unwrap()
}

fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0_f32, f32::max)
}

#[test]
fn the_residual_graph_term_starts_at_zero_and_moves_only_items_with_graphs() {
    let device = Device::flex().autodiff();
    device.seed(4);
    let mut model = config().with_graph_residual(true).init(&device);
    let b = batch(&device);
    // Untrained, the term is zero: the text side's logits.
    assert!(largest_difference(&logits(&model, &b, Mode::Residual), &logits(&model, &b, Mode::TextOnly)) < 1e-6);
    let mut optim = AdamConfig::new().init();
    for _ in 0..20 {
        let (loss, _) = model.loss(&b, Mode::Residual);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
    }
    // Trained, the term moves the items that read graphs, and only them: with the first two
    // items' graphs marked absent, those two get the text side's logits exactly.
    let with = logits(&model, &b, Mode::Residual);
    let text = logits(&model, &b, Mode::TextOnly);
    assert!(largest_difference(&with, &text) > 1e-3, "the graph term did not train: {with:?} {text:?}");
    let mut partial = b.clone();
    partial.graph_present = Tensor::<2>::from_data(TensorData::new(vec![0.0_f32, 0.0, 1.0, 1.0], [BATCH, 1]), &device);
    let mixed = logits(&model, &partial, Mode::Residual);
    assert_eq!(&mixed[..4], &text[..4], "items without graphs must read the text side alone");
    assert_eq!(&mixed[4..], &with[4..]);
    // The negative class's logit is never touched.
    assert!(largest_difference(&[with[0], with[2], with[4], with[6]], &[text[0], text[2], text[4], text[6]]) < 1e-6);
    // Under this mode the contrastive term reaches the graph encoder only: the text side's
    // gradient of the whole loss is that of the cross-entropy alone.
    let (loss, _) = model.loss(&b, Mode::Residual);
    let (text_whole, graph_whole) = model.embedding_grad_norms(&GradientsParams::from_grads(loss.backward(), &model));
    let ce = burn::nn::loss::CrossEntropyLoss::new(None, &device).forward(model.forward(&b, Mode::Residual).logits, b.labels.clone());
    let (text_ce, graph_ce) = model.embedding_grad_norms(&GradientsParams::from_grads(ce.backward(), &model));
    assert!((text_whole - text_ce).abs() <= 1e-5 * text_ce.max(1e-6), "text side: {text_whole} against {text_ce} from the cross-entropy alone");
    assert!((graph_whole - graph_ce).abs() > 1e-6, "the contrastive term does not reach the graph encoder");
}

#[test]
fn the_graph_term_penalty_shrinks_the_term() {
    let device = Device::flex().autodiff();
    let trained_term = |penalty: f64| {
        device.seed(5);
        let mut model = config().with_graph_residual(true).with_graph_term_penalty(penalty).init(&device);
        let mut optim = AdamConfig::new().init();
        let b = batch(&device);
        for _ in 0..20 {
            let (loss, _) = model.loss(&b, Mode::Residual);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(1e-2, model, grads);
        }
        let term = model.forward(&b, Mode::Residual).graph_term.unwrap();
        term.powf_scalar(2.0).mean().into_scalar::<f32>()
    };
    let (free, penalised) = (trained_term(0.0), trained_term(10.0));
    assert!(free > 0.0 && penalised < 0.5 * free, "mean square of the term: {free} free, {penalised} penalised");
    // The other modes have no term.
    let model = config().init(&device);
    assert!(model.forward(&batch(&device), Mode::Gated).graph_term.is_none());
}
