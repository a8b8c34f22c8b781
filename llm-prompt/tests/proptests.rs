//! The answer parser on any text: a score it returns is on the scale, a documented answer form
//! is always read, and nothing panics.
#![allow(clippy::panic, clippy::unwrap_used)]

use dialeval_common::Criterion;
use dialeval_llm_prompt::prompt::Scale;
use dialeval_llm_prompt::score::{OffScale, parse_score};
use proptest::prelude::*;

proptest! {
    #[test]
    fn any_answer_gives_an_on_scale_score_none_or_an_error(text in "\\PC{0,120}", clamp in proptest::prop_oneof![Just(OffScale::Reject), Just(OffScale::Clamp)]) {
        let scale = Scale::new(1, 5).unwrap();
        if let Ok(Some(v)) = parse_score(&text, Criterion::Coherence, scale, clamp) {
            prop_assert!(scale.contains(v), "{v} from {text:?}");
        }
    }

    #[test]
    fn documented_forms_are_read(v in 1_u8..=5, noise in "[a-z ,.]{0,30}") {
        let scale = Scale::new(1, 5).unwrap();
        for answer in [format!("Score: {v}"), format!("{{\"coherence\": {v}}}"), format!("Coherence: {v}"), format!("{v}/5"), format!("{v}")] {
            let got = parse_score(&answer, Criterion::Coherence, scale, OffScale::Reject).unwrap();
            prop_assert_eq!(got, Some(f64::from(v)), "{}", answer);
        }
        // Words before a labelled score do not hide it.
        let answer = format!("{noise} Score: {v}");
        let got = parse_score(&answer, Criterion::Coherence, scale, OffScale::Reject).unwrap();
        prop_assert_eq!(got, Some(f64::from(v)), "{}", answer);
    }

    #[test]
    fn an_off_scale_number_is_an_error_unless_clamped(v in 6_u32..1000) {
        let scale = Scale::new(1, 5).unwrap();
        let answer = format!("Score: {v}");
        let strict = parse_score(&answer, Criterion::Coherence, scale, OffScale::Reject);
        prop_assert!(strict.is_err(), "{:?}", strict);
        let clamped = parse_score(&answer, Criterion::Coherence, scale, OffScale::Clamp).unwrap();
        prop_assert_eq!(clamped, Some(5.0));
    }
}
