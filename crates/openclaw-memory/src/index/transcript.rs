//! The message lines of OpenClaw's session-memory notes. When a chat session is reset, OpenClaw's
//! bundled `session-memory` hook writes `memory/YYYY-MM-DD-HHMM.md` with the last messages
//! under `## Conversation Summary`, one line each: the role, `: `, and the text as JavaScript's
//! `JSON.stringify` writes it (`user: "ok\nthe new landlord is Mrs Achebe"`). A line break
//! inside a message is the two characters `\n`, so read as plain text the word after it would
//! be glued to an `n` ("nthe"). Here a message's escapes are what they stand for: separators
//! between words, and its escaped line breaks the ends of its own lines, which the meaning of a
//! long message is read by.

use std::borrow::Cow;
use std::ops::Range;

/// The roles the hook writes.
const ROLES: [&str; 2] = ["user: \"", "assistant: \""];

/// The byte ranges in `line` of a message line's pieces between its escapes: the role word
/// first, then the text of the message split at every escape. `None` when `line` is
/// not a message line (no role, no closing quote, a bare quote inside or an escape
/// `JSON.stringify` never writes), which is then read as plain text.
///
/// Every escape `JSON.stringify` writes stands for a character that is not part of a word: a
/// quote, a backslash, a control character, U+2028 or U+2029 (it writes every other character
/// as it is, `é` and `ø` included).
pub fn message_pieces(line: &str) -> Option<Vec<Range<usize>>> {
    let role = ROLES.iter().find(|role| line.starts_with(**role))?;
    let end = line.len().checked_sub(1)?;
    if end < role.len() || !line.ends_with('"') {
        return None;
    }
    let bytes = line.as_bytes();
    // The role word, without `: "`.
    let mut pieces = Vec::with_capacity(4);
    pieces.push(0..role.len() - 3);
    let mut start = role.len();
    let mut at = start;
    while at < end {
        match bytes[at] {
            b'"' => return None,
            b'\\' => {
                let width = match bytes.get(at + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
                    Some(b'u')
                        if bytes
                            .get(at + 2..at + 6)
                            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) =>
                    {
                        6
                    }
                    _ => return None,
                };
                if at + width > end {
                    return None;
                }
                pieces.push(start..at);
                at += width;
                start = at;
            }
            _ => at += 1,
        }
    }
    pieces.push(start..end);
    pieces.retain(|piece| !piece.is_empty());
    Some(pieces)
}

/// The byte ranges of a message line's own lines, the role left out: the message split at
/// its escaped line breaks (`\n`, `\r`, `\u2028`, `\u2029`). `None` for any other line.
pub fn message_lines(line: &str) -> Option<Vec<Range<usize>>> {
    let pieces = message_pieces(line)?;
    let role = pieces.first()?.end;
    let end = line.len() - 1;
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut start = role + 3;
    let mut at = start;
    while at < end {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        let escape = &line[at..];
        let width = if escape.starts_with("\\u") { 6 } else { 2 };
        let breaks = ["\\n", "\\r", "\\u2028", "\\u2029"]
            .iter()
            .any(|b| escape.starts_with(b));
        if breaks {
            out.push(start..at);
            start = at + width;
        }
        at += width;
    }
    out.push(start..end);
    out.retain(|r| !r.is_empty());
    Some(out)
}

/// `line` as the reader of a note sees it: for a message line, the role, `: ` and the message
/// with its escapes decoded (a line break inside it is a line break); any other line as it is.
pub fn plain(line: &str) -> Cow<'_, str> {
    let Some(pieces) = message_pieces(line) else {
        return Cow::Borrowed(line);
    };
    let role = pieces.first().map_or("", |r| &line[r.clone()]);
    let quoted = &line[role.len() + 2..];
    // `message_pieces` checked the escapes, but not that `\u` ones pair as UTF-16 surrogates.
    match serde_json::from_str::<String>(quoted) {
        Ok(message) => Cow::Owned(format!("{role}: {message}")),
        Err(_) => Cow::Borrowed(line),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn pieces(line: &str) -> Option<Vec<&str>> {
        message_pieces(line).map(|ranges| ranges.into_iter().map(|r| &line[r]).collect())
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
        let lines: Vec<&str> = message_lines(line)
            .unwrap()
            .into_iter()
            .map(|r| &line[r])
            .collect();
        assert_eq!(
            lines,
            ["ok", "sold the Peugeot", r#"- Niro \"new\""#, r"done\\nope"]
        );
        assert_eq!(message_lines("- a note line"), None);
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
}
