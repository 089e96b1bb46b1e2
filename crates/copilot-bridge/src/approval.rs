//! The approval broker: where a permission question goes when the policy says `ask`. It is the
//! [`AskHook`] of the bridge's permission gate. Each question is routed, per the policy's
//! `ask_via`, to the MCP client whose call started the turn (form elicitation), and denied with
//! a reason that names the fix when no one can be asked. Every question is audited with its
//! route, decision and how long it took. Only an explicit yes allows, and only once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bridge_core::audit::{AuditEntry, AuditLog, Hook};
use bridge_core::policy::AskVia;
use bridge_core::sync::lock;
use serde_json::json;

use crate::acp::{AskHook, Asked, BoxFuture, PermissionRequest};

/// Asking the calling MCP client through elicitation.
mod client;
/// Calls paused on a question for MCP 2026-07-28 clients (multi round-trip requests).
mod paused;

pub(crate) use self::client::ClientAsker;
pub(crate) use self::paused::{PausedCalls, Round, RunningCall};

/// The broker: which client can be asked for which Copilot session, and the audit log.
#[derive(Debug)]
pub(crate) struct Approvals {
    via: AskVia,
    audit: AuditLog,
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
    /// A broker routing by `via`, auditing into `audit`.
    pub(crate) fn new(via: AskVia, audit: AuditLog) -> Arc<Self> {
        Arc::new(Self {
            via,
            audit,
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

/// Why nobody could be asked, with what to change.
fn no_route(via: AskVia, client: Option<&ClientAsker>) -> String {
    let why = match client {
        None => "no MCP client call is waiting on this turn".to_owned(),
        Some(client) => client
            .why_not()
            .unwrap_or_else(|| "the calling client can ask".to_owned()),
    };
    bridge_mcp::confirm::nobody_asked(via, &why)
}

impl AskHook for Approvals {
    fn ask(&self, request: PermissionRequest, reason: String) -> BoxFuture<Asked> {
        let started = Instant::now();
        let client = self.caller(&request.session_id);
        let via = self.via;
        let audit = self.audit.clone();
        Box::pin(async move {
            let usable = client.as_ref().filter(|c| c.why_not().is_none());
            let (route, asked) = match (via, usable) {
                (AskVia::Auto | AskVia::Client, Some(client)) => {
                    ("client", client.ask(&request, &reason).await)
                }
                _ => ("none", Asked::no(no_route(via, client.as_ref()))),
            };
            let mut entry = AuditEntry::new(Hook::Permission, request.tool.clone());
            entry.session = Some(request.session_id.clone());
            entry.decision = Some(if asked.allowed { "allow" } else { "deny" }.to_owned());
            entry.reason = Some(format!("asked ({route}): {reason}; {}", asked.detail));
            entry.input = Some(json!({
                "route": route,
                "title": request.title,
                "command": request.command,
                "paths": request.paths,
                "cwd": request.cwd,
            }));
            entry.elapsed_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(0));
            if let Err(err) = audit.record(entry).await {
                tracing::warn!(%err, "the approval question was not audited");
            }
            asked
        })
    }
}
