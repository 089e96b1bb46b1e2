//! Choosing which lines of a matching chunk to quote: the shortest run of at most
//! [`MAX_LINES`] lines that holds the most distinct query words, so a hit is a few lines an
//! agent can cite, not a whole file.

use crate::index::chunk::LineRange;

/// Longest quoted window, in lines.
pub const MAX_LINES: usize = 6;
/// Longest quoted text, in bytes (cut on a character boundary, marked with `…`).
pub const MAX_CHARS: usize = 700;

/// What a line of a chunk holds for a query: a bit mask of the query terms on it, and how much
/// it counts (1 for a plain line; less for a heading, which names a fact rather than stating
/// it, and for a superseded fact).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineMatch {
    /// Bit `q` set when query term `q` is on the line.
    pub mask: u64,
    /// How much the line counts, in `(0, 1]`.
    pub factor: f32,
}

/// The value of a window: each query term it holds counts its weight times the best factor of
/// the lines holding it.
pub fn window_value(lines: &[LineMatch], weights: &[f32]) -> f32 {
    weights
        .iter()
        .enumerate()
        .map(|(q, weight)| {
            let best = lines
                .iter()
                .filter(|l| l.mask & (1 << q) != 0)
                .map(|l| l.factor)
                .fold(0.0_f32, f32::max);
            weight * best
        })
        .sum()
}

/// Longest window ranked as one hit: a bullet and its continuation lines, or a short paragraph.
pub const UNIT_LINES: usize = 3;

/// The best window of at most `max_lines` lines not yet `used` (offsets into `lines`): the most
/// query weight, then the shortest. It starts and ends on lines holding a query term and has
/// no used line inside. `None` when no unused line holds one.
pub fn best_unit(
    lines: &[LineMatch],
    weights: &[f32],
    used: &[bool],
    max_lines: usize,
) -> Option<(usize, usize)> {
    let mut best: Option<(f32, usize, usize)> = None;
    for start in 0..lines.len() {
        if used[start] || lines[start].mask == 0 {
            continue;
        }
        for end in start..lines.len().min(start + max_lines.max(1)) {
            if used[end] {
                break;
            }
            if lines[end].mask == 0 {
                continue;
            }
            let value = window_value(&lines[start..=end], weights);
            let better = best.is_none_or(|(v, s, e)| {
                value > v + 1e-4 || ((value - v).abs() <= 1e-4 && end - start < e - s)
            });
            if better {
                best = Some((value, start, end));
            }
        }
    }
    best.map(|(_, start, end)| (start, end))
}

/// The lines to quote for a ranked window inside `chunk`: the window itself, and when it is a
/// lone heading, the lines under it too (a heading names a section, the lines state the fact).
pub fn quoted<'a>(
    window: LineRange,
    chunk: LineRange,
    line: impl Fn(usize) -> &'a str,
) -> LineRange {
    let (start, mut end) = (window.start, window.end);
    if start == end && line(start).trim_start().starts_with('#') && end < chunk.end {
        end += 1;
        while end < chunk.end && line(end).trim().is_empty() {
            end += 1;
        }
    }
    LineRange { start, end }
}

/// The best window of at most [`MAX_LINES`] lines inside a chunk starting at line `first`:
/// the most query weight ([`window_value`], with `weights` per query term), then the shortest,
/// then the one with more matching lines. Lines are 0-based and absolute.
pub fn best_window<'a>(
    lines: &[LineMatch],
    weights: &[f32],
    first: usize,
    line: impl Fn(usize) -> &'a str,
) -> LineRange {
    let n = lines.len();
    // (value, matching lines, start, end)
    let mut best: Option<(f32, usize, usize, usize)> = None;
    for start in 0..n {
        if lines[start].mask == 0 {
            continue;
        }
        let mut matching = 0;
        for end in start..n.min(start + MAX_LINES) {
            if lines[end].mask == 0 {
                continue;
            }
            matching += 1;
            let value = window_value(&lines[start..=end], weights);
            let better = best.is_none_or(|(v, m, s, e)| {
                let (span, best_span) = (end - start, e - s);
                value > v + 1e-4
                    || ((value - v).abs() <= 1e-4
                        && (span < best_span || (span == best_span && matching > m)))
            });
            if better {
                best = Some((value, matching, start, end));
            }
        }
    }
    let Some((_, _, start, end)) = best else {
        // No line holds a query word on its own (e.g. a term split across lines): quote the
        // chunk's first non-blank lines.
        let start = (first..first + n)
            .find(|&i| !line(i).trim().is_empty())
            .unwrap_or(first);
        let end = (start + MAX_LINES - 1).min(first + n.saturating_sub(1));
        return LineRange { start, end };
    };
    let (mut start, mut end) = (first + start, first + end);
    // A heading alone names a section; quote the line under it too.
    if start == end && line(start).trim_start().starts_with('#') && end + 1 < first + n {
        end += 1;
        while end + 1 < first + n && line(end).trim().is_empty() {
            end += 1;
        }
    }
    if line(start).trim().is_empty() {
        start += 1;
    }
    LineRange { start, end }
}

/// The quoted text of `window`, capped at [`MAX_CHARS`].
pub fn text<'a>(window: LineRange, line: impl Fn(usize) -> &'a str) -> String {
    let mut out = String::new();
    for i in window.start..=window.end {
        if i > window.start {
            out.push('\n');
        }
        out.push_str(line(i));
    }
    if out.len() > MAX_CHARS {
        let mut cut = MAX_CHARS;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn matches(masks: &[u64]) -> Vec<LineMatch> {
        masks
            .iter()
            .map(|&mask| LineMatch { mask, factor: 1.0 })
            .collect()
    }

    #[test]
    fn picks_the_lines_covering_most_query_words() {
        let lines = ["# Day", "- alpha", "- nothing", "- alpha beta", "- gamma"];
        let masks = matches(&[0, 0b001, 0, 0b011, 0b100]);
        let window = best_window(&masks, &[1.0, 1.0, 1.0], 10, |i| lines[i - 10]);
        assert_eq!(window, LineRange { start: 13, end: 14 });
    }

    #[test]
    fn a_rare_word_outweighs_a_common_one_and_a_heading_brings_its_first_line() {
        let mut lines = vec!["- Maya asked for coffee"];
        lines.extend(["- nothing"; MAX_LINES]);
        lines.extend(["## Car", "- sold it"]);
        let mut masks = matches(&[0; MAX_LINES + 3]);
        masks[0].mask = 0b01;
        masks[MAX_LINES + 1].mask = 0b10;
        // Term 0 is common (weight 0.5), term 1 rare (weight 4); they are too far apart for
        // one window.
        let window = best_window(&masks, &[0.5, 4.0], 0, |i| lines[i]);
        let heading = MAX_LINES + 1;
        assert_eq!(
            window,
            LineRange {
                start: heading,
                end: heading + 1
            }
        );
    }

    #[test]
    fn a_superseded_line_loses_to_the_line_that_replaced_it() {
        let lines = ["- meetings after 09:00", "", "- meetings after 10:00"];
        let mut masks = matches(&[0b1, 0, 0b1]);
        masks[0].factor = 0.3;
        let window = best_window(&masks, &[1.0], 0, |i| lines[i]);
        assert_eq!(window, LineRange { start: 2, end: 2 });
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary() {
        let long = "é".repeat(MAX_CHARS);
        let text = text(LineRange { start: 0, end: 0 }, |_| long.as_str());
        assert!(text.ends_with('…'));
        assert!(text.len() <= MAX_CHARS + '…'.len_utf8());
    }
}
