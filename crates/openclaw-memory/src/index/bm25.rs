//! The inverted index and Okapi BM25 scoring. Chunks can be removed (a note changed or was
//! deleted): they become tombstones that scoring skips, and the postings are rebuilt from the
//! live chunks once tombstones outnumber them.
#![expect(
    clippy::cast_precision_loss,
    reason = "scores are approximate; counts and lengths stay far below 2^23"
)]

use rustc_hash::FxHashMap;

/// BM25 term-frequency saturation; 1.2 is the textbook value (and SQLite FTS5's).
const K1: f32 = 1.2;
/// BM25 length normalisation; 0.75 is the textbook value (and SQLite FTS5's).
const B: f32 = 0.75;

/// A term's id in the vocabulary.
pub type TermId = u32;
/// A chunk's slot in the index.
pub type ChunkId = u32;

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Posting {
    chunk: ChunkId,
    tf: u32,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct ChunkSlot {
    /// Distinct terms with their counts; kept to undo document frequencies on removal and to
    /// rebuild postings.
    terms: Vec<(TermId, u32)>,
    len: u32,
    alive: bool,
}

/// An inverted index over chunks. Persisted as it is (the vocabulary as its terms in id order),
/// so a loaded index scores exactly as the one that was saved.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Bm25Index {
    /// FxHash: interning every token of every note is the hottest loop of an index build, and
    /// the keys are our own note text, not attacker-chosen hash-flooding input.
    #[serde(with = "vocabulary_in_id_order")]
    vocabulary: FxHashMap<Box<str>, TermId>,
    /// Not persisted: rebuilt from the chunks' terms on load ([`Self::rebuild_postings`]).
    #[serde(skip)]
    postings: Vec<Vec<Posting>>,
    doc_freq: Vec<u32>,
    chunks: Vec<ChunkSlot>,
    live_chunks: u32,
    live_len: u64,
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
        self.postings.push(Vec::new());
        self.doc_freq.push(0);
        id
    }

    /// Adds a chunk given the term ids of its tokens (repeats count); returns its id.
    pub fn add_chunk(&mut self, tokens: &mut [TermId]) -> ChunkId {
        tokens.sort_unstable();
        let mut terms: Vec<(TermId, u32)> = Vec::new();
        for &t in tokens.iter() {
            match terms.last_mut() {
                Some((last, n)) if *last == t => *n += 1,
                _ => terms.push((t, 1)),
            }
        }
        let id = ChunkId::try_from(self.chunks.len()).unwrap_or(ChunkId::MAX);
        for &(term, tf) in &terms {
            self.postings[term as usize].push(Posting { chunk: id, tf });
            self.doc_freq[term as usize] += 1;
        }
        let len = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        self.chunks.push(ChunkSlot {
            terms,
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
            for &(term, _) in &slot.terms {
                self.doc_freq[term as usize] -= 1;
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
            list.clear();
        }
        for (id, slot) in kept.iter().enumerate() {
            let chunk = ChunkId::try_from(id).unwrap_or(ChunkId::MAX);
            for &(term, tf) in &slot.terms {
                self.postings[term as usize].push(Posting { chunk, tf });
            }
        }
        self.chunks = kept;
        remap
    }

    /// Rebuilds the postings of a loaded index from its chunks' terms, in chunk order, which
    /// is the order `add_chunk` and `compact` leave them in (dead chunks included, as before a
    /// compaction): the very lists that were saved. False when a chunk names a term outside
    /// the vocabulary.
    pub fn rebuild_postings(&mut self) -> bool {
        let terms = self.vocabulary.len();
        let mut sizes = vec![0_usize; terms];
        for slot in &self.chunks {
            for &(term, _) in &slot.terms {
                let Some(size) = sizes.get_mut(term as usize) else {
                    return false;
                };
                *size += 1;
            }
        }
        self.postings = sizes.into_iter().map(Vec::with_capacity).collect();
        for (id, slot) in self.chunks.iter().enumerate() {
            let chunk = ChunkId::try_from(id).unwrap_or(ChunkId::MAX);
            for &(term, tf) in &slot.terms {
                self.postings[term as usize].push(Posting { chunk, tf });
            }
        }
        true
    }

    /// Whether a loaded index holds together: every id in range, counts that add up. A
    /// checksum catches a damaged file; this catches one written by different code, so that
    /// a bad file means a rebuild, never an out-of-range panic.
    pub fn is_consistent(&self) -> bool {
        let terms = self.postings.len();
        let ids_dense = self.vocabulary.len() == terms
            && self.vocabulary.values().all(|&id| (id as usize) < terms);
        let live: Vec<&ChunkSlot> = self.chunks.iter().filter(|s| s.alive).collect();
        let mut doc_freq = vec![0_u32; terms];
        for slot in &live {
            for &(term, _) in &slot.terms {
                if let Some(df) = doc_freq.get_mut(term as usize) {
                    *df += 1;
                }
            }
        }
        // Chunk terms were checked against the vocabulary by `rebuild_postings`.
        ids_dense
            && self.doc_freq == doc_freq
            && live.len() == self.live_chunks as usize
            && live.iter().map(|s| u64::from(s.len)).sum::<u64>() == self.live_len
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
        for posting in &self.postings[term as usize] {
            let slot = &self.chunks[posting.chunk as usize];
            if !slot.alive {
                continue;
            }
            let tf = posting.tf as f32;
            let norm = K1 * (1.0 - B + B * slot.len as f32 / avg_len.max(1.0));
            scores[posting.chunk as usize] += idf * tf * (K1 + 1.0) / (tf + norm);
            covered[posting.chunk as usize] += idf;
        }
    }
}

/// The vocabulary on disk: its terms in id order (ids are dense, assigned in order), read back
/// into the map by inserting them in that order.
mod vocabulary_in_id_order {
    use rustc_hash::FxHashMap;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::TermId;

    pub fn serialize<S: Serializer>(
        map: &FxHashMap<Box<str>, TermId>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut terms: Vec<&str> = vec![""; map.len()];
        for (term, &id) in map {
            if let Some(slot) = terms.get_mut(id as usize) {
                *slot = term;
            }
        }
        terms.serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<FxHashMap<Box<str>, TermId>, D::Error> {
        let terms = Vec::<Box<str>>::deserialize(deserializer)?;
        let mut map = FxHashMap::default();
        for (id, term) in terms.into_iter().enumerate() {
            let id = TermId::try_from(id).map_err(serde::de::Error::custom)?;
            if map.insert(term, id).is_some() {
                return Err(serde::de::Error::custom("a term appears twice"));
            }
        }
        Ok(map)
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
    fn a_saved_index_rebuilds_the_same_postings() {
        let mut index = Bm25Index::new();
        let ids: Vec<ChunkId> = (0..100)
            .map(|i| add(&mut index, &format!("word{i} shared w{}", i % 7)))
            .collect();
        let check = |index: &Bm25Index| {
            let mut loaded: Bm25Index =
                postcard::from_bytes(&postcard::to_stdvec(index).unwrap()).unwrap();
            assert!(loaded.rebuild_postings() && loaded.is_consistent());
            for (a, b) in index.postings.iter().zip(&loaded.postings) {
                let pairs = |l: &[Posting]| l.iter().map(|p| (p.chunk, p.tf)).collect::<Vec<_>>();
                assert_eq!(pairs(a), pairs(b));
            }
            assert_eq!(index.postings.len(), loaded.postings.len());
            assert_eq!(
                scores(index, "shared w3 word5"),
                scores(&loaded, "shared w3 word5")
            );
        };
        check(&index);
        // Dead chunks still in the postings, then after a compaction.
        assert_eq!(index.remove_chunks(&ids[..10]), None);
        check(&index);
        assert!(index.remove_chunks(&ids[10..80]).is_some());
        check(&index);
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
