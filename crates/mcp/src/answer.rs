//! A successful tool answer: the structured value (matching the tool's output schema) in
//! `structuredContent`, and a readable copy in `content` for clients and models that read text.

use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde::Serialize;

/// A successful answer.
#[derive(Debug)]
pub struct Answer<T> {
    /// The readable copy.
    pub text: String,
    /// The structured result.
    pub value: T,
}

impl<T> Answer<T> {
    /// An answer with its readable copy.
    pub fn new(text: impl Into<String>, value: T) -> Self {
        Self {
            text: text.into(),
            value,
        }
    }
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
