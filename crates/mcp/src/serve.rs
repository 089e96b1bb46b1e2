//! The one entry point both servers serve stdio through, and its shutdown. The server stops on
//! stdin EOF (the normal end: the client went away), SIGTERM or SIGINT. On a signal it stops
//! taking calls, interrupts the running ones so each caller still gets its partial result,
//! waits a bounded time for those answers to be written, then closes the protocol. Either way
//! it then stops what the server started and drains the audit log, each within a bound, so the
//! process exits promptly and with status 0.

use std::io::IsTerminal;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::QuitReason;

use crate::handler::{McpServer, ToolServer};

/// How long interrupted calls get to write their partial results after a signal.
pub const CALL_GRACE: Duration = Duration::from_secs(3);
/// How long the server's own shutdown (stopping the Copilot CLI, closing links) may take. The
/// bridge's agent shutdown is bounded by its own timeouts (2 s when nothing hangs, about 15 s
/// when every step waits out its grace); this is the outer bound.
pub const SHUTDOWN_BOUND: Duration = Duration::from_secs(15);
/// How long draining the audit log may take.
pub const AUDIT_DRAIN_BOUND: Duration = Duration::from_secs(2);

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client's first messages were not a valid MCP handshake.
    #[error("MCP handshake on stdio failed")]
    Handshake(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The protocol loop itself failed.
    #[error("the MCP service stopped with an error")]
    Service(#[source] tokio::task::JoinError),
    /// The audit log could not be finished.
    #[error("cannot finish writing the audit log")]
    Audit(#[source] bridge_core::audit::AuditError),
    /// The signal handlers could not be installed.
    #[error("cannot listen for SIGTERM")]
    Signals(#[source] std::io::Error),
}

/// Which way the server was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Stdin closed: the client went away.
    Eof,
    /// SIGTERM.
    Terminate,
    /// SIGINT (Ctrl-C).
    Interrupt,
}

/// Serves `server` on stdin/stdout until EOF or a signal, then shuts down gracefully.
pub async fn serve_stdio<S: ToolServer>(server: S) -> Result<Stop, ServeError> {
    if std::io::stdin().is_terminal() {
        tell_person(S::IDENTITY.orientation);
    }
    let signals = Signals::install().map_err(ServeError::Signals)?;
    let outcome = serve_until_stopped(&server, signals).await;
    if tokio::time::timeout(SHUTDOWN_BOUND, server.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(bound = ?SHUTDOWN_BOUND, "the server's shutdown did not finish in time");
    }
    let audit = server.envelope().audit();
    let Ok(drained) = tokio::time::timeout(AUDIT_DRAIN_BOUND, audit.shutdown()).await else {
        tracing::warn!(bound = ?AUDIT_DRAIN_BOUND, "the audit log did not drain in time");
        return outcome;
    };
    drained.map_err(ServeError::Audit)?;
    outcome
}

async fn serve_until_stopped<S: ToolServer>(
    server: &S,
    mut signals: Signals,
) -> Result<Stop, ServeError> {
    let handshake = McpServer::new(server.clone()).serve(rmcp::transport::stdio());
    let running = tokio::select! {
        // A signal wins over what it did to the handshake (an interrupted read of a terminal).
        biased;
        stop = signals.next() => return Ok(stop),
        running = handshake => match running {
            Ok(running) => running,
            // Stdin closed before the client said anything: the client went away, which is the
            // normal end of a stdio server, not a failed handshake.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                tracing::debug!("stdin closed before the handshake");
                return Ok(Stop::Eof);
            }
            Err(err) => return Err(ServeError::Handshake(Box::new(err))),
        },
    };
    // The expensive matchers (the policy's built-in rules, the redactor) are built on first
    // use; build them now, off the protocol's threads, so the first call does not wait for them.
    let policy = server.envelope().policy();
    let tables = server.clone();
    drop(tokio::task::spawn_blocking(move || {
        tables.tool_table();
        policy.prepare();
        bridge_core::redact::Redactor::shared();
    }));
    let protocol = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    let stop = tokio::select! {
        quit = &mut waiting => {
            log_quit(quit.map_err(ServeError::Service)?);
            return Ok(Stop::Eof);
        }
        stop = signals.next() => stop,
    };
    tracing::info!(
        ?stop,
        "stopping: no new calls, running ones are interrupted"
    );
    let envelope = server.envelope();
    envelope.stop_taking_calls();
    let running_calls = envelope.calls_in_flight();
    let interrupted = server.interrupt();
    if !envelope.wait_for_calls(CALL_GRACE).await {
        tracing::warn!(
            calls = envelope.calls_in_flight(),
            "calls still running after the grace period are dropped"
        );
    }
    tracing::info!(
        running_calls,
        interrupted,
        "calls answered; closing the protocol"
    );
    protocol.cancel();
    log_quit(waiting.await.map_err(ServeError::Service)?);
    Ok(stop)
}

fn log_quit(quit: QuitReason) {
    match quit {
        QuitReason::Closed => tracing::debug!("stdin closed"),
        QuitReason::Cancelled => tracing::debug!("protocol closed"),
        QuitReason::JoinError(err) => tracing::warn!(%err, "the protocol loop failed"),
        _ => tracing::debug!("the protocol stopped"),
    }
}

/// SIGTERM and SIGINT as one stream.
struct Signals {
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    async fn next(&mut self) -> Stop {
        tokio::select! {
            _ = self.terminate.recv() => Stop::Terminate,
            _ = self.interrupt.recv() => Stop::Interrupt,
        }
    }
}

/// One line (or a few) for a person on stderr.
pub fn tell_person(text: &str) {
    #[expect(clippy::print_stderr, reason = "talks to a person at a terminal")]
    {
        eprintln!("{text}");
    }
}
