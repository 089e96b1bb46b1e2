//! Which lines of a note hold a fact the notes mark as replaced (struck through with nothing
//! current beside it, "(superseded)", a superseded `USER.md` directive): read once per file
//! while it is prepared for the index.

use crate::paths::MemoryPath;

/// Markers that say a line's fact was replaced, besides strike-through: "(superseded)",
/// "[outdated]". Lower case; matched case-insensitively after an opening bracket. "no longer"
/// is not one: "Maya no longer drives the Subaru; she has a Kia" states the new fact.
const REPLACED_MARKERS: &[&str] = &["superseded", "outdated", "obsolete"];

/// Whether a line carries a replaced-fact marker: struck-through text with nothing live beside
/// it, or a bracketed marker.
fn marked_replaced(line: &str) -> bool {
    if line.matches("~~").count() >= 2 && !states_beside_struck(line) {
        return true;
    }
    // No allocation (the check above allocates only for a line holding `~~` twice): every line
    // of every note passes here during an index build.
    line.match_indices(['(', '[']).any(|(i, _)| {
        let after = line[i + 1..].trim_start().as_bytes();
        REPLACED_MARKERS.iter().any(|m| {
            after
                .get(..m.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(m.as_bytes()))
        })
    })
}

/// Whether a line with struck-through text still states something outside it: "- Phone: Pixel
/// 8 (~~iPhone 12~~)" and "- ~~Laptop: ThinkPad~~ Framework 13" state the current value beside
/// the old one, while "- ~~Gym: Crossfit North~~", "- Gym: ~~Crossfit North~~" (only a label
/// left) and "- ~~Gym: Crossfit North~~ (cancelled in May)" (only a remark) state nothing
/// current.
fn states_beside_struck(line: &str) -> bool {
    // Outside the struck spans: every other piece between the `~~`s, and the last piece when a
    // `~~` is left unclosed (it is then shown as it is, not struck).
    let pieces: Vec<&str> = line.split("~~").collect();
    let unclosed = pieces.len().is_multiple_of(2);
    let mut unstruck = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        if i.is_multiple_of(2) || unclosed && i == pieces.len() - 1 {
            unstruck.push_str(piece);
            unstruck.push(' ');
        }
    }
    let list_marker = |c: char| c.is_whitespace() || matches!(c, '-' | '*' | '+' | '>');
    let mut listed = unstruck.trim_start_matches(list_marker);
    // An ordered list's "12." or "3)".
    let digits = listed.len()
        - listed
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    if digits > 0 && listed[digits..].starts_with(['.', ')']) {
        listed = &listed[digits + 1..];
    }
    // Remarks in brackets say something about a value, not the value: "(cancelled in May)",
    // and the "()" left where the old value was struck. Task boxes ("[x]") go with them.
    let mut depth = 0_usize;
    let unbracketed: String = listed
        .chars()
        .filter(|&c| {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => {
                    depth = depth.saturating_sub(1);
                    return false;
                }
                _ => {}
            }
            depth == 0
        })
        .collect();
    let stated = unbracketed.trim_start().trim_end_matches(|c: char| {
        c.is_whitespace() || matches!(c, '*' | '_' | '.' | '!' | ',' | ';')
    });
    // What is left ends where a value would follow: a label ("Gym:", "Gym →").
    let label_end = |c: char| matches!(c, ':' | '：' | '-' | '–' | '—' | '=' | '→');
    stated.chars().last().is_some_and(|c| !label_end(c))
}

/// The lines of a file that hold replaced facts: in `USER.md` files, the superseded
/// directives (their bullet and continuation lines); anywhere, lines marked replaced
/// (struck-through text that leaves only a label or a remark, "(superseded)"). Sorted, 0-based.
pub(super) fn marked_lines(path: &MemoryPath, text: &str) -> Vec<usize> {
    let mut superseded: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| marked_replaced(line))
        .map(|(i, _)| i)
        .collect();
    if path.is_user_file() {
        let all: Vec<&str> = text.lines().collect();
        let directives = crate::prefs::parse(text);
        // `line` is 1-based; a directive runs until a blank line or the next bullet.
        let lines_of = |line: usize| {
            let first = line.saturating_sub(1);
            let rest = all.iter().enumerate().skip(first + 1).take_while(|(_, l)| {
                let t = l.trim_start();
                !(t.is_empty() || t.starts_with(['-', '*', '+', '#', '<']))
            });
            std::iter::once(first).chain(rest.map(|(i, _)| i))
        };
        for d in &directives.superseded {
            superseded.extend(lines_of(d.line));
        }
    }
    superseded.sort_unstable();
    superseded.dedup();
    superseded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struck_and_bracketed_markers_mark_a_replaced_fact() {
        assert!(marked_replaced("- ~~Laptop: ThinkPad~~"));
        assert!(marked_replaced("- **Gym:** ~~Crossfit North~~"));
        assert!(marked_replaced("- Gym: Crossfit North (superseded)"));
        assert!(marked_replaced("- Bank: Chase [Outdated]"));
        assert!(!marked_replaced(
            "- Maya no longer drives the Subaru; she has a Kia."
        ));
        assert!(!marked_replaced(
            "- Bank: BECU (replaced Chase in February)."
        ));
    }

    #[test]
    fn a_line_stating_the_new_value_beside_the_struck_old_one_is_current() {
        assert!(!marked_replaced("- ~~Laptop: ThinkPad~~ Framework 13"));
        assert!(!marked_replaced("- Phone: Pixel 8 (~~iPhone 12~~)"));
        assert!(!marked_replaced(
            "- Carrier: ~~Telstra~~ → Optus, since March."
        ));
        assert!(!marked_replaced("- **Gym:** ~~Crossfit~~ ~~Anytime~~ F45"));
        // An unclosed `~~` strikes nothing: "X" is shown as it is.
        assert!(!marked_replaced("- ~~Gym~~: ~~X"));
    }

    #[test]
    fn a_struck_line_with_only_a_label_a_remark_or_a_list_marker_left_is_replaced() {
        for line in [
            "1. ~~Gym: Crossfit North~~",
            "3) ~~Gym: Crossfit North~~",
            "- [x] ~~Call the landlord~~",
            "- ~~Gym: Crossfit North~~ (cancelled in May)",
            "- Gym: ~~Crossfit~~ (until 2025)",
            "- Gym — ~~Crossfit~~",
            "- Gym → ~~Crossfit~~",
            "- Gym = ~~Crossfit~~",
            "- ジム：~~Crossfit~~",
            "> ~~Gym: Crossfit~~.",
        ] {
            assert!(marked_replaced(line), "{line}");
        }
    }
}
