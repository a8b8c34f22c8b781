//! Tokenizers of the reference implementations, shared by every overlap metric.

/// Python's `str.isspace()`: Unicode whitespace plus the ASCII separators `\x1c`–`\x1f`.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.split()` with no argument.
pub fn py_split(s: &str) -> PySplit<'_> {
    PySplit { rest: s, ascii: s.is_ascii() }
}

/// The words of [`py_split`]; an ASCII text is scanned by bytes (the common case), any other by
/// characters (Unicode whitespace counts).
#[derive(Debug, Clone)]
pub struct PySplit<'a> {
    rest: &'a str,
    ascii: bool,
}

impl<'a> Iterator for PySplit<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let (start, end) = if self.ascii {
            let space = |b: &u8| matches!(b, b' ' | b'\t'..=b'\r' | 0x1c..=0x1f);
            let bytes = self.rest.as_bytes();
            let start = bytes.iter().position(|b| !space(b))?;
            (start, bytes[start..].iter().position(space).map_or(bytes.len(), |e| start + e))
        } else {
            let start = self.rest.find(|c| !is_py_space(c))?;
            (start, self.rest[start..].find(is_py_space).map_or(self.rest.len(), |e| start + e))
        };
        let word = &self.rest[start..end];
        self.rest = &self.rest[end..];
        Some(word)
    }
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
    let s = tokenize_13a_spaced(line);
    let mut out = String::with_capacity(s.len());
    for token in py_split(&s) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(token);
    }
    out
}

/// [`tokenize_13a`] before its tokens are joined: a text whose [`py_split`] yields exactly the
/// tokens, for callers that split them anyway.
pub(crate) fn tokenize_13a_spaced(line: &str) -> String {
    let mut line = if line.contains("<skipped>") || line.contains('\n') { line.replace("<skipped>", "").replace("-\n", "").replace('\n', " ") } else { line.to_owned() };
    if line.contains('&') {
        line = line.replace("&quot;", "\"").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    }
    // Every pattern is ASCII and every insertion an ASCII space next to an ASCII byte, so the
    // passes can run on UTF-8 bytes: a multi-byte character's bytes are all `[^0-9]` and never
    // `[.,-]`, exactly as the character itself.
    let mut a = Vec::with_capacity(line.len() * 2 + 6);
    // f" {line} " after pass 1: each padding space becomes three.
    a.extend([b' ', b' ', b' ']);
    // 1. ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> " \1 "
    for &c in line.as_bytes() {
        if matches!(c, b'{'..=b'~' | b'['..=b'`' | b' '..=b'&' | b'('..=b'+' | b':'..=b'@' | b'/') {
            a.extend([b' ', c, b' ']);
        } else {
            a.push(c);
        }
    }
    a.extend([b' ', b' ', b' ']);
    // Passes 2-4 change nothing in a line without their characters (most lines have no digit
    // next to a '-', many no '.' or ','), so they run only when those occur.
    if memchr::memchr2(b'.', b',', &a).is_some() {
        // 2. ([^0-9])([\.,]) -> "\1 \2 "
        a = sub_pairs(&a, |x, y| !x.is_ascii_digit() && matches!(y, b'.' | b','), |x, y, out| out.extend([x, b' ', y, b' ']));
        // 3. ([\.,])([^0-9]) -> " \1 \2"
        a = sub_pairs(&a, |x, y| matches!(x, b'.' | b',') && !y.is_ascii_digit(), |x, y, out| out.extend([b' ', x, b' ', y]));
    }
    if memchr::memchr(b'-', &a).is_some() {
        // 4. ([0-9])(-) -> "\1 \2 "
        a = sub_pairs(&a, |x, y| x.is_ascii_digit() && y == b'-', |x, y, out| out.extend([x, b' ', y, b' ']));
    }
    // Spaces were only inserted next to ASCII bytes: still UTF-8.
    String::from_utf8(a).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `re.sub` of a two-character pattern: leftmost, non-overlapping matches.
fn sub_pairs(s: &[u8], matches: impl Fn(u8, u8) -> bool, replace: impl Fn(u8, u8, &mut Vec<u8>)) -> Vec<u8> {
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
