//! The inverted index and Okapi BM25 scoring. Chunks can be removed (a note changed or was
//! deleted): they become tombstones that scoring skips, and the postings are rebuilt from the
//! live chunks once tombstones outnumber them. A chunk's terms are not kept here: the caller
//! holds every note's terms in order, and hands a chunk's run of them back to remove it or to
//! rebuild the postings.
#![expect(
    clippy::cast_precision_loss,
    reason = "scores are approximate; counts and lengths stay far below 2^23"
)]

use rustc_hash::FxHashMap;

use crate::index::mapped::{Backing, Ids};

/// BM25 term-frequency saturation; 1.2 is the textbook value (and SQLite FTS5's).
const K1: f32 = 1.2;
/// BM25 length normalisation; 0.75 is the textbook value (and SQLite FTS5's).
const B: f32 = 0.75;

/// A term's id in the vocabulary.
pub type TermId = u32;
/// A chunk's slot in the index.
pub type ChunkId = u32;

#[derive(Debug, Clone, Copy)]
pub(crate) struct ChunkSlot {
    pub(crate) len: u32,
    pub(crate) alive: bool,
}

/// Bits of a posting that hold the chunk id; the rest hold the term's count in the chunk.
const CHUNK_BITS: u32 = 24;
/// Chunks an index can hold: 16,777,216 (about eight million notes of 2 KB).
pub const MAX_CHUNKS: usize = 1 << CHUNK_BITS;
/// The chunk id bits of a posting.
const CHUNK_MASK: u32 = (1 << CHUNK_BITS) - 1;
/// The largest count a posting holds: a term repeated more often in one chunk counts as this
/// (BM25 has long saturated: at 255 its term-frequency factor is within 0.1 % of its limit).
const MAX_COUNT: u32 = (1 << (32 - CHUNK_BITS)) - 1;

/// One posting: `chunk` in the low bits, `count` (capped) in the high ones. Half the size of a
/// `(chunk, count)` pair of `u32`s, which at 50,000 notes was the larger part of a build's heap.
fn posting(chunk: ChunkId, count: u32) -> u32 {
    chunk | (count.min(MAX_COUNT) << CHUNK_BITS)
}

/// The chunk and the count of a posting.
fn unpack(posting: u32) -> (ChunkId, u32) {
    (posting & CHUNK_MASK, posting >> CHUNK_BITS)
}

/// Whether every posting of `postings` names one of `slots` chunks.
pub(crate) fn postings_in_range(postings: &[u32], slots: usize) -> bool {
    postings.iter().all(|&p| (unpack(p).0 as usize) < slots)
}

/// The distinct terms of `tokens` with their counts, as `[term, count, term, count, …]` in term
/// order; `tokens` is sorted on the way.
fn counted(tokens: &mut [TermId]) -> Vec<u32> {
    tokens.sort_unstable();
    let mut terms: Vec<u32> = Vec::new();
    for &t in tokens.iter() {
        match terms.len() {
            n if n >= 2 && terms[n - 2] == t => terms[n - 1] += 1,
            _ => terms.extend([t, 1]),
        }
    }
    terms
}

/// An inverted index over chunks. Saved with the index file as flat blocks read in place
/// ([`crate::index::snapshot`]), so a loaded index scores exactly as the one that was saved.
#[derive(Debug, Default)]
pub struct Bm25Index {
    /// FxHash: interning every token of every note is the hottest loop of an index build, and
    /// the keys are our own note text, not attacker-chosen hash-flooding input.
    pub(crate) vocabulary: FxHashMap<Box<str>, TermId>,
    /// Per term, the chunks holding it with its count there, one [`posting`] each, in chunk
    /// order (dead chunks included until a compaction).
    pub(crate) postings: Vec<Ids>,
    pub(crate) doc_freq: Vec<u32>,
    pub(crate) chunks: Vec<ChunkSlot>,
    pub(crate) live_chunks: u32,
    pub(crate) live_len: u64,
    /// Set while a cold build defers the postings ([`Self::defer_postings`]): the counted
    /// terms of the chunks added since the last [`Self::take_deferred`], each chunk's run of
    /// `[term, count, …]` preceded by its length.
    pub(crate) deferred: Option<Vec<u32>>,
}

impl Bm25Index {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `term`, if any chunk ever held it.
    pub fn term_id(&self, term: &str) -> Option<TermId> {
        self.vocabulary.get(term).copied()
    }

    /// The id of `term`, adding it to the vocabulary when new.
    pub fn intern(&mut self, term: &str) -> TermId {
        if let Some(id) = self.vocabulary.get(term) {
            return *id;
        }
        let id = TermId::try_from(self.postings.len()).unwrap_or(TermId::MAX);
        self.vocabulary.insert(term.into(), id);
        self.postings.push(Ids::default());
        self.doc_freq.push(0);
        id
    }

    /// Adds a chunk given the term ids of its tokens (repeats count); returns its id.
    pub fn add_chunk(&mut self, tokens: &mut [TermId]) -> ChunkId {
        let terms = counted(tokens);
        let id = ChunkId::try_from(self.chunks.len()).unwrap_or(ChunkId::MAX);
        for pair in terms.chunks_exact(2) {
            let (term, tf) = (pair[0] as usize, pair[1]);
            if self.deferred.is_none() {
                self.postings[term].make_mut().push(posting(id, tf));
            }
            self.doc_freq[term] += 1;
        }
        if let Some(deferred) = self.deferred.as_mut() {
            deferred.push(u32::try_from(terms.len()).unwrap_or(u32::MAX));
            deferred.extend_from_slice(&terms);
        }
        let len = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        self.chunks.push(ChunkSlot { len, alive: true });
        self.live_chunks += 1;
        self.live_len += u64::from(len);
        id
    }

    /// Whether `chunks` more chunks fit ([`MAX_CHUNKS`] in all).
    pub fn has_room_for(&self, chunks: usize) -> bool {
        self.chunks.len().saturating_add(chunks) <= MAX_CHUNKS
    }

    /// Has [`Self::add_chunk`] count document frequencies but leave the postings to
    /// [`Self::fill_postings`], handing each chunk's counted terms out through
    /// [`Self::take_deferred`] instead. For a cold build on an empty index: growing every term's
    /// list a chunk at a time left the heap a fifth larger than the lists themselves (their
    /// spare capacity, and the holes their old buffers left).
    pub(crate) fn defer_postings(&mut self) {
        debug_assert!(
            self.chunks.is_empty(),
            "postings are deferred from the first chunk"
        );
        self.deferred = Some(Vec::new());
    }

    /// The counted terms of the chunks added since the last call (see [`Self::deferred`]).
    pub(crate) fn take_deferred(&mut self) -> Vec<u32> {
        self.deferred
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Fills every posting list at once from `runs`: everything [`Self::take_deferred`] handed
    /// out, in order, since [`Self::defer_postings`]. The lists share one allocation of
    /// exactly their size. `false` (and the postings left empty) when the runs do not match
    /// the chunks and document frequencies counted.
    pub(crate) fn fill_postings(&mut self, runs: impl Iterator<Item = Ids>) -> bool {
        self.deferred = None;
        let mut starts = Vec::with_capacity(self.doc_freq.len() + 1);
        let mut total = 0_usize;
        for &df in &self.doc_freq {
            starts.push(total);
            total += df as usize;
        }
        starts.push(total);
        let mut words = vec![0_u64; total.div_ceil(2)];
        let flat: &mut [u32] = &mut bytemuck::cast_slice_mut(&mut words)[..total];
        let mut cursor = starts.clone();
        let mut chunk: u32 = 0;
        for run in runs {
            let mut rest: &[u32] = &run;
            while let Some((&len, tail)) = rest.split_first() {
                let Some(pairs) = tail.get(..len as usize) else {
                    return false;
                };
                for pair in pairs.chunks_exact(2) {
                    let term = pair[0] as usize;
                    let Some(at) = cursor.get_mut(term).filter(|at| **at < starts[term + 1]) else {
                        return false;
                    };
                    flat[*at] = posting(chunk, pair[1]);
                    *at += 1;
                }
                rest = &tail[len as usize..];
                chunk += 1;
            }
        }
        // Every list filled to its document frequency, by exactly the chunks counted.
        if chunk as usize != self.chunks.len() || cursor[..cursor.len() - 1] != starts[1..] {
            return false;
        }
        let backing = std::sync::Arc::new(Backing::Heap(words, total * 4));
        for (term, list) in self.postings.iter_mut().enumerate() {
            let (from, to) = (starts[term], starts[term + 1]);
            match Ids::mapped(&backing, from * 4, to - from) {
                Some(ids) => *list = ids,
                None => return false,
            }
        }
        true
    }

    /// Removes chunk `id`, given the term ids of its tokens as it was added (repeats count;
    /// sorted on the way). Call [`Self::compact`] once [`Self::needs_compaction`] says so.
    pub fn remove_chunk(&mut self, id: ChunkId, tokens: &mut [TermId]) {
        let Some(slot) = self.chunks.get_mut(id as usize).filter(|s| s.alive) else {
            return;
        };
        slot.alive = false;
        self.live_chunks -= 1;
        self.live_len -= u64::from(slot.len);
        tokens.sort_unstable();
        let mut last = None;
        for &term in tokens.iter() {
            if last != Some(term)
                && let Some(df) = self.doc_freq.get_mut(term as usize)
            {
                *df = df.saturating_sub(1);
            }
            last = Some(term);
        }
    }

    /// Whether removed chunks outnumber live ones (and at least 64): then scoring skips more
    /// than it reads, and [`Self::compact`] is due.
    pub fn needs_compaction(&self) -> bool {
        let dead = self.chunks.len() as u64 - u64::from(self.live_chunks);
        dead > u64::from(self.live_chunks).max(64)
    }

    /// Drops removed chunks and rebuilds the postings from the live ones, whose tokens
    /// `tokens_of` gives (as added; a copy is sorted). Returns the renumbering `old id → new
    /// id`, which callers holding chunk ids must apply.
    pub fn compact<'a>(
        &mut self,
        mut tokens_of: impl FnMut(ChunkId) -> &'a [TermId],
    ) -> Vec<Option<ChunkId>> {
        let mut remap = Vec::with_capacity(self.chunks.len());
        let mut kept = Vec::with_capacity(self.live_chunks as usize);
        for list in &mut self.postings {
            *list = Ids::default();
        }
        let mut tokens = Vec::new();
        for (old, slot) in std::mem::take(&mut self.chunks).into_iter().enumerate() {
            if !slot.alive {
                remap.push(None);
                continue;
            }
            let chunk = ChunkId::try_from(kept.len()).unwrap_or(ChunkId::MAX);
            remap.push(Some(chunk));
            kept.push(slot);
            tokens.clear();
            tokens.extend_from_slice(tokens_of(ChunkId::try_from(old).unwrap_or(ChunkId::MAX)));
            for pair in counted(&mut tokens).chunks_exact(2) {
                if let Some(list) = self.postings.get_mut(pair[0] as usize) {
                    list.make_mut().push(posting(chunk, pair[1]));
                }
            }
        }
        self.chunks = kept;
        remap
    }

    /// Whether a loaded index holds together: every id in range, counts that add up. A
    /// checksum catches a damaged file; this catches one written by different code, so that
    /// a bad file means a rebuild, never an out-of-range panic. Linear in the postings, which
    /// it reads as flat `u32`s in place.
    #[cfg(test)]
    pub fn holds_together(&self) -> bool {
        let slots = self.chunks.len();
        self.counts_hold_together()
            && self
                .postings
                .iter()
                .all(|list| postings_in_range(list, slots))
    }

    /// [`Self::holds_together`] but for the chunk ids in the postings, which a loader checks
    /// in the file's own order instead ([`postings_in_range`] over the flat block).
    pub(crate) fn counts_hold_together(&self) -> bool {
        let terms = self.postings.len();
        let ids_dense = self.vocabulary.len() == terms
            && self.doc_freq.len() == terms
            && self.vocabulary.values().all(|&id| (id as usize) < terms);
        let live = self.chunks.iter().filter(|s| s.alive);
        ids_dense
            && live.clone().count() == self.live_chunks as usize
            && live.map(|s| u64::from(s.len)).sum::<u64>() == self.live_len
    }

    /// The vocabulary's terms in id order (ids are dense, assigned in order).
    pub fn terms_in_id_order(&self) -> Vec<&str> {
        let mut terms: Vec<&str> = vec![""; self.vocabulary.len()];
        for (term, &id) in &self.vocabulary {
            if let Some(slot) = terms.get_mut(id as usize) {
                *slot = term;
            }
        }
        terms
    }

    /// Whether chunk `id` exists and was not removed.
    pub fn is_alive(&self, id: ChunkId) -> bool {
        self.chunks.get(id as usize).is_some_and(|slot| slot.alive)
    }

    /// Number of terms in the vocabulary.
    pub fn term_count(&self) -> usize {
        self.postings.len()
    }

    /// Number of live chunks.
    pub fn len(&self) -> usize {
        self.live_chunks as usize
    }

    /// Whether no chunk is live.
    pub fn is_empty(&self) -> bool {
        self.live_chunks == 0
    }

    /// Slots allocated (live and dead): the size of a dense per-chunk score array.
    pub fn slots(&self) -> usize {
        self.chunks.len()
    }

    /// How many live chunks hold `term`.
    pub fn doc_freq(&self, term: TermId) -> u32 {
        self.doc_freq.get(term as usize).copied().unwrap_or(0)
    }

    /// The weight given to a query word no chunk holds: that of a word one chunk holds (the
    /// rarest a real word gets), not the unbounded IDF of df = 0, which in a small workspace
    /// would make one unknown word outweigh the whole rest of the query.
    pub fn unseen_idf(&self) -> f32 {
        let n = self.live_chunks as f32;
        ((n - 1.0 + 0.5) / 1.5 + 1.0).ln()
    }

    /// Inverse document frequency of a term (BM25+ style, never negative).
    pub fn idf(&self, term: TermId) -> f32 {
        let n = self.live_chunks as f32;
        let df = self.doc_freq.get(term as usize).copied().unwrap_or(0) as f32;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// The live chunks holding `term`, in id order.
    pub fn chunks_with(&self, term: TermId) -> impl Iterator<Item = ChunkId> + '_ {
        self.postings
            .get(term as usize)
            .into_iter()
            .flat_map(|list| list.iter())
            .map(|&entry| unpack(entry).0)
            .filter(|&chunk| self.chunks.get(chunk as usize).is_some_and(|s| s.alive))
    }

    /// Adds `weight × BM25(term)` for every live chunk holding `term` into `scores`, and
    /// `weight × IDF(term)` into `covered` (how much of the query the chunk holds, whatever its
    /// length; both indexed by chunk id, sized [`Self::slots`]).
    pub fn accumulate(&self, term: TermId, weight: f32, scores: &mut [f32], covered: &mut [f32]) {
        if self.live_chunks == 0 {
            return;
        }
        let idf = self.idf(term) * weight;
        let avg_len = self.live_len as f32 / self.live_chunks as f32;
        let Some(list) = self.postings.get(term as usize) else {
            return;
        };
        for &entry in list.iter() {
            let (chunk, tf) = unpack(entry);
            let (chunk, tf) = (chunk as usize, tf as f32);
            let Some(slot) = self.chunks.get(chunk).filter(|s| s.alive) else {
                continue;
            };
            let norm = K1 * (1.0 - B + B * slot.len as f32 / avg_len.max(1.0));
            scores[chunk] += idf * tf * (K1 + 1.0) / (tf + norm);
            covered[chunk] += idf;
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// The index, and every chunk's tokens as added (what the caller keeps).
    #[derive(Default)]
    struct Chunks {
        index: Bm25Index,
        tokens: Vec<Vec<TermId>>,
    }

    impl Chunks {
        fn add(&mut self, text: &str) -> ChunkId {
            let ids: Vec<TermId> = text.split(' ').map(|w| self.index.intern(w)).collect();
            self.tokens.push(ids.clone());
            let mut ids = ids;
            self.index.add_chunk(&mut ids)
        }

        /// Removes `ids`; the renumbering when that compacted the index.
        fn remove(&mut self, ids: &[ChunkId]) -> Option<Vec<Option<ChunkId>>> {
            for &id in ids {
                self.index
                    .remove_chunk(id, &mut self.tokens[id as usize].clone());
            }
            if !self.index.needs_compaction() {
                return None;
            }
            let tokens = &self.tokens;
            let remap = self.index.compact(|id| &tokens[id as usize]);
            let mut kept = vec![Vec::new(); self.index.slots()];
            for (old, new) in remap.iter().enumerate() {
                if let Some(new) = new {
                    kept[*new as usize] = std::mem::take(&mut self.tokens[old]);
                }
            }
            self.tokens = kept;
            Some(remap)
        }
    }

    fn scores(index: &Bm25Index, query: &str) -> Vec<f32> {
        let mut scores = vec![0.0; index.slots()];
        let mut covered = vec![0.0; index.slots()];
        for word in query.split(' ') {
            if let Some(t) = index.term_id(word) {
                index.accumulate(t, 1.0, &mut scores, &mut covered);
            }
        }
        scores
    }

    #[test]
    fn removals_and_compaction_keep_the_index_whole() {
        let mut chunks = Chunks::default();
        let ids: Vec<ChunkId> = (0..100)
            .map(|i| chunks.add(&format!("word{i} shared w{} shared", i % 7)))
            .collect();
        assert!(chunks.index.holds_together());
        assert_eq!(chunks.remove(&ids[..10]), None);
        assert!(chunks.index.holds_together());
        let shared = chunks.index.term_id("shared").unwrap();
        assert_eq!(
            chunks.index.doc_freq(shared),
            90,
            "a repeated term counts once"
        );
        assert!(chunks.remove(&ids[10..80]).is_some());
        assert!(chunks.index.holds_together());
        assert_eq!(chunks.index.doc_freq(shared), 20);
        let mut again = Chunks::default();
        for i in 80..100 {
            again.add(&format!("word{i} shared w{} shared", i % 7));
        }
        assert_eq!(
            scores(&chunks.index, "shared w3 word85"),
            scores(&again.index, "shared w3 word85"),
            "a compacted index scores as one built from its live chunks"
        );
    }

    #[test]
    fn deferred_postings_fill_in_one_go_and_refuse_runs_that_do_not_match() {
        let texts = [
            "meeting notes lisbon",
            "meeting meeting agenda",
            "lisbon tea",
        ];
        let mut direct = Chunks::default();
        let mut deferred = Chunks::default();
        deferred.index.defer_postings();
        let mut runs = Vec::new();
        for text in texts {
            direct.add(text);
            deferred.add(text);
            runs.push(deferred.index.take_deferred());
        }
        let mut short = Bm25Index {
            deferred: Some(Vec::new()),
            ..Bm25Index::default()
        };
        for text in texts {
            let mut ids: Vec<TermId> = text.split(' ').map(|w| short.intern(w)).collect();
            short.add_chunk(&mut ids);
        }
        let cut = runs[..2].iter().map(|r| Ids::from(r.clone()));
        assert!(!short.fill_postings(cut), "a chunk's run is missing");
        assert!(
            deferred
                .index
                .fill_postings(runs.into_iter().map(Ids::from))
        );
        assert!(deferred.index.holds_together());
        assert_eq!(
            scores(&deferred.index, "meeting lisbon tea"),
            scores(&direct.index, "meeting lisbon tea")
        );
    }

    #[test]
    fn a_posting_holds_its_chunk_and_its_count_capped_at_255() {
        for (chunk, count) in [(0, 1), (7, 255), (CHUNK_MASK, 3)] {
            assert_eq!(unpack(posting(chunk, count)), (chunk, count));
        }
        assert_eq!(unpack(posting(9, 1_000)), (9, 255));
        let mut chunks = Chunks::default();
        let many = vec!["echo"; 300].join(" ");
        let capped = vec!["echo"; 255].join(" ");
        let a = chunks.add(&format!("{many} other"));
        let b = chunks.add(&format!("{capped} other"));
        let s = scores(&chunks.index, "echo");
        assert!(
            (s[a as usize] - s[b as usize]).abs() < 0.01 * s[b as usize],
            "{s:?}"
        );
        assert!(!chunks.index.has_room_for(MAX_CHUNKS - 1));
        assert!(chunks.index.has_room_for(MAX_CHUNKS - 2));
    }

    #[test]
    fn rare_terms_outweigh_common_ones() {
        let mut chunks = Chunks::default();
        let a = chunks.add("meeting notes lisbon");
        let b = chunks.add("meeting notes berlin");
        let c = chunks.add("meeting agenda");
        let s = scores(&chunks.index, "meeting lisbon");
        assert!(s[a as usize] > s[b as usize]);
        assert!(s[b as usize] > 0.0 && s[c as usize] > 0.0);
    }

    #[test]
    fn removed_chunks_stop_matching_and_compaction_renumbers() {
        let mut chunks = Chunks::default();
        let ids: Vec<ChunkId> = (0..100)
            .map(|i| chunks.add(&format!("word{i} shared")))
            .collect();
        assert_eq!(chunks.remove(&ids[..10]), None);
        assert!(scores(&chunks.index, "word3")[3].abs() < f32::EPSILON);
        assert_eq!(chunks.index.len(), 90);
        let remap = chunks.remove(&ids[10..80]).unwrap();
        assert_eq!(remap[80], Some(0));
        assert_eq!(remap[5], None);
        assert_eq!(chunks.index.len(), 20);
        let s = scores(&chunks.index, "word85");
        assert!(s[5] > 0.0, "{s:?}");
        assert_eq!(s.len(), 20);
    }
}
