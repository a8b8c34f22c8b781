//! A byte-level lexer reproducing the token classes of penman 1.3.1 (`penman/_lexer.py`).
//!
//! All delimiters are ASCII, so scanning bytes is safe on UTF-8 text: continuation bytes
//! never look like a delimiter. Tokens never span lines, as in penman, which lexes line by line.

/// Token classes, in penman's order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Comment,
    String,
    LParen,
    RParen,
    Slash,
    Role,
    Symbol,
    Alignment,
    Unexpected,
}

/// A token as a byte span into the lexed text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

const SPACE: u8 = 1;
const DELIMITER: u8 = 2;

/// Byte classes: penman's whitespace (Python's `\s` subset: space, `\t`, `\r`, `\n`, `\v`,
/// `\f`) and the bytes that end a ROLE or SYMBOL (whitespace and `"()/:~`).
static CLASS: [u8; 256] = {
    let mut table = [0_u8; 256];
    let spaces = [b' ', b'\t', b'\r', b'\n', 0x0b, 0x0c];
    let mut i = 0;
    while i < spaces.len() {
        table[spaces[i] as usize] = SPACE | DELIMITER;
        i += 1;
    }
    let delimiters = [b'"', b'(', b')', b'/', b':', b'~'];
    let mut i = 0;
    while i < delimiters.len() {
        table[delimiters[i] as usize] = DELIMITER;
        i += 1;
    }
    table
};

/// Python's `\s` subset used by penman's patterns.
pub(crate) fn is_space(b: u8) -> bool {
    CLASS[b as usize] & SPACE != 0
}

/// Bytes that end a ROLE or SYMBOL.
fn is_delimiter(b: u8) -> bool {
    CLASS[b as usize] & DELIMITER != 0
}

pub(crate) struct Lexer<'a> {
    text: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        Self { text: text.as_bytes(), pos: 0 }
    }

    /// Moves the cursor to `pos` (used for error recovery).
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.text.len());
    }

    fn scan_string(&self, start: usize) -> Option<usize> {
        let mut i = start + 1;
        while i < self.text.len() {
            match self.text[i] {
                b'"' => return Some(i + 1),
                b'\\' => {
                    if i + 1 >= self.text.len() || self.text[i + 1] == b'\n' {
                        return None;
                    }
                    i += 2;
                }
                b'\n' => return None,
                _ => i += 1,
            }
        }
        None
    }

    fn scan_alignment(&self, start: usize) -> Option<usize> {
        let t = self.text;
        let mut i = start + 1;
        if i < t.len() && t[i].is_ascii_lowercase() {
            let save = i;
            i += 1;
            if i < t.len() && t[i] == b'.' {
                i += 1;
            }
            if !(i < t.len() && t[i].is_ascii_digit()) {
                // `(?:[a-z]\.?)?` is optional: retry without it.
                i = save;
            }
        }
        let digits = |mut j: usize| {
            let from = j;
            while j < t.len() && t[j].is_ascii_digit() {
                j += 1;
            }
            (j > from).then_some(j)
        };
        let mut end = digits(i)?;
        while end < t.len() && t[end] == b',' {
            match digits(end + 1) {
                Some(e) => end = e,
                None => break,
            }
        }
        Some(end)
    }

    fn utf8_char_end(&self, start: usize) -> usize {
        let mut end = start + 1;
        while end < self.text.len() && (self.text[end] & 0xC0) == 0x80 {
            end += 1;
        }
        end
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let t = self.text;
        while self.pos < t.len() && is_space(t[self.pos]) {
            self.pos += 1;
        }
        let start = self.pos;
        let &first = t.get(start)?;
        let (kind, end) = match first {
            b'#' => {
                let mut end = memchr::memchr(b'\n', &t[start..]).map_or(t.len(), |i| start + i);
                if end > start && t[end - 1] == b'\r' {
                    end -= 1;
                }
                (Kind::Comment, end)
            }
            b'"' => match self.scan_string(start) {
                Some(end) => (Kind::String, end),
                None => (Kind::Unexpected, start + 1),
            },
            b'(' => (Kind::LParen, start + 1),
            b')' => (Kind::RParen, start + 1),
            b'/' => (Kind::Slash, start + 1),
            b':' => {
                let mut end = start + 1;
                while end < t.len() && !is_delimiter(t[end]) {
                    end += 1;
                }
                (Kind::Role, end)
            }
            b'~' => match self.scan_alignment(start) {
                Some(end) => (Kind::Alignment, end),
                None => (Kind::Unexpected, start + 1),
            },
            _ => {
                let mut end = start;
                while end < t.len() && !is_delimiter(t[end]) {
                    end += 1;
                }
                if end == start { (Kind::Unexpected, self.utf8_char_end(start)) } else { (Kind::Symbol, end) }
            }
        };
        self.pos = end;
        Some(Token { kind, start, end })
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(Kind, &str)> {
        Lexer::new(s).map(|t| (t.kind, &s[t.start..t.end])).collect()
    }

    #[test]
    fn smatch_style_joined_lines_split_at_colons() {
        assert_eq!(
            kinds("(c / chapter:mod 1)"),
            vec![(Kind::LParen, "("), (Kind::Symbol, "c"), (Kind::Slash, "/"), (Kind::Symbol, "chapter"), (Kind::Role, ":mod"), (Kind::Symbol, "1"), (Kind::RParen, ")"),]
        );
    }

    #[test]
    fn strings_alignments_and_comments() {
        assert_eq!(
            kinds("# ::id a\r\n:op1 \"a \\\" b\"~e.3 x~1,2 ~q"),
            vec![
                (Kind::Comment, "# ::id a"),
                (Kind::Role, ":op1"),
                (Kind::String, "\"a \\\" b\""),
                (Kind::Alignment, "~e.3"),
                (Kind::Symbol, "x"),
                (Kind::Alignment, "~1,2"),
                (Kind::Unexpected, "~"),
                (Kind::Symbol, "q"),
            ]
        );
    }

    #[test]
    fn unterminated_string_is_unexpected_quote() {
        assert_eq!(kinds("\"ab\ncd\""), vec![(Kind::Unexpected, "\""), (Kind::Symbol, "ab"), (Kind::Symbol, "cd"), (Kind::Unexpected, "\""),]);
    }
}
