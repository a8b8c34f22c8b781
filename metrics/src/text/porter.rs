//! The Porter stemmer (Porter 1980) exactly as nltk 3.10.4's `PorterStemmer()` in its default
//! `NLTK_EXTENSIONS` mode (`nltk/stem/porter.py`), the stemmer behind rouge-score's
//! `use_stemmer=True` and nltk's METEOR.

/// Irregular forms nltk maps directly (NLTK_EXTENSIONS).
const POOL: [(&str, &str); 17] = [
    ("sky", "sky"),
    ("skies", "sky"),
    ("dying", "die"),
    ("lying", "lie"),
    ("tying", "tie"),
    ("news", "news"),
    ("innings", "inning"),
    ("inning", "inning"),
    ("outings", "outing"),
    ("outing", "outing"),
    ("cannings", "canning"),
    ("canning", "canning"),
    ("howe", "howe"),
    ("proceed", "proceed"),
    ("exceed", "exceed"),
    ("succeed", "succeed"),
    ("sky", "sky"),
];

/// nltk's Porter stemmer in `NLTK_EXTENSIONS` mode.
///
/// # Examples
/// ```
/// use dialeval_metrics::text::porter::stem;
/// assert_eq!(stem("running"), "run");
/// assert_eq!(stem("generalizations"), "gener");
/// assert_eq!(stem("skies"), "sky");
/// ```
pub fn stem(word: &str) -> String {
    let lower = word.to_lowercase();
    if let Some((_, s)) = POOL.iter().find(|(k, _)| *k == lower) {
        return (*s).to_owned();
    }
    if word.chars().count() <= 2 {
        return lower;
    }
    let mut w: Vec<char> = lower.chars().collect();
    w = step1a(w);
    w = step1b(w);
    w = step1c(w);
    w = step2(w);
    w = step3(w);
    w = step4(w);
    w = step5a(w);
    w = step5b(w);
    w.into_iter().collect()
}

fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u')
}

/// nltk's `_is_consonant`.
fn is_consonant(w: &[char], mut i: usize) -> bool {
    if is_vowel(w[i]) {
        return false;
    }
    if w[i] == 'y' {
        let mut negate = false;
        while i > 0 && w[i] == 'y' {
            negate = !negate;
            i -= 1;
        }
        // nltk: (word[i] not in vowels) != negate
        return is_vowel(w[i]) == negate;
    }
    true
}

/// nltk's `_consonant_flags`.
fn consonant_flags(w: &[char]) -> Vec<bool> {
    let mut flags: Vec<bool> = Vec::with_capacity(w.len());
    for (i, &c) in w.iter().enumerate() {
        let flag = if is_vowel(c) {
            false
        } else if c == 'y' {
            if i == 0 { true } else { !flags[i - 1] }
        } else {
            true
        };
        flags.push(flag);
    }
    flags
}

/// Number of `vc` sequences in the consonant/vowel pattern.
fn measure(stem: &[char]) -> usize {
    let flags = consonant_flags(stem);
    flags.windows(2).filter(|p| !p[0] && p[1]).count()
}

fn positive_measure(stem: &[char]) -> bool {
    measure(stem) > 0
}

fn contains_vowel(stem: &[char]) -> bool {
    !consonant_flags(stem).iter().all(|&c| c)
}

fn ends_double_consonant(w: &[char]) -> bool {
    w.len() >= 2 && w[w.len() - 1] == w[w.len() - 2] && is_consonant(w, w.len() - 1)
}

fn ends_cvc(w: &[char]) -> bool {
    let n = w.len();
    (n >= 3 && is_consonant(w, n - 3) && !is_consonant(w, n - 2) && is_consonant(w, n - 1) && !matches!(w[n - 1], 'w' | 'x' | 'y'))
        || (n == 2 && !is_consonant(w, 0) && is_consonant(w, 1))
}

fn ends_with(w: &[char], suffix: &str) -> bool {
    let s: Vec<char> = suffix.chars().collect();
    w.len() >= s.len() && w[w.len() - s.len()..] == s[..]
}

fn without(w: &[char], suffix: &str) -> Vec<char> {
    w[..w.len() - suffix.chars().count()].to_vec()
}

fn with(mut stem: Vec<char>, replacement: &str) -> Vec<char> {
    stem.extend(replacement.chars());
    stem
}

/// A rule's suffix: a literal, or `*d` (a double consonant).
enum Suffix {
    Lit(&'static str),
    DoubleConsonant,
}

type Condition<'a> = Option<&'a dyn Fn(&[char]) -> bool>;

/// nltk's `_apply_rule_list`: the first rule whose suffix matches decides, whether or not its
/// condition holds.
fn apply_rules(w: Vec<char>, rules: &[(Suffix, String, Condition<'_>)]) -> Vec<char> {
    for (suffix, replacement, condition) in rules {
        match suffix {
            Suffix::DoubleConsonant => {
                if ends_double_consonant(&w) {
                    let stem = w[..w.len() - 2].to_vec();
                    return if condition.is_none_or(|c| c(&stem)) { with(stem, replacement) } else { w };
                }
            }
            Suffix::Lit(s) => {
                if ends_with(&w, s) {
                    let stem = without(&w, s);
                    return if condition.is_none_or(|c| c(&stem)) { with(stem, replacement) } else { w };
                }
            }
        }
    }
    w
}

fn simple_rules<'a>(rules: &[(&'static str, &str)], condition: &'a dyn Fn(&[char]) -> bool) -> Vec<(Suffix, String, Condition<'a>)> {
    rules.iter().map(|(s, r)| (Suffix::Lit(s), (*r).to_owned(), Some(condition))).collect()
}

fn step1a(w: Vec<char>) -> Vec<char> {
    if ends_with(&w, "ies") && w.len() == 4 {
        return with(without(&w, "ies"), "ie");
    }
    apply_rules(
        w,
        &[
            (Suffix::Lit("sses"), "ss".into(), None),
            (Suffix::Lit("ies"), "i".into(), None),
            (Suffix::Lit("ss"), "ss".into(), None),
            (Suffix::Lit("s"), String::new(), None),
        ],
    )
}

fn step1b(w: Vec<char>) -> Vec<char> {
    if ends_with(&w, "ied") {
        let replacement = if w.len() == 4 { "ie" } else { "i" };
        return with(without(&w, "ied"), replacement);
    }
    if ends_with(&w, "eed") {
        let stem = without(&w, "eed");
        return if measure(&stem) > 0 { with(stem, "ee") } else { w };
    }
    let mut intermediate = None;
    for suffix in ["ed", "ing"] {
        if ends_with(&w, suffix) {
            let stem = without(&w, suffix);
            if contains_vowel(&stem) {
                intermediate = Some(stem);
                break;
            }
        }
    }
    let Some(stem) = intermediate else { return w };
    let Some(&last) = stem.last() else { return stem };
    let not_lsz = move |_: &[char]| !matches!(last, 'l' | 's' | 'z');
    let cvc = |s: &[char]| measure(s) == 1 && ends_cvc(s);
    apply_rules(
        stem,
        &[
            (Suffix::Lit("at"), "ate".into(), None),
            (Suffix::Lit("bl"), "ble".into(), None),
            (Suffix::Lit("iz"), "ize".into(), None),
            (Suffix::DoubleConsonant, last.to_string(), Some(&not_lsz)),
            (Suffix::Lit(""), "e".into(), Some(&cvc)),
        ],
    )
}

fn step1c(w: Vec<char>) -> Vec<char> {
    let condition = |s: &[char]| s.len() > 1 && is_consonant(s, s.len() - 1);
    apply_rules(w, &[(Suffix::Lit("y"), "i".into(), Some(&condition))])
}

fn step2(w: Vec<char>) -> Vec<char> {
    if ends_with(&w, "alli") && positive_measure(&without(&w, "alli")) {
        return step2(with(without(&w, "alli"), "al"));
    }
    let pm = |s: &[char]| positive_measure(s);
    let mut rules = simple_rules(
        &[
            ("ational", "ate"),
            ("tional", "tion"),
            ("enci", "ence"),
            ("anci", "ance"),
            ("izer", "ize"),
            ("bli", "ble"),
            ("alli", "al"),
            ("entli", "ent"),
            ("eli", "e"),
            ("ousli", "ous"),
            ("ization", "ize"),
            ("ation", "ate"),
            ("ator", "ate"),
            ("alism", "al"),
            ("iveness", "ive"),
            ("fulness", "ful"),
            ("ousness", "ous"),
            ("aliti", "al"),
            ("iviti", "ive"),
            ("biliti", "ble"),
            ("fulli", "ful"),
        ],
        &pm,
    );
    // nltk: the `logi` rule tests the measure of the word minus its last three letters.
    let head_measure = positive_measure(&w[..w.len().saturating_sub(3)]);
    let logi = move |_: &[char]| head_measure;
    rules.push((Suffix::Lit("logi"), "log".into(), Some(&logi)));
    apply_rules(w, &rules)
}

fn step3(w: Vec<char>) -> Vec<char> {
    let pm = |s: &[char]| positive_measure(s);
    let rules = simple_rules(
        &[("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", "")],
        &pm,
    );
    apply_rules(w, &rules)
}

fn step4(w: Vec<char>) -> Vec<char> {
    let gt1 = |s: &[char]| measure(s) > 1;
    let ion = |s: &[char]| measure(s) > 1 && matches!(s.last(), Some('s' | 't'));
    let mut rules = simple_rules(
        &[
            ("al", ""),
            ("ance", ""),
            ("ence", ""),
            ("er", ""),
            ("ic", ""),
            ("able", ""),
            ("ible", ""),
            ("ant", ""),
            ("ement", ""),
            ("ment", ""),
            ("ent", ""),
        ],
        &gt1,
    );
    rules.push((Suffix::Lit("ion"), String::new(), Some(&ion)));
    rules.extend(simple_rules(&[("ou", ""), ("ism", ""), ("ate", ""), ("iti", ""), ("ous", ""), ("ive", ""), ("ize", "")], &gt1));
    apply_rules(w, &rules)
}

fn step5a(w: Vec<char>) -> Vec<char> {
    if ends_with(&w, "e") {
        let stem = without(&w, "e");
        let m = measure(&stem);
        if m > 1 || (m == 1 && !ends_cvc(&stem)) {
            return stem;
        }
    }
    w
}

fn step5b(w: Vec<char>) -> Vec<char> {
    let head_gt1 = measure(&w[..w.len().saturating_sub(1)]) > 1;
    let cond = move |_: &[char]| head_gt1;
    apply_rules(w, &[(Suffix::Lit("ll"), "l".into(), Some(&cond))])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_examples() {
        for (w, s) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("ties", "tie"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("hopping", "hop"),
            ("falling", "fall"),
            ("filing", "file"),
            ("happy", "happi"),
            ("relational", "relat"),
            ("electrical", "electr"),
            ("adjustment", "adjust"),
            ("controlling", "control"),
            ("dying", "die"),
            ("is", "is"),
        ] {
            assert_eq!(stem(w), s, "{w}");
        }
    }
}
