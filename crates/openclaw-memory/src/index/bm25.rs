//! The inverted index and Okapi BM25 scoring. Chunks can be removed (a note changed or was
//! deleted): they become tombstones that scoring skips, and the postings are rebuilt from the
//! live chunks once tombstones outnumber them.
#![expect(
    clippy::cast_precision_loss,
    reason = "scores are approximate; counts and lengths stay far below 2^23"
)]

use rustc_hash::FxHashMap;

use crate::index::mapped::Ids;

/// BM25 term-frequency saturation; 1.2 is the textbook value (and SQLite FTS5's).
const K1: f32 = 1.2;
/// BM25 length normalisation; 0.75 is the textbook value (and SQLite FTS5's).
const B: f32 = 0.75;

/// A term's id in the vocabulary.
pub type TermId = u32;
/// A chunk's slot in the index.
pub type ChunkId = u32;

#[derive(Debug, Clone)]
pub(crate) struct ChunkSlot {
    /// Distinct terms with their counts, as `[term, count, term, count, …]`; kept to undo
    /// document frequencies on removal and to rebuild postings.
    pub(crate) terms: Ids,
    pub(crate) len: u32,
    pub(crate) alive: bool,
}

impl ChunkSlot {
    fn terms(&self) -> impl Iterator<Item = (TermId, u32)> + '_ {
        self.terms.chunks_exact(2).map(|p| (p[0], p[1]))
    }
}

/// An inverted index over chunks. Saved with the index file as flat blocks read in place
/// ([`crate::index::snapshot`]), so a loaded index scores exactly as the one that was saved.
#[derive(Debug, Default)]
pub struct Bm25Index {
    /// FxHash: interning every token of every note is the hottest loop of an index build, and
    /// the keys are our own note text, not attacker-chosen hash-flooding input.
    pub(crate) vocabulary: FxHashMap<Box<str>, TermId>,
    /// Per term, the chunks holding it with its count there, as `[chunk, tf, chunk, tf, …]` in
    /// chunk order (dead chunks included until a compaction).
    pub(crate) postings: Vec<Ids>,
    pub(crate) doc_freq: Vec<u32>,
    pub(crate) chunks: Vec<ChunkSlot>,
    pub(crate) live_chunks: u32,
    pub(crate) live_len: u64,
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
        tokens.sort_unstable();
        let mut terms: Vec<u32> = Vec::new();
        for &t in tokens.iter() {
            match terms.len() {
                n if n >= 2 && terms[n - 2] == t => terms[n - 1] += 1,
                _ => terms.extend([t, 1]),
            }
        }
        let id = ChunkId::try_from(self.chunks.len()).unwrap_or(ChunkId::MAX);
        for pair in terms.chunks_exact(2) {
            let (term, tf) = (pair[0] as usize, pair[1]);
            self.postings[term].make_mut().extend([id, tf]);
            self.doc_freq[term] += 1;
        }
        let len = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        self.chunks.push(ChunkSlot {
            terms: terms.into(),
            len,
            alive: true,
        });
        self.live_chunks += 1;
        self.live_len += u64::from(len);
        id
    }

    /// Removes chunks. Returns a renumbering `old id → new id` when the index compacted
    /// (callers holding chunk ids must apply it), else `None`.
    pub fn remove_chunks(&mut self, ids: &[ChunkId]) -> Option<Vec<Option<ChunkId>>> {
        for &id in ids {
            let Some(slot) = self.chunks.get_mut(id as usize) else {
                continue;
            };
            if !slot.alive {
                continue;
            }
            slot.alive = false;
            self.live_chunks -= 1;
            self.live_len -= u64::from(slot.len);
            for (term, _) in slot.terms() {
                if let Some(df) = self.doc_freq.get_mut(term as usize) {
                    *df -= 1;
                }
            }
        }
        let dead = self.chunks.len() as u64 - u64::from(self.live_chunks);
        (dead > u64::from(self.live_chunks).max(64)).then(|| self.compact())
    }

    fn compact(&mut self) -> Vec<Option<ChunkId>> {
        let mut remap = Vec::with_capacity(self.chunks.len());
        let mut kept = Vec::with_capacity(self.live_chunks as usize);
        for slot in std::mem::take(&mut self.chunks) {
            if slot.alive {
                remap.push(Some(ChunkId::try_from(kept.len()).unwrap_or(ChunkId::MAX)));
                kept.push(slot);
            } else {
                remap.push(None);
            }
        }
        for list in &mut self.postings {
            *list = Ids::default();
        }
        for (id, slot) in kept.iter().enumerate() {
            let chunk = ChunkId::try_from(id).unwrap_or(ChunkId::MAX);
            for (term, tf) in slot.terms() {
                if let Some(list) = self.postings.get_mut(term as usize) {
                    list.make_mut().extend([chunk, tf]);
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
    pub fn holds_together(&self) -> bool {
        let terms = self.postings.len();
        let slots = self.chunks.len();
        let ids_dense = self.vocabulary.len() == terms
            && self.doc_freq.len() == terms
            && self.vocabulary.values().all(|&id| (id as usize) < terms);
        let chunk_terms_ok = self.chunks.iter().all(|slot| {
            slot.terms.len() % 2 == 0 && slot.terms().all(|(term, _)| (term as usize) < terms)
        });
        let postings_ok = self.postings.iter().all(|list| {
            list.len() % 2 == 0 && list.chunks_exact(2).all(|p| (p[0] as usize) < slots)
        });
        let live = self.chunks.iter().filter(|s| s.alive);
        ids_dense
            && chunk_terms_ok
            && postings_ok
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
        for posting in list.chunks_exact(2) {
            let (chunk, tf) = (posting[0] as usize, posting[1] as f32);
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

    fn add(index: &mut Bm25Index, text: &str) -> ChunkId {
        let mut ids: Vec<TermId> = text.split(' ').map(|w| index.intern(w)).collect();
        index.add_chunk(&mut ids)
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
        let mut index = Bm25Index::new();
        let ids: Vec<ChunkId> = (0..100)
            .map(|i| add(&mut index, &format!("word{i} shared w{}", i % 7)))
            .collect();
        assert!(index.holds_together());
        assert_eq!(index.remove_chunks(&ids[..10]), None);
        assert!(index.holds_together());
        assert!(index.remove_chunks(&ids[10..80]).is_some());
        assert!(index.holds_together());
        assert_eq!(index.doc_freq(index.term_id("shared").unwrap()), 20);
    }

    #[test]
    fn rare_terms_outweigh_common_ones() {
        let mut index = Bm25Index::new();
        let a = add(&mut index, "meeting notes lisbon");
        let b = add(&mut index, "meeting notes berlin");
        let c = add(&mut index, "meeting agenda");
        let s = scores(&index, "meeting lisbon");
        assert!(s[a as usize] > s[b as usize]);
        assert!(s[b as usize] > 0.0 && s[c as usize] > 0.0);
    }

    #[test]
    fn removed_chunks_stop_matching_and_compaction_renumbers() {
        let mut index = Bm25Index::new();
        let ids: Vec<ChunkId> = (0..100)
            .map(|i| add(&mut index, &format!("word{i} shared")))
            .collect();
        assert_eq!(index.remove_chunks(&ids[..10]), None);
        assert!(scores(&index, "word3")[3].abs() < f32::EPSILON);
        assert_eq!(index.len(), 90);
        let remap = index.remove_chunks(&ids[10..80]).unwrap();
        assert_eq!(remap[80], Some(0));
        assert_eq!(remap[5], None);
        assert_eq!(index.len(), 20);
        let s = scores(&index, "word85");
        assert!(s[5] > 0.0, "{s:?}");
        assert_eq!(s.len(), 20);
    }
}
