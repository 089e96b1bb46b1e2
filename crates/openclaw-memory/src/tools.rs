//! The three MCP tools. What tools share (the error type, answers with structured output plus a
//! readable copy, running blocking work) comes from `bridge-mcp`, shared with `copilot-bridge`.

/// `openclaw_user_prefs`.
mod prefs;
/// `openclaw_memory_read`.
mod read;
/// `openclaw_memory_search`.
mod search;

pub use bridge_mcp::{Answer, ToolError, blocking};

pub use crate::tools::prefs::{PrefsArgs, PrefsOutput};
pub use crate::tools::read::{ReadArgs, ReadOutput};
pub use crate::tools::search::{Hit, SearchArgs, SearchOutput};

/// Names of the tools, for messages that list them.
pub const TOOL_NAMES: [&str; 3] = [
    "openclaw_memory_search",
    "openclaw_memory_read",
    "openclaw_user_prefs",
];

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
