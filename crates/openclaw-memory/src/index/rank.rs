//! Re-ranking BM25 candidates: boosts for covering more of the query and for query words that
//! stand close together (a phrase), an optional recency decay for dated notes, and a score
//! floor. Each is a separate factor so later tuning (stemming, typo tolerance, smarter
//! recency) changes one function, not the index.
#![expect(
    clippy::cast_precision_loss,
    reason = "scores are approximate; counts and lengths stay far below 2^23"
)]

/// How the final score is put together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankOptions {
    /// Weight of query coverage: a chunk holding every query word scores up to `1 + this`
    /// times one that holds a single word of a long query.
    pub coverage_boost: f32,
    /// Weight of proximity: query words next to each other, in order, score up to `1 + this`.
    pub phrase_boost: f32,
    /// Half-life of the recency decay for dated notes, in days; `None` disables it. OpenClaw
    /// uses 30 when its temporal decay is on.
    pub recency_half_life_days: Option<f32>,
    /// Hits scoring below this are dropped (0 keeps everything that matched).
    pub min_score: f32,
}

impl Default for RankOptions {
    fn default() -> Self {
        Self {
            coverage_boost: 1.0,
            phrase_boost: 0.5,
            recency_half_life_days: None,
            min_score: 0.0,
        }
    }
}

/// Positions (token index within the chunk) past which two query words no longer count as
/// near each other.
const PROXIMITY_WINDOW: usize = 8;

/// The coverage factor: `1 + boost × (matched / total)²`, so covering every word of a
/// three-word query counts much more than covering two.
pub fn coverage_factor(options: &RankOptions, matched: usize, total: usize) -> f32 {
    if total == 0 {
        return 1.0;
    }
    let coverage = matched as f32 / total as f32;
    1.0 + options.coverage_boost * coverage * coverage
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
    fn full_coverage_beats_partial() {
        let o = RankOptions::default();
        assert!(coverage_factor(&o, 3, 3) > coverage_factor(&o, 2, 3));
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
