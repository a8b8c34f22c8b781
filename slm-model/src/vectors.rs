//! The sentence-vector cache both learned scorers read: an append-only file of a pretrained
//! encoder's frozen token states keyed by text ([`EmbeddingCache`]), and the pooled sentence
//! vectors the SLM's pretrained text side takes from it ([`CachedSentenceVectors`]).

use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::bert::PretrainedEncoder;
use crate::error::{Error, Result};

/// One sentence's word pieces and frozen token states.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedText {
    /// Token ids (`[CLS]` … `[SEP]`).
    pub ids: Vec<u32>,
    /// `ids.len() × dim` states, stored as f16.
    pub states: Vec<half::f16>,
}

/// An append-only file of token states keyed by text. A record is written only whole, and a
/// torn last record (a killed run: its lengths are plausible but the file ends inside it) is
/// dropped on open with a line on stderr, so no finished sentence is lost. Several processes may
/// share one cache: appends and the reading on open hold an exclusive file lock, and length
/// fields are bounded, so damage never asks for a huge allocation.
///
/// **Damage** (a length out of bounds, text that is not UTF-8) is quarantined, never silently
/// cut: the records before it are kept, the bytes from the damaged record to the end are moved
/// to `<file>.damaged-at-<offset>` (records after the damage cannot be re-synchronised without
/// framing, so they are kept there for inspection and recomputed), and stderr says so.
///
/// Record layout (little endian): `u32` text length, text bytes, `u32` token count, `u32` dim,
/// the ids as `u32`, the states as f16.
///
/// **Memory.** Only the index lives in memory: each text with the offset of its states in the
/// file (a sentence of MiniLM states is ~15 KB on disk, its index entry the text plus 12 bytes).
/// [`EmbeddingCache::get`] reads an entry from the file when asked (the OS page cache keeps the
/// hot ones), so a cache of millions of sentences opens in bounded memory.
///
/// **Only what it can read back is written.** A text longer than the record format allows
/// (1 MiB; its states are those of the encoder's window, see
/// [`window_prefix`](crate::bert::window_prefix)) is kept in memory for this run only, never
/// appended, so one hostile text cannot leave a record that every later run would refuse.
#[derive(Debug)]
pub struct EmbeddingCache {
    path: PathBuf,
    dim: usize,
    entries: HashMap<String, Slot>,
    /// Entries too large for a record, held for this run.
    unwritable: HashMap<String, CachedText>,
    encoder_id: Option<String>,
    /// A read handle on the file, opened on first read.
    reader: Mutex<Option<std::fs::File>>,
    repair: Option<Repair>,
}

/// What [`EmbeddingCache::open`] repaired in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Repair {
    /// A torn last record (a run stopped while writing it) was cut off.
    Torn {
        /// Bytes cut.
        bytes: u64,
    },
    /// A damaged record and everything after it were moved aside.
    Damaged {
        /// Byte offset of the damaged record.
        at: u64,
        /// What was wrong with it.
        why: &'static str,
        /// Where the bytes went (a new file each time: an earlier quarantine is never overwritten).
        moved_to: PathBuf,
    },
}

/// Where a record's ids and states lie in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    /// Byte offset of the ids.
    offset: u64,
    /// Tokens.
    tokens: u32,
}

impl EmbeddingCache {
    /// Opens (or starts) the cache at `path` for vectors of width `dim`.
    ///
    /// # Errors
    /// [`Error::Io`]; [`Error::Format`] when a whole record has another width.
    pub fn open(path: &Path, dim: usize) -> Result<Self> {
        let mut cache = Self { path: path.to_owned(), dim, entries: HashMap::new(), unwritable: HashMap::new(), encoder_id: None, reader: Mutex::new(None), repair: None };
        let Ok(file) = std::fs::OpenOptions::new().read(true).write(true).open(path) else { return Ok(cache) };
        // Exclusive while reading and cutting a torn tail: another process appending to the same
        // cache holds the lock for each chunk it writes, so a record being written is never
        // mistaken for a torn one.
        file.lock().map_err(|e| Error::io(path, e))?;
        let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let mut reader = BufReader::new(&file);
        let mut valid = 0_u64;
        let stop = loop {
            match read_header(&mut reader, file_len - valid) {
                Ok(header) => {
                    if header.tokens > 0 && header.dim != dim {
                        return Err(Error::Format(format!("{}: record {} has width {} (expected {dim})", path.display(), cache.entries.len() + 1, header.dim)));
                    }
                    // The payload is known to be in the file (read_header checked its size).
                    reader.seek_relative(header.payload as i64).map_err(|e| Error::io(path, e))?;
                    cache.entries.insert(header.text, Slot { offset: valid + header.size - header.payload, tokens: header.tokens as u32 });
                    valid += header.size;
                }
                Err(stop) => break stop,
            }
        };
        let rest = file_len - valid;
        match stop {
            Stop::End => {}
            Stop::Torn => {
                eprintln!("{}: dropped a torn last record ({rest} bytes at byte {valid}; a run stopped while writing it); {} records kept", path.display(), cache.entries.len());
                file.set_len(valid).map_err(|e| Error::io(path, e))?;
                cache.repair = Some(Repair::Torn { bytes: rest });
            }
            Stop::Damaged(why) => {
                let (quarantine, mut to) = quarantine_file(path, valid)?;
                // Copied in a stream: the tail of a large cache need not fit in memory.
                let mut from = &file;
                from.seek(std::io::SeekFrom::Start(valid)).map_err(|e| Error::io(path, e))?;
                std::io::copy(&mut from, &mut to).map_err(|e| Error::io(&quarantine, e))?;
                file.set_len(valid).map_err(|e| Error::io(path, e))?;
                eprintln!(
                    "{}: damaged record at byte {valid} ({why}); the {} records before it are kept, the {rest} bytes from there are moved to {} and their sentences will be encoded again",
                    path.display(),
                    cache.entries.len(),
                    quarantine.display()
                );
                cache.repair = Some(Repair::Damaged { at: valid, why, moved_to: quarantine });
            }
        }
        Ok(cache)
    }

    /// What opening the cache repaired, if anything.
    pub fn repair(&self) -> Option<&Repair> {
        self.repair.as_ref()
    }

    /// Records which encoder the states come from ([`PretrainedEncoder::fingerprint`]): models
    /// trained on this cache remember it and refuse a cache of another encoder.
    #[must_use]
    pub fn with_encoder_id(mut self, id: &str) -> Self {
        self.encoder_id = Some(id.to_owned());
        self
    }

    /// Width of the stored token states.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The encoder the states come from, when recorded.
    pub fn encoder_id(&self) -> Option<&str> {
        self.encoder_id.as_deref()
    }

    /// The cache file opened for appending, locked exclusively (released when dropped), so that
    /// processes sharing a cache never interleave their records.
    fn append(&self) -> Result<std::fs::File> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&self.path).map_err(|e| Error::io(&self.path, e))?;
        file.lock().map_err(|e| Error::io(&self.path, e))?;
        Ok(file)
    }

    /// Cached sentences (those held in memory only included).
    pub fn len(&self) -> usize {
        self.entries.len() + self.unwritable.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `text` is cached.
    pub fn contains(&self, text: &str) -> bool {
        self.entries.contains_key(text) || self.unwritable.contains_key(text)
    }

    /// The entry of `text`, read from the file.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read there (changed under the cache).
    pub fn get(&self, text: &str) -> Result<Option<CachedText>> {
        let Some(slot) = self.entries.get(text) else { return Ok(self.unwritable.get(text).cloned()) };
        let mut guard = self.reader.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            *guard = Some(std::fs::File::open(&self.path).map_err(|e| Error::io(&self.path, e))?);
        }
        let Some(file) = guard.as_mut() else { return Ok(None) };
        let n = slot.tokens as usize;
        let mut bytes = vec![0_u8; 4 * n + 2 * n * self.dim];
        file.seek(SeekFrom::Start(slot.offset)).and_then(|_| file.read_exact(&mut bytes)).map_err(|e| Error::io(&self.path, e))?;
        let (ids, states) = bytes.split_at(4 * n);
        Ok(Some(CachedText { ids: crate::le::u32s(ids), states: crate::le::f16s(states) }))
    }

    /// The offset at which the next appended record starts: the file's length, read under the
    /// append lock.
    fn end(&self, file: &std::fs::File) -> Result<u64> {
        Ok(file.metadata().map_err(|e| Error::io(&self.path, e))?.len())
    }

    /// Adds token states computed elsewhere (another encoder of the same width) and appends them
    /// to the file.
    ///
    /// # Errors
    /// [`Error::Config`] when `states` is not `ids.len() × dim`; [`Error::Io`].
    pub fn insert(&mut self, text: &str, entry: CachedText) -> Result<()> {
        if entry.states.len() != entry.ids.len() * self.dim {
            return Err(Error::Config(format!("{text:?}: {} states for {} tokens of width {}", entry.states.len(), entry.ids.len(), self.dim)));
        }
        if !writable(text, entry.ids.len(), self.dim) {
            self.unwritable.insert(text.to_owned(), entry);
            return Ok(());
        }
        let file = self.append()?;
        let start = self.end(&file)?;
        let mut writer = BufWriter::new(&file);
        write_record(&mut writer, text, &entry, self.dim).and_then(|()| writer.flush()).map_err(|e| Error::io(&self.path, e))?;
        self.entries.insert(text.to_owned(), Slot { offset: start + 12 + text.len() as u64, tokens: entry.ids.len() as u32 });
        Ok(())
    }

    /// Encodes the texts not yet cached (256 at a time, appending each chunk to the file) and
    /// calls `progress(done, total)`.
    ///
    /// # Errors
    /// Encoder failures; [`Error::Config`] when the encoder's width differs from the cache's.
    pub fn fill(&mut self, encoder: &PretrainedEncoder, texts: &[&str], progress: &dyn Fn(usize, usize)) -> Result<()> {
        if encoder.hidden_size() != self.dim {
            return Err(Error::Config(format!("{}: cache width {} but encoder width {}", self.path.display(), self.dim, encoder.hidden_size())));
        }
        let mut missing: Vec<&str> = texts.iter().copied().filter(|t| !self.contains(t)).collect();
        missing.sort_unstable();
        missing.dedup();
        for (k, chunk) in missing.chunks(256).enumerate() {
            let encoded = encoder.encode(chunk)?;
            let file = self.append()?;
            let mut at = self.end(&file)?;
            let mut writer = BufWriter::new(&file);
            for (text, encoded) in chunk.iter().zip(encoded) {
                let entry = CachedText { ids: encoded.ids, states: encoded.states.iter().flatten().map(|&v| half::f16::from_f32(v)).collect() };
                if !writable(text, entry.ids.len(), self.dim) {
                    self.unwritable.insert((*text).to_owned(), entry);
                    continue;
                }
                write_record(&mut writer, text, &entry, self.dim).map_err(|e| Error::io(&self.path, e))?;
                self.entries.insert((*text).to_owned(), Slot { offset: at + 12 + text.len() as u64, tokens: entry.ids.len() as u32 });
                at += record_size(text.len(), entry.ids.len(), self.dim);
            }
            writer.flush().map_err(|e| Error::io(&self.path, e))?;
            drop(writer);
            file.unlock().map_err(|e| Error::io(&self.path, e))?;
            progress((k * 256 + chunk.len()).min(missing.len()), missing.len());
        }
        Ok(())
    }
}

/// Sentence vectors from an [`EmbeddingCache`]: the mean of a sentence's token states
/// (`[CLS]` and `[SEP]` included), L2-normalised — the sentence embedding of
/// all-MiniLM-L6-v2 (sentence-transformers' mean pooling), what the SLM's pretrained head reads.
#[derive(Debug, Clone, Copy)]
pub struct CachedSentenceVectors<'a> {
    cache: &'a EmbeddingCache,
    encoder_id: &'a str,
}

impl<'a> CachedSentenceVectors<'a> {
    /// Vectors of `cache`, whose states come from the encoder `encoder_id`
    /// ([`PretrainedEncoder::fingerprint`]).
    pub fn new(cache: &'a EmbeddingCache, encoder_id: &'a str) -> Self {
        Self { cache, encoder_id }
    }
}

impl crate::sentence_vectors::SentenceVectors for CachedSentenceVectors<'_> {
    fn dim(&self) -> usize {
        self.cache.dim
    }

    fn encoder_id(&self) -> &str {
        self.encoder_id
    }

    fn vector(&self, text: &str) -> Option<Vec<f32>> {
        let entry = self.entry(text)?;
        let dim = self.cache.dim;
        let mut v = vec![0.0_f32; dim];
        for token in entry.states.chunks_exact(dim) {
            v.iter_mut().zip(token).for_each(|(a, b)| *a += b.to_f32());
        }
        let n = (entry.states.len() / dim).max(1) as f32;
        v.iter_mut().for_each(|a| *a /= n);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        Some(v)
    }

    fn token_states(&self, text: &str) -> Option<Vec<half::f16>> {
        self.entry(text).map(|entry| entry.states)
    }
}

impl CachedSentenceVectors<'_> {
    /// The cached entry of `text`. A read failure is reported here and then, by the caller, as
    /// the missing vector it is.
    fn entry(&self, text: &str) -> Option<CachedText> {
        self.cache.get(text).unwrap_or_else(|e| {
            eprintln!("{e}");
            None
        })
    }
}

fn read_u32(r: &mut impl Read) -> Option<u32> {
    let mut b = [0_u8; 4];
    r.read_exact(&mut b).ok()?;
    Some(u32::from_le_bytes(b))
}

/// Longest text, most tokens and widest state a record may claim: a length field beyond these is
/// damage (it would otherwise ask for a huge allocation), read as the end of the valid records.
const MAX_TEXT_BYTES: usize = 1 << 20;
const MAX_TOKENS: usize = 1 << 16;
const MAX_DIM: usize = 1 << 14;

/// Whether a record of `text` with `tokens` tokens of width `dim` is one [`read_header`] accepts.
fn writable(text: &str, tokens: usize, dim: usize) -> bool {
    text.len() <= MAX_TEXT_BYTES && tokens <= MAX_TOKENS && dim <= MAX_DIM
}

/// A new file for the damaged tail at byte `at`: `<file>.damaged-at-<at>`, or `…-<at>.<k>` for the
/// first `k` free when an earlier run already quarantined there (created exclusively, so two
/// processes never share one).
fn quarantine_file(path: &Path, at: u64) -> Result<(PathBuf, std::fs::File)> {
    for k in 1_u32.. {
        let name = if k == 1 { format!("{}.damaged-at-{at}", path.display()) } else { format!("{}.damaged-at-{at}.{k}", path.display()) };
        let candidate = PathBuf::from(name);
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&candidate) {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(&candidate, e)),
        }
    }
    Err(Error::Config(format!("{}: no free name to move damage at byte {at} to", path.display())))
}

/// Why [`read_record`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The end of the file, after a whole record.
    End,
    /// Plausible lengths, but the file ends inside the record: a torn last write.
    Torn,
    /// Lengths out of bounds or text that is not UTF-8.
    Damaged(&'static str),
}

/// Bytes of a record of `text_len` text bytes and `tokens` tokens of width `dim`.
fn record_size(text_len: usize, tokens: usize, dim: usize) -> u64 {
    (12 + text_len + 4 * tokens + 2 * tokens * dim) as u64
}

/// A record's text and lengths, read up to its payload (ids and states).
struct Header {
    text: String,
    tokens: usize,
    dim: usize,
    /// Bytes of the ids and states that follow.
    payload: u64,
    /// Bytes of the whole record.
    size: u64,
}

/// The next record's header, or why there is none. Every length is checked against the bounds
/// and against the `remaining` bytes of the file before anything is allocated, so the payload
/// it announces is in the file.
fn read_header(r: &mut impl Read, remaining: u64) -> std::result::Result<Header, Stop> {
    if remaining == 0 {
        return Err(Stop::End);
    }
    let len = read_u32(r).ok_or(Stop::Torn)? as usize;
    if len > MAX_TEXT_BYTES {
        return Err(Stop::Damaged("text length out of bounds"));
    }
    if (12 + len) as u64 > remaining {
        return Err(Stop::Torn);
    }
    let mut text = vec![0_u8; len];
    r.read_exact(&mut text).map_err(|_| Stop::Torn)?;
    let n = read_u32(r).ok_or(Stop::Torn)? as usize;
    let dim = read_u32(r).ok_or(Stop::Torn)? as usize;
    if n > MAX_TOKENS || dim > MAX_DIM {
        return Err(Stop::Damaged("token count or width out of bounds"));
    }
    let size = record_size(len, n, dim);
    if size > remaining {
        return Err(Stop::Torn);
    }
    let text = String::from_utf8(text).map_err(|_| Stop::Damaged("text is not UTF-8"))?;
    Ok(Header { text, tokens: n, dim, payload: (4 * n + 2 * n * dim) as u64, size })
}

fn write_record(w: &mut impl Write, text: &str, entry: &CachedText, dim: usize) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(12 + text.len() + 4 * entry.ids.len() + 2 * entry.states.len());
    buf.extend((text.len() as u32).to_le_bytes());
    buf.extend(text.as_bytes());
    buf.extend((entry.ids.len() as u32).to_le_bytes());
    buf.extend((dim as u32).to_le_bytes());
    buf.extend(entry.ids.iter().flat_map(|i| i.to_le_bytes()));
    buf.extend(entry.states.iter().flat_map(|v| v.to_le_bytes()));
    w.write_all(&buf)
}
