//! Property tests of the correlation functions and the text metrics.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use dialeval_metrics::correlation::{CorrelationKind, correlate};
use dialeval_metrics::text::bleu::{Bleu, BleuConfig};
use dialeval_metrics::text::rouge::Rouge;
use dialeval_metrics::text::tokenize::{is_py_space, py_split, tokenize_13a};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn correlations_are_bounded_symmetric_and_rank_invariant(
        pairs in prop::collection::vec((-1000i32..1000, -50i32..50), 3..300)
    ) {
        let x: Vec<f64> = pairs.iter().map(|p| f64::from(p.0)).collect();
        let y: Vec<f64> = pairs.iter().map(|p| f64::from(p.1)).collect();
        for kind in CorrelationKind::ALL {
            let a = correlate(kind, &x, &y).unwrap();
            let b = correlate(kind, &y, &x).unwrap();
            if a.statistic.is_nan() {
                prop_assert!(a.undefined.is_some());
                continue;
            }
            prop_assert!((-1.0..=1.0).contains(&a.statistic));
            prop_assert!((a.statistic - b.statistic).abs() < 1e-12);
            prop_assert!(a.pvalue.is_nan() || (0.0..=1.0 + 1e-12).contains(&a.pvalue));
        }
        // A strictly increasing transform keeps Spearman and Kendall unchanged.
        let xt: Vec<f64> = x.iter().map(|v| (v / 100.0).exp()).collect();
        for kind in [CorrelationKind::Spearman, CorrelationKind::KendallTauB] {
            let (a, b) = (correlate(kind, &x, &y).unwrap(), correlate(kind, &xt, &y).unwrap());
            prop_assert!(a.statistic.is_nan() && b.statistic.is_nan() || (a.statistic - b.statistic).abs() < 1e-12);
        }
    }

    #[test]
    fn text_metrics_are_bounded_and_perfect_on_identity(text in "[a-z .,!?']{1,80}") {
        let bleu = Bleu::new(BleuConfig::sentence()).unwrap();
        let s = bleu.sentence(&text, &[&text]).unwrap();
        prop_assert!((0.0..=100.0 + 1e-9).contains(&s.score));
        if s.sys_len > 0 {
            prop_assert!((s.score - 100.0).abs() < 1e-9);
        }
        let rouge = Rouge::new(dialeval_metrics::text::rouge::Stemming::Porter);
        let r = rouge.score(&text, &text);
        // rouge-score gives 0 to texts without a token (punctuation only) and 1 otherwise.
        let expected = if rouge.tokens(&text).is_empty() { 0.0 } else { 1.0 };
        prop_assert!((r.rouge1.fmeasure - expected).abs() < 1e-12, "ROUGE-1 {} for {:?}", r.rouge1.fmeasure, text);
        prop_assert!((r.rouge_l.fmeasure - expected).abs() < 1e-12, "ROUGE-L {} for {:?}", r.rouge_l.fmeasure, text);
        prop_assert_eq!(rouge.tokens(&text).is_empty(), !text.chars().any(|c| c.is_ascii_alphabetic()));
    }

    #[test]
    fn tokenize_13a_only_moves_spaces(text in "[a-zA-Z0-9 .,;:!?'\"$%()\\[\\]{}<>/@#*+=_-]{0,80}") {
        let t = tokenize_13a(&text);
        // Single spaces between tokens, none at the ends.
        prop_assert!(!t.starts_with(' ') && !t.ends_with(' ') && !t.contains("  "), "{t:?}");
        // Without entities or line breaks nothing but spacing changes.
        let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        prop_assert_eq!(squeeze(&t), squeeze(&text));
        // Punctuation other than inside numbers and apostrophes stands alone.
        for token in t.split(' ') {
            if token.chars().count() > 1 {
                prop_assert!(!token.contains(['?', '!', ';', '(', ')', '[', ']', '{', '}', '<', '>', '"']), "{token:?} in {t:?}");
            }
        }
    }

    #[test]
    fn py_split_splits_like_python(text in "([a-zé0-9]{0,4}[ \t\n\r\u{0b}\u{0c}\u{1c}-\u{1f}\u{85}\u{a0}\u{2003}\u{3000}]{0,3}){0,12}") {
        let expected: Vec<&str> = text.split(is_py_space).filter(|t| !t.is_empty()).collect();
        prop_assert_eq!(py_split(&text).collect::<Vec<_>>(), expected);
    }
}
