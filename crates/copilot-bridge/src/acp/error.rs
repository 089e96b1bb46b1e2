//! Everything that can go wrong between the bridge and an ACP agent, each with a message that
//! says what happened and what the user can do about it.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// JSON-RPC error code for "the method does not exist".
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC error code for invalid parameters (the CLI also uses it for unknown sessions).
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC error code for an internal error.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// ACP's "authentication required".
pub(crate) const AUTH_REQUIRED: i64 = -32000;
/// ACP's "resource not found" (the CLI uses it for unknown sessions in `set_*`, `close`, `load`).
pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;

/// A JSON-RPC error object, as sent by either side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The numeric code, e.g. `-32601`.
    pub code: i64,
    /// The peer's message.
    #[serde(default)]
    pub message: String,
    /// Extra data, if the peer sent any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with a code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Whether the agent says the session it was asked about does not exist (or is not loaded).
    pub(crate) fn is_unknown_session(&self) -> bool {
        matches!(self.code, INVALID_PARAMS | RESOURCE_NOT_FOUND)
            && self.message.to_ascii_lowercase().contains("not found")
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// What the user should do when no model is reachable for lack of credentials.
const AUTH_HELP: &str = "Run `copilot login` once, or set COPILOT_GITHUB_TOKEN (or GH_TOKEN) \
to a GitHub token with Copilot access, or use a model of your own by setting \
COPILOT_BYOK_PROVIDER, COPILOT_BYOK_BASE_URL, COPILOT_BYOK_API_KEY and COPILOT_BYOK_MODEL";

/// An error from the ACP client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AcpError {
    /// The agent program is not where the configuration says, or not on `PATH`.
    #[error(
        "cannot find the Copilot CLI `{program}`: install it with `npm install -g @github/copilot` \
         or set COPILOT_CLI_PATH to its executable"
    )]
    NotFound {
        /// The program that was looked for.
        program: String,
    },
    /// The agent program exists but could not be started.
    #[error("cannot start the agent {}: {source}; check that it is executable", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why the spawn failed.
        #[source]
        source: std::io::Error,
    },
    /// A file the launch needs could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The agent has no usable credentials (ACP `-32000`).
    #[error("the Copilot CLI has no model it may use ({message}). {AUTH_HELP}")]
    AuthRequired {
        /// The agent's own message.
        message: String,
    },
    /// A request got no answer in time (a malformed line, for instance, gets no reply at all).
    #[error(
        "the agent did not answer `{method}` within {}s; it may be stuck or overloaded. \
         Try again; if it keeps happening, raise the timeout or check the agent's logs",
        timeout.as_secs_f32()
    )]
    Timeout {
        /// The request that timed out.
        method: String,
        /// How long we waited.
        timeout: Duration,
    },
    /// The agent process ended (or closed its output) while a request was waiting.
    #[error(
        "the agent stopped while `{method}` was in flight ({detail}); the bridge restarts it \
         and reloads the session on the next call"
    )]
    AgentExited {
        /// The request that was in flight.
        method: String,
        /// How it ended: exit code, signal, or closed output.
        detail: String,
    },
    /// The agent answered with a JSON-RPC error.
    #[error("the agent rejected `{method}`: {error}")]
    Rpc {
        /// The request.
        method: String,
        /// The agent's error.
        error: RpcError,
    },
    /// The agent answered with something that does not match the protocol.
    #[error("the agent's answer to `{method}` is not valid ACP: {detail}")]
    BadResponse {
        /// The request.
        method: String,
        /// What was wrong.
        detail: String,
    },
    /// The agent speaks a protocol version we do not.
    #[error(
        "the agent speaks ACP protocol version {version}, the bridge speaks 1; \
         install a Copilot CLI that supports ACP v1 (npm `@github/copilot`)"
    )]
    ProtocolVersion {
        /// The version the agent announced.
        version: Value,
    },
    /// The agent lacks a capability a call needs.
    #[error("the agent does not support {what}")]
    Unsupported {
        /// The missing capability.
        what: &'static str,
    },
    /// The agent crashed too often in a short time; the supervisor stopped restarting it.
    #[error(
        "the agent exited {restarts} times within {}s, so the bridge stopped restarting it; \
         check the Copilot CLI's logs (COPILOT_HOME/logs) and its configuration, then retry",
        window.as_secs()
    )]
    RestartLimit {
        /// Restarts counted in the window.
        restarts: usize,
        /// The window.
        window: Duration,
    },
    /// The session was closed; open a new one.
    #[error("session {session_id} is closed; start a new session")]
    SessionClosed {
        /// The closed session.
        session_id: String,
    },
    /// The agent was shut down; no more calls are possible.
    #[error("the agent has been shut down")]
    ShutDown,
}

impl AcpError {
    /// Maps a JSON-RPC error answer to the most helpful variant.
    pub(crate) fn from_rpc(method: &str, error: RpcError) -> Self {
        if error.code == AUTH_REQUIRED {
            return Self::AuthRequired {
                message: error.message,
            };
        }
        Self::Rpc {
            method: method.to_owned(),
            error,
        }
    }

    /// The JSON-RPC error the agent sent, if that is what this is.
    pub fn rpc_error(&self) -> Option<&RpcError> {
        match self {
            Self::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether the agent process is gone (the supervisor will start a new one).
    pub fn is_agent_exit(&self) -> bool {
        matches!(self, Self::AgentExited { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_required_tells_the_user_every_way_out() {
        let err = AcpError::from_rpc(
            "session/new",
            RpcError::new(AUTH_REQUIRED, "Authentication required"),
        );
        let text = err.to_string();
        for needle in [
            "copilot login",
            "COPILOT_GITHUB_TOKEN",
            "GH_TOKEN",
            "COPILOT_BYOK_PROVIDER",
            "Authentication required",
        ] {
            assert!(text.contains(needle), "{needle} missing from: {text}");
        }
    }

    #[test]
    fn unknown_session_errors_are_recognised_in_both_codes_the_cli_uses() {
        let prompt = RpcError::new(INVALID_PARAMS, "Session abc not found");
        let close = RpcError::new(
            RESOURCE_NOT_FOUND,
            "Resource not found: Session abc not found",
        );
        let other = RpcError::new(INVALID_PARAMS, "Invalid params: cwd is required");
        assert!(prompt.is_unknown_session());
        assert!(close.is_unknown_session());
        assert!(!other.is_unknown_session());
    }
}
