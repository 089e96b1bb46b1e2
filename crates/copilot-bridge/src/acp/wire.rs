//! ACP on the wire: JSON-RPC 2.0 framing (one JSON object per line) and the parameter and result
//! shapes of the methods we use. Everything read is lenient — missing fields default, unknown
//! fields are ignored — because the CLI changes between releases and a missing optional field
//! must never cost a session.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::acp::content::ContentBlock;
use crate::acp::error::RpcError;
use crate::acp::update::{StopReason, ToolCall};

/// The ACP protocol version we speak (a number, not a string: the CLI rejects `"1"`).
pub(crate) const PROTOCOL_VERSION: u64 = 1;

/// A JSON-RPC request id. We send numbers; the agent may send either.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum RequestId {
    Number(i64),
    Text(String),
}

/// One line read from the agent, classified.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// The agent asks us something and waits for an answer.
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    /// The agent tells us something.
    Notification { method: String, params: Value },
    /// The answer to one of our requests.
    Response {
        id: RequestId,
        result: Result<Value, RpcError>,
    },
    /// Valid JSON that is none of the above; logged.
    Invalid { reason: &'static str, raw: Value },
}

impl Incoming {
    /// Classifies a parsed line. Deliberately forgiving: a missing `"jsonrpc"` or `params` is
    /// accepted, since the meaning is still clear.
    pub(crate) fn classify(raw: Value) -> Self {
        let id = raw
            .get("id")
            .filter(|id| !id.is_null())
            .and_then(|id| RequestId::deserialize(id).ok());
        let method = raw.get("method").and_then(Value::as_str).map(str::to_owned);
        match (method, id) {
            (Some(method), Some(id)) => Self::Request {
                id,
                method,
                params: raw.get("params").cloned().unwrap_or(Value::Null),
            },
            (Some(method), None) => Self::Notification {
                method,
                params: raw.get("params").cloned().unwrap_or(Value::Null),
            },
            (None, Some(id)) => {
                if let Some(error) = raw.get("error") {
                    let error = RpcError::deserialize(error).unwrap_or_else(|_| {
                        RpcError::new(crate::acp::error::INTERNAL_ERROR, error.to_string())
                    });
                    Self::Response {
                        id,
                        result: Err(error),
                    }
                } else if let Some(result) = raw.get("result") {
                    Self::Response {
                        id,
                        result: Ok(result.clone()),
                    }
                } else {
                    Self::Invalid {
                        reason: "a response with neither result nor error",
                        raw,
                    }
                }
            }
            (None, None) => Self::Invalid {
                reason: "neither a method nor an id",
                raw,
            },
        }
    }
}

/// Who we are, in `initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    /// Program name.
    #[serde(default)]
    pub name: String,
    /// Program version.
    #[serde(default)]
    pub version: String,
    /// Display name, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams {
    pub(crate) protocol_version: u64,
    pub(crate) client_capabilities: ClientCapabilities,
    pub(crate) client_info: Implementation,
}

/// What we offer the agent. We offer no `fs/*` and no `terminal/*`: the CLI never calls them
/// (it edits files and runs shells itself, behind permission requests), and not offering them
/// keeps every agent request we must answer on the permission path.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClientCapabilities {
    pub(crate) fs: FsCapabilities,
    pub(crate) terminal: bool,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FsCapabilities {
    pub(crate) read_text_file: bool,
    pub(crate) write_text_file: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct InitializeResponse {
    pub(crate) protocol_version: Value,
    pub(crate) agent_capabilities: AgentCapabilities,
    pub(crate) agent_info: Option<Implementation>,
    pub(crate) auth_methods: Vec<AuthMethod>,
}

/// What the agent says it can do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentCapabilities {
    /// `session/load` is available.
    pub load_session: bool,
    /// Which MCP transports `session/new` accepts besides stdio.
    pub mcp_capabilities: McpCapabilities,
    /// Which content a prompt may carry.
    pub prompt_capabilities: PromptCapabilities,
    /// Optional session methods.
    pub session_capabilities: SessionCapabilities,
}

/// MCP transports accepted in `session/new`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct McpCapabilities {
    /// HTTP servers.
    pub http: bool,
    /// SSE servers.
    pub sse: bool,
}

/// Content a prompt may carry besides text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PromptCapabilities {
    /// Images.
    pub image: bool,
    /// Audio.
    pub audio: bool,
    /// Embedded resources.
    pub embedded_context: bool,
}

/// Optional session methods (each present as an object when supported).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionCapabilities {
    /// `session/list`.
    pub list: Option<Value>,
    /// `session/close`.
    pub close: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct AuthMethod {
    pub(crate) id: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuthenticateParams {
    pub(crate) method_id: String,
}

/// An MCP server for `session/new` over stdio (ACP's default transport).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct StdioMcpServer {
    pub(crate) name: String,
    pub(crate) command: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<EnvVariable>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct EnvVariable {
    pub(crate) name: String,
    pub(crate) value: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewSessionParams<'a> {
    pub(crate) cwd: &'a std::path::Path,
    pub(crate) mcp_servers: &'a [StdioMcpServer],
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LoadSessionParams<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) cwd: &'a std::path::Path,
    pub(crate) mcp_servers: &'a [StdioMcpServer],
}

/// The answer to `session/new` and `session/load` (which has no `sessionId`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SessionSetup {
    pub(crate) session_id: Option<String>,
    pub(crate) modes: Option<SessionModes>,
}

/// The modes a session offers and the current one (ids are URLs for the CLI).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionModes {
    /// The current mode id.
    pub current_mode_id: String,
    /// Every mode.
    pub available_modes: Vec<SessionMode>,
}

/// One session mode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionMode {
    /// Its id, e.g. `https://agentclientprotocol.com/protocol/session-modes#plan`.
    pub id: String,
    /// Display name.
    pub name: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListSessionsParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cwd: Option<&'a std::path::Path>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<&'a str>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ListSessionsResponse {
    pub(crate) sessions: Vec<SessionInfo>,
    pub(crate) next_cursor: Option<String>,
}

/// A saved session as `session/list` reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionInfo {
    /// The session id.
    pub session_id: String,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its title (the CLI uses the first prompt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When it last changed (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptParams<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) prompt: &'a [ContentBlock],
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptResponse {
    pub(crate) stop_reason: StopReason,
    #[serde(default)]
    pub(crate) usage: Option<Usage>,
}

/// Token use of one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Usage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Tokens read from the prompt cache.
    pub cached_read_tokens: u64,
    /// Tokens written to the prompt cache.
    pub cached_write_tokens: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionIdParams<'a> {
    pub(crate) session_id: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetModeParams<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) mode_id: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetModelParams<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) model_id: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetConfigOptionParams<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) config_id: &'a str,
    pub(crate) value: &'a Value,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionNotification {
    pub(crate) session_id: String,
    pub(crate) update: Value,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestPermissionParams {
    pub(crate) session_id: String,
    pub(crate) tool_call: ToolCall,
    #[serde(default)]
    pub(crate) options: Vec<PermissionOption>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PermissionOption {
    pub(crate) option_id: String,
    #[serde(default)]
    pub(crate) kind: String,
}

/// Our answer to `session/request_permission`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PermissionOutcome {
    Selected(String),
    Cancelled,
}

impl PermissionOutcome {
    pub(crate) fn to_result(&self) -> Value {
        match self {
            Self::Selected(option_id) => {
                serde_json::json!({"outcome": {"outcome": "selected", "optionId": option_id}})
            }
            Self::Cancelled => serde_json::json!({"outcome": {"outcome": "cancelled"}}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn classifies_requests_notifications_and_responses_from_the_cli() {
        let permission = Incoming::classify(json!({"jsonrpc": "2.0", "id": 0,
            "method": "session/request_permission", "params": {"sessionId": "s"}}));
        assert!(
            matches!(permission, Incoming::Request { id: RequestId::Number(0), ref method, .. } if method == "session/request_permission")
        );
        let update =
            Incoming::classify(json!({"jsonrpc": "2.0", "method": "session/update", "params": {}}));
        assert!(matches!(update, Incoming::Notification { .. }));
        let error = Incoming::classify(json!({"jsonrpc": "2.0", "id": 3,
            "error": {"code": -32000, "message": "Authentication required"}}));
        let Incoming::Response { id, result } = error else {
            panic!("not a response");
        };
        assert_eq!(id, RequestId::Number(3));
        assert_eq!(
            result,
            Err(RpcError::new(-32000, "Authentication required"))
        );
        let null_result = Incoming::classify(json!({"jsonrpc": "2.0", "id": "x", "result": null}));
        assert!(matches!(
            null_result,
            Incoming::Response {
                result: Ok(Value::Null),
                ..
            }
        ));
        assert!(matches!(
            Incoming::classify(json!({"jsonrpc": "2.0"})),
            Incoming::Invalid { .. }
        ));
    }

    #[test]
    fn reads_the_cli_initialize_answer() -> anyhow::Result<()> {
        let response: InitializeResponse = serde_json::from_value(json!({
            "protocolVersion": 1,
            "agentCapabilities": {"auth": {"logout": {}}, "loadSession": true,
                "mcpCapabilities": {"http": true, "sse": true},
                "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
                "sessionCapabilities": {"close": {}, "list": {}}},
            "agentInfo": {"name": "Copilot", "title": "Copilot", "version": "1.0.102"},
            "authMethods": [{"id": "copilot-login", "name": "Log in with Copilot CLI"}]
        }))?;
        assert!(response.agent_capabilities.load_session);
        assert!(
            response
                .agent_capabilities
                .session_capabilities
                .close
                .is_some()
        );
        assert!(
            response
                .agent_capabilities
                .prompt_capabilities
                .embedded_context
        );
        assert_eq!(response.auth_methods[0].id, "copilot-login");
        assert_eq!(response.protocol_version, json!(1));
        Ok(())
    }

    #[test]
    fn permission_answers_have_the_shape_the_cli_accepts() {
        assert_eq!(
            PermissionOutcome::Selected("allow_once".into()).to_result(),
            json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
        );
        assert_eq!(
            PermissionOutcome::Cancelled.to_result(),
            json!({"outcome": {"outcome": "cancelled"}})
        );
    }
}
