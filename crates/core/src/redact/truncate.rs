//! UTF-8-safe truncation of text that leaves a server, with a marker saying how much was cut.

use std::borrow::Cow;

/// Default cap for text that leaves a server (tool output, audit fields): 10 KiB, the limit
/// the original design put on tool results.
pub const DEFAULT_TRUNCATE_BYTES: usize = 10 * 1024;

/// Cuts `text` to at most `max_bytes` bytes on a UTF-8 character boundary, appending a marker
/// that says how much was cut. The marker counts towards `max_bytes`, so the result never
/// exceeds it; when `max_bytes` is too small to hold the marker, the text is cut bare.
///
/// Redact before truncating: a cut can split a secret so that no rule recognises its head.
pub fn truncate(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    // The marker's length depends on the number it reports; the total length is an upper
    // bound on that number, so sizing the cut with it always leaves room.
    let widest = marker(text.len());
    let Some(budget) = max_bytes.checked_sub(widest.len()) else {
        return Cow::Borrowed(&text[..text.floor_char_boundary(max_bytes)]);
    };
    let cut = text.floor_char_boundary(budget);
    let mut out = String::with_capacity(cut + widest.len());
    out.push_str(&text[..cut]);
    out.push_str(&marker(text.len() - cut));
    Cow::Owned(out)
}

fn marker(cut_bytes: usize) -> String {
    format!("\u{2026}[truncated {cut_bytes} bytes]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_borrowed_unchanged() {
        assert!(matches!(truncate("hello", 5), Cow::Borrowed("hello")));
        assert!(matches!(truncate("", 0), Cow::Borrowed("")));
    }

    #[test]
    fn long_ascii_is_cut_with_a_marker_within_the_limit() {
        let text = "a".repeat(100);
        let out = truncate(&text, 50);
        assert!(out.len() <= 50, "{} bytes: {out}", out.len());
        assert!(out.ends_with("bytes]"));
        let kept = out.find('\u{2026}').unwrap();
        assert_eq!(
            out,
            format!(
                "{}\u{2026}[truncated {} bytes]",
                "a".repeat(kept),
                100 - kept
            )
        );
    }

    #[test]
    fn never_splits_an_emoji() {
        // Each 🦀 is 4 bytes; every possible limit must land on a boundary.
        let text = "🦀".repeat(40);
        for max in 0..text.len() {
            let out = truncate(&text, max);
            assert!(out.len() <= max, "limit {max} gave {}", out.len());
            let kept = out.split('\u{2026}').next().unwrap();
            assert!(kept.chars().all(|c| c == '🦀'), "limit {max}: {out}");
        }
    }

    #[test]
    fn never_splits_cjk_or_combining_sequences() {
        let text = "漢字かな交じり文e\u{301}".repeat(30);
        for max in [0, 1, 2, 3, 4, 5, 31, 32, 33, 34, 100, 101, 102] {
            let out = truncate(&text, max);
            assert!(out.len() <= max);
            // Slicing would have panicked on a bad boundary; also check it is a prefix.
            let kept = out.split('\u{2026}').next().unwrap();
            assert!(text.starts_with(kept));
        }
    }

    #[test]
    fn default_limit_is_ten_kib() {
        let text = "x".repeat(DEFAULT_TRUNCATE_BYTES + 1);
        let out = truncate(&text, DEFAULT_TRUNCATE_BYTES);
        assert!(out.len() <= DEFAULT_TRUNCATE_BYTES);
        assert!(out.contains("[truncated"));
    }
}
