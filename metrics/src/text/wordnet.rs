//! A reader for the WordNet 3.0 database files (`index.*`, `data.*`, `*.exc`, as shipped by
//! Debian's `wordnet-base` in `/usr/share/wordnet`), with nltk 3.10.4's `morphy` and
//! `synsets` semantics (`nltk/corpus/reader/wordnet.py`), which METEOR's synonym stage uses.
//!
//! Loading reads the four data files into memory as they are and parses the index and exception
//! files into hash maps; synset lines are parsed on demand at their byte offsets.

use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, Result};

/// A WordNet part of speech, in nltk's `POS_LIST` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pos {
    /// `n`
    Noun,
    /// `v`
    Verb,
    /// `a` (adjective satellites are listed under `a` in the index)
    Adj,
    /// `r`
    Adv,
}

impl Pos {
    /// nltk's `POS_LIST`.
    pub const ALL: [Self; 4] = [Self::Noun, Self::Verb, Self::Adj, Self::Adv];

    fn file(self) -> &'static str {
        match self {
            Self::Noun => "noun",
            Self::Verb => "verb",
            Self::Adj => "adj",
            Self::Adv => "adv",
        }
    }

    fn from_tag(tag: &str) -> Option<Self> {
        match tag {
            "n" => Some(Self::Noun),
            "v" => Some(Self::Verb),
            "a" | "s" => Some(Self::Adj),
            "r" => Some(Self::Adv),
            _ => None,
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// nltk's `MORPHOLOGICAL_SUBSTITUTIONS`.
    fn substitutions(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Noun => &[("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")],
            Self::Verb => &[("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")],
            Self::Adj => &[("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
            Self::Adv => &[],
        }
    }
}

/// The WordNet database, loaded once.
#[derive(Debug)]
pub struct WordNet {
    dir: PathBuf,
    /// lemma → per-POS `(start, len)` into `offsets` (len 0: absent).
    index: FxHashMap<Box<str>, [(u32, u32); 4]>,
    offsets: Vec<u32>,
    data: [Vec<u8>; 4],
    exceptions: [FxHashMap<Box<str>, Vec<Box<str>>>; 4],
}

/// Where [`WordNet::locate`] looks, in order.
const DEFAULT_DIRS: [&str; 3] = ["/usr/share/wordnet", "/usr/local/share/wordnet", "/usr/local/WordNet-3.0/dict"];

impl WordNet {
    /// The WordNet folder: `$DIALEVAL_WORDNET`, then `$WNSEARCHDIR`, then the usual system
    /// locations (Debian's `wordnet-base` installs `/usr/share/wordnet`).
    ///
    /// # Errors
    /// [`Error::WordNet`] saying how to install it when no folder has `index.noun`.
    pub fn locate() -> Result<PathBuf> {
        let candidates = ["DIALEVAL_WORDNET", "WNSEARCHDIR"].iter().filter_map(|v| std::env::var_os(v).map(PathBuf::from)).chain(DEFAULT_DIRS.iter().map(PathBuf::from));
        for dir in candidates {
            if dir.join("index.noun").is_file() {
                return Ok(dir);
            }
        }
        Err(Error::WordNet(format!(
            "WordNet 3.0 database not found (looked in $DIALEVAL_WORDNET, $WNSEARCHDIR, {}); install it with \
             `apt-get install wordnet-base` (Debian/Ubuntu) or point DIALEVAL_WORDNET at a folder holding \
             index.noun, data.noun, noun.exc, …",
            DEFAULT_DIRS.join(", ")
        )))
    }

    /// Loads WordNet from [`WordNet::locate`].
    ///
    /// # Errors
    /// As [`WordNet::locate`] and [`WordNet::load`].
    pub fn load_default() -> Result<Self> {
        Self::load(&Self::locate()?)
    }

    /// Loads the database files of `dir`.
    ///
    /// # Errors
    /// [`Error::Io`] for a missing or unreadable file, [`Error::WordNet`] for a malformed index
    /// line (naming file and line).
    pub fn load(dir: &Path) -> Result<Self> {
        let read = |name: String| -> Result<Vec<u8>> {
            let path = dir.join(&name);
            std::fs::read(&path).map_err(|source| Error::Io { path: path.display().to_string(), source })
        };
        let mut index: FxHashMap<Box<str>, [(u32, u32); 4]> = FxHashMap::default();
        index.reserve(160_000);
        let mut offsets = Vec::with_capacity(210_000);
        let mut data: [Vec<u8>; 4] = Default::default();
        let mut exceptions: [FxHashMap<Box<str>, Vec<Box<str>>>; 4] = Default::default();
        for pos in Pos::ALL {
            let name = format!("index.{}", pos.file());
            let bytes = read(name.clone())?;
            let text = String::from_utf8_lossy(&bytes);
            for (lineno, line) in text.lines().enumerate() {
                if line.starts_with(' ') || line.is_empty() {
                    continue;
                }
                let bad = |what: &str| Error::WordNet(format!("{}:{}: {what}", dir.join(&name).display(), lineno + 1));
                let mut it = line.split_ascii_whitespace();
                let lemma = it.next().ok_or_else(|| bad("missing lemma"))?;
                let tag = it.next().ok_or_else(|| bad("missing part of speech"))?;
                let p = Pos::from_tag(tag).ok_or_else(|| bad("unknown part of speech"))?;
                let mut number = |what: &str| -> Result<usize> { it.next().and_then(|t| t.parse().ok()).ok_or_else(|| bad(what)) };
                let n_synsets = number("bad synset count")?;
                let n_pointers = number("bad pointer count")?;
                for _ in 0..n_pointers {
                    it.next().ok_or_else(|| bad("missing pointer symbol"))?;
                }
                let _n_senses = it.next().ok_or_else(|| bad("missing sense count"))?;
                let _tagged = it.next().ok_or_else(|| bad("missing tagged sense count"))?;
                let start = u32::try_from(offsets.len()).map_err(|_| bad("index too large"))?;
                for _ in 0..n_synsets {
                    let off: u32 = it.next().and_then(|t| t.parse().ok()).ok_or_else(|| bad("bad synset offset"))?;
                    offsets.push(off);
                }
                let entry = index.entry(lemma.into()).or_insert([(0, 0); 4]);
                entry[p.index()] = (start, u32::try_from(n_synsets).unwrap_or(u32::MAX));
            }
            data[pos.index()] = read(format!("data.{}", pos.file()))?;
            let exc = read(format!("{}.exc", pos.file()))?;
            for line in String::from_utf8_lossy(&exc).lines() {
                let mut terms = line.split_ascii_whitespace();
                if let Some(first) = terms.next() {
                    exceptions[pos.index()].insert(first.into(), terms.map(Into::into).collect());
                }
            }
        }
        Ok(Self { dir: dir.to_owned(), index, offsets, data, exceptions })
    }

    /// The folder the database was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of lemmas in the index.
    pub fn lemma_count(&self) -> usize {
        self.index.len()
    }

    fn synset_offsets(&self, lemma: &str, pos: Pos) -> &[u32] {
        match self.index.get(lemma) {
            Some(e) => {
                let (start, len) = e[pos.index()];
                &self.offsets[start as usize..(start + len) as usize]
            }
            None => &[],
        }
    }

    /// nltk's `_morphy(form, pos)`: the exception list's base forms or the suffix rules,
    /// keeping the forms (and `form` itself) that the index lists under `pos`.
    pub fn morphy(&self, form: &str, pos: Pos) -> Vec<String> {
        let candidates: Vec<String> = match self.exceptions[pos.index()].get(form) {
            Some(bases) => bases.iter().map(|b| b.to_string()).collect(),
            None => pos.substitutions().iter().filter_map(|(old, new)| form.strip_suffix(old).map(|stem| format!("{stem}{new}"))).collect(),
        };
        let mut out: Vec<String> = Vec::new();
        for f in std::iter::once(form.to_owned()).chain(candidates) {
            if !self.synset_offsets(&f, pos).is_empty() && !out.contains(&f) {
                out.push(f);
            }
        }
        out
    }

    /// Lemma names of the synset at `offset` in `data.<pos>`, with adjective markers such as
    /// `(a)` removed (nltk's `Lemma.name()`).
    ///
    /// # Errors
    /// [`Error::WordNet`] when the offset does not start a well-formed synset line.
    pub fn lemma_names(&self, pos: Pos, offset: u32) -> Result<Vec<&str>> {
        let data = &self.data[pos.index()];
        let start = offset as usize;
        let bad = || Error::WordNet(format!("data.{}: no synset line at byte offset {offset}", pos.file()));
        if start >= data.len() {
            return Err(bad());
        }
        let end = data[start..].iter().position(|&b| b == b'\n').map_or(data.len(), |i| start + i);
        let line = std::str::from_utf8(&data[start..end]).map_err(|_| bad())?;
        let mut it = line.split_ascii_whitespace();
        let found: u32 = it.next().and_then(|t| t.parse().ok()).ok_or_else(bad)?;
        if found != offset {
            return Err(bad());
        }
        let _lex_file = it.next().ok_or_else(bad)?;
        let _ss_type = it.next().ok_or_else(bad)?;
        let count = it.next().and_then(|t| usize::from_str_radix(t, 16).ok()).ok_or_else(bad)?;
        let mut names = Vec::with_capacity(count);
        for _ in 0..count {
            let word = it.next().ok_or_else(bad)?;
            let _lex_id = it.next().ok_or_else(bad)?;
            names.push(strip_marker(word));
        }
        Ok(names)
    }

    /// METEOR's synonym set of `word` (nltk 3.10.4's `_enum_wordnetsyn_match`): the lemma names
    /// without `_` of every synset of `wordnet.synsets(word)` over all parts of speech, plus
    /// the word itself.
    ///
    /// # Errors
    /// [`Error::WordNet`] when the index points at a malformed data line.
    pub fn synonyms(&self, word: &str) -> Result<FxHashSet<String>> {
        let lemma = word.to_lowercase();
        let mut out = FxHashSet::default();
        for pos in Pos::ALL {
            for form in self.morphy(&lemma, pos) {
                for &offset in self.synset_offsets(&form, pos) {
                    for name in self.lemma_names(pos, offset)? {
                        if !name.contains('_') {
                            out.insert(name.to_owned());
                        }
                    }
                }
            }
        }
        out.insert(word.to_owned());
        Ok(out)
    }
}

/// `re.match(r"(.*?)(\(.*\))?$", name).group(1)`: drops a trailing parenthesised marker.
fn strip_marker(name: &str) -> &str {
    if name.ends_with(')')
        && let Some(open) = name.find('(')
    {
        return &name[..open];
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers() {
        assert_eq!(strip_marker("galore(ip)"), "galore");
        assert_eq!(strip_marker("dog"), "dog");
    }
}
