//! Tools that may ask a person, run in rounds for MCP 2026-07-28 clients: a fresh call starts
//! the work in the background and answers `input_required` when it asks; the client's retry
//! (with `requestState` and `inputResponses`) delivers the answer and waits on the same work
//! for its next question or its result. Clients that can be asked the classic way
//! (`elicitation/create`), or not at all, get the work run straight through.

use std::future::Future;

use bridge_mcp::{ToolError, sealed};
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::{ClientAsker, Round, RunningCall};
use crate::runner::ProgressSink;
use crate::server::BridgeServer;

/// What a multi round-trip retry carries.
#[derive(Debug)]
pub struct Retry {
    /// The echoed `requestState`.
    pub state: Option<String>,
    /// The answers.
    pub responses: Option<rmcp::model::InputResponses>,
}

/// What a tool's work is called with: who to ask, where progress goes, and when to stop.
#[derive(Debug)]
pub struct Asking {
    /// The calling client, as it can be asked.
    pub asker: ClientAsker,
    /// Progress notifications, when the client asked for them (never in rounds).
    pub progress: Option<ProgressSink>,
    /// Fires when the call is cancelled.
    pub cancel: CancellationToken,
}

impl BridgeServer {
    /// One round of `tool` called with `arguments`: a retry resumes the paused work, a fresh
    /// call from a 2026-07-28 client that can be asked starts `work` in the background, and
    /// any other call runs `work` straight through.
    pub(crate) async fn in_rounds<W, F>(
        &self,
        tool: &'static str,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
        retry: Retry,
        work: W,
    ) -> Result<CallToolResponse, ErrorData>
    where
        W: FnOnce(Asking) -> F,
        F: Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'static,
    {
        let call = if let Some(state) = retry.state {
            match self
                .paused()
                .resume(tool, arguments, &state, retry.responses.as_ref())
            {
                Ok(call) => call,
                Err(err) => return ToolError::model(&err).into_call_tool_result(),
            }
        } else if sealed::asks_by_input_required(context) {
            RunningCall::spawn(move |questions, cancel| {
                work(Asking {
                    asker: ClientAsker::Relay(questions),
                    progress: None,
                    cancel,
                })
            })
        } else {
            return work(Asking {
                asker: ClientAsker::from_context(context),
                progress: ProgressSink::for_request(context),
                cancel: context.ct.clone(),
            })
            .await;
        };
        match self
            .paused()
            .drive(call, tool, arguments, &context.ct)
            .await
        {
            Round::Done(result) => result,
            Round::Ask(question) => Ok(CallToolResponse::InputRequired(question)),
            Round::Gone => ToolError::Model("the call was cancelled while it waited".into())
                .into_call_tool_result(),
        }
    }
}
