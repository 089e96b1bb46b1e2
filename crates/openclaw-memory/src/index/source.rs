//! A curated line after the note it restates. `MEMORY.md` distils the daily notes: "Build
//! server: bluefin (Debian 12)" stands for "The build server bluefin was reinstalled with
//! Debian 12 and 64 GB RAM". The note is the source: it states the fact in full, with its date
//! and context, so a search quotes it first and the summary right after it. A note restates a
//! curated window when one of its lines holds every query term the curated window holds and
//! most (more than half) of the curated window's distinct terms. Only a statement as new as
//! the newest window holding those query terms takes the place: a note restating a curated
//! line that newer notes moved on from is as stale as that line (the note of digging the
//! Woodhouse Ridge plot, beside "Allotment: plot 7, Woodhouse Ridge", after one giving that
//! plot up). For the same reason a curated line the notes record as changed
//! ([`change`](super::change)) keeps its place: the note that changed it goes above it, and its
//! source would go above that. No score decides it, and windows that restate nothing keep
//! their places. Only `MEMORY.md` is read this way: a `USER.md` directive is the authority on
//! what the user wants, not a summary of the notes.

use crate::index::bm25::TermId;

/// What the reordering needs to know of one ranked window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The window is in `MEMORY.md`, the curated summary of the notes (not `USER.md`).
    pub summary: bool,
    /// The note's day; `None` for undated files.
    pub day: Option<i64>,
    /// Every matching line of the window is marked replaced.
    pub replaced: bool,
    /// Each line's distinct terms, sorted (searched by bisection).
    pub lines: Vec<Vec<TermId>>,
}

impl Statement {
    fn holds(&self, term: TermId) -> bool {
        self.lines
            .iter()
            .any(|line| line.binary_search(&term).is_ok())
    }
}

/// Reorders `items` (best first) so that each curated window not marked replaced is preceded by
/// a note restating it, taken from below it, when that note is as new as the newest window
/// holding the query terms the curated window holds and `changed` (asked only then) does not
/// say the notes record the curated window as changed; everything else keeps its order.
/// `query` holds the query's terms.
pub fn sources_first<T>(
    items: Vec<T>,
    query: &[TermId],
    statement: impl Fn(&T) -> Statement,
    changed: impl Fn(&T) -> bool,
) -> Vec<T> {
    let statements: Vec<Statement> = items.iter().map(statement).collect();
    debug_assert!(
        statements
            .iter()
            .all(|s| s.lines.iter().all(|l| l.is_sorted())),
        "a statement's lines must be sorted"
    );
    let mut order: Vec<usize> = (0..items.len()).collect();
    let mut at = 0;
    while at < order.len() {
        let curated = &statements[order[at]];
        if curated.summary && !curated.replaced {
            let mut said: Vec<TermId> = curated.lines.concat();
            said.sort_unstable();
            said.dedup();
            let held: Vec<TermId> = query
                .iter()
                .copied()
                .filter(|t| said.binary_search(t).is_ok())
                .collect();
            let holds_all = |s: &Statement| held.iter().all(|&t| s.holds(t));
            let newest = statements
                .iter()
                .filter(|s| holds_all(s))
                .filter_map(|s| s.day)
                .max();
            let restates = |line: &[TermId]| {
                let shared = said
                    .iter()
                    .filter(|t| line.binary_search(t).is_ok())
                    .count();
                held.iter().all(|t| line.binary_search(t).is_ok()) && 2 * shared > said.len()
            };
            let source = (at + 1..order.len()).find(|&j| {
                let note = &statements[order[j]];
                !note.replaced
                    && note.day.is_some_and(|day| Some(day) >= newest)
                    && note.lines.iter().any(|line| restates(line))
            });
            if let Some(j) = source.filter(|_| !changed(&items[order[at]])) {
                let note = order.remove(j);
                order.insert(at, note);
                // The curated window is now right after its source.
                at += 1;
            }
        }
        at += 1;
    }
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn curated(lines: &[&[TermId]]) -> Statement {
        Statement {
            summary: true,
            day: None,
            replaced: false,
            lines: lines.iter().map(|l| l.to_vec()).collect(),
        }
    }

    fn note(day: i64, lines: &[&[TermId]]) -> Statement {
        Statement {
            summary: false,
            day: Some(day),
            replaced: false,
            lines: lines.iter().map(|l| l.to_vec()).collect(),
        }
    }

    fn order(items: Vec<(&'static str, Statement)>, query: &[TermId]) -> Vec<&'static str> {
        order_changed(items, query, &[])
    }

    /// [`order`] with the windows named in `changed` recorded as changed.
    fn order_changed(
        items: Vec<(&'static str, Statement)>,
        query: &[TermId],
        changed: &[&str],
    ) -> Vec<&'static str> {
        sources_first(
            items,
            query,
            |(_, s)| s.clone(),
            |(name, _)| changed.contains(name),
        )
        .into_iter()
        .map(|(name, _)| name)
        .collect()
    }

    #[test]
    fn a_curated_line_comes_right_after_the_note_it_restates() {
        // Query terms 1 and 2. The curated line holds 1, 2, 3, 4; the source note's second line
        // holds 1, 2, 3 (three of four) and more; the other note only the query's words.
        let items = vec![
            ("curated", curated(&[&[1, 2, 3, 4]])),
            ("other", note(20, &[&[1, 2, 9]])),
            ("source", note(10, &[&[7], &[1, 2, 3, 8]])),
        ];
        // "other" is newer and holds the query terms too: the source is not the newest
        // statement, so nothing moves.
        assert_eq!(
            order(items.clone(), &[1, 2]),
            ["curated", "other", "source"]
        );
        let items = vec![
            ("curated", curated(&[&[1, 2, 3, 4]])),
            ("other", note(5, &[&[1, 2, 9]])),
            ("source", note(10, &[&[7], &[1, 2, 3, 8]])),
        ];
        assert_eq!(order(items, &[1, 2]), ["source", "curated", "other"]);
    }

    #[test]
    fn a_note_sharing_half_or_missing_a_query_term_restates_nothing() {
        // Each note alone beside the curated line, so it is the newest statement.
        let restated = |note: Statement| -> Vec<&'static str> {
            order(
                vec![("curated", curated(&[&[1, 2, 3, 4]])), ("note", note)],
                &[1, 2],
            )
        };
        // Three of four terms on one line, the query's included: the source.
        assert_eq!(restated(note(10, &[&[1, 2, 3, 8]])), ["note", "curated"]);
        // Two of four terms: half, not most.
        assert_eq!(restated(note(10, &[&[1, 2, 8, 9]])), ["curated", "note"]);
        // Most of the terms, but not query term 2, which the curated line holds.
        assert_eq!(restated(note(10, &[&[1, 3, 4]])), ["curated", "note"]);
        // Most of the terms across two lines, but no one line holds them.
        assert_eq!(restated(note(10, &[&[1, 2], &[3, 4]])), ["curated", "note"]);
    }

    #[test]
    fn replaced_notes_and_undated_files_are_no_source() {
        // Each beside the curated line alone, so it is the newest statement.
        let mut struck = note(10, &[&[1, 2, 3]]);
        struck.replaced = true;
        let mut undated = note(10, &[&[1, 2, 3]]);
        undated.day = None;
        for other in [struck, undated] {
            let items = vec![("curated", curated(&[&[1, 2, 3]])), ("other", other)];
            assert_eq!(order(items, &[1]), ["curated", "other"]);
        }
        // Nor does a curated line marked replaced take a source above it.
        let mut replaced = curated(&[&[1, 2, 3]]);
        replaced.replaced = true;
        let items = vec![("curated", replaced), ("note", note(10, &[&[1, 2, 3]]))];
        assert_eq!(order(items, &[1]), ["curated", "note"]);
    }

    #[test]
    fn a_curated_line_the_notes_record_as_changed_keeps_its_place() {
        let items = || {
            vec![
                ("curated", curated(&[&[1, 2, 3]])),
                ("source", note(10, &[&[1, 2, 3]])),
            ]
        };
        assert_eq!(order(items(), &[1]), ["source", "curated"]);
        assert_eq!(
            order_changed(items(), &[1], &["curated"]),
            ["curated", "source"]
        );
    }

    #[test]
    fn each_curated_line_takes_one_source_and_is_not_revisited() {
        // Two notes of the same day restate it: the first below it takes the place, the
        // second keeps its own.
        let items = vec![
            ("curated", curated(&[&[1, 2, 3]])),
            ("first", note(10, &[&[1, 2, 3]])),
            ("second", note(10, &[&[1, 2, 3, 4]])),
        ];
        assert_eq!(order(items, &[1]), ["first", "curated", "second"]);
        // Two curated lines, each with its own source further down.
        let items = vec![
            ("a", curated(&[&[1, 2, 3]])),
            ("b", curated(&[&[4, 5, 6]])),
            ("source of b", note(10, &[&[4, 5, 6]])),
            ("source of a", note(10, &[&[1, 2, 3]])),
        ];
        assert_eq!(
            order(items, &[1, 4]),
            ["source of a", "a", "source of b", "b"]
        );
    }

    #[test]
    fn a_source_above_its_curated_line_stays_where_it_is() {
        let items = vec![
            ("source", note(10, &[&[1, 2, 3]])),
            ("other", note(5, &[&[1]])),
            ("curated", curated(&[&[1, 2, 3]])),
        ];
        assert_eq!(order(items, &[1]), ["source", "other", "curated"]);
    }
}
