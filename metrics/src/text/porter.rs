//! The Porter stemmer (Porter 1980) exactly as nltk 3.10.4's `PorterStemmer()` in its default
//! `NLTK_EXTENSIONS` mode (`nltk/stem/porter.py`), the stemmer behind rouge-score's
//! `use_stemmer=True` and nltk's METEOR. Checked against nltk on 40,000 words
//! (`tests/fixtures/porter_nltk.tsv`).
//!
//! The word is stemmed in place in one character buffer; rules are static tables.

/// Irregular forms nltk maps directly (NLTK_EXTENSIONS).
const POOL: [(&str, &str); 16] = [
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
    step1a(&mut w);
    step1b(&mut w);
    step1c(&mut w);
    step2(&mut w);
    step3(&mut w);
    step4(&mut w);
    step5a(&mut w);
    step5b(&mut w);
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

/// nltk's `_consonant_flags`, one flag at a time.
fn consonant_flags(w: &[char]) -> impl Iterator<Item = bool> + '_ {
    let mut previous = false;
    w.iter().enumerate().map(move |(i, &c)| {
        let flag = if is_vowel(c) {
            false
        } else if c == 'y' {
            i == 0 || !previous
        } else {
            true
        };
        previous = flag;
        flag
    })
}

/// Number of `vc` sequences in the consonant/vowel pattern.
fn measure(stem: &[char]) -> usize {
    let mut count = 0;
    let mut previous = None;
    for flag in consonant_flags(stem) {
        if previous == Some(false) && flag {
            count += 1;
        }
        previous = Some(flag);
    }
    count
}

fn contains_vowel(stem: &[char]) -> bool {
    consonant_flags(stem).any(|c| !c)
}

fn ends_double_consonant(w: &[char]) -> bool {
    w.len() >= 2 && w[w.len() - 1] == w[w.len() - 2] && is_consonant(w, w.len() - 1)
}

fn ends_cvc(w: &[char]) -> bool {
    let n = w.len();
    (n >= 3 && is_consonant(w, n - 3) && !is_consonant(w, n - 2) && is_consonant(w, n - 1) && !matches!(w[n - 1], 'w' | 'x' | 'y')) || (n == 2 && !is_consonant(w, 0) && is_consonant(w, 1))
}

fn ends_with(w: &[char], suffix: &str) -> bool {
    let n = suffix.len(); // suffixes are ASCII
    w.len() >= n && w[w.len() - n..].iter().zip(suffix.chars()).all(|(a, b)| *a == b)
}

fn replace_suffix(w: &mut Vec<char>, suffix_len: usize, replacement: &str) {
    w.truncate(w.len() - suffix_len);
    w.extend(replacement.chars());
}

/// Conditions on the stem left once the suffix is removed.
#[derive(Clone, Copy)]
enum Cond {
    Always,
    PositiveMeasure,
    MeasureAbove1,
    /// `ion`: measure > 1 and the stem ends in `s` or `t`.
    Ion,
    /// A fixed answer computed from the whole word before the rule list runs.
    Fixed(bool),
}

impl Cond {
    fn holds(self, stem: &[char]) -> bool {
        match self {
            Self::Always => true,
            Self::PositiveMeasure => measure(stem) > 0,
            Self::MeasureAbove1 => measure(stem) > 1,
            Self::Ion => measure(stem) > 1 && matches!(stem.last(), Some('s' | 't')),
            Self::Fixed(b) => b,
        }
    }
}

/// nltk's `_apply_rule_list` for literal suffixes: the first rule whose suffix matches decides,
/// whether or not its condition holds.
fn apply_rules(w: &mut Vec<char>, rules: &[(&str, &str, Cond)]) {
    for &(suffix, replacement, cond) in rules {
        if ends_with(w, suffix) {
            let stem_len = w.len() - suffix.len();
            if cond.holds(&w[..stem_len]) {
                replace_suffix(w, suffix.len(), replacement);
            }
            return;
        }
    }
}

fn step1a(w: &mut Vec<char>) {
    if ends_with(w, "ies") && w.len() == 4 {
        replace_suffix(w, 3, "ie");
        return;
    }
    apply_rules(w, &[("sses", "ss", Cond::Always), ("ies", "i", Cond::Always), ("ss", "ss", Cond::Always), ("s", "", Cond::Always)]);
}

fn step1b(w: &mut Vec<char>) {
    if ends_with(w, "ied") {
        let replacement = if w.len() == 4 { "ie" } else { "i" };
        replace_suffix(w, 3, replacement);
        return;
    }
    if ends_with(w, "eed") {
        if measure(&w[..w.len() - 3]) > 0 {
            replace_suffix(w, 3, "ee");
        }
        return;
    }
    let mut cut = None;
    for suffix in ["ed", "ing"] {
        if ends_with(w, suffix) && contains_vowel(&w[..w.len() - suffix.len()]) {
            cut = Some(suffix.len());
            break;
        }
    }
    let Some(cut) = cut else { return };
    w.truncate(w.len() - cut);
    // The intermediate stem's rules: at/bl/iz, then *d (double consonant), then "" + cvc.
    for (suffix, replacement) in [("at", "ate"), ("bl", "ble"), ("iz", "ize")] {
        if ends_with(w, suffix) {
            replace_suffix(w, suffix.len(), replacement);
            return;
        }
    }
    if ends_double_consonant(w) {
        if let Some(&last) = w.last()
            && !matches!(last, 'l' | 's' | 'z')
        {
            w.pop();
        }
        return;
    }
    if measure(w) == 1 && ends_cvc(w) {
        w.push('e');
    }
}

fn step1c(w: &mut [char]) {
    if ends_with(w, "y") {
        let n = w.len() - 1;
        if n > 1 && is_consonant(&w[..n], n - 1) {
            w[n] = 'i';
        }
    }
}

fn step2(w: &mut Vec<char>) {
    if ends_with(w, "alli") && measure(&w[..w.len() - 4]) > 0 {
        replace_suffix(w, 4, "al");
        step2(w);
        return;
    }
    // nltk: the `logi` rule tests the measure of the word minus its last three letters.
    let logi = Cond::Fixed(measure(&w[..w.len().saturating_sub(3)]) > 0);
    let pm = Cond::PositiveMeasure;
    apply_rules(
        w,
        &[
            ("ational", "ate", pm),
            ("tional", "tion", pm),
            ("enci", "ence", pm),
            ("anci", "ance", pm),
            ("izer", "ize", pm),
            ("bli", "ble", pm),
            ("alli", "al", pm),
            ("entli", "ent", pm),
            ("eli", "e", pm),
            ("ousli", "ous", pm),
            ("ization", "ize", pm),
            ("ation", "ate", pm),
            ("ator", "ate", pm),
            ("alism", "al", pm),
            ("iveness", "ive", pm),
            ("fulness", "ful", pm),
            ("ousness", "ous", pm),
            ("aliti", "al", pm),
            ("iviti", "ive", pm),
            ("biliti", "ble", pm),
            ("fulli", "ful", pm),
            ("logi", "log", logi),
        ],
    );
}

fn step3(w: &mut Vec<char>) {
    let pm = Cond::PositiveMeasure;
    apply_rules(w, &[("icate", "ic", pm), ("ative", "", pm), ("alize", "al", pm), ("iciti", "ic", pm), ("ical", "ic", pm), ("ful", "", pm), ("ness", "", pm)]);
}

fn step4(w: &mut Vec<char>) {
    let gt1 = Cond::MeasureAbove1;
    apply_rules(
        w,
        &[
            ("al", "", gt1),
            ("ance", "", gt1),
            ("ence", "", gt1),
            ("er", "", gt1),
            ("ic", "", gt1),
            ("able", "", gt1),
            ("ible", "", gt1),
            ("ant", "", gt1),
            ("ement", "", gt1),
            ("ment", "", gt1),
            ("ent", "", gt1),
            ("ion", "", Cond::Ion),
            ("ou", "", gt1),
            ("ism", "", gt1),
            ("ate", "", gt1),
            ("iti", "", gt1),
            ("ous", "", gt1),
            ("ive", "", gt1),
            ("ize", "", gt1),
        ],
    );
}

fn step5a(w: &mut Vec<char>) {
    if ends_with(w, "e") {
        let stem = &w[..w.len() - 1];
        let m = measure(stem);
        if m > 1 || (m == 1 && !ends_cvc(stem)) {
            w.pop();
        }
    }
}

fn step5b(w: &mut Vec<char>) {
    if ends_with(w, "ll") && measure(&w[..w.len() - 1]) > 1 {
        w.pop();
    }
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
