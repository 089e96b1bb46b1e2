//! Asking the MCP client that made the call, with one form of one boolean, `approve`, which
//! clients show as a yes/no dialog. On MCP 2025-xx the bridge sends `elicitation/create` while
//! the call runs; on 2026-07-28, where a server cannot send requests, the question is relayed to
//! the waiting tool call, which answers `input_required` and resumes on the client's retry (see
//! `paused.rs`).

use bridge_mcp::confirm;
use rmcp::RoleServer;
use rmcp::service::{Peer, RequestContext};
use tokio::sync::{mpsc, oneshot};

use crate::acp::Asked;

/// A question on its way to a paused tool call (MCP 2026-07-28), with where its answer goes.
#[derive(Debug)]
pub(crate) struct Question {
    /// The form's message, redacted.
    pub(crate) message: String,
    /// Receives the client's answer.
    pub(crate) answer: oneshot::Sender<Asked>,
}

/// The calling client, able to be asked while its call (or connection) lasts.
#[derive(Debug, Clone)]
pub(crate) enum ClientAsker {
    /// MCP 2025-xx: `elicitation/create` to the client.
    Elicit(Peer<RoleServer>),
    /// MCP 2026-07-28: the question goes to the tool call waiting on the turn, which answers
    /// the client `input_required`.
    Relay(mpsc::UnboundedSender<Question>),
}

impl ClientAsker {
    /// The client behind a tool call, asked through `elicitation/create`.
    pub(crate) fn from_context(context: &RequestContext<RoleServer>) -> Self {
        Self::Elicit(context.peer.clone())
    }

    /// Why this client cannot be asked, if it cannot.
    pub(crate) fn why_not(&self) -> Option<String> {
        let Self::Elicit(peer) = self else {
            return None;
        };
        confirm::why_not(peer).map(|why| {
            if peer.peer_info().is_none() {
                format!(
                    "{why}; such clients are asked through input_required results on \
                     copilot_code_task, copilot_code, copilot_code_verbose and \
                     copilot_orchestrate only"
                )
            } else {
                why
            }
        })
    }

    /// Asks the person at the client with `message` (already redacted); only an explicit yes
    /// allows.
    pub(crate) async fn ask(&self, message: &str) -> Asked {
        match self {
            Self::Elicit(peer) => confirm::ask(peer, message).await,
            Self::Relay(questions) => {
                let (answer, answered) = oneshot::channel();
                let message = message.to_owned();
                if questions.send(Question { message, answer }).is_err() {
                    return Asked::no("the call that would ask the client has ended");
                }
                answered
                    .await
                    .unwrap_or_else(|_| Asked::no("the question was withdrawn before an answer"))
            }
        }
    }
}
