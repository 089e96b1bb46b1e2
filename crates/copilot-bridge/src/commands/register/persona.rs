//! The persona snippet in OpenClaw's `AGENTS.md`, between two markers: installed or refreshed by
//! `register openclaw --persona`, removed by `unregister openclaw`, and nothing outside the
//! markers is ever touched.

/// The snippet itself: the repository's `persona/openclaw-persona-snippet.md`, built into the
/// binary on purpose so an installed `copilot-bridge` can install it without the source tree.
pub const SNIPPET: &str = include_str!("../../../../../persona/openclaw-persona-snippet.md");

const START: &str = "<!-- copilot-bridge persona: start (managed by `copilot-bridge register \
                     openclaw --persona`; `copilot-bridge unregister openclaw` removes it) -->";
const END: &str = "<!-- copilot-bridge persona: end -->";

/// The marked block, ending with a newline.
fn block(snippet: &str) -> String {
    format!("{START}\n{}\n{END}\n", snippet.trim_end())
}

/// Where the block is in `text`: from its start marker through its end marker's line break.
fn find(text: &str) -> Option<(usize, usize)> {
    let start = text.find(START)?;
    let end_at = start + text[start..].find(END)?;
    let mut end = end_at + END.len();
    if text[end..].starts_with('\n') {
        end += 1;
    }
    Some((start, end))
}

/// `text` (the current `AGENTS.md`, `None` when missing) with the block installed or
/// refreshed; `None` when it is already there as it should be.
pub fn install(text: Option<&str>, snippet: &str) -> Option<String> {
    let block = block(snippet);
    let text = text.unwrap_or("");
    if let Some((start, end)) = find(text) {
        if text[start..end] == block {
            return None;
        }
        return Some(format!("{}{block}{}", &text[..start], &text[end..]));
    }
    Some(match text {
        "" => block,
        // A blank line between what was there and the block; `remove` takes it away again.
        t if t.ends_with('\n') => format!("{t}\n{block}"),
        t => format!("{t}\n\n{block}"),
    })
}

/// `text` without the block (and the blank line `install` put before it); `None` when there
/// is no block.
pub fn remove(text: &str) -> Option<String> {
    let (start, end) = find(text)?;
    let before = &text[..start];
    let before = if text[end..].is_empty() && before.ends_with("\n\n") {
        &before[..before.len() - 1]
    } else {
        before
    };
    Some(format!("{before}{}", &text[end..]))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const AGENTS: &str = "# AGENTS.md\n\nBe kind.\n";

    #[test]
    fn install_then_remove_restores_agents_md_byte_for_byte() {
        let installed = install(Some(AGENTS), SNIPPET).expect("installed");
        assert!(installed.starts_with(AGENTS));
        assert!(installed.contains(SNIPPET.trim_end()));
        assert_eq!(install(Some(&installed), SNIPPET), None);
        assert_eq!(remove(&installed).as_deref(), Some(AGENTS));
        assert_eq!(remove(AGENTS), None);
    }

    #[test]
    fn a_changed_snippet_is_replaced_in_place() {
        let old = install(Some(AGENTS), "old advice").expect("installed");
        let with_more = format!("{old}\n## Later notes\n");
        let new = install(Some(&with_more), "new advice").expect("refreshed");
        assert_eq!(new, with_more.replace("old advice", "new advice"));
    }

    #[test]
    fn a_missing_agents_md_gets_just_the_block() {
        let installed = install(None, "advice").expect("installed");
        assert_eq!(installed, block("advice"));
        assert_eq!(remove(&installed).as_deref(), Some(""));
    }
}
