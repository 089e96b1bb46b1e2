//! Format-preserving edits of JSON, JSONC (VS Code) and JSON5 (OpenClaw) config files: our
//! server entries are added, updated field by field, or removed inside a concrete syntax tree,
//! so every comment, blank line, key order and entry that is not ours stays as it was.

use std::path::Path;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

use super::file::EditError;

/// One server entry we own: its name under the servers object and the fields we set. Fields
/// of an existing entry that are not listed here (a user's `cwd`, …) are kept. An object field
/// (`env`) holds defaults: its keys are added when missing, and a value the user already set
/// for one of them, like every other key of theirs, is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key under the servers object (`copilot-bridge`, `openclaw-memory`).
    pub name: &'static str,
    /// The fields, in the order a new entry lists them.
    pub fields: Vec<(&'static str, Value)>,
}

/// What an edit comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edited {
    /// Everything is already as asked: nothing to write.
    Unchanged,
    /// The new text of the file.
    Text(String),
    /// Nothing but an empty object is left: the file goes.
    Empty,
}

/// Parses leniently (comments, trailing commas, unquoted keys, single quotes: what JSONC and
/// JSON5 configs contain) and names the line of the first error.
fn parse(path: &Path, text: &str) -> Result<CstRootNode, EditError> {
    CstRootNode::parse(text, &ParseOptions::default()).map_err(|err| EditError::Malformed {
        path: path.to_path_buf(),
        detail: format!("not valid JSON: {err}"),
    })
}

fn root_object(path: &Path, root: &CstRootNode) -> Result<Option<CstObject>, EditError> {
    match root.value() {
        None => Ok(None),
        Some(value) => value.as_object().map(Some).ok_or_else(|| EditError::Shape {
            path: path.to_path_buf(),
            key: "(the top level)".to_owned(),
            expected: "an object",
        }),
    }
}

/// The object at `keys` under `object`, if every key exists; an error when one holds
/// something other than an object.
fn descend(path: &Path, object: CstObject, keys: &[&str]) -> Result<Option<CstObject>, EditError> {
    let mut current = object;
    for (depth, key) in keys.iter().enumerate() {
        let Some(prop) = current.get(key) else {
            return Ok(None);
        };
        current = prop
            .value()
            .and_then(|v| v.as_object())
            .ok_or_else(|| EditError::Shape {
                path: path.to_path_buf(),
                key: keys[..=depth].join("."),
                expected: "an object",
            })?;
    }
    Ok(Some(current))
}

fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// A new entry, its fields in our order.
fn entry_input(entry: &Entry) -> CstInputValue {
    CstInputValue::Object(
        entry
            .fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), input(v)))
            .collect(),
    )
}

/// The entries currently under `keys` (name → value), for deciding what a client's own CLI
/// must do. A missing file or container has none.
pub fn entries(
    path: &Path,
    text: Option<&str>,
    keys: &[&str],
) -> Result<serde_json::Map<String, Value>, EditError> {
    let Some(text) = text else {
        return Ok(serde_json::Map::new());
    };
    let root = parse(path, text)?;
    let Some(object) = root_object(path, &root)? else {
        return Ok(serde_json::Map::new());
    };
    let Some(servers) = descend(path, object, keys)? else {
        return Ok(serde_json::Map::new());
    };
    Ok(match servers.to_serde_value() {
        Some(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    })
}

/// Whether the existing entry `current` already has every field of `entry`.
pub fn in_sync(current: &Value, entry: &Entry) -> bool {
    entry.fields.iter().all(|(field, want)| match want {
        Value::Object(defaults) => defaults
            .keys()
            .all(|key| current.get(field).and_then(|have| have.get(key)).is_some()),
        _ => current.get(field) == Some(want),
    })
}

/// `current` with `entry`'s fields set (the user's other fields kept).
pub fn merged(current: &Value, entry: &Entry) -> Value {
    let mut map = current.as_object().cloned().unwrap_or_default();
    for (field, want) in &entry.fields {
        match (want, map.get_mut(*field)) {
            (Value::Object(defaults), Some(Value::Object(have))) => {
                for (key, value) in defaults {
                    have.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
            _ => {
                map.insert((*field).to_owned(), want.clone());
            }
        }
    }
    Value::Object(map)
}

/// Adds or updates `entries` under the object at `keys` (created when missing).
pub fn upsert(
    path: &Path,
    text: Option<&str>,
    keys: &[&str],
    entries: &[Entry],
) -> Result<Edited, EditError> {
    // A new (or empty) file starts as an empty object.
    let text = text.filter(|t| !t.trim().is_empty()).unwrap_or("{}\n");
    let root = parse(path, text)?;
    let object = match root_object(path, &root)? {
        Some(object) => object,
        None => root.object_value_or_set(),
    };
    let mut servers = object;
    for (depth, key) in keys.iter().enumerate() {
        servers = match servers.get(key) {
            Some(prop) => {
                prop.value()
                    .and_then(|v| v.as_object())
                    .ok_or_else(|| EditError::Shape {
                        path: path.to_path_buf(),
                        key: keys[..=depth].join("."),
                        expected: "an object",
                    })?
            }
            None => servers.object_value_or_set(key),
        };
    }
    let mut changed = false;
    for entry in entries {
        let existing = servers.get(entry.name);
        let object = existing
            .as_ref()
            .and_then(jsonc_parser::cst::CstObjectProp::value)
            .and_then(|v| v.as_object());
        match (existing, object) {
            (Some(_), Some(object)) => {
                for (field, want) in &entry.fields {
                    let have = object.get(field);
                    let have_object = have
                        .as_ref()
                        .and_then(jsonc_parser::cst::CstObjectProp::value)
                        .and_then(|v| v.as_object());
                    match (have, want) {
                        (Some(_), Value::Object(defaults)) if have_object.is_some() => {
                            let Some(have) = have_object else { continue };
                            for (key, value) in defaults {
                                if have.get(key).is_none() {
                                    have.append(key, input(value));
                                    changed = true;
                                }
                            }
                        }
                        (Some(prop), _) if prop.to_serde_value().as_ref() == Some(want) => {}
                        (Some(prop), _) => {
                            prop.set_value(input(want));
                            changed = true;
                        }
                        (None, _) => {
                            object.append(field, input(want));
                            changed = true;
                        }
                    }
                }
            }
            (Some(prop), None) => {
                prop.set_value(entry_input(entry));
                changed = true;
            }
            (None, _) => {
                servers.append(entry.name, entry_input(entry));
                changed = true;
            }
        }
    }
    Ok(if changed {
        Edited::Text(root.to_string())
    } else {
        Edited::Unchanged
    })
}

/// Removes the entries named `names` from the object at `keys`; containers left empty by that
/// are removed too (they were most likely created by `register`), and a file left holding
/// only `{}` is deleted.
pub fn remove(
    path: &Path,
    text: Option<&str>,
    keys: &[&str],
    names: &[&str],
) -> Result<Edited, EditError> {
    let Some(text) = text else {
        return Ok(Edited::Unchanged);
    };
    let root = parse(path, text)?;
    let Some(object) = root_object(path, &root)? else {
        return Ok(Edited::Unchanged);
    };
    let Some(servers) = descend(path, object.clone(), keys)? else {
        return Ok(Edited::Unchanged);
    };
    let mut changed = false;
    for name in names {
        if let Some(prop) = servers.get(name) {
            prop.remove();
            changed = true;
        }
    }
    if !changed {
        return Ok(Edited::Unchanged);
    }
    for depth in (0..keys.len()).rev() {
        let Some(parent) = descend(path, object.clone(), &keys[..depth])? else {
            break;
        };
        let Some(prop) = parent.get(keys[depth]) else {
            break;
        };
        let empty = prop
            .value()
            .and_then(|v| v.as_object())
            .is_some_and(|o| o.properties().is_empty() && !has_comment(&o.to_string()));
        if !empty {
            break;
        }
        prop.remove();
    }
    let text = root.to_string();
    let bare: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    Ok(if bare == "{}" {
        Edited::Empty
    } else {
        Edited::Text(text)
    })
}

fn has_comment(text: &str) -> bool {
    text.contains("//") || text.contains("/*")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn ours() -> Vec<Entry> {
        vec![
            Entry {
                name: "copilot-bridge",
                fields: vec![
                    ("command", json!("/opt/bin/copilot-bridge")),
                    ("args", json!([])),
                ],
            },
            Entry {
                name: "openclaw-memory",
                fields: vec![("command", json!("/opt/bin/openclaw-memory"))],
            },
        ]
    }

    const NAMES: [&str; 2] = ["copilot-bridge", "openclaw-memory"];

    fn text(edited: Edited) -> String {
        match edited {
            Edited::Text(text) => text,
            other => panic!("expected new text, got {other:?}"),
        }
    }

    /// A JSONC file as a person writes it: comments, a trailing comma, someone else's server.
    const JSONC: &str = r#"{
  // my servers
  "servers": {
    "github": { "type": "http", "url": "https://example.invalid/mcp" }, // keep me
  },
  "inputs": [],
}
"#;

    #[test]
    fn register_then_unregister_restores_the_file_byte_for_byte() -> anyhow::Result<()> {
        let path = Path::new("mcp.json");
        let added = text(upsert(path, Some(JSONC), &["servers"], &ours())?);
        assert!(added.contains("// keep me"), "{added}");
        assert!(added.contains("\"copilot-bridge\""), "{added}");
        assert_eq!(
            upsert(path, Some(&added), &["servers"], &ours())?,
            Edited::Unchanged
        );
        let removed = text(remove(path, Some(&added), &["servers"], &NAMES)?);
        assert_eq!(removed, JSONC);
        Ok(())
    }

    #[test]
    fn an_env_field_adds_its_defaults_and_keeps_the_users_keys_and_values() -> anyhow::Result<()> {
        let path = Path::new("openclaw.json");
        let entry = Entry {
            name: "copilot-bridge",
            fields: vec![
                ("command", json!("/b")),
                ("env", json!({"A_TIMEOUT": "600000", "B": "ours"})),
            ],
        };
        let original = r#"{ "mcp": { "servers": { "copilot-bridge": {
            "command": "/old", "env": { "B": "theirs", "C": "kept" } } } } }"#;
        let added = text(upsert(
            path,
            Some(original),
            &["mcp", "servers"],
            std::slice::from_ref(&entry),
        )?);
        let now = &entries(path, Some(&added), &["mcp", "servers"])?["copilot-bridge"];
        assert_eq!(
            now["env"],
            json!({"B": "theirs", "C": "kept", "A_TIMEOUT": "600000"})
        );
        assert_eq!(now["command"], "/b");
        assert!(in_sync(now, &entry));
        assert_eq!(merged(now, &entry), now.clone());
        assert_eq!(
            upsert(path, Some(&added), &["mcp", "servers"], &[entry])?,
            Edited::Unchanged
        );
        Ok(())
    }

    #[test]
    fn nested_containers_created_by_register_go_again() -> anyhow::Result<()> {
        let path = Path::new("openclaw.json");
        let original =
            "{\n  // OpenClaw settings\n  agents: { defaults: { workspace: '~/w' } },\n}\n";
        let added = text(upsert(path, Some(original), &["mcp", "servers"], &ours())?);
        assert_eq!(
            entries(path, Some(&added), &["mcp", "servers"])?
                .keys()
                .collect::<Vec<_>>(),
            NAMES.iter().collect::<Vec<_>>()
        );
        assert_eq!(
            upsert(path, Some(&added), &["mcp", "servers"], &ours())?,
            Edited::Unchanged
        );
        let removed = text(remove(path, Some(&added), &["mcp", "servers"], &NAMES)?);
        assert_eq!(removed, original);
        Ok(())
    }

    #[test]
    fn a_new_file_is_created_and_removed_again() -> anyhow::Result<()> {
        let path = Path::new("mcp.json");
        let added = text(upsert(path, None, &["mcpServers"], &ours())?);
        assert_eq!(
            added,
            r#"{
  "mcpServers": {
    "copilot-bridge": {
      "command": "/opt/bin/copilot-bridge",
      "args": []
    },
    "openclaw-memory": {
      "command": "/opt/bin/openclaw-memory"
    }
  }
}
"#
        );
        assert_eq!(
            upsert(path, Some(&added), &["mcpServers"], &ours())?,
            Edited::Unchanged
        );
        assert_eq!(
            remove(path, Some(&added), &["mcpServers"], &NAMES)?,
            Edited::Empty
        );
        Ok(())
    }

    #[test]
    fn an_outdated_entry_is_updated_keeping_the_users_fields() -> anyhow::Result<()> {
        let path = Path::new("mcp.json");
        let original = r#"{
  "mcpServers": {
    "copilot-bridge": {
      "command": "/old/copilot-bridge",
      "env": { "COPILOT_BRIDGE_WORKSPACE": "/home/me/app" }
    }
  }
}
"#;
        let updated = text(upsert(path, Some(original), &["mcpServers"], &ours())?);
        let value: Value = serde_json::from_str(&updated)?;
        assert_eq!(
            value["mcpServers"]["copilot-bridge"],
            json!({
                "command": "/opt/bin/copilot-bridge",
                "env": {"COPILOT_BRIDGE_WORKSPACE": "/home/me/app"},
                "args": [],
            })
        );
        Ok(())
    }

    #[test]
    fn a_malformed_file_is_refused_naming_the_line() {
        let path = Path::new("/home/me/.cursor/mcp.json");
        let broken = "{\n  \"mcpServers\": {\n    \"x\": { \"command\": }\n  }\n}\n";
        let err = upsert(path, Some(broken), &["mcpServers"], &ours())
            .expect_err("a malformed file is refused");
        let message = err.to_string();
        assert!(
            message.starts_with("/home/me/.cursor/mcp.json: not valid JSON"),
            "{message}"
        );
        assert!(message.contains("line 3"), "{message}");
        assert!(remove(path, Some(broken), &["mcpServers"], &NAMES).is_err());
    }

    #[test]
    fn a_container_of_the_wrong_type_is_refused() {
        let err = upsert(
            Path::new("c.json"),
            Some("{\"mcpServers\": []}"),
            &["mcpServers"],
            &ours(),
        )
        .expect_err("an array is not a servers object");
        assert_eq!(
            err.to_string(),
            "c.json: `mcpServers` is not an object; it was left untouched: correct it by hand \
             and run again"
        );
    }

    #[test]
    fn unregister_of_an_unregistered_file_changes_nothing() -> anyhow::Result<()> {
        let path = Path::new("mcp.json");
        assert_eq!(
            remove(path, Some(JSONC), &["servers"], &NAMES)?,
            Edited::Unchanged
        );
        assert_eq!(remove(path, None, &["servers"], &NAMES)?, Edited::Unchanged);
        Ok(())
    }
}
