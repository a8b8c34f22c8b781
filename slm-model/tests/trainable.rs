//! Every float parameter of the models is trained: on a device with autodiff each one requires
//! gradients, so the optimiser moves it. (A parameter built with `Param::initialized` from a
//! plain tensor does not: BERT-RUBER's bilinear matrices and the learned "no knowledge" vectors
//! once stayed at their random initial values through training.)
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use burn::module::{Module, ModuleVisitor, Param};
use burn::prelude::{Device, Tensor};
use dialeval_slm_model::model::{GraphEncoderConfig, PretrainedHeadConfig, SlmConfig, TextEncoderConfig};
use dialeval_slm_model::ruber::RuberConfig;

/// Counts the float parameters, and lists those that do not require gradients (by shape).
#[derive(Default)]
struct Frozen {
    seen: usize,
    frozen: Vec<Vec<usize>>,
}

impl ModuleVisitor for Frozen {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        self.seen += 1;
        let value = param.val();
        if !value.is_require_grad() {
            self.frozen.push(value.dims().to_vec());
        }
    }
}

fn frozen(module: &impl Module) -> Frozen {
    let mut visitor = Frozen::default();
    module.visit(&mut visitor);
    visitor
}

#[test]
fn every_slm_parameter_requires_gradients_with_every_channel() {
    let device = Device::flex().autodiff();
    let config = SlmConfig::new(TextEncoderConfig::new(50).with_d_model(16).with_d_ff(32).with_n_layers(1), GraphEncoderConfig::new(20, 10).with_d_model(16).with_n_layers(1))
        .with_pretrained(Some(PretrainedHeadConfig::new(8, 16).with_knowledge(true).with_turns(true)));
    let v = frozen(&config.init(&device));
    assert!(v.seen > 10, "{} parameters", v.seen);
    assert!(v.frozen.is_empty(), "parameters that training would never move, by shape: {:?}", v.frozen);
}

#[test]
fn every_bert_ruber_parameter_requires_gradients_with_the_knowledge_channel() {
    let device = Device::flex().autodiff();
    for knowledge in [false, true] {
        let config = RuberConfig { knowledge, ..RuberConfig::default() };
        let v = frozen(&config.init(8, 50, &device));
        assert!(v.seen > 3, "{} parameters", v.seen);
        assert!(v.frozen.is_empty(), "knowledge {knowledge}: parameters that training would never move, by shape: {:?}", v.frozen);
    }
}
