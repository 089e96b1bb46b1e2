//! Which lines of a note hold a fact the notes mark as replaced (struck through, "(superseded)",
//! a superseded `USER.md` directive): read once per file while it is prepared for the index.

use crate::paths::MemoryPath;

/// Markers that say a line's fact was replaced, besides strike-through: "(superseded)",
/// "[outdated]". Lower case; matched case-insensitively after an opening bracket. "no longer"
/// is not one: "Maya no longer drives the Subaru; she has a Kia" states the new fact.
const REPLACED_MARKERS: &[&str] = &["superseded", "outdated", "obsolete"];

/// Whether a line carries a replaced-fact marker: `~~struck~~` text, or a bracketed marker.
fn marked_replaced(line: &str) -> bool {
    if line.matches("~~").count() >= 2 {
        return true;
    }
    // No allocation: every line of every note passes here during an index build.
    line.match_indices(['(', '[']).any(|(i, _)| {
        let after = line[i + 1..].trim_start().as_bytes();
        REPLACED_MARKERS.iter().any(|m| {
            after
                .get(..m.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(m.as_bytes()))
        })
    })
}

/// The lines of a file that hold replaced facts: in `USER.md` files, the superseded
/// directives (their bullet and continuation lines); anywhere, lines marked replaced
/// (struck-through text, "(superseded)"). Sorted, 0-based.
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
        assert!(marked_replaced("- ~~Laptop: ThinkPad~~ Framework 13"));
        assert!(marked_replaced("- Gym: Crossfit North (superseded)"));
        assert!(marked_replaced("- Bank: Chase [Outdated]"));
        assert!(!marked_replaced(
            "- Maya no longer drives the Subaru; she has a Kia."
        ));
        assert!(!marked_replaced(
            "- Bank: BECU (replaced Chase in February)."
        ));
    }
}
