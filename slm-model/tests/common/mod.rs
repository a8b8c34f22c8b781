//! A small fixed SLM configuration and batch shared by the model tests (flex and wgpu).
#![allow(dead_code)]

use burn::prelude::*;
use dialeval_slm_model::{GraphBatch, GraphEncoderConfig, SlmBatch, SlmConfig, TextEncoderConfig};

pub const BATCH: usize = 4;
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

pub fn batch(device: &Device) -> SlmBatch {
    let tokens: Vec<i64> = (0..BATCH * SEQ).map(|i| if i % SEQ >= SEQ - 2 && i / SEQ == 1 { 0 } else { 2 + (i as i64 * 3) % 29 }).collect();
    let pad: Vec<bool> = tokens.iter().map(|&t| t == 0).collect();
    let segments: Vec<i64> = (0..BATCH * SEQ).map(|i| i64::from(i % SEQ >= SEQ / 2)).collect();
    SlmBatch {
        text_features: None,
        knowledge: None,
        cross: None,
        tokens: ints(tokens, [BATCH, SEQ], device),
        segments: ints(segments, [BATCH, SEQ], device),
        pad: Tensor::<2, Bool>::from_data(TensorData::new(pad, [BATCH, SEQ]), device),
        context_graph: graph(1, device),
        response_graph: graph(2, device),
        graph_present: Tensor::<2>::ones([BATCH, 1], device),
        labels: ints(vec![1, 0, 1, 0], [BATCH], device),
    }
}

pub fn config() -> SlmConfig {
    SlmConfig::new(
        TextEncoderConfig::new(32).with_d_model(16).with_d_ff(32).with_n_heads(2).with_n_layers(1).with_max_len(SEQ).with_dropout(0.0),
        GraphEncoderConfig::new(20, 12).with_d_model(16).with_n_heads(2).with_n_layers(1),
    )
}
