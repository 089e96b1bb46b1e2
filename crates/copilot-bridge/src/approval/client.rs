//! Asking the MCP client that made the call: a form elicitation (`elicitation/create`) with one
//! boolean, `approve`, which clients show as a yes/no dialog. Clients on MCP 2025-xx can be
//! asked this way when they declared elicitation; on 2026-07-28 a server cannot send requests
//! (questions travel as `input_required` results there, which the bridge does not send yet).

use bridge_core::redact::Redactor;
use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::{ElicitationMode, Peer, RequestContext};
use serde_json::{Value, json};

use crate::acp::{Asked, PermissionRequest};

/// The calling client, able to be asked while its connection lasts.
#[derive(Debug, Clone)]
pub(crate) struct ClientAsker {
    peer: Peer<RoleServer>,
}

impl ClientAsker {
    /// The client behind a tool call.
    pub(crate) fn from_context(context: &RequestContext<RoleServer>) -> Self {
        Self {
            peer: context.peer.clone(),
        }
    }

    /// Why this client cannot be asked, if it cannot.
    pub(crate) fn why_not(&self) -> Option<String> {
        if self.peer.peer_info().is_none() {
            return Some(
                "the client speaks MCP 2026-07-28 (no initialize), where a server cannot send \
                 elicitation/create; asking through input_required results is not built yet"
                    .to_owned(),
            );
        }
        if !self
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Some("the calling client did not declare form elicitation".to_owned());
        }
        None
    }

    /// Asks the person at the client; only an explicit yes allows.
    pub(crate) async fn ask(&self, request: &PermissionRequest, reason: &str) -> Asked {
        let params = match serde_json::from_value::<ElicitRequestParams>(json!({
            "mode": "form",
            "message": question(request, reason),
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "approve": {
                        "type": "boolean",
                        "title": "Allow this once",
                        "description": "Yes lets Copilot do this one time; no refuses it."
                    }
                },
                "required": ["approve"]
            }
        })) {
            Ok(params) => params,
            Err(err) => return Asked::no(format!("the question could not be built: {err}")),
        };
        match self.peer.create_elicitation(params).await {
            Ok(result) => match result.action {
                ElicitationAction::Accept => {
                    let approve = result
                        .content
                        .as_ref()
                        .and_then(|c| c.get("approve"))
                        .and_then(Value::as_bool);
                    match approve {
                        Some(true) => {
                            Asked::yes("the person asked through the MCP client allowed it once")
                        }
                        Some(false) => Asked::no("the person asked through the MCP client said no"),
                        None => Asked::no("the MCP client's answer had no yes or no"),
                    }
                }
                ElicitationAction::Decline => {
                    Asked::no("the person asked through the MCP client declined")
                }
                ElicitationAction::Cancel => {
                    Asked::no("the person asked through the MCP client cancelled the question")
                }
                other => Asked::no(format!("the MCP client answered {other:?}, not a yes")),
            },
            Err(err) => Asked::no(format!("the MCP client could not ask: {err}")),
        }
    }
}

/// The question as the person reads it: what Copilot wants to do, where, and why it is asked.
/// Redacted: nothing secret reaches the person asked.
fn question(request: &PermissionRequest, reason: &str) -> String {
    let what = match &request.command {
        Some(command) => format!("run `{command}`"),
        None if !request.paths.is_empty() => {
            let paths: Vec<String> = request
                .paths
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            format!("{} {}", request.kind, paths.join(", "))
        }
        None => request.title.clone(),
    };
    let text = format!(
        "Copilot wants to {what} (tool {}, in {}).\nAsked because: {reason}.\nAllow this once?",
        request.tool,
        request.cwd.display()
    );
    Redactor::shared().redact(&text).into_owned()
}
