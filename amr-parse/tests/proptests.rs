//! Arbitrary input to the parser's entry points: `validate` and `repair` on any text, and the
//! command protocol on any bytes a parser program may print — a typed result per sentence,
//! never a panic or a hang.
#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use dialeval_amr_parse::{AmrParser, CommandAmrParser, collapse_runaway, repair, validate};
use proptest::prelude::*;

/// PENMAN-ish noise: parentheses, slashes, roles, concepts, quotes.
fn penmanish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("(".to_owned()),
            Just(")".to_owned()),
            Just(" / ".to_owned()),
            Just(" :ARG0 ".to_owned()),
            Just(" :mod ".to_owned()),
            Just("\"".to_owned()),
            Just("\n".to_owned()),
            Just("# ::id x\n".to_owned()),
            "[a-z]{1,6}(-0[1-9])?",
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn validate_repair_and_collapse_never_panic(text in penmanish(), bytes in proptest::collection::vec(any::<char>(), 0..80)) {
        let noise: String = bytes.into_iter().collect();
        for t in [text.as_str(), noise.as_str()] {
            let _ = validate(t);
            let (fixed, _) = repair(t);
            // What repair returns is either a valid graph or rejected by validate with a reason.
            if let Err(why) = validate(&fixed) {
                prop_assert!(!why.to_string().is_empty());
            }
            let _ = collapse_runaway(t);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A parser program printing arbitrary bytes: one typed result per sentence.
    #[test]
    fn the_command_protocol_never_panics_on_output(out in proptest::collection::vec(any::<u8>(), 0..300), noise in penmanish()) {
        for bytes in [out, noise.into_bytes()] {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let script = format!("import sys; sys.stdin.read(); sys.stdout.buffer.write(bytes.fromhex('{hex}'))");
            let parser = CommandAmrParser::new("python3", vec!["-c".into(), script]);
            let results = parser.parse_batch(&["the boy wants to go", "hello"]);
            prop_assert_eq!(results.len(), 2);
        }
    }
}
