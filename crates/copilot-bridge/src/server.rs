//! The bridge as a [`ToolServer`]: its identity, its tool table, and the state the tools share.
//! The `ServerHandler` itself is `bridge_mcp::McpServer`, the same for both servers.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bridge_core::audit::AuditLog;
use bridge_core::config::Config;
use bridge_core::confine::Root;
use bridge_core::policy::AskVia;
use bridge_core::sync::lock;
use bridge_mcp::{Envelope, Identity, PolicyShape, ToolError, ToolServer, ToolSpec, ToolTable};
use rmcp::handler::server::router::tool::ToolRoute;
use tokio_util::sync::CancellationToken;

use crate::acp::{PermissionDecider, PermissionGate};
use crate::approval::{Approvals, OpenclawApprover, PausedCalls};
use crate::live::LiveSessions;
use crate::runner::Runner;

/// How much longer than the approval timeout the permission gate waits for a question.
const ASK_TIMEOUT_MARGIN: Duration = Duration::from_secs(10);

/// Who the bridge is.
const IDENTITY: Identity = Identity {
    name: env!("CARGO_PKG_NAME"),
    version: env!("CARGO_PKG_VERSION"),
    instructions: "Delegates coding work to GitHub Copilot (the Copilot CLI over ACP) \
and reads, creates and lists files in the workspace. Every call is checked against the \
permission policy, redacted and audited; paths outside the workspace are refused.",
    orientation: "copilot-bridge is an MCP server: it speaks JSON-RPC on stdin/stdout, so an \
MCP client (OpenClaw, Claude Code, Codex, Cursor, VS Code, the Copilot CLI) should start it, not \
a person.\n  Check the setup:     copilot-bridge validate\n  Register a client:   see the README \
(\"Register the servers with an MCP client\")\n  One task by hand:    copilot-bridge exec \"your task\"\nPress Ctrl-C or \
Ctrl-D to quit.",
};

/// The `copilot-bridge` MCP server. Cheap to clone: clones share state.
#[derive(Debug, Clone)]
pub struct BridgeServer {
    shared: Arc<Shared>,
    /// Built on first use (listing or calling a tool), not before the handshake.
    tools: Arc<OnceLock<ToolTable<Self>>>,
}

#[derive(Debug)]
struct Shared {
    config: Config,
    envelope: Envelope,
    /// Where the workspace root is; opened on first use so a missing directory is reported to
    /// the caller of a file tool rather than stopping the server.
    workspace_path: PathBuf,
    workspace: OnceLock<Root>,
    /// Runs delegated tasks on the shared Copilot CLI (started by the first task).
    runner: Arc<Runner>,
    /// The long-lived sessions (`copilot_session_*`), on the same runner.
    live: Arc<LiveSessions>,
    /// Delegated calls paused on a question for MCP 2026-07-28 clients.
    paused: PausedCalls<Result<rmcp::model::CallToolResponse, rmcp::ErrorData>>,
    /// OpenClaw's approval flow, when the gateway is configured and the policy may use it.
    openclaw: Option<Arc<OpenclawApprover>>,
    /// Orchestrations running now, so [`BridgeServer::interrupt`] can stop them.
    orchestrations: Mutex<HashMap<u64, CancellationToken>>,
    next_orchestration: AtomicU64,
}

/// An orchestration's stop token, known to [`BridgeServer::interrupt`] until dropped.
#[derive(Debug)]
pub(crate) struct Interruptible {
    server: BridgeServer,
    id: u64,
    token: CancellationToken,
}

impl Interruptible {
    /// Fires on the caller's cancellation and on [`BridgeServer::interrupt`].
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for Interruptible {
    fn drop(&mut self) {
        lock(&self.server.shared.orchestrations).remove(&self.id);
    }
}

impl BridgeServer {
    /// Creates the server over the workspace root `workspace_path`; every call passes through
    /// `envelope` (see [`Envelope::from_config`]).
    pub fn new(config: Config, workspace_path: PathBuf, envelope: Envelope) -> Self {
        // The agent's own permission requests go through the same policy as the calls.
        // A rule that says `ask` goes to the approval broker, which asks the calling client or
        // OpenClaw; the envelope asks the same way for the bridge's own tools.
        let via = envelope.policy().ask_via();
        let openclaw = matches!(via, AskVia::Auto | AskVia::Openclaw)
            .then(|| OpenclawApprover::start(&config))
            .flatten()
            .map(Arc::new);
        let approver = openclaw
            .clone()
            .map(|a| a as Arc<dyn bridge_mcp::ask_route::Approver>);
        let envelope = match &approver {
            Some(approver) => envelope.with_approver(Arc::clone(approver)),
            None => envelope,
        };
        let approvals = Approvals::new(via, envelope.audit().clone(), approver);
        // A question through OpenClaw may take its whole approval timeout.
        let ask_timeout = crate::acp::DEFAULT_ASK_TIMEOUT
            .max(Duration::from_millis(config.approval_timeout_ms) + ASK_TIMEOUT_MARGIN);
        let gate = PermissionGate::new(envelope.policy() as Arc<dyn PermissionDecider>)
            .with_ask_hook(Arc::clone(&approvals) as Arc<dyn crate::acp::AskHook>)
            .with_ask_timeout(ask_timeout);
        let runner = Arc::new(
            Runner::new(config.clone(), workspace_path.clone(), gate).with_approvals(approvals),
        );
        let live = LiveSessions::new(
            Arc::clone(&runner),
            std::time::Duration::from_millis(config.timeout_ms),
            std::time::Duration::from_millis(config.session_idle_ms),
        );
        Self {
            shared: Arc::new(Shared {
                config,
                envelope,
                workspace_path,
                workspace: OnceLock::new(),
                runner,
                live,
                paused: PausedCalls::new(crate::acp::DEFAULT_ASK_TIMEOUT),
                openclaw,
                orchestrations: Mutex::new(HashMap::new()),
                next_orchestration: AtomicU64::new(0),
            }),
            tools: Arc::new(OnceLock::new()),
        }
    }

    /// The server as configured: the workspace root is `config.workspace`, else
    /// `default_workspace`; the policy and audit log come from `config`. Returns the audit log
    /// too, to drain after the server stops.
    pub fn from_config(
        config: Config,
        default_workspace: PathBuf,
    ) -> Result<(Self, AuditLog), bridge_mcp::SetupError> {
        let workspace = config.workspace.clone().unwrap_or(default_workspace);
        let envelope = Envelope::from_config(&config, IDENTITY.name, Some(workspace.clone()))?;
        let audit = envelope.audit().clone();
        Ok((Self::new(config, workspace, envelope), audit))
    }

    /// The audit log every call is recorded in (drain it at shutdown).
    pub fn audit(&self) -> &AuditLog {
        self.shared.envelope.audit()
    }

    /// The resolved configuration.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The runner of delegated tasks.
    pub(crate) fn runner(&self) -> &Runner {
        &self.shared.runner
    }

    /// The long-lived sessions.
    pub(crate) fn live(&self) -> &Arc<LiveSessions> {
        &self.shared.live
    }

    /// Delegated calls paused on a question (MCP 2026-07-28).
    pub(crate) fn paused(
        &self,
    ) -> &PausedCalls<Result<rmcp::model::CallToolResponse, rmcp::ErrorData>> {
        &self.shared.paused
    }

    /// Stops the Copilot CLI if a task started it: long-lived sessions are stopped, running
    /// tasks cancelled and sessions closed. Call once the MCP service has stopped.
    pub async fn shutdown(&self) {
        self.shared.paused.shutdown().await;
        if let Some(openclaw) = &self.shared.openclaw {
            openclaw.shutdown().await;
        }
        self.shared.live.shutdown().await;
        self.shared.runner.shutdown().await;
    }

    /// Stops every running orchestration and cancels every running Copilot turn, keeping
    /// their results (see [`Runner::interrupt`]); returns how many there were. A person's
    /// Ctrl-C at a terminal subcommand, where MCP cancellation would drop the answer.
    pub fn interrupt(&self) -> usize {
        let orchestrations: Vec<CancellationToken> = lock(&self.shared.orchestrations)
            .values()
            .cloned()
            .collect();
        for token in &orchestrations {
            token.cancel();
        }
        orchestrations.len() + self.shared.runner.interrupt()
    }

    /// Registers an orchestration's stop token with [`BridgeServer::interrupt`].
    pub(crate) fn register_interruptible(&self, token: CancellationToken) -> Interruptible {
        let id = self
            .shared
            .next_orchestration
            .fetch_add(1, Ordering::Relaxed);
        lock(&self.shared.orchestrations).insert(id, token.clone());
        Interruptible {
            server: self.clone(),
            id,
            token,
        }
    }

    /// The tools this server offers, as listed to clients.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_table().tools()
    }

    /// The workspace root, opened on first use.
    pub(crate) fn workspace(&self) -> Result<Root, ToolError> {
        if let Some(root) = self.shared.workspace.get() {
            return Ok(root.clone());
        }
        let root = Root::open(&self.shared.workspace_path).map_err(|e| ToolError::model(&e))?;
        Ok(self.shared.workspace.get_or_init(|| root).clone())
    }
}

impl ToolServer for BridgeServer {
    const IDENTITY: Identity = IDENTITY;
    const LONG_RUNNING_TOOLS: bool = true;

    fn tool_table(&self) -> &ToolTable<Self> {
        self.tools.get_or_init(table)
    }

    fn envelope(&self) -> &Envelope {
        &self.shared.envelope
    }

    fn interrupt(&self) -> usize {
        BridgeServer::interrupt(self)
    }

    async fn shutdown(&self) {
        BridgeServer::shutdown(self).await;
    }
}

type Server = BridgeServer;

/// Every tool of the bridge. A delegated task is judged as a whole by the policy (its text
/// against the blocked patterns and commands, its directory against the workspace); each step
/// the agent then takes is judged again when it asks for permission. Delegated tasks run for
/// minutes, so a client that declares the MCP tasks extension gets them as tasks.
fn table() -> ToolTable<Server> {
    ToolTable::new([
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_read_file_tool_attr(),
                Server::copilot_read_file,
            ),
            PolicyShape::read("path", None),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_list_files_tool_attr(),
                Server::copilot_list_files,
            ),
            PolicyShape::read("directory", Some(".")),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_create_file_tool_attr(),
                Server::copilot_create_file,
            ),
            PolicyShape::edit("path"),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_code_task_tool_attr(),
                Server::copilot_code_task,
            ),
            PolicyShape::delegate("workingDir"),
        )
        .long_running(),
        ToolSpec::new(
            ToolRoute::new(Server::copilot_code_tool_attr(), Server::copilot_code),
            PolicyShape::delegate("workingDir"),
        )
        .long_running(),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_code_verbose_tool_attr(),
                Server::copilot_code_verbose,
            ),
            PolicyShape::delegate("workingDir"),
        )
        .long_running(),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_orchestrate_tool_attr(),
                Server::copilot_orchestrate,
            ),
            PolicyShape::delegate("workingDir"),
        )
        .long_running(),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_session_start_tool_attr(),
                Server::copilot_session_start,
            ),
            PolicyShape::delegate("workingDirectory"),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_session_query_tool_attr(),
                Server::copilot_session_query,
            ),
            PolicyShape::converse(),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_session_live_tool_attr(),
                Server::copilot_session_live,
            ),
            PolicyShape::read_only(),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_session_stop_tool_attr(),
                Server::copilot_session_stop,
            ),
            PolicyShape::read_only(),
        ),
        ToolSpec::new(
            ToolRoute::new(
                Server::copilot_session_list_tool_attr(),
                Server::copilot_session_list,
            ),
            PolicyShape::read_only(),
        ),
    ])
}

#[cfg(test)]
mod table_tests {
    use super::*;

    #[test]
    fn every_tool_has_one_row_and_the_readme_documents_it() {
        let table = table();
        let names = table.names();
        assert_eq!(names.len(), 12, "{names:?}");
        assert_eq!(table.tools().len(), names.len());
        assert_eq!(
            table.has_long_running(),
            <BridgeServer as ToolServer>::LONG_RUNNING_TOOLS
        );
        let readme = include_str!("../../../README.md");
        for name in &names {
            assert!(
                readme.contains(&format!("`{name}`")),
                "README.md does not document {name}"
            );
            let schema = &table.router().get(name).map(|t| t.input_schema.clone());
            let depth = schema
                .as_ref()
                .and_then(|s| s.get("properties"))
                .and_then(|p| p.get("_depth"));
            assert!(depth.is_some(), "{name} does not declare _depth");
        }
    }
}
