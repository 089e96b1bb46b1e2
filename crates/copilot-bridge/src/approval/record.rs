//! The audit record of one question: written when it is answered, or (from `Drop`) when the
//! question is withdrawn because its call was cancelled or ended first.

use std::time::Instant;

use bridge_core::audit::{AuditEntry, AuditLog, Hook};
use bridge_mcp::ask_route::{self, Question};
use serde_json::json;

use crate::acp::{Asked, PermissionRequest};

/// The audit record of one question, written when it is answered, or (from `Drop`) when the
/// question is withdrawn because its call was cancelled or ended first.
pub(super) struct QuestionRecord {
    audit: AuditLog,
    started: Instant,
    reason: String,
    pub(super) route: &'static str,
    entry: Option<AuditEntry>,
}

impl QuestionRecord {
    pub(super) fn new(
        audit: AuditLog,
        request: &PermissionRequest,
        reason: &str,
        question: &Question,
    ) -> Self {
        let mut entry = AuditEntry::new(Hook::Permission, request.tool.clone());
        entry.session = Some(request.session_id.clone());
        let mut input = serde_json::Map::new();
        input.insert("title".to_owned(), json!(question.title));
        input.insert("description".to_owned(), json!(question.description));
        input.insert("cwd".to_owned(), json!(request.cwd));
        entry.input = Some(serde_json::Value::Object(input));
        Self {
            audit,
            started: Instant::now(),
            reason: reason.to_owned(),
            route: "none",
            entry: Some(entry),
        }
    }

    /// Fills in the answer and takes the entry to write.
    pub(super) fn answered(&mut self, asked: &Asked) -> Option<AuditEntry> {
        let mut entry = self.entry.take()?;
        entry.decision = Some(if asked.allowed { "allow" } else { "deny" }.to_owned());
        entry.reason = Some(format!(
            "asked ({}): {}; {}",
            self.route, self.reason, asked.detail
        ));
        if let Some(serde_json::Value::Object(input)) = entry.input.as_mut() {
            input.extend(ask_route::audit_facts(self.route, &asked.facts));
        }
        entry.elapsed_ms = Some(u64::try_from(self.started.elapsed().as_millis()).unwrap_or(0));
        Some(entry)
    }
}

impl Drop for QuestionRecord {
    fn drop(&mut self) {
        let withdrawn = Asked::no("withdrawn: the call ended before anyone answered")
            .with_fact("terminal_reason", "withdrawn");
        let Some(entry) = self.answered(&withdrawn) else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let audit = self.audit.clone();
            runtime.spawn(async move {
                if let Err(err) = audit.record(entry).await {
                    tracing::warn!(%err, "the withdrawn question was not audited");
                }
            });
        }
    }
}
