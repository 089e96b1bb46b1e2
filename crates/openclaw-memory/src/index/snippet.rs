//! Choosing which lines of a matching chunk to quote: the shortest run of at most
//! [`MAX_LINES`] lines that holds the most distinct query words, so a hit is a few lines an
//! agent can cite, not a whole file.

use crate::index::chunk::LineRange;

/// Longest quoted window, in lines.
pub const MAX_LINES: usize = 6;
/// Longest quoted text, in bytes (cut on a character boundary, marked with `…`).
pub const MAX_CHARS: usize = 700;

/// The best window inside a chunk starting at line `first` whose per-line query-term masks
/// are `masks`. Lines are 0-based and absolute.
pub fn best_window<'a>(masks: &[u64], first: usize, line: impl Fn(usize) -> &'a str) -> LineRange {
    let n = masks.len();
    // (distinct terms, matching lines, start, end)
    let mut best = (0_u32, 0_usize, 0_usize, 0_usize);
    for start in 0..n {
        if masks[start] == 0 {
            continue;
        }
        let mut union = 0_u64;
        let mut lines = 0;
        for (end, &mask) in masks
            .iter()
            .enumerate()
            .take(n.min(start + MAX_LINES))
            .skip(start)
        {
            if mask == 0 {
                continue;
            }
            union |= mask;
            lines += 1;
            let candidate = (union.count_ones(), lines, start, end);
            // More distinct words first, then the shorter window, then more matching lines.
            let span = candidate.3 - candidate.2;
            let best_span = best.3 - best.2;
            let better = candidate.0 > best.0
                || (candidate.0 == best.0 && span < best_span)
                || (candidate.0 == best.0 && span == best_span && candidate.1 > best.1);
            if better || best.0 == 0 {
                best = candidate;
            }
        }
    }
    if best.0 == 0 {
        // No line holds a query word on its own (e.g. a term split across lines): quote the
        // chunk's first non-blank lines.
        let start = (first..first + n)
            .find(|&i| !line(i).trim().is_empty())
            .unwrap_or(first);
        let end = (start + MAX_LINES - 1).min(first + n.saturating_sub(1));
        return LineRange { start, end };
    }
    LineRange {
        start: first + best.2,
        end: first + best.3,
    }
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

    #[test]
    fn picks_the_lines_covering_most_query_words() {
        let lines = ["# Day", "- alpha", "- nothing", "- alpha beta", "- gamma"];
        let masks = [0, 0b001, 0, 0b011, 0b100];
        let window = best_window(&masks, 10, |i| lines[i - 10]);
        assert_eq!(window, LineRange { start: 13, end: 14 });
    }

    #[test]
    fn long_text_is_cut_on_a_char_boundary() {
        let long = "é".repeat(MAX_CHARS);
        let text = text(LineRange { start: 0, end: 0 }, |_| long.as_str());
        assert!(text.ends_with('…'));
        assert!(text.len() <= MAX_CHARS + '…'.len_utf8());
    }
}
