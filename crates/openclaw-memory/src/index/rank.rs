//! How windows are scored and cut, and which parts of the ranking are switched on. A window
//! scores the query weight it holds (each query word's IDF, so rare words count most; see
//! [`query`](super::query)), more when it covers more of the query and when its query words
//! stand close together. Statements of the same subject are ordered newest first
//! ([`current`](super::current)), a `MEMORY.md` line follows the note it restates
//! ([`source`](super::source)), and a curated line the dated notes record as changed follows
//! the note that changed it ([`change`](super::change)); a preference question is answered by
//! `USER.md` first; a short confident page gets the best note naming its answer
//! ([`follow`](super::follow)); an optional half-life decay; and the floors that let a query
//! with no answer come back empty or with a few hits marked weak. The factors that once sat
//! beside these (the kind of thing a question asks for, a newness edge, section context, a
//! focus discount, heading and superseded discounts, near-repeat hold-back) were measured off
//! in turn on the labelled sets and removed for not helping; BENCHMARKS.md has the tables.
#![expect(
    clippy::cast_precision_loss,
    reason = "scores are approximate; counts and ages stay far below 2^23"
)]

/// How the final score is put together. The switches exist for the ablation in
/// `tests/relevance.rs`; the server uses the defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent on/off switches, one per ranking component, for the ablation"
)]
pub struct RankOptions {
    /// Weight of query coverage: a window holding every query word scores up to `1 + this`
    /// times its plain query weight, so covering the rare words of a query counts much more
    /// than covering the common ones. 1: a whole-query match counts double. On nDCG@5 it is
    /// neutral on the held-out set, but it is what spreads the scores apart enough for
    /// [`Self::relative_floor`] to cut a no-answer query whose words happen to share a section
    /// down to the few hits the guess limit allows (without it, "When is Sam's birthday?" got
    /// five confident hits on the tuned set).
    pub coverage_boost: f32,
    /// Weight of proximity: query words next to each other, in order, score up to
    /// `1 + this`. 0.5: a phrase match counts half again, less than covering the query.
    /// Neutral on the held-out set; kept for word forms and phrases on the tuned set, without
    /// which ranking by words alone falls under the margin over plain BM25 there.
    pub phrase_boost: f32,
    /// Half-life of an exponential decay for dated notes, in days; `None` (the default)
    /// disables it. OpenClaw uses 30 when its temporal decay is on; measured, it hurts both
    /// labelled sets (old facts are still asked for), so it stays opt-in.
    pub recency_half_life_days: Option<f32>,
    /// Share of the query's IDF a window must hold to be a hit at all: a window matching only
    /// the common words of a query (or none of the words the notes never use) is no answer.
    /// A search following the answer ([`Self::follow_answer`]) applies it to its own query,
    /// the answer's words.
    pub min_coverage: f32,
    /// Hits scoring below this share of the best hit are dropped.
    pub relative_floor: f32,
    /// Hits scoring below this are dropped (0 keeps everything that matched).
    pub min_score: f32,
    /// Share of the query's IDF the best hit must hold for the search to return a full page;
    /// below it the search is a guess and returns at most [`Self::guess_limit`] hits, marked
    /// weak.
    pub confident_coverage: f32,
    /// Most hits returned when the best one holds less than [`Self::confident_coverage`].
    pub guess_limit: usize,
    /// When no window holds [`Self::min_coverage`] of the query and no line is close in
    /// meaning, the windows holding less are returned as a guess (at most
    /// [`Self::guess_limit`], marked weak) instead of nothing. Words only, it gains the tuned
    /// set 0.008, the held-out set 0.010 and the changes set 0.027 (the second held-out set is
    /// unchanged); no-answer queries still get at most 2 weak hits. With the model an empty
    /// page is rare: the close lines fill it first.
    pub guess_below_coverage: bool,
    /// Word forms share a term (Porter2 stemming). Read when the index is built.
    pub stemming: bool,
    /// Query words the notes never use are matched to the closest word they do use.
    pub typo_tolerance: bool,
    /// Windows stating something about the same subject are one group, ordered newest note
    /// first, a fact marked replaced after the ones that are not.
    pub current_facts: bool,
    /// In a lookup (a query that is not a question: "Luis switched banks"), a window whose
    /// section holds most of the query ([`Self::confident_coverage`]) keeps its place in its
    /// group against newer ones holding less than that share, and any window keeps it against
    /// a newer one telling the same thing of other query words (most of their terms shared:
    /// "Amara's laptop died …; lent a spare charger", then Jonas's). A question ("What phone
    /// does Maya have?") asks what is true now, and a newer statement may word it differently.
    pub lookups_keep_matches: bool,
    /// A hit from an undated file (`MEMORY.md`) whose value a dated note records leaving
    /// ("Gym: PureGym" and "Cancelled PureGym and joined Bodyworks") is preceded on the page by
    /// that note ([`change`](super::change)).
    pub recorded_changes: bool,
    /// A preference question (it holds "should", "want", "prefer" or "rather": "how early
    /// should reminders go out") is answered by `USER.md` first: every `USER.md` section
    /// holding a query word is a candidate, and its windows, then its lines close in meaning,
    /// come before the notes'.
    pub preference_directives: bool,
    /// A curated `MEMORY.md` window comes right after a note restating it, its source, when
    /// that note is the newest statement of the query words the window holds and the notes
    /// record no change of it ([`source`](super::source)).
    pub source_notes_first: bool,
    /// A confident page of no more hits than a guess gets ([`Self::guess_limit`]) gets one
    /// more: the best window holding enough ([`Self::min_coverage`]) of the telling words of
    /// its first hit's sentences that answer the query, other than the query's own, a note
    /// that names the answer ([`follow`](super::follow)).
    pub follow_answer: bool,
    /// A message of an OpenClaw session-memory note (one line per message, its own line breaks
    /// escaped) is as close in meaning as the closest of its own lines, the role word left out,
    /// rather than the sum of all its words ([`transcript`](super::transcript)).
    pub message_lines: bool,
    /// A page quotes a text once: a window or a close line quoting exactly what a hit already
    /// on the page quotes is passed over for the next ("Bought a birthday present for a
    /// classmate's party" from two daily notes, one assistant reply from four sessions), since
    /// the second quote tells a reader nothing the first did not.
    pub distinct_quotes: bool,
    /// When the search is a guess (no section holds most of the query) and an embedding model
    /// is in use, the lines closest in meaning to the query, with at least this cosine
    /// similarity, take turns with the best windows of words. `None` turns it off. 0.25: on
    /// the tuned set every floor from 0.2 to 0.35 ranks the same (0.45 loses 0.023); 0.35
    /// turned away the one close line of a small workspace ("who looks after her teeth" for
    /// the dentist's line, 0.31 against 0.07 for every other line), so the middle of that
    /// range, not its top.
    pub meaning_similarity: Option<f32>,
}

impl Default for RankOptions {
    fn default() -> Self {
        Self {
            coverage_boost: 1.0,
            phrase_boost: 0.5,
            recency_half_life_days: None,
            min_coverage: 0.3,
            relative_floor: 0.25,
            min_score: 0.0,
            confident_coverage: 0.7,
            guess_limit: 2,
            guess_below_coverage: true,
            stemming: true,
            typo_tolerance: true,
            current_facts: true,
            lookups_keep_matches: true,
            recorded_changes: true,
            preference_directives: true,
            source_notes_first: true,
            follow_answer: true,
            message_lines: true,
            distinct_quotes: true,
            meaning_similarity: Some(0.25),
        }
    }
}

/// Positions (token index within the chunk) past which two query words no longer count as
/// near each other.
const PROXIMITY_WINDOW: usize = 8;

/// The coverage factor: `1 + boost × covered²`, where `covered` is the share of the query's
/// IDF the chunk holds, so covering the rare words of a query counts much more than covering
/// the common ones.
pub fn coverage_factor(options: &RankOptions, covered: f32) -> f32 {
    let covered = covered.clamp(0.0, 1.0);
    1.0 + options.coverage_boost * covered * covered
}

/// The proximity factor from each query term's positions in the chunk (`positions[i]` for the
/// i-th query term, ascending; empty for a term the window lacks). Consecutive query terms
/// found adjacent and in order score 1, further apart less, beyond [`PROXIMITY_WINDOW`]
/// nothing; the factor is `1 + boost × mean over consecutive pairs` of the terms present.
pub fn proximity_factor(options: &RankOptions, positions: &[Vec<usize>]) -> f32 {
    let mut present = positions.iter().filter(|p| !p.is_empty());
    let Some(mut previous) = present.next() else {
        return 1.0;
    };
    let (mut pairs, mut total) = (0_usize, 0.0_f32);
    for next in present {
        total += pair_closeness(previous, next);
        pairs += 1;
        previous = next;
    }
    if pairs == 0 {
        return 1.0;
    }
    1.0 + options.phrase_boost * total / pairs as f32
}

/// The most [`proximity_factor`] can give a window holding `terms` distinct query terms: every
/// two of them side by side and in order, which needs two. The search skips a window that
/// could not beat the ones it keeps even with this.
pub fn most_proximity(options: &RankOptions, terms: u32) -> f32 {
    if terms < 2 {
        return 1.0;
    }
    1.0 + options.phrase_boost.max(0.0)
}

fn pair_closeness(first: &[usize], second: &[usize]) -> f32 {
    let mut best = 0.0_f32;
    for &a in first {
        for &b in second {
            let closeness = if b == a + 1 {
                1.0
            } else {
                let distance = a.abs_diff(b);
                if distance == 0 || distance > PROXIMITY_WINDOW {
                    0.0
                } else {
                    // Out of order or with words between: partial credit, shrinking with distance.
                    0.75 * (1.0 - (distance - 1) as f32 / PROXIMITY_WINDOW as f32)
                }
            };
            best = best.max(closeness);
        }
    }
    best
}

/// The recency factor for a note dated `day` (days since the epoch) seen on `today`:
/// `0.5^(age / half-life)`; undated notes, disabled decay or an unknown today give 1.
pub fn recency_factor(options: &RankOptions, day: Option<i64>, today: Option<i64>) -> f32 {
    match (options.recency_half_life_days, day, today) {
        (Some(half_life), Some(day), Some(today)) if half_life > 0.0 => {
            let age = (today - day).max(0) as f32;
            0.5_f32.powf(age / half_life)
        }
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_in_order_beats_apart_beats_absent() {
        let o = RankOptions::default();
        let adjacent = proximity_factor(&o, &[vec![3], vec![4]]);
        let apart = proximity_factor(&o, &[vec![3], vec![8]]);
        let far = proximity_factor(&o, &[vec![3], vec![40]]);
        assert!(adjacent > apart && apart > far, "{adjacent} {apart} {far}");
        // A term the window lacks leaves the pair of the terms around it.
        let skipping = proximity_factor(&o, &[vec![3], vec![], vec![4]]);
        assert!((skipping - adjacent).abs() < f32::EPSILON);
        assert!((far - 1.0).abs() < f32::EPSILON);
    }

    #[test]
    fn no_window_scores_above_the_most_proximity_allows() {
        let o = RankOptions::default();
        for positions in [
            vec![vec![3], vec![4], vec![5]],
            vec![vec![3], vec![], vec![4]],
            vec![vec![0, 9], vec![1, 10]],
            vec![vec![7]],
        ] {
            let held = positions.iter().filter(|p| !p.is_empty()).count();
            let most = most_proximity(&o, u32::try_from(held).unwrap_or(u32::MAX));
            assert!(proximity_factor(&o, &positions) <= most, "{positions:?}");
        }
        assert!(
            (most_proximity(&o, 3) - proximity_factor(&o, &[vec![3], vec![4], vec![5]])).abs()
                < f32::EPSILON
        );
    }

    #[test]
    fn full_coverage_beats_partial() {
        let o = RankOptions::default();
        assert!(coverage_factor(&o, 1.0) > coverage_factor(&o, 0.6));
    }

    #[test]
    fn recency_halves_per_half_life_and_is_off_by_default() {
        let on = RankOptions {
            recency_half_life_days: Some(30.0),
            ..RankOptions::default()
        };
        assert!((recency_factor(&on, Some(0), Some(30)) - 0.5).abs() < 1e-6);
        assert!((recency_factor(&on, None, Some(30)) - 1.0).abs() < 1e-6);
        assert!((recency_factor(&RankOptions::default(), Some(0), Some(300)) - 1.0).abs() < 1e-6);
    }
}
