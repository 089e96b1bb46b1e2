//! Choosing which lines of a matching chunk are ranked and quoted: short runs of at most
//! [`UNIT_LINES`] lines (a bullet and its continuation, a short paragraph) holding the most
//! query weight, so a hit is a few lines an agent can cite, not a whole file, and one section
//! can answer with several separate facts.

use crate::index::chunk::LineRange;

/// Longest quoted text, in bytes (cut on a character boundary, marked with `…`).
pub const MAX_CHARS: usize = 700;

/// What a line of a chunk holds for a query: a bit mask of the query terms on it, and how much
/// it counts (1 today: the heading and superseded discounts were measured and removed, see
/// BENCHMARKS.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineMatch {
    /// Bit `q` set when query term `q` is on the line.
    pub mask: u64,
    /// How much the line counts, in `(0, 1]`.
    pub factor: f32,
    /// The line is a heading: it opens what follows it, so a window may start on it but
    /// never run on into it.
    pub heading: bool,
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

/// The windows of at most `max_lines` lines worth ranking, best first and never overlapping:
/// each is the one with the most query weight, then the shortest, then the first, among those
/// sharing no line with an earlier one. A window starts and ends on lines holding a query term
/// and has no heading but on its first line (a heading opens what follows it, not what comes
/// before).
pub fn units(lines: &[LineMatch], weights: &[f32], max_lines: usize) -> Units {
    let mut windows = Vec::with_capacity(lines.len() * max_lines.max(1));
    for start in 0..lines.len() {
        if lines[start].mask == 0 {
            continue;
        }
        for end in start..lines.len().min(start + max_lines.max(1)) {
            if end > start && lines[end].heading {
                break;
            }
            if lines[end].mask != 0 {
                windows.push((window_value(&lines[start..=end], weights), start, end));
            }
        }
    }
    // Every window has its own first line and length, so the order is total and needs no
    // stable sort.
    windows.sort_unstable_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then((a.2 - a.1).cmp(&(b.2 - b.1)))
            .then(a.1.cmp(&b.1))
    });
    windows.reverse();
    Units {
        windows,
        used: vec![false; lines.len()],
    }
}

/// The windows [`units`] picks, taken one at a time: each costs only the check that none of
/// its lines was taken, however many windows a section holds.
#[derive(Debug)]
pub struct Units {
    /// Every window as (value, first line, last line), the best last.
    windows: Vec<(f32, usize, usize)>,
    used: Vec<bool>,
}

impl Iterator for Units {
    /// (value, first line, last line).
    type Item = (f32, usize, usize);

    fn next(&mut self) -> Option<Self::Item> {
        while let Some((value, start, end)) = self.windows.pop() {
            if self.used[start..=end].iter().any(|&u| u) {
                continue;
            }
            self.used[start..=end].fill(true);
            return Some((value, start, end));
        }
        None
    }
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

/// At least this much of a long hit's text is quoted after the first word it matched: when
/// the word sits later than [`MAX_CHARS`] minus this, the quote starts shortly before it.
const AFTER_FOCUS: usize = 200;

/// How much is quoted before that word when the quote starts there.
const BEFORE_FOCUS: usize = 100;

/// The quoted text of `window`, capped at [`MAX_CHARS`]. `focus` is the byte offset, in the
/// window's lines joined by line breaks, of the first word the hit matched: a long message or
/// paragraph whose match lies past the cap is quoted from shortly before that word, marked
/// with a leading `…`, rather than from its start without the words that matched.
pub fn text<'a>(
    window: LineRange,
    line: impl Fn(usize) -> &'a str,
    focus: Option<usize>,
) -> String {
    let mut out = String::new();
    for i in window.start..=window.end {
        if i > window.start {
            out.push('\n');
        }
        out.push_str(line(i));
    }
    if out.len() <= MAX_CHARS {
        return out;
    }
    if let Some(focus) = focus.filter(|&f| f + AFTER_FOCUS > MAX_CHARS && f < out.len()) {
        let mut start = focus.saturating_sub(BEFORE_FOCUS);
        while !out.is_char_boundary(start) {
            start += 1;
        }
        // From the start of a word: just after the first space in the lead, if it has one.
        if let Some(space) = out[start..focus].find(char::is_whitespace) {
            start += space + 1;
        }
        out.replace_range(..start, "…");
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
            .map(|&mask| LineMatch {
                mask,
                factor: 1.0,
                heading: false,
            })
            .collect()
    }

    fn first(masks: &[LineMatch], weights: &[f32]) -> Option<(usize, usize)> {
        units(masks, weights, UNIT_LINES)
            .next()
            .map(|(_, start, end)| (start, end))
    }

    #[test]
    fn picks_the_lines_covering_most_query_words() {
        let masks = matches(&[0, 0b001, 0, 0b011, 0b100]);
        assert_eq!(first(&masks, &[1.0, 1.0, 1.0]), Some((3, 4)));
    }

    #[test]
    fn a_rare_word_outweighs_a_common_one_in_a_window_of_its_own() {
        // Term 0 is common (weight 0.5), term 1 rare (weight 4); too far apart for one window.
        let masks = matches(&[0b01, 0, 0, 0, 0b10]);
        assert_eq!(first(&masks, &[0.5, 4.0]), Some((4, 4)));
    }

    #[test]
    fn later_windows_never_overlap_earlier_ones() {
        // Lines 0..=2 hold both terms together; then line 3 alone, not 2..=3 (line 2 is
        // taken); every other window shares a line with these two.
        let masks = matches(&[0b01, 0, 0b10, 0b10]);
        let picked: Vec<(usize, usize)> = units(&masks, &[1.0, 2.0], UNIT_LINES)
            .map(|(_, start, end)| (start, end))
            .collect();
        assert_eq!(picked, [(0, 2), (3, 3)]);
    }

    #[test]
    fn equal_windows_come_shortest_then_first() {
        let masks = matches(&[0b1, 0, 0b1, 0b1]);
        let picked: Vec<(usize, usize)> = units(&masks, &[1.0], UNIT_LINES)
            .map(|(_, start, end)| (start, end))
            .collect();
        assert_eq!(picked, [(0, 0), (2, 2), (3, 3)]);
    }

    #[test]
    fn a_window_starts_on_a_heading_but_never_runs_on_into_one() {
        // "Current sprint goal …" (term 0), then the next section's "## Home" (term 1): not one
        // window, though together they hold both terms.
        let mut masks = matches(&[0b01, 0, 0b10]);
        masks[2].heading = true;
        assert_eq!(first(&masks, &[1.0, 1.0]), Some((0, 0)));
        // "## Home" and the line under it are one.
        let mut masks = matches(&[0, 0b10, 0b01]);
        masks[1].heading = true;
        assert_eq!(first(&masks, &[1.0, 1.0]), Some((1, 2)));
    }

    #[test]
    fn a_superseded_line_loses_to_the_line_that_replaced_it() {
        let mut masks = matches(&[0b1, 0, 0b1]);
        masks[0].factor = 0.3;
        assert_eq!(first(&masks, &[1.0]), Some((2, 2)));
    }

    #[test]
    fn a_lone_heading_is_quoted_with_the_line_under_it() {
        let lines = ["- other", "## Car", "", "- sold the Honda"];
        let chunk = LineRange { start: 0, end: 3 };
        let heading = LineRange { start: 1, end: 1 };
        assert_eq!(
            quoted(heading, chunk, |i| lines[i]),
            LineRange { start: 1, end: 3 }
        );
        let bullet = LineRange { start: 3, end: 3 };
        assert_eq!(quoted(bullet, chunk, |i| lines[i]), bullet);
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary() {
        let long = "é".repeat(MAX_CHARS);
        let text = text(LineRange { start: 0, end: 0 }, |_| long.as_str(), None);
        assert!(text.ends_with('…'));
        assert!(text.len() <= MAX_CHARS + '…'.len_utf8());
    }

    #[test]
    fn a_long_line_is_quoted_from_shortly_before_the_word_it_matched() {
        let before = "So, about the weekend plans and everything else. ".repeat(30);
        let line = format!("assistant: \"{before}The new landlord is Mrs Achebe.\"");
        let focus = line.find("landlord").unwrap();
        let window = LineRange { start: 0, end: 0 };
        let quoted = text(window, |_| line.as_str(), Some(focus));
        assert!(quoted.starts_with('…'), "{quoted}");
        assert!(
            quoted.contains("The new landlord is Mrs Achebe."),
            "{quoted}"
        );
        assert!(quoted.len() <= MAX_CHARS + 2 * '…'.len_utf8());
        // A word from the start: the lead begins after a space.
        assert!(quoted["…".len()..].starts_with(|c: char| !c.is_whitespace()));
        // Without a focus, or with one the first MAX_CHARS bytes show well, from the start.
        assert!(text(window, |_| line.as_str(), None).starts_with("assistant:"));
        assert!(text(window, |_| line.as_str(), Some(12)).starts_with("assistant:"));
        // Multi-byte text before the word: still cut on character boundaries.
        let line = format!("{}{}", "é".repeat(600), " ended: landlord");
        let focus = line.find("landlord").unwrap();
        let quoted = text(window, |_| line.as_str(), Some(focus));
        assert!(
            quoted.starts_with('…') && quoted.ends_with("landlord"),
            "{quoted}"
        );
    }
}
