//! MCP glue shared by both servers, kept out of `bridge-core` so the core stays protocol-free:
//! the tool table each server declares its tools in, the one `ServerHandler` both run as, the
//! envelope every call passes through, serving stdio with a graceful shutdown, the error type
//! that chooses between a tool error and a protocol error, answers that carry structured output
//! plus a readable copy, input-schema clean-up, and running blocking work.
#![deny(missing_docs)]

/// Answers: structured content plus a readable text copy.
mod answer;
/// Where a question for a person goes: the client, an approver outside it, or nobody.
pub mod ask_route;
/// Running blocking file work off the async threads.
mod blocking;
/// One yes/no question to a person through the MCP client.
pub mod confirm;
/// The runtime and exit code of both binaries.
mod entry;
/// The envelope every tool call passes through: depth, policy, audit, redaction.
mod envelope;
/// The one `ServerHandler` both servers run as.
mod handler;
/// Input schemas every MCP client accepts.
mod schema;
/// Questions asked of MCP 2026-07-28 clients as `input_required` results, with sealed states.
pub mod sealed;
/// Serving stdio until EOF or a signal, and the graceful shutdown after.
mod serve;
/// The error type of every tool.
mod tool_error;
/// Tools as data: one table per server.
mod tool_table;

pub use crate::answer::Answer;
pub use crate::blocking::blocking;
pub use crate::entry::{block_on, finish, runtime};
pub use crate::envelope::{Envelope, EnvelopeSettings, SetupError};
pub use crate::handler::{Identity, McpServer, TASK_POLL_MS, TASK_TTL_MS, ToolServer};
pub use crate::schema::plain_input_schemas;
pub use crate::serve::{
    AUDIT_DRAIN_BOUND, CALL_GRACE, SHUTDOWN_BOUND, ServeError, Stop, serve_stdio, tell_person,
};
pub use crate::tool_error::{ToolError, error_chain};
pub use crate::tool_table::{CallShape, PolicyShape, ToolSpec, ToolTable};
