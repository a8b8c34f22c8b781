//! Tokenizers of the reference implementations, shared by every overlap metric.

/// Python's `str.isspace()`: Unicode whitespace plus the ASCII separators `\x1c`–`\x1f`.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.split()` with no argument.
pub fn py_split(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_py_space).filter(|t| !t.is_empty())
}

/// Python's `str.rstrip()` with no argument.
pub fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_py_space)
}

/// sacrebleu 2.6.0's `13a` tokenizer (mteval-v13a): the result is the tokens joined by single
/// spaces, as sacrebleu returns it.
///
/// # Examples
/// ```
/// use dialeval_metrics::text::tokenize::tokenize_13a;
/// assert_eq!(tokenize_13a("i'm so shy. it costs $1,000-2,000!"), "i'm so shy . it costs $ 1,000 - 2,000 !");
/// ```
pub fn tokenize_13a(line: &str) -> String {
    let mut line = line.replace("<skipped>", "").replace("-\n", "").replace('\n', " ");
    if line.contains('&') {
        line = line.replace("&quot;", "\"").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    }
    let padded: Vec<char> = format!(" {line} ").chars().collect();
    // 1. ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 "
    let mut a = Vec::with_capacity(padded.len() * 2);
    for &c in &padded {
        if matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/') {
            a.extend([' ', c, ' ']);
        } else {
            a.push(c);
        }
    }
    // 2. ([^0-9])([\.,]) -> "\1 \2 "
    let b = sub_pairs(&a, |x, y| !x.is_ascii_digit() && matches!(y, '.' | ','), |x, y, out| out.extend([x, ' ', y, ' ']));
    // 3. ([\.,])([^0-9]) -> " \1 \2"
    let c = sub_pairs(&b, |x, y| matches!(x, '.' | ',') && !y.is_ascii_digit(), |x, y, out| out.extend([' ', x, ' ', y]));
    // 4. ([0-9])(-) -> "\1 \2 "
    let d = sub_pairs(&c, |x, y| x.is_ascii_digit() && y == '-', |x, y, out| out.extend([x, ' ', y, ' ']));
    let s: String = d.into_iter().collect();
    py_split(&s).collect::<Vec<_>>().join(" ")
}

/// `re.sub` of a two-character pattern: leftmost, non-overlapping matches.
fn sub_pairs(s: &[char], matches: impl Fn(char, char) -> bool, replace: impl Fn(char, char, &mut Vec<char>)) -> Vec<char> {
    let mut out = Vec::with_capacity(s.len() + s.len() / 2);
    let mut i = 0;
    while i < s.len() {
        if i + 1 < s.len() && matches(s[i], s[i + 1]) {
            replace(s[i], s[i + 1], &mut out);
            i += 2;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// rouge-score 0.1.2's tokenizer: lowercase, every run of characters outside `[a-z0-9]`
/// becomes a space, split; with a stemmer, tokens longer than 3 characters are stemmed.
pub fn tokenize_rouge(text: &str, stem: Option<&dyn Fn(&str) -> String>) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut tokens = Vec::new();
    let mut current = String::new();
    for c in lower.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            current.push(c);
        } else if !current.is_empty() {
            tokens.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    if let Some(stem) = stem {
        for t in &mut tokens {
            if t.chars().count() > 3 {
                *t = stem(t);
            }
        }
        tokens.retain(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirteen_a_keeps_apostrophes_and_number_punctuation() {
        assert_eq!(tokenize_13a("that's 3.5 and 1,5.x"), "that's 3.5 and 1,5 . x");
        assert_eq!(tokenize_13a("a..b"), "a . . b");
        assert_eq!(tokenize_13a("&amp; &lt;tag&gt;"), "& < tag >");
        assert_eq!(tokenize_13a("  "), "");
    }

    #[test]
    fn rouge_tokens() {
        assert_eq!(tokenize_rouge("I'm so SHY!", None), ["i", "m", "so", "shy"]);
        let upper = |s: &str| s.to_uppercase();
        // a stem outside [a-z0-9] is dropped, as rouge-score's validity filter does
        assert_eq!(tokenize_rouge("cats and dogs", Some(&upper)), ["and"]);
    }
}
