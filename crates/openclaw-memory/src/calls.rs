//! The envelope around every tool call: the call-depth check that stops loops (bridge →
//! Copilot → memory → …), redaction of everything a tool returns, and the audit record.

use std::time::Instant;

use bridge_core::redact::{DEFAULT_TRUNCATE_BYTES, Redactor, truncate};
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};

/// What became of a call, for the audit record.
#[derive(Debug)]
pub enum Outcome<'a> {
    /// Refused before running (call depth).
    Denied(&'a str),
    /// The tool ran; its (already redacted) result.
    Result(&'a CallToolResult),
    /// The call failed with a JSON-RPC error.
    ProtocolError(&'a ErrorData),
    /// Any other response shape.
    Other,
}

/// Depth limits, the redactor and the audit sink shared by every call.
#[derive(Debug)]
pub struct CallGuard {
    max_depth: u32,
    inherited_depth: u32,
    redactor: &'static Redactor,
}

impl CallGuard {
    /// A guard refusing calls at `max_depth` or deeper, where the process itself already runs
    /// at `inherited_depth` (from the environment of whoever spawned it; unparsable means 0).
    pub fn new(max_depth: u32, inherited_depth: Option<&str>) -> Self {
        Self {
            max_depth,
            inherited_depth: inherited_depth
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            redactor: Redactor::shared(),
        }
    }

    /// The effective depth of a call, `max(_depth argument, inherited depth)`, or why it is
    /// refused. A `_depth` that is not a non-negative integer is left for argument checking
    /// to reject.
    pub fn check_depth(&self, arguments: &JsonObject) -> Result<u32, String> {
        let argument = arguments
            .get("_depth")
            .and_then(serde_json::Value::as_u64)
            .map_or(0, |d| u32::try_from(d).unwrap_or(u32::MAX));
        let depth = argument.max(self.inherited_depth);
        if depth >= self.max_depth {
            return Err(format!(
                "call depth {depth} reached the limit of {}: this looks like a loop between \
                 tools (e.g. bridge → Copilot → memory → bridge). Answer without calling more \
                 tools, or raise COPILOT_BRIDGE_MAX_DEPTH if the chain is intended.",
                self.max_depth
            ));
        }
        Ok(depth)
    }

    /// Redacts secrets from every text block and from the structured content.
    pub fn redact(&self, result: &mut CallToolResult) {
        for block in &mut result.content {
            if let ContentBlock::Text(text) = block
                && let std::borrow::Cow::Owned(clean) = self.redactor.redact(&text.text)
            {
                text.text = clean;
            }
        }
        if let Some(value) = result.structured_content.as_mut() {
            self.redactor.redact_json(value);
        }
    }

    /// Records one call. Arguments and outputs are redacted and truncated before they are
    /// written.
    pub fn record(
        &self,
        tool: &str,
        arguments: &JsonObject,
        outcome: &Outcome<'_>,
        started: Instant,
    ) {
        let mut input = serde_json::Value::Object(arguments.clone());
        self.redactor.redact_json(&mut input);
        let input = truncate(&input.to_string(), DEFAULT_TRUNCATE_BYTES).into_owned();
        let (decision, output) = match *outcome {
            Outcome::Denied(reason) => ("deny", reason.to_owned()),
            Outcome::Result(result) => (
                if result.is_error == Some(true) {
                    "error"
                } else {
                    "allow"
                },
                result
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Outcome::ProtocolError(error) => ("error", error.message.to_string()),
            Outcome::Other => ("allow", String::new()),
        };
        let output = truncate(&output, DEFAULT_TRUNCATE_BYTES).into_owned();
        let elapsed_ms = started.elapsed().as_millis();
        tracing::info!(target: "audit", tool, decision, elapsed_ms, %input, output_bytes = output.len(), "tool call");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[expect(clippy::needless_pass_by_value, reason = "called with json! literals")]
    fn args(value: serde_json::Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn depth_is_the_larger_of_argument_and_inheritance() {
        let guard = CallGuard::new(3, Some("1"));
        assert_eq!(guard.check_depth(&args(json!({}))), Ok(1));
        assert_eq!(guard.check_depth(&args(json!({"_depth": 2}))), Ok(2));
        assert!(guard.check_depth(&args(json!({"_depth": 3}))).is_err());
        assert!(
            CallGuard::new(3, Some("3"))
                .check_depth(&args(json!({})))
                .is_err()
        );
        assert_eq!(
            CallGuard::new(3, Some("junk")).check_depth(&args(json!({"_depth": "x"}))),
            Ok(0)
        );
    }
}
