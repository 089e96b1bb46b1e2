//! The three MCP tools and what they share: the error type that decides between a tool error
//! the model reads and a protocol error, and the answer type that carries structured output
//! plus a readable text copy.

/// `openclaw_user_prefs`.
mod prefs;
/// `openclaw_memory_read`.
mod read;
/// `openclaw_memory_search`.
mod search;

use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde::Serialize;

pub use crate::tools::prefs::{PrefsArgs, PrefsOutput};
pub use crate::tools::read::{ReadArgs, ReadOutput};
pub use crate::tools::search::{Hit, SearchArgs, SearchOutput};

/// Names of the tools, for messages that list them.
pub const TOOL_NAMES: [&str; 3] = [
    "openclaw_memory_search",
    "openclaw_memory_read",
    "openclaw_user_prefs",
];

/// A failed tool call. `Model` errors come back as `isError` results the model can act on
/// (bad arguments, missing files, refused paths); `Protocol` errors are JSON-RPC errors for
/// failures of the server itself.
#[derive(Debug)]
pub enum ToolError {
    /// Explained to the model as a tool result with `isError: true`.
    Model(String),
    /// A JSON-RPC error.
    Protocol(ErrorData),
}

impl ToolError {
    /// A model-facing error from anything displayable, with its whole `source()` chain.
    pub fn model(err: &(dyn std::error::Error + 'static)) -> Self {
        let mut message = err.to_string();
        let mut source = err.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        Self::Model(message)
    }
}

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

impl IntoCallToolResult for ToolError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        match self {
            Self::Model(message) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into())
            }
            Self::Protocol(error) => Err(error),
        }
    }
}

/// A successful answer: `value` as structured content (matching the tool's output schema) and
/// `text` as the readable copy in `content`.
#[derive(Debug)]
pub struct Answer<T> {
    /// The readable copy.
    pub text: String,
    /// The structured result.
    pub value: T,
}

impl<T: Serialize> IntoCallToolResult for Answer<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        let value = serde_json::to_value(&self.value).map_err(|e| {
            ErrorData::internal_error(format!("cannot encode the tool result: {e}"), None)
        })?;
        let mut result = CallToolResult::success(vec![ContentBlock::text(self.text)]);
        result.structured_content = Some(value);
        Ok(result.into())
    }
}

/// Removes `"default": null` from every tool's input properties. schemars writes it for
/// optional fields, and a `null` default on an `integer` property is a contradiction strict
/// schema checkers (OpenClaw validates every schema before accepting a server) may refuse.
pub(crate) fn plain_input_schemas<S>(
    router: &mut rmcp::handler::server::router::tool::ToolRouter<S>,
) {
    for route in router.map.values_mut() {
        let mut schema = route.attr.input_schema.as_ref().clone();
        if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
            for property in properties.values_mut() {
                if let serde_json::Value::Object(fields) = property
                    && fields.get("default") == Some(&serde_json::Value::Null)
                {
                    fields.remove("default");
                }
            }
        }
        route.attr.input_schema = std::sync::Arc::new(schema);
    }
}

/// Runs blocking file work off the async threads, mapping a panic to a protocol error.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        ToolError::Protocol(ErrorData::internal_error(
            format!("memory task failed: {e}"),
            None,
        ))
    })?
}
