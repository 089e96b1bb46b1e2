//! Asking a person through OpenClaw's approval flow: the bridge keeps a gateway link (token
//! only, scopes `operator.read` + `operator.approvals`) and sends each question as a two-phase
//! `plugin.approval.request`. Whoever can see approvals in OpenClaw decides it (the Control
//! UI, the TUI, a forwarded chat message, `openclaw approvals resolve`). With nobody to show it
//! to, the gateway answers `null` at once and the question is denied, saying so.

use std::time::Duration;

use bridge_core::config::Config;
use bridge_mcp::ask_route::{Approver, BoxFuture, Question};
use bridge_mcp::confirm::Confirmation;
use openclaw_gateway::approval::{ApprovalOutcome, ApprovalRequest, Decision, Severity};
use openclaw_gateway::protocol::SCOPE_APPROVALS;
use openclaw_gateway::{ClientProfile, Gateway, GatewayError, GatewaySettings, LinkState};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The `pluginId` OpenClaw shows for the bridge's questions.
const PLUGIN_ID: &str = "copilot-bridge";
/// How long a question waits for the link's first connection when the bridge has just started.
const FIRST_CONNECT: Duration = Duration::from_secs(5);
/// How long shutdown waits for open questions to be withdrawn.
const WITHDRAW_GRACE: Duration = Duration::from_secs(3);

/// The OpenClaw route.
#[derive(Debug)]
pub(crate) struct OpenclawApprover {
    gateway: Gateway,
    timeout: Duration,
    url: String,
    /// Fired at shutdown: open questions are withdrawn.
    closing: CancellationToken,
    /// The questions waiting for a decision.
    open: TaskTracker,
}

impl OpenclawApprover {
    /// Starts the gateway link in the background when the gateway is configured
    /// (`OPENCLAW_GATEWAY_TOKEN`); `None` otherwise.
    pub(crate) fn start(config: &Config) -> Option<Self> {
        let token = config.gateway.token.as_ref()?;
        if tokio::runtime::Handle::try_current().is_err() {
            tracing::warn!("OpenClaw approvals are off: no async runtime to keep the link on");
            return None;
        }
        let settings = GatewaySettings {
            host: config.gateway.host.clone(),
            port: config.gateway.port,
            token: token.expose().to_owned(),
            state_dir: config.state_dir.clone(),
            call_timeout: openclaw_gateway::DEFAULT_CALL_TIMEOUT,
            profile: ClientProfile::approval_requester(),
        };
        let url = settings.url();
        Some(Self {
            gateway: Gateway::start(settings),
            timeout: Duration::from_millis(config.approval_timeout_ms),
            url,
            closing: CancellationToken::new(),
            open: TaskTracker::new(),
        })
    }

    /// Withdraws open questions (each is resolved `deny` at the gateway), then closes the link.
    pub(crate) async fn shutdown(&self) {
        self.closing.cancel();
        self.open.close();
        if tokio::time::timeout(WITHDRAW_GRACE, self.open.wait())
            .await
            .is_err()
        {
            tracing::warn!("open OpenClaw approvals were not withdrawn in time");
        }
        self.gateway.shutdown().await;
    }

    /// Whether the link is up with `operator.approvals`, waiting up to `limit` for a first
    /// connection: `Ok` with the scopes granted, else why not.
    pub(crate) async fn check(&self, limit: Duration) -> Result<Vec<String>, String> {
        if self.gateway.state() == LinkState::Connecting {
            self.gateway
                .wait_until_up(limit)
                .await
                .map_err(|why| format!("cannot reach OpenClaw's gateway at {}: {why}", self.url))?;
        }
        match self.gateway.state() {
            LinkState::Up if self.gateway.has_scope(SCOPE_APPROVALS) => {
                Ok(self.gateway.granted_scopes())
            }
            LinkState::Up => Err(format!(
                "OpenClaw's gateway at {} did not grant {SCOPE_APPROVALS} (granted: {}); use \
                 the gateway's token (OPENCLAW_GATEWAY_TOKEN), not a device token",
                self.url,
                self.gateway.granted_scopes().join(", ")
            )),
            LinkState::Down(why) => Err(format!(
                "cannot reach OpenClaw's gateway at {}: {why}",
                self.url
            )),
            LinkState::Connecting => Err(format!(
                "still connecting to OpenClaw's gateway at {}",
                self.url
            )),
        }
    }

    async fn ask_gateway(&self, question: Question) -> Confirmation {
        // Held until the question is decided or withdrawn, so shutdown can wait for it.
        let _open = self.open.token();
        if self.closing.is_cancelled() {
            return Confirmation::no("the bridge is shutting down, so it is denied");
        }
        let request = ApprovalRequest {
            plugin_id: PLUGIN_ID.to_owned(),
            title: question.title,
            description: question.description,
            detail: question.detail,
            severity: if question.warning {
                Severity::Warning
            } else {
                Severity::Info
            },
            tool_name: question.tool,
            tool_call_id: question.call_id,
            allowed: vec![Decision::AllowOnce, Decision::Deny],
            timeout: self.timeout,
        };
        match self.gateway.request_approval(&request, &self.closing).await {
            Ok(outcome) => self.read(outcome),
            Err(GatewayError::Cancelled) => {
                Confirmation::no("withdrawn: the bridge is shutting down, so it is denied")
                    .with_fact("terminal_reason", "withdrawn")
            }
            Err(err) => Confirmation::no(format!(
                "OpenClaw's approval flow failed ({err}), so it is denied"
            )),
        }
    }

    /// What an outcome means: only an allow is a yes, and only this once.
    fn read(&self, outcome: ApprovalOutcome) -> Confirmation {
        let id = outcome.id.clone().unwrap_or_default();
        let by = outcome
            .resolved_by
            .clone()
            .map_or_else(|| "a reviewer".to_owned(), |who| format!("reviewer {who}"));
        let answer = match outcome.decision {
            Some(Decision::AllowOnce | Decision::AllowAlways) => {
                Confirmation::yes(format!("{by} allowed it once through OpenClaw ({id})"))
            }
            Some(Decision::Deny) => Confirmation::no(format!(
                "{by} denied it through OpenClaw ({id}): the decision was deny"
            )),
            None if outcome.terminal_reason == "no-route" => Confirmation::no(
                "OpenClaw had nobody to show the question to (no Control UI, TUI or approvals \
                 client connected, and no chat forwarding under approvals.plugin), so it is \
                 denied; open the Control UI or `openclaw tui` and try again",
            ),
            None if outcome.terminal_reason == "timeout" => Confirmation::no(format!(
                "nobody decided within {} s in OpenClaw ({id}), so it is denied",
                self.timeout.as_secs()
            )),
            None => Confirmation::no(format!(
                "OpenClaw ended the question without a decision ({}), so it is denied",
                outcome.terminal_reason
            )),
        };
        let mut answer = answer.with_fact("terminal_reason", outcome.terminal_reason);
        if let Some(id) = outcome.id {
            answer = answer.with_fact("approval_id", id);
        }
        if let Some(decision) = outcome.decision {
            answer = answer.with_fact("gateway_decision", decision.as_str());
        }
        if let Some(who) = outcome.resolved_by {
            answer = answer.with_fact("resolved_by", who);
        }
        if let Some(route) = outcome.delivery_route {
            answer = answer.with_fact("delivery_route", route);
        }
        answer
    }
}

impl Approver for OpenclawApprover {
    fn name(&self) -> &'static str {
        "openclaw"
    }

    fn why_not(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move { self.check(FIRST_CONNECT).await.err() })
    }

    fn ask(&self, question: Question) -> BoxFuture<'_, Confirmation> {
        Box::pin(self.ask_gateway(question))
    }
}
