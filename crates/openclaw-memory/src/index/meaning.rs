//! Lines close in meaning to a query, for the searches the words alone cannot answer: a
//! question worded unlike its note ("who looks after her teeth" for "Dentist: Dr. Okafor").
//! A line's meaning is the sum of its words' vectors and those of the nearest heading above
//! it, as the model embeds a text (see [`embedding`](super::embedding)), built from the terms
//! the index already holds, so no vector is stored per line; its closeness to the query is
//! their cosine. A message of a session-memory note is as close as the closest of its own
//! lines, so a long reply does not drown the line that answers (measured on the eighth and
//! ninth sets, both held out then: +0.004 and +0.013). Only the lines of the sections holding
//! most of the terms closest to the query are scored. (An earlier approximation weighted the
//! words by IDF instead of the model's own row lengths and took them as orthogonal: 0.015
//! nDCG@5 better on the tuned set, 0.041 worse on the held-out one. Without the heading, 0.021,
//! 0.028 and 0.012 worse on the three sets.)
#![expect(
    clippy::cast_possible_truncation,
    reason = "line and file indexes of a loaded index fit in u32"
)]

use std::ops::Range;

use crate::index::bm25::{ChunkId, TermId};
use crate::index::chunk::{LineRange, is_heading};
use crate::index::current::{self, Fact};
use crate::index::cut;
use crate::index::query::{CURRENT_DEPTH, file_terms, window_hit};
use crate::index::{IndexedFile, LocalHit, MemoryIndex, snippet, transcript};

/// Terms closest to the query (by IDF times similarity) whose sections are looked at. A close
/// line's subject is a mask of them, so there are at most 64.
const MEANING_TERMS: usize = 64;
const _: () = assert!(MEANING_TERMS <= u64::BITS as usize);
/// Sections holding the most of those terms whose lines are scored: the same depth as the
/// words' own candidates (`limit × 10`, at least 50, in `query`), doubled since a guess looks
/// wider.
const MEANING_CHUNKS: usize = 100;
/// Lines embedded whole, of those the cheap estimate puts first: 32 times the guess limit.
/// On the tuned set 64, 128, 512 and every line rank the same (32 a little worse, with
/// potion-base-8M); embedding every line doubled the time of a guess at 5,000 notes.
const SHORTLIST: usize = 64;

/// One of the terms closest to a query: its IDF times its similarity, and the term.
type NearTerm = (f32, u32);

/// A line close in meaning to the query.
#[derive(Debug, Clone, Copy)]
pub struct Close {
    /// Cosine similarity to the query.
    pub similarity: f32,
    /// The file's slot.
    pub file: u32,
    /// The line (0-based).
    pub line: u32,
    /// The first of the line's terms that made it close: 0 for a line read whole, else where
    /// the closest own line of a session-memory message starts, which its quote shows.
    pub from_term: u32,
}

impl MemoryIndex {
    /// The `most` lines closest in meaning to the query `words` with a similarity of at least
    /// `least`, best first, leaving out lines the notes mark as replaced; with
    /// `directives_first` (a preference question), those of a `USER.md` before the others, as
    /// the words' windows are ordered for such a question. Empty without an embedding model.
    pub(super) fn closest_lines(
        &self,
        words: &[String],
        least: f32,
        most: usize,
        directives_first: bool,
    ) -> Vec<Close> {
        let Some(vectors) = self.vectors.as_ref() else {
            return Vec::new();
        };
        let Some(query) = vectors.model().text_vector(words) else {
            return Vec::new();
        };
        let terms = self.bm25.term_count();
        let closeness = vectors.term_closeness(&query, terms, self.lexicon.uses(), |i| {
            self.lexicon.word_at(i)
        });
        let similarity = &closeness.similarity;
        // Per term: its IDF times its similarity, which picks the sections worth scoring.
        let toward: Vec<f32> = (0..terms)
            .map(|t| self.bm25.idf(t as u32) * similarity[t])
            .collect();
        let (lines, near) = self.lines_to_score(similarity, &toward);
        // A cheap estimate first, from numbers per term: the cosine the line would have if its
        // words' vectors were orthogonal to each other. Only the best few by it are embedded
        // whole, which adds up a vector per word.
        let mut shortlist: Vec<(f32, u32, u32)> = Vec::new();
        for (slot, line) in lines {
            let Some(file) = self.file_in(slot) else {
                continue;
            };
            // A guess never quotes a fact the notes mark as replaced.
            if file.superseded.binary_search(&(line as usize)).is_ok() {
                continue;
            }
            let (estimate, _) = self.best_part(file, line as usize, |terms| {
                let (mut dot, mut length_sq) = (0.0_f32, 0.0_f32);
                for &t in terms {
                    dot += closeness.dot.get(t as usize).copied().unwrap_or(0.0);
                    length_sq += closeness.length_sq.get(t as usize).copied().unwrap_or(0.0);
                }
                if dot > 0.0 {
                    dot / length_sq.sqrt()
                } else {
                    0.0
                }
            });
            if estimate > 0.0 {
                shortlist.push((estimate, slot, line));
            }
        }
        // In workspace order (path, then line), so that lines equally close keep the order a
        // fresh build gives them, whichever notes were edited since: at the cut, and after it.
        let place =
            |&(_, slot, line): &(f32, u32, u32)| (self.file_in(slot).map(|f| &f.path), line);
        cut::keep_best(&mut shortlist, SHORTLIST, |a, b| b.0.total_cmp(&a.0), place);
        shortlist.sort_unstable_by(|a, b| place(a).cmp(&place(b)));
        // Deep enough for the current-fact groups to bring a newer statement of the subject
        // onto the page, as the words' own ranking does.
        let depth = if self.ranking.current_facts || directives_first {
            most.max(CURRENT_DEPTH)
        } else {
            most
        };
        let mut best: Vec<Close> = Vec::with_capacity(depth + 1);
        let mut sum = vec![0.0_f32; query.len()];
        let mut read: Vec<TermId> = Vec::new();
        let mut headings = Headings::default();
        for (_, slot, line) in shortlist {
            let Some(file) = self.file_in(slot) else {
                continue;
            };
            let line = line as usize;
            // A line is read under its heading: "- Dr. Okafor, Lakeside Dental" under "## Teeth".
            let heading = headings.above(slot, file, line);
            let (similarity, from_term) = self.best_part(file, line, |terms| {
                read.clear();
                if let Some(heading) = heading {
                    read.extend_from_slice(file_terms(file, heading, heading));
                }
                read.extend_from_slice(terms);
                vectors.line_similarity(&query, &closeness, &read, &mut sum)
            });
            if similarity < least
                || best.len() == depth && best.last().is_some_and(|b| b.similarity >= similarity)
            {
                continue;
            }
            let at = best.partition_point(|b| b.similarity >= similarity);
            best.insert(
                at,
                Close {
                    similarity,
                    file: slot,
                    line: line as u32,
                    from_term: from_term as u32,
                },
            );
            best.truncate(depth);
        }
        if self.ranking.current_facts {
            best = self.newest_first(best, &near);
        }
        // Only among the lines close enough to be quoted at all (`least`), as deep as the
        // current-fact groups look.
        if directives_first {
            best.sort_by_key(|close| {
                !self
                    .file_in(close.file)
                    .is_some_and(|f| f.path.is_user_file())
            });
        }
        best.truncate(most);
        best
    }

    /// The best `score` of what line `line` of `file` is read as for meaning (the line's terms
    /// whole, or those of each of a message's own lines: [`Self::message_parts`]), and where
    /// the best part starts among the line's terms (the first on a tie).
    fn best_part(
        &self,
        file: &IndexedFile,
        line: usize,
        mut score: impl FnMut(&[TermId]) -> f32,
    ) -> (f32, usize) {
        let terms = file_terms(file, line, line);
        let Some(parts) = self.message_parts(file, line) else {
            return (score(terms), 0);
        };
        let mut best = (f32::NEG_INFINITY, 0);
        for part in parts {
            let start = part.start;
            let value = score(terms.get(part).unwrap_or_default());
            if value > best.0 {
                best = (value, start);
            }
        }
        best
    }

    /// A message of a session-memory note read for meaning by each of its own lines, as ranges
    /// of the line's terms, its role word left out ([`RankOptions::message_lines`]), from where
    /// the index found them to start. `None` for any other line, which is read whole.
    fn message_parts<'a>(
        &self,
        file: &'a IndexedFile,
        line: usize,
    ) -> Option<impl Iterator<Item = Range<usize>> + use<'a>> {
        if !self.ranking.message_lines {
            return None;
        }
        let first = *file.term_starts.get(line)? as usize;
        let end = *file.term_starts.get(line + 1)? as usize;
        let all = &file.message_starts;
        let starts = all
            .get(all.partition_point(|&s| (s as usize) < first)..)?
            .iter()
            .take_while(move |&&s| (s as usize) < end);
        // A message without a word has no parts, and no meaning to compare; any other line
        // (no own line starts in it) is read whole.
        if starts.clone().next().is_none() && transcript::message(file.line(line)).is_none() {
            return None;
        }
        let mut starts = starts.map(move |&s| s as usize - first).peekable();
        Some(std::iter::from_fn(move || {
            let start = starts.next()?;
            Some(start..starts.peek().copied().unwrap_or(end - first))
        }))
    }

    /// The close lines with each group of statements of the same subject newest first, as
    /// [`current`] orders the words' windows. A close line need not hold any query word, so
    /// its subject is told by the terms closest to the query it holds: the most telling of
    /// them (by IDF times similarity) is its key, and two lines are about the same subject when
    /// they share the key and most of that weight. "Which carrier is she on now?" groups
    /// "Mobile: Telia" with a later "Moved her mobile plan to Tele2". The subject is read from
    /// the line alone, not its heading: a line close only through its heading has none and is
    /// not grouped (the heading's words as well measured 0.809 against 0.819 on the tuned set).
    fn newest_first(&self, best: Vec<Close>, near: &[NearTerm]) -> Vec<Close> {
        let weight = |mask: u64| -> f32 {
            near.iter()
                .enumerate()
                .filter(|(q, _)| mask & (1 << q) != 0)
                .map(|(_, (toward, _))| toward)
                .sum()
        };
        let fact = |close: &Close| -> Fact {
            let file = self.file_in(close.file);
            let terms = file.map_or(0, |file| {
                let line = close.line as usize;
                file_terms(file, line, line).iter().fold(0_u64, |mask, id| {
                    near.iter()
                        .position(|(_, t)| t == id)
                        .map_or(mask, |q| mask | (1 << q))
                })
            });
            let key = (0..near.len())
                .filter(|q| terms & (1 << q) != 0)
                .max_by(|a, b| near[*a].0.total_cmp(&near[*b].0));
            Fact {
                subject: key.map_or(0, |q| 1 << q),
                terms,
                day: file.and_then(|f| f.day),
                time: file.and_then(|f| f.time),
                // A guess never quotes a replaced fact.
                replaced: false,
            }
        };
        current::newest_first(best, fact, |(_, a), (_, b)| {
            current::same_subject(a, b, weight)
        })
    }

    /// The lines worth scoring, as (file slot, line): those of the sections holding the most of
    /// the terms closest to the query. Sorted, without repeats. Also those terms, with their
    /// IDF times similarity (at most [`MEANING_TERMS`], so a `u64` holds a mask of them).
    fn lines_to_score(
        &self,
        similarity: &[f32],
        toward: &[f32],
    ) -> (Vec<(u32, u32)>, Vec<NearTerm>) {
        let terms = similarity.len();
        // Only the lines of the sections holding the most of the terms closest to the query are
        // scored: a line holding none of them is far from it, and scoring every line of a
        // large workspace would cost milliseconds per few thousand notes.
        let mut closest: Vec<NearTerm> = (0..terms)
            .filter(|&t| similarity[t] > 0.0 && self.bm25.doc_freq(t as u32) > 0)
            .map(|t| (toward[t], t as u32))
            .collect();
        // Not settled by place at an exact tie (which of the tied terms is kept is arbitrary,
        // and term ids follow the index's history): two distinct terms tie only with the same
        // IDF and the same cosine to the query, which the model's vectors do not give in
        // practice.
        let keep = MEANING_TERMS.min(closest.len());
        if keep > 0 {
            closest.select_nth_unstable_by(keep - 1, |a, b| b.0.total_cmp(&a.0));
            closest.truncate(keep);
        }
        // The sections holding the most of them (by IDF times similarity).
        let slots = self.bm25.slots();
        let (mut scores, mut held) = (vec![0.0_f32; slots], vec![0.0_f32; slots]);
        for &(_, t) in &closest {
            self.bm25
                .accumulate(t, similarity[t as usize], &mut scores, &mut held);
        }
        let mut chunks: Vec<(f32, usize)> = held
            .iter()
            .enumerate()
            .filter(|(_, h)| **h > 0.0)
            .map(|(c, h)| (*h, c))
            .collect();
        // Sections holding exactly as much are kept in workspace order.
        cut::keep_best(
            &mut chunks,
            MEANING_CHUNKS,
            |a, b| b.0.total_cmp(&a.0),
            |&(_, chunk)| self.chunk_place(chunk as ChunkId),
        );
        let mut lines: Vec<(u32, u32)> = Vec::new();
        for (_, chunk) in chunks {
            let info = self.chunk_info[chunk];
            lines.extend((info.range.start..=info.range.end).map(|line| (info.file, line as u32)));
        }
        lines.sort_unstable();
        lines.dedup();
        (lines, closest)
    }

    /// The hit quoting a close line, marked weak: a guess. A long message found by one of its
    /// own lines is quoted from shortly before that line ([`snippet::text`]).
    pub(super) fn close_hit(&self, close: Close) -> Option<LocalHit> {
        let line = close.line as usize;
        let focus = if close.from_term > 0 {
            let file = self.file_in(close.file)?;
            self.term_at(file, line, close.from_term as usize)
        } else {
            None
        };
        self.line_hit(close.file, line, close.similarity, true, focus)
    }

    /// The hit quoting line `line` of the file in slot `file`: the line, or a lone heading with
    /// the lines under it. `focus` is an offset in the line, the quote's first, as
    /// [`snippet::text`] takes it.
    pub(super) fn line_hit(
        &self,
        file: u32,
        line: usize,
        score: f32,
        weak: bool,
        focus: Option<usize>,
    ) -> Option<LocalHit> {
        let file = self.file_in(file)?;
        let chunk = file
            .chunks
            .iter()
            .map(|&c| self.chunk_info[c as usize].range)
            .find(|r| r.start <= line && line <= r.end)
            .unwrap_or(LineRange {
                start: line,
                end: line,
            });
        let window = snippet::quoted(
            LineRange {
                start: line,
                end: line,
            },
            chunk,
            |i| file.line(i),
        );
        Some(window_hit(file, window, score, weak, focus))
    }
}

/// Deepest heading level told apart (`#######` and deeper count as 7).
const LEVELS: usize = 7;

/// The heading a line is read under, for lines asked in order (by file, then line), each
/// line of a file looked at once however many lines are asked: for a line, the nearest heading
/// above it; for a heading, the nearest one above it of a higher level (its parent), never a
/// sibling ("## Car" is not read under "## Medical").
#[derive(Debug, Default)]
struct Headings {
    /// The file being read and the first line not looked at yet.
    at: Option<(u32, usize)>,
    /// Per level (1 first), the last heading of that level before `at` that is still open.
    open: [Option<usize>; LEVELS],
}

impl Headings {
    fn above(&mut self, slot: u32, file: &IndexedFile, line: usize) -> Option<usize> {
        let from = match self.at {
            Some((s, next)) if s == slot && next <= line => next,
            _ => {
                self.open = [None; LEVELS];
                0
            }
        };
        for i in from..line {
            if let Some(level) = heading_level(file.line(i)) {
                self.open[level - 1] = Some(i);
                self.open[level..].fill(None);
            }
        }
        self.at = Some((slot, line));
        let higher = heading_level(file.line(line)).map_or(LEVELS, |level| level - 1);
        self.open[..higher].iter().flatten().max().copied()
    }
}

/// The level of a heading line (the number of `#`, at most [`LEVELS`]), as the chunker reads a
/// heading ([`is_heading`]); `None` for any other line.
fn heading_level(line: &str) -> Option<usize> {
    is_heading(line).then(|| {
        line.trim_start()
            .bytes()
            .take_while(|&b| b == b'#')
            .count()
            .min(LEVELS)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::Headings;
    use crate::index::MemoryIndex;
    use crate::index::embedding::test_model::tiny;
    use crate::index::rank::RankOptions;
    use crate::store::MemoryStore;

    /// "doctor" is in no note; in the tiny model it is close to "medical" only.
    fn index(model: bool) -> (tempfile::TempDir, MemoryIndex) {
        index_with(model, RankOptions::default(), &[])
    }

    /// [`index`] with `ranking` and more files, as (path in the workspace, text).
    fn index_with(
        model: bool,
        ranking: RankOptions,
        notes: &[(&str, &str)],
    ) -> (tempfile::TempDir, MemoryIndex) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("memory")).unwrap();
        std::fs::write(
            ws.join("memory/2026-01-01.md"),
            "# 2026-01-01\n\n- Medical checkup booked with Lee.\n- Car wash on Sunday.\n",
        )
        .unwrap();
        std::fs::write(
            ws.join("memory/2026-01-02.md"),
            "# 2026-01-02\n\n- ~~Medical plan: old~~\n",
        )
        .unwrap();
        // Other notes, so that IDF means something.
        for day in 3..13 {
            std::fs::write(
                ws.join(format!("memory/2026-01-{day:02}.md")),
                format!("# 2026-01-{day:02}\n\n- Walked the dog along the river, day {day}.\n"),
            )
            .unwrap();
        }
        for (name, text) in notes {
            std::fs::write(ws.join(name), text).unwrap();
        }
        let mut index = MemoryIndex::new(MemoryStore::new(ws), ranking);
        index.refresh().unwrap();
        let model = model.then(|| Arc::new(tiny(dir.path())));
        index.use_word_model(model);
        (dir, index)
    }

    #[test]
    fn a_query_no_note_words_finds_the_line_closest_in_meaning_as_a_guess() {
        let (_dir, index) = index(true);
        let hits = index.search("doctor", 5, None);
        let quoted: Vec<(String, usize, bool)> = hits
            .iter()
            .map(|h| (h.path.to_string(), h.start_line, h.weak))
            .collect();
        // The struck-through line is closer still, but a guess never quotes a replaced fact;
        // the car line is too far.
        assert_eq!(
            quoted,
            [("memory/2026-01-01.md".to_owned(), 3, true)],
            "{hits:?}"
        );
    }

    #[test]
    fn lines_equally_close_past_the_cuts_are_kept_as_a_fresh_build_keeps_them() {
        // More sections and lines equally close to "doctor" than a guess scores (100 sections,
        // 64 lines): which it keeps must not follow the order the notes were indexed in.
        let notes: Vec<(String, &str)> = (0..130)
            .map(|i| (format!("memory/m{i:03}.md"), "- Medical checkup.\n"))
            .collect();
        let notes: Vec<(&str, &str)> = notes.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        let (dir, mut edited) = index_with(true, RankOptions::default(), &notes);
        // Some notes edited, some gone and back: new chunk ids, new file slots.
        let note = |i: usize| dir.path().join(format!("ws/memory/m{i:03}.md"));
        for i in (0..130).step_by(3) {
            std::fs::write(note(i), "- Medical checkup.\n\n").unwrap();
        }
        for i in (1..130).step_by(3) {
            std::fs::remove_file(note(i)).unwrap();
        }
        edited.refresh().unwrap();
        for i in (1..130).step_by(3) {
            std::fs::write(note(i), "- Medical checkup.\n").unwrap();
        }
        edited.refresh().unwrap();
        let mut fresh = MemoryIndex::new(
            MemoryStore::new(dir.path().join("ws")),
            RankOptions::default(),
        );
        fresh.refresh().unwrap();
        fresh.use_word_model(Some(Arc::new(tiny(dir.path()))));
        let words = vec!["doctor".to_owned()];
        let close = |index: &MemoryIndex| -> Vec<(String, u32)> {
            index
                .closest_lines(&words, 0.25, 64, false)
                .iter()
                .map(|c| {
                    let file = index.files[c.file as usize].as_ref().unwrap();
                    (file.path.to_string(), c.line)
                })
                .collect()
        };
        let kept = close(&fresh);
        assert_eq!(kept.len(), 64);
        // The dated line first, newest of the subject; then the undated ones in path order
        // (lines 0-based).
        assert_eq!(kept[0], ("memory/2026-01-01.md".to_owned(), 2));
        let undated: Vec<(String, u32)> =
            (0..63).map(|i| (format!("memory/m{i:03}.md"), 0)).collect();
        assert_eq!(kept[1..], undated);
        assert_eq!(close(&edited), kept);
    }

    #[test]
    fn without_the_model_such_a_query_finds_nothing() {
        let (_dir, index) = index(false);
        assert!(index.search("doctor", 5, None).is_empty());
    }

    #[test]
    fn lines_about_the_same_subject_found_by_meaning_come_newest_first() {
        // Both medical lines are as close to "doctor" (their other words have no vector); the
        // later note states the newer plan.
        let newer = [(
            "memory/2026-01-20.md",
            "# 2026-01-20\n\n- Medical plan renewed with Moss.\n",
        )];
        let quoted = |ranking: RankOptions| -> Vec<(String, usize)> {
            let (_dir, index) = index_with(true, ranking, &newer);
            index
                .search("doctor", 5, None)
                .iter()
                .map(|h| (h.path.to_string(), h.start_line))
                .collect()
        };
        let (old, new) = (
            ("memory/2026-01-01.md".to_owned(), 3),
            ("memory/2026-01-20.md".to_owned(), 3),
        );
        assert_eq!(quoted(RankOptions::default()), [new.clone(), old.clone()]);
        let without = RankOptions {
            current_facts: false,
            ..RankOptions::default()
        };
        assert_eq!(quoted(without), [old, new]);
    }

    #[test]
    fn a_preference_question_finds_the_directive_by_meaning_before_a_closer_note() {
        // The directive is less close to "doctor" than the note (its "car" points elsewhere),
        // but a question about what she wants is answered by USER.md first.
        let directive = [("USER.md", "- Medical car forms: fill them in by hand.\n")];
        let quoted = |ranking: RankOptions, query: &str| -> Vec<(String, usize)> {
            let (_dir, index) = index_with(true, ranking, &directive);
            index
                .search(query, 5, None)
                .iter()
                .map(|h| (h.path.to_string(), h.start_line))
                .collect()
        };
        let (note, user) = (
            ("memory/2026-01-01.md".to_owned(), 3),
            ("USER.md".to_owned(), 1),
        );
        let preference = "which doctor would she prefer";
        assert_eq!(
            quoted(RankOptions::default(), preference),
            [user.clone(), note.clone()]
        );
        assert_eq!(
            quoted(RankOptions::default(), "which doctor"),
            [note.clone(), user.clone()]
        );
        let off = RankOptions {
            preference_directives: false,
            ..RankOptions::default()
        };
        assert_eq!(quoted(off, preference), [note, user]);
    }

    #[test]
    fn a_session_memory_message_is_as_close_as_its_closest_own_line() {
        // A long message about the car whose last line is the medical one: summed whole, the
        // car words drown it; read by its own lines, that line is as close as a note's.
        // Longer than a quote, so the quote starts shortly before the line that answers.
        let message = format!("user: \"{}\\nmedical\"", vec!["car"; 200].join(" "));
        let note =
            format!("# Session: 2026-01-20 09:00:00 UTC\n\n## Conversation Summary\n\n{message}\n");
        let quoted = |ranking: RankOptions| -> Vec<(String, usize, String)> {
            let notes = [("memory/2026-01-20-0900.md", note.as_str())];
            let (_dir, index) = index_with(true, ranking, &notes);
            index
                .search("doctor", 5, None)
                .iter()
                .map(|h| (h.path.to_string(), h.start_line, h.snippet.clone()))
                .collect()
        };
        let message_hit = |hits: &[(String, usize, String)]| {
            hits.iter()
                .find(|(path, line, _)| path == "memory/2026-01-20-0900.md" && *line == 5)
                .map(|(_, _, snippet)| snippet.clone())
        };
        let snippet = message_hit(&quoted(RankOptions::default())).expect("the message is close");
        assert!(
            snippet.starts_with('…') && snippet.ends_with("\\nmedical\""),
            "{snippet}"
        );
        let whole = RankOptions {
            message_lines: false,
            ..RankOptions::default()
        };
        assert_eq!(message_hit(&quoted(whole)), None);
    }

    #[test]
    fn a_line_is_read_under_its_heading() {
        // "car" alone is far from "doctor"; under "## Medical" the line is close to it.
        let notes = [
            (
                "memory/2026-02-01.md",
                "# 2026-02-01\n\n## Medical\n- Car pool with Lee.\n",
            ),
            (
                "memory/2026-02-02.md",
                "# 2026-02-02\n\n## Garage\n- Car pool with Kim.\n",
            ),
        ];
        let (_dir, index) = index_with(true, RankOptions::default(), &notes);
        let words = vec!["doctor".to_owned()];
        let close: Vec<(String, u32)> = index
            .closest_lines(&words, 0.25, 20, false)
            .iter()
            .map(|c| {
                let file = index.files[c.file as usize].as_ref().unwrap();
                (file.path.to_string(), c.line)
            })
            .collect();
        assert!(
            close.contains(&("memory/2026-02-01.md".to_owned(), 3)),
            "{close:?}"
        );
        assert!(
            !close.contains(&("memory/2026-02-02.md".to_owned(), 3)),
            "{close:?}"
        );
    }

    #[test]
    fn a_line_is_read_under_the_nearest_heading_and_a_heading_under_its_parent() {
        let first = "# 2026-03-01\n\n## A\n- a1\n### A.1\n- a2\n## B\n- b1\n\n- b2\n";
        let second = "- c0\n\n\n## C\n- c1\n";
        let (_dir, index) = index_with(
            false,
            RankOptions::default(),
            &[
                ("memory/2026-03-01.md", first),
                ("memory/2026-03-02.md", second),
            ],
        );
        let file = |name: &str| {
            index
                .files
                .iter()
                .enumerate()
                .find_map(|(slot, f)| {
                    f.as_ref()
                        .filter(|f| f.path.to_string() == format!("memory/{name}"))
                        .map(|f| (u32::try_from(slot).unwrap(), f))
                })
                .unwrap()
        };
        let ((one, first), (two, second)) = (file("2026-03-01.md"), file("2026-03-02.md"));
        let mut headings = Headings::default();
        let asked: Vec<Option<usize>> = [0, 1, 3, 3, 4, 5, 6, 7, 9]
            .into_iter()
            .map(|line| headings.above(one, first, line))
            .collect();
        // "### A.1" (4) is read under "## A" (2), "## B" (6) under the date (0), not under
        // "## A" or "### A.1".
        assert_eq!(
            asked,
            [
                None,
                Some(0),
                Some(2),
                Some(2),
                Some(2),
                Some(4),
                Some(0),
                Some(6),
                Some(6)
            ]
        );
        // Another file starts afresh, and so does a line asked out of order.
        assert_eq!(headings.above(two, second, 0), None);
        assert_eq!(headings.above(two, second, 4), Some(3));
        assert_eq!(headings.above(one, first, 4), Some(2));
        assert_eq!(headings.above(one, first, 2), Some(0));
    }
}
