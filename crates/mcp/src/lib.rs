//! MCP glue shared by both servers, kept out of `bridge-core` so the core stays protocol-free:
//! the error type that chooses between a tool error and a protocol error, answers that carry
//! structured output plus a readable copy, input-schema clean-up, and running blocking work.
#![deny(missing_docs)]

/// Answers: structured content plus a readable text copy.
mod answer;
/// Running blocking file work off the async threads.
mod blocking;
/// The envelope every tool call passes through: depth, policy, audit, redaction.
mod envelope;
/// Input schemas every MCP client accepts.
mod schema;
/// The error type of every tool.
mod tool_error;

pub use crate::answer::Answer;
pub use crate::blocking::blocking;
pub use crate::envelope::{CallShape, Describe, Envelope, EnvelopeSettings, SetupError};
pub use crate::schema::plain_input_schemas;
pub use crate::tool_error::{ToolError, error_chain};
