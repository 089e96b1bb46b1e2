//! The one place that decides how a tool failure reaches the client: as an `isError` result the
//! model reads and can act on (bad arguments, refused paths, missing files), or as a JSON-RPC
//! error for failures of the server itself.

use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};

/// A failed tool call.
#[derive(Debug)]
pub enum ToolError {
    /// Explained to the model as a tool result with `isError: true`.
    Model(String),
    /// A JSON-RPC error.
    Protocol(ErrorData),
}

impl ToolError {
    /// A model-facing error from any error, with its whole `source()` chain.
    pub fn model(err: &(dyn std::error::Error + 'static)) -> Self {
        Self::Model(error_chain(err))
    }

    /// An internal failure of the server, as a JSON-RPC error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::Protocol(ErrorData::internal_error(message.into(), None))
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Model(message) => f.write_str(message),
            Self::Protocol(error) => write!(f, "{}", error.message),
        }
    }
}

impl std::error::Error for ToolError {}

/// Renders an error and its causes on one line: `outer: cause: root cause`, skipping a cause
/// whose text the outer message already contains.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

impl From<bridge_core::confine::ConfineError> for ToolError {
    fn from(err: bridge_core::confine::ConfineError) -> Self {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrapped(std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("cannot save notes.md")
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn chain_names_every_cause_once() {
        let err = Wrapped(std::io::Error::other("disk full"));
        assert_eq!(error_chain(&err), "cannot save notes.md: disk full");
        let repeated = std::io::Error::other("disk full");
        assert_eq!(error_chain(&repeated), "disk full");
    }
}
