//! Which fact is current. Windows that hold the same query words state something about the
//! same subject; when several do, they are one group, and the group's places in the ranking
//! go to its members newest note first (of two sessions of one day, the later by the time its
//! note gives), a fact the notes mark as replaced after every one that is not. An undated file
//! (the curated MEMORY.md and USER.md, a note without a date in its name) holds the state as of
//! the newest note, so it counts as new as the group's newest dated statement, and between the
//! two relevance decides (unless a note records leaving its value: see
//! [`change`](super::change)). No score threshold decides it: relevance says which subjects
//! make the page, dates say which statement of a subject comes first.

/// What ordering within a group needs to know of one ranked window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fact {
    /// The most telling query term the window holds (bit `q` for term `q`); 0 for none.
    pub subject: u64,
    /// Every query term the window holds.
    pub terms: u64,
    /// The note's day; `None` for undated files (the curated ones, notes named without a date).
    pub day: Option<i64>,
    /// When in its day the note was saved, where it says (a session-memory note); `None` for
    /// every other file.
    pub time: Option<u32>,
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
        later_first(&mut members, &facts, day);
        for (&place, &member) in places.iter().zip(&members) {
            order[place] = member;
            done[place] = true;
        }
    }
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Within each run of `members` of one day (and as replaced), the ones whose notes say when
/// in the day they were saved take the places the timed ones hold, later first; the others
/// keep theirs. Two sessions of one day state a fact and then its change ("the plan is Lisbon
/// on Friday", then "Friday moved to Porto"), and nothing but the time tells them apart; a
/// daily note of that day says nothing of when, so relevance keeps deciding its place.
fn later_first(members: &mut [usize], facts: &[Fact], day: impl Fn(usize) -> Option<i64>) {
    let mut start = 0;
    while start < members.len() {
        let first = members[start];
        let run = members[start..]
            .iter()
            .take_while(|&&i| facts[i].replaced == facts[first].replaced && day(i) == day(first))
            .count();
        let block = &mut members[start..start + run];
        let places: Vec<usize> = (0..block.len())
            .filter(|&at| facts[block[at]].time.is_some())
            .collect();
        let mut timed: Vec<usize> = places.iter().map(|&at| block[at]).collect();
        timed.sort_by_key(|&i| std::cmp::Reverse(facts[i].time));
        for (&at, member) in places.iter().zip(timed) {
            block[at] = member;
        }
        start += run;
    }
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
            time: None,
            replaced,
        }
    }

    fn at(fact: Fact, time: u32) -> Fact {
        Fact {
            time: Some(time),
            ..fact
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

    #[test]
    fn two_sessions_of_one_day_come_later_first_and_a_daily_note_keeps_its_place() {
        // Morning and evening sessions of day 20, that day's daily note between them by
        // relevance, an older note, and another subject in the middle.
        let items = vec![
            ("morning", at(f(0b11, Some(20), false), 9 * 3600)),
            ("daily", f(0b11, Some(20), false)),
            ("other", at(f(0b01, Some(20), false), 8 * 3600)),
            ("older", at(f(0b11, Some(19), false), 23 * 3600)),
            ("evening", at(f(0b11, Some(20), false), 21 * 3600)),
        ];
        assert_eq!(
            order(items),
            ["evening", "daily", "other", "morning", "older"]
        );
        // Replaced statements stay last, whatever their time.
        let items = vec![
            ("early", at(f(0b11, Some(20), false), 8 * 3600)),
            ("late struck", at(f(0b11, Some(20), true), 22 * 3600)),
            ("late", at(f(0b11, Some(20), false), 20 * 3600)),
        ];
        assert_eq!(order(items), ["late", "early", "late struck"]);
    }
}
