//! Reading the user's directives out of `USER.md`. OpenClaw writes each directive as a bullet
//! preceded by a marker comment, `<!-- observed: YYYY-MM-DD | status: active|superseded -->`;
//! bullets under a "Directives" heading without a marker count as active.

use serde::Serialize;

/// Whether a directive still applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// In force.
    Active,
    /// Replaced by a later directive; kept for history.
    Superseded,
}

/// One directive from `USER.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Directive {
    /// The directive text, without its bullet marker (continuation lines joined by spaces).
    pub text: String,
    /// The `observed:` date of its marker, if it had one.
    pub observed: Option<String>,
    /// Active or superseded.
    pub status: Status,
    /// Line of the bullet in the file (1-based).
    pub line: usize,
}

/// The directives of one `USER.md`, split by status, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Directives {
    /// Directives in force.
    pub active: Vec<Directive>,
    /// Directives that were replaced.
    pub superseded: Vec<Directive>,
}

#[derive(Debug, Clone, Default)]
struct Marker {
    observed: Option<String>,
    status: Option<Status>,
}

/// Parses the marker comment on `line`, if it is one.
fn marker(line: &str) -> Option<Marker> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    let mut marker = Marker::default();
    let mut recognised = false;
    for field in inner.split('|') {
        let Some((key, value)) = field.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim().to_ascii_lowercase().as_str() {
            "observed" => {
                marker.observed = Some(value.to_owned());
                recognised = true;
            }
            "status" => {
                marker.status = Some(if value.eq_ignore_ascii_case("superseded") {
                    Status::Superseded
                } else {
                    Status::Active
                });
                recognised = true;
            }
            _ => {}
        }
    }
    recognised.then_some(marker)
}

/// The text after a bullet marker (`-`, `*`, `+`, `1.`), if `line` starts a list item.
fn bullet_text(line: &str) -> Option<&str> {
    let t = line.trim_start();
    for prefix in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(prefix) {
            return Some(rest.trim());
        }
    }
    let dot = t.find(". ")?;
    (dot > 0 && dot <= 3 && t[..dot].bytes().all(|b| b.is_ascii_digit()))
        .then(|| t[dot + 2..].trim())
}

/// Extracts the directives of a `USER.md`.
pub fn parse(text: &str) -> Directives {
    let mut out = Directives::default();
    let mut pending: Option<Marker> = None;
    let mut in_directives_section = false;
    let mut open: Option<Directive> = None;

    let finish = |d: Option<Directive>, out: &mut Directives| {
        if let Some(d) = d {
            match d.status {
                Status::Active => out.active.push(d),
                Status::Superseded => out.superseded.push(d),
            }
        }
    };

    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(m) = marker(line) {
            finish(open.take(), &mut out);
            pending = Some(m);
            continue;
        }
        if trimmed.starts_with("<!--") {
            // Any other comment is invisible in rendered markdown; skip it.
            continue;
        }
        if trimmed.starts_with('#') {
            finish(open.take(), &mut out);
            pending = None;
            in_directives_section = trimmed.to_ascii_lowercase().contains("directive");
            continue;
        }
        if trimmed.is_empty() {
            // A blank line ends an item but not a pending marker (OpenClaw puts one between).
            finish(open.take(), &mut out);
            continue;
        }
        if let Some(item) = bullet_text(line) {
            finish(open.take(), &mut out);
            let marker = pending.take();
            if marker.is_some() || in_directives_section {
                let marker = marker.unwrap_or_default();
                open = Some(Directive {
                    text: item.to_owned(),
                    observed: marker.observed,
                    status: marker.status.unwrap_or(Status::Active),
                    line: i + 1,
                });
            }
            continue;
        }
        match open.as_mut() {
            // An indented or lazy continuation line of the current item.
            Some(d) => {
                d.text.push(' ');
                d.text.push_str(trimmed);
            }
            None => pending = None,
        }
    }
    finish(open.take(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn d(text: &str, observed: Option<&str>, status: Status, line: usize) -> Directive {
        Directive {
            text: text.to_owned(),
            observed: observed.map(str::to_owned),
            status,
            line,
        }
    }

    #[test]
    fn parses_openclaw_markers_into_active_and_superseded() {
        let text = "# USER.md - User Model\n\n## Directives\n\n<!-- observed: 2026-11-20 | status: active -->\n\n- Prefer concise answers with Rust code examples.\n\n<!-- observed: 2026-10-01 | status: superseded -->\n\n- Always use Python\n  for examples.\n\n<!-- status: active | observed: 2026-11-21 -->\n1. Address the user as Sam.\n";
        assert_eq!(
            parse(text),
            Directives {
                active: vec![
                    d(
                        "Prefer concise answers with Rust code examples.",
                        Some("2026-11-20"),
                        Status::Active,
                        7
                    ),
                    d(
                        "Address the user as Sam.",
                        Some("2026-11-21"),
                        Status::Active,
                        15
                    ),
                ],
                superseded: vec![d(
                    "Always use Python for examples.",
                    Some("2026-10-01"),
                    Status::Superseded,
                    11
                )],
            }
        );
    }

    #[test]
    fn unmarked_bullets_count_only_under_a_directives_heading() {
        let text = "# Profile\n- Name: Sam\n\n## Directives\n- Reply in English.\n<!-- a plain comment -->\n- Use metric units.\n";
        let parsed = parse(text);
        assert_eq!(
            parsed.active,
            vec![
                d("Reply in English.", None, Status::Active, 5),
                d("Use metric units.", None, Status::Active, 7),
            ]
        );
        assert!(parsed.superseded.is_empty());
    }

    #[test]
    fn a_marker_followed_by_prose_is_dropped() {
        let text = "<!-- observed: 2026-01-01 | status: superseded -->\nJust a paragraph.\n\n- later bullet\n";
        assert_eq!(parse(text), Directives::default());
    }
}
