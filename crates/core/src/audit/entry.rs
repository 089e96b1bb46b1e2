//! One audit record and how it becomes one bounded, redacted JSON line.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::Decision;
use crate::redact::{self, DEFAULT_TRUNCATE_BYTES, Redactor};

/// Cap on one audit line, newline included: 64 KiB keeps every line a single `write(2)` on an
/// `O_APPEND` file (so lines from several processes never interleave) and within what line
/// readers such as `jq` handle comfortably, while leaving room for several 10 KiB fields.
pub const MAX_ENTRY_BYTES: usize = 64 * 1024;

/// Cap on short identifying fields (`server`, `session`, `tool`, `decision`): 256 bytes is
/// longer than any real tool name or session id, so only forged values are cut.
pub const MAX_NAME_BYTES: usize = 256;

/// Which hook produced an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    /// Before a tool runs (the call and its arguments).
    Pre,
    /// After a tool ran (its result).
    Post,
    /// A prompt sent to the agent.
    Prompt,
    /// A permission request and the policy's answer.
    Permission,
    /// A call refused (policy, depth, confinement).
    Denied,
    /// An error.
    Error,
}

/// One line of the audit log. Build it with [`AuditEntry::new`] and set the fields that apply;
/// `ts` and `server` are filled in by the log when it is recorded, and `input`, `output` and
/// `reason` are redacted and truncated then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// When it was recorded: RFC 3339, UTC, milliseconds (`2026-05-01T12:00:00.123Z`).
    pub ts: String,
    /// The server that wrote it (`copilot-bridge`, `openclaw-memory`).
    pub server: String,
    /// The MCP or ACP session, when there is one.
    pub session: Option<String>,
    /// Which hook produced the entry.
    pub hook: Hook,
    /// The tool concerned.
    pub tool: String,
    /// The decision taken (`allow`, `ask`, `deny`, or a hook's own word).
    pub decision: Option<String>,
    /// Why, when a rule or an error decided.
    pub reason: Option<String>,
    /// The call's arguments.
    pub input: Option<Value>,
    /// The call's result.
    pub output: Option<Value>,
    /// How long the call took.
    pub elapsed_ms: Option<u64>,
    /// The call depth.
    pub depth: u32,
}

impl AuditEntry {
    /// An entry for `tool` from `hook`, every optional field empty and depth 0.
    pub fn new(hook: Hook, tool: impl Into<String>) -> Self {
        Self {
            ts: String::new(),
            server: String::new(),
            session: None,
            hook,
            tool: tool.into(),
            decision: None,
            reason: None,
            input: None,
            output: None,
            elapsed_ms: None,
            depth: 0,
        }
    }

    /// Sets `decision` (`allow`, `ask` or `deny`) and `reason` from a policy decision.
    #[must_use]
    pub fn with_decision(mut self, decision: &Decision) -> Self {
        let word = match decision {
            Decision::Allow => "allow",
            Decision::Ask { .. } => "ask",
            Decision::Deny { .. } => "deny",
        };
        self.decision = Some(word.to_owned());
        self.reason = decision.reason().map(str::to_owned);
        self
    }

    /// Stamps, redacts and bounds the entry and encodes it as one JSON line ending in `\n`,
    /// never longer than [`MAX_ENTRY_BYTES`].
    pub(crate) fn into_line(
        mut self,
        server: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<u8>, serde_json::Error> {
        let redactor = Redactor::shared();
        self.ts = now.to_rfc3339_opts(SecondsFormat::Millis, true);
        server.clone_into(&mut self.server);
        for name in [&mut self.server, &mut self.tool] {
            cut_name(name);
        }
        for name in [&mut self.session, &mut self.decision]
            .into_iter()
            .flatten()
        {
            cut_name(name);
        }
        if let Some(reason) = &mut self.reason {
            let redacted = redactor.redact(reason);
            *reason = redact::truncate(&redacted, DEFAULT_TRUNCATE_BYTES).into_owned();
        }
        for value in [&mut self.input, &mut self.output].into_iter().flatten() {
            redactor.redact_json(value);
            truncate_strings(value);
        }

        let line = encode(&self)?;
        if line.len() <= MAX_ENTRY_BYTES {
            return Ok(line);
        }
        // Too long even with every string cut: keep the start of each JSON document as text.
        for value in [&mut self.input, &mut self.output].into_iter().flatten() {
            let text = value.to_string();
            *value = Value::String(redact::truncate(&text, DEFAULT_TRUNCATE_BYTES).into_owned());
        }
        let line = encode(&self)?;
        if line.len() <= MAX_ENTRY_BYTES {
            return Ok(line);
        }
        // Still too long (the truncation did not shorten enough): replace the bulky fields by a
        // note, so the line stays valid and bounded whatever the inputs were.
        for value in [&mut self.input, &mut self.output].into_iter().flatten() {
            let bytes = value.to_string().len();
            *value = Value::String(format!(
                "[omitted: {bytes} bytes exceed the {MAX_ENTRY_BYTES}-byte audit entry limit]"
            ));
        }
        if let Some(reason) = &mut self.reason {
            hard_cut(reason, DEFAULT_TRUNCATE_BYTES);
        }
        encode(&self)
    }
}

fn encode(entry: &AuditEntry) -> Result<Vec<u8>, serde_json::Error> {
    let mut line = serde_json::to_vec(entry)?;
    line.push(b'\n');
    Ok(line)
}

/// Cuts every string value inside `value` to [`DEFAULT_TRUNCATE_BYTES`].
fn truncate_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            if text.len() > DEFAULT_TRUNCATE_BYTES {
                *text = redact::truncate(text, DEFAULT_TRUNCATE_BYTES).into_owned();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(truncate_strings),
        Value::Object(map) => map.values_mut().for_each(truncate_strings),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Cuts an identifying field to [`MAX_NAME_BYTES`] with the shared marker, and hard-cuts it if
/// that still leaves it long.
fn cut_name(name: &mut String) {
    if name.len() > MAX_NAME_BYTES {
        *name = redact::truncate(name, MAX_NAME_BYTES).into_owned();
        hard_cut(name, 2 * MAX_NAME_BYTES);
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary.
fn hard_cut(text: &mut String, max: usize) {
    if text.len() > max {
        let end = text.floor_char_boundary(max);
        text.truncate(end);
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(secs, 123_000_000)
            .single()
            .unwrap_or_default()
    }

    #[test]
    fn line_is_one_json_object_with_every_field_in_order() -> anyhow::Result<()> {
        let mut entry = AuditEntry::new(Hook::Post, "bash");
        entry.session = Some("s-1".to_owned());
        entry.input = Some(json!({"command": "ls\nls"}));
        entry.output = Some(json!("a\nb"));
        entry.elapsed_ms = Some(12);
        entry.depth = 1;
        let entry = entry.with_decision(&Decision::Deny {
            reason: "no".to_owned(),
        });
        let line = String::from_utf8(entry.into_line("copilot-bridge", at(1_777_777_777))?)?;
        assert_eq!(
            line,
            "{\"ts\":\"2026-05-03T03:09:37.123Z\",\"server\":\"copilot-bridge\",\"session\":\"s-1\",\
             \"hook\":\"post\",\"tool\":\"bash\",\"decision\":\"deny\",\"reason\":\"no\",\
             \"input\":{\"command\":\"ls\\nls\"},\"output\":\"a\\nb\",\"elapsed_ms\":12,\"depth\":1}\n"
        );
        Ok(())
    }

    #[test]
    fn absent_fields_are_null_so_every_line_has_the_same_keys() -> anyhow::Result<()> {
        let line = AuditEntry::new(Hook::Pre, "view").into_line("s", at(0))?;
        let value: Value = serde_json::from_slice(&line)?;
        assert_eq!(
            value,
            json!({"ts": "1970-01-01T00:00:00.123Z", "server": "s", "session": null, "hook": "pre",
                   "tool": "view", "decision": null, "reason": null, "input": null,
                   "output": null, "elapsed_ms": null, "depth": 0})
        );
        Ok(())
    }

    #[test]
    fn hooks_are_snake_case() -> anyhow::Result<()> {
        let words: Vec<String> = [
            Hook::Pre,
            Hook::Post,
            Hook::Prompt,
            Hook::Permission,
            Hook::Denied,
            Hook::Error,
        ]
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()?;
        assert_eq!(
            words,
            [
                "\"pre\"",
                "\"post\"",
                "\"prompt\"",
                "\"permission\"",
                "\"denied\"",
                "\"error\""
            ]
        );
        Ok(())
    }

    #[test]
    fn huge_fields_keep_the_line_bounded_and_valid() -> anyhow::Result<()> {
        let big = "é".repeat(400_000);
        let mut entry = AuditEntry::new(Hook::Post, "x".repeat(10_000));
        entry.session = Some("s".repeat(10_000));
        entry.input = Some(json!({"content": &big, "list": [&big, &big, &big]}));
        entry.reason = Some(big);
        entry.output = Some(Value::Array(vec![json!("y".repeat(9_000)); 100]));
        let line = entry.into_line(&"z".repeat(10_000), at(0))?;
        assert!(line.len() <= MAX_ENTRY_BYTES, "{} bytes", line.len());
        assert_eq!(line.iter().position(|b| *b == b'\n'), Some(line.len() - 1));
        let parsed: AuditEntry = serde_json::from_slice(&line)?;
        assert!(parsed.tool.len() <= 2 * MAX_NAME_BYTES);
        assert!(parsed.server.len() <= 2 * MAX_NAME_BYTES);
        assert!(
            parsed
                .session
                .is_some_and(|s| s.len() <= 2 * MAX_NAME_BYTES)
        );
        Ok(())
    }

    #[test]
    fn hard_cut_respects_character_boundaries() {
        let mut text = "aé".to_owned();
        hard_cut(&mut text, 2);
        assert_eq!(text, "a");
        let mut text = "abc".to_owned();
        hard_cut(&mut text, 5);
        assert_eq!(text, "abc");
    }
}
