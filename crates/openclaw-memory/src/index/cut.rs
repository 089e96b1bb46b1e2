//! Keeping the best few of many candidates, with exact ties at the cut settled by where the
//! candidates stand in the workspace. Chunk ids and file slots follow the index's history (an
//! edited note's chunks get new ids), so a cut that kept whichever tied candidates came first
//! in id order would answer the same workspace one way in an index that has seen edits (and
//! the index file it saves) and another in a fresh build. Only ties that straddle the cut are
//! settled; a cut without one costs a pass over the kept part. (In the tuned set's words-only
//! searches, 49 of the 84 cuts straddle a tie of 2 to 10 candidates: generated notes are alike
//! in length.)

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Keeps the `keep` best of `items` by `order` (best first), in no particular order. Of the
/// items tied exactly with the best one left out, those kept are the first by `place`, which
/// must tell tied items apart (a path and a line do).
pub(super) fn keep_best<T: Copy, P: Ord>(
    items: &mut Vec<T>,
    keep: usize,
    order: impl Fn(&T, &T) -> Ordering,
    place: impl Fn(&T) -> P,
) {
    if items.len() <= keep {
        return;
    }
    if keep == 0 {
        items.clear();
        return;
    }
    // Everything before `keep` is at least as good as the item there, the best one left out.
    items.select_nth_unstable_by(keep, &order);
    let edge = items[keep];
    if items[..keep].iter().any(|item| order(item, &edge).is_eq()) {
        settle_ties(items, keep, |item| order(item, &edge).is_eq(), place);
    }
    items.truncate(keep);
}

/// Replaces the items `is_tied` among the first `keep` with the first of all tied items by
/// `place`. Kept out of line: inlined into the search, its first form made a words-only search
/// 6 % slower, ties or not (in process on the tuned set; see BENCHMARKS.md).
#[inline(never)]
fn settle_ties<T: Copy, P: Ord>(
    items: &mut Vec<T>,
    keep: usize,
    is_tied: impl Fn(&T) -> bool,
    place: impl Fn(&T) -> P,
) {
    let kept = items[..keep].iter().filter(|item| is_tied(item)).count();
    // The `kept` first tied items by place, in a heap whose top is the last of them: a
    // workspace of like notes can tie thousands of candidates, and most are turned away by
    // one comparison with the top.
    let mut first: BinaryHeap<Placed<P, T>> = BinaryHeap::with_capacity(kept + 1);
    for item in items.iter().filter(|item| is_tied(item)) {
        let place = place(item);
        if first.len() == kept && first.peek().is_some_and(|top| place >= top.0) {
            continue;
        }
        first.push(Placed(place, *item));
        if first.len() > kept {
            first.pop();
        }
    }
    items.truncate(keep);
    items.retain(|item| !is_tied(item));
    items.extend(first.into_iter().map(|Placed(_, item)| item));
}

/// An item ordered by its place alone.
struct Placed<P, T>(P, T);

impl<P: Ord, T> PartialEq for Placed<P, T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<P: Ord, T> Eq for Placed<P, T> {}

impl<P: Ord, T> PartialOrd for Placed<P, T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<P: Ord, T> Ord for Placed<P, T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::keep_best;

    fn kept<P: Ord + Copy>(mut items: Vec<(u32, P)>, keep: usize) -> Vec<(u32, P)> {
        keep_best(&mut items, keep, |a, b| b.0.cmp(&a.0), |item| item.1);
        items.sort_unstable();
        items
    }

    #[test]
    fn ties_at_the_cut_are_kept_by_place_whatever_order_they_came_in() {
        let items = vec![
            (5, 'z'),
            (3, 'd'),
            (3, 'b'),
            (9, 'y'),
            (3, 'c'),
            (3, 'a'),
            (1, 'x'),
        ];
        let expected = vec![(3, 'a'), (3, 'b'), (5, 'z'), (9, 'y')];
        assert_eq!(kept(items.clone(), 4), expected);
        let mut reversed = items;
        reversed.reverse();
        assert_eq!(kept(reversed, 4), expected);
    }

    #[test]
    fn without_ties_at_the_cut_the_best_are_kept() {
        let items = vec![(5, 'z'), (3, 'd'), (9, 'y'), (1, 'x')];
        assert_eq!(kept(items.clone(), 2), vec![(5, 'z'), (9, 'y')]);
        assert_eq!(kept(items.clone(), 4).len(), 4);
        assert_eq!(kept(items.clone(), 9).len(), 4);
        assert!(kept(items, 0).is_empty());
    }

    #[test]
    fn of_many_ties_the_first_by_place_are_kept() {
        // 1,000 tied items in a scrambled order, 3 better ones, 10 places.
        let mut items: Vec<(u32, u32)> = (0..1000).map(|i| (1, (i * 7919) % 1000)).collect();
        items.extend([(5, 2000), (6, 2001), (7, 2002)]);
        keep_best(&mut items, 10, |a, b| b.0.cmp(&a.0), |item| item.1);
        items.sort_unstable_by_key(|item| item.1);
        let places: Vec<u32> = items.iter().map(|item| item.1).collect();
        assert_eq!(places, [0, 1, 2, 3, 4, 5, 6, 2000, 2001, 2002]);
    }

    #[test]
    fn it_keeps_what_sorting_by_order_then_place_keeps() {
        // Scores from a small range, so most items tie; places a shuffled 0..n, so each tells
        // its item apart. Every `keep` from none to all.
        let mut rng = fastrand::Rng::with_seed(14);
        for _ in 0..200 {
            let n = rng.usize(1..40);
            let mut places: Vec<u32> = (0..u32::try_from(n).unwrap()).collect();
            rng.shuffle(&mut places);
            let items: Vec<(u32, u32)> = places.iter().map(|&p| (rng.u32(0..4), p)).collect();
            let mut sorted = items.clone();
            sorted.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            for keep in 0..=n {
                let mut expected = sorted[..keep].to_vec();
                expected.sort_unstable();
                assert_eq!(
                    kept(items.clone(), keep),
                    expected,
                    "{items:?}, keep {keep}"
                );
            }
        }
    }

    #[test]
    fn ties_wholly_inside_the_kept_part_are_all_kept() {
        let items = vec![(4, 'b'), (4, 'a'), (9, 'y'), (1, 'x'), (1, 'w')];
        assert_eq!(kept(items, 3), vec![(4, 'a'), (4, 'b'), (9, 'y')]);
    }
}
