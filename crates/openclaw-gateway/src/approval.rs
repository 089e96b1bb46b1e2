//! `plugin.approval.*`: asking a person through OpenClaw. A request is shown wherever the
//! gateway can show it (the Control UI, the TUI, a client with the `approvals` capability,
//! forwarded chat messages) and decided there or with `openclaw approvals resolve`. Needs the
//! scope `operator.approvals`.
//!
//! The request is two-phase: the gateway first answers `accepted` with the approval's id, and
//! `plugin.approval.waitDecision` then waits for the decision. When no one could see it, the
//! first answer is already the decision, `null`. A request that is given up on (the caller
//! cancelled, or dropped the future) is withdrawn by resolving it `deny`, so it does not linger
//! on a reviewer's screen.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::{Gateway, GatewayError};

/// The longest `timeoutMs` the gateway accepts.
pub const MAX_TIMEOUT: Duration = Duration::from_mins(10);
/// `title` limit (the gateway's schema counts UTF-16 units).
const TITLE_MAX: usize = 80;
/// `description` limit.
const DESCRIPTION_MAX: usize = 512;
/// `detail` limit.
const DETAIL_MAX: usize = 16_384;
/// How much longer than the approval's own timeout the bridge waits for the gateway to say so.
const DECISION_GRACE: Duration = Duration::from_secs(5);
/// How long withdrawing a request may take.
const WITHDRAW_TIMEOUT: Duration = Duration::from_secs(5);

/// How alarming the request is; reviewers' screens show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Routine.
    Info,
    /// Worth a careful look: commands, deletes, work outside the workspace.
    Warning,
    /// Dangerous.
    Critical,
}

/// What a reviewer decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Allowed this time.
    AllowOnce,
    /// Allowed from now on (only when offered).
    AllowAlways,
    /// Refused.
    Deny,
}

impl Decision {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AllowOnce => "allow-once",
            Self::AllowAlways => "allow-always",
            Self::Deny => "deny",
        }
    }
}

/// One question for a person.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// Who asks (`pluginId`), e.g. `copilot-bridge`.
    pub plugin_id: String,
    /// One line: what is wanted. Clipped to 80.
    pub title: String,
    /// The command or the paths, one line. Clipped to 512.
    pub description: String,
    /// Everything a careful reviewer needs; shown on reviewer screens only. Clipped to 16 KiB.
    pub detail: String,
    /// How alarming it is.
    pub severity: Severity,
    /// The tool that would run.
    pub tool_name: String,
    /// The tool call it is about.
    pub tool_call_id: String,
    /// The decisions offered (`deny` is always added by the gateway).
    pub allowed: Vec<Decision>,
    /// How long the person has; at most [`MAX_TIMEOUT`].
    pub timeout: Duration,
}

/// How a question ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalOutcome {
    /// The approval's id (`plugin:<uuid>`), when the gateway accepted the request.
    pub id: Option<String>,
    /// The decision; `None` when no one decided (no route, or the time ran out).
    pub decision: Option<Decision>,
    /// Why it ended: `user`, `timeout`, or `no-route` when nobody could be shown the request.
    pub terminal_reason: String,
    /// Who decided, when the gateway says.
    pub resolved_by: Option<String>,
    /// Where the gateway delivered it (e.g. `approval-client`), when it says.
    pub delivery_route: Option<String>,
}

/// The first answer to a two-phase request, or the only one when nobody can see it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Accepted {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    delivery_route: Option<String>,
    #[serde(default)]
    decision: Option<Decision>,
}

/// The answer of `waitDecision`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Decided {
    #[serde(default)]
    decision: Option<Decision>,
    #[serde(default)]
    terminal_reason: Option<String>,
    #[serde(default)]
    resolved_by: Option<String>,
}

/// Clips `text` to at most `max` UTF-16 units (how the gateway's schema counts), marking the
/// cut with an ellipsis.
pub fn clip(text: &str, max: usize) -> String {
    if text.encode_utf16().count() <= max {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 1; // the ellipsis
    for c in text.chars() {
        used += c.len_utf16();
        if used > max {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

impl ApprovalRequest {
    fn params(&self) -> Value {
        let timeout = self.timeout.min(MAX_TIMEOUT).max(Duration::from_secs(1));
        json!({
            "pluginId": self.plugin_id,
            "title": clip(&one_line(&self.title), TITLE_MAX),
            "description": clip(&one_line(&self.description), DESCRIPTION_MAX),
            "detail": clip(&self.detail, DETAIL_MAX),
            "severity": self.severity,
            "toolName": self.tool_name,
            "toolCallId": self.tool_call_id,
            "allowedDecisions": self.allowed,
            "twoPhase": true,
            "timeoutMs": u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Withdraws an accepted request unless disarmed: the caller gave up on it.
struct Withdraw {
    gateway: Gateway,
    id: Option<String>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let gateway = self.gateway.clone();
        self.gateway.in_background(async move {
            let params = json!({"id": id, "decision": Decision::Deny.as_str()});
            let never = CancellationToken::new();
            match gateway
                .request("plugin.approval.resolve", params, WITHDRAW_TIMEOUT, &never)
                .await
            {
                Ok(_) => tracing::debug!(%id, "approval withdrawn"),
                Err(err) => tracing::info!(%id, %err, "could not withdraw an approval request"),
            }
        });
    }
}

impl Gateway {
    /// Asks a person and waits for the decision, at most the request's timeout (plus a few
    /// seconds for the gateway to say it ran out). Cancelling `cancel`, or dropping the future,
    /// withdraws the request.
    pub async fn request_approval(
        &self,
        request: &ApprovalRequest,
        cancel: &CancellationToken,
    ) -> Result<ApprovalOutcome, GatewayError> {
        let started = Instant::now();
        let first = self
            .request(
                "plugin.approval.request",
                request.params(),
                self.call_timeout(),
                cancel,
            )
            .await?;
        let first: Accepted = serde_json::from_value(first)
            .map_err(|e| GatewayError::Protocol(format!("plugin.approval.request: {e}")))?;
        let id = match (first.status.as_deref(), first.id) {
            (Some("accepted"), Some(id)) => id,
            (_, id) => {
                // Answered at once: nobody can see it (decision null), or a decision was
                // already on record.
                let reason = if first.decision.is_some() {
                    "user"
                } else {
                    "no-route"
                };
                return Ok(ApprovalOutcome {
                    id,
                    decision: first.decision,
                    terminal_reason: reason.to_owned(),
                    resolved_by: None,
                    delivery_route: first.delivery_route,
                });
            }
        };
        let mut withdraw = Withdraw {
            gateway: self.clone(),
            id: Some(id.clone()),
        };
        let limit = request
            .timeout
            .min(MAX_TIMEOUT)
            .saturating_sub(started.elapsed())
            + DECISION_GRACE;
        let decided = self
            .request(
                "plugin.approval.waitDecision",
                json!({"id": id}),
                limit,
                cancel,
            )
            .await?;
        let decided: Decided = serde_json::from_value(decided)
            .map_err(|e| GatewayError::Protocol(format!("plugin.approval.waitDecision: {e}")))?;
        // Decided (or expired) at the gateway: nothing to withdraw.
        withdraw.id = None;
        Ok(ApprovalOutcome {
            id: Some(id),
            decision: decided.decision,
            terminal_reason: decided.terminal_reason.unwrap_or_else(|| "user".to_owned()),
            resolved_by: decided.resolved_by,
            delivery_route: first.delivery_route,
        })
    }

    /// Decides a pending approval (a reviewer's part, or a requester withdrawing its own).
    pub async fn resolve_approval(
        &self,
        id: &str,
        decision: Decision,
        cancel: &CancellationToken,
    ) -> Result<(), GatewayError> {
        self.request(
            "plugin.approval.resolve",
            json!({"id": id, "decision": decision.as_str()}),
            self.call_timeout(),
            cancel,
        )
        .await
        .map(drop)
    }

    /// The approvals waiting for a decision, as the gateway lists them.
    pub async fn pending_approvals(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<Value>, GatewayError> {
        let listed = self
            .request(
                "plugin.approval.list",
                json!({}),
                self.call_timeout(),
                cancel,
            )
            .await?;
        match listed {
            Value::Array(items) => Ok(items),
            other => Err(GatewayError::Protocol(format!(
                "plugin.approval.list answered {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn clipping_counts_like_the_gateway_and_marks_the_cut() {
        assert_eq!(clip("short", 80), "short");
        let long = "x".repeat(100);
        let clipped = clip(&long, 80);
        assert_eq!(clipped.encode_utf16().count(), 80);
        assert!(clipped.ends_with('…'));
        // A character outside the BMP counts twice and is never split.
        let emoji = "😀".repeat(50);
        let clipped = clip(&emoji, 80);
        assert!(clipped.encode_utf16().count() <= 80);
        assert_eq!(clipped.chars().filter(|c| *c == '😀').count(), 39);
    }

    #[test]
    fn request_params_match_the_closed_schema_in_the_captures() -> anyhow::Result<()> {
        let request = ApprovalRequest {
            plugin_id: "copilot-bridge".to_owned(),
            title: "Copilot wants to run a shell command".to_owned(),
            description: "Copilot wants to run:\n rm -rf build".to_owned(),
            detail: "tool: shell\ncommand: rm -rf build".to_owned(),
            severity: Severity::Warning,
            tool_name: "shell".to_owned(),
            tool_call_id: "copilot-call-1".to_owned(),
            allowed: vec![Decision::AllowOnce, Decision::Deny],
            timeout: Duration::from_secs(50),
        };
        let params = request.params();
        let mut keys: Vec<&str> = params
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        // Every key the captured request sent, and nothing else (the schema is closed).
        let captured = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/memory/gateway/approval-request.json"
        ));
        let captured: Value = serde_json::from_str(captured)?;
        let mut expected: Vec<&str> = captured
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        expected.sort_unstable();
        assert_eq!(keys, expected);
        assert_eq!(params["description"], "Copilot wants to run: rm -rf build");
        assert_eq!(params["severity"], "warning");
        assert_eq!(params["allowedDecisions"], json!(["allow-once", "deny"]));
        assert_eq!(params["timeoutMs"], 50_000);
        Ok(())
    }

    #[test]
    fn answers_read_as_the_gateway_sends_them() -> anyhow::Result<()> {
        let accepted: Accepted = serde_json::from_value(json!({"status": "accepted",
            "id": "plugin:1", "deliveryRoute": "approval-client", "createdAtMs": 1,
            "expiresAtMs": 2}))?;
        assert_eq!(accepted.id.as_deref(), Some("plugin:1"));
        let no_route: Accepted = serde_json::from_value(json!({"id": "plugin:2",
            "decision": null, "createdAtMs": 1, "expiresAtMs": 2}))?;
        assert_eq!(no_route.decision, None);
        assert_eq!(no_route.status, None);
        let decided: Decided = serde_json::from_value(json!({"id": "plugin:1",
            "decision": "allow-once", "terminalReason": "user"}))?;
        assert_eq!(decided.decision, Some(Decision::AllowOnce));
        let expired: Decided = serde_json::from_value(json!({"id": "plugin:1",
            "decision": null, "terminalReason": "timeout"}))?;
        assert_eq!(expired.decision, None);
        assert_eq!(expired.terminal_reason.as_deref(), Some("timeout"));
        Ok(())
    }
}
