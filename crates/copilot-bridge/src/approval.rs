//! The approval broker: where a permission question goes when the policy says `ask`. It is the
//! [`AskHook`] of the bridge's permission gate. Each question is routed, per the policy's
//! `ask_via`, to the MCP client whose call started the turn (form elicitation), else to
//! OpenClaw's approval flow when the gateway is configured, and denied with a reason that names
//! the fix when no one can be asked. Every question is audited with its route, the approval's
//! id, the decision, who decided and how long it took. Only an explicit yes allows, and only
//! once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bridge_core::audit::AuditLog;
use bridge_core::policy::AskVia;
use bridge_core::sync::lock;
use bridge_mcp::ask_route::{self, Approver, Route};

use crate::acp::{AskHook, Asked, BoxFuture, PermissionRequest};

/// Asking the calling MCP client through elicitation.
mod client;
/// Asking through OpenClaw's approval flow.
mod openclaw;
/// Calls paused on a question for MCP 2026-07-28 clients (multi round-trip requests).
mod paused;
/// A step of a Copilot turn as a question for a person.
mod question;
/// The audit record of one question.
mod record;

pub(crate) use self::client::ClientAsker;
pub(crate) use self::openclaw::OpenclawApprover;
pub(crate) use self::paused::{PausedCalls, Round, RunningCall};
use self::record::QuestionRecord;

/// The broker: which client can be asked for which Copilot session, and the audit log.
#[derive(Debug)]
pub(crate) struct Approvals {
    via: AskVia,
    audit: AuditLog,
    /// Who is asked outside the MCP client (OpenClaw), when configured.
    approver: Option<Arc<dyn Approver>>,
    /// The client whose call runs a turn in each ACP session, while it runs.
    callers: Mutex<HashMap<String, Vec<(u64, ClientAsker)>>>,
    next: std::sync::atomic::AtomicU64,
}

/// Keeps a client registered as the one to ask for a session until dropped.
#[derive(Debug)]
pub(crate) struct Attending {
    approvals: Arc<Approvals>,
    session: String,
    id: u64,
}

impl Drop for Attending {
    fn drop(&mut self) {
        let mut callers = lock(&self.approvals.callers);
        if let Some(list) = callers.get_mut(&self.session) {
            list.retain(|(id, _)| *id != self.id);
            if list.is_empty() {
                callers.remove(&self.session);
            }
        }
    }
}

impl Approvals {
    /// A broker routing by `via` to the calling client or `approver`, auditing into `audit`.
    pub(crate) fn new(
        via: AskVia,
        audit: AuditLog,
        approver: Option<Arc<dyn Approver>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            via,
            audit,
            approver,
            callers: Mutex::new(HashMap::new()),
            next: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Makes `asker` the client to ask for questions from ACP session `session`, until the
    /// guard drops (the newest registration wins while several overlap).
    pub(crate) fn attend(self: &Arc<Self>, session: String, asker: ClientAsker) -> Attending {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.callers)
            .entry(session.clone())
            .or_default()
            .push((id, asker));
        Attending {
            approvals: Arc::clone(self),
            session,
            id,
        }
    }

    fn caller(&self, session: &str) -> Option<ClientAsker> {
        lock(&self.callers)
            .get(session)
            .and_then(|list| list.last())
            .map(|(_, asker)| asker.clone())
    }
}

impl AskHook for Approvals {
    fn ask(&self, request: PermissionRequest, reason: String) -> BoxFuture<Asked> {
        let client = self.caller(&request.session_id);
        let via = self.via;
        let audit = self.audit.clone();
        let approver = self.approver.clone();
        Box::pin(async move {
            let question = question::for_request(&request, &reason);
            let mut record = QuestionRecord::new(audit.clone(), &request, &reason, &question);
            let reachable = match &client {
                None => Err("no MCP client call is waiting on this turn".to_owned()),
                Some(client) => client.why_not().map_or(Ok(()), Err),
            };
            let route = ask_route::choose(via, reachable, approver.as_deref()).await;
            record.route = route.name();
            let asked = match (route, &client) {
                (Route::Client, Some(client)) => client.ask(&question.message).await,
                (Route::Outside(approver), _) => approver.ask(question).await,
                (Route::Nobody(why), _) => Asked::no(why),
                (Route::Client, None) => Asked::no("no MCP client call is waiting on this turn"),
            };
            if let Some(entry) = record.answered(&asked)
                && let Err(err) = audit.record(entry).await
            {
                tracing::warn!(%err, "the approval question was not audited");
            }
            asked
        })
    }
}
