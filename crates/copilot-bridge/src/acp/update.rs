//! What the agent streams about a session (`session/update`), as our own typed and lenient
//! [`Update`]: every kind in the captures is typed, and a kind we do not know (or a known kind
//! with a shape we cannot read) is kept as raw JSON and logged, never dropped.

use std::fmt;
use std::path::PathBuf;

use bridge_core::policy::ActionKind;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::acp::content::ContentBlock;

/// Defines a string enum that keeps values it does not know in an `Other` variant.
macro_rules! lenient_str_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(from = "String", into = "String")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A value this client does not know, kept as sent.
            Other(String),
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                match value.as_str() {
                    $($wire => Self::$variant,)+
                    _ => Self::Other(value),
                }
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> Self {
                value.as_str().to_owned()
            }
        }

        impl $name {
            /// The wire spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $wire,)+
                    Self::Other(other) => other,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

lenient_str_enum! {
    /// What kind of work a tool call does; permission decisions depend on it.
    ToolKind {
        /// Reads files or data.
        Read = "read",
        /// Changes files.
        Edit = "edit",
        /// Deletes files.
        Delete = "delete",
        /// Moves or renames files.
        Move = "move",
        /// Searches.
        Search = "search",
        /// Runs a command.
        Execute = "execute",
        /// Internal reasoning.
        Think = "think",
        /// Fetches from the network.
        Fetch = "fetch",
        /// Switches the session mode.
        SwitchMode = "switch_mode",
        /// Anything else (the CLI uses it for MCP tools).
        Misc = "other",
    }
}

lenient_str_enum! {
    /// Where a tool call stands.
    ToolCallStatus {
        /// Not started (possibly waiting for permission).
        Pending = "pending",
        /// Running.
        InProgress = "in_progress",
        /// Finished.
        Completed = "completed",
        /// Failed or was refused.
        Failed = "failed",
    }
}

lenient_str_enum! {
    /// Why a turn ended.
    StopReason {
        /// The model finished.
        EndTurn = "end_turn",
        /// The token limit was reached.
        MaxTokens = "max_tokens",
        /// The request limit of the turn was reached.
        MaxTurnRequests = "max_turn_requests",
        /// The model refused.
        Refusal = "refusal",
        /// The turn was cancelled (by us, or because it timed out).
        Cancelled = "cancelled",
    }
}

impl ToolKind {
    /// How the permission policy sees a call of this kind: `edit`, `delete` and `move` change
    /// files; `read` and `search` read them; every other kind (including ones this client does
    /// not know) is `Other`, which the built-in command rules still check.
    pub fn action(&self) -> ActionKind {
        match self {
            Self::Edit | Self::Delete | Self::Move => ActionKind::Edit,
            Self::Execute => ActionKind::Execute,
            Self::Read | Self::Search => ActionKind::Read,
            Self::Fetch => ActionKind::Fetch,
            Self::Think | Self::SwitchMode | Self::Misc | Self::Other(_) => ActionKind::Other,
        }
    }
}

/// A file location a tool call touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    /// Absolute path.
    pub path: PathBuf,
    /// 1-based line, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// A tool call the agent announced (`tool_call`) or a change to one (`tool_call_update`, where
/// every field but the id may be absent).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ToolCall {
    /// The agent's id for the call, e.g. `call_1`.
    pub tool_call_id: String,
    /// A human-readable title (for MCP tools the CLI uses `<server>-<tool>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The kind of work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolKind>,
    /// Its status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ToolCallStatus>,
    /// The tool's input, as the agent reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    /// The tool's output, as the agent reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<Value>,
    /// Files it touches.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<Location>,
    /// Content produced (diffs, text, terminal references), kept as sent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<Value>,
}

/// One step of the agent's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanEntry {
    /// What the step does.
    pub content: String,
    /// `high`, `medium` or `low`.
    #[serde(default)]
    pub priority: String,
    /// `pending`, `in_progress` or `completed`.
    #[serde(default)]
    pub status: String,
}

/// A slash command the agent offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailableCommand {
    /// The command name, without the slash.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
}

/// What the bridge answered to one of the agent's permission requests (not a wire update: the
/// client adds it to the stream so observers see every decision where it happened).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRecord {
    /// The tool call the request was about.
    pub tool_call_id: String,
    /// Its title.
    pub title: String,
    /// Its kind.
    pub kind: ToolKind,
    /// The command, for shell calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The paths it touches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathBuf>,
    /// Whether it was allowed (once; the bridge never grants "always").
    pub allowed: bool,
    /// Why.
    pub reason: String,
}

/// One `session/update` from the agent, or a permission decision of ours.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Update {
    /// A chunk of the agent's answer.
    AgentMessage(ContentBlock),
    /// A chunk of the agent's reasoning.
    AgentThought(ContentBlock),
    /// A chunk of a user message (replayed when a session is loaded).
    UserMessage(ContentBlock),
    /// A new tool call.
    ToolCall(ToolCall),
    /// A change to a tool call.
    ToolCallUpdate(ToolCall),
    /// The agent's plan, complete each time.
    Plan(Vec<PlanEntry>),
    /// Context window use: tokens used of the window's size.
    Usage {
        /// Tokens in use.
        used: u64,
        /// The window's size.
        size: u64,
    },
    /// Session metadata changed.
    SessionInfo {
        /// The new title, if it changed.
        title: Option<String>,
    },
    /// The slash commands the agent offers.
    AvailableCommands(Vec<AvailableCommand>),
    /// The session's mode changed (mode ids are URLs).
    CurrentMode(String),
    /// The session's configuration options, complete each time, kept as sent.
    ConfigOptions(Vec<Value>),
    /// The bridge answered a permission request.
    Permission(PermissionRecord),
    /// The bridge is asking a person whether to allow a step, and the turn waits for the answer
    /// (not a wire update: the client adds it to the stream).
    Asking {
        /// The tool call the question is about.
        tool_call_id: String,
        /// Why the policy wants a person to confirm it.
        reason: String,
    },
    /// A prompt the bridge itself sent into the session (the summary that seeds a replacement
    /// session after a crash), before the caller's own prompt.
    GeneratedPrompt(String),
    /// The turn was interrupted by a failure of the agent (it died, or stopped answering); the
    /// caller may retry it. Not a wire update: the bridge adds it to the stream.
    Interrupted(String),
    /// An update this client cannot read, kept whole.
    Unknown {
        /// The `sessionUpdate` value (empty when missing).
        kind: String,
        /// The update as sent.
        raw: Value,
    },
}

#[derive(Deserialize)]
struct ContentField {
    content: ContentBlock,
}

#[derive(Deserialize)]
struct PlanFields {
    #[serde(default)]
    entries: Vec<PlanEntry>,
}

#[derive(Deserialize)]
struct UsageFields {
    #[serde(default)]
    used: u64,
    #[serde(default)]
    size: u64,
}

#[derive(Deserialize)]
struct InfoFields {
    #[serde(default)]
    title: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommandsFields {
    #[serde(default)]
    available_commands: Vec<AvailableCommand>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModeFields {
    current_mode_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigFields {
    #[serde(default)]
    config_options: Vec<Value>,
}

fn fields<T: DeserializeOwned>(raw: &Value) -> Option<T> {
    T::deserialize(raw).ok()
}

impl Update {
    /// Reads one `update` object of a `session/update` notification.
    pub(crate) fn from_wire(raw: Value) -> Self {
        let kind = raw
            .get("sessionUpdate")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let parsed = match kind.as_str() {
            "agent_message_chunk" => {
                fields::<ContentField>(&raw).map(|f| Self::AgentMessage(f.content))
            }
            "agent_thought_chunk" => {
                fields::<ContentField>(&raw).map(|f| Self::AgentThought(f.content))
            }
            "user_message_chunk" => {
                fields::<ContentField>(&raw).map(|f| Self::UserMessage(f.content))
            }
            "tool_call" => fields::<ToolCall>(&raw)
                .filter(|c| !c.tool_call_id.is_empty())
                .map(Self::ToolCall),
            "tool_call_update" => fields::<ToolCall>(&raw)
                .filter(|c| !c.tool_call_id.is_empty())
                .map(Self::ToolCallUpdate),
            "plan" => fields::<PlanFields>(&raw).map(|f| Self::Plan(f.entries)),
            "usage_update" => fields::<UsageFields>(&raw).map(|f| Self::Usage {
                used: f.used,
                size: f.size,
            }),
            "session_info_update" => {
                fields::<InfoFields>(&raw).map(|f| Self::SessionInfo { title: f.title })
            }
            "available_commands_update" => fields::<CommandsFields>(&raw)
                .map(|f| Self::AvailableCommands(f.available_commands)),
            "current_mode_update" => {
                fields::<ModeFields>(&raw).map(|f| Self::CurrentMode(f.current_mode_id))
            }
            "config_option_update" => {
                fields::<ConfigFields>(&raw).map(|f| Self::ConfigOptions(f.config_options))
            }
            _ => None,
        };
        parsed.unwrap_or(Self::Unknown { kind, raw })
    }

    /// The update's kind as the wire names it (`permission` for our own decisions).
    pub fn kind(&self) -> &str {
        match self {
            Self::AgentMessage(_) => "agent_message_chunk",
            Self::AgentThought(_) => "agent_thought_chunk",
            Self::UserMessage(_) => "user_message_chunk",
            Self::ToolCall(_) => "tool_call",
            Self::ToolCallUpdate(_) => "tool_call_update",
            Self::Plan(_) => "plan",
            Self::Usage { .. } => "usage_update",
            Self::SessionInfo { .. } => "session_info_update",
            Self::AvailableCommands(_) => "available_commands_update",
            Self::CurrentMode(_) => "current_mode_update",
            Self::ConfigOptions(_) => "config_option_update",
            Self::Permission(_) => "permission",
            Self::GeneratedPrompt(_) => "generated_prompt",
            Self::Asking { .. } => "asking",
            Self::Interrupted(_) => "interrupted",
            Self::Unknown { kind, .. } => kind,
        }
    }

    /// The text of a message chunk from the agent, if this is one.
    pub fn agent_text(&self) -> Option<&str> {
        match self {
            Self::AgentMessage(block) => block.as_text(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp_kinds_map_onto_policy_actions() {
        let cases = [
            ("edit", ActionKind::Edit),
            ("delete", ActionKind::Edit),
            ("move", ActionKind::Edit),
            ("execute", ActionKind::Execute),
            ("read", ActionKind::Read),
            ("search", ActionKind::Read),
            ("fetch", ActionKind::Fetch),
            ("think", ActionKind::Other),
            ("other", ActionKind::Other),
            ("surprise", ActionKind::Other),
        ];
        for (acp, action) in cases {
            assert_eq!(ToolKind::from(acp.to_owned()).action(), action, "{acp}");
        }
    }
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// Every `session/update` in every capture of the real CLI is read as a typed update.
    #[test]
    fn every_update_in_the_captures_is_typed() -> anyhow::Result<()> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/acp-captures");
        let mut seen = std::collections::BTreeSet::new();
        let mut files = 0;
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            files += 1;
            for line in std::fs::read_to_string(&path)?.lines() {
                let event: Value = serde_json::from_str(line)?;
                let msg = &event["msg"];
                if event["dir"] != "recv" || msg["method"] != "session/update" {
                    continue;
                }
                let update = Update::from_wire(msg["params"]["update"].clone());
                assert!(
                    !matches!(update, Update::Unknown { .. }),
                    "{}: unreadable update {msg}",
                    path.display()
                );
                assert_eq!(
                    Some(update.kind()),
                    msg["params"]["update"]["sessionUpdate"].as_str()
                );
                seen.insert(msg["params"]["update"]["sessionUpdate"].to_string());
            }
        }
        assert!(files >= 10, "captures missing from {}", dir.display());
        assert!(seen.len() >= 9, "kinds seen: {seen:?}");
        Ok(())
    }

    #[test]
    fn a_tool_call_from_the_cli_keeps_its_kind_input_and_locations() {
        let update = Update::from_wire(json!({
            "sessionUpdate": "tool_call", "toolCallId": "call_1",
            "title": "Creating /w/hello.txt", "kind": "edit", "status": "pending",
            "rawInput": {"path": "/w/hello.txt", "file_text": "hi\n"},
            "locations": [{"path": "/w/hello.txt"}],
            "content": [{"type": "diff", "path": "/w/hello.txt", "oldText": "", "newText": "hi\n"}]
        }));
        let Update::ToolCall(call) = update else {
            panic!("not a tool call: {update:?}");
        };
        assert_eq!(call.kind, Some(ToolKind::Edit));
        assert_eq!(call.status, Some(ToolCallStatus::Pending));
        assert_eq!(call.locations[0].path, PathBuf::from("/w/hello.txt"));
        assert_eq!(call.raw_input.expect("input")["file_text"], json!("hi\n"));
    }

    #[test]
    fn unknown_kinds_and_unreadable_known_kinds_are_kept_raw() {
        let novel = json!({"sessionUpdate": "weather_report", "sky": "blue"});
        assert_eq!(
            Update::from_wire(novel.clone()),
            Update::Unknown {
                kind: "weather_report".into(),
                raw: novel
            }
        );
        let broken = json!({"sessionUpdate": "current_mode_update"});
        assert!(
            matches!(Update::from_wire(broken), Update::Unknown { kind, .. } if kind == "current_mode_update")
        );
        let untyped = json!({"no": "kind"});
        assert!(
            matches!(Update::from_wire(untyped), Update::Unknown { kind, .. } if kind.is_empty())
        );
    }

    #[test]
    fn unknown_enum_values_survive() -> anyhow::Result<()> {
        let kind: ToolKind = serde_json::from_value(json!("teleport"))?;
        assert_eq!(kind, ToolKind::Other("teleport".into()));
        assert_eq!(serde_json::to_value(&kind)?, json!("teleport"));
        let stop: StopReason = serde_json::from_value(json!("cancelled"))?;
        assert_eq!(stop, StopReason::Cancelled);
        Ok(())
    }
}
