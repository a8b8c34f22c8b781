//! Where a corpus comes from: items in memory, or a JSONL file read as a stream, chunk by chunk,
//! so that a corpus of millions of items is never held whole ([`ItemSource`]).

use std::path::{Path, PathBuf};

use dialeval_datasets::{Corpus, DialogueItem};

use crate::error::Result;

/// A corpus the [`Pipeline`](crate::Pipeline) reads a chunk at a time.
pub trait ItemSource {
    /// Calls `visit` with the items in corpus order, at most `size` at a time (every chunk but
    /// the last holds `size` items), and the same chunks on every call.
    ///
    /// # Errors
    /// A read or parse error naming the file and line, or the first error of `visit`.
    fn for_each_chunk(&self, size: usize, visit: &mut dyn FnMut(&[DialogueItem]) -> Result<()>) -> Result<()>;

    /// How many items there are, when that is known without reading them (for progress).
    fn len_hint(&self) -> Option<usize> {
        None
    }
}

impl ItemSource for &[DialogueItem] {
    fn for_each_chunk(&self, size: usize, visit: &mut dyn FnMut(&[DialogueItem]) -> Result<()>) -> Result<()> {
        self.chunks(size.max(1)).try_for_each(visit)
    }

    fn len_hint(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl ItemSource for Vec<DialogueItem> {
    fn for_each_chunk(&self, size: usize, visit: &mut dyn FnMut(&[DialogueItem]) -> Result<()>) -> Result<()> {
        self.as_slice().chunks(size.max(1)).try_for_each(visit)
    }

    fn len_hint(&self) -> Option<usize> {
        Some(self.len())
    }
}

/// What is done to each chunk as it is read: graphs attached, say.
type Prepare = Box<dyn Fn(&mut [DialogueItem]) -> Result<()> + Sync>;
/// Which items are kept.
type Keep = Box<dyn Fn(&DialogueItem) -> bool + Sync>;
/// Which ids are kept (a shard's), decided before the rest of an item's line is parsed.
type KeepIds = std::sync::Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A JSONL file in the generic format of [`dialeval_datasets::jsonl`], read as a stream on every
/// pass: one chunk of items in memory at a time. A pipe or FIFO works too, for one pass (the
/// pipeline's run reads its source once). Items may be filtered ([`JsonlSource::keep`], or by
/// id before they are parsed: [`JsonlSource::keep_ids`]) and prepared
/// ([`JsonlSource::prepare`]) as they are read.
pub struct JsonlSource {
    path: PathBuf,
    keep: Option<Keep>,
    keep_ids: Option<KeepIds>,
    prepare: Option<Prepare>,
    lines: Option<usize>,
}

impl std::fmt::Debug for JsonlSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlSource")
            .field("path", &self.path)
            .field("filtered", &self.keep.is_some())
            .field("filtered_by_id", &self.keep_ids.is_some())
            .field("prepared", &self.prepare.is_some())
            .finish()
    }
}

impl JsonlSource {
    /// The items of `path` (opened on each pass; a missing file is an error then).
    pub fn new(path: &Path) -> Self {
        Self { path: path.to_owned(), keep: None, keep_ids: None, prepare: None, lines: None }
    }

    /// Counts the file's non-blank lines, so that progress can show the whole (one fast pass
    /// over the bytes; not done with a filter, which only reading can apply). Only a regular
    /// file is counted: a pipe, a FIFO or a process substitution can be read only once, by the
    /// run itself (its progress then has no total).
    ///
    /// # Errors
    /// [`crate::Error::Io`] when the file cannot be read.
    pub fn counted(mut self) -> Result<Self> {
        use std::io::BufRead as _;
        if !std::fs::metadata(&self.path).map_err(|e| crate::Error::io(&self.path, e))?.is_file() {
            return Ok(self);
        }
        let file = std::fs::File::open(&self.path).map_err(|e| crate::Error::io(&self.path, e))?;
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
        let (mut lines, mut blank) = (0, true);
        loop {
            let buf = reader.fill_buf().map_err(|e| crate::Error::io(&self.path, e))?;
            if buf.is_empty() {
                break;
            }
            for &b in buf {
                if b == b'\n' {
                    lines += usize::from(!blank);
                    blank = true;
                } else if !b.is_ascii_whitespace() {
                    blank = false;
                }
            }
            let n = buf.len();
            reader.consume(n);
        }
        self.lines = Some(lines + usize::from(!blank));
        Ok(self)
    }

    /// Keeps only the items `keep` accepts (before chunking: chunks stay full).
    #[must_use]
    pub fn keep(mut self, keep: impl Fn(&DialogueItem) -> bool + Sync + 'static) -> Self {
        self.keep = Some(Box::new(keep));
        self
    }

    /// Keeps only the items whose id `keep` accepts, and never parses (nor prepares) the others
    /// beyond their id ([`dialeval_datasets::jsonl::read_where`]): a shard reads its own items
    /// out of the whole corpus at the cost of theirs. `keep` is asked once per item line, in
    /// the file's order (so it can count the corpus's items and place the kept ones). An item
    /// line another shard keeps is not checked here (its own shard checks it); a line that is
    /// not JSON is an error in every shard.
    #[must_use]
    pub fn keep_ids(mut self, keep: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.keep_ids = Some(std::sync::Arc::new(keep));
        self
    }

    /// Calls `prepare` on every chunk before it is scored (e.g. to attach graphs).
    #[must_use]
    pub fn prepare(mut self, prepare: impl Fn(&mut [DialogueItem]) -> Result<()> + Sync + 'static) -> Self {
        self.prepare = Some(Box::new(prepare));
        self
    }
}

impl JsonlSource {
    fn no_items(&self) -> crate::Error {
        dialeval_datasets::Error::Record { path: self.path.clone(), place: dialeval_datasets::Place::File, problem: "no items (the file is empty or has only blank lines)".into() }.into()
    }
}

impl ItemSource for JsonlSource {
    /// Reads a chunk of items at a time; the kept items are prepared just before they go on,
    /// in full chunks.
    fn for_each_chunk(&self, size: usize, visit: &mut dyn FnMut(&[DialogueItem]) -> Result<()>) -> Result<()> {
        let size = size.max(1);
        let mut out: Vec<DialogueItem> = Vec::with_capacity(size);
        let mut emit = |out: &mut Vec<DialogueItem>| -> Result<()> {
            if let Some(prepare) = &self.prepare {
                prepare(out)?;
            }
            visit(out)?;
            out.clear();
            Ok(())
        };
        // Lines passed over by id: items of the file all the same (a shard's file is not empty
        // because another shard has its items).
        let passed_over = std::rc::Rc::new(std::cell::Cell::new(0_usize));
        let items: Box<dyn Iterator<Item = dialeval_datasets::Result<DialogueItem>>> = match &self.keep_ids {
            Some(keep_ids) => {
                let (keep_ids, passed_over) = (std::sync::Arc::clone(keep_ids), std::rc::Rc::clone(&passed_over));
                Box::new(dialeval_datasets::jsonl::read_where(&self.path, move |id| {
                    let kept = keep_ids(id);
                    passed_over.set(passed_over.get() + usize::from(!kept));
                    kept
                })?)
            }
            None => Box::new(dialeval_datasets::jsonl::read(&self.path)?),
        };
        let mut read = 0_usize;
        for item in items {
            let item = item.map_err(|e| dialeval_datasets::sniff::with_hint(e, &self.path, Corpus::Jsonl))?;
            read += 1;
            if self.keep.as_ref().is_none_or(|keep| keep(&item)) {
                out.push(item);
            }
            if out.len() == size {
                emit(&mut out)?;
            }
        }
        if read + passed_over.get() == 0 {
            return Err(self.no_items());
        }
        if !out.is_empty() {
            emit(&mut out)?;
        }
        Ok(())
    }

    fn len_hint(&self) -> Option<usize> {
        self.lines.filter(|_| self.keep.is_none() && self.keep_ids.is_none())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn a_jsonl_file_streams_in_full_chunks_filtered_and_prepared() {
        let dir = std::env::temp_dir().join(format!("dialeval-eval-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("items.jsonl");
        let lines: Vec<String> = (0..7).map(|k| format!(r#"{{"id": "i{k}", "context": ["hi"], "response": "r{k}"}}"#)).collect();
        std::fs::write(&path, format!("{}\n\n", lines.join("\n"))).unwrap();
        let source = JsonlSource::new(&path).counted().unwrap();
        assert_eq!(source.len_hint(), Some(7));
        let mut sizes = Vec::new();
        source
            .for_each_chunk(3, &mut |c| {
                sizes.push(c.len());
                Ok(())
            })
            .unwrap();
        assert_eq!(sizes, [3, 3, 1]);
        let odd = JsonlSource::new(&path).keep(|i| i.id != "i0" && i.id != "i3").prepare(|c| {
            c.iter_mut().for_each(|i| i.system = Some("s".into()));
            Ok(())
        });
        assert_eq!(odd.len_hint(), None);
        let mut ids = Vec::new();
        odd.for_each_chunk(2, &mut |c| {
            assert!(c.iter().all(|i| i.system.as_deref() == Some("s")));
            ids.push(c.iter().map(|i| i.id.clone()).collect::<Vec<_>>().join(","));
            Ok(())
        })
        .unwrap();
        assert_eq!(ids, ["i1,i2", "i4,i5", "i6"], "the chunks stay full after the filter");
        // By id, before parsing: the same items; a line of another shard is never checked here.
        let lines: Vec<String> = (0..7).map(|k| format!(r#"{{"id": "i{k}", "context": ["hi"], "response": "r{k}"}}"#)).collect();
        std::fs::write(&path, format!("{}\n{{\"id\": \"i0\", \"contxt\": []}}\n", lines[1..].join("\n"))).unwrap();
        let by_id = JsonlSource::new(&path).keep_ids(|id| id != "i0" && id != "i3");
        assert_eq!(by_id.len_hint(), None);
        let mut again = Vec::new();
        by_id
            .for_each_chunk(2, &mut |c| {
                again.push(c.iter().map(|i| i.id.clone()).collect::<Vec<_>>().join(","));
                Ok(())
            })
            .unwrap();
        assert_eq!(again, ids);
        // A file all of whose items another shard keeps has items, none of them this shard's.
        let none = JsonlSource::new(&path).keep_ids(|_| false);
        let mut kept = 0;
        none.for_each_chunk(2, &mut |c| {
            kept += c.len();
            Ok(())
        })
        .unwrap();
        assert_eq!(kept, 0);
        std::fs::write(&path, "{\"id\": \"a\", \"context\": [], \"respons\": \"x\"}\n").unwrap();
        let err = JsonlSource::new(&path).for_each_chunk(2, &mut |_| Ok(())).unwrap_err().to_string();
        assert!(err.contains("items.jsonl:1 ") && err.contains("response"), "{err}");
        std::fs::write(&path, "\n").unwrap();
        assert!(JsonlSource::new(&path).for_each_chunk(2, &mut |_| Ok(())).unwrap_err().to_string().contains("no items"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
