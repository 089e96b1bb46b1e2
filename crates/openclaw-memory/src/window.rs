//! A window of lines from a file, the way OpenClaw's `memory_get` returns one: from a line, a
//! number of lines, capped in characters, saying whether it stopped early and where to go on.

/// Lines returned when the caller does not say (OpenClaw's `memory_get` default).
pub const DEFAULT_LINES: usize = 120;
/// Most lines one call may ask for.
pub const MAX_LINES: usize = 2_000;
/// Characters returned at most per call (OpenClaw's `memory_get` default).
pub const MAX_CHARS: usize = 12_000;

/// A window of a file's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// First line returned (1-based).
    pub from: usize,
    /// Last line returned (1-based, inclusive); `from - 1` when nothing was returned.
    pub to: usize,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// The lines, joined with `\n`.
    pub text: String,
    /// Whether lines after `to` exist and were left out (by `lines` or the character cap).
    pub truncated: bool,
    /// Where to continue, when truncated.
    pub next_from: Option<usize>,
}

/// Why a window could not be cut.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    /// `from` lies beyond the last line.
    #[error("from={from} is past the end: the file has {total} lines")]
    PastEnd {
        /// The requested first line.
        from: usize,
        /// Lines in the file.
        total: usize,
    },
}

/// Cuts lines `from..from+lines` out of `text`, stopping early before the character cap is
/// exceeded (a single line longer than the cap is cut at a character boundary).
pub fn cut(text: &str, from: usize, lines: usize) -> Result<Window, WindowError> {
    let from = from.max(1);
    let all: Vec<&str> = text.lines().collect();
    let total = all.len();
    if from > total.max(1) {
        return Err(WindowError::PastEnd { from, total });
    }
    let mut out = String::new();
    let mut to = from - 1;
    let mut cut_short = false;
    for line in all.iter().skip(from - 1).take(lines) {
        let extra = usize::from(!out.is_empty()) + line.len();
        if out.len() + extra > MAX_CHARS {
            if out.is_empty() {
                // One enormous line: return its head rather than nothing.
                let mut end = MAX_CHARS;
                while !line.is_char_boundary(end) {
                    end -= 1;
                }
                out.push_str(&line[..end]);
                to += 1;
            }
            cut_short = true;
            break;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
        to += 1;
    }
    let truncated = cut_short || to < total;
    Ok(Window {
        from,
        to,
        total_lines: total,
        text: out,
        truncated,
        next_from: (truncated && to < total).then_some(to + 1),
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn returns_the_requested_lines_and_where_to_continue() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(
            cut(text, 2, 2),
            Ok(Window {
                from: 2,
                to: 3,
                total_lines: 4,
                text: "b\nc".into(),
                truncated: true,
                next_from: Some(4),
            })
        );
        assert_eq!(
            cut(text, 3, 120).map(|w| (w.to, w.truncated)),
            Ok((4, false))
        );
    }

    #[test]
    fn stops_before_the_character_cap() {
        let line = "x".repeat(5_000);
        let text = format!("{line}\n{line}\n{line}\n");
        let window = cut(&text, 1, 120).unwrap();
        assert_eq!((window.to, window.next_from), (2, Some(3)));
        assert!(window.text.len() <= MAX_CHARS);
    }

    #[test]
    fn a_huge_single_line_is_cut_not_dropped() {
        let text = "é".repeat(MAX_CHARS);
        let window = cut(&text, 1, 1).unwrap();
        assert!(window.truncated && !window.text.is_empty() && window.text.len() <= MAX_CHARS);
    }

    #[test]
    fn past_the_end_is_an_error_but_an_empty_file_reads_empty() {
        assert_eq!(
            cut("a\n", 5, 1),
            Err(WindowError::PastEnd { from: 5, total: 1 })
        );
        assert_eq!(
            cut("", 1, 10).map(|w| (w.text, w.to)),
            Ok((String::new(), 0))
        );
    }
}
