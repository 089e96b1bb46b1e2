//! The long-lived session tools: `copilot_session_start`, `copilot_session_query`,
//! `copilot_session_live`, `copilot_session_stop` and `copilot_session_list`. Results are
//! structured (`structuredContent`) with a short text copy; the session API's own outcomes
//! (`SessionNotFound`, `HttpRequestTimeout`, …) come back as `{error, message}`.

use std::path::Path;
use std::time::Duration;

use bridge_mcp::ToolError;
use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool};
use serde::{Deserialize, Serialize};

use std::fmt::Write as _;

use crate::approval::ClientAsker;
use crate::live::{LiveEvent, LiveOutcome, Poll, QueryOutcome, SessionSummary};
use crate::runner::RunError;
use crate::server::BridgeServer;
use crate::tools::code::check_task_text;

/// How long `live` waits for a first event unless told: the session API's 5 seconds.
const DEFAULT_WAIT_MS: u64 = 5_000;
/// The longest wait `live` accepts, below the usual 60-second client request timeouts.
const MAX_WAIT_MS: u64 = 50_000;
/// Events one `live` call returns unless told.
const DEFAULT_MAX_EVENTS: usize = 200;
/// Longest model id accepted.
const MAX_MODEL_CHARS: usize = 200;

/// Arguments of `copilot_session_start`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartArgs {
    /// Absolute path of the directory the session works in (inside the workspace).
    #[serde(rename = "workingDirectory")]
    pub working_directory: String,
    /// The model for the session (default: the configured one).
    #[serde(default)]
    #[schemars(with = "String")]
    pub model: Option<String>,
}

/// Arguments of `copilot_session_query`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryArgs {
    /// The session, from `copilot_session_start`.
    #[serde(rename = "sessionId")]
    pub session_id: String,
    /// What Copilot should do next.
    pub prompt: String,
}

/// Arguments of `copilot_session_live`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LiveArgs {
    /// The session, from `copilot_session_start`.
    #[serde(rename = "sessionId")]
    pub session_id: String,
    /// Milliseconds to wait for a first event when none is queued (default 5000, at most
    /// 50000).
    #[serde(default, rename = "waitMs")]
    #[schemars(with = "u64")]
    pub wait_ms: Option<u64>,
    /// Most events to return (default 200; 1 returns one event per call).
    #[serde(default, rename = "maxEvents")]
    #[schemars(with = "u64")]
    pub max_events: Option<u64>,
}

/// Arguments of `copilot_session_stop`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopArgs {
    /// The session, from `copilot_session_start`.
    #[serde(rename = "sessionId")]
    pub session_id: String,
}

/// Arguments of `copilot_session_list` (none).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {}

/// The session API's named outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SessionErrorKind {
    /// The model id is not one the session can use.
    ModelIdNotFound,
    /// `workingDirectory` is relative.
    WorkingDirectoryNotAbsolutePath,
    /// `workingDirectory` does not exist (or is not a directory).
    WorkingDirectoryNotExists,
    /// `workingDirectory` lies outside the workspace root.
    WorkingDirectoryOutsideWorkspace,
    /// No such session.
    SessionNotFound,
    /// The session was stopped and every event was read.
    SessionClosed,
    /// No event arrived within `waitMs`.
    HttpRequestTimeout,
    /// Another `live` call on this session is waiting.
    ParallelCallNotSupported,
}

/// Every session tool's structured result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SessionResult {
    /// The new session (`start`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The query waits behind a running turn (`query`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub queued: bool,
    /// The next events, oldest first (`live`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<LiveEvent>>,
    /// `Closed` (`stop`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Every session (`list`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<SessionSummary>>,
    /// The session API's name for what went wrong, or for an empty long-poll.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<SessionErrorKind>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl SessionResult {
    fn error(kind: SessionErrorKind, message: impl Into<String>) -> Self {
        Self {
            error: Some(kind),
            message: Some(message.into()),
            ..Self::default()
        }
    }
}

/// A session tool's answer: the structured result with a text copy. Outcomes that mean the
/// call failed (an unknown session, a bad directory, a parallel `live`) carry `isError: true`
/// besides their `{error, message}`; an empty long-poll and the final `SessionClosed` are
/// ordinary answers.
#[derive(Debug)]
pub struct SessionAnswer {
    text: String,
    value: SessionResult,
    is_error: bool,
}

impl IntoCallToolResult for SessionAnswer {
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        let value = serde_json::to_value(&self.value).map_err(|e| {
            ErrorData::internal_error(format!("cannot encode the tool result: {e}"), None)
        })?;
        let content = vec![ContentBlock::text(self.text)];
        let mut result = if self.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = Some(value);
        Ok(result.into())
    }
}

fn answer(text: impl Into<String>, value: SessionResult) -> SessionAnswer {
    SessionAnswer {
        text: text.into(),
        value,
        is_error: false,
    }
}

/// An outcome that means the call failed (`isError`), with the structured `{error, message}`.
fn refused(kind: SessionErrorKind, message: String) -> SessionAnswer {
    SessionAnswer {
        text: format!("{kind:?}: {message}"),
        value: SessionResult::error(kind, message),
        is_error: true,
    }
}

fn not_found(id: &str) -> SessionAnswer {
    refused(
        SessionErrorKind::SessionNotFound,
        format!(
            "no session {id}: it was never started here, or it was stopped and all its events \
             were read; start one with copilot_session_start"
        ),
    )
}

/// Whether `model` can name a model at all (the CLI itself accepts any id without checking).
fn model_is_plausible(model: &str) -> bool {
    !model.is_empty()
        && model.chars().count() <= MAX_MODEL_CHARS
        && !model.chars().any(|c| c.is_whitespace() || c.is_control())
}

impl BridgeServer {
    /// Start a long-lived Copilot session working in an absolute workingDirectory inside the
    /// workspace; returns its sessionId. Then send work with copilot_session_query and read
    /// what Copilot does with copilot_session_live; stop it with copilot_session_stop. Errors:
    /// ModelIdNotFound, WorkingDirectoryNotAbsolutePath, WorkingDirectoryNotExists,
    /// WorkingDirectoryOutsideWorkspace.
    #[tool(annotations(destructive_hint = false, open_world_hint = true))]
    pub(crate) async fn copilot_session_start(
        &self,
        Parameters(args): Parameters<StartArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<SessionAnswer, ToolError> {
        if let Some(model) = &args.model
            && !model_is_plausible(model)
        {
            return Ok(refused(
                SessionErrorKind::ModelIdNotFound,
                format!("{model:?} is not a model id; omit model to use the configured one"),
            ));
        }
        let dir = Path::new(&args.working_directory);
        if !dir.is_absolute() {
            return Ok(refused(
                SessionErrorKind::WorkingDirectoryNotAbsolutePath,
                format!(
                    "{} is not an absolute path; pass the directory's full path",
                    args.working_directory
                ),
            ));
        }
        if !dir.is_dir() {
            return Ok(refused(
                SessionErrorKind::WorkingDirectoryNotExists,
                format!("{} does not exist or is not a directory", dir.display()),
            ));
        }
        let model = args.model.filter(|m| !m.is_empty());
        match self.live().start(dir, model, &context.ct).await {
            Ok(id) => Ok(answer(
                format!("Started session {id} in {}.", dir.display()),
                SessionResult {
                    session_id: Some(id),
                    ..SessionResult::default()
                },
            )),
            Err(err @ RunError::WorkingDir { .. }) => Ok(refused(
                SessionErrorKind::WorkingDirectoryOutsideWorkspace,
                err.to_string(),
            )),
            Err(err) => Err(ToolError::model(&err)),
        }
    }

    /// Send a prompt to a session; it starts working at once and the call returns {} (or
    /// {queued: true} when it waits behind the running turn). Read the progress with
    /// copilot_session_live.
    #[tool(annotations(destructive_hint = true, open_world_hint = true))]
    pub(crate) async fn copilot_session_query(
        &self,
        Parameters(args): Parameters<QueryArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<SessionAnswer, ToolError> {
        check_task_text(&args.prompt, "prompt")?;
        let asker = Some(ClientAsker::from_context(&context));
        match self.live().query(&args.session_id, args.prompt, asker) {
            QueryOutcome::NotFound => Ok(not_found(&args.session_id)),
            QueryOutcome::Stopped => Ok(refused(
                SessionErrorKind::SessionClosed,
                format!(
                    "session {} is stopped; read its remaining events with \
                     copilot_session_live, then start a new one",
                    args.session_id
                ),
            )),
            QueryOutcome::Accepted { queued } => Ok(answer(
                if queued {
                    "Queued: the session runs it when the current turn ends."
                } else {
                    "Started."
                },
                SessionResult {
                    queued,
                    ..SessionResult::default()
                },
            )),
        }
    }

    /// Read a session's next events, in the order they happened: every queued event up to
    /// maxEvents, or, when none is queued, the first to arrive within waitMs (else
    /// {error: HttpRequestTimeout}: call again). Events: onStartMessage/onMessage/onEndMessage,
    /// onStartReasoning/onReasoning/onEndReasoning, onStartToolExecution/onToolExecution/
    /// onEndToolExecution, onAgentStart/onAgentEnd, onIdle (the turn is done),
    /// onGeneratedUserPrompt, and {sessionError}. After a stop: the remaining events, then
    /// {error: SessionClosed} once, then SessionNotFound. One call per session at a time.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    pub(crate) async fn copilot_session_live(
        &self,
        Parameters(args): Parameters<LiveArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<SessionAnswer, ToolError> {
        let wait = args.wait_ms.unwrap_or(DEFAULT_WAIT_MS);
        if wait > MAX_WAIT_MS {
            return Err(ToolError::Model(format!(
                "waitMs is {wait}; at most {MAX_WAIT_MS} is accepted"
            )));
        }
        let max = match args.max_events {
            None => DEFAULT_MAX_EVENTS,
            Some(0) => {
                return Err(ToolError::Model(
                    "maxEvents must be at least 1 (default 200)".into(),
                ));
            }
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        };
        let outcome = self
            .live()
            .live(
                &args.session_id,
                Duration::from_millis(wait),
                max,
                &context.ct,
            )
            .await;
        match outcome {
            LiveOutcome::NotFound => Ok(not_found(&args.session_id)),
            LiveOutcome::Poll(Poll::Parallel) => Ok(refused(
                SessionErrorKind::ParallelCallNotSupported,
                "another copilot_session_live call on this session is waiting; wait for it \
                 to return"
                    .into(),
            )),
            LiveOutcome::Poll(Poll::TimedOut) => Ok(answer(
                format!("HttpRequestTimeout: no event within {wait} ms; call again"),
                SessionResult::error(
                    SessionErrorKind::HttpRequestTimeout,
                    format!("no event within {wait} ms; call again"),
                ),
            )),
            LiveOutcome::Poll(Poll::Closed) => Ok(answer(
                "SessionClosed: the session is stopped and every event was read",
                SessionResult::error(
                    SessionErrorKind::SessionClosed,
                    "the session is stopped and every event was read",
                ),
            )),
            LiveOutcome::Poll(Poll::Events(events)) => {
                let text = serde_json::to_string(&events)
                    .map_err(|e| ToolError::internal(format!("cannot encode events: {e}")))?;
                Ok(answer(
                    text,
                    SessionResult {
                        events: Some(events),
                        ..SessionResult::default()
                    },
                ))
            }
        }
    }

    /// Stop a session: its running turn is cancelled and the Copilot session closed; its
    /// remaining events can still be read with copilot_session_live. Returns
    /// {result: Closed} or {error: SessionNotFound}.
    #[tool(annotations(
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    pub(crate) async fn copilot_session_stop(
        &self,
        Parameters(args): Parameters<StopArgs>,
    ) -> Result<SessionAnswer, ToolError> {
        if !self.live().stop(&args.session_id).await {
            return Ok(not_found(&args.session_id));
        }
        Ok(answer(
            format!("Closed session {}.", args.session_id),
            SessionResult {
                result: Some("Closed".to_owned()),
                ..SessionResult::default()
            },
        ))
    }

    /// List the long-lived sessions: id, working directory, model, state (idle, running,
    /// closed-undrained), queued events, age and idle time. Sessions idle longer than
    /// COPILOT_BRIDGE_SESSION_IDLE_MS (default 30 minutes) are stopped.
    #[tool(annotations(read_only_hint = true, open_world_hint = false))]
    pub(crate) async fn copilot_session_list(
        &self,
        Parameters(_args): Parameters<ListArgs>,
    ) -> Result<SessionAnswer, ToolError> {
        let sessions = self.live().list();
        let mut text = format!("{} session(s)", sessions.len());
        for s in &sessions {
            let _ = write!(
                text,
                "\n- {} {:?} in {} ({} queued events)",
                s.session_id, s.state, s.working_directory, s.queued_events
            );
        }
        Ok(answer(
            text,
            SessionResult {
                sessions: Some(sessions),
                ..SessionResult::default()
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_must_be_plausible() {
        assert!(model_is_plausible("gpt-5-mini"));
        assert!(model_is_plausible("claude-sonnet-4.5"));
        assert!(!model_is_plausible(""));
        assert!(!model_is_plausible("gpt 5"));
        assert!(!model_is_plausible(&"x".repeat(MAX_MODEL_CHARS + 1)));
    }

    #[test]
    fn results_carry_only_what_they_say() -> anyhow::Result<()> {
        assert_eq!(
            serde_json::to_value(SessionResult::default())?,
            serde_json::json!({})
        );
        assert_eq!(
            serde_json::to_value(SessionResult::error(SessionErrorKind::SessionNotFound, "x"))?,
            serde_json::json!({"error": "SessionNotFound", "message": "x"})
        );
        Ok(())
    }
}
