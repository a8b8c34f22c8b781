//! Specificity of a response as NIDF (See et al. 2019, "What makes a good conversation?"): the
//! mean, over the response's words, of each word's inverse document frequency normalised to
//! [0, 1] over the vocabulary of a reference corpus,
//!
//! `NIDF(w) = (IDF(w) − min IDF) / (max IDF − min IDF)`, `IDF(w) = ln(N / df(w))`,
//!
//! with `N` the corpus's documents (utterances) and `df(w)` how many of them hold `w`. Generic
//! replies ("i don't know", "that's great") score low, replies with rarer, content-bearing
//! words high. It reads no context and no reference: the "likability" side of USL-H's
//! decomposition, which the relatedness scores (BERT-RUBER, the SLM) do not measure.
//!
//! Words are rouge-score's tokens ([`tokenize_rouge`] without stemming: lowercase runs of
//! `[a-z0-9]`). A word the corpus does not hold counts as held by one document (the largest
//! IDF), so a table may leave out the words of document frequency 1 without changing a score
//! ([`IdfTable::to_tsv`]). [`IdfTable::dailydialog`] is the bundled table of the DailyDialog
//! train split (`data/SOURCE.md`).
//!
//! ```
//! use dialeval_metrics::specificity::IdfTable;
//! let table = IdfTable::from_documents(["i do not know", "i do not know", "i love jazz", "i do"])?;
//! let generic = table.nidf("I don't know.").unwrap();
//! let specific = table.nidf("I love jazz!").unwrap();
//! assert!(specific > generic);
//! assert_eq!(table.nidf("?!"), None); // no word
//! # Ok::<(), dialeval_metrics::Error>(())
//! ```

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::text::tokenize::tokenize_rouge;

/// The bundled document frequencies of the DailyDialog train split (see `data/SOURCE.md`).
const DAILYDIALOG: &str = include_str!("../data/dailydialog-train.df.tsv");

/// Document frequencies of a reference corpus: how many of its `documents` hold each word.
#[derive(Debug, Clone, PartialEq)]
pub struct IdfTable {
    documents: u64,
    df: FxHashMap<String, u64>,
    /// ln(documents / largest df): the smallest IDF of the vocabulary.
    min_idf: f64,
}

impl IdfTable {
    /// Counts, for every word, the documents of `documents` that hold it.
    ///
    /// # Errors
    /// [`Error::Config`] when fewer than two documents are given, or when every word is held by
    /// as many documents as every other (no spread of IDF to normalise by).
    pub fn from_documents<'a>(documents: impl IntoIterator<Item = &'a str>) -> Result<Self> {
        let mut df: FxHashMap<String, u64> = FxHashMap::default();
        let mut n = 0_u64;
        for doc in documents {
            n += 1;
            let mut words = tokenize_rouge(doc, None);
            words.sort_unstable();
            words.dedup();
            for w in words {
                *df.entry(w).or_insert(0) += 1;
            }
        }
        Self::new(n, df, "the documents")
    }

    fn new(documents: u64, df: FxHashMap<String, u64>, origin: &str) -> Result<Self> {
        if documents < 2 {
            return Err(Error::Config(format!("{origin}: an IDF table needs at least two documents, got {documents}")));
        }
        let largest = df.values().copied().max().unwrap_or(0);
        if largest <= 1 {
            return Err(Error::Config(format!("{origin}: no word is held by more than one document, so IDF has no spread to normalise")));
        }
        let min_idf = (documents as f64 / largest as f64).ln();
        Ok(Self { documents, df, min_idf })
    }

    /// Reads a table written by [`IdfTable::to_tsv`]: a first line `documents<TAB>N`, then one
    /// `word<TAB>df` line per word (1 ≤ df ≤ N). `origin` (a file name) names the table in errors.
    ///
    /// # Errors
    /// [`Error::Config`] naming `origin` and the line: a missing or malformed header, a line
    /// without two fields, a word that is not one token, a df that is not an integer in
    /// [1, N], a repeated word; and as [`IdfTable::from_documents`].
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let mut lines = text.lines().enumerate();
        let bad = |line: usize, what: String| Error::Config(format!("{origin}, line {}: {what}", line + 1));
        let documents = match lines.next() {
            Some((i, header)) => match header.split_once('\t') {
                Some(("documents", n)) => n.trim().parse::<u64>().map_err(|_| bad(i, format!("the document count {n:?} is not an integer")))?,
                _ => return Err(bad(i, format!("expected the header `documents<TAB>N`, got {header:?}"))),
            },
            None => return Err(Error::Config(format!("{origin}: empty IDF table"))),
        };
        let mut df = FxHashMap::default();
        for (i, line) in lines {
            if line.is_empty() {
                continue;
            }
            let (word, count) = line.split_once('\t').ok_or_else(|| bad(i, format!("expected `word<TAB>df`, got {line:?}")))?;
            if tokenize_rouge(word, None) != [word] {
                return Err(bad(i, format!("{word:?} is not one lowercase token")));
            }
            let count: u64 = count.trim().parse().map_err(|_| bad(i, format!("the document frequency {count:?} is not an integer")))?;
            if count == 0 || count > documents {
                return Err(bad(i, format!("document frequency {count} outside [1, {documents}]")));
            }
            if df.insert(word.to_owned(), count).is_some() {
                return Err(bad(i, format!("{word:?} is listed twice")));
            }
        }
        Self::new(documents, df, origin)
    }

    /// The bundled table of the DailyDialog train split (utterances of the dialogues kept by
    /// `dialeval_datasets::dailydialog::load_split`; words held by one utterance left out).
    ///
    /// # Errors
    /// None in practice: the bundled text is checked by the crate's tests.
    pub fn dailydialog() -> Result<Self> {
        Self::parse(DAILYDIALOG, "dailydialog-train.df.tsv")
    }

    /// The bundled table's text, as [`IdfTable::dailydialog`] reads it (for digests).
    pub fn dailydialog_text() -> &'static str {
        DAILYDIALOG
    }

    /// The table as [`IdfTable::parse`] reads it, words in byte order, without the words held by
    /// fewer than `min_df` documents (with `min_df` ≤ 2 every score is unchanged, as an unseen
    /// word counts as held by one document).
    pub fn to_tsv(&self, min_df: u64) -> String {
        let sorted: BTreeMap<&str, u64> = self.df.iter().filter(|(_, c)| **c >= min_df).map(|(w, c)| (w.as_str(), *c)).collect();
        let mut out = format!("documents\t{}\n", self.documents);
        for (w, c) in sorted {
            out.push_str(&format!("{w}\t{c}\n"));
        }
        out
    }

    /// Documents of the corpus.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// Words the table lists.
    pub fn words(&self) -> usize {
        self.df.len()
    }

    /// A word's normalised IDF in [0, 1] (an unseen word: 1).
    pub fn word_nidf(&self, word: &str) -> f64 {
        let n = self.documents as f64;
        let max_idf = n.ln();
        let df = self.df.get(word).copied().unwrap_or(1).max(1) as f64;
        ((n / df).ln() - self.min_idf) / (max_idf - self.min_idf)
    }

    /// The response's NIDF: the mean of its words' [`IdfTable::word_nidf`], in [0, 1]; `None`
    /// for a text without a word.
    pub fn nidf(&self, text: &str) -> Option<f64> {
        let words = tokenize_rouge(text, None);
        (!words.is_empty()).then(|| words.iter().map(|w| self.word_nidf(w)).sum::<f64>() / words.len() as f64)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use proptest::prelude::*;

    fn small() -> IdfTable {
        IdfTable::from_documents(["i do not know", "i do not know", "i love jazz", "i do", "jazz"]).unwrap()
    }

    #[test]
    fn nidf_follows_see_et_al() {
        let t = small();
        // N = 5; df: i 4, do 3, not 2, know 2, love 1, jazz 2. min IDF = ln(5/4), max = ln 5.
        let (min, max) = ((5.0_f64 / 4.0).ln(), 5.0_f64.ln());
        let nidf = |df: f64| ((5.0 / df).ln() - min) / (max - min);
        assert_relative_eq!(t.word_nidf("i"), 0.0);
        assert_relative_eq!(t.word_nidf("love"), 1.0);
        assert_relative_eq!(t.word_nidf("unseen"), 1.0, epsilon = 1e-12);
        assert_relative_eq!(t.nidf("I love jazz").unwrap(), (0.0 + 1.0 + nidf(2.0)) / 3.0, epsilon = 1e-12);
        // Case and punctuation do not count; "don't" is the tokens "don" (unseen) and "t" (unseen).
        assert_relative_eq!(t.nidf("I, DO... not!").unwrap(), (0.0 + nidf(3.0) + nidf(2.0)) / 3.0, epsilon = 1e-12);
        assert_eq!(t.nidf("  ?! "), None);
        assert_eq!(t.nidf(""), None);
    }

    #[test]
    fn a_table_written_and_read_back_scores_the_same() {
        let t = small();
        assert_eq!(IdfTable::parse(&t.to_tsv(1), "t.tsv").unwrap(), t);
        let pruned = IdfTable::parse(&t.to_tsv(2), "t.tsv").unwrap();
        assert_eq!(pruned.words(), t.words() - 1, "love (df 1) left out");
        for text in ["i love jazz", "do you know", "love love"] {
            assert_eq!(pruned.nidf(text), t.nidf(text), "{text}");
        }
    }

    #[test]
    fn bad_tables_are_named_by_line() {
        let err = |text: &str| IdfTable::parse(text, "idf.tsv").unwrap_err().to_string();
        assert!(err("").contains("empty"));
        assert!(err("words\t5\n").contains("line 1"));
        assert!(err("documents\tfive\n").contains("line 1"));
        assert!(err("documents\t5\ni\t4\ndo 3\n").contains("line 3"));
        assert!(err("documents\t5\ni\t4\nDo\t3\n").contains("line 3"));
        assert!(err("documents\t5\ni\t4\ndo\t9\n").contains("outside [1, 5]"));
        assert!(err("documents\t5\ni\t4\ni\t3\n").contains("listed twice"));
        assert!(err("documents\t5\ni\tx\n").contains("line 2"));
        assert!(err("documents\t5\ni\t1\n").contains("no spread"));
        assert!(IdfTable::from_documents(["one document"]).is_err());
    }

    #[test]
    fn the_bundled_table_reads_and_ranks_generic_replies_low() {
        let t = IdfTable::dailydialog().unwrap();
        assert!(t.documents() > 70_000 && t.words() > 10_000, "{} documents, {} words", t.documents(), t.words());
        let generic = t.nidf("I don't know.").unwrap();
        let specific = t.nidf("My grandmother grows tomatoes in her greenhouse.").unwrap();
        assert!(generic < 0.2 && specific > 0.4 && specific > generic + 0.3, "{generic} {specific}");
    }

    proptest! {
        #[test]
        fn nidf_lies_in_the_unit_interval(text in "[a-zA-Z ,.!?']{0,60}") {
            let t = small();
            match t.nidf(&text) {
                Some(v) => prop_assert!((0.0..=1.0).contains(&v), "{v}"),
                None => prop_assert!(tokenize_rouge(&text, None).is_empty()),
            }
        }
    }
}
