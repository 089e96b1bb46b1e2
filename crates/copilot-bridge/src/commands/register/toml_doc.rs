//! Format-preserving edits of Codex's `config.toml` (`toml_edit`): our `[mcp_servers.<name>]`
//! tables are added, updated key by key, or removed; comments, order and every other table stay
//! as they were.

use std::path::Path;

use toml_edit::{DocumentMut, Item, Table, Value};

use super::file::EditError;
use super::json_doc::Edited;

/// The table every Codex MCP server lives under.
const SERVERS: &str = "mcp_servers";

/// One `[mcp_servers.<name>]` table we own and the keys we set in it; other keys a user added
/// (`env`, `default_tools_approval_mode`, …) are kept.
#[derive(Debug, Clone)]
pub struct TomlEntry {
    /// The server's name.
    pub name: &'static str,
    /// The keys, in the order a new table lists them.
    pub fields: Vec<(&'static str, Value)>,
}

fn parse(path: &Path, text: &str) -> Result<DocumentMut, EditError> {
    text.parse::<DocumentMut>()
        .map_err(|err| EditError::Malformed {
            path: path.to_path_buf(),
            detail: format!(
                "not valid TOML: {}",
                err.to_string().trim().replace('\n', " ")
            ),
        })
}

fn shape(path: &Path, key: String) -> EditError {
    EditError::Shape {
        path: path.to_path_buf(),
        key,
        expected: "a table",
    }
}

/// Whether two values mean the same (strings, integers, booleans and arrays of them), whatever
/// their formatting.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a.value() == b.value(),
        (Value::Integer(a), Value::Integer(b)) => a.value() == b.value(),
        (Value::Boolean(a), Value::Boolean(b)) => a.value() == b.value(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b.iter()).all(|(a, b)| same(a, b))
        }
        _ => false,
    }
}

/// Adds or updates `entries` under `[mcp_servers]`.
pub fn upsert(path: &Path, text: Option<&str>, entries: &[TomlEntry]) -> Result<Edited, EditError> {
    let mut doc = parse(path, text.unwrap_or(""))?;
    let servers = doc
        .entry(SERVERS)
        .or_insert_with(|| {
            // Implicit: the file gets `[mcp_servers.copilot-bridge]`, not an empty
            // `[mcp_servers]` header above it.
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| shape(path, SERVERS.to_owned()))?;
    let mut changed = false;
    for entry in entries {
        let table = servers
            .entry(entry.name)
            .or_insert_with(|| Item::Table(Table::new()))
            .as_table_mut()
            .ok_or_else(|| shape(path, format!("{SERVERS}.{}", entry.name)))?;
        for (key, want) in &entry.fields {
            let current = table.get(key).and_then(Item::as_value);
            if current.is_some_and(|current| same(current, want)) {
                continue;
            }
            match table.get_mut(key).and_then(Item::as_value_mut) {
                // Replaced in place, keeping the comment after it.
                Some(slot) => {
                    let decor = slot.decor().clone();
                    *slot = want.clone();
                    *slot.decor_mut() = decor;
                }
                None => {
                    table.insert(key, Item::Value(want.clone()));
                }
            }
            changed = true;
        }
    }
    Ok(if changed {
        Edited::Text(doc.to_string())
    } else {
        Edited::Unchanged
    })
}

/// Removes `[mcp_servers.<name>]` for each of `names`; an `[mcp_servers]` left empty goes too,
/// and a file left empty is deleted.
pub fn remove(path: &Path, text: Option<&str>, names: &[&str]) -> Result<Edited, EditError> {
    let Some(text) = text else {
        return Ok(Edited::Unchanged);
    };
    let mut doc = parse(path, text)?;
    let Some(servers) = doc.get_mut(SERVERS) else {
        return Ok(Edited::Unchanged);
    };
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| shape(path, SERVERS.to_owned()))?;
    let mut changed = false;
    for name in names {
        changed |= servers.remove(name).is_some();
    }
    if !changed {
        return Ok(Edited::Unchanged);
    }
    if servers.is_empty() {
        doc.remove(SERVERS);
    }
    let text = doc.to_string();
    Ok(if text.trim().is_empty() {
        Edited::Empty
    } else {
        Edited::Text(text)
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn ours() -> Vec<TomlEntry> {
        vec![
            TomlEntry {
                name: "copilot-bridge",
                fields: vec![
                    ("command", Value::from("/opt/bin/copilot-bridge")),
                    ("args", Value::Array(toml_edit::Array::new())),
                    ("tool_timeout_sec", Value::from(1800_i64)),
                ],
            },
            TomlEntry {
                name: "openclaw-memory",
                fields: vec![
                    ("command", Value::from("/opt/bin/openclaw-memory")),
                    ("args", Value::Array(toml_edit::Array::new())),
                ],
            },
        ]
    }

    const NAMES: [&str; 2] = ["copilot-bridge", "openclaw-memory"];

    const CONFIG: &str = r#"# my Codex settings
model = "o4"   # the default

[mcp_servers.github]
command = "github-mcp"   # keep this comment
args = ["stdio"]

[profiles.fast]
model = "o4-mini"
"#;

    fn text(edited: Edited) -> String {
        match edited {
            Edited::Text(text) => text,
            other => panic!("expected new text, got {other:?}"),
        }
    }

    #[test]
    fn register_keeps_comments_and_order_and_unregister_restores_the_bytes() -> anyhow::Result<()> {
        let path = Path::new("config.toml");
        let added = text(upsert(path, Some(CONFIG), &ours())?);
        assert!(added.starts_with(CONFIG.split("[profiles.fast]").next().unwrap_or("")));
        assert!(added.contains("[mcp_servers.copilot-bridge]\ncommand = \"/opt/bin/copilot-bridge\"\nargs = []\ntool_timeout_sec = 1800\n"), "{added}");
        let parsed: toml::Table = toml::from_str(&added)?;
        assert_eq!(
            parsed["mcp_servers"]["openclaw-memory"]["command"].as_str(),
            Some("/opt/bin/openclaw-memory")
        );
        assert_eq!(upsert(path, Some(&added), &ours())?, Edited::Unchanged);
        assert_eq!(text(remove(path, Some(&added), &NAMES)?), CONFIG);
        Ok(())
    }

    #[test]
    fn a_new_file_has_only_our_tables_and_goes_again() -> anyhow::Result<()> {
        let path = Path::new("config.toml");
        let added = text(upsert(path, None, &ours())?);
        assert_eq!(
            added,
            "[mcp_servers.copilot-bridge]\ncommand = \"/opt/bin/copilot-bridge\"\nargs = []\n\
             tool_timeout_sec = 1800\n\n[mcp_servers.openclaw-memory]\ncommand = \
             \"/opt/bin/openclaw-memory\"\nargs = []\n"
        );
        assert_eq!(remove(path, Some(&added), &NAMES)?, Edited::Empty);
        Ok(())
    }

    #[test]
    fn an_outdated_table_is_updated_keeping_the_users_keys() -> anyhow::Result<()> {
        let path = Path::new("config.toml");
        let original = "[mcp_servers.copilot-bridge]\ncommand = \"/old/copilot-bridge\" # moved\n\
                        default_tools_approval_mode = \"approve\"\n";
        let updated = text(upsert(path, Some(original), &ours())?);
        assert_eq!(
            updated,
            "[mcp_servers.copilot-bridge]\ncommand = \"/opt/bin/copilot-bridge\" # moved\n\
             default_tools_approval_mode = \"approve\"\nargs = []\ntool_timeout_sec = 1800\n\n\
             [mcp_servers.openclaw-memory]\ncommand = \"/opt/bin/openclaw-memory\"\nargs = []\n"
        );
        Ok(())
    }

    #[test]
    fn a_malformed_file_is_refused_naming_the_line() {
        let path = Path::new("/home/me/.codex/config.toml");
        let broken = "model = \"o4\"\n[mcp_servers.x\ncommand = 1\n";
        let err = upsert(path, Some(broken), &ours()).expect_err("malformed TOML is refused");
        let message = err.to_string();
        assert!(
            message.starts_with("/home/me/.codex/config.toml: not valid TOML"),
            "{message}"
        );
        assert!(message.contains("line 2"), "{message}");
        assert!(remove(path, Some(broken), &NAMES).is_err());
    }
}
