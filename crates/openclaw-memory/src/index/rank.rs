//! Re-ranking BM25 candidates: boosts for covering more of the query (by IDF, so the rare
//! words count most) and for query words that stand close together (a phrase), a mild
//! preference for newer notes that settles ties between conflicting facts without burying old
//! ones, a demotion for superseded facts, an optional half-life decay, and the floors that let
//! a query with no answer come back empty. Each is a separate factor.
#![expect(
    clippy::cast_precision_loss,
    reason = "scores are approximate; counts and lengths stay far below 2^23"
)]

/// How the final score is put together.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent switches, each turned off alone by the ablation in tests/relevance.rs"
)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankOptions {
    /// Weight of query coverage: a chunk holding every query word scores up to `1 + this`
    /// times one that holds none of the query's weight.
    pub coverage_boost: f32,
    /// Weight of proximity: query words next to each other, in order, score up to `1 + this`.
    pub phrase_boost: f32,
    /// How much more the newest dated note scores than the oldest (MEMORY.md and USER.md, the
    /// curated files, count as newest). Small on purpose: it decides between two notes that
    /// match about equally — an old fact and its replacement — and never hides a year-old
    /// note that matches better.
    pub newness_boost: f32,
    /// Half-life of an exponential decay for dated notes, in days; `None` (the default)
    /// disables it. OpenClaw uses 30 when its temporal decay is on.
    pub recency_half_life_days: Option<f32>,
    /// Factor for a chunk whose matching lines all hold replaced facts (superseded `USER.md`
    /// directives, struck-through text).
    pub superseded_factor: f32,
    /// Share of the query's IDF a chunk must hold to be a hit at all: a chunk matching only
    /// the common words of a query (or none of the words the notes never use) is no answer.
    pub min_coverage: f32,
    /// Hits scoring below this share of the best hit are dropped.
    pub relative_floor: f32,
    /// Hits scoring below this are dropped (0 keeps everything that matched).
    pub min_score: f32,
    /// How much a query word elsewhere in a hit's chunk (its section) counts, against the
    /// same word in the quoted lines.
    pub context_weight: f32,
    /// How strongly longer windows are discounted (0: not at all): the same words in a short
    /// line state a fact more directly than in a long paragraph.
    pub focus: f32,
    /// Share of the query's IDF the best hit must hold for the search to return a full page;
    /// below it the search is a guess and returns at most [`Self::guess_limit`] hits.
    pub confident_coverage: f32,
    /// Most hits returned when the best one holds less than [`Self::confident_coverage`];
    /// they are marked weak.
    pub guess_limit: usize,
    /// How much a heading line counts toward a window: it names a section, the lines under it
    /// state the facts.
    pub heading_factor: f32,
    /// Word forms share a term (Porter2 stemming). Read when the index is built.
    pub stemming: bool,
    /// Query words the notes never use are matched to the closest word they do use.
    pub typo_tolerance: bool,
    /// A window sharing most of its words with one already shown (a routine line logged
    /// again) waits until the end.
    pub near_repeats: bool,
    /// Windows stating something about the same subject (the same query words) are one
    /// group, ordered newest note first, a superseded fact after the one that replaced it.
    pub current_facts: bool,
    /// Factor `1 + this` for a window holding what the query asks for: a place for "where",
    /// a date for "when", a person for "who", a number for "how many", an active `USER.md`
    /// directive for a question about preferences. 0 turns it off.
    pub answer_type_boost: f32,
    /// A question about preferences reaches `USER.md`'s active directives even when they
    /// share a single word with it (the coverage floors do not apply to them).
    pub preference_reach: bool,
}

impl Default for RankOptions {
    fn default() -> Self {
        Self {
            coverage_boost: 1.0,
            phrase_boost: 0.5,
            newness_boost: 0.25,
            recency_half_life_days: None,
            superseded_factor: 0.4,
            min_coverage: 0.3,
            relative_floor: 0.25,
            min_score: 0.0,
            context_weight: 0.3,
            focus: 0.2,
            confident_coverage: 0.7,
            guess_limit: 2,
            heading_factor: 0.5,
            stemming: true,
            typo_tolerance: true,
            near_repeats: true,
            current_facts: true,
            answer_type_boost: 0.5,
            preference_reach: true,
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

/// The newness factor: `1 + boost × position`, where position runs from 0 for the oldest dated
/// note to 1 for the newest (and undated, curated files); 1 when nothing is dated.
pub fn newness_factor(options: &RankOptions, day: Option<i64>, span: Option<(i64, i64)>) -> f32 {
    let position = match (day, span) {
        (Some(day), Some((first, last))) if last > first => {
            (day - first) as f32 / (last - first) as f32
        }
        _ => 1.0,
    };
    1.0 + options.newness_boost * position.clamp(0.0, 1.0)
}

/// The proximity factor from each query term's positions in the chunk (`positions[i]` for the
/// i-th query term, ascending). Consecutive query terms found adjacent and in order score 1,
/// further apart less, beyond [`PROXIMITY_WINDOW`] nothing; the factor is
/// `1 + boost × mean over consecutive pairs`.
pub fn proximity_factor(options: &RankOptions, positions: &[Vec<usize>]) -> f32 {
    if positions.len() < 2 {
        return 1.0;
    }
    let pairs = positions.len() - 1;
    let total: f32 = positions
        .windows(2)
        .map(|pair| pair_closeness(&pair[0], &pair[1]))
        .sum();
    1.0 + options.phrase_boost * total / pairs as f32
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

/// Terms in a typical quoted window (a bullet of about a dozen meaningful words).
const TYPICAL_WINDOW_TERMS: f32 = 10.0;

/// The focus factor of a window holding `terms` meaningful words: `1 / (1 − f + f × terms /
/// typical)`, BM25's length normalisation applied to the quoted lines.
pub fn focus_factor(options: &RankOptions, terms: usize) -> f32 {
    let f = options.focus.clamp(0.0, 1.0);
    1.0 / (1.0 - f + f * terms as f32 / TYPICAL_WINDOW_TERMS).max(0.1)
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
        assert!((far - 1.0).abs() < f32::EPSILON);
    }

    #[test]
    fn short_windows_count_more_than_long_ones_unless_focus_is_off() {
        let o = RankOptions::default();
        assert!(focus_factor(&o, 5) > focus_factor(&o, 10));
        assert!(focus_factor(&o, 10) > focus_factor(&o, 30));
        let off = RankOptions {
            focus: 0.0,
            ..RankOptions::default()
        };
        assert!((focus_factor(&off, 5) - focus_factor(&off, 30)).abs() < 1e-6);
    }

    #[test]
    fn full_coverage_beats_partial() {
        let o = RankOptions::default();
        assert!(coverage_factor(&o, 1.0) > coverage_factor(&o, 0.6));
    }

    #[test]
    fn newer_notes_get_a_small_edge_and_curated_files_count_as_newest() {
        let o = RankOptions::default();
        let span = Some((100, 500));
        let old = newness_factor(&o, Some(100), span);
        let new = newness_factor(&o, Some(500), span);
        assert!((old - 1.0).abs() < 1e-6 && new > old && new <= 1.0 + o.newness_boost);
        assert!((newness_factor(&o, None, span) - new).abs() < 1e-6);
        assert!((newness_factor(&o, Some(3), None) - new).abs() < 1e-6);
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
