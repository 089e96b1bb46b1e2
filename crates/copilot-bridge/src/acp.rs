//! The ACP client that drives the GitHub Copilot CLI (`copilot --acp --stdio`): a hand-rolled
//! JSON-RPC layer over tokio with our own lenient types, so callers see only
//! [`Agent`](crate::acp::Agent), [`Session`](crate::acp::Session),
//! [`Update`](crate::acp::Update), [`PromptOutcome`](crate::acp::PromptOutcome) and
//! [`AcpError`](crate::acp::AcpError), never the wire.
//!
//! Ground rules, from the CLI's captured behaviour: every request we send has a timeout (a
//! malformed line gets no reply at all); every request the agent sends is answered; permission
//! requests go through the [`PermissionGate`](crate::acp::PermissionGate) and are never granted
//! for more than once; the agent runs in its own process group, which is killed whole.

/// The agent process and the settings for launching the Copilot CLI.
mod config;
/// JSON-RPC over newline-delimited JSON: requests, timeouts, answers to the agent.
mod connection;
/// Prompt and message content blocks.
mod content;
/// Routing of agent notifications and requests to sessions and the permission gate.
mod dispatch;
/// Errors with actionable messages.
mod error;
/// Permission decisions: hard rules, policy, ask hook.
mod permission;
/// Spawning, watching and stopping the agent's process group.
mod process;
/// Sessions, prompts and their outcomes.
mod session;
/// Start, restart, session recovery and shutdown.
mod supervisor;
/// Typed, lenient session updates.
mod update;
/// Wire shapes of the ACP methods we use.
mod wire;

pub use self::config::{
    AgentConfig, CopilotLaunch, MEMORY_SERVER_NAME, McpServerConfig, MemoryLaunch, MemoryNotFound,
    RestartBudget, Timeouts, resolve_program,
};
pub use self::content::ContentBlock;
pub use self::error::{AcpError, RpcError};
pub(crate) use self::permission::is_inside;
pub use self::permission::{
    AskHook, Asked, DEFAULT_ASK_TIMEOUT, DenyAll, PermissionAnswer, PermissionDecider,
    PermissionGate, PermissionRequest, Verdict,
};
pub use self::process::adopt_orphans;
pub use self::session::{PromptOptions, PromptOutcome, Session, SessionNotice};
pub use self::supervisor::{Agent, AgentInfo, ShutdownReport};
pub use self::update::{
    AvailableCommand, Location, PermissionRecord, PlanEntry, StopReason, ToolCall, ToolCallStatus,
    ToolKind, Update,
};
pub use self::wire::{
    AgentCapabilities, Implementation, McpCapabilities, PromptCapabilities, SessionCapabilities,
    SessionInfo, SessionMode, Usage,
};

/// A boxed future, as returned by [`AskHook::ask`].
pub use self::connection::BoxFuture;
