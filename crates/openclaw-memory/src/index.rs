//! The local search index over a workspace's memory files: kept fresh by comparing sizes and
//! modification times before each search (re-reading only what changed), ranked by BM25 over
//! line-ranged chunks with the boosts in [`rank`], and answered with short, quotable line
//! windows.

/// BM25 postings and scoring.
pub mod bm25;
/// Line-ranged chunking.
pub mod chunk;
/// Stemming and typo tolerance: words to terms.
pub mod lexicon;
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
use crate::index::lexicon::{Lexicon, QueryTerm};
use crate::index::rank::{
    RankOptions, coverage_factor, focus_factor, newness_factor, proximity_factor, recency_factor,
};
use crate::index::snippet::LineMatch;
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
/// Ranked candidates looked at for conflicting facts (see `newer_first_on_conflict`).
const CONFLICT_DEPTH: usize = 20;
/// Share of the older note's matched query weight a newer note must hold to be taken as its
/// replacement.
const CONFLICT_OVERLAP: f32 = 0.55;
/// How close to the older note's score a newer note on the same subject must come to be taken
/// as its replacement.
const CONFLICT_SCORE_RATIO: f32 = 0.4;
/// How much a heading line counts toward a window: it names a section, the lines under it
/// state the facts.
const HEADING_FACTOR: f32 = 0.5;
/// Weight of a query word corrected for a typo: a guess counts a little less than a match.
const CORRECTED_WEIGHT: f32 = 0.8;
/// Most hits one chunk yields: a section can hold several separate answers (the directives of
/// `USER.md`), each quoted on its own.
const WINDOWS_PER_CHUNK: usize = 4;

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
    /// The terms of every line, in order, back to back (what `locate` reads instead of
    /// re-tokenizing); line `i`'s are `terms[term_starts[i]..term_starts[i + 1]]`. One
    /// allocation per file rather than one per line.
    terms: Vec<TermId>,
    term_starts: Vec<u32>,
    /// Lines holding a fact the notes mark as replaced: superseded `USER.md` directives and
    /// struck-through text. Sorted, 0-based.
    superseded: Vec<usize>,
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
    lexicon: Lexicon,
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
            lexicon: Lexicon::new(),
            chunking: ChunkOptions::default(),
            ranking,
            bm25: Bm25Index::new(),
            files: Vec::new(),
            by_path: HashMap::new(),
            chunk_info: Vec::new(),
        }
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
        let superseded = superseded_lines(&path, &text);
        let mut file = IndexedFile {
            day: path.note_day(),
            path: path.clone(),
            stamp,
            text,
            line_starts,
            chunks: Vec::new(),
            terms: Vec::new(),
            term_starts: Vec::new(),
            superseded,
        };
        let lines: Vec<&str> = (0..file.line_count()).map(|i| file.line(i)).collect();
        let mut terms: Vec<TermId> = Vec::with_capacity(file.text.len() / 6);
        let mut term_starts: Vec<u32> = Vec::with_capacity(lines.len() + 1);
        for line in &lines {
            term_starts.push(u32::try_from(terms.len()).unwrap_or(u32::MAX));
            let (lexicon, bm25) = (&mut self.lexicon, &mut self.bm25);
            self.analyzer
                .for_each_term(line, |word| terms.push(lexicon.intern(word, bm25)));
        }
        term_starts.push(u32::try_from(terms.len()).unwrap_or(u32::MAX));
        let ranges = chunk_lines(&lines, self.chunking);
        let mut tokens: Vec<TermId> = Vec::new();
        let mut chunk_ids = Vec::with_capacity(ranges.len());
        for range in ranges {
            tokens.clear();
            tokens.extend_from_slice(
                &terms[term_starts[range.start] as usize..term_starts[range.end + 1] as usize],
            );
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
        file.terms = terms;
        file.term_starts = term_starts;
        self.files[slot] = Some(file);
        self.by_path.insert(path, slot_id);
    }

    /// The best `limit` hits for `query`. `today` (days since the epoch) feeds the optional
    /// half-life decay. Call [`Self::refresh`] first to see the latest files.
    pub fn search(&self, query: &str, limit: usize, today: Option<i64>) -> Vec<LocalHit> {
        if limit == 0 || self.bm25.is_empty() {
            return Vec::new();
        }
        let query = self.query_terms(query);
        if query.terms.is_empty() {
            return Vec::new();
        }
        let mut scores = vec![0.0_f32; self.bm25.slots()];
        let mut held = vec![0.0_f32; self.bm25.slots()];
        for term in &query.terms {
            self.bm25
                .accumulate(term.id, term.weight, &mut scores, &mut held);
        }
        // Candidates by how much of the query a chunk holds (IDF-weighted), then BM25: a long
        // section (the directives of USER.md, a curated MEMORY.md) is not passed over for
        // being long, since what gets ranked below is a few of its lines, not all of it.
        let mut candidates: Vec<(ChunkId, f32, f32)> = held
            .iter()
            .zip(&scores)
            .enumerate()
            .filter(|(_, (h, _))| **h > 0.0)
            .map(|(i, (h, s))| (ChunkId::try_from(i).unwrap_or(ChunkId::MAX), *h, *s))
            .collect();
        let by_weight = |a: &(ChunkId, f32, f32), b: &(ChunkId, f32, f32)| {
            b.1.total_cmp(&a.1).then(b.2.total_cmp(&a.2))
        };
        let keep = (limit * CANDIDATES_PER_RESULT).max(MIN_CANDIDATES);
        if candidates.len() > keep {
            candidates.select_nth_unstable_by(keep, by_weight);
            candidates.truncate(keep);
        }

        let span = self.day_span();
        let mut ranked: Vec<Ranked> = Vec::new();
        for (chunk, _, _) in candidates {
            let info = self.chunk_info[chunk as usize];
            let Some(file) = self.files[info.file as usize].as_ref() else {
                continue;
            };
            self.rank_windows(file, chunk, info.range, &query, span, today, &mut ranked);
        }
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
        self.newer_first_on_conflict(&mut ranked, &query);
        // The floor judges how well a window matches, not how old it is: an optional half-life
        // decay reorders hits but does not make old notes vanish.
        let best = ranked.iter().map(|r| r.relevance).fold(0.0_f32, f32::max);
        let best_covered = ranked.iter().map(|r| r.covered).fold(0.0_f32, f32::max);
        let floor = best * self.ranking.relative_floor;
        // When no window holds most of the query, the search is a guess: return only the few
        // best guesses instead of a page of weak ones.
        let limit = if best_covered < self.ranking.confident_coverage {
            limit.min(self.ranking.guess_limit)
        } else {
            limit
        };

        let mut hits: Vec<LocalHit> = Vec::with_capacity(limit);
        let mut repeats: Vec<LocalHit> = Vec::new();
        let mut quoted: Vec<Vec<TermId>> = Vec::with_capacity(limit);
        for r in ranked {
            if r.relevance < floor || r.score < self.ranking.min_score {
                continue;
            }
            let info = self.chunk_info[r.chunk as usize];
            let Some(file) = self.files[info.file as usize].as_ref() else {
                continue;
            };
            let window = r.window;
            let overlapping = hits.iter().chain(&repeats).any(|h| {
                h.path == file.path && h.start_line <= window.end + 1 && window.start < h.end_line
            });
            if overlapping {
                continue;
            }
            let hit = LocalHit {
                path: file.path.clone(),
                start_line: window.start + 1,
                end_line: window.end + 1,
                score: r.score,
                snippet: snippet::text(window, |i| file.line(i)),
            };
            // A routine line logged again and again ("standup: on schedule") is one answer,
            // not five: near-repeats of a hit already quoted wait until the end.
            let terms = window_terms(file, window);
            if quoted.iter().any(|q| near_repeat(q, &terms)) {
                repeats.push(hit);
                continue;
            }
            quoted.push(terms);
            hits.push(hit);
            if hits.len() == limit {
                break;
            }
        }
        let room = limit - hits.len();
        hits.extend(repeats.into_iter().take(room));
        hits
    }

    /// Ranks the best few windows of one candidate chunk (a bullet with its continuation, a
    /// short paragraph, a directive) into `out`. A window scores the query weight it holds,
    /// plus a little for query words elsewhere in its chunk (its section: the heading, the
    /// neighbouring bullets), times the boosts of [`rank`].
    #[expect(
        clippy::too_many_arguments,
        reason = "one call site; the pieces are the search's own state"
    )]
    fn rank_windows(
        &self,
        file: &IndexedFile,
        chunk: ChunkId,
        range: LineRange,
        query: &Query,
        span: Option<(i64, i64)>,
        today: Option<i64>,
        out: &mut Vec<Ranked>,
    ) {
        let masks = locate(file, range, &query.terms);
        let lines = self.line_matches(file, range, &masks);
        let weights: Vec<f32> = query.terms.iter().map(|t| t.idf).collect();
        let whole = snippet::window_value(&lines, &weights);
        // No window holds more than the whole chunk.
        if whole < self.ranking.min_coverage * query.total_idf {
            return;
        }
        let newness = newness_factor(&self.ranking, file.day, span);
        let decay = recency_factor(&self.ranking, file.day, today);
        let mut used = vec![false; lines.len()];
        for _ in 0..WINDOWS_PER_CHUNK {
            let Some((start, end)) =
                snippet::best_unit(&lines, &weights, &used, snippet::UNIT_LINES)
            else {
                break;
            };
            used[start..=end].fill(true);
            let held = &lines[start..=end];
            let value = snippet::window_value(held, &weights);
            let raw = value + self.ranking.context_weight * (whole - value);
            let covered = (raw / query.total_idf).min(1.0);
            if covered < self.ranking.min_coverage {
                continue;
            }
            let (first, last) = (range.start + start, range.start + end);
            let present = positions_in(file, first, last, &query.terms);
            // Every matching line of the window holds a replaced fact.
            let replaced = !file.superseded.is_empty()
                && (first..=last)
                    .filter(|&i| lines[i - range.start].mask != 0)
                    .all(|i| file.superseded.binary_search(&i).is_ok());
            let superseded = if replaced {
                self.ranking.superseded_factor
            } else {
                1.0
            };
            let terms = file.term_starts[last + 1] - file.term_starts[first];
            let relevance = raw
                * coverage_factor(&self.ranking, covered)
                * proximity_factor(&self.ranking, &present)
                * focus_factor(&self.ranking, terms as usize)
                * newness
                * superseded;
            let window = snippet::quoted(
                LineRange {
                    start: first,
                    end: last,
                },
                range,
                |i| file.line(i),
            );
            out.push(Ranked {
                chunk,
                window,
                score: relevance * decay,
                relevance,
                covered,
                lines: held.to_vec(),
            });
        }
    }

    /// The query's distinct terms with their weights, and the total IDF of every query word
    /// (words the notes never use count as the rarest word they do use, so a chunk matching
    /// only the common half of a query does not pass the coverage floor).
    fn query_terms(&self, query: &str) -> Query {
        let mut words: Vec<String> = Vec::new();
        for word in self.analyzer.terms(query) {
            if !words.contains(&word) && words.len() < MAX_QUERY_TERMS {
                words.push(word);
            }
        }
        let unseen_idf = self.bm25.unseen_idf();
        let mut terms: Vec<Term> = Vec::new();
        let mut total_idf = 0.0;
        for word in &words {
            let (id, weight) = match self.lexicon.lookup(word, &self.bm25) {
                QueryTerm::Known(id) => (id, 1.0),
                QueryTerm::Corrected(id) => (id, CORRECTED_WEIGHT),
                QueryTerm::Unknown => {
                    total_idf += unseen_idf;
                    continue;
                }
            };
            if terms.iter().any(|t| t.id == id) {
                continue;
            }
            let idf = self.bm25.idf(id) * weight;
            total_idf += idf;
            terms.push(Term { id, weight, idf });
        }
        Query {
            terms,
            total_idf: total_idf.max(f32::MIN_POSITIVE),
        }
    }

    /// When a newer note (or a curated file) states something about the same thing as an older
    /// note ranked above it — the same most telling query word — and scores nearly as well, it
    /// is the current fact: it moves above the older one. This is what settles "which is
    /// current" without a decay that would bury year-old notes.
    fn newer_first_on_conflict(&self, ranked: &mut [Ranked], query: &Query) {
        let key = |lines: &[LineMatch]| -> Option<usize> {
            let mask = lines
                .iter()
                .filter(|l| l.factor >= 1.0)
                .fold(0_u64, |acc, l| acc | l.mask);
            (0..query.terms.len())
                .filter(|q| mask & (1 << q) != 0)
                .max_by(|a, b| query.terms[*a].idf.total_cmp(&query.terms[*b].idf))
        };
        let age = |chunk: ChunkId| -> i64 {
            let file = self.chunk_info[chunk as usize].file;
            // Curated files (MEMORY.md, USER.md) hold the current state: newest of all.
            self.files[file as usize]
                .as_ref()
                .and_then(|f| f.day)
                .unwrap_or(i64::MAX)
        };
        let idf_of = |mask: u64| -> f32 {
            query
                .terms
                .iter()
                .enumerate()
                .filter(|(q, _)| mask & (1 << q) != 0)
                .map(|(_, t)| t.idf)
                .sum()
        };
        let considered = ranked.len().min(CONFLICT_DEPTH);
        for j in 1..considered {
            let mut at = j;
            while at > 0 {
                let (older, newer) = (&ranked[at - 1], &ranked[at]);
                // The newer chunk must hold most of what the older one matched (by IDF): a
                // note that merely shares one word ("invoices" beside "invoicing PostgreSQL")
                // is not a replacement.
                let (old_mask, new_mask) = (chunk_mask(&older.lines), chunk_mask(&newer.lines));
                let covers = idf_of(old_mask & new_mask) >= idf_of(old_mask) * CONFLICT_OVERLAP;
                let same_subject =
                    covers && key(&older.lines).is_some() && key(&older.lines) == key(&newer.lines);
                let close = newer.relevance >= older.relevance * CONFLICT_SCORE_RATIO;
                if !(same_subject && close && age(newer.chunk) > age(older.chunk)) {
                    break;
                }
                ranked.swap(at - 1, at);
                at -= 1;
            }
        }
    }

    /// Each line of a chunk with its query terms and how much it counts.
    fn line_matches(&self, file: &IndexedFile, range: LineRange, masks: &[u64]) -> Vec<LineMatch> {
        masks
            .iter()
            .enumerate()
            .map(|(offset, &mask)| {
                let i = range.start + offset;
                let factor = if file.superseded.binary_search(&i).is_ok() {
                    self.ranking.superseded_factor
                } else if file.line(i).trim_start().starts_with('#') {
                    HEADING_FACTOR
                } else {
                    1.0
                };
                LineMatch { mask, factor }
            })
            .collect()
    }

    /// The first and last dated note's day, if any note is dated.
    fn day_span(&self) -> Option<(i64, i64)> {
        let mut days = self.files.iter().flatten().filter_map(|f| f.day);
        let first = days.next()?;
        Some(days.fold((first, first), |(lo, hi), d| (lo.min(d), hi.max(d))))
    }
}

/// A candidate hit: a few lines of one chunk with their score (`relevance` before the
/// optional half-life decay) and the share of the query they hold.
#[derive(Debug)]
struct Ranked {
    chunk: ChunkId,
    /// The lines to quote (0-based, absolute).
    window: LineRange,
    score: f32,
    relevance: f32,
    covered: f32,
    /// The window's lines with their query terms.
    lines: Vec<LineMatch>,
}

/// A query term matched to the index.
#[derive(Debug, Clone, Copy)]
struct Term {
    id: TermId,
    /// 1, or less for a typo correction (a guess).
    weight: f32,
    /// Its IDF times its weight.
    idf: f32,
}

#[derive(Debug)]
struct Query {
    terms: Vec<Term>,
    total_idf: f32,
}

/// Per line of the chunk, a bit mask of the query terms it holds.
fn locate(file: &IndexedFile, range: LineRange, terms: &[Term]) -> Vec<u64> {
    (range.start..=range.end)
        .map(|i| {
            let line = &file.terms[file.term_starts[i] as usize..file.term_starts[i + 1] as usize];
            line.iter().fold(0_u64, |mask, id| {
                terms
                    .iter()
                    .position(|t| t.id == *id)
                    .map_or(mask, |q| mask | (1 << q))
            })
        })
        .collect()
}

/// The query terms anywhere in a chunk.
fn chunk_mask(lines: &[LineMatch]) -> u64 {
    lines.iter().fold(0, |acc, l| acc | l.mask)
}

/// Positions (token offsets from the window's first term) of each query term found in lines
/// `start..=end` of a file, skipping the terms the window lacks.
fn positions_in(file: &IndexedFile, start: usize, end: usize, terms: &[Term]) -> Vec<Vec<usize>> {
    let first = file.term_starts[start] as usize;
    let last = file.term_starts[end + 1] as usize;
    let mut positions = vec![Vec::new(); terms.len()];
    for (pos, id) in file.terms[first..last].iter().enumerate() {
        if let Some(q) = terms.iter().position(|t| t.id == *id) {
            positions[q].push(pos);
        }
    }
    positions.retain(|p| !p.is_empty());
    positions
}

/// The distinct terms of a quoted window, sorted (for spotting near-repeats).
fn window_terms(file: &IndexedFile, window: LineRange) -> Vec<TermId> {
    let first = file.term_starts[window.start] as usize;
    let last = file.term_starts[window.end + 1] as usize;
    let mut terms = file.terms[first..last].to_vec();
    terms.sort_unstable();
    terms.dedup();
    terms
}

/// Share of distinct terms two windows must have in common (Jaccard) to be the same routine
/// line logged twice ("Reminder set for Noor's dentist appointment" and the same for Luis
/// share 5 of 7). Two versions of a changed fact share far less: the new value is the point.
const REPEAT_SIMILARITY: f32 = 0.6;

/// Whether two sorted term sets are near-repeats (see [`REPEAT_SIMILARITY`]).
#[expect(
    clippy::cast_precision_loss,
    reason = "term counts of a few lines are tiny"
)]
fn near_repeat(a: &[TermId], b: &[TermId]) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let (mut i, mut j, mut common) = (0, 0, 0_usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    common as f32 >= REPEAT_SIMILARITY * union as f32
}

/// The lines of a file that hold replaced facts: in `USER.md` files, the superseded directives
/// (their bullet and continuation lines); anywhere, lines with struck-through text (`~~…~~`).
fn superseded_lines(path: &MemoryPath, text: &str) -> Vec<usize> {
    let mut lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| line.matches("~~").count() >= 2)
        .map(|(i, _)| i)
        .collect();
    if path.is_user_file() {
        let all: Vec<&str> = text.lines().collect();
        for directive in crate::prefs::parse(text).superseded {
            // `line` is 1-based; the directive runs until a blank line or the next bullet.
            let first = directive.line.saturating_sub(1);
            lines.push(first);
            for (i, line) in all.iter().enumerate().skip(first + 1) {
                let t = line.trim_start();
                if t.is_empty() || t.starts_with(['-', '*', '+', '#', '<']) {
                    break;
                }
                lines.push(i);
            }
        }
    }
    lines.sort_unstable();
    lines.dedup();
    lines
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
        let mut text = String::from("# USER.md - User Model\n\n## Directives\n\n");
        for rule in [
            "Timezone is Europe/Berlin; schedule in Central European time.",
            "Keep answers concise: bullet points, no preambles.",
            "Never book meetings before 10:00.",
            "Use metric units.",
        ] {
            writeln!(
                text,
                "<!-- observed: 2026-01-01 | status: active -->\n\n- {rule}\n"
            )
            .unwrap();
        }
        write(dir.path(), "USER.md", &text);
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
    fn a_routine_line_logged_every_day_does_not_crowd_out_the_answer() {
        let dir = TempDir::new().unwrap();
        for (day, name) in ["Noor", "Luis", "Dev", "Ingrid", "Tariq"]
            .iter()
            .enumerate()
        {
            write(
                dir.path(),
                &format!("memory/2026-02-0{}.md", day + 1),
                &format!("- Reminder set for {name}'s dentist appointment (not Maya's).\n"),
            );
        }
        write(
            dir.path(),
            "memory/2025-11-06.md",
            "- Dentist: Dr. Chidi Okafor at Lakeside Dental.\n",
        );
        // The assistant names its user all the time: "Maya" is a common word.
        for day in 10..30 {
            write(
                dir.path(),
                &format!("memory/2026-01-{day}.md"),
                "- Maya asked for the weather.\n",
            );
        }
        let hits = index(&dir).search("Maya's dentist", 5, None);
        assert!(
            paths(&hits)[..2].contains(&"memory/2025-11-06.md".to_owned()),
            "{hits:?}"
        );
    }

    #[test]
    fn near_repeats_share_most_of_their_words() {
        assert!(near_repeat(&[1, 2, 3, 4, 5], &[1, 2, 3, 4, 6]));
        assert!(!near_repeat(&[1, 2, 3, 4, 5], &[1, 2, 6, 7, 8]));
        assert!(!near_repeat(&[], &[1]));
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
