//! An MCP client wired to a [`BridgeServer`] in the same process, over an in-memory pipe. The
//! terminal subcommands call tools through it, so a task run from a shell passes through exactly
//! the checks an MCP client's call does: depth, policy, audit, redaction, truncation, progress
//! and cancellation.

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, JsonObject, ProgressNotificationParam, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::server::BridgeServer;

/// Bytes buffered in each direction of the in-memory pipe; a tool result larger than this is
/// simply written in several steps.
const PIPE_BYTES: usize = 256 * 1024;
/// How long a cancelled call may take to come back with its partial result before it is given
/// up on (the server cancels the Copilot turn, which answers within a second or two).
const CANCEL_GRACE: Duration = Duration::from_secs(20);

/// Why an in-process call failed.
#[derive(Debug, thiserror::Error)]
pub enum InProcessError {
    /// The MCP handshake between the two halves failed.
    #[error("cannot connect to the in-process bridge: {0}")]
    Connect(String),
    /// The request could not be sent or its answer was lost.
    #[error("the in-process bridge failed: {0}")]
    Service(#[from] rmcp::ServiceError),
    /// The server answered with something other than a tool result.
    #[error("the in-process bridge answered a tool call with something else")]
    UnexpectedAnswer,
    /// The call was cancelled before Copilot started working on it.
    #[error("cancelled before Copilot started on the task")]
    CancelledEarly,
    /// A cancelled call did not come back in time.
    #[error(
        "the task was cancelled but did not stop within {} s; the Copilot CLI is stopped on exit",
        CANCEL_GRACE.as_secs()
    )]
    CancelTimedOut,
}

/// Receives the server's notifications: progress messages go down a channel.
#[derive(Debug, Clone)]
struct Relay {
    progress: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Relay {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(message) = params.message {
            let _ = self.progress.send(message);
        }
    }
}

/// A connected client and the server task behind it.
#[derive(Debug)]
pub struct InProcess {
    client: RunningService<RoleClient, Relay>,
    server: BridgeServer,
    serving: JoinHandle<()>,
}

impl InProcess {
    /// Starts `server` on one end of an in-memory pipe and connects a client to the other;
    /// progress messages of every call arrive on `progress`.
    pub async fn connect(
        server: BridgeServer,
        progress: mpsc::UnboundedSender<String>,
    ) -> Result<Self, InProcessError> {
        let (server_end, client_end) = tokio::io::duplex(PIPE_BYTES);
        let serving_server = server.clone();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let serving = tokio::spawn(async move {
            match bridge_mcp::McpServer::new(serving_server)
                .serve(server_end)
                .await
            {
                Ok(service) => {
                    let _ = ready_tx.send(Ok(()));
                    if let Err(err) = service.waiting().await {
                        tracing::debug!(%err, "in-process server ended with an error");
                    }
                }
                Err(err) => {
                    let _ = ready_tx.send(Err(err.to_string()));
                }
            }
        });
        let client = Relay { progress }
            .serve(client_end)
            .await
            .map_err(|e| InProcessError::Connect(e.to_string()))?;
        ready_rx
            .await
            .map_err(|_| InProcessError::Connect("the server task ended".into()))?
            .map_err(InProcessError::Connect)?;
        Ok(Self {
            client,
            server,
            serving,
        })
    }

    /// Calls `tool` with `arguments`. When `cancel` fires, the running Copilot turns are
    /// interrupted and the result the tool then returns (the partial output of a cancelled
    /// turn) is still awaited and handed back. If no turn was running yet (the CLI was still
    /// starting), the call is cancelled the MCP way, which has no result:
    /// [`InProcessError::CancelledEarly`].
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, InProcessError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .client
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await?;
        let peer = handle.peer.clone();
        let id = handle.id.clone();
        let mut answer = handle.rx;
        let answer = tokio::select! {
            answer = &mut answer => answer,
            () = cancel.cancelled() => {
                if self.server.interrupt() == 0 {
                    let notice = CancelledNotification::new(CancelledNotificationParam::new(
                        Some(id),
                        Some("cancelled from the terminal".into()),
                    ));
                    peer.send_notification(notice.into()).await?;
                    return Err(InProcessError::CancelledEarly);
                }
                tokio::time::timeout(CANCEL_GRACE, answer)
                    .await
                    .map_err(|_| InProcessError::CancelTimedOut)?
            }
        };
        match answer.map_err(|_| rmcp::ServiceError::TransportClosed)?? {
            ServerResult::CallToolResult(result) => Ok(result),
            _ => Err(InProcessError::UnexpectedAnswer),
        }
    }

    /// Closes the connection and stops the server (and the Copilot CLI, if a call started it).
    pub async fn close(self) {
        let _ = self.client.cancel().await;
        let _ = self.serving.await;
        self.server.shutdown().await;
    }
}
