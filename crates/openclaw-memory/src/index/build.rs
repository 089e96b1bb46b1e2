//! Keeping the index in step with the workspace: one listing per refresh (sizes and
//! modification times through the confined store), then only new and changed files are read,
//! chunked and tokenized; removed files leave dead chunks that are compacted away in bulk.

use crate::index::bm25::{ChunkId, TermId};
use crate::index::chunk::LineRange;
use crate::index::mapped::Text;
use crate::index::prepare::{PARALLEL_MIN_FILES, Prepared, ahead};
use crate::index::{ChunkInfo, IndexedFile, MemoryIndex, RefreshStats};
use crate::paths::MemoryPath;
use crate::store::{FileStamp, StoreError};

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
        let stats = self.update(listing)?;
        if let Some(vectors) = self.vectors.as_mut() {
            vectors.extend(self.lexicon.words_in_order());
        }
        Ok(stats)
    }

    fn update(
        &mut self,
        listing: Vec<(MemoryPath, FileStamp)>,
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
            return Ok(stats);
        }
        // Many files (a build): read and split them into words on a second thread, ahead of
        // this one, which assigns term ids and fills the index in the same order as above.
        let paths = changed.iter().map(|(path, _, _)| path.clone()).collect();
        let (analyzer, chunking) = (self.analyzer.clone(), self.chunking);
        std::thread::scope(|scope| {
            let prepared = ahead(scope, open, paths, analyzer, chunking);
            for (path, stamp, old_slot) in changed {
                let Ok(next) = prepared.recv() else {
                    // The thread stopped (it panicked; the scope passes the panic on).
                    break;
                };
                self.apply(path, stamp, old_slot, next, &mut stats);
            }
        });
        Ok(stats)
    }

    fn remove_file(&mut self, slot: u32) {
        let Some(file) = self.files[slot as usize].take() else {
            return;
        };
        self.free_slots.insert(slot);
        self.by_path.remove(&file.path);
        if let Some(remap) = self.bm25.remove_chunks(&file.chunks) {
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
    ) {
        if let Some(slot) = old_slot {
            self.remove_file(slot);
        }
        match prepared {
            Ok(prepared) => {
                self.add_file(path, stamp, prepared);
                stats.indexed += 1;
            }
            Err(err) => {
                tracing::debug!(%path, %err, "not indexing memory file");
                if old_slot.is_some() {
                    stats.removed += 1;
                }
            }
        }
    }

    fn add_file(&mut self, path: MemoryPath, stamp: FileStamp, prepared: Prepared) {
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
        // Each line's first term is its first word.
        let term_starts = prepared.line_words;
        let mut tokens: Vec<TermId> = Vec::new();
        let mut chunk_ids = Vec::with_capacity(prepared.chunks.len());
        for range in prepared.chunks {
            let run = term_starts
                .get(range.start)
                .zip(term_starts.get(range.end + 1))
                .and_then(|(&from, &to)| terms.get(from as usize..to as usize))
                .unwrap_or_default();
            tokens.clear();
            tokens.extend_from_slice(run);
            let id = self.bm25.add_chunk(&mut tokens);
            debug_assert_eq!(id as usize, self.chunk_info.len());
            self.chunk_info.push(ChunkInfo {
                file: slot_id,
                range,
            });
            chunk_ids.push(id);
        }
        let file = IndexedFile {
            day: path.note_day(),
            path: path.clone(),
            stamp,
            text: Text::Owned(prepared.text),
            line_starts: prepared.line_starts.into(),
            chunks: chunk_ids,
            terms: terms.into(),
            term_starts: term_starts.into(),
            superseded: prepared.superseded,
            directives: prepared.directives,
        };
        self.files[slot] = Some(file);
        self.by_path.insert(path, slot_id);
    }
}
