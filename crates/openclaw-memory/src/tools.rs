//! The three MCP tools. What tools share (the error type, answers with structured output plus a
//! readable copy, running blocking work) comes from `bridge-mcp`, shared with `copilot-bridge`.

/// `openclaw_user_prefs`.
mod prefs;
/// `openclaw_memory_read`.
mod read;
/// `openclaw_memory_search`.
mod search;

pub use bridge_mcp::{Answer, ToolError, blocking};

impl From<crate::service::ServiceError> for ToolError {
    fn from(err: crate::service::ServiceError) -> Self {
        Self::model(&err)
    }
}

impl From<crate::paths::PathError> for ToolError {
    fn from(err: crate::paths::PathError) -> Self {
        Self::model(&err)
    }
}
