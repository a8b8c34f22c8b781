//! Identities of the inputs a result depends on: sha256 digests of items, files and settings,
//! which the family cache is keyed by.

use std::io::Read;
use std::path::{Path, PathBuf};

use dialeval_datasets::{DialogueItem, Turn};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// A file named by its path and the sha256 of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// Where the file was read.
    pub path: PathBuf,
    /// sha256 of its bytes, hex.
    pub sha256: String,
}

impl FileDigest {
    /// Reads and hashes `path`.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read.
    pub fn of(path: &Path) -> Result<Self> {
        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut h = Sha256::new();
        let mut buf = vec![0_u8; 1 << 16];
        loop {
            let n = file.read(&mut buf).map_err(|e| Error::io(path, e))?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        Ok(Self { path: path.to_owned(), sha256: hex(&h.finalize()) })
    }
}

/// sha256 (hex) of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What of an item a score may depend on: everything but its ratings.
#[derive(Serialize)]
struct ItemKey<'a> {
    id: &'a str,
    context: &'a [Turn],
    response: Option<&'a Turn>,
    references: &'a [String],
    knowledge: Option<&'a str>,
    system: Option<&'a str>,
}

/// sha256 of the items as the metrics see them: id, context turns (text, speaker, AMR),
/// response (text, AMR), references, knowledge and system, in order. Ratings are left out: they
/// change no score.
///
/// # Errors
/// Never in practice (serialising these types cannot fail); kept typed.
pub fn items_digest(items: &[DialogueItem]) -> Result<String> {
    let mut digest = ItemsDigest::new();
    digest.add(items)?;
    Ok(digest.finish())
}

/// [`items_digest`] fed a chunk at a time: the digest of a corpus read as a stream, never held
/// whole (or serialised whole). Chunks of any sizes give the digest of the items they add up to.
#[derive(Debug, Clone, Default)]
pub struct ItemsDigest {
    hasher: Sha256,
    buffer: Vec<u8>,
}

impl ItemsDigest {
    /// The digest of no items yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `items` (after those added before).
    ///
    /// # Errors
    /// Never in practice (serialising these types cannot fail); kept typed.
    pub fn add(&mut self, items: &[DialogueItem]) -> Result<()> {
        self.add_with(items, None)
    }

    /// Adds `items` and returns their own [`items_digest`], each item serialised once for both
    /// (how the pipeline keys a chunk while it digests the corpus).
    ///
    /// # Errors
    /// As [`ItemsDigest::add`].
    pub fn add_chunk(&mut self, items: &[DialogueItem]) -> Result<String> {
        let mut chunk = Sha256::new();
        self.add_with(items, Some(&mut chunk))?;
        Ok(hex(&chunk.finalize()))
    }

    fn add_with(&mut self, items: &[DialogueItem], mut chunk: Option<&mut Sha256>) -> Result<()> {
        for i in items {
            let key = ItemKey { id: &i.id, context: &i.context, response: i.response.as_ref(), references: &i.references, knowledge: i.knowledge.as_deref(), system: i.system.as_deref() };
            self.buffer.clear();
            serde_json::to_writer(&mut self.buffer, &key).map_err(|e| Error::json("<items>", e))?;
            // One JSON value per line: no item's text can run into the next one's.
            self.buffer.push(b'\n');
            self.hasher.update(&self.buffer);
            if let Some(chunk) = chunk.as_deref_mut() {
                chunk.update(&self.buffer);
            }
        }
        Ok(())
    }

    /// The digest, hex.
    pub fn finish(self) -> String {
        hex(&self.hasher.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(context: &str, response: &str, reference: &str) -> DialogueItem {
        crate::tests::item("a/1", &[context], response, &[reference])
    }

    #[test]
    fn the_items_digest_sees_context_references_and_graphs_but_not_ratings() {
        let base = items_digest(&[item("hi", "hello", "hey")]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(base.len(), 64);
        assert_ne!(items_digest(&[item("hi there", "hello", "hey")]).unwrap_or_else(|e| panic!("{e}")), base, "context");
        assert_ne!(items_digest(&[item("hi", "hello", "hey you")]).unwrap_or_else(|e| panic!("{e}")), base, "reference");
        let mut graph = item("hi", "hello", "hey");
        if let Some(r) = graph.response.as_mut() {
            r.amr = Some("(h / hello)".into());
        }
        assert_ne!(items_digest(&[graph]).unwrap_or_else(|e| panic!("{e}")), base, "response graph");
        let mut rated = item("hi", "hello", "hey");
        rated.ratings.push(dialeval_datasets::Rating { quality: "Overall".into(), criterion: None, scores: vec![Some(3.0)] });
        assert_eq!(items_digest(&[rated]).unwrap_or_else(|e| panic!("{e}")), base, "ratings change no score");
    }

    #[test]
    fn a_digest_fed_in_chunks_is_the_digest_of_the_whole() {
        let items: Vec<DialogueItem> = (0..5).map(|k| item(&format!("c{k}"), &format!("r{k}"), "x")).collect();
        let whole = items_digest(&items).unwrap_or_else(|e| panic!("{e}"));
        let mut d = ItemsDigest::new();
        for chunk in items.chunks(2) {
            d.add(chunk).unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(d.finish(), whole);
        let mut both = ItemsDigest::new();
        assert_eq!(both.add_chunk(&items[..2]).unwrap_or_else(|e| panic!("{e}")), items_digest(&items[..2]).unwrap_or_else(|e| panic!("{e}")));
        both.add_chunk(&items[2..]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(both.finish(), whole, "a chunk's digest and the corpus digest from one serialisation");
        assert_ne!(items_digest(&items[..4]).unwrap_or_else(|e| panic!("{e}")), whole);
    }

    #[test]
    fn a_file_digest_is_the_sha256_of_its_bytes() {
        let dir = std::env::temp_dir().join(format!("dialeval-eval-digest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let path = dir.join("f.txt");
        std::fs::write(&path, "abc").unwrap_or_else(|e| panic!("{e}"));
        let d = FileDigest::of(&path).unwrap_or_else(|e| panic!("{e}"));
        // sha256("abc"), FIPS 180-2 appendix B.1.
        assert_eq!(d.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert!(matches!(FileDigest::of(&dir.join("missing")), Err(Error::Io { .. })));
    }
}
