//! The same SLM and BERT encoder on a wgpu device (a GPU, or Mesa's lavapipe software Vulkan
//! adapter in CI) agree with flex: a forward pass and one Adam step from the same weights.
//! Part of `cargo test --workspace --all-features`; alone: `cargo test -p dialeval-slm-model --features wgpu --test wgpu`.
#![cfg(feature = "wgpu")]
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::DeviceKind;
use common::{batch, config};
use dialeval_slm_model::bert::BertConfig;
use dialeval_slm_model::{Mode, Slm};

fn gpu() -> Device {
    Device::wgpu(DeviceKind::DefaultDevice)
}

fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_into_vec::<f32>().unwrap()
}

fn assert_close(a: &[f32], b: &[f32], tol: f32, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= tol * x.abs().max(1.0), "{what}[{i}]: flex {x} vs wgpu {y}");
    }
}

/// One Adam step (rate 1e-2) on the test batch under `mode`: the loss before it, and the model after.
fn adam_step(m: Slm, device: &Device, mode: Mode) -> (f32, Slm) {
    let mut optim = AdamConfig::new().init();
    let (loss, _) = m.loss(&batch(device), mode);
    let before = loss.clone().into_scalar::<f32>();
    let grads = GradientsParams::from_grads(loss.backward(), &m);
    (before, optim.step(1e-2, m, grads))
}

#[test]
fn slm_forward_and_one_training_step_match_flex() {
    let cpu = Device::flex().autodiff();
    cpu.seed(5);
    let model = config().init(&cpu);
    let gpu = gpu().autodiff();
    let model_gpu = model.clone().fork(&gpu);
    for mode in [Mode::Gated, Mode::TextOnly, Mode::GraphOnly] {
        let a = values(model.forward(&batch(&cpu), mode).logits);
        let b = values(model_gpu.forward(&batch(&gpu), mode).logits);
        assert_close(&a, &b, 1e-3, &format!("{mode:?} logits"));
    }
    let step = |m: Slm, device: &Device| {
        let (before, m) = adam_step(m, device, Mode::Gated);
        let after = m.loss(&batch(device), Mode::Gated).0.into_scalar::<f32>();
        (before, after, values(m.forward(&batch(device), Mode::Gated).logits))
    };
    let (b_cpu, a_cpu, l_cpu) = step(model, &cpu);
    let (b_gpu, a_gpu, l_gpu) = step(model_gpu, &gpu);
    assert_close(&[b_cpu, a_cpu], &[b_gpu, a_gpu], 1e-3, "loss before and after the step");
    assert_close(&l_cpu, &l_gpu, 2e-3, "logits after the step");
}

#[test]
fn residual_slm_training_step_matches_flex() {
    let cpu = Device::flex().autodiff();
    cpu.seed(6);
    let model = config().with_graph_residual(true).with_graph_term_penalty(0.1).init(&cpu);
    let gpu = gpu().autodiff();
    let model_gpu = model.clone().fork(&gpu);
    let step = |m: Slm, device: &Device| {
        let (before, m) = adam_step(m, device, Mode::Residual);
        let out = m.forward(&batch(device), Mode::Residual);
        let term = out.graph_term.map(values).unwrap_or_default();
        (before, values(out.logits), term)
    };
    let (b_cpu, l_cpu, t_cpu) = step(model, &cpu);
    let (b_gpu, l_gpu, t_gpu) = step(model_gpu, &gpu);
    assert_close(&[b_cpu], &[b_gpu], 1e-3, "loss before the step");
    assert_close(&l_cpu, &l_gpu, 2e-3, "logits after the step");
    assert!(t_cpu.iter().any(|t| t.abs() > 1e-4), "the graph term did not move: {t_cpu:?}");
    assert_close(&t_cpu, &t_gpu, 2e-3, "graph term after the step");
}

#[test]
fn bert_forward_matches_flex() {
    let config: BertConfig =
        serde_json::from_str(r#"{"vocab_size": 30, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 32, "max_position_embeddings": 16}"#).unwrap();
    let cpu = Device::flex();
    cpu.seed(7);
    let model = config.init(&cpu);
    let gpu = gpu();
    let model_gpu = model.clone().fork(&gpu);
    let run = |m: &dialeval_slm_model::bert::Bert, device: &Device| {
        let tokens = Tensor::<2, Int>::from_data(TensorData::new(vec![2_i64, 5, 7, 3, 2, 9, 3, 0], [2, 4]), device);
        let pad = Tensor::<2, Bool>::from_data(TensorData::new(vec![false, false, false, false, false, false, false, true], [2, 4]), device);
        values(m.forward(tokens, Tensor::zeros([2, 4], device), pad))
    };
    assert_close(&run(&model, &cpu), &run(&model_gpu, &gpu), 1e-3, "hidden states");
}
