//! The main job's families, chosen by name: every family of the toolkit in the order it runs,
//! each added to a [`Pipeline`] or recorded there as skipped with its reason (left out by the
//! caller, no encoder, no checkpoint for this encoder, no LLM configured). The `dialeval
//! evaluate` command and the Python package's `evaluate` build their pipelines with it.

use std::path::PathBuf;

use dialeval_amr_graph::smatch::SmatchConfig;
use dialeval_datasets::amr::AmrIndex;
use dialeval_metrics::embedding::MultiRef;

use crate::error::{Error, Result};
use crate::families::{LengthFamily, LexicalFamily, SmatchFamily, SpecificityFamily};
use crate::family::MetricFamily;
use crate::models::{Built, ModelBundle, ModelSource};
use crate::pipeline::Pipeline;

/// A metric family of the main job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FamilyName {
    /// Response length.
    Length,
    /// The response's specificity (NIDF).
    Specificity,
    /// BLEU, ROUGE, METEOR.
    Lexical,
    /// BERTScore and the embedding-average metrics.
    Embedding,
    /// The zero-shot cosines of the response with the last context turns.
    ContextCosine,
    /// BERT-RUBER.
    BertRuber,
    /// The AMR-gated SLM.
    Slm,
    /// The fine-tuned text encoder.
    FineTuned,
    /// Smatch against the references' graphs.
    Smatch,
    /// The LLM judge.
    Llm,
}

impl FamilyName {
    /// Every family, in the order they run.
    pub const ALL: [Self; 10] = [Self::Length, Self::Specificity, Self::Lexical, Self::Embedding, Self::ContextCosine, Self::BertRuber, Self::Slm, Self::FineTuned, Self::Smatch, Self::Llm];

    /// The name used in flags, caches and reports (`bert_ruber`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Length => "length",
            Self::Specificity => "specificity",
            Self::Lexical => "lexical",
            Self::Embedding => "embedding",
            Self::ContextCosine => "context_cosine",
            Self::BertRuber => "bert_ruber",
            Self::Slm => "slm",
            Self::FineTuned => "fine_tuned",
            Self::Smatch => "smatch",
            Self::Llm => "llm",
        }
    }
}

impl std::fmt::Display for FamilyName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for FamilyName {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| Error::Config(format!("unknown family {s:?}; the families are {}", Self::ALL.map(Self::name).join(", "))))
    }
}

/// What the families of [`add_families`] read beside the model bundle.
pub struct JobFamilies<'a, L> {
    /// Families left out (recorded as skipped, "left out by the caller").
    pub skip: &'a [FamilyName],
    /// Why the skipped families are left out, as the caller names it (`--skip`, `skip=`).
    pub skip_reason: &'a str,
    /// The graphs attached to the corpus.
    pub amr: &'a AmrIndex,
    /// The files those graphs came from (Smatch reads the references' graphs from them).
    pub amr_files: &'a [PathBuf],
    /// How several references combine for the embedding metrics, BERT-RUBER's referenced score
    /// and Smatch.
    pub references: MultiRef,
    /// The LLM judge, or why it does not run.
    pub llm: Built<L>,
}

/// How [`add_families`] reports a checkpoint's source and a training run's progress.
pub struct JobObserver<'a> {
    /// Where a learned family's checkpoint comes from (shipped, given, trained here).
    pub notice: &'a dyn Fn(FamilyName, &ModelSource),
    /// Training progress (`epoch, step, steps`) of a checkpoint trained here.
    pub epochs: &'a dyn Fn(FamilyName, usize, usize, usize),
}

impl JobObserver<'_> {
    /// Reports nothing.
    pub const SILENT: JobObserver<'static> = JobObserver { notice: &|_, _| {}, epochs: &|_, _, _, _| {} };
}

fn add<F: MetricFamily + 'static>(pipeline: &mut Pipeline, name: FamilyName, built: Built<F>) {
    match built {
        Built::Ready(family) => {
            pipeline.add(family);
        }
        Built::Skipped(reason) => {
            pipeline.skip(name.name(), reason);
        }
    }
}

/// Adds every family of the main job to `pipeline` in [`FamilyName::ALL`]'s order, the learned
/// ones built from `bundle`: each runs or is recorded as skipped with its reason.
///
/// # Errors
/// A family that should run and cannot be built (an unreadable checkpoint, WordNet or AMR file
/// that fails, a training run that fails).
pub fn add_families<L: MetricFamily + 'static>(pipeline: &mut Pipeline, bundle: &ModelBundle, families: JobFamilies<'_, L>, observe: &JobObserver<'_>) -> Result<()> {
    let mut llm = Some(families.llm);
    for name in FamilyName::ALL {
        if families.skip.contains(&name) {
            pipeline.skip(name.name(), families.skip_reason);
            continue;
        }
        let notice = |source: &ModelSource| (observe.notice)(name, source);
        let epochs = |e, s, n| (observe.epochs)(name, e, s, n);
        match name {
            FamilyName::Length => add(pipeline, name, Built::Ready(LengthFamily)),
            FamilyName::Specificity => add(pipeline, name, Built::Ready(SpecificityFamily::new()?)),
            FamilyName::Lexical => add(pipeline, name, Built::Ready(LexicalFamily::new()?)),
            FamilyName::Embedding => add(pipeline, name, bundle.embedding()),
            FamilyName::ContextCosine => add(pipeline, name, bundle.context_cosine()),
            FamilyName::BertRuber => add(pipeline, name, bundle.bert_ruber(&notice, &epochs)?),
            FamilyName::Slm => add(pipeline, name, bundle.slm(&notice, &epochs)?),
            FamilyName::FineTuned => add(pipeline, name, bundle.fine_tuned()?),
            FamilyName::Smatch => {
                add(pipeline, name, Built::Ready(SmatchFamily::new(families.amr, families.amr_files, SmatchConfig::default())?.with_references(families.references)));
            }
            FamilyName::Llm => {
                if let Some(built) = llm.take() {
                    add(pipeline, name, built);
                }
            }
        }
    }
    Ok(())
}
