//! The message lines of OpenClaw's session-memory notes. When a chat session is reset, OpenClaw's
//! bundled `session-memory` hook writes `memory/YYYY-MM-DD-HHMM.md` with the last messages
//! under `## Conversation Summary`, one line each: the role, `: `, and the text as JavaScript's
//! `JSON.stringify` writes it (`user: "ok\nthe new landlord is Mrs Achebe"`). A line break
//! inside a message is the two characters `\n`, so read as plain text the word after it would
//! be glued to an `n` ("nthe"). Here a message's escapes are what they stand for: separators
//! between words, and its escaped line breaks the ends of its own lines, which the meaning of a
//! long message is read by. The note's first line, `# Session: YYYY-MM-DD HH:MM:SS <zone>`, says
//! when the session was saved, which orders two notes of one day ([`session_time`]).

use std::borrow::Cow;
use std::ops::Range;

/// The roles the hook writes.
const ROLES: [&str; 2] = ["user: \"", "assistant: \""];

/// The escapes that end one of a message's own lines.
const LINE_BREAKS: [&str; 4] = ["\\n", "\\r", "\\u2028", "\\u2029"];

/// A message line, checked: byte ranges of its role word and of its text between the quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The role word (`user`, `assistant`).
    pub role: Range<usize>,
    /// The text between the quotes, escapes as written.
    text: Range<usize>,
}

/// `line` as a message line, or `None` when it is not one: no role, no closing quote, a bare
/// quote inside, or an escape `JSON.stringify` never writes. Such a line is read as plain
/// text. Nothing is allocated.
pub fn message(line: &str) -> Option<Message> {
    let role = ROLES.iter().find(|role| line.starts_with(**role))?;
    let end = line.len().checked_sub(1)?;
    if end < role.len() || !line.ends_with('"') {
        return None;
    }
    let bytes = line.as_bytes();
    let mut at = role.len();
    while at < end {
        at += match bytes[at] {
            b'"' => return None,
            b'\\' => escape_width(bytes, at, end)?,
            _ => 1,
        };
    }
    Some(Message {
        role: 0..role.len() - 3,
        text: role.len()..end,
    })
}

/// The length of the escape at `at`, or `None` for one `JSON.stringify` never writes or one
/// running past `end`.
fn escape_width(bytes: &[u8], at: usize, end: usize) -> Option<usize> {
    let width = match bytes.get(at + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
        b'u' if bytes
            .get(at + 2..at + 6)
            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) =>
        {
            6
        }
        _ => return None,
    };
    (at + width <= end).then_some(width)
}

impl Message {
    /// The text's pieces between its escapes, as non-empty byte ranges of `line`. Every escape
    /// `JSON.stringify` writes stands for a character that is not part of a word: a quote, a
    /// backslash, a control character, U+2028 or U+2029 (it writes every other character as
    /// it is, `é` and `ø` included).
    pub fn pieces<'a>(&self, line: &'a str) -> impl Iterator<Item = Range<usize>> + use<'a> {
        self.split(line, |_| true)
    }

    /// The message's own lines, the text split at its escaped line breaks (`\n`, `\r`,
    /// `\u2028`, `\u2029`), as non-empty byte ranges of `line`.
    pub fn own_lines<'a>(&self, line: &'a str) -> impl Iterator<Item = Range<usize>> + use<'a> {
        self.split(line, |escape| LINE_BREAKS.contains(&escape))
    }

    /// The text split at the escapes `at` accepts, empty parts left out.
    fn split<'a, F: Fn(&str) -> bool + 'a>(
        &self,
        line: &'a str,
        at: F,
    ) -> impl Iterator<Item = Range<usize>> + use<'a, F> {
        let bytes = line.as_bytes();
        let end = self.text.end;
        let (mut from, mut next) = (Some(self.text.start), self.text.start);
        std::iter::from_fn(move || {
            while let Some(start) = from {
                // The next escape `at` accepts, or the end of the text.
                let mut cut = None;
                while next < end && cut.is_none() {
                    if bytes[next] == b'\\' {
                        let width = escape_width(bytes, next, end).unwrap_or(1);
                        if at(&line[next..next + width]) {
                            cut = Some(next..next + width);
                        }
                        next += width;
                    } else {
                        next += 1;
                    }
                }
                from = cut.as_ref().map(|escape| escape.end);
                let part = start..cut.map_or(end, |escape| escape.start);
                if !part.is_empty() {
                    return Some(part);
                }
            }
            None
        })
    }
}

/// `line` as the reader of a note sees it: for a message line, the role, `: ` and the message
/// with its escapes decoded (a line break inside it is a line break); any other line as it is.
pub fn plain(line: &str) -> Cow<'_, str> {
    let Some(message) = message(line) else {
        return Cow::Borrowed(line);
    };
    let role = &line[message.role.clone()];
    // `message` checked the escapes, but not that `\u` ones pair as UTF-16 surrogates.
    match serde_json::from_str::<String>(&line[message.text.start - 1..]) {
        Ok(text) => Cow::Owned(format!("{role}: {text}")),
        Err(_) => Cow::Borrowed(line),
    }
}

/// The hook's first line of a note: `# Session: `, the local date and time, the time zone.
const SESSION_HEADER: &str = "# Session: ";

/// When in its day a session-memory note was saved, in seconds after midnight, read from its
/// first line (`# Session: 2025-03-04 21:05:09 Europe/Lisbon`), which the hook writes in the
/// same local time as the date in the note's name. `None` when the note does not start so, or
/// its date is not `day` (the note's day by its name): a renamed or hand-written note says
/// nothing about its time.
pub fn session_time(text: &[u8], day: i64) -> Option<u32> {
    let rest = text.strip_prefix(SESSION_HEADER.as_bytes())?;
    let date = std::str::from_utf8(rest.get(..10)?).ok()?;
    if crate::paths::parse_day(date)? != day {
        return None;
    }
    let time = rest.get(10..)?.strip_prefix(b" ")?.get(..8)?;
    if time[2] != b':' || time[5] != b':' {
        return None;
    }
    let two = |at: usize| -> Option<u32> {
        let (tens, ones) = (time[at], time[at + 1]);
        (tens.is_ascii_digit() && ones.is_ascii_digit())
            .then(|| u32::from(tens - b'0') * 10 + u32::from(ones - b'0'))
    };
    let (hours, minutes, seconds) = (two(0)?, two(3)?, two(6)?);
    (hours < 24 && minutes < 60 && seconds < 60).then_some(hours * 3600 + minutes * 60 + seconds)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// The role word, then the pieces, as text.
    fn pieces(line: &str) -> Option<Vec<&str>> {
        let message = message(line)?;
        let pieces = message.pieces(line).map(|r| &line[r]);
        Some(
            std::iter::once(&line[message.role.clone()])
                .chain(pieces)
                .collect(),
        )
    }

    #[test]
    fn a_message_splits_at_its_escapes() {
        assert_eq!(
            pieces(r#"user: "ok\nthe new landlord is \"Mrs Achebe\"\t\\ done""#),
            Some(vec![
                "user",
                "ok",
                "the new landlord is ",
                "Mrs Achebe",
                " done"
            ])
        );
        assert_eq!(
            pieces(r#"assistant: "Line\u2028next — café""#),
            Some(vec!["assistant", "Line", "next — café"])
        );
        assert_eq!(pieces(r#"user: """#), Some(vec!["user"]));
    }

    #[test]
    fn a_message_splits_into_its_own_lines() {
        let line = r#"user: "ok\nsold the Peugeot\r\n- Niro \"new\"\u2028done\\nope""#;
        let message = message(line).unwrap();
        let lines: Vec<&str> = message.own_lines(line).map(|r| &line[r]).collect();
        assert_eq!(
            lines,
            ["ok", "sold the Peugeot", r#"- Niro \"new\""#, r"done\\nope"]
        );
        assert_eq!(super::message("- a note line"), None);
    }

    #[test]
    fn a_message_reads_as_its_text() {
        assert_eq!(
            plain(r#"user: "Sold the Corolla.\nNow on the bus \"for good\"""#),
            "user: Sold the Corolla.\nNow on the bus \"for good\""
        );
        assert_eq!(plain("- Car: Corolla"), "- Car: Corolla");
        // A lone surrogate is no text: the line stays as it is.
        assert_eq!(
            plain(r#"user: "odd \ud800 half""#),
            r#"user: "odd \ud800 half""#
        );
    }

    #[test]
    fn lines_json_stringify_never_writes_are_plain_text() {
        for line in [
            "user: not quoted",
            r#"user: "no closing quote"#,
            r#"user: "a bare "quote" inside""#,
            r#"user: "an escape JSON has not: \q""#,
            r#"user: "a short \u12 escape""#,
            r#"user: "ends in an escaped quote\"#,
            r#"user: ""#,
            r#"- user: "quoted""#,
            r#"system: "quoted""#,
            r#"User: "quoted""#,
        ] {
            assert_eq!(pieces(line), None, "{line}");
        }
    }

    #[test]
    fn a_session_note_says_when_in_its_day_it_was_saved() {
        let day = crate::paths::parse_day("2025-03-04").unwrap();
        let note =
            "# Session: 2025-03-04 21:05:09 Europe/Lisbon\n\n- **Session Key**: agent:main:main\n";
        assert_eq!(
            session_time(note.as_bytes(), day),
            Some(21 * 3600 + 5 * 60 + 9)
        );
        assert_eq!(
            session_time(b"# Session: 2025-03-04 00:00:00 UTC", day),
            Some(0)
        );
        // Another day than the name's, a daily note's heading, a broken time: no time.
        assert_eq!(session_time(note.as_bytes(), day + 1), None);
        assert_eq!(session_time(b"# 2025-03-04\n\n- ran 5 km\n", day), None);
        for broken in [
            "# Session: 2025-03-04 25:00:00 UTC",
            "# Session: 2025-03-04 21:60:00 UTC",
            "# Session: 2025-03-04 2105:09 UTC",
            "# Session: 2025-03-04 21:05",
            "# Session: 2025-03-04",
            "# Session: 2025-03-04 ٢١:05:09 UTC",
            "- # Session: 2025-03-04 21:05:09 UTC",
        ] {
            assert_eq!(session_time(broken.as_bytes(), day), None, "{broken}");
        }
    }
}
