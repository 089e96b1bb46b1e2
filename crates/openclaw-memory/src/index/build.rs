//! Keeping the index in step with the workspace: one listing per refresh (sizes and
//! modification times through the confined store), then only new and changed files are read,
//! chunked and tokenized; removed files leave dead chunks that are compacted away in bulk.

use std::sync::Arc;

use crate::index::bm25::{Bm25Index, ChunkId, MAX_CHUNKS, TermId};
use crate::index::chunk::LineRange;
use crate::index::embedding::VocabularyVectors;
use crate::index::lexicon::Lexicon;
use crate::index::mapped::Text;
use crate::index::prepare::{PARALLEL_MIN_FILES, Prepared, ahead};
use crate::index::spill::Spill;
use crate::index::{ChunkInfo, IndexedFile, MemoryIndex, RefreshStats, note_when};
use crate::paths::MemoryPath;
use crate::store::{FileStamp, OpenWorkspace, StoreError};

impl MemoryIndex {
    /// Brings the index up to date with the workspace: one listing (sizes and modification
    /// times, read through the confined store), then only new and changed files are read.
    pub fn refresh(&mut self) -> Result<RefreshStats, StoreError> {
        let listing = self.store.open()?.list_indexable()?;
        self.refresh_listed(listing)
    }

    /// [`Self::refresh`] with a listing already taken (sizes, modification times and inodes of
    /// every indexable file, from [`MemoryStore::list_indexable`](crate::store::MemoryStore)).
    pub fn refresh_listed(
        &mut self,
        listing: Vec<(MemoryPath, FileStamp)>,
    ) -> Result<RefreshStats, StoreError> {
        let stats = self.update(listing, true)?;
        if let Some(vectors) = self.vectors.as_mut() {
            vectors.extend(self.lexicon.words_in_order());
        }
        Ok(stats)
    }

    /// Brings the index in line with `listing`; a cold build writes its notes out as it goes
    /// when `may_spill`.
    fn update(
        &mut self,
        listing: Vec<(MemoryPath, FileStamp)>,
        may_spill: bool,
    ) -> Result<RefreshStats, StoreError> {
        let mut stats = RefreshStats::default();
        let mut seen = vec![false; self.files.len()];
        let mut changed = Vec::new();
        for (path, stamp) in listing {
            match self.by_path.get(&path) {
                Some(&slot)
                    if self.files[slot as usize].as_ref().map(|f| f.stamp) == Some(stamp) =>
                {
                    seen[slot as usize] = true;
                    stats.unchanged += 1;
                }
                Some(&slot) => {
                    seen[slot as usize] = true;
                    changed.push((path, stamp, Some(slot)));
                }
                None => changed.push((path, stamp, None)),
            }
        }
        // In slot order: which removal compacts, and so the chunk ids that follow, does not
        // depend on a hash map's order.
        let gone: Vec<u32> = (0..self.files.len())
            .filter(|&slot| self.files[slot].is_some() && !seen[slot])
            .filter_map(|slot| u32::try_from(slot).ok())
            .collect();
        for slot in gone {
            self.remove_file(slot);
            stats.removed += 1;
        }
        // In path order, whatever the listing's: which slot and chunk ids a file gets must not
        // depend on the order a directory lists its entries in.
        changed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        if changed.is_empty() {
            return Ok(stats);
        }
        let mut open = self.store.open()?;
        if changed.len() < PARALLEL_MIN_FILES {
            for (path, stamp, old_slot) in changed {
                let prepared = Prepared::read(&mut open, &path, &self.analyzer, self.chunking);
                self.apply(path, stamp, old_slot, prepared, &mut stats);
            }
            self.compact_if_due();
            return Ok(stats);
        }
        // A cold build writes the notes out as it goes (see `spill`); one that cannot is
        // started again in memory.
        let spill = if may_spill && self.files.is_empty() {
            Spill::create(self.spill_dir.as_deref())
                .inspect_err(|err| tracing::info!(%err, "building the memory index in memory"))
                .ok()
        } else {
            None
        };
        let spilling = spill.is_some();
        if self.files.is_empty() {
            self.files.reserve_exact(changed.len());
        }
        if let Err(err) = self.read_ahead(open, changed, spill, &mut stats) {
            if !spilling {
                // Without a spill file nothing is written, so nothing fails.
                return Err(StoreError::Io {
                    path: "the memory index build".to_owned(),
                    source: err,
                });
            }
            tracing::warn!(%err, "could not write the notes out during the build; building the memory index in memory");
            self.clear();
            let listing = self.store.open()?.list_indexable()?;
            return self.update(listing, false);
        }
        self.compact_if_due();
        Ok(stats)
    }

    /// Indexes many files: reads and splits them into words on a second thread, ahead of this
    /// one, which assigns term ids and fills the index in the order given (so ids never depend
    /// on threads). With a `spill`, each file's text and term lists go out to it as the file is
    /// indexed, and are read in place from it at the end.
    fn read_ahead(
        &mut self,
        open: OpenWorkspace,
        changed: Vec<(MemoryPath, FileStamp, Option<u32>)>,
        mut spill: Option<Spill>,
        stats: &mut RefreshStats,
    ) -> std::io::Result<()> {
        let paths = changed.iter().map(|(path, _, _)| path.clone()).collect();
        let (analyzer, chunking) = (self.analyzer.clone(), self.chunking);
        let mut spilled = Vec::new();
        if spill.is_some() {
            self.bm25.defer_postings();
        }
        std::thread::scope(|scope| {
            let prepared = ahead(scope, open, paths, analyzer, chunking);
            for (path, stamp, old_slot) in changed {
                let Ok(next) = prepared.recv() else {
                    // The thread stopped (it panicked; the scope passes the panic on).
                    break;
                };
                let added = self.apply(path, stamp, old_slot, next, stats);
                if let (Some(spill), Some(slot)) = (spill.as_mut(), added)
                    && let Some(file) = self.files[slot as usize].as_mut()
                {
                    let counted = self.bm25.take_deferred();
                    spilled.push((slot, spill.take(file, &counted)?));
                }
            }
            Ok::<(), std::io::Error>(())
        })?;
        let Some(spill) = spill else {
            return Ok(());
        };
        let backing = spill.map()?;
        let missing = || std::io::Error::other("a note is missing from the spill file");
        for &(slot, blocks) in &spilled {
            let file = self.files[slot as usize].as_mut();
            if !file.is_some_and(|file| blocks.restore(&backing, file)) {
                return Err(missing());
            }
        }
        // The postings, read back in file order, every thousand notes' pages given back.
        let runs = spilled.iter().enumerate().map(|(i, (_, blocks))| {
            if i % 1024 == 1023 {
                backing.release_all();
            }
            blocks.counted(&backing).unwrap_or_default()
        });
        let filled = self.bm25.fill_postings(runs);
        backing.release_all();
        if !filled {
            return Err(std::io::Error::other(
                "the postings read back from the spill file do not match the notes",
            ));
        }
        self.mapped.push(backing);
        Ok(())
    }

    /// Empties the index (keeping its settings), for a build to start again.
    fn clear(&mut self) {
        self.lexicon = Lexicon::new(self.ranking.stemming);
        self.bm25 = Bm25Index::new();
        self.files.clear();
        self.free_slots.clear();
        self.by_path.clear();
        self.chunk_info.clear();
        self.mapped.clear();
        self.vectors = self
            .vectors
            .take()
            .map(|vectors| VocabularyVectors::new(Arc::clone(vectors.model())));
    }

    fn remove_file(&mut self, slot: u32) {
        let Some(file) = self.files[slot as usize].take() else {
            return;
        };
        self.free_slots.insert(slot);
        self.by_path.remove(&file.path);
        // Its words are used once less each: read from the text the index holds, as
        // `prepare` read them.
        for line in 0..file.line_count() {
            self.analyzer
                .for_each_term(file.line(line), |word| self.lexicon.release(word));
        }
        let mut tokens = Vec::new();
        for &chunk in &file.chunks {
            let Some(info) = self.chunk_info.get(chunk as usize) else {
                continue;
            };
            tokens.clear();
            tokens.extend_from_slice(file.range_terms(info.range));
            self.bm25.remove_chunk(chunk, &mut tokens);
        }
    }

    /// Compacts the postings once removed chunks outnumber live ones (at the end of a refresh,
    /// when every file it added reads its terms).
    fn compact_if_due(&mut self) {
        if self.bm25.needs_compaction() {
            let (files, chunk_info) = (&self.files, &self.chunk_info);
            let remap = self.bm25.compact(|chunk| {
                chunk_info
                    .get(chunk as usize)
                    .and_then(|info| {
                        Some(
                            files
                                .get(info.file as usize)?
                                .as_ref()?
                                .range_terms(info.range),
                        )
                    })
                    .unwrap_or_default()
            });
            self.apply_remap(&remap);
        }
    }

    fn apply_remap(&mut self, remap: &[Option<ChunkId>]) {
        let mut info = vec![
            ChunkInfo {
                file: 0,
                range: LineRange { start: 0, end: 0 }
            };
            self.bm25.slots()
        ];
        for (old, new) in remap.iter().enumerate() {
            if let Some(new) = new {
                info[*new as usize] = self.chunk_info[old];
            }
        }
        self.chunk_info = info;
        for file in self.files.iter_mut().flatten() {
            for id in &mut file.chunks {
                if let Some(Some(new)) = remap.get(*id as usize) {
                    *id = *new;
                }
            }
        }
    }

    /// Replaces the file in `old_slot` (if any) with `prepared`, or drops it when unreadable.
    fn apply(
        &mut self,
        path: MemoryPath,
        stamp: FileStamp,
        old_slot: Option<u32>,
        prepared: Result<Prepared, StoreError>,
        stats: &mut RefreshStats,
    ) -> Option<u32> {
        if let Some(slot) = old_slot {
            self.remove_file(slot);
        }
        match prepared {
            Ok(prepared) if !self.bm25.has_room_for(prepared.chunks.len()) => {
                tracing::warn!(%path, max = MAX_CHUNKS, "the memory index is full; not indexing this note");
                if old_slot.is_some() {
                    stats.removed += 1;
                }
                None
            }
            Ok(prepared) => {
                stats.indexed += 1;
                Some(self.add_file(path, stamp, prepared))
            }
            Err(err) => {
                tracing::debug!(%path, %err, "not indexing memory file");
                if old_slot.is_some() {
                    stats.removed += 1;
                }
                None
            }
        }
    }

    /// Adds a file; returns its slot.
    fn add_file(&mut self, path: MemoryPath, stamp: FileStamp, prepared: Prepared) -> u32 {
        let slot = if let Some(free) = self.free_slots.pop_first() {
            free as usize
        } else {
            self.files.push(None);
            self.files.len() - 1
        };
        let slot_id = u32::try_from(slot).unwrap_or(u32::MAX);
        let mut terms: Vec<TermId> = Vec::with_capacity(prepared.word_ends.len());
        let (lexicon, bm25) = (&mut self.lexicon, &mut self.bm25);
        terms.extend(prepared.words().map(|word| lexicon.intern(word, bm25)));
        let (day, time) = note_when(&path, prepared.text.as_bytes());
        let mut file = IndexedFile {
            day,
            time,
            path: path.clone(),
            stamp,
            text: Text::Owned(prepared.text),
            line_starts: prepared.line_starts.into(),
            chunks: Vec::with_capacity(prepared.chunks.len()),
            terms: terms.into(),
            // Each line's first term is its first word.
            term_starts: prepared.line_words.into(),
            superseded: prepared.superseded,
            message_starts: prepared.message_starts,
        };
        let mut tokens: Vec<TermId> = Vec::new();
        for range in prepared.chunks {
            tokens.clear();
            tokens.extend_from_slice(file.range_terms(range));
            let id = self.bm25.add_chunk(&mut tokens);
            debug_assert_eq!(id as usize, self.chunk_info.len());
            self.chunk_info.push(ChunkInfo {
                file: slot_id,
                range,
            });
            file.chunks.push(id);
        }
        self.files[slot] = Some(file);
        self.by_path.insert(path, slot_id);
        slot_id
    }
}
