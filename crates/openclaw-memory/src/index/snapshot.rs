//! The index as bytes, so that a later process can load it instead of building it. The file is
//! a cache of the in-memory index, field for field: a loaded index ranks exactly as the one that
//! was saved (the lexicon's words even come back in the order that decides typo ties).
//!
//! Layout: a header (magic, format version, the program's build identity, the index options,
//! the canonical workspace root, the payload's length), the SHA-256 of the header and payload,
//! then the payload (postcard, serde derives on the index's own structs). Anything that does
//! not match, a short file, a flipped bit, another version or another workspace, is an error
//! and the caller builds the index afresh; nothing in a damaged file is ever searched.

use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use sha2::{Digest, Sha256};

use crate::index::bm25::{Bm25Index, TermId};
use crate::index::chunk::ChunkOptions;
use crate::index::lexicon::Lexicon;
use crate::index::rank::RankOptions;
use crate::index::tokenize::Analyzer;
use crate::index::{ChunkInfo, IndexedFile, MemoryIndex};
use crate::store::MemoryStore;

/// First bytes of every index file.
const MAGIC: &[u8; 8] = b"OCMEMIDX";
/// Bumped by hand when the layout changes in a way the build identity would not show.
const FORMAT_VERSION: u32 = 1;

/// Everything that decides the persisted bytes or what they mean: the crate version, the
/// format version, and the source of every file whose structs are persisted or whose code
/// decides what goes into the index (chunking, tokenizing, stemming, marked lines). Any edit to
/// them makes older files foreign, so a changed tokenizer never serves a stale index.
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
        include_str!("snapshot.rs"),
        include_str!("tokenize.rs"),
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
    /// The checksum does not match: damaged on disk.
    #[error("the memory index file is damaged (checksum mismatch); it will be rebuilt")]
    Damaged,
    /// Encoding the index failed (nothing is written then).
    #[error("the memory index could not be encoded ({0}); it stays in memory only")]
    Encode(String),
    /// The payload does not decode, or decodes to an index that does not hold together.
    #[error("the memory index file does not decode ({0}); it will be rebuilt")]
    Invalid(String),
}

#[derive(serde::Serialize)]
struct SnapshotRef<'a> {
    words: Vec<(&'a str, TermId)>,
    bm25: &'a Bm25Index,
    files: &'a [Option<IndexedFile>],
    chunk_info: &'a [ChunkInfo],
}

#[derive(serde::Deserialize)]
struct Snapshot {
    words: Vec<(Box<str>, TermId)>,
    bm25: Bm25Index,
    files: Vec<Option<IndexedFile>>,
    chunk_info: Vec<ChunkInfo>,
}

/// The options that change what the index holds.
fn options_tag(ranking: &RankOptions, chunking: ChunkOptions) -> String {
    format!("stemming={} chunking={chunking:?}", ranking.stemming)
}

/// The header up to (not including) the checksum.
fn header(options: &str, root: &Path, payload_len: usize) -> Vec<u8> {
    let root = root.as_os_str().as_encoded_bytes();
    let mut out = Vec::with_capacity(64 + options.len() + root.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&*BUILD_ID);
    for field in [options.as_bytes(), root] {
        out.extend_from_slice(&(field.len() as u64).to_le_bytes());
        out.extend_from_slice(field);
    }
    out.extend_from_slice(&(payload_len as u64).to_le_bytes());
    out
}

impl MemoryIndex {
    /// The index as the bytes of an index file for the workspace at `root` (canonical).
    pub fn to_snapshot(&self, root: &Path) -> Result<Vec<u8>, SnapshotError> {
        let view = SnapshotRef {
            words: self.lexicon.words_in_order().collect(),
            bm25: &self.bm25,
            files: &self.files,
            chunk_info: &self.chunk_info,
        };
        let payload =
            postcard::to_stdvec(&view).map_err(|e| SnapshotError::Encode(e.to_string()))?;
        let head = header(
            &options_tag(&self.ranking, self.chunking),
            root,
            payload.len(),
        );
        let checksum = Sha256::new()
            .chain_update(&head)
            .chain_update(&payload)
            .finalize();
        let mut out = Vec::with_capacity(head.len() + 32 + payload.len());
        out.extend_from_slice(&head);
        out.extend_from_slice(&checksum);
        out.extend_from_slice(&payload);
        Ok(out)
    }

    /// An index read back from `bytes`, for the workspace at `root` (canonical) read through
    /// `store`. Any mismatch or damage is an error: the caller builds afresh.
    pub fn from_snapshot(
        bytes: &[u8],
        root: &Path,
        store: MemoryStore,
        ranking: RankOptions,
    ) -> Result<Self, SnapshotError> {
        let chunking = ChunkOptions::default();
        let mut reader = Reader(bytes);
        if reader.take(MAGIC.len())? != MAGIC {
            return Err(SnapshotError::NotAnIndex);
        }
        if reader.take(4)? != FORMAT_VERSION.to_le_bytes() || reader.take(32)? != &BUILD_ID[..] {
            return Err(SnapshotError::OtherBuild);
        }
        let options = reader.field()?;
        let stored_root = reader.field()?;
        if options != options_tag(&ranking, chunking).as_bytes()
            || stored_root != root.as_os_str().as_encoded_bytes()
        {
            return Err(SnapshotError::Foreign);
        }
        let payload_len = reader.len()?;
        let checksum = reader.take(32)?;
        let payload = reader.take(payload_len)?;
        if !reader.0.is_empty() {
            return Err(SnapshotError::Damaged);
        }
        let head_len = bytes.len() - payload_len - 32;
        let actual = Sha256::new()
            .chain_update(&bytes[..head_len])
            .chain_update(payload)
            .finalize();
        if actual[..] != checksum[..] {
            return Err(SnapshotError::Damaged);
        }
        let snapshot: Snapshot =
            postcard::from_bytes(payload).map_err(|e| SnapshotError::Invalid(e.to_string()))?;
        Self::from_parts(snapshot, store, ranking, chunking)
    }

    fn from_parts(
        snapshot: Snapshot,
        store: MemoryStore,
        ranking: RankOptions,
        chunking: ChunkOptions,
    ) -> Result<Self, SnapshotError> {
        let invalid = |what: &str| SnapshotError::Invalid(what.to_owned());
        let Snapshot {
            words,
            mut bm25,
            mut files,
            chunk_info,
        } = snapshot;
        if !bm25.rebuild_postings() || !bm25.is_consistent() {
            return Err(invalid("inconsistent postings"));
        }
        let terms = bm25.term_count();
        let lexicon = Lexicon::restore(ranking.stemming, words, terms)
            .ok_or_else(|| invalid("inconsistent lexicon"))?;
        if chunk_info.len() != bm25.slots() {
            return Err(invalid("chunk count"));
        }
        let mut by_path = HashMap::with_capacity(files.len());
        for (slot, file) in files.iter_mut().enumerate() {
            let Some(file) = file else { continue };
            if !file.holds_together(terms, bm25.slots()) {
                return Err(invalid("inconsistent file"));
            }
            // Derived from the path, not trusted from the file.
            file.day = file.path.note_day();
            let slot = u32::try_from(slot).map_err(|_| invalid("too many files"))?;
            if by_path.insert(file.path.clone(), slot).is_some() {
                return Err(invalid("a path appears twice"));
            }
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
            by_path,
            chunk_info,
        })
    }
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

    fn len(&mut self) -> Result<usize, SnapshotError> {
        let bytes: [u8; 8] = self
            .take(8)?
            .try_into()
            .map_err(|_| SnapshotError::NotAnIndex)?;
        usize::try_from(u64::from_le_bytes(bytes)).map_err(|_| SnapshotError::NotAnIndex)
    }

    fn field(&mut self) -> Result<&'a [u8], SnapshotError> {
        let len = self.len()?;
        self.take(len)
    }
}

impl IndexedFile {
    /// Whether a loaded file's offsets and ids are all in range.
    fn holds_together(&self, terms: usize, chunks: usize) -> bool {
        let text_len = self.text.len();
        let lines = self.line_starts.len();
        let starts_ok = self.line_starts.first() == Some(&0)
            && self.line_starts.windows(2).all(|w| w[0] < w[1])
            && self
                .line_starts
                .iter()
                .all(|&i| i <= text_len && self.text.is_char_boundary(i));
        let term_starts_ok = self.term_starts.len() == lines + 1
            && self.term_starts.windows(2).all(|w| w[0] <= w[1])
            && self.term_starts.last().map(|&n| n as usize) == Some(self.terms.len());
        starts_ok
            && term_starts_ok
            && self.terms.iter().all(|&t| (t as usize) < terms)
            && self.chunks.iter().all(|&c| (c as usize) < chunks)
            && self.superseded.iter().all(|&i| i < lines)
            && self.directives.iter().all(|&i| i < lines)
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
            "# Memory\n\n- The home server runs Debian 12.\n- ~~Laptop: ThinkPad~~ Framework 13.\n",
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
        assert_eq!(
            loaded.lexicon.words_in_order().collect::<Vec<_>>(),
            saved.lexicon.words_in_order().collect::<Vec<_>>()
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
