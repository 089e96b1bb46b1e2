//! The local search index over a workspace's memory files: kept fresh by comparing sizes and
//! modification times before each search (re-reading only what changed), ranked by BM25 over
//! line-ranged chunks with the boosts in [`rank`], and answered with short, quotable line
//! windows.

/// BM25 postings and scoring.
pub mod bm25;
/// Line-ranged chunking.
pub mod chunk;
/// Score factors on top of BM25.
pub mod rank;
/// Choosing the quoted lines of a hit.
pub mod snippet;
/// Text to terms.
pub mod tokenize;

use std::collections::HashMap;
use std::sync::Arc;

use crate::index::bm25::{Bm25Index, ChunkId, TermId};
use crate::index::chunk::{ChunkOptions, LineRange, chunk_lines};
use crate::index::rank::{RankOptions, coverage_factor, proximity_factor, recency_factor};
use crate::index::tokenize::Analyzer;
use crate::paths::MemoryPath;
use crate::store::{FileStamp, MAX_FILE_BYTES, MemoryStore, StoreError};

/// Candidates re-ranked per result slot: BM25 picks `limit × this` (at least
/// [`MIN_CANDIDATES`]) for the costlier boosts, which only reorder near neighbours.
const CANDIDATES_PER_RESULT: usize = 10;
/// Fewest candidates re-ranked, so small limits still see enough alternatives.
const MIN_CANDIDATES: usize = 50;
/// Most distinct query terms considered; a pasted paragraph is not a query.
const MAX_QUERY_TERMS: usize = 32;

/// One ranked local result: a short window of lines in one memory file.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalHit {
    /// The file.
    pub path: MemoryPath,
    /// First line of the window (1-based).
    pub start_line: usize,
    /// Last line of the window (1-based, inclusive).
    pub end_line: usize,
    /// Final score (BM25 times the boosts); higher is better.
    pub score: f32,
    /// The window's text.
    pub snippet: String,
}

/// What a refresh did, for logs and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefreshStats {
    /// Files read and indexed (new or changed).
    pub indexed: usize,
    /// Files dropped (deleted, or now unreadable).
    pub removed: usize,
    /// Files unchanged since the last refresh.
    pub unchanged: usize,
}

#[derive(Debug)]
struct IndexedFile {
    path: MemoryPath,
    stamp: FileStamp,
    text: Arc<str>,
    /// Byte offset of each line's start in `text`.
    line_starts: Vec<usize>,
    chunks: Vec<ChunkId>,
    day: Option<i64>,
}

impl IndexedFile {
    fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    fn line(&self, i: usize) -> &str {
        let start = self.line_starts[i];
        let end = self
            .line_starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }
}

#[derive(Debug, Clone, Copy)]
struct ChunkInfo {
    file: u32,
    range: LineRange,
}

/// The index of one workspace.
#[derive(Debug)]
pub struct MemoryIndex {
    store: MemoryStore,
    analyzer: Analyzer,
    chunking: ChunkOptions,
    ranking: RankOptions,
    bm25: Bm25Index,
    files: Vec<Option<IndexedFile>>,
    by_path: HashMap<MemoryPath, u32>,
    chunk_info: Vec<ChunkInfo>,
}

impl MemoryIndex {
    /// An empty index over `store`; the first [`Self::refresh`] builds it.
    pub fn new(store: MemoryStore, ranking: RankOptions) -> Self {
        Self {
            store,
            analyzer: Analyzer::new(),
            chunking: ChunkOptions::default(),
            ranking,
            bm25: Bm25Index::new(),
            files: Vec::new(),
            by_path: HashMap::new(),
            chunk_info: Vec::new(),
        }
    }

    /// Uses different chunk sizes (tests, tuning).
    #[must_use]
    pub fn with_chunking(mut self, chunking: ChunkOptions) -> Self {
        self.chunking = chunking;
        self
    }

    /// The store this index reads.
    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    /// Number of indexed files.
    pub fn file_count(&self) -> usize {
        self.by_path.len()
    }

    /// Brings the index up to date with the workspace: one listing (sizes and modification
    /// times, read through the confined store), then only new and changed files are read.
    pub fn refresh(&mut self) -> Result<RefreshStats, StoreError> {
        let mut open = self.store.open()?;
        let listing = open.list_indexable()?;
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
        let gone: Vec<u32> = self
            .by_path
            .values()
            .copied()
            .filter(|&slot| !seen[slot as usize])
            .collect();
        for slot in gone {
            self.remove_file(slot);
            stats.removed += 1;
        }
        for (path, stamp, old_slot) in changed {
            if let Some(slot) = old_slot {
                self.remove_file(slot);
            }
            match open.read(&path, MAX_FILE_BYTES) {
                Ok(text) => {
                    self.add_file(path, stamp, text.into());
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
        Ok(stats)
    }

    fn remove_file(&mut self, slot: u32) {
        let Some(file) = self.files[slot as usize].take() else {
            return;
        };
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

    fn add_file(&mut self, path: MemoryPath, stamp: FileStamp, text: Arc<str>) {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        if line_starts.last() == Some(&text.len()) && !text.is_empty() {
            line_starts.pop();
        }
        let slot = if let Some(free) = self.files.iter().position(Option::is_none) {
            free
        } else {
            self.files.push(None);
            self.files.len() - 1
        };
        let slot_id = u32::try_from(slot).unwrap_or(u32::MAX);
        let mut file = IndexedFile {
            day: path.note_day(),
            path: path.clone(),
            stamp,
            text,
            line_starts,
            chunks: Vec::new(),
        };
        let lines: Vec<&str> = (0..file.line_count()).map(|i| file.line(i)).collect();
        let ranges = chunk_lines(&lines, self.chunking);
        let mut tokens: Vec<TermId> = Vec::new();
        let mut chunk_ids = Vec::with_capacity(ranges.len());
        for range in ranges {
            tokens.clear();
            for line in &lines[range.start..=range.end] {
                let bm25 = &mut self.bm25;
                self.analyzer
                    .for_each_term(line, |term| tokens.push(bm25.intern(term)));
            }
            let id = self.bm25.add_chunk(&mut tokens);
            debug_assert_eq!(id as usize, self.chunk_info.len());
            self.chunk_info.push(ChunkInfo {
                file: slot_id,
                range,
            });
            chunk_ids.push(id);
        }
        drop(lines);
        file.chunks = chunk_ids;
        self.files[slot] = Some(file);
        self.by_path.insert(path, slot_id);
    }

    /// The best `limit` hits for `query`. `today` (days since the epoch) feeds the optional
    /// recency decay. Call [`Self::refresh`] first to see the latest files.
    pub fn search(&self, query: &str, limit: usize, today: Option<i64>) -> Vec<LocalHit> {
        let mut terms: Vec<String> = Vec::new();
        for term in self.analyzer.terms(query) {
            if !terms.contains(&term) && terms.len() < MAX_QUERY_TERMS {
                terms.push(term);
            }
        }
        if terms.is_empty() || limit == 0 || self.bm25.is_empty() {
            return Vec::new();
        }
        let ids: Vec<Option<TermId>> = terms.iter().map(|t| self.bm25.term_id(t)).collect();
        let mut scores = vec![0.0_f32; self.bm25.slots()];
        let mut matched = vec![0_u16; self.bm25.slots()];
        for id in ids.iter().flatten() {
            self.bm25.accumulate(*id, 1.0, &mut scores, &mut matched);
        }
        let mut candidates: Vec<(ChunkId, f32)> = scores
            .iter()
            .enumerate()
            .filter(|(i, s)| **s > 0.0 && matched[*i] > 0)
            .map(|(i, s)| (ChunkId::try_from(i).unwrap_or(ChunkId::MAX), *s))
            .collect();
        let keep = (limit * CANDIDATES_PER_RESULT).max(MIN_CANDIDATES);
        if candidates.len() > keep {
            candidates.select_nth_unstable_by(keep, |a, b| b.1.total_cmp(&a.1));
            candidates.truncate(keep);
        }

        let mut ranked: Vec<(ChunkId, f32, Vec<u64>)> = candidates
            .into_iter()
            .filter_map(|(chunk, bm25)| {
                let info = self.chunk_info[chunk as usize];
                let file = self.files[info.file as usize].as_ref()?;
                let (positions, line_masks) = self.locate(file, info.range, &terms);
                let matched_terms = positions.iter().filter(|p| !p.is_empty()).count();
                let present: Vec<Vec<usize>> =
                    positions.into_iter().filter(|p| !p.is_empty()).collect();
                let score = bm25
                    * coverage_factor(&self.ranking, matched_terms, terms.len())
                    * proximity_factor(&self.ranking, &present)
                    * recency_factor(&self.ranking, file.day, today);
                (score >= self.ranking.min_score).then_some((chunk, score, line_masks))
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));

        let mut hits: Vec<LocalHit> = Vec::with_capacity(limit);
        for (chunk, score, masks) in ranked {
            let info = self.chunk_info[chunk as usize];
            let Some(file) = self.files[info.file as usize].as_ref() else {
                continue;
            };
            let window = snippet::best_window(&masks, info.range.start, |i| file.line(i));
            let duplicate = hits.iter().any(|h| {
                h.path == file.path && h.start_line <= window.end + 1 && window.start < h.end_line
            });
            if duplicate {
                continue;
            }
            hits.push(LocalHit {
                path: file.path.clone(),
                start_line: window.start + 1,
                end_line: window.end + 1,
                score,
                snippet: snippet::text(window, |i| file.line(i)),
            });
            if hits.len() == limit {
                break;
            }
        }
        hits
    }

    /// Positions of each query term within the chunk (token offsets) and, per line of the
    /// chunk, a bit mask of the query terms it holds.
    fn locate(
        &self,
        file: &IndexedFile,
        range: LineRange,
        terms: &[String],
    ) -> (Vec<Vec<usize>>, Vec<u64>) {
        let mut positions = vec![Vec::new(); terms.len()];
        let mut masks = Vec::with_capacity(range.end - range.start + 1);
        let mut pos = 0;
        for i in range.start..=range.end {
            let mut mask = 0_u64;
            self.analyzer.for_each_term(file.line(i), |term| {
                if let Some(q) = terms.iter().position(|t| t == term) {
                    positions[q].push(pos);
                    mask |= 1 << q;
                }
                pos += 1;
            });
            masks.push(mask);
        }
        (positions, masks)
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;
    use std::path::Path;

    use pretty_assertions::assert_eq;
    use tempfile::TempDir;

    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn index(dir: &TempDir) -> MemoryIndex {
        let mut index = MemoryIndex::new(
            MemoryStore::new(dir.path().to_path_buf()),
            RankOptions::default(),
        );
        index.refresh().unwrap();
        index
    }

    fn paths(hits: &[LocalHit]) -> Vec<String> {
        hits.iter().map(|h| h.path.to_string()).collect()
    }

    #[test]
    fn finds_a_note_whose_query_words_are_far_apart() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "memory/2026-03-01.md",
            "# 2026-03-01\n\n- The invoicing service moved to a new host today.\n- Lunch with Ana.\n- Long call about quarterly planning and hiring.\n- Decided the database will be PostgreSQL 16.\n",
        );
        write(
            dir.path(),
            "memory/2026-03-02.md",
            "# 2026-03-02\n\n- Read about PostgreSQL replication in general.\n",
        );
        write(
            dir.path(),
            "MEMORY.md",
            "# Memory\n\n- Invoices are due monthly.\n",
        );
        let hits = index(&dir).search("invoicing PostgreSQL", 5, None);
        assert_eq!(paths(&hits)[0], "memory/2026-03-01.md");
    }

    #[test]
    fn phrase_order_and_coverage_rank_the_best_chunk_first() {
        let dir = TempDir::new().unwrap();
        write(dir.path(), "memory/a.md", "- home server runs Debian\n");
        write(
            dir.path(),
            "memory/b.md",
            "- server at home? no, the office one runs Debian\n",
        );
        write(dir.path(), "memory/c.md", "- home network notes\n");
        let hits = index(&dir).search("home server", 5, None);
        assert_eq!(paths(&hits), ["memory/a.md", "memory/b.md", "memory/c.md"]);
    }

    #[test]
    fn hits_are_short_windows_with_1_based_lines() {
        let dir = TempDir::new().unwrap();
        let mut text = String::from("# Log\n\n");
        for i in 0..30 {
            writeln!(text, "- routine entry number {i}").unwrap();
        }
        text.push_str("- The user's cat is named Pixel.\n");
        write(dir.path(), "memory/log.md", &text);
        let hits = index(&dir).search("cat name pixel", 5, None);
        assert_eq!(hits.len(), 1);
        assert_eq!((hits[0].start_line, hits[0].end_line), (33, 33));
        assert_eq!(hits[0].snippet, "- The user's cat is named Pixel.");
    }

    #[test]
    fn sees_added_changed_and_deleted_notes() {
        let dir = TempDir::new().unwrap();
        write(dir.path(), "memory/a.md", "- zebra facts\n");
        let mut index = index(&dir);
        assert_eq!(paths(&index.search("zebra", 5, None)), ["memory/a.md"]);

        write(dir.path(), "memory/b.md", "- a zebra again, and giraffes\n");
        write(
            dir.path(),
            "memory/a.md",
            "- only about lions now, longer text\n",
        );
        let stats = index.refresh().unwrap();
        assert_eq!(
            stats,
            RefreshStats {
                indexed: 2,
                removed: 0,
                unchanged: 0
            }
        );
        assert_eq!(paths(&index.search("zebra", 5, None)), ["memory/b.md"]);
        assert_eq!(paths(&index.search("lions", 5, None)), ["memory/a.md"]);

        std::fs::remove_file(dir.path().join("memory/b.md")).unwrap();
        assert_eq!(index.refresh().unwrap().removed, 1);
        assert!(index.search("zebra", 5, None).is_empty());
    }

    #[test]
    fn many_changes_compact_without_losing_hits() {
        let dir = TempDir::new().unwrap();
        for i in 0..150 {
            write(
                dir.path(),
                &format!("memory/n{i}.md"),
                &format!("- note {i} alpha\n"),
            );
        }
        let mut index = index(&dir);
        for i in 0..140 {
            std::fs::remove_file(dir.path().join(format!("memory/n{i}.md"))).unwrap();
        }
        index.refresh().unwrap();
        write(dir.path(), "memory/new.md", "- beta note\n");
        index.refresh().unwrap();
        assert_eq!(index.search("alpha", 50, None).len(), 10);
        assert_eq!(paths(&index.search("beta", 5, None)), ["memory/new.md"]);
        assert_eq!(index.file_count(), 11);
    }

    #[test]
    fn recency_prefers_the_newer_of_two_dated_notes_but_never_decays_memory_md() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "memory/2026-01-01.md",
            "- laptop is a ThinkPad\n",
        );
        write(
            dir.path(),
            "memory/2026-06-01.md",
            "- laptop is a ThinkPad\n",
        );
        write(dir.path(), "MEMORY.md", "- laptop is a ThinkPad\n");
        let mut index = MemoryIndex::new(
            MemoryStore::new(dir.path().to_path_buf()),
            RankOptions {
                recency_half_life_days: Some(30.0),
                ..RankOptions::default()
            },
        );
        index.refresh().unwrap();
        let today = crate::paths::parse_day("2026-06-10");
        let hits = index.search("laptop thinkpad", 5, today);
        assert_eq!(
            paths(&hits),
            ["MEMORY.md", "memory/2026-06-01.md", "memory/2026-01-01.md"]
        );
    }

    #[test]
    fn empty_or_stopword_queries_find_nothing() {
        let dir = TempDir::new().unwrap();
        write(dir.path(), "MEMORY.md", "- the fact\n");
        let index = index(&dir);
        assert!(index.search("", 5, None).is_empty());
        assert!(index.search("the of and", 5, None).is_empty());
    }

    #[test]
    fn score_floor_drops_weak_hits() {
        let dir = TempDir::new().unwrap();
        write(dir.path(), "MEMORY.md", "- rare word quokka\n");
        let mut index = MemoryIndex::new(
            MemoryStore::new(dir.path().to_path_buf()),
            RankOptions {
                min_score: 1_000.0,
                ..RankOptions::default()
            },
        );
        index.refresh().unwrap();
        assert!(index.search("quokka", 5, None).is_empty());
    }
}
