//! Criterion benchmarks of the SLM on the flex CPU backend at fixed shapes: one training step
//! (forward, backward, Adam update) and batched inference.
//!
//! Shapes: batch 16, 64 tokens, 32 nodes per graph, paths of 4 labels, d_model 64, 2 layers each.
#![allow(missing_docs, clippy::panic, clippy::unwrap_used)] // criterion macros; benches fail loudly

use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use dialeval_slm_model::model::{GraphBatch, GraphEncoderConfig, Mode, SlmBatch, SlmConfig, TextEncoderConfig};

const BATCH: usize = 16;
const SEQ: usize = 64;
const NODES: usize = 32;
const PATH: usize = 4;

fn ints<const D: usize>(n: usize, modulo: i64, shape: [usize; D], device: &Device) -> Tensor<D, Int> {
    Tensor::<D, Int>::from_data(TensorData::new((0..n).map(|i| 1 + (i as i64 * 7919) % modulo).collect::<Vec<_>>(), shape), device)
}

fn graph(device: &Device) -> GraphBatch {
    GraphBatch {
        concepts: ints(BATCH * NODES, 499, [BATCH, NODES], device),
        paths: ints(BATCH * NODES * NODES * PATH, 99, [BATCH, NODES, NODES, PATH], device),
        pad: Tensor::<2, Bool>::from_data(TensorData::new(vec![false; BATCH * NODES], [BATCH, NODES]), device),
    }
}

fn batch(device: &Device) -> SlmBatch {
    SlmBatch {
        tokens: ints(BATCH * SEQ, 1999, [BATCH, SEQ], device),
        segments: Tensor::<2, Int>::from_data(TensorData::new((0..BATCH * SEQ).map(|i| i64::from(i % SEQ >= SEQ / 2)).collect::<Vec<_>>(), [BATCH, SEQ]), device),
        pad: Tensor::<2, Bool>::from_data(TensorData::new(vec![false; BATCH * SEQ], [BATCH, SEQ]), device),
        context_graph: graph(device),
        response_graph: graph(device),
        labels: Tensor::<1, Int>::from_data(TensorData::new((0..BATCH).map(|i| (i % 2) as i64).collect::<Vec<_>>(), [BATCH]), device),
    }
}

fn config() -> SlmConfig {
    SlmConfig::new(
        TextEncoderConfig::new(2000).with_d_model(64).with_d_ff(128).with_n_layers(2).with_max_len(SEQ),
        GraphEncoderConfig::new(500, 100).with_d_model(64).with_n_layers(2),
    )
}

fn bench_slm(c: &mut Criterion) {
    let mut group = c.benchmark_group("slm");
    group.sample_size(10);
    let device = Device::flex().autodiff();
    device.seed(0);
    let mut model = config().init(&device);
    let mut optim = AdamConfig::new().init();
    let b = batch(&device);
    group.bench_function("train_step_b16", |bench| {
        bench.iter(|| {
            let (loss, _) = model.loss(&b, Mode::Gated);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(1e-3, model.clone(), grads);
        });
    });
    let plain = Device::flex();
    let valid = model.valid();
    let b = batch(&plain);
    group.bench_function("inference_b16", |bench| bench.iter(|| valid.probability(&b, Mode::Gated).into_data()));
    group.finish();
}

criterion_group!(benches, bench_slm);
criterion_main!(benches);
