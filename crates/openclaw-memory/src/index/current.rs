//! Which fact is current. Windows that hold the same query words state something about the
//! same subject; when several do, they are one group, and the group's places in the ranking
//! go to its members newest note first, a fact the notes mark as replaced after every one
//! that is not. An undated file (the curated MEMORY.md and USER.md, a note without a date in
//! its name) holds the state as of the newest note, so it counts as new as the group's newest
//! dated statement, and between the two relevance decides (unless a note records leaving its
//! value: see [`change`](super::change)). No score threshold decides it:
//! relevance says which subjects make the page, dates say which statement of a subject comes
//! first.

/// What ordering within a group needs to know of one ranked window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fact {
    /// The most telling query term the window holds (bit `q` for term `q`); 0 for none.
    pub subject: u64,
    /// Every query term the window holds.
    pub terms: u64,
    /// The note's day; `None` for undated files (the curated ones, notes named without a date).
    pub day: Option<i64>,
    /// Every matching line of the window is marked replaced (superseded, struck through).
    pub replaced: bool,
}

/// Whether two windows state something about the same subject: they hold the same most
/// telling query word, and what they hold in common is a majority (more than half, by
/// `weight` of a term mask: IDF for the words' windows, IDF times similarity for lines found
/// by meaning) of what either holds. "Maya's manager is Tom" and "Manager: Priya" share the key word
/// "manager" and most of the weight ("Maya" weighs little); an exact match of a whole
/// query and a newer note that shares only its rarest word are not the same statement.
pub fn same_subject(a: &Fact, b: &Fact, weight: impl Fn(u64) -> f32) -> bool {
    a.subject != 0
        && a.subject == b.subject
        && weight(a.terms & b.terms) > MAJORITY * weight(a.terms).max(weight(b.terms))
}

/// Share of the query weight two windows must hold in common to be about the same subject:
/// more than half, a majority. Not tuned: the key word alone, exact equality of the held
/// words, and one set inside the other were measured too (see BENCHMARKS.md). The same
/// majority of their distinct terms makes two windows one sentence told of different words
/// (a lookup's rule in `query.rs`).
const MAJORITY: f32 = 0.5;

/// Reorders `items` (best first) so that within each group of the same subject the newest
/// statement takes the group's best place, an undated one as new as the newest dated one, and
/// replaced facts the last places. Items keep their places otherwise.
pub fn newest_first<T>(
    items: Vec<T>,
    fact: impl Fn(&T) -> Fact,
    same: impl Fn((&T, &Fact), (&T, &Fact)) -> bool,
) -> Vec<T> {
    let facts: Vec<Fact> = items.iter().map(&fact).collect();
    let mut order: Vec<usize> = (0..items.len()).collect();
    let mut done = vec![false; items.len()];
    for first in 0..facts.len() {
        if done[first] || facts[first].subject == 0 {
            continue;
        }
        let places: Vec<usize> = (first..facts.len())
            .filter(|&i| !done[i] && same((&items[first], &facts[first]), (&items[i], &facts[i])))
            .collect();
        // A curated statement is as new as the newest dated one beside it. (Counted newest of
        // all, it took the first place from the note that states a fact in full, however much
        // better that note matched: 0.028 nDCG@5 lower on the tuned set, the same on both
        // held-out sets.)
        let newest = places.iter().filter_map(|&i| facts[i].day).max();
        let day = |i: usize| facts[i].day.or(newest);
        let mut members = places.clone();
        members.sort_by_key(|&i| (facts[i].replaced, std::cmp::Reverse(day(i)), i));
        for (&place, &member) in places.iter().zip(&members) {
            order[place] = member;
            done[place] = true;
        }
    }
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn f(subject: u64, day: Option<i64>, replaced: bool) -> Fact {
        Fact {
            subject,
            terms: subject,
            day,
            replaced,
        }
    }

    fn order(items: Vec<(&'static str, Fact)>) -> Vec<&'static str> {
        newest_first(
            items,
            |(_, fact)| *fact,
            |(_, a), (_, b)| a.subject == b.subject,
        )
        .into_iter()
        .map(|(n, _)| n)
        .collect()
    }

    #[test]
    fn a_group_takes_its_places_newest_first_and_others_stay() {
        // Two dated statements of subject 0b11, one of 0b01, a replaced curated one, and a
        // curated one: as new as the newest dated statement, and matching less well.
        let items = vec![
            ("old", f(0b11, Some(10), false)),
            ("other", f(0b01, Some(5), false)),
            ("new", f(0b11, Some(20), false)),
            ("struck", f(0b11, None, true)),
            ("curated", f(0b11, None, false)),
        ];
        assert_eq!(order(items), ["new", "other", "curated", "old", "struck"]);
    }

    #[test]
    fn a_curated_statement_ties_with_the_newest_note_and_relevance_decides() {
        let items = vec![
            ("old", f(0b11, Some(10), false)),
            ("curated", f(0b11, None, false)),
            ("new", f(0b11, Some(20), false)),
        ];
        assert_eq!(order(items), ["curated", "new", "old"]);
        // Only curated statements: their order is the ranking's.
        let items = vec![
            ("memory", f(0b11, None, false)),
            ("user", f(0b11, None, false)),
        ];
        assert_eq!(order(items), ["memory", "user"]);
    }
}
