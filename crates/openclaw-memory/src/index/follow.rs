//! Following the answer: a confident page as short as a guess's (one or two hits) gets one more
//! hit, the best note naming what its first hit names. "password manager" finds the curated
//! "Password manager: Bitwarden, family plan" and nothing else holding the query's words; the
//! notes that name Bitwarden are answers too, and they hold none of them. The first hit's
//! sentences that answer the query are read, their telling words other than the query's
//! searched as a query of their own under the same floors, and the best window that search
//! finds is added after the page, which keeps its order. Only one: filling every free place, the
//! further followed hits on the six held-out sets (132 in each configuration) held not one
//! graded answer, and cost those sets 2 to 7 points of the share of graded hits on a page.

use std::borrow::Cow;

use crate::index::bm25::TermId;
use crate::index::lexicon::QueryTerm;
use crate::index::query::{MAX_QUERY_TERMS, Query, Search, Term, on_page, quoted, window_hit};
use crate::index::transcript;
use crate::index::{LocalHit, MemoryIndex};

impl MemoryIndex {
    /// Adds to `hits`, a short confident page for `asked` with a free place, the best window
    /// holding enough of the telling words of its first hit's sentences that answer the query,
    /// under the same floors as any search (judged without the page's own windows and those the
    /// notes mark as replaced, which are not followed to), scored no higher than the page's last
    /// hit. Nothing already on the page moves. `limit` is the page's length, which sets how
    /// many candidates the followed search reads; the caller leaves a free place.
    pub(super) fn follow_answer(
        &self,
        hits: &mut Vec<LocalHit>,
        asked: &Query,
        limit: usize,
        today: Option<i64>,
    ) {
        debug_assert!(hits.len() < limit, "no free place to follow into");
        let Some(first) = hits.first() else {
            return;
        };
        let Some(file) = self.hit_file(first) else {
            return;
        };
        // The first hit's sentences holding a query word: a prose line tells several things
        // ("Bouldering at the Depot with Lou after work; …. Kerry-Ann and Dana went to look at
        // a beech …"), and only the one asked about names the answer. Of their words, only
        // those that tell a note apart: one in half the sections or more is evidence of
        // nothing (its Robertson–Spärck Jones weight is zero or less), and "beta note" would
        // lead to every note saying "note".
        let live = self.bm25.len() as u64;
        let plain: Vec<Cow<'_, str>> = (first.start_line - 1..first.end_line)
            .map(|i| transcript::plain(file.line(i)))
            .collect();
        let text: Vec<&str> = plain.iter().map(AsRef::as_ref).collect();
        let asked_for = |id: TermId| asked.terms.iter().any(|t| t.id == id);
        let mut terms: Vec<Term> = Vec::new();
        for sentence in sentences(&text) {
            let ids: Vec<TermId> = self
                .analyzer
                .terms(sentence)
                .iter()
                .filter_map(|word| match self.lexicon.lookup(word, &self.bm25, false) {
                    QueryTerm::Known(id) => Some(id),
                    _ => None,
                })
                .collect();
            if !ids.iter().any(|&id| asked_for(id)) {
                continue;
            }
            for id in ids {
                if !asked_for(id)
                    && !terms.iter().any(|t| t.id == id)
                    && 2 * u64::from(self.bm25.doc_freq(id)) < live
                {
                    terms.push(Term {
                        id,
                        weight: 1.0,
                        idf: self.bm25.idf(id),
                    });
                }
            }
        }
        if terms.is_empty() {
            return;
        }
        // As many terms as a query may hold, the most telling: a long line is not a query.
        if terms.len() > MAX_QUERY_TERMS {
            terms.sort_by(|a, b| b.idf.total_cmp(&a.idf));
            terms.truncate(MAX_QUERY_TERMS);
        }
        let total_idf = terms
            .iter()
            .map(|t| t.idf)
            .sum::<f32>()
            .max(f32::MIN_POSITIVE);
        let search = Search {
            index: self,
            query: Query {
                terms,
                total_idf,
                question: false,
                preference: false,
            },
            today,
            words: Vec::new(),
            min_coverage: self.ranking.min_coverage,
        };
        let mut ranked = search.ranked(limit);
        // The page's own windows hold all of those words; the floor is judged without them.
        ranked.retain(|r| {
            !r.replaced
                && self
                    .chunk_file(r.chunk)
                    .is_some_and(|file| !on_page(hits, &file.path, r.window))
        });
        let best = ranked.iter().map(|r| r.relevance).fold(0.0_f32, f32::max);
        let top = ranked.iter().map(|r| r.score).fold(0.0_f32, f32::max);
        if best <= 0.0 || top <= 0.0 {
            return;
        }
        let floor = best * self.ranking.relative_floor;
        // Scored on the page's scale, no higher than its last hit: a page's scores never rise.
        // (The ratio first: it is at most 1, so the product cannot round above `last`.)
        let last = hits.last().map_or(0.0, |h| h.score);
        let followed = ranked.into_iter().find_map(|r| {
            let file = self.chunk_file(r.chunk)?;
            if r.relevance < floor || r.score < self.ranking.min_score {
                return None;
            }
            let focus = self.focus(file, r.window, &search.query.terms);
            let hit = window_hit(file, r.window, last * (r.score / top), false, focus);
            (!(self.ranking.distinct_quotes && quoted(hits, &hit))).then_some(hit)
        });
        hits.extend(followed);
    }
}

/// The sentences of `lines`: each line, cut after a `.`, `;`, `!` or `?` followed by a space,
/// but not after the stop of a title ("Dentist: Dra. Inácia Rebelo, Rua de Ceuta" is one
/// sentence: cut after "Dra.", the name it gives was never followed).
fn sentences<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    for line in lines {
        let mut start = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            let ends = matches!(c, '.' | ';' | '!' | '?')
                && chars.peek().is_none_or(|&(_, next)| next.is_whitespace())
                && !(c == '.' && title(&line[start..at]));
            if ends {
                out.push(&line[start..=at]);
                start = at + 1;
            }
        }
        if start < line.len() {
            out.push(&line[start..]);
        }
    }
    out
}

/// Whether `text` ends in a title or a short abbreviation, whose stop ends no sentence: a
/// capitalised word of at most three letters ("Dr", "Dra", "Mrs", "St").
fn title(text: &str) -> bool {
    let word = text
        .rsplit(|c: char| !c.is_alphabetic())
        .next()
        .unwrap_or_default();
    let letters = word.chars().count();
    (1..=3).contains(&letters) && word.chars().next().is_some_and(char::is_uppercase)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    #[test]
    fn sentences_end_at_a_stop_before_a_space_or_the_line_end() {
        assert_eq!(
            super::sentences(&[
                "Bouldering at the Depot; sent it. Dr.Who at 2.5 pm!",
                "- Veg box is from Abel & Cole now",
                "- Dentist: Dra. Inácia Rebelo, St. Paul's Rd. Booked. Ok. Done.",
            ]),
            [
                "Bouldering at the Depot;",
                " sent it.",
                " Dr.Who at 2.5 pm!",
                "- Veg box is from Abel & Cole now",
                "- Dentist: Dra. Inácia Rebelo, St. Paul's Rd. Booked.",
                " Ok. Done.",
            ]
        );
    }
}
