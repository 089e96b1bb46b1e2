//! The local search index over a workspace's memory files: kept fresh by comparing sizes and
//! modification times before each search (re-reading only what changed), ranked by BM25 over
//! line-ranged chunks with the boosts in [`rank`], and answered with short, quotable line
//! windows.

/// BM25 postings and scoring.
pub mod bm25;
/// Keeping the index fresh: refresh, add and remove files.
mod build;
/// Curated statements the dated notes record as changed.
mod change;
/// Line-ranged chunking.
pub mod chunk;
/// Which fact is current: same-subject windows, newest first.
mod current;
/// Keeping the best few candidates, ties at the cut in workspace order.
mod cut;
/// A short confident page given the best note naming its answer.
mod follow;
/// Index data read in place from a mapped index file, or owned.
pub mod mapped;

/// Word vectors from a static embedding model.
pub mod embedding;
/// Stemming and typo tolerance: words to terms.
pub mod lexicon;
/// Lines marked as replaced.
mod marked;
/// Lines close in meaning to a query.
mod meaning;
/// Reading and splitting a file before its terms are assigned.
mod prepare;
/// Answering one query.
mod query;
/// Score factors on top of BM25.
pub mod rank;
/// The index as bytes: what is persisted between processes, and checking it on the way back.
pub mod snapshot;
/// Choosing the quoted lines of a hit.
pub mod snippet;
/// A curated line after the note it restates.
mod source;
/// A cold build's notes written out and read in place instead of held.
mod spill;
/// Text to terms.
pub mod tokenize;
/// The message lines of OpenClaw's session-memory notes.
mod transcript;

use std::collections::BTreeSet;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::index::bm25::{Bm25Index, ChunkId};
use crate::index::chunk::{ChunkOptions, LineRange};
use crate::index::embedding::{VocabularyVectors, WordModel};
use crate::index::lexicon::Lexicon;
use crate::index::mapped::{Backing, Ids, Text};
use crate::index::rank::RankOptions;
use crate::index::tokenize::Analyzer;
use crate::paths::MemoryPath;
use crate::store::{FileStamp, MemoryStore};

/// One ranked local result: a short window of lines in one memory file.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalHit {
    /// The file.
    pub path: MemoryPath,
    /// First line of the window (1-based).
    pub start_line: usize,
    /// Last line of the window (1-based, inclusive).
    pub end_line: usize,
    /// Final score (BM25 times the boosts; a hit found by following the page's answer is scaled
    /// to no more than the hit before it); higher is better.
    pub score: f32,
    /// The search found nothing holding most of the query: this hit is a guess, not an
    /// answer.
    pub weak: bool,
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

#[derive(Debug, Clone)]
struct IndexedFile {
    path: MemoryPath,
    stamp: FileStamp,
    text: Text,
    /// Byte offset of each line's start in `text`.
    line_starts: Ids,
    chunks: Vec<ChunkId>,
    day: Option<i64>,
    /// When in its day a session-memory note was saved, in seconds after midnight, as its
    /// first line says ([`transcript::session_time`]); `None` for every other file.
    time: Option<u32>,
    /// The terms of every line, in order, back to back (what `locate` reads instead of
    /// re-tokenizing); line `i`'s are `terms[term_starts[i]..term_starts[i + 1]]`. One
    /// allocation per file rather than one per line.
    terms: Ids,
    term_starts: Ids,
    /// Lines holding a fact the notes mark as replaced: superseded `USER.md` directives and
    /// struck-through text with nothing current beside it. Sorted, 0-based.
    superseded: Vec<usize>,
    /// Where each own line of a session-memory message starts, as indexes into `terms`
    /// (sorted): a message line's terms from the first such start on, split at the next ones,
    /// are its own lines without the role word ([`transcript::Message::own_lines`]).
    message_starts: Vec<u32>,
}

/// A note's day, from its name, and when in that day it was saved, from its first line
/// ([`transcript::session_time`]): what a freshly read file and one loaded from a saved index
/// both derive, neither trusted from the saved file.
fn note_when(path: &MemoryPath, text: &[u8]) -> (Option<i64>, Option<u32>) {
    let day = path.note_day();
    (day, day.and_then(|day| transcript::session_time(text, day)))
}

impl IndexedFile {
    fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The terms of the lines of `range`, in order (repeats included): a chunk's tokens.
    fn range_terms(&self, range: LineRange) -> &[bm25::TermId] {
        self.term_starts
            .get(range.start)
            .zip(self.term_starts.get(range.end + 1))
            .and_then(|(&from, &to)| self.terms.get(from as usize..to as usize))
            .unwrap_or_default()
    }

    /// Whether line `i` is a heading ([`chunk::is_heading`]), read from its first bytes: no
    /// UTF-8 check of the whole line unless it opens with a character beyond ASCII.
    fn is_heading(&self, i: usize) -> bool {
        let bytes = self.text.bytes();
        let start = self
            .line_starts
            .get(i)
            .map_or(bytes.len(), |&at| at as usize);
        let first = bytes
            .get(start..)
            .unwrap_or_default()
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t'));
        match first {
            Some(b'#') => true,
            Some(b) if !b.is_ascii() => chunk::is_heading(self.line(i)),
            _ => false,
        }
    }

    fn line(&self, i: usize) -> &str {
        let len = self.text.bytes().len();
        let at = |i: usize| self.line_starts.get(i).map_or(len, |&at| at as usize);
        self.text
            .slice(at(i)..at(i + 1))
            .trim_end_matches(['\n', '\r'])
    }
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct ChunkInfo {
    file: u32,
    range: LineRange,
}

/// The index of one workspace.
#[derive(Debug)]
pub struct MemoryIndex {
    store: MemoryStore,
    analyzer: Analyzer,
    lexicon: Lexicon,
    chunking: ChunkOptions,
    ranking: RankOptions,
    bm25: Bm25Index,
    files: Vec<Option<IndexedFile>>,
    /// The empty slots of `files`; a new file takes the lowest. (Looking for it with a scan
    /// made an index build quadratic in the notes.)
    free_slots: BTreeSet<u32>,
    /// FxHash: every note's path is looked up at each freshness scan, and the keys are the
    /// workspace's own file names.
    by_path: FxHashMap<MemoryPath, u32>,
    chunk_info: Vec<ChunkInfo>,
    /// The vocabulary's word vectors, when an embedding model is in use. Not part of the file:
    /// computed from the vocabulary when the model is attached.
    vectors: Option<VocabularyVectors>,
    /// The freshness check (see `persist::CheckMark`) this index was found up to date at,
    /// right after it was built; `None` otherwise. Not part of the file.
    fresh_at_check: Option<u64>,
    /// The checksum of the index file this index was loaded from.
    checksum: Option<u64>,
    /// The mapped files this index reads in place (the index file it was loaded from, the
    /// spill file of a build), whose pages [`Self::release_mapped_pages`] gives back.
    mapped: Vec<Arc<Backing>>,
    /// Where a cold build writes its notes out (`None`: the system's temporary directory).
    spill_dir: Option<std::path::PathBuf>,
}

impl MemoryIndex {
    /// The file in `slot` (`None` for a free slot or one out of range).
    fn file_in(&self, slot: u32) -> Option<&IndexedFile> {
        self.files.get(slot as usize)?.as_ref()
    }

    /// The file a hit quotes (`None` once it is gone).
    fn hit_file(&self, hit: &LocalHit) -> Option<&IndexedFile> {
        self.file_in(*self.by_path.get(&hit.path)?)
    }

    /// An empty index over `store`; the first [`Self::refresh`] builds it.
    pub fn new(store: MemoryStore, ranking: RankOptions) -> Self {
        Self {
            store,
            analyzer: Analyzer::new(),
            lexicon: Lexicon::new(ranking.stemming),
            chunking: ChunkOptions::default(),
            ranking,
            bm25: Bm25Index::new(),
            files: Vec::new(),
            free_slots: BTreeSet::new(),
            by_path: FxHashMap::default(),
            chunk_info: Vec::new(),
            vectors: None,
            fresh_at_check: None,
            checksum: None,
            mapped: Vec::new(),
            spill_dir: None,
        }
    }

    /// Has a cold build write its notes out to an unnamed file in `dir` (private to this user:
    /// the index's state directory) rather than in the system's temporary directory.
    pub fn spill_in(&mut self, dir: &std::path::Path) {
        self.spill_dir = Some(dir.to_path_buf());
    }

    /// Uses `model` to find lines close in meaning to a query the words alone cannot answer
    /// (none: words only). Embeds every word of the vocabulary now; later refreshes add only
    /// new words.
    pub fn use_word_model(&mut self, model: Option<Arc<WordModel>>) {
        self.vectors = model.map(|model| {
            let started = std::time::Instant::now();
            let mut vectors = VocabularyVectors::new(model);
            vectors.extend(self.lexicon.words_in_order());
            tracing::debug!(
                words = vectors.len(),
                took_us = started.elapsed().as_micros(),
                "vocabulary embedded"
            );
            vectors
        });
    }

    /// Gives back the pages of the mapped files that searches and saves read (they stay in
    /// the page cache): a search reads a little of many notes, and the kernel maps far more
    /// around each read than it asked for, so without this the process's memory would grow
    /// towards the size of the index file.
    pub fn release_mapped_pages(&self) {
        for backing in &self.mapped {
            backing.release_all();
        }
    }

    /// [`Self::release_mapped_pages`], once the process's resident shared memory (its code and
    /// the mapped pages) passes `budget` bytes, or when that is not known: a small index's pages
    /// stay mapped from one search to the next, a large one's do not pile up.
    pub fn release_mapped_pages_over(&self, budget: u64) {
        if !self.mapped.is_empty()
            && mapped::resident_shared_bytes().is_none_or(|resident| resident > budget)
        {
            self.release_mapped_pages();
        }
    }

    /// The ranking options.
    pub fn ranking(&self) -> RankOptions {
        self.ranking
    }

    /// The embedding model in use, if any.
    pub fn word_model(&self) -> Option<&Arc<WordModel>> {
        self.vectors.as_ref().map(VocabularyVectors::model)
    }

    /// The freshness check this index was found up to date at, if any.
    pub fn fresh_at_check(&self) -> Option<u64> {
        self.fresh_at_check
    }

    /// Records that this index was found up to date at freshness check `check`.
    pub fn set_fresh_at_check(&mut self, check: Option<u64>) {
        self.fresh_at_check = check;
    }

    /// The checksum of the index file this index was loaded from, if it was.
    pub fn loaded_checksum(&self) -> Option<u64> {
        self.checksum
    }

    /// The store this index reads.
    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    /// Number of indexed files.
    pub fn file_count(&self) -> usize {
        self.by_path.len()
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

    /// Writes each `(day, text)` as the daily note `memory/{day}.md`.
    fn write_notes<'a>(root: &Path, notes: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (day, text) in notes {
            write(root, &format!("memory/{day}.md"), &format!("{text}\n"));
        }
    }

    /// Twenty notes of `text`, one a day from the 1st of `month` ("2025-03"): words common
    /// across the workspace, so what the tests look for is rare by comparison.
    fn write_filler_notes(root: &Path, month: &str, text: &str) {
        for day in 1..=20 {
            write(
                root,
                &format!("memory/{month}-{day:02}.md"),
                &format!("{text}\n"),
            );
        }
    }

    /// `index` refreshed after the notes of `dir` changed under it: its page for `query`, which
    /// must be a fresh build's of the same notes.
    fn as_a_fresh_build(index: &mut MemoryIndex, dir: &TempDir, query: &str) -> Vec<LocalHit> {
        index.refresh().unwrap();
        let page = index.search(query, 5, None);
        assert_eq!(page, self::index(dir).search(query, 5, None), "{query}");
        page
    }

    /// A `USER.md` with each rule an active directive of its own, set apart as OpenClaw
    /// writes them (an `observed` comment, blank lines), so no window holds two.
    fn write_directives(root: &Path, rules: &[&str]) {
        let mut text = String::from("# USER.md - User Model\n\n## Directives\n\n");
        for rule in rules {
            writeln!(
                text,
                "<!-- observed: 2026-01-01 | status: active -->\n\n- {rule}\n"
            )
            .unwrap();
        }
        write(root, "USER.md", &text);
    }

    /// `count` daily notes from 2025-01-02, one a day, the n-th (from 1) holding `text(n)`.
    fn write_days(root: &Path, count: usize, text: impl Fn(usize) -> String) {
        for n in 1..=count {
            let (month, day) = (1 + n / 28, 1 + n % 28);
            write(
                root,
                &format!("memory/2025-{month:02}-{day:02}.md"),
                &format!("{}\n", text(n)),
            );
        }
    }

    fn index(dir: &TempDir) -> MemoryIndex {
        index_with(dir, RankOptions::default())
    }

    fn index_with(dir: &TempDir, ranking: RankOptions) -> MemoryIndex {
        let mut index = MemoryIndex::new(MemoryStore::new(dir.path().to_path_buf()), ranking);
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
        assert!(!hits[0].weak, "{hits:?}");
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
        // c.md holds only the common word of the query: no answer.
        assert_eq!(paths(&hits), ["memory/a.md", "memory/b.md"]);
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
    fn a_cold_build_written_out_ranks_as_one_built_in_memory() {
        let dir = TempDir::new().unwrap();
        let words = [
            "deploy", "laptop", "garden", "invoice", "berlin", "postgres", "tea",
        ];
        for i in 0..120 {
            let mut text = format!("# Note {i}\n\n");
            for line in 0..=(i % 30) {
                let a = words[(i + line) % words.len()];
                let b = words[(i * 3 + line) % words.len()];
                writeln!(text, "- {a} {b} item{line} n{i}").unwrap();
            }
            write(dir.path(), &format!("memory/n{i:03}.md"), &text);
        }
        let spill = TempDir::new().unwrap();
        let mut cold = MemoryIndex::new(
            MemoryStore::new(dir.path().to_path_buf()),
            RankOptions::default(),
        );
        cold.spill_in(spill.path());
        cold.refresh().unwrap();
        assert_eq!(
            cold.mapped.len(),
            1,
            "the cold build read its notes back in place"
        );
        // The same notes in two refreshes too small to write anything out.
        let hidden = TempDir::new().unwrap();
        for i in 60..120 {
            let name = format!("memory/n{i:03}.md");
            std::fs::rename(
                dir.path().join(&name),
                hidden.path().join(format!("n{i:03}.md")),
            )
            .unwrap();
        }
        let mut warm = MemoryIndex::new(
            MemoryStore::new(dir.path().to_path_buf()),
            RankOptions::default(),
        );
        warm.refresh().unwrap();
        for i in 60..120 {
            std::fs::rename(
                hidden.path().join(format!("n{i:03}.md")),
                dir.path().join(format!("memory/n{i:03}.md")),
            )
            .unwrap();
        }
        warm.refresh().unwrap();
        assert!(warm.mapped.is_empty());
        // A spill file that cannot be created: the build keeps the notes in memory instead.
        let mut held = MemoryIndex::new(
            MemoryStore::new(dir.path().to_path_buf()),
            RankOptions::default(),
        );
        held.spill_in(&spill.path().join("missing"));
        held.refresh().unwrap();
        assert!(held.mapped.is_empty());
        assert_eq!(
            held.search("n77 tea", 8, None),
            cold.search("n77 tea", 8, None)
        );
        for query in [
            "deploy laptop",
            "garden item3",
            "n77 tea",
            "berlin invoice item12",
        ] {
            assert_eq!(
                cold.search(query, 8, None),
                warm.search(query, 8, None),
                "{query}"
            );
        }
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(
            cold.to_snapshot(&root).unwrap(),
            warm.to_snapshot(&root).unwrap(),
            "the same index, byte for byte"
        );
    }

    #[test]
    fn equal_hits_rank_as_a_fresh_build_ranks_them_whatever_was_edited_since() {
        let dir = TempDir::new().unwrap();
        // The same words, told apart by their stops only: equal hits, but not one quote
        // repeated (a page quotes a text once).
        for (name, stop) in [("alpha", "."), ("beta", "!"), ("gamma", "…")] {
            write(
                dir.path(),
                &format!("memory/{name}.md"),
                &format!("# {name}\n\n- Dinner was ramen again{stop}\n"),
            );
        }
        write_filler_notes(dir.path(), "2025-04", "- Walked to work.");
        let mut index = index(&dir);
        // An edit elsewhere in one note: its line ties with the others' as before.
        write(
            dir.path(),
            "memory/alpha.md",
            "# alpha, edited\n\n- Dinner was ramen again.\n",
        );
        let edited = as_a_fresh_build(&mut index, &dir, "ramen");
        assert_eq!(
            paths(&edited),
            ["memory/alpha.md", "memory/beta.md", "memory/gamma.md"]
        );
    }

    #[test]
    fn equal_candidates_past_the_cut_are_kept_as_a_fresh_build_keeps_them() {
        // More notes holding the same words than the search ranks windows of (50 for a page
        // of 5): which of them it keeps must not follow the order they were indexed in. (Each
        // line ends in its own number of stops: equal hits, no quote repeated.)
        let dir = TempDir::new().unwrap();
        let line = |i: usize| format!("- Dinner was ramen again{}\n", ".".repeat(i + 1));
        for i in 0..80 {
            write(dir.path(), &format!("memory/n{i:02}.md"), &line(i));
        }
        write_filler_notes(dir.path(), "2025-04", "- Walked to work.");
        let mut index = index(&dir);
        for i in (0..80).step_by(3) {
            write(
                dir.path(),
                &format!("memory/n{i:02}.md"),
                &format!("{}\n", line(i)),
            );
        }
        let edited = as_a_fresh_build(&mut index, &dir, "ramen");
        assert_eq!(
            paths(&edited),
            [
                "memory/n00.md",
                "memory/n01.md",
                "memory/n02.md",
                "memory/n03.md",
                "memory/n04.md"
            ]
        );
    }

    #[test]
    fn a_word_gone_from_the_notes_is_no_typo_correction_though_its_stem_lives_on() {
        // "bottles" is edited away while "bottle" stays: a fresh build never saw "bottles", so
        // "bittles" is one edit from "battles" only.
        let dir = TempDir::new().unwrap();
        write(dir.path(), "memory/a.md", "- Six bottles of cider.\n");
        write(dir.path(), "memory/b.md", "- The bottle bank is full.\n");
        write(
            dir.path(),
            "memory/c.md",
            "- Board game battles all evening.\n",
        );
        write_filler_notes(dir.path(), "2025-04", "- Walked to work.");
        let mut index = index(&dir);
        write(dir.path(), "memory/a.md", "- Six bottle of cider.\n");
        let edited = as_a_fresh_build(&mut index, &dir, "bittles");
        assert_eq!(paths(&edited), ["memory/c.md"]);
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
        // Compaction rebuilt the postings from the notes' terms: it ranks as a fresh build.
        let fresh = self::index(&dir);
        for query in ["alpha", "note 145 alpha", "beta note"] {
            assert_eq!(index.search(query, 20, None), fresh.search(query, 20, None));
        }
    }

    #[test]
    fn a_curated_line_follows_the_note_it_restates() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "MEMORY.md",
            "- Build server: bluefin (Debian 12).\n",
        );
        write(
            dir.path(),
            "memory/2026-02-01.md",
            "- The build server bluefin was reinstalled with Debian 12 and 64 GB RAM.\n",
        );
        write_filler_notes(dir.path(), "2025-04", "- Walked to work.");
        let hits = index(&dir).search("bluefin debian", 5, None);
        assert_eq!(
            paths(&hits),
            ["memory/2026-02-01.md", "MEMORY.md"],
            "{hits:#?}"
        );
        let off = RankOptions {
            source_notes_first: false,
            ..RankOptions::default()
        };
        let hits = index_with(&dir, off).search("bluefin debian", 5, None);
        assert_eq!(
            paths(&hits),
            ["MEMORY.md", "memory/2026-02-01.md"],
            "{hits:#?}"
        );
        // A newer note holding the query's words: the restating note is not the newest
        // statement, and the curated line keeps its place.
        write(
            dir.path(),
            "memory/2026-03-01.md",
            "- Moved bluefin off Debian onto Fedora.\n",
        );
        let hits = index(&dir).search("bluefin debian", 5, None);
        assert_eq!(paths(&hits)[0], "MEMORY.md", "{hits:#?}");
    }

    #[test]
    fn a_short_confident_page_follows_its_answer_to_the_notes_naming_it() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "MEMORY.md",
            "- Password manager: Bitwarden, family plan.\n",
        );
        write(
            dir.path(),
            "memory/2026-03-11.md",
            "- Added the new work logins to Bitwarden.\n",
        );
        write(
            dir.path(),
            "memory/2026-05-20.md",
            "- Bitwarden flagged two reused logins; changed both.\n",
        );
        write(
            dir.path(),
            "memory/2026-06-01.md",
            "- The family plan for the weekend: the coast.\n",
        );
        write_filler_notes(
            dir.path(),
            "2025-04",
            "- Walked to work; family plan for dinner.",
        );
        let mut hits = index(&dir).search("password manager", 5, None);
        // The curated line answers and keeps its place; one note naming its Bitwarden follows.
        // Its other words ("family plan") are in most sections, tell nothing apart and are not
        // followed: the note sharing only them is no hit. One note only: the further ones on
        // the held-out sets were never answers.
        assert_eq!(paths(&hits).len(), 2, "{hits:#?}");
        assert_eq!(paths(&hits)[0], "MEMORY.md", "{hits:#?}");
        assert!(
            ["memory/2026-03-11.md", "memory/2026-05-20.md"].contains(&paths(&hits)[1].as_str()),
            "{hits:#?}"
        );
        assert!(hits.iter().all(|h| !h.weak), "{hits:#?}");
        let off = RankOptions {
            follow_answer: false,
            ..RankOptions::default()
        };
        hits = index_with(&dir, off).search("password manager", 5, None);
        assert_eq!(paths(&hits), ["MEMORY.md"], "{hits:#?}");
        // A guess is never followed: at most the guess limit, all weak.
        hits = index(&dir).search("password vault budget review dentist", 5, None);
        assert!(
            !hits.is_empty() && hits.len() <= 2 && hits.iter().all(|h| h.weak),
            "{hits:#?}"
        );
    }

    #[test]
    fn a_followed_hit_never_scores_above_the_hit_before_it() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "MEMORY.md",
            "- Password manager: Bitwarden vault.\n",
        );
        // The older note holds more of the answer's words; with the decay, the newer one
        // scores higher and is the one followed.
        write(
            dir.path(),
            "memory/2025-06-01.md",
            "- Bitwarden export done for the yearly audit at work, every login checked twice \
             by the team before they locked the vault.\n",
        );
        write(
            dir.path(),
            "memory/2026-05-20.md",
            "- Bitwarden flagged two reused logins.\n",
        );
        write_filler_notes(dir.path(), "2025-04", "- Walked to work.");
        let decayed = RankOptions {
            recency_half_life_days: Some(30.0),
            ..RankOptions::default()
        };
        let today = crate::parse_day("2026-06-01");
        // Without the decay the older note, holding "vault" too, is followed; with it the
        // newer one. Either way its score stays at or under the curated line's.
        for (options, followed) in [
            (RankOptions::default(), "memory/2025-06-01.md"),
            (decayed, "memory/2026-05-20.md"),
        ] {
            let hits = index_with(&dir, options).search("password manager", 5, today);
            assert_eq!(paths(&hits), ["MEMORY.md", followed], "{hits:#?}");
            assert!(hits[0].score >= hits[1].score, "{hits:#?}");
        }
    }

    #[test]
    fn recency_prefers_the_newer_of_two_dated_notes_but_never_decays_memory_md() {
        let dir = TempDir::new().unwrap();
        // The same words in each, but not the same quote (a page quotes a text once).
        write(
            dir.path(),
            "memory/2026-01-01.md",
            "- laptop is a ThinkPad.\n",
        );
        write(
            dir.path(),
            "memory/2026-06-01.md",
            "- laptop is a ThinkPad!\n",
        );
        write(dir.path(), "MEMORY.md", "- laptop is a ThinkPad\n");
        // The decay alone: otherwise the newest note, which restates the curated line, would
        // come before it (`source`).
        let index = index_with(
            &dir,
            RankOptions {
                recency_half_life_days: Some(30.0),
                source_notes_first: false,
                ..RankOptions::default()
            },
        );
        let today = crate::paths::parse_day("2026-06-10");
        let hits = index.search("laptop thinkpad", 5, today);
        assert_eq!(
            paths(&hits),
            ["MEMORY.md", "memory/2026-06-01.md", "memory/2026-01-01.md"]
        );
    }

    #[test]
    fn a_word_the_notes_never_use_does_not_sink_the_words_they_do() {
        // A tiny workspace: the unseen word weighs like the rarest real word, not more.
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "MEMORY.md",
            "# Decisions\n\n- Invoices are stored in PostgreSQL.\n- Deploys on Tuesdays.\n",
        );
        write(
            dir.path(),
            "memory/2026-11-20.md",
            "Talked about the garden.\n",
        );
        let hits = index(&dir).search("invoices database", 5, None);
        assert_eq!(paths(&hits), ["MEMORY.md"]);
        assert!(index(&dir).search("blood type", 5, None).is_empty());
    }

    #[test]
    fn misspelled_and_inflected_words_still_find_the_note() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "memory/2026-02-20.md",
            "- Passport renewed; it expires 2036-02-11.\n",
        );
        write(dir.path(), "memory/2026-02-21.md", "- Bought bread.\n");
        let index = index(&dir);
        assert_eq!(
            paths(&index.search("renewing passports", 5, None)),
            ["memory/2026-02-20.md"]
        );
        assert_eq!(
            paths(&index.search("pasport expiry", 5, None)),
            ["memory/2026-02-20.md"]
        );
    }

    #[test]
    fn the_newer_of_two_conflicting_notes_ranks_first_without_a_decay() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "memory/2025-01-10.md",
            "- Maya's work laptop is a ThinkPad X1.\n",
        );
        write(
            dir.path(),
            "memory/2026-05-19.md",
            "- Maya got a new laptop: a Framework 13.\n",
        );
        write(dir.path(), "memory/2026-06-01.md", "- Lunch with Dev.\n");
        let hits = index(&dir).search("Maya's laptop", 5, None);
        assert_eq!(
            paths(&hits),
            ["memory/2026-05-19.md", "memory/2025-01-10.md"]
        );
    }

    #[test]
    fn a_newer_note_too_weak_to_be_a_hit_does_not_displace_the_statement() {
        let dir = TempDir::new().unwrap();
        let notes = [
            // The statement, and an older one of the same subject.
            (
                "2026-02-09",
                "- Moved her checking account from Chase to BECU, her new bank.",
            ),
            (
                "2025-08-04",
                "- Paychecks land in the Chase checking account.",
            ),
            // Another subject holding other words of the query.
            ("2025-10-01", "- Keiko switched banks over checking fees."),
            ("2025-11-01", "- Tariq switched banks over checking fees."),
            (
                "2025-12-01",
                "- Keiko switched banks over checking fees again.",
            ),
            // Newer notes holding the subject's words only in passing, far apart: too weak
            // to be hits.
            (
                "2026-03-01",
                "## Checking in\n- Coffee with Dev.\n- Lunch with Ana.\n- Ran 10 km.\n- Renamed the streaming account.",
            ),
            (
                "2026-04-01",
                "## Checking in\n- Coffee with Dev.\n- Lunch with Ana.\n- Ran 10 km.\n- Closed the old forum account.",
            ),
            ("2026-05-01", "- Walked past the bank."),
            ("2026-06-01", "- Walked past the bank again."),
        ];
        for (day, text) in notes {
            write(
                dir.path(),
                &format!("memory/{day}.md"),
                &format!("# {day}\n\n{text}\n"),
            );
        }
        let hits = index(&dir).search("checking account bank", 2, None);
        assert_eq!(
            paths(&hits),
            ["memory/2026-02-09.md", "memory/2025-08-04.md"],
            "{hits:#?}"
        );
    }

    #[test]
    fn a_lookup_keeps_its_match_and_a_question_gets_the_newer_statement() {
        let dir = TempDir::new().unwrap();
        let notes = [
            (
                "2025-09-11",
                "- Luis switched banks to get a better savings rate.",
            ),
            (
                "2026-03-15",
                "- Tariq switched banks to get a better savings rate.",
            ),
            (
                "2026-08-24",
                "- Ingrid switched banks to get a better savings rate.",
            ),
            // Luis comes up a little more often than switching does.
            ("2025-01-01", "- Coffee with Luis."),
            ("2025-01-02", "- Lunch with Luis."),
            ("2025-01-03", "- Luis called."),
            ("2025-01-04", "- Luis sent the slides."),
            ("2025-06-11", "- Maya's phone is an iPhone 12 mini."),
            (
                "2026-06-04",
                "- The user switched to a Google Pixel 9 phone today.",
            ),
            ("2025-01-05", "- Maya walked to work."),
            ("2025-01-06", "- Maya walked to work again."),
        ];
        write_notes(dir.path(), notes);
        let index = index(&dir);
        // The words of one note: that note, not newer ones holding only the commoner half.
        let hits = index.search("switched Luis", 5, None);
        assert_eq!(paths(&hits)[0], "memory/2025-09-11.md", "{hits:#?}");
        // A question asks what is true now: the newer statement, though it does not name her.
        let hits = index.search("What phone does Maya have?", 5, None);
        assert_eq!(paths(&hits)[0], "memory/2026-06-04.md", "{hits:#?}");
    }

    #[test]
    fn a_lookup_of_a_name_and_a_subject_gets_the_newer_statement() {
        let dir = TempDir::new().unwrap();
        let notes = vec![
            (
                "2025-07-21",
                "- Maya's manager is Tom Reyes; weekly 1:1 on Tuesdays.",
            ),
            ("2026-01-12", "- Reorg: her manager is now Priya Natarajan."),
        ];
        // The user's name is in most notes: a lookup naming her holds little weight with it.
        write_notes(dir.path(), notes);
        write_filler_notes(dir.path(), "2025-03", "- Maya walked to work.");
        // "Maya manager" asks who her manager is now: the newer statement, although only the
        // older one holds every word of the query.
        let hits = index(&dir).search("Maya manager", 5, None);
        assert_eq!(paths(&hits)[0], "memory/2026-01-12.md", "{hits:#?}");
    }

    #[test]
    fn a_lookup_keeps_its_statement_against_the_same_sentence_of_another_name() {
        let dir = TempDir::new().unwrap();
        let notes = vec![
            (
                "2026-07-22",
                "- Amara's laptop died during the demo; lent a spare charger.",
            ),
            (
                "2026-10-03",
                "- Jonas's laptop died during the demo; lent a spare charger.",
            ),
        ];
        write_notes(dir.path(), notes);
        write_filler_notes(dir.path(), "2025-03", "- Walked to work.");
        // Amara is in several notes, so "charger spare" alone is most of the query's weight.
        let days = [
            "2025-04-01",
            "2025-04-02",
            "2025-04-03",
            "2025-04-04",
            "2025-04-05",
        ];
        write_notes(dir.path(), days.map(|day| (day, "- Coffee with Amara.")));
        let hits = index(&dir).search("amara charger spare", 5, None);
        assert_eq!(paths(&hits)[0], "memory/2026-07-22.md", "{hits:#?}");
        // With lookups' matches switched off, the newer note of the same subject comes first:
        // the fixture does test the rule.
        let options = RankOptions {
            lookups_keep_matches: false,
            ..RankOptions::default()
        };
        let hits = index_with(&dir, options).search("amara charger spare", 5, None);
        assert_eq!(paths(&hits)[0], "memory/2026-10-03.md", "{hits:#?}");
    }

    /// A note as OpenClaw's `session-memory` hook writes it (openclaw 2026.9.6): one line per
    /// message, the text as `JSON.stringify` writes it.
    const SESSION_NOTE: &str = concat!(
        "# Session: 2026-03-14 21:05:00 Europe/London\n",
        "\n",
        "- **Session Key**: agent:main:main\n",
        "- **Session ID**: 3f1c9a52-7d0e-4b8a-9c2f-0a6e1d4b7c11\n",
        "- **Source**: telegram\n",
        "\n",
        "## Conversation Summary\n",
        "\n",
        r#"user: "quick one\nBrightwater Primary takes Ada from Monday\n- uniform from Kays""#,
        "\n",
        r#"assistant: "Noted: Ada starts at the new school on Monday.""#,
        "\n",
    );

    #[test]
    fn a_session_memory_message_is_found_by_the_word_after_a_line_break() {
        let dir = TempDir::new().unwrap();
        write(dir.path(), "memory/2026-03-14-2105.md", SESSION_NOTE);
        write_filler_notes(dir.path(), "2026-02", "- Walked to work.");
        // Without typo tolerance the word must be indexed as written, not as "nbrightwater".
        let exact = RankOptions {
            typo_tolerance: false,
            ..RankOptions::default()
        };
        for index in [index(&dir), index_with(&dir, exact)] {
            let hits = index.search("brightwater uniform", 5, None);
            let first = hits.first().expect("a hit");
            assert_eq!(
                (first.path.to_string(), first.start_line, first.weak),
                ("memory/2026-03-14-2105.md".to_owned(), 9, false),
                "{hits:#?}"
            );
            // The hit quotes the line as the file has it.
            assert!(
                first
                    .snippet
                    .starts_with(r#"user: "quick one\nBrightwater"#)
            );
        }
    }

    #[test]
    fn a_page_quotes_a_text_once() {
        let dir = TempDir::new().unwrap();
        // One line written into three daily notes, and the note that says more.
        for day in ["2026-04-01", "2026-04-08", "2026-04-15"] {
            write(
                dir.path(),
                &format!("memory/{day}.md"),
                "- Bought a birthday present for a classmate's party (Matilde).\n",
            );
        }
        write(
            dir.path(),
            "memory/2026-03-02.md",
            "- Matilde's birthday party: Trampolim Parque, Saturday at 15:00.\n",
        );
        write_filler_notes(dir.path(), "2026-02", "- Walked to work.");
        let texts = |index: &MemoryIndex| -> Vec<String> {
            index
                .search("matilde birthday party", 5, None)
                .into_iter()
                .map(|h| h.snippet)
                .collect()
        };
        let distinct = texts(&index(&dir));
        assert_eq!(distinct.len(), 2, "{distinct:#?}");
        assert_ne!(distinct[0], distinct[1]);
        // Off, the same line fills the page three times.
        let repeated = texts(&index_with(
            &dir,
            RankOptions {
                distinct_quotes: false,
                ..RankOptions::default()
            },
        ));
        assert_eq!(repeated.len(), 4, "{repeated:#?}");
    }

    #[test]
    fn of_two_sessions_of_one_day_the_later_states_the_current_fact() {
        let dir = TempDir::new().unwrap();
        // The evening's session is named by a slug (the hook's `llmSlug` option), which sorts
        // after the morning's time, and both match the query as well: only the time in each
        // note's first line says which came later.
        write(
            dir.path(),
            "memory/2026-03-14-0910.md",
            "# Session: 2026-03-14 09:10:00 Europe/Lisbon\n\n## Conversation Summary\n\n\
             user: \"booked Friday dinner with Rui at Tasca do Cais, Friday dinner with Rui at 8\"\n",
        );
        write(
            dir.path(),
            "memory/2026-03-14-dinner-moved.md",
            "# Session: 2026-03-14 21:40:00 Europe/Lisbon\n\n## Conversation Summary\n\n\
             user: \"change of plan\\nFriday dinner with Rui moved to Cantina Lumen, the place by \
             the river that does the grilled fish: the other one had a burst pipe and cancelled \
             every booking this week\"\n",
        );
        write_filler_notes(dir.path(), "2026-02", "- Walked to work.");
        let hits = index(&dir).search("friday dinner with rui", 5, None);
        let pages: Vec<String> = hits.iter().map(|h| h.path.to_string()).collect();
        assert_eq!(
            pages[..2],
            [
                "memory/2026-03-14-dinner-moved.md",
                "memory/2026-03-14-0910.md"
            ],
            "{hits:#?}"
        );
    }

    #[test]
    fn a_long_message_is_quoted_around_the_words_it_matched() {
        let dir = TempDir::new().unwrap();
        let chatter =
            "Happy to help with the weekend plans, the shopping list and the rest. ".repeat(20);
        let note = format!(
            "# Session: 2026-03-15 09:00:00 Europe/London\n\n## Conversation Summary\n\n\
             assistant: \"{chatter}\\nAlso: the boiler service is booked with Fernhill Heating.\"\n"
        );
        write(dir.path(), "memory/2026-03-15-0900.md", &note);
        write_filler_notes(dir.path(), "2026-02", "- Walked to work.");
        let hits = index(&dir).search("fernhill boiler", 5, None);
        let first = hits.first().expect("a hit");
        assert_eq!(first.start_line, 5, "{hits:#?}");
        assert!(first.snippet.starts_with('…'), "{}", first.snippet);
        assert!(
            first
                .snippet
                .contains("the boiler service is booked with Fernhill Heating."),
            "{}",
            first.snippet
        );
    }

    #[test]
    fn of_two_notes_of_one_day_recording_a_change_the_first_in_workspace_order_is_quoted() {
        let dir = TempDir::new().unwrap();
        write(dir.path(), "MEMORY.md", "# Memory\n\n- Gym: PureGym.\n");
        write(
            dir.path(),
            "memory/2026-05-06-evening.md",
            "# Evening\n\n- Cancelled PureGym and joined Bodyworks.\n",
        );
        write(
            dir.path(),
            "memory/2026-05-06.md",
            "- Cancelled PureGym; signed up at Bodyworks instead.\n",
        );
        write_filler_notes(dir.path(), "2025-04", "- Walked to work.");
        let mut index = index(&dir);
        let first = |index: &MemoryIndex| index.search("gym", 5, None)[0].path.to_string();
        assert_eq!(first(&index), "memory/2026-05-06-evening.md");
        // Edited elsewhere, the evening note's chunks are the newest in the index: the same
        // note is still the one quoted, as after a restart.
        write(
            dir.path(),
            "memory/2026-05-06-evening.md",
            "# Evening, edited\n\n- Cancelled PureGym and joined Bodyworks.\n",
        );
        index.refresh().unwrap();
        assert_eq!(first(&index), "memory/2026-05-06-evening.md");
        assert_eq!(
            index.search("gym", 5, None),
            self::index(&dir).search("gym", 5, None)
        );
    }

    #[test]
    fn a_curated_line_the_notes_record_as_changed_follows_the_note_that_changed_it() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "MEMORY.md",
            "# Memory\n\n## Habits\n- Gym: PureGym, Kirkstall Road.\n- Bank: BECU checking (moved from Chase in February 2026).\n",
        );
        let notes = vec![
            ("2025-03-01", "PureGym at six, legs day."),
            // It restates the curated line, which is stale: it is no source to put above it.
            (
                "2025-03-02",
                "First gym session at PureGym on Kirkstall Road.",
            ),
            (
                "2026-02-09",
                "Moved her checking account from Chase to BECU.",
            ),
            (
                "2026-05-06",
                "Cancelled PureGym and joined Bodyworks near the new house.",
            ),
        ];
        write_notes(dir.path(), notes);
        write_filler_notes(dir.path(), "2025-04", "- Walked to work.");

        // "Gym: PureGym" was never updated; the note that cancelled PureGym comes first.
        let hits = index(&dir).search("gym", 5, None);
        let first: Vec<&str> = hits.iter().take(2).map(|h| h.snippet.as_str()).collect();
        assert_eq!(
            first,
            [
                "Cancelled PureGym and joined Bodyworks near the new house.",
                "- Gym: PureGym, Kirkstall Road."
            ],
            "{hits:#?}"
        );
        // A note moving *to* the curated value confirms it: nothing goes above it.
        let hits = index(&dir).search("bank", 5, None);
        assert_eq!(paths(&hits)[0], "MEMORY.md", "{hits:#?}");
        // Switched off, nothing tells that the curated line is stale: it heads the page, after
        // the note it restates.
        let ranking = RankOptions {
            recorded_changes: false,
            ..RankOptions::default()
        };
        let hits = index_with(&dir, ranking).search("gym", 5, None);
        assert_eq!(
            paths(&hits)[..2],
            ["memory/2025-03-02.md", "MEMORY.md"],
            "{hits:#?}"
        );
    }

    #[test]
    fn superseded_directives_rank_below_the_active_ones() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "USER.md",
            "## Directives\n\n<!-- observed: 2025-01-01 | status: superseded -->\n- Book meetings after 09:00.\n\n<!-- observed: 2026-01-01 | status: active -->\n- Book meetings after 10:00.\n",
        );
        let hits = index(&dir).search("book meetings", 5, None);
        assert_eq!(hits[0].snippet, "- Book meetings after 10:00.");
    }

    #[test]
    fn each_directive_of_a_long_section_is_its_own_hit() {
        let dir = TempDir::new().unwrap();
        write_directives(
            dir.path(),
            &[
                "Timezone is Europe/Berlin; schedule in Central European time.",
                "Keep answers concise: bullet points, no preambles.",
                "Never book meetings before 10:00.",
                "Use metric units.",
            ],
        );
        let index = index(&dir);
        let hits = index.search("book meetings time", 5, None);
        assert_eq!(hits[0].snippet, "- Never book meetings before 10:00.");
        assert!(
            hits.iter().all(|h| h.end_line - h.start_line < 3),
            "{hits:?}"
        );
        let hits = index.search("answers", 5, None);
        assert_eq!(hits.len(), 1);
        assert_eq!(
            hits[0].snippet,
            "- Keep answers concise: bullet points, no preambles."
        );
    }

    #[test]
    fn a_section_yields_its_best_windows_by_their_score_not_their_weight() {
        // "time" is in no note, "book" and "meetings" in one note in four: a directive holding
        // "time" weighs more than one holding "book meetings" (3.1 against 2.6), but the
        // phrase, covering more of the query, scores higher (4.6 against 4.1). Picked by
        // weight, the four "time" directives took the section's four places.
        let dir = TempDir::new().unwrap();
        write_days(dir.path(), 32, |n| {
            if n % 4 == 0 {
                "- A book and two meetings."
            } else {
                "- A quiet day."
            }
            .to_owned()
        });
        write_directives(
            dir.path(),
            &[
                "Timezone is Europe/Berlin; schedule in local time.",
                "Use 24-hour time.",
                "Give travel time by train.",
                "Time reminders for the morning.",
                "Never book meetings before 10:00.",
            ],
        );
        let hits = index(&dir).search("time book meetings", 5, None);
        assert_eq!(
            hits[0].snippet, "- Never book meetings before 10:00.",
            "{hits:#?}"
        );
    }

    #[test]
    fn a_preference_question_reaches_the_directive_before_notes_naming_the_same_thing() {
        // Sixty short notes holding "remind", each a better BM25 match than the long
        // directives section: without the rule the directive lost the candidate cut.
        let dir = TempDir::new().unwrap();
        write_days(dir.path(), 60, |n| {
            format!("- Asked me to remind Sam about errand {n}.")
        });
        write_directives(
            dir.path(),
            &[
                "Keep answers concise: bullet points, no preambles.",
                "Use metric units and 24-hour times.",
                "Draft emails in a warm but brief tone.",
                "Send reminders one hour before each event, by text message.",
            ],
        );
        let index = index(&dir);
        let hits = index.search("how early should reminders go out", 5, None);
        assert_eq!(
            hits[0].snippet, "- Send reminders one hour before each event, by text message.",
            "{hits:#?}"
        );
        // Not a preference question: the notes keep their places.
        let hits = index.search("how early were reminders sent", 5, None);
        assert!(
            hits.iter().all(|h| h.path.to_string() != "USER.md"),
            "{hits:#?}"
        );
        // Switched off, nor does a preference question reach it.
        let ranking = RankOptions {
            preference_directives: false,
            ..RankOptions::default()
        };
        let hits = index_with(&dir, ranking).search("how early should reminders go out", 5, None);
        assert!(
            hits.iter().all(|h| h.path.to_string() != "USER.md"),
            "{hits:#?}"
        );
    }

    #[test]
    fn a_search_holding_little_of_the_query_returns_two_weak_guesses() {
        let dir = TempDir::new().unwrap();
        for day in 1..=6 {
            let what = if day % 2 == 0 { "ukulele" } else { "bread" };
            write(
                dir.path(),
                &format!("memory/2026-03-0{day}.md"),
                &format!("- Day {day}: bought {what}.\n"),
            );
        }
        let index = index(&dir);
        let sure = index.search("ukulele", 5, None);
        assert_eq!(sure.len(), 3);
        assert!(sure.iter().all(|h| !h.weak), "{sure:?}");
        // "saxophone" is in no note: the best hit holds half of the query, a guess.
        let guess = index.search("ukulele saxophone", 5, None);
        assert_eq!(guess.len(), 2, "{guess:?}");
        assert!(guess.iter().all(|h| h.weak), "{guess:?}");
    }

    #[test]
    fn the_end_to_end_workspace_answers_as_the_python_suite_expects() {
        // The workspace of tests/python/memory_e2e.py, checked here without the peers.
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "MEMORY.md",
            "# MEMORY.md\n\n- The user's home server is called \"bluefin\" and runs Debian 12.\n- Decision 2026-11-20: use PostgreSQL 16 for the invoicing project, not MySQL.\n",
        );
        write(
            dir.path(),
            "memory/2026-11-21.md",
            "# 2026-11-21\n\n- Debugged the tokio-tungstenite reconnect loop with the user; exponential backoff capped at 30s.\n- User mentioned they will travel to Lisbon next week.\n",
        );
        let index = index(&dir);
        let hits = index.search("PostgreSQL invoicing", 5, None);
        assert_eq!(
            (
                paths(&hits)[0].as_str(),
                hits[0].start_line,
                hits[0].end_line
            ),
            ("MEMORY.md", 4, 4)
        );
        assert_eq!(
            paths(&index.search("Lisbon backoff", 1, None)),
            ["memory/2026-11-21.md"]
        );
        assert!(index.search("kangaroo", 5, None).is_empty());
    }

    #[test]
    fn a_query_no_window_holds_enough_of_gets_weak_guesses_not_nothing() {
        let dir = TempDir::new().unwrap();
        write(
            dir.path(),
            "MEMORY.md",
            "# Facts\n\n- Travel insurance with Allianz, renewed in March.\n- Cat: Pixel.\n",
        );
        write(
            dir.path(),
            "memory/2026-11-20.md",
            "- Talked about the garden.\n- Booked the dentist.\n",
        );
        // Only "travel" is in the notes: a quarter of the query's weight, under the 30 % a hit
        // needs. The window holding it comes back as a guess, marked weak.
        let query = "when do my travel documents expire abroad";
        let hits = index(&dir).search(query, 5, None);
        assert_eq!(paths(&hits), ["MEMORY.md"]);
        assert!(hits.iter().all(|h| h.weak));
        assert!(hits[0].snippet.contains("Travel insurance"));
        let strict = index_with(
            &dir,
            RankOptions {
                guess_below_coverage: false,
                ..RankOptions::default()
            },
        );
        assert!(strict.search(query, 5, None).is_empty());
        // Words the notes never use still find nothing at all.
        assert!(index(&dir).search("kangaroo visa", 5, None).is_empty());
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
        let index = index_with(
            &dir,
            RankOptions {
                min_score: 1_000.0,
                ..RankOptions::default()
            },
        );
        assert!(index.search("quokka", 5, None).is_empty());
    }
}
