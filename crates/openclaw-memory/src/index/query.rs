//! Answering one query: the query's terms and weights, BM25 candidates, each candidate's
//! best few line windows scored by the query weight they hold, how much of the query they
//! cover and how close together its words stand, statements of the same subject newest first
//! ([`current`](super::current)), a `MEMORY.md` window after the note it restates
//! ([`source`](super::source)), the score floors, weak guesses, the notes that record a
//! change a curated hit missed ([`change`](super::change)), and a short confident page given
//! the best note naming its answer ([`follow`](super::follow)).

use crate::index::bm25::{ChunkId, TermId};
use crate::index::chunk::LineRange;
use crate::index::current::{self, Fact};
use crate::index::cut;
use crate::index::lexicon::QueryTerm;
use crate::index::rank::{coverage_factor, most_proximity, proximity_factor, recency_factor};
use crate::index::snippet::{self, LineMatch};
use crate::index::source::{self, Statement};
use crate::index::{IndexedFile, LocalHit, MemoryIndex};
use crate::paths::MemoryPath;

/// Candidates re-ranked per result slot: BM25 picks `limit × this` (at least
/// [`MIN_CANDIDATES`]) for the costlier boosts, which only reorder near neighbours.
const CANDIDATES_PER_RESULT: usize = 10;
/// Fewest candidates re-ranked, so small limits still see enough alternatives.
const MIN_CANDIDATES: usize = 50;
/// Most distinct query terms considered; a pasted paragraph is not a query.
pub(super) const MAX_QUERY_TERMS: usize = 32;
/// Ranked windows looked at for statements of the same subject: the two pages' worth of
/// windows any reordering could bring onto the first page (`limit` is 5 by default).
pub(super) const CURRENT_DEPTH: usize = 20;
/// Weight of a query word corrected for a typo: a guess counts a little less than a match.
const CORRECTED_WEIGHT: f32 = 0.8;
/// Most hits one chunk yields: a section can hold several separate answers (the directives of
/// `USER.md`), each quoted on its own.
const WINDOWS_PER_CHUNK: usize = 4;

impl MemoryIndex {
    /// The best `limit` hits for `query`. `today` (days since the epoch) feeds the optional
    /// half-life decay. Call [`Self::refresh`] first to see the latest files.
    pub fn search(&self, query: &str, limit: usize, today: Option<i64>) -> Vec<LocalHit> {
        let min_coverage = self.ranking.min_coverage;
        let hits = self.search_with(query, limit, today, min_coverage, false);
        // Nothing holds enough of the query to be a hit, and nothing is close in meaning: the
        // windows holding less are a guess worth showing (at most `guess_limit`, marked weak)
        // rather than an empty page. ("Until what date are her travel documents valid?" holds
        // only "travel" in the note that answers it, 22 % of the query's weight.)
        if hits.is_empty() && self.ranking.guess_below_coverage && min_coverage > 0.0 {
            let guess = limit.min(self.ranking.guess_limit);
            let mut guesses = self.search_with(query, guess, today, 0.0, true);
            for hit in &mut guesses {
                hit.weak = true;
            }
            return guesses;
        }
        hits
    }

    /// [`Self::search`] with windows holding less than `min_coverage` of the query's weight
    /// left out; `guessing` when the caller marks every hit weak (a guess is never followed).
    fn search_with(
        &self,
        query: &str,
        limit: usize,
        today: Option<i64>,
        min_coverage: f32,
        guessing: bool,
    ) -> Vec<LocalHit> {
        if limit == 0 || self.bm25.is_empty() {
            return Vec::new();
        }
        let words = self.analyzer.terms(query);
        let query = self.query_terms(query);
        // No word of the query is in the notes: only meaning can find something.
        if query.terms.is_empty()
            && (self.vectors.is_none() || self.ranking.meaning_similarity.is_none())
        {
            return Vec::new();
        }
        let search = Search {
            index: self,
            query,
            today,
            words,
            min_coverage,
        };
        let mut ranked = search.ranked(limit);
        // The floor judges how well a window matches, not how old it is: an optional half-life
        // decay reorders hits but does not make old notes vanish.
        let best = ranked.iter().map(|r| r.relevance).fold(0.0_f32, f32::max);
        // Confidence is judged on a hit's section, not its few quoted lines: a note holding the
        // whole query in two far-apart bullets answers it. (Judged on the lines, both labelled
        // sets score the same, but such a hit was marked weak.)
        let total = search.query.total_idf;
        let best_covered = ranked
            .iter()
            .map(|r| (r.held / total).min(1.0))
            .fold(0.0_f32, f32::max);
        // The floors come before the current-fact groups: a window too weak to be a hit takes
        // no place in a group. (After them, a newer note naming the subject only in passing
        // took the group's first place and was then dropped by the floor, and the statement it
        // displaced fell off the page: "Which bank is Maya's checking account with?")
        let floor = best * self.ranking.relative_floor;
        ranked.retain(|r| r.relevance >= floor && r.score >= self.ranking.min_score);
        // A question about what the user wants done ("how early should reminders go out") is
        // answered by a `USER.md` directive before a note that names the same thing;
        // among directives, the current-fact groups then put a superseded one last. (The lines
        // close in meaning put `USER.md` first too, among those close enough to be quoted:
        // `closest_lines`.)
        if search.query.preference {
            ranked.sort_by_key(|r| !self.in_directives(r.chunk));
        }
        if self.ranking.current_facts {
            ranked = self.current_first(ranked, &search.query);
        }
        if self.ranking.source_notes_first {
            ranked = self.sources_first(ranked, &search.query);
        }
        // When no section holds most of the query, the search is a guess: return only the few
        // best guesses, marked weak, instead of a page of them.
        let weak = best_covered < self.ranking.confident_coverage;
        let limit = if weak {
            limit.min(self.ranking.guess_limit)
        } else {
            limit
        };

        let mut hits: Vec<LocalHit> = Vec::with_capacity(limit);
        // A guess: the lines closest in meaning take turns with the best windows of the words,
        // when an embedding model is in use.
        let mut close = match self.ranking.meaning_similarity {
            Some(least) if weak => self
                .closest_lines(&search.words, least, limit, search.query.preference)
                .into_iter()
                .filter_map(|close| self.close_hit(close))
                .collect(),
            _ => Vec::new(),
        };
        close.reverse();
        for r in ranked {
            if hits.len() == limit {
                break;
            }
            let Some(file) = self.chunk_file(r.chunk) else {
                continue;
            };
            if on_page(&hits, &file.path, r.window) {
                continue;
            }
            let focus = self.focus(file, r.window, &search.query.terms);
            let hit = window_hit(file, r.window, r.score, weak, focus);
            if self.ranking.distinct_quotes && quoted(&hits, &hit) {
                continue;
            }
            hits.push(hit);
            take_turn(
                &mut hits,
                &mut close,
                limit,
                1,
                self.ranking.distinct_quotes,
            );
            if hits.len() == limit {
                break;
            }
        }
        take_turn(
            &mut hits,
            &mut close,
            limit,
            limit,
            self.ranking.distinct_quotes,
        );
        if self.ranking.recorded_changes {
            hits = self.changes_first(hits, limit);
        }
        // Only a page as short as a guess's: the search found one or two statements, and
        // what the first names is the rest of the answer. A longer page already holds
        // alternatives (a no-answer query holding every word of a note got 3 confident hits on
        // the changes set; followed, it would have had 4).
        if self.ranking.follow_answer
            && !weak
            && !guessing
            && hits.len() < limit
            && hits.len() <= self.ranking.guess_limit
        {
            self.follow_answer(&mut hits, &search.query, limit, today);
        }
        hits
    }

    /// Statements of the same subject among the first [`CURRENT_DEPTH`] windows, newest first
    /// ([`current`]); the windows past them keep their places.
    fn current_first(&self, mut ranked: Vec<Ranked>, query: &Query) -> Vec<Ranked> {
        let terms = &query.terms;
        let idf = |mask: u64| -> f32 {
            (0..terms.len())
                .filter(|q| mask & (1 << q) != 0)
                .map(|q| terms[q].idf)
                .sum()
        };
        // A lookup names a statement by its words: one whose section holds most of them is
        // not displaced by a newer one holding less ("switched Luis" names "Luis switched
        // banks", not "Tariq switched banks" of a later note). Holding less means less of the
        // query's weight, not fewer of its words: "Maya manager" asks who her manager is now,
        // and "Manager: Priya" holds most of that query without the common "Maya". A question
        // asks what is true now, and the newer statement may word it differently ("The user
        // switched to a Pixel 9" answers "What phone does Maya have?" over "Maya's phone is an
        // iPhone 12"). Nor is a lookup's statement displaced by a newer note telling the same
        // thing of another name ("amara charger spare": Amara's laptop and spare charger, not
        // Jonas's a month later; see `retold`).
        let keep = self.ranking.lookups_keep_matches && !query.question;
        let answers = |f: &Fact| idf(f.terms) >= self.ranking.confident_coverage * query.total_idf;
        let rest = ranked.split_off(ranked.len().min(CURRENT_DEPTH));
        ranked = current::newest_first(
            ranked,
            |r| self.fact(r, query),
            |(ra, a), (rb, b)| {
                current::same_subject(a, b, idf)
                    && !(keep && (answers(a) && !answers(b) || self.retold(ra, rb, terms)))
            },
        );
        ranked.extend(rest);
        ranked
    }

    /// Among the first [`CURRENT_DEPTH`] windows, each `MEMORY.md` one right after a note
    /// restating it, when that note is the newest statement of those query words ([`source`]);
    /// the windows past them keep their places.
    fn sources_first(&self, mut ranked: Vec<Ranked>, query: &Query) -> Vec<Ranked> {
        let file = |r: &Ranked| self.chunk_file(r.chunk);
        let depth = ranked.len().min(CURRENT_DEPTH);
        if !ranked[..depth]
            .iter()
            .any(|r| file(r).is_some_and(|f| f.path.is_memory_file()))
        {
            return ranked;
        }
        let rest = ranked.split_off(depth);
        let terms: Vec<TermId> = query.terms.iter().map(|t| t.id).collect();
        let statement = |r: &Ranked| {
            let file = file(r);
            Statement {
                summary: file.is_some_and(|f| f.path.is_memory_file()),
                day: file.and_then(|f| f.day),
                replaced: r.replaced,
                lines: (r.window.start..=r.window.end)
                    .map(|line| {
                        file.map(|f| distinct_terms(f, line, line))
                            .unwrap_or_default()
                    })
                    .collect(),
            }
        };
        // A curated line the notes record as changed is stale, and so is its source.
        let changed = |r: &Ranked| {
            self.ranking.recorded_changes
                && file(r).is_some_and(|f| self.records_change(f, r.window.start, r.window.end))
        };
        let mut ranked = source::sources_first(ranked, &terms, statement, changed);
        ranked.extend(rest);
        ranked
    }

    /// The chunks worth ranking windows of: by how much of the query a chunk holds
    /// (IDF-weighted), then BM25. A long section (the directives of USER.md, a curated
    /// MEMORY.md) is not passed over for being long, since what gets ranked is a few of its
    /// lines, not all of it.
    fn candidates(&self, query: &Query, limit: usize) -> Vec<(ChunkId, f32, f32)> {
        let mut scores = vec![0.0_f32; self.bm25.slots()];
        let mut held = vec![0.0_f32; self.bm25.slots()];
        for term in &query.terms {
            self.bm25
                .accumulate(term.id, term.weight, &mut scores, &mut held);
        }
        let mut candidates: Vec<(ChunkId, f32, f32)> = held
            .iter()
            .zip(&scores)
            .enumerate()
            .filter(|(_, (h, _))| **h > 0.0)
            .map(|(i, (h, s))| (ChunkId::try_from(i).unwrap_or(ChunkId::MAX), *h, *s))
            .collect();
        // Exact ties at the cut are kept in workspace order, as the page orders them
        // (`ranked`).
        let by_weight = |a: &(ChunkId, f32, f32), b: &(ChunkId, f32, f32)| {
            b.1.total_cmp(&a.1).then(b.2.total_cmp(&a.2))
        };
        let keep = (limit * CANDIDATES_PER_RESULT).max(MIN_CANDIDATES);
        if candidates.len() > keep {
            // A long `USER.md` section loses the cut to every short note holding as much of
            // the query; a preference question keeps it (see `search_with`).
            let directives: Vec<(ChunkId, f32, f32)> = if query.preference {
                candidates
                    .iter()
                    .filter(|c| self.in_directives(c.0))
                    .copied()
                    .collect()
            } else {
                Vec::new()
            };
            cut::keep_best(&mut candidates, keep, by_weight, |c| self.chunk_place(c.0));
            for directive in directives {
                if !candidates.iter().any(|c| c.0 == directive.0) {
                    candidates.push(directive);
                }
            }
        }

        candidates
    }

    /// The file a chunk is in (`None` once the file is gone).
    pub(super) fn chunk_file(&self, chunk: ChunkId) -> Option<&IndexedFile> {
        let info = self.chunk_info[chunk as usize];
        self.files[info.file as usize].as_ref()
    }

    /// Where a chunk stands in the workspace: its file's path and first line. Exact ties are
    /// ordered by it, which is the order a fresh build gives chunk ids; the ids themselves,
    /// after a note is edited, are newer than its neighbours', and the same workspace would
    /// rank its ties one way in an index that has seen edits and another in a fresh build.
    pub(super) fn chunk_place(&self, chunk: ChunkId) -> Option<(&MemoryPath, usize)> {
        let start = self.chunk_info[chunk as usize].range.start;
        self.chunk_file(chunk).map(|file| (&file.path, start))
    }

    /// Whether a chunk is part of a `USER.md`, the file of the user's directives.
    fn in_directives(&self, chunk: ChunkId) -> bool {
        self.chunk_file(chunk)
            .is_some_and(|f| f.path.is_user_file())
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
            let lookup = self
                .lexicon
                .lookup(word, &self.bm25, self.ranking.typo_tolerance);
            let (id, weight) = match lookup {
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
            question: is_question(query),
            preference: self.ranking.preference_directives && is_preference(query),
        }
    }

    /// Whether two windows tell the same thing of different query words: more than half of
    /// their distinct terms are the same, and the query terms they hold are not. Notes repeat
    /// a sentence with one name swapped ("Amara's laptop died during the demo; lent a spare
    /// charger", then Jonas's), and the newer one is not a newer statement of the older's
    /// subject. A changed fact is worded anew ("Maya's manager is Tom Reyes", then "Reorg: her
    /// manager is now Priya Natarajan") and shares few terms.
    fn retold(&self, a: &Ranked, b: &Ranked, terms: &[Term]) -> bool {
        let distinct = |r: &Ranked| -> Vec<TermId> {
            self.chunk_file(r.chunk)
                .map(|file| distinct_terms(file, r.window.start, r.window.end))
                .unwrap_or_default()
        };
        let (a, b) = (distinct(a), distinct(b));
        let holds = |ids: &[TermId], t: &Term| ids.binary_search(&t.id).is_ok();
        if terms.iter().all(|t| holds(&a, t) == holds(&b, t)) {
            return false;
        }
        let shared = a.iter().filter(|id| b.binary_search(id).is_ok()).count();
        let all = a.len() + b.len() - shared;
        // More than half: the majority the current-fact groups ask of shared query weight.
        2 * shared > all
    }

    /// What the current-fact groups need to know of a ranked window.
    fn fact(&self, r: &Ranked, query: &Query) -> Fact {
        // The words the window's section holds (its heading and neighbours, not just its lines:
        // "invoicing PostgreSQL" far apart in one note is not the same statement as a newer
        // note naming only PostgreSQL). The key is the most telling of them (highest IDF):
        // "Who is Maya's manager?" groups "Manager: Priya" with "Maya's manager is Tom", not
        // every note naming Maya.
        let mask = r.section;
        let key = (0..query.terms.len())
            .filter(|q| mask & (1 << q) != 0)
            .max_by(|a, b| query.terms[*a].idf.total_cmp(&query.terms[*b].idf));
        let file = self.chunk_file(r.chunk);
        Fact {
            subject: key.map_or(0, |q| 1 << q),
            terms: mask,
            // Undated files (MEMORY.md, USER.md, notes named without a date) have none.
            day: file.and_then(|f| f.day),
            time: file.and_then(|f| f.time),
            replaced: r.replaced,
        }
    }
}

/// One search in progress: the index, the query, and what every window is scored against.
pub(super) struct Search<'a> {
    pub(super) index: &'a MemoryIndex,
    pub(super) query: Query,
    /// Today, for the optional half-life decay.
    pub(super) today: Option<i64>,
    /// The query's words as the analyzer sees them (not stemmed), for its meaning.
    pub(super) words: Vec<String>,
    /// Share of the query's weight a window must hold to be ranked.
    pub(super) min_coverage: f32,
}

impl Search<'_> {
    /// The windows of the query's candidate chunks (see [`MemoryIndex::candidates`]), best
    /// first. Equal windows (the same query words) are ordered by their chunk: the section
    /// holding more of the query (by IDF) around them first. (The chunk's BM25 instead
    /// measured 0.011 nDCG@5 lower on the tuned set and 0.010 on the held-out set.) Windows
    /// equal in both come in workspace order ([`MemoryIndex::chunk_place`]).
    pub(super) fn ranked(&self, limit: usize) -> Vec<Ranked> {
        let index = self.index;
        let mut ranked: Vec<Ranked> = Vec::new();
        for (chunk, held, _) in index.candidates(&self.query, limit) {
            let Some(file) = index.chunk_file(chunk) else {
                continue;
            };
            let range = index.chunk_info[chunk as usize].range;
            self.rank_windows(file, chunk, range, held, &mut ranked);
        }
        ranked.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.held.total_cmp(&a.held))
                .then_with(|| {
                    if a.chunk == b.chunk {
                        a.window.start.cmp(&b.window.start)
                    } else {
                        index.chunk_place(a.chunk).cmp(&index.chunk_place(b.chunk))
                    }
                })
        });
        ranked
    }

    /// Ranks the best few windows of one candidate chunk (a bullet with its continuation, a
    /// short paragraph, a directive) into `out`. A window scores the query weight (IDF) it
    /// holds; its chunk's query weight `held` breaks ties.
    fn rank_windows(
        &self,
        file: &IndexedFile,
        chunk: ChunkId,
        range: LineRange,
        held: f32,
        out: &mut Vec<Ranked>,
    ) {
        let (query, ranking) = (&self.query, &self.index.ranking);
        let mut lines: Vec<LineMatch> = locate(file, range, &query.terms)
            .into_iter()
            .map(|mask| LineMatch {
                mask,
                factor: 1.0,
                heading: false,
            })
            .collect();
        // Headings end windows: only those a window could run on into (a line or two after a
        // line holding a query word) are looked up, so a search reads little of the text.
        let mut last_match: Option<usize> = None;
        for (at, line) in (range.start..).zip(lines.iter_mut()) {
            if last_match.is_some_and(|m| at - m < snippet::UNIT_LINES) {
                line.heading = file.is_heading(at);
            }
            if line.mask != 0 {
                last_match = Some(at);
            }
        }
        let weights: Vec<f32> = query.terms.iter().map(|t| t.idf).collect();
        // No window holds more than the whole chunk.
        if snippet::window_value(&lines, &weights) < self.min_coverage * query.total_idf {
            return;
        }
        let section = chunk_mask(&lines);
        let decay = recency_factor(ranking, file.day, self.today);
        // A chunk yields its best few windows by the score they are ranked by, which also
        // counts how much of the query a window covers and how close its words stand. (Picked
        // by weight alone, three directives holding the query's rarest word took the places of
        // both holding its two other words side by side: "earliest time to book meetings".)
        // The windows come heaviest first: one that could not beat the few best even with its
        // words side by side is passed over unread (equal windows keep the earlier ones).
        let mut best: Vec<(f32, usize, usize)> = Vec::with_capacity(WINDOWS_PER_CHUNK + 1);
        let mut positions: Vec<Vec<usize>> = Vec::new();
        for (value, start, end) in snippet::units(&lines, &weights, snippet::UNIT_LINES) {
            let covered = (value / query.total_idf).min(1.0);
            if covered < self.min_coverage {
                break;
            }
            let boosted = value * coverage_factor(ranking, covered);
            if best.len() == WINDOWS_PER_CHUNK {
                let mask = lines[start..=end].iter().fold(0, |m, l| m | l.mask);
                if boosted * most_proximity(ranking, mask.count_ones())
                    <= best[WINDOWS_PER_CHUNK - 1].0
                {
                    continue;
                }
            }
            let (first, last) = (range.start + start, range.start + end);
            positions_in(file, first, last, &query.terms, &mut positions);
            let relevance = boosted * proximity_factor(ranking, &positions);
            let at = best.partition_point(|&(kept, _, _)| kept >= relevance);
            best.insert(at, (relevance, first, last));
            best.truncate(WINDOWS_PER_CHUNK);
        }
        for (relevance, first, last) in best {
            // Every matching line of the window holds a replaced fact.
            let replaced = !file.superseded.is_empty()
                && (first..=last)
                    .filter(|&i| lines[i - range.start].mask != 0)
                    .all(|i| file.superseded.binary_search(&i).is_ok());
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
                held,
                replaced,
                section,
            });
        }
    }
}

/// The hit quoting lines `window` (0-based) of `file`; `focus` as [`snippet::text`] takes it.
pub(super) fn window_hit(
    file: &IndexedFile,
    window: LineRange,
    score: f32,
    weak: bool,
    focus: Option<usize>,
) -> LocalHit {
    LocalHit {
        path: file.path.clone(),
        start_line: window.start + 1,
        end_line: window.end + 1,
        score,
        weak,
        snippet: snippet::text(window, |i| file.line(i), focus),
    }
}

impl MemoryIndex {
    /// Where the first word of lines `window` (0-based) of `file` holding one of `terms`
    /// starts, as a byte offset into the lines joined by line breaks: what a long hit's quote
    /// is centred on ([`snippet::text`]). `None` when the text is quoted whole anyway.
    pub(super) fn focus(
        &self,
        file: &IndexedFile,
        window: LineRange,
        terms: &[Term],
    ) -> Option<usize> {
        let joined: usize = (window.start..=window.end)
            .map(|i| file.line(i).len() + 1)
            .sum();
        if joined <= snippet::MAX_CHARS + 1 {
            return None;
        }
        let mut offset = 0;
        for i in window.start..=window.end {
            let asked = file_terms(file, i, i)
                .iter()
                .position(|id| terms.iter().any(|t| t.id == *id));
            if let Some(nth) = asked {
                return self.term_at(file, i, nth).map(|at| offset + at);
            }
            offset += file.line(i).len() + 1;
        }
        None
    }

    /// Where the `nth` term of line `line` (0-based) of `file` starts in the line, in bytes.
    pub(super) fn term_at(&self, file: &IndexedFile, line: usize, nth: usize) -> Option<usize> {
        // The line's terms are its analysed words, one for one and in order.
        let (mut at, mut seen) = (None, 0);
        self.analyzer.for_each_term_at(file.line(line), |_, start| {
            if seen == nth {
                at = Some(start);
            }
            seen += 1;
        });
        at
    }
}

/// Whether lines `window` (0-based) of the file at `path` overlap a hit of `hits`.
pub(super) fn on_page(hits: &[LocalHit], path: &MemoryPath, window: LineRange) -> bool {
    hits.iter()
        .any(|h| h.path == *path && h.start_line <= window.end + 1 && window.start < h.end_line)
}

/// Whether a hit on the page quotes exactly what `hit` quotes (surrounding whitespace aside).
pub(super) fn quoted(hits: &[LocalHit], hit: &LocalHit) -> bool {
    let text = hit.snippet.trim();
    hits.iter().any(|h| h.snippet.trim() == text)
}

/// Moves up to `turns` hits from the end of `waiting` to `hits` (up to `limit`), skipping
/// those overlapping a hit already there and, when `distinct`, those quoting what one there
/// quotes.
fn take_turn(
    hits: &mut Vec<LocalHit>,
    waiting: &mut Vec<LocalHit>,
    limit: usize,
    turns: usize,
    distinct: bool,
) {
    let mut taken = 0;
    while taken < turns && hits.len() < limit {
        let Some(next) = waiting.pop() else { break };
        let overlapping = hits.iter().any(|h| {
            h.path == next.path
                && h.start_line <= next.end_line + 1
                && next.start_line <= h.end_line + 1
        });
        if !(overlapping || distinct && quoted(hits, &next)) {
            hits.push(next);
            taken += 1;
        }
    }
}

/// A candidate hit: a few lines of one chunk with their score (`relevance` before the
/// optional half-life decay) and what its section holds of the query.
#[derive(Debug)]
pub(super) struct Ranked {
    pub(super) chunk: ChunkId,
    /// The lines to quote (0-based, absolute).
    pub(super) window: LineRange,
    pub(super) score: f32,
    pub(super) relevance: f32,
    /// Its chunk's query weight (IDF held): it breaks ties and says whether the search is a
    /// guess.
    pub(super) held: f32,
    /// Every matching line holds a replaced fact.
    pub(super) replaced: bool,
    /// The query terms anywhere in the window's chunk (its section).
    pub(super) section: u64,
}

/// A query term matched to the index.
#[derive(Debug, Clone, Copy)]
pub(super) struct Term {
    pub(super) id: TermId,
    /// 1, or less for a typo correction (a guess).
    pub(super) weight: f32,
    /// Its IDF times its weight.
    pub(super) idf: f32,
}

#[derive(Debug)]
pub(super) struct Query {
    pub(super) terms: Vec<Term>,
    pub(super) total_idf: f32,
    /// Asked as a question ([`is_question`]), not a lookup of a note's words.
    pub(super) question: bool,
    /// Asks how the assistant should act ([`is_preference`]).
    pub(super) preference: bool,
}

/// Words that ask what the user wants done: "how should answers be formatted", "what units
/// does she want".
const PREFERENCE_WORDS: &[&str] = &[
    "prefer",
    "preferred",
    "prefers",
    "rather",
    "should",
    "want",
    "wants",
];

/// Whether a query asks how the assistant should act, which `USER.md` directives answer.
fn is_preference(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric())
        .any(|w| PREFERENCE_WORDS.iter().any(|p| w.eq_ignore_ascii_case(p)))
}

/// Words that open a question: "what phone does Maya have", "is the gym still open".
const QUESTION_WORDS: &[&str] = &[
    "who", "whom", "whose", "what", "when", "where", "which", "why", "how", "is", "are", "was",
    "were", "do", "does", "did", "can", "could", "should", "would", "will", "has", "have",
];

/// Whether a query is a question (it holds a `?` or opens with a question word) rather than a
/// lookup of the words of a note ("Kia Niro EV plate").
fn is_question(text: &str) -> bool {
    text.contains('?')
        || text
            .split(|c: char| !c.is_alphanumeric())
            .find(|w| !w.is_empty())
            .is_some_and(|first| QUESTION_WORDS.iter().any(|q| first.eq_ignore_ascii_case(q)))
}

/// Per line of the chunk, a bit mask of the query terms it holds.
fn locate(file: &IndexedFile, range: LineRange, terms: &[Term]) -> Vec<u64> {
    let maybe = TermFilter::new(terms);
    (range.start..=range.end)
        .map(|i| {
            let line = file_terms(file, i, i);
            line.iter().fold(0_u64, |mask, id| {
                if !maybe.holds(*id) {
                    return mask;
                }
                terms
                    .iter()
                    .position(|t| t.id == *id)
                    .map_or(mask, |q| mask | (1 << q))
            })
        })
        .collect()
}

/// A one-word test that a term cannot be one of the query's (one bit per term id modulo 64),
/// so the words of a line that are not query words, nearly all of them, cost a shift and a
/// mask instead of a look through the query's terms.
#[derive(Debug, Clone, Copy)]
struct TermFilter(u64);

impl TermFilter {
    fn new(terms: &[Term]) -> Self {
        Self(terms.iter().fold(0, |bits, t| bits | 1 << (t.id % 64)))
    }

    /// False when `id` is no query term; true when it may be.
    fn holds(self, id: TermId) -> bool {
        self.0 & 1 << (id % 64) != 0
    }
}

/// The terms of lines `start..=end` of a file, in order (none when a loaded index's offsets
/// are out of range, which loading does not check line by line).
pub(super) fn file_terms(file: &IndexedFile, start: usize, end: usize) -> &[TermId] {
    let at = |i: usize| file.term_starts.get(i).map(|&at| at as usize);
    at(start)
        .zip(at(end + 1))
        .and_then(|(first, last)| file.terms.get(first..last))
        .unwrap_or_default()
}

/// The distinct terms of lines `start..=end` of a file, sorted.
fn distinct_terms(file: &IndexedFile, start: usize, end: usize) -> Vec<TermId> {
    let mut ids = file_terms(file, start, end).to_vec();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The query terms anywhere in a chunk.
fn chunk_mask(lines: &[LineMatch]) -> u64 {
    lines.iter().fold(0, |acc, l| acc | l.mask)
}

/// Positions (token offsets from the window's first term) of each query term found in lines
/// `start..=end` of a file, into `positions` (one list per query term, empty for a term the
/// window lacks): the lists are reused from window to window, so scoring one allocates nothing
/// once they have grown.
fn positions_in(
    file: &IndexedFile,
    start: usize,
    end: usize,
    terms: &[Term],
    positions: &mut Vec<Vec<usize>>,
) {
    positions.resize_with(terms.len(), Vec::new);
    for list in positions.iter_mut() {
        list.clear();
    }
    let maybe = TermFilter::new(terms);
    for (pos, id) in file_terms(file, start, end).iter().enumerate() {
        if !maybe.holds(*id) {
            continue;
        }
        if let Some(q) = terms.iter().position(|t| t.id == *id) {
            positions[q].push(pos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_term_filter_never_turns_away_a_query_term() {
        let terms: Vec<Term> = [3, 67, 1_000_005]
            .into_iter()
            .map(|id| Term {
                id,
                weight: 1.0,
                idf: 1.0,
            })
            .collect();
        let maybe = TermFilter::new(&terms);
        assert!(terms.iter().all(|t| maybe.holds(t.id)));
        // 67 and 3 share a bit (67 % 64 == 3): a maybe, which the look through the terms settles.
        let turned_away = (0..640).filter(|&id| !maybe.holds(id)).count();
        assert_eq!(turned_away, 640 - 2 * 10);
    }
}
