//! The index as bytes, so that a later process can use it instead of building it. The file is
//! a cache of the in-memory index, field for field: a loaded index ranks exactly as the one that
//! was saved (the lexicon's words even come back in the order first seen, with their uses).
//!
//! Layout, all little-endian: a fixed header (magic, format version, the program's build
//! identity, an xxh3 checksum of everything else, the file's length), the index options and
//! the canonical workspace root, a small postcard-encoded table (paths, file stamps, the
//! vocabulary, where each block starts), then the bulk as flat blocks read in place from the
//! mapped file ([`mapped`](super::mapped)), 8-byte aligned: the `u32` blocks of the postings and
//! chunk lengths, then each note's blocks side by side (line offsets, term ids per line, where
//! each line's terms start, then its text padded to 4 bytes), so that a search reading a note
//! touches one place in the file, not two. Loading checks the checksum over the whole file
//! (dropping each page after reading it), decodes the table, and checks ids and offsets as far
//! as they are read without a bound check; nothing is decoded per token.
//! Anything that does not match, a short file, a flipped bit, another version or another
//! workspace, is an error and the caller builds the index afresh; nothing in a damaged file is
//! ever searched.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, LazyLock};

use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};
use xxhash_rust::xxh3::Xxh3;

use crate::index::bm25::{self, Bm25Index, ChunkSlot, TermId};
use crate::index::chunk::ChunkOptions;
use crate::index::lexicon::Lexicon;
use crate::index::mapped::{Backing, Ids, Region, Text};
use crate::index::rank::RankOptions;
use crate::index::tokenize::Analyzer;
use crate::index::{ChunkInfo, IndexedFile, MemoryIndex, note_when};
use crate::paths::MemoryPath;
use crate::store::{FileStamp, MemoryStore};

/// First bytes of every index file.
const MAGIC: &[u8; 8] = b"OCMEMIDX";
/// Bumped by hand when the layout changes in a way the build identity would not show.
const FORMAT_VERSION: u32 = 8;
/// Where the checksum sits: after the magic, the version and the build identity.
const CHECKSUM_AT: usize = 8 + 4 + 32;
/// The fixed header: the above, the checksum and the file's length.
const FIXED_HEADER: usize = CHECKSUM_AT + 8 + 8;
/// How much of the file the checksum reads before dropping those pages again: enough for the
/// hash to run at full speed, small next to the process's memory.
const CHECK_WINDOW: usize = 4 * 1024 * 1024;

/// Notes written between two [`MemoryIndex::release_mapped_pages`] while saving: about 2 MiB
/// of 2 KB notes.
const RELEASE_EVERY: usize = 1024;

/// Everything that decides the persisted bytes or what they mean: the crate version, the
/// format version, and the source of every file whose structs are persisted or whose code
/// decides what goes into the index (chunking, tokenizing and the message lines it reads,
/// stemming, marked lines). Any edit to them makes older files foreign, so a changed tokenizer
/// never serves a stale index.
static BUILD_ID: LazyLock<[u8; 32]> = LazyLock::new(|| {
    let mut hash = Sha256::new();
    hash.update(env!("CARGO_PKG_VERSION").as_bytes());
    hash.update(FORMAT_VERSION.to_le_bytes());
    for source in [
        include_str!("../index.rs"),
        include_str!("bm25.rs"),
        include_str!("build.rs"),
        include_str!("chunk.rs"),
        include_str!("lexicon.rs"),
        include_str!("mapped.rs"),
        include_str!("marked.rs"),
        include_str!("prepare.rs"),
        include_str!("snapshot.rs"),
        include_str!("tokenize.rs"),
        include_str!("transcript.rs"),
        include_str!("../paths.rs"),
        include_str!("../prefs.rs"),
        include_str!("../store.rs"),
    ] {
        hash.update((source.len() as u64).to_le_bytes());
        hash.update(source.as_bytes());
    }
    hash.finalize().into()
});

/// Why a persisted index was not used.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Not an index file, or one cut short.
    #[error("not a memory index file (bad magic or too short); it will be rebuilt")]
    NotAnIndex,
    /// Another format version or another build of the server wrote it.
    #[error("the memory index was written by another build of openclaw-memory; it will be rebuilt")]
    OtherBuild,
    /// Written for other index options (stemming, chunking) or another workspace.
    #[error("the memory index is for another workspace or other options; it will be rebuilt")]
    Foreign,
    /// The checksum or the length does not match: damaged on disk.
    #[error("the memory index file is damaged (checksum mismatch); it will be rebuilt")]
    Damaged,
    /// Encoding or writing the index failed (nothing is written then).
    #[error("the memory index could not be written ({0}); it stays in memory only")]
    Encode(String),
    /// The payload does not decode, or decodes to an index that does not hold together.
    #[error("the memory index file does not decode ({0}); it will be rebuilt")]
    Invalid(String),
}

/// Where a run of `u32`s sits in the file's `u32` area, in `u32`s.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
struct Span {
    start: u64,
    len: u64,
}

/// One file's entry in the table: its own fields, and the lengths of its blocks (which follow
/// each other in file order: its line offsets, its terms, its per-line term offsets; its text
/// in the text area).
#[derive(serde::Serialize)]
struct FileEntryRef<'a> {
    path: &'a MemoryPath,
    stamp: FileStamp,
    text_len: u64,
    lines: u64,
    terms: u64,
    chunks: &'a [u32],
    superseded: &'a [usize],
    message_starts: &'a [u32],
}

#[derive(serde::Deserialize)]
struct FileEntry {
    path: MemoryPath,
    stamp: FileStamp,
    text_len: u64,
    lines: u64,
    terms: u64,
    chunks: Vec<u32>,
    superseded: Vec<usize>,
    message_starts: Vec<u32>,
}

/// The table: everything small, decoded whole.
#[derive(serde::Serialize)]
struct TableRef<'a> {
    words: Vec<(&'a str, TermId, u32)>,
    vocabulary: Vec<&'a str>,
    live_chunks: u32,
    live_len: u64,
    blocks: Blocks,
    files: Vec<Option<FileEntryRef<'a>>>,
    chunk_info: &'a [ChunkInfo],
}

#[derive(serde::Deserialize)]
struct Table {
    words: Vec<(Box<str>, TermId, u32)>,
    vocabulary: Vec<Box<str>>,
    live_chunks: u32,
    live_len: u64,
    blocks: Blocks,
    files: Vec<Option<FileEntry>>,
    chunk_info: Vec<ChunkInfo>,
}

/// Where the BM25 blocks are, and how large the two areas are.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
struct Blocks {
    doc_freq: Span,
    /// `terms + 1` offsets into `postings`.
    posting_starts: Span,
    postings: Span,
    chunk_lens: Span,
    chunk_alive: Span,
    /// Where the files' blocks start, in `u32`s.
    files_at: u64,
    /// Size of the block area, in `u32`s (a note's text counts as its length in bytes rounded
    /// up to 4).
    ids_len: u64,
}

/// The options that change what the index holds.
fn options_tag(ranking: &RankOptions, chunking: ChunkOptions) -> String {
    format!("stemming={} chunking={chunking:?}", ranking.stemming)
}

/// Lays out the block area: hands out spans in write order.
#[derive(Default)]
struct Layout {
    ids: u64,
}

impl Layout {
    fn ids(&mut self, len: usize) -> Span {
        let span = Span {
            start: self.ids,
            len: len as u64,
        };
        self.ids += len as u64;
        span
    }
}

/// Writes through, hashing everything but the checksum field, and counting.
struct Hashing<W> {
    out: W,
    hash: Xxh3,
    written: u64,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hash.update(bytes);
        self.written += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    fn put_ids(&mut self, ids: &[u32]) -> std::io::Result<()> {
        // Little-endian only: `write_snapshot` refuses big-endian hosts.
        self.put(bytemuck::cast_slice(ids))
    }

    fn field(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.put(&(bytes.len() as u64).to_le_bytes())?;
        self.put(bytes)
    }
}

impl MemoryIndex {
    /// The index as the bytes of an index file for the workspace at `root` (canonical).
    pub fn to_snapshot(&self, root: &Path) -> Result<Vec<u8>, SnapshotError> {
        let mut out = std::io::Cursor::new(Vec::new());
        self.write_snapshot(root, &mut out)?;
        Ok(out.into_inner())
    }

    /// Writes the index file for the workspace at `root` (canonical) to `out`, from its start;
    /// returns its checksum.
    pub fn write_snapshot<W: Write + Seek>(
        &self,
        root: &Path,
        out: W,
    ) -> Result<u64, SnapshotError> {
        let failed = |e: std::io::Error| SnapshotError::Encode(e.to_string());
        if cfg!(target_endian = "big") {
            return Err(SnapshotError::Encode(
                "index files are little-endian; this host is not".to_owned(),
            ));
        }
        let bm25 = &self.bm25;
        let mut layout = Layout::default();
        let mut blocks = Blocks {
            doc_freq: layout.ids(bm25.doc_freq.len()),
            posting_starts: layout.ids(bm25.postings.len() + 1),
            postings: layout.ids(bm25.postings.iter().map(|p| p.len()).sum()),
            chunk_lens: layout.ids(bm25.chunks.len()),
            chunk_alive: layout.ids(bm25.chunks.len()),
            files_at: layout.ids,
            ..Blocks::default()
        };
        let files: Vec<Option<FileEntryRef<'_>>> = self
            .files
            .iter()
            .map(|file| {
                file.as_ref().map(|f| {
                    layout.ids(
                        f.line_starts.len()
                            + f.terms.len()
                            + f.term_starts.len()
                            + f.text.bytes().len().div_ceil(4),
                    );
                    FileEntryRef {
                        path: &f.path,
                        stamp: f.stamp,
                        text_len: f.text.bytes().len() as u64,
                        lines: f.line_starts.len() as u64,
                        terms: f.terms.len() as u64,
                        chunks: &f.chunks,
                        superseded: &f.superseded,
                        message_starts: &f.message_starts,
                    }
                })
            })
            .collect();
        blocks.ids_len = layout.ids;
        let table = TableRef {
            words: self.lexicon.saved_words().collect(),
            vocabulary: bm25.terms_in_id_order(),
            live_chunks: bm25.live_chunks,
            live_len: bm25.live_len,
            blocks,
            files,
            chunk_info: &self.chunk_info,
        };
        let table =
            postcard::to_stdvec(&table).map_err(|e| SnapshotError::Encode(e.to_string()))?;

        let mut w = Hashing {
            out: std::io::BufWriter::with_capacity(1 << 20, out),
            hash: Xxh3::new(),
            written: 0,
        };
        w.put(MAGIC).map_err(failed)?;
        w.put(&FORMAT_VERSION.to_le_bytes()).map_err(failed)?;
        w.put(&*BUILD_ID).map_err(failed)?;
        // The checksum and the length, filled in at the end; not hashed.
        w.out.write_all(&[0; 8]).map_err(failed)?;
        w.written += 8;
        let total = FIXED_HEADER as u64
            + 16
            + options_tag(&self.ranking, self.chunking).len() as u64
            + root.as_os_str().len() as u64
            + 8
            + table.len() as u64;
        let total = total.next_multiple_of(8) + blocks.ids_len * 4;
        w.put(&total.to_le_bytes()).map_err(failed)?;
        w.field(options_tag(&self.ranking, self.chunking).as_bytes())
            .map_err(failed)?;
        w.field(root.as_os_str().as_encoded_bytes())
            .map_err(failed)?;
        w.field(&table).map_err(failed)?;
        let pad = w.written.next_multiple_of(8) - w.written;
        w.put(&vec![0; usize::try_from(pad).unwrap_or(0)])
            .map_err(failed)?;

        self.write_blocks(&mut w).map_err(failed)?;
        if w.written != total {
            return Err(SnapshotError::Encode(format!(
                "wrote {} bytes, laid out {total}",
                w.written
            )));
        }
        let checksum = w.hash.digest();
        let mut out = w
            .out
            .into_inner()
            .map_err(|e| SnapshotError::Encode(e.error().to_string()))?;
        out.seek(SeekFrom::Start(CHECKSUM_AT as u64))
            .map_err(failed)?;
        out.write_all(&checksum.to_le_bytes()).map_err(failed)?;
        out.seek(SeekFrom::End(0)).map_err(failed)?;
        Ok(checksum)
    }

    /// The block area, in the order `write_snapshot`'s layout handed out.
    fn write_blocks<W: Write>(&self, w: &mut Hashing<W>) -> std::io::Result<()> {
        let bm25 = &self.bm25;
        w.put_ids(&bm25.doc_freq)?;
        let mut at = 0_u32;
        w.put_ids(&[0])?;
        for list in &bm25.postings {
            at = u32::try_from(list.len())
                .ok()
                .and_then(|len| at.checked_add(len))
                .ok_or_else(|| std::io::Error::other("postings beyond 2^32 entries"))?;
            w.put_ids(&[at])?;
        }
        for list in &bm25.postings {
            w.put_ids(list)?;
        }
        for chunk in &bm25.chunks {
            w.put_ids(&[chunk.len])?;
        }
        for chunk in &bm25.chunks {
            w.put_ids(&[u32::from(chunk.alive)])?;
        }
        // Notes read in place from a mapped file are given back every thousand, so that
        // writing the index does not make all of it resident.
        for (i, file) in self.files.iter().flatten().enumerate() {
            w.put_ids(&file.line_starts)?;
            w.put_ids(&file.terms)?;
            w.put_ids(&file.term_starts)?;
            let text = file.text.bytes();
            w.put(text)?;
            w.put(&[0; 3][..text.len().next_multiple_of(4) - text.len()])?;
            if i % RELEASE_EVERY == RELEASE_EVERY - 1 {
                self.release_mapped_pages();
            }
        }
        self.release_mapped_pages();
        Ok(())
    }

    /// An index read back from `bytes` (a copy; the server maps the file instead, see
    /// [`Self::from_backing`]).
    pub fn from_snapshot(
        bytes: &[u8],
        root: &Path,
        store: MemoryStore,
        ranking: RankOptions,
    ) -> Result<Self, SnapshotError> {
        Self::from_backing(&Arc::new(Backing::copy_of(bytes)), root, store, ranking)
    }

    /// An index over the saved index in `backing`, for the workspace at `root` (canonical)
    /// read through `store`. Any mismatch or damage is an error: the caller builds afresh.
    pub fn from_backing(
        backing: &Arc<Backing>,
        root: &Path,
        store: MemoryStore,
        ranking: RankOptions,
    ) -> Result<Self, SnapshotError> {
        let chunking = ChunkOptions::default();
        if cfg!(target_endian = "big") {
            return Err(SnapshotError::OtherBuild);
        }
        let bytes: &[u8] = backing;
        let mut reader = Reader(bytes);
        if reader.take(MAGIC.len())? != MAGIC {
            return Err(SnapshotError::NotAnIndex);
        }
        if reader.take(4)? != FORMAT_VERSION.to_le_bytes() || reader.take(32)? != &BUILD_ID[..] {
            return Err(SnapshotError::OtherBuild);
        }
        let checksum = reader.u64()?;
        if reader.u64()? != bytes.len() as u64 {
            return Err(SnapshotError::Damaged);
        }
        let options = reader.field()?;
        let stored_root = reader.field()?;
        if options != options_tag(&ranking, chunking).as_bytes()
            || stored_root != root.as_os_str().as_encoded_bytes()
        {
            return Err(SnapshotError::Foreign);
        }
        let started = std::time::Instant::now();
        if checksum_of(backing) != checksum {
            return Err(SnapshotError::Damaged);
        }
        let checked = started.elapsed();
        let table = reader.field()?;
        let table: Table =
            postcard::from_bytes(table).map_err(|e| SnapshotError::Invalid(e.to_string()))?;
        let ids_at = (bytes.len() - reader.0.len()).next_multiple_of(8);
        let area = Area {
            backing,
            ids_at,
            end: usize::try_from(table.blocks.ids_len)
                .ok()
                .and_then(|n| n.checked_mul(4))
                .and_then(|n| n.checked_add(ids_at))
                .ok_or(SnapshotError::Damaged)?,
        };
        if area.end != bytes.len() {
            return Err(SnapshotError::Invalid("block sizes".to_owned()));
        }
        let mut index = Self::from_table(table, &area, store, ranking, chunking)?;
        backing.release_all();
        backing.expect_random_reads();
        index.checksum = Some(checksum);
        tracing::debug!(
            checksum_ms = checked.as_secs_f64() * 1000.0,
            table_ms = started.elapsed().saturating_sub(checked).as_secs_f64() * 1000.0,
            "memory index file checked and its table decoded"
        );
        Ok(index)
    }

    fn from_table(
        table: Table,
        area: &Area<'_>,
        store: MemoryStore,
        ranking: RankOptions,
        chunking: ChunkOptions,
    ) -> Result<Self, SnapshotError> {
        let invalid = |what: &str| SnapshotError::Invalid(what.to_owned());
        let Table {
            words,
            vocabulary,
            live_chunks,
            live_len,
            blocks,
            files: entries,
            chunk_info,
        } = table;
        let bm25 = bm25_from(vocabulary, live_chunks, live_len, blocks, area)
            .ok_or_else(|| invalid("inconsistent postings"))?;
        let terms = bm25.term_count();
        let lexicon = Lexicon::restore(ranking.stemming, words, terms)
            .ok_or_else(|| invalid("inconsistent lexicon"))?;
        if chunk_info.len() != bm25.slots() {
            return Err(invalid("chunk count"));
        }
        let mut files = Vec::with_capacity(entries.len());
        let mut free_slots = std::collections::BTreeSet::new();
        let mut ids_at = blocks.files_at;
        let mut by_path = FxHashMap::default();
        by_path.reserve(entries.len());
        for (slot, entry) in entries.into_iter().enumerate() {
            let Some(entry) = entry else {
                free_slots.insert(u32::try_from(slot).map_err(|_| invalid("too many files"))?);
                files.push(None);
                continue;
            };
            let file = area
                .file(entry, &mut ids_at)
                .filter(|f| f.holds_together(bm25.slots()))
                .ok_or_else(|| invalid("inconsistent file"))?;
            let slot = u32::try_from(slot).map_err(|_| invalid("too many files"))?;
            if by_path.insert(file.path.clone(), slot).is_some() {
                return Err(invalid("a path appears twice"));
            }
            files.push(Some(file));
        }
        // The live chunks are exactly the ones the files own, each once: scoring reads only
        // live chunks, and each of those must lead to its file and lines.
        let mut owned = vec![false; bm25.slots()];
        for (slot, file) in files.iter().enumerate() {
            let Some(file) = file else { continue };
            for &chunk in &file.chunks {
                if !bm25.is_alive(chunk) || std::mem::replace(&mut owned[chunk as usize], true) {
                    return Err(invalid("chunk owner"));
                }
                // In range: `holds_together` checked every chunk id against the slots.
                let info = chunk_info[chunk as usize];
                if info.file as usize != slot || info.range.end >= file.line_count() {
                    return Err(invalid("chunk owner"));
                }
            }
        }
        if owned.iter().filter(|&&o| o).count() != bm25.len() {
            return Err(invalid("a live chunk without a file"));
        }
        Ok(Self {
            store,
            analyzer: Analyzer::new(),
            lexicon,
            chunking,
            ranking,
            bm25,
            files,
            free_slots,
            by_path,
            chunk_info,
            vectors: None,
            fresh_at_check: None,
            checksum: None,
            mapped: vec![Arc::clone(area.backing)],
            spill_dir: None,
        })
    }
}

/// The xxh3 checksum of a saved index: every byte but the checksum's own. Read a window at a
/// time, each window's pages dropped once hashed, so checking a 100 MB file does not make it
/// resident in this process.
fn checksum_of(backing: &Backing) -> u64 {
    let bytes: &[u8] = backing;
    backing.expect_sequential_reads();
    let mut hash = Xxh3::new();
    hash.update(&bytes[..CHECKSUM_AT]);
    let mut at = CHECKSUM_AT + 8;
    while at < bytes.len() {
        let end = (at + CHECK_WINDOW).min(bytes.len());
        hash.update(&bytes[at..end]);
        backing.release(at..end);
        at = end;
    }
    hash.digest()
}

/// The two block areas of a saved index.
struct Area<'a> {
    backing: &'a Arc<Backing>,
    /// Byte offset of the block area.
    ids_at: usize,
    /// Byte offset of its end (the end of the file).
    end: usize,
}

impl Area<'_> {
    /// The `u32`s of `span`, in place.
    fn ids(&self, span: Span) -> Option<Ids> {
        let start = usize::try_from(span.start).ok()?.checked_mul(4)?;
        let len = usize::try_from(span.len).ok()?;
        if start.checked_add(len.checked_mul(4)?)? > self.end - self.ids_at {
            return None;
        }
        Ids::mapped(self.backing, self.ids_at + start, len)
    }

    /// Run `i` of a block of runs laid out by `starts` (offsets into `data`, one more than the
    /// runs), in place.
    fn run(&self, data: Span, starts: &[u32], i: usize) -> Option<Ids> {
        let (from, to) = (*starts.get(i)?, *starts.get(i + 1)?);
        let len = to.checked_sub(from)?;
        if u64::from(to) > data.len {
            return None;
        }
        self.ids(Span {
            start: data.start + u64::from(from),
            len: u64::from(len),
        })
    }

    /// `len` bytes of text at `start` (in `u32`s) of the block area.
    fn text(&self, start: u64, len: u64) -> Option<Text> {
        let start = usize::try_from(start).ok()?.checked_mul(4)?;
        let len = usize::try_from(len).ok()?;
        if start.checked_add(len)? > self.end - self.ids_at {
            return None;
        }
        Region::new(self.backing, self.ids_at + start, len).map(Text::Mapped)
    }

    /// A file from its table entry and its blocks at `ids_at` (moved past them).
    fn file(&self, entry: FileEntry, ids_at: &mut u64) -> Option<IndexedFile> {
        let mut next = |len: u64| {
            let span = Span {
                start: *ids_at,
                len,
            };
            *ids_at = ids_at.checked_add(len)?;
            self.ids(span)
        };
        let line_starts = next(entry.lines)?;
        let terms = next(entry.terms)?;
        let term_starts = next(entry.lines.checked_add(1)?)?;
        let text = self.text(*ids_at, entry.text_len)?;
        *ids_at = ids_at.checked_add(entry.text_len.div_ceil(4))?;
        let (day, time) = note_when(&entry.path, text.bytes());
        Some(IndexedFile {
            day,
            time,
            path: entry.path,
            stamp: entry.stamp,
            text,
            line_starts,
            chunks: entry.chunks,
            terms,
            term_starts,
            superseded: entry.superseded,
            message_starts: entry.message_starts,
        })
    }
}

/// The BM25 index over the blocks of a saved one; `None` when they do not fit together.
fn bm25_from(
    vocabulary: Vec<Box<str>>,
    live_chunks: u32,
    live_len: u64,
    blocks: Blocks,
    area: &Area<'_>,
) -> Option<Bm25Index> {
    let terms = vocabulary.len();
    let mut map = rustc_hash::FxHashMap::default();
    map.reserve(terms);
    for (id, term) in vocabulary.into_iter().enumerate() {
        if map.insert(term, TermId::try_from(id).ok()?).is_some() {
            return None;
        }
    }
    let posting_starts = area.ids(blocks.posting_starts)?;
    if posting_starts.len() != terms + 1 {
        return None;
    }
    let postings = (0..terms)
        .map(|t| area.run(blocks.postings, &posting_starts, t))
        .collect::<Option<Vec<Ids>>>()?;
    let lens = area.ids(blocks.chunk_lens)?;
    let alive = area.ids(blocks.chunk_alive)?;
    if alive.len() != lens.len() {
        return None;
    }
    let chunks = lens
        .iter()
        .zip(alive.iter())
        .map(|(&len, &alive)| ChunkSlot {
            len,
            alive: alive != 0,
        })
        .collect();
    let index = Bm25Index {
        vocabulary: map,
        postings,
        doc_freq: area.ids(blocks.doc_freq)?.to_vec(),
        chunks,
        live_chunks,
        live_len,
        deferred: None,
    };
    // The postings are checked a window at a time in file order, each window's pages given
    // back once read: checking them must not make the whole block resident.
    let flat = area.ids(blocks.postings)?;
    let at = area.ids_at + usize::try_from(blocks.postings.start).ok()? * 4;
    let slots = index.chunks.len();
    let window = CHECK_WINDOW / 4;
    for (i, part) in flat.chunks(window).enumerate() {
        if !bm25::postings_in_range(part, slots) {
            return None;
        }
        area.backing
            .release(at + i * CHECK_WINDOW..at + i * CHECK_WINDOW + part.len() * 4);
    }
    index.counts_hold_together().then_some(index)
}

/// Reads the header front to back; running out of bytes means a cut-short file.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SnapshotError> {
        if self.0.len() < n {
            return Err(SnapshotError::NotAnIndex);
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, SnapshotError> {
        let bytes: [u8; 8] = self
            .take(8)?
            .try_into()
            .map_err(|_| SnapshotError::NotAnIndex)?;
        Ok(u64::from_le_bytes(bytes))
    }

    fn field(&mut self) -> Result<&'a [u8], SnapshotError> {
        let len = usize::try_from(self.u64()?).map_err(|_| SnapshotError::NotAnIndex)?;
        self.take(len)
    }
}

impl IndexedFile {
    /// Whether a loaded file's blocks fit together, as far as reading them relies on it
    /// without a bound check: per-line offsets are read through `get`, so they are not walked
    /// here (that would read every page of the file).
    fn holds_together(&self, chunks: usize) -> bool {
        let lines = self.line_starts.len();
        lines > 0
            && self.term_starts.len() == lines + 1
            && self.chunks.iter().all(|&c| (c as usize) < chunks)
            && self.superseded.iter().all(|&i| i < lines)
            && self
                .message_starts
                .iter()
                .all(|&i| (i as usize) < self.terms.len())
            && self.message_starts.is_sorted()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use pretty_assertions::assert_eq;
    use tempfile::TempDir;

    use super::*;
    use crate::index::LocalHit;

    const QUERIES: &[&str] = &[
        "passport expiry",
        "pasport renewal",
        "anniversery dinner",
        "laptop",
        "book meetings",
        "home server debian",
        "kangaroo",
    ];

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn workspace() -> TempDir {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "MEMORY.md",
            "# Memory\n\n- The home server runs Debian 12.\n- ~~Laptop: ThinkPad~~ (a Framework 13 since May).\n",
        );
        write(
            dir.path(),
            "USER.md",
            "## Directives\n\n<!-- observed: 2025-01-01 | status: superseded -->\n- Book meetings after 09:00.\n\n<!-- observed: 2026-01-01 | status: active -->\n- Book meetings after 10:00.\n",
        );
        write(
            dir.path(),
            "memory/2026-02-20.md",
            "- Passport renewed; it expires 2036-02-11.\n- Anniversary dinner at Lumi.\n",
        );
        write(
            dir.path(),
            "memory/2026-02-21.md",
            "- Bought bread.\n- Anniversaries are in June.\n",
        );
        write(
            dir.path(),
            "memory/sub/2026-03-01.md",
            "- Laptop battery replaced.\n",
        );
        write(
            dir.path(),
            "memory/2026-03-02-0930.md",
            concat!(
                "# Session: 2026-03-02 09:30:00 UTC\n\n## Conversation Summary\n\n",
                r#"user: "ok\nthe laptop dock is back\n\nbattery fine""#,
                "\n",
                r#"assistant: "Noted.""#,
                "\n",
            ),
        );
        dir
    }

    fn built(root: &Path) -> MemoryIndex {
        let mut index =
            MemoryIndex::new(MemoryStore::new(root.to_path_buf()), RankOptions::default());
        index.refresh().unwrap();
        index
    }

    fn answers(index: &MemoryIndex) -> Vec<Vec<LocalHit>> {
        QUERIES
            .iter()
            .map(|q| index.search(q, 5, Some(20_600)))
            .collect()
    }

    fn reload(index: &MemoryIndex, root: &Path) -> MemoryIndex {
        let bytes = index.to_snapshot(root).unwrap();
        MemoryIndex::from_snapshot(
            &bytes,
            root,
            MemoryStore::new(root.to_path_buf()),
            RankOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_loaded_index_answers_exactly_as_the_saved_one_and_keeps_refreshing_alike() {
        let dir = workspace();
        let mut saved = built(dir.path());
        let mut loaded = reload(&saved, dir.path());
        assert_eq!(answers(&loaded), answers(&saved));
        // A session-memory message's own lines come back where they start.
        let starts = |index: &MemoryIndex| -> Vec<Vec<u32>> {
            index
                .files
                .iter()
                .flatten()
                .map(|f| f.message_starts.clone())
                .collect()
        };
        assert!(
            starts(&saved).iter().any(|s| s.len() == 4),
            "{:?}",
            starts(&saved)
        );
        assert_eq!(starts(&loaded), starts(&saved));
        // So does when in its day the session was saved, read again from the mapped text.
        let times = |index: &MemoryIndex| -> Vec<Option<u32>> {
            index.files.iter().flatten().map(|f| f.time).collect()
        };
        assert!(times(&saved).contains(&Some(9 * 3600 + 30 * 60)));
        assert_eq!(times(&loaded), times(&saved));
        assert_eq!(
            loaded.lexicon.saved_words().collect::<Vec<_>>(),
            saved.lexicon.saved_words().collect::<Vec<_>>()
        );
        // The same changes applied to both: the same answers (typo ties included).
        write(
            dir.path(),
            "memory/2026-02-22.md",
            "- Passport photo taken; anniversery typo.\n",
        );
        std::fs::remove_file(dir.path().join("memory/2026-02-21.md")).unwrap();
        assert_eq!(loaded.refresh().unwrap(), saved.refresh().unwrap());
        assert_eq!(answers(&loaded), answers(&saved));
        // With dead chunks and a reused file slot, saved and loaded again.
        assert_eq!(answers(&reload(&saved, dir.path())), answers(&saved));
        // And a fresh build agrees on what is found and how it scores.
        assert_eq!(answers(&built(dir.path())), answers(&saved));
    }

    #[test]
    fn every_truncation_and_flipped_bit_is_refused() {
        let dir = workspace();
        let index = built(dir.path());
        let bytes = index.to_snapshot(dir.path()).unwrap();
        let store = || MemoryStore::new(dir.path().to_path_buf());
        let mut rng = fastrand::Rng::with_seed(15);
        for case in 0..200 {
            let mut damaged = bytes.clone();
            if case % 2 == 0 {
                damaged.truncate(rng.usize(..bytes.len()));
            } else {
                let at = rng.usize(..bytes.len());
                damaged[at] ^= 1 << rng.u8(..8);
            }
            let result =
                MemoryIndex::from_snapshot(&damaged, dir.path(), store(), RankOptions::default());
            assert!(result.is_err(), "case {case} was accepted");
        }
        let mut longer = bytes;
        longer.push(0);
        assert!(
            MemoryIndex::from_snapshot(&longer, dir.path(), store(), RankOptions::default())
                .is_err()
        );
    }

    #[test]
    fn another_workspace_or_other_options_are_foreign() {
        let dir = workspace();
        let bytes = built(dir.path()).to_snapshot(dir.path()).unwrap();
        let store = || MemoryStore::new(dir.path().to_path_buf());
        let other = MemoryIndex::from_snapshot(
            &bytes,
            Path::new("/elsewhere"),
            store(),
            RankOptions::default(),
        );
        assert!(matches!(other, Err(SnapshotError::Foreign)));
        let unstemmed = RankOptions {
            stemming: false,
            ..RankOptions::default()
        };
        let other = MemoryIndex::from_snapshot(&bytes, dir.path(), store(), unstemmed);
        assert!(matches!(other, Err(SnapshotError::Foreign)));
        let mut version = bytes;
        version[MAGIC.len()] ^= 0xff;
        let other =
            MemoryIndex::from_snapshot(&version, dir.path(), store(), RankOptions::default());
        assert!(matches!(other, Err(SnapshotError::OtherBuild)));
    }

    #[test]
    fn a_well_formed_payload_naming_a_path_outside_memory_is_refused() {
        // A file with a valid checksum (as if written by someone with access to the state
        // directory) still cannot bring a path outside the memory files into the index.
        let dir = workspace();
        let mut index = built(dir.path());
        for file in index.files.iter_mut().flatten() {
            if let crate::paths::MemoryPath::Note(rest) = &mut file.path {
                *rest = format!("../../{rest}");
            }
        }
        let bytes = index.to_snapshot(dir.path()).unwrap();
        let loaded = MemoryIndex::from_snapshot(
            &bytes,
            dir.path(),
            MemoryStore::new(dir.path().to_path_buf()),
            RankOptions::default(),
        );
        assert!(matches!(loaded, Err(SnapshotError::Invalid(_))));
    }
}
