//! Keeping the best few of many candidates, with exact ties at the cut settled by where the
//! candidates stand in the workspace. Chunk ids and file slots follow the index's history (an
//! edited note's chunks get new ids), so a cut that kept whichever tied candidates came first
//! in id order would answer the same workspace one way in an index that has seen edits (and
//! the index file it saves) and another in a fresh build. Only ties that straddle the cut are
//! settled; a cut without one costs a pass over the kept part. (In the tuned set's words-only
//! searches, 49 of the 84 cuts straddle a tie of 2 to 10 candidates: generated notes are alike
//! in length.)

use std::cmp::Ordering;

/// Keeps the `keep` best of `items` by `order` (best first), in no particular order. Of the
/// items tied exactly with the best one left out, those kept are the first by `place`.
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
/// `place`. Kept out of line: inlined into the search, it made a words-only search 6 % slower,
/// ties or not (measured in process on the tuned set).
#[inline(never)]
fn settle_ties<T: Copy, P: Ord>(
    items: &mut Vec<T>,
    keep: usize,
    is_tied: impl Fn(&T) -> bool,
    place: impl Fn(&T) -> P,
) {
    let kept = items[..keep].iter().filter(|item| is_tied(item)).count();
    let mut ties: Vec<T> = items.iter().filter(|item| is_tied(item)).copied().collect();
    ties.select_nth_unstable_by(kept - 1, |a, b| place(a).cmp(&place(b)));
    ties.truncate(kept);
    items.truncate(keep);
    items.retain(|item| !is_tied(item));
    items.extend(ties);
}

#[cfg(test)]
mod tests {
    use super::keep_best;

    fn kept(mut items: Vec<(u32, char)>, keep: usize) -> Vec<(u32, char)> {
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
    fn ties_wholly_inside_the_kept_part_are_all_kept() {
        let items = vec![(4, 'b'), (4, 'a'), (9, 'y'), (1, 'x'), (1, 'w')];
        assert_eq!(kept(items, 3), vec![(4, 'a'), (4, 'b'), (9, 'y')]);
    }
}
