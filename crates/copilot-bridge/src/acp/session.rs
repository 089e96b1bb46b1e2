//! One conversation with the agent, as callers see it: prompts with live updates, cancellation
//! and a timeout, mode and model changes, and closing. A [`Session`] survives agent restarts:
//! the supervisor reloads it (or replaces it, seeded with a summary) before its next call, and
//! the next [`PromptOutcome`] says so.

use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bridge_core::sync::lock;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::acp::config::Timeouts;
use crate::acp::connection::Connection;
use crate::acp::content::ContentBlock;
use crate::acp::dispatch::SessionSink;
use crate::acp::error::AcpError;
use crate::acp::update::{PermissionRecord, StopReason, ToolCall, Update};
use crate::acp::wire::{
    PromptParams, PromptResponse, SessionIdParams, SessionMode, SetConfigOptionParams,
    SetModeParams, SetModelParams, Usage,
};

/// Exchanges remembered per session to seed a replacement when the original is lost.
const HISTORY_EXCHANGES: usize = 4;
/// Characters kept of each prompt and reply in that history: a summary, not a transcript.
const HISTORY_CHARS: usize = 400;

/// How one prompt should run.
#[derive(Debug, Default)]
pub struct PromptOptions {
    /// Overrides the agent's default prompt timeout. On timeout the turn is cancelled and
    /// whatever it produced is returned with `timed_out` set.
    pub timeout: Option<Duration>,
    /// Cancels the turn (the agent gets `session/cancel`; the outcome's stop reason is
    /// `cancelled`).
    pub cancel: Option<CancellationToken>,
    /// Receives every update as it arrives, including permission decisions.
    pub updates: Option<mpsc::UnboundedSender<Update>>,
}

/// Something the caller should know about the session itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionNotice {
    /// The agent restarted and the session was reloaded with its history.
    Reloaded {
        /// The session id (unchanged).
        session_id: String,
        /// How many message chunks the agent replayed.
        replayed_messages: usize,
    },
    /// The session could not be reloaded; a new one took its place, seeded with a summary.
    Replaced {
        /// The lost session.
        previous_id: String,
        /// The new session.
        session_id: String,
        /// Why the old one could not be reloaded.
        reason: String,
    },
}

impl fmt::Display for SessionNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Reloaded { session_id, .. } => write!(
                f,
                "The Copilot CLI restarted; session {session_id} was reloaded with its history."
            ),
            Self::Replaced {
                previous_id,
                session_id,
                reason,
            } => write!(
                f,
                "The previous Copilot session {previous_id} could not be restored ({reason}). \
                 A new session {session_id} was started and given a short summary of the \
                 earlier conversation; details from before may be missing."
            ),
        }
    }
}

/// What a finished turn produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptOutcome {
    /// The session that ran the turn (it changes when the session was replaced).
    pub session_id: String,
    /// Why the turn ended. A turn we cancelled is `cancelled` whatever the agent says.
    pub stop_reason: StopReason,
    /// Whether the turn was cancelled because it ran out of time.
    pub timed_out: bool,
    /// The agent's answer.
    pub text: String,
    /// The tool calls, with their final status.
    pub tool_calls: Vec<ToolCall>,
    /// Every permission decision of the turn (denials included).
    pub permissions: Vec<PermissionRecord>,
    /// Token use, when the agent reports it.
    pub usage: Option<Usage>,
    /// Updates of unknown kinds (kept raw in the live stream).
    pub unknown_updates: usize,
    /// How long the turn took.
    pub elapsed_ms: u64,
    /// What happened to the session before this turn, if anything.
    pub notice: Option<SessionNotice>,
}

impl PromptOutcome {
    /// The permission requests that were denied.
    pub fn denials(&self) -> impl Iterator<Item = &PermissionRecord> {
        self.permissions.iter().filter(|p| !p.allowed)
    }
}

#[derive(Debug, Clone)]
struct Exchange {
    prompt: String,
    reply: String,
}

fn clip(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= HISTORY_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(HISTORY_CHARS).collect();
    format!("{cut}…")
}

#[derive(Debug)]
pub(crate) struct SessionState {
    pub(crate) id: String,
    /// The agent generation this session is loaded in; 0 forces a reload.
    pub(crate) generation: u64,
    pub(crate) sink: Arc<SessionSink>,
    pub(crate) modes: Vec<SessionMode>,
    history: Vec<Exchange>,
    pending_seed: Option<String>,
    pending_notice: Option<SessionNotice>,
    running: Option<CancellationToken>,
    pub(crate) closed: bool,
}

/// A boxed future of a [`SessionHost`] call.
pub(crate) type HostFuture<'a, T> =
    std::pin::Pin<Box<dyn Future<Output = Result<T, AcpError>> + Send + 'a>>;

/// What a session needs from the agent that owns it (the supervisor): the running agent's
/// connection with the session loaded in it, and closing it there. Sessions know nothing else
/// of the supervisor, which owns them and hands them this.
pub(crate) trait SessionHost: fmt::Debug + Send + Sync {
    /// The connection of the agent serving `session` (started, and the session reloaded or
    /// replaced after a restart, as needed), the session's id there, and its update sink.
    fn ensure<'a>(
        &'a self,
        session: &'a SessionInner,
    ) -> HostFuture<'a, (Connection, String, Arc<SessionSink>)>;

    /// Closes `session` in the agent, if it is loaded there.
    fn close<'a>(&'a self, session: &'a SessionInner) -> HostFuture<'a, ()>;

    /// The timeouts of requests to the agent.
    fn timeouts(&self) -> Timeouts;
}

/// Shared by the [`Session`] handles and the supervisor.
#[derive(Debug)]
pub(crate) struct SessionInner {
    pub(crate) agent: Arc<dyn SessionHost>,
    pub(crate) cwd: PathBuf,
    pub(crate) state: Mutex<SessionState>,
    /// One turn at a time (ACP allows one prompt per session).
    pub(crate) turn: tokio::sync::Mutex<()>,
}

impl SessionInner {
    pub(crate) fn new(
        agent: Arc<dyn SessionHost>,
        cwd: PathBuf,
        id: String,
        generation: u64,
        sink: Arc<SessionSink>,
        modes: Vec<SessionMode>,
    ) -> Self {
        Self {
            agent,
            cwd,
            state: Mutex::new(SessionState {
                id,
                generation,
                sink,
                modes,
                history: Vec::new(),
                pending_seed: None,
                pending_notice: None,
                running: None,
                closed: false,
            }),
            turn: tokio::sync::Mutex::new(()),
        }
    }

    pub(crate) fn with_state<T>(&self, f: impl FnOnce(&mut SessionState) -> T) -> T {
        let mut state = lock(&self.state);
        f(&mut state)
    }

    /// Rebinds the session after a reload in a new agent generation.
    pub(crate) fn reloaded(&self, generation: u64, sink: Arc<SessionSink>, notice: SessionNotice) {
        self.with_state(|s| {
            s.generation = generation;
            s.sink = sink;
            s.pending_notice = Some(notice);
        });
    }

    /// Points the session at a replacement and prepares the summary for its first prompt.
    pub(crate) fn replaced(
        &self,
        id: String,
        generation: u64,
        sink: Arc<SessionSink>,
        modes: Vec<SessionMode>,
        notice: SessionNotice,
    ) {
        self.with_state(|s| {
            s.pending_seed = Some(summary(&s.history, &s.id));
            s.id = id;
            s.generation = generation;
            s.sink = sink;
            s.modes = modes;
            s.pending_notice = Some(notice);
        });
    }

    /// Cancels the running turn, if any; returns whether there was one.
    pub(crate) fn cancel_running(&self) -> bool {
        self.with_state(|s| s.running.as_ref().map(CancellationToken::cancel).is_some())
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.with_state(|s| s.closed)
    }
}

/// The summary that seeds a replacement session: what was asked and answered before.
fn summary(history: &[Exchange], previous_id: &str) -> String {
    let mut text = format!(
        "Context from the bridge: this conversation continues an earlier Copilot session \
         ({previous_id}) that could not be restored. "
    );
    if history.is_empty() {
        text.push_str("Nothing had been done in it yet.");
        return text;
    }
    text.push_str("Summary of its last exchanges, oldest first:\n");
    for exchange in history {
        text.push_str("- Request: ");
        text.push_str(&exchange.prompt);
        text.push_str("\n  Reply: ");
        text.push_str(if exchange.reply.is_empty() {
            "(none)"
        } else {
            &exchange.reply
        });
        text.push('\n');
    }
    text.push_str("Check the working directory for the current state of any files before relying on this summary.");
    text
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Answered,
    Cancelled,
    TimedOut,
}

/// Waits for a turn's answer. On cancel or timeout, tells the agent (`session/cancel`), ends
/// pending permission questions, and waits `grace` more for the agent to wind the turn down;
/// an agent that does not is given up on with a synthetic `cancelled` answer.
async fn await_answer(
    connection: &Connection,
    session_id: &str,
    request: impl Future<Output = Result<Value, AcpError>>,
    running: &CancellationToken,
    turn_cancel: &CancellationToken,
    timeout: Duration,
    grace: Duration,
) -> (Result<Value, AcpError>, Ending) {
    tokio::pin!(request);
    let ending = tokio::select! {
        result = &mut request => return (result, Ending::Answered),
        () = running.cancelled() => Ending::Cancelled,
        () = tokio::time::sleep(timeout) => Ending::TimedOut,
    };
    tracing::info!(session = %session_id, ?ending, "cancelling the turn");
    turn_cancel.cancel();
    let cancel = serde_json::to_value(SessionIdParams { session_id }).unwrap_or(Value::Null);
    if let Err(err) = connection.notify("session/cancel", cancel).await {
        tracing::warn!(%err, "could not send session/cancel");
    }
    let result = tokio::time::timeout(grace, &mut request)
        .await
        .unwrap_or_else(|_| {
            tracing::warn!(session = %session_id, "no answer to the cancelled turn; giving up on it");
            Ok(serde_json::json!({"stopReason": "cancelled"}))
        });
    (result, ending)
}

/// A conversation with the agent. Cheap to clone; all clones are the same session.
#[derive(Debug, Clone)]
pub struct Session {
    pub(crate) inner: Arc<SessionInner>,
}

impl Session {
    /// The session id (it changes if the session had to be replaced).
    pub fn id(&self) -> String {
        self.inner.with_state(|s| s.id.clone())
    }

    /// The session's working directory.
    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    /// The title the agent gave the session, if any.
    pub fn title(&self) -> Option<String> {
        self.inner.with_state(|s| s.sink.title())
    }

    /// The current mode id the agent reported, if any.
    pub fn mode(&self) -> Option<String> {
        self.inner.with_state(|s| s.sink.mode())
    }

    /// Sends a text prompt and waits for the turn to end.
    pub async fn prompt_text(&self, text: &str) -> Result<PromptOutcome, AcpError> {
        self.prompt(vec![ContentBlock::text(text)], PromptOptions::default())
            .await
    }

    /// Sends a prompt (text, embedded resources, images) and waits for the turn to end.
    ///
    /// A cancel or a timeout sends `session/cancel` and still returns the partial outcome.
    /// If the agent dies during the turn the call fails with [`AcpError::AgentExited`]; the
    /// next call restarts the agent and reloads the session.
    pub async fn prompt(
        &self,
        prompt: Vec<ContentBlock>,
        options: PromptOptions,
    ) -> Result<PromptOutcome, AcpError> {
        let started = Instant::now();
        let cancel = options.cancel.clone().unwrap_or_default();
        // A cancel while waiting for the previous turn ends this one before it starts.
        let _turn = tokio::select! {
            turn = self.inner.turn.lock() => turn,
            () = cancel.cancelled() => return Ok(self.cancelled_before_start(started)),
        };
        let mut outcome = self.run_turn(&prompt, &options).await;
        if let Err(err) = &outcome
            && err
                .rpc_error()
                .is_some_and(crate::acp::error::RpcError::is_unknown_session)
        {
            // The agent forgot the session; nothing ran, so reload (or replace) and retry once.
            tracing::warn!(session = %self.id(), %err, "the agent does not know this session; reloading it");
            self.inner.with_state(|s| s.generation = 0);
            outcome = self.run_turn(&prompt, &options).await;
        }
        let mut outcome = outcome?;
        outcome.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(outcome)
    }

    async fn run_turn(
        &self,
        prompt: &[ContentBlock],
        options: &PromptOptions,
    ) -> Result<PromptOutcome, AcpError> {
        if self.inner.is_closed() {
            return Err(AcpError::SessionClosed {
                session_id: self.id(),
            });
        }
        let agent = &self.inner.agent;
        // Starting the agent or reloading the session can take seconds; a cancel ends the wait.
        let ensured = match &options.cancel {
            Some(cancel) => tokio::select! {
                ensured = agent.ensure(&self.inner) => ensured,
                () = cancel.cancelled() => return Ok(self.cancelled_before_start(Instant::now())),
            },
            None => agent.ensure(&self.inner).await,
        };
        let (connection, session_id, sink) = ensured?;
        let timeouts = agent.timeouts();
        let timeout = options.timeout.unwrap_or(timeouts.prompt);
        let (seed, notice) = self
            .inner
            .with_state(|s| (s.pending_seed.take(), s.pending_notice.take()));
        let blocks = seeded(seed.as_deref(), prompt, options.updates.as_ref());

        let running = options
            .cancel
            .as_ref()
            .map_or_else(CancellationToken::new, CancellationToken::child_token);
        self.inner.with_state(|s| s.running = Some(running.clone()));
        let turn_cancel = sink.begin_turn(options.updates.clone());
        let params = serde_json::to_value(PromptParams {
            session_id: &session_id,
            prompt: &blocks,
        })
        .unwrap_or(Value::Null);
        // The connection's own limit is a backstop; our deadline ends the turn first.
        let request = connection.request(
            "session/prompt",
            params,
            timeout + timeouts.cancel_grace + Duration::from_secs(5),
        );
        let (result, ending) = await_answer(
            &connection,
            &session_id,
            request,
            &running,
            &turn_cancel,
            timeout,
            timeouts.cancel_grace,
        )
        .await;
        let (cancelled, timed_out) = (ending != Ending::Answered, ending == Ending::TimedOut);
        self.inner.with_state(|s| s.running = None);
        let log = sink.end_turn();
        let prompt_text: String = prompt.iter().filter_map(ContentBlock::as_text).collect();
        self.inner.with_state(|s| {
            if s.history.len() == HISTORY_EXCHANGES {
                s.history.remove(0);
            }
            s.history.push(Exchange {
                prompt: clip(&prompt_text),
                reply: clip(&log.text),
            });
        });
        let value = match result {
            Ok(value) => value,
            Err(err) => {
                if seed.is_some() {
                    // The replacement never got its summary; try again next time.
                    self.inner.with_state(|s| s.pending_seed = seed);
                }
                if notice.is_some() {
                    self.inner.with_state(|s| s.pending_notice = notice);
                }
                return Err(err);
            }
        };
        let response: PromptResponse =
            serde_json::from_value(value).map_err(|err| AcpError::BadResponse {
                method: "session/prompt".to_owned(),
                detail: err.to_string(),
            })?;
        // Some agents answer `end_turn` after a cancel; a turn we cancelled is cancelled.
        let stop_reason = if cancelled || timed_out {
            StopReason::Cancelled
        } else {
            response.stop_reason
        };
        Ok(PromptOutcome {
            session_id,
            stop_reason,
            timed_out,
            text: log.text,
            tool_calls: log.tool_calls,
            permissions: log.permissions,
            usage: response.usage,
            unknown_updates: log.unknown_updates,
            elapsed_ms: 0,
            notice,
        })
    }

    /// The outcome of a turn cancelled before anything was sent to the agent.
    fn cancelled_before_start(&self, started: Instant) -> PromptOutcome {
        PromptOutcome {
            session_id: self.id(),
            stop_reason: StopReason::Cancelled,
            timed_out: false,
            text: String::new(),
            tool_calls: Vec::new(),
            permissions: Vec::new(),
            usage: None,
            unknown_updates: 0,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            notice: None,
        }
    }

    /// Cancels the running turn, if there is one; the prompt call then returns with stop
    /// reason `cancelled`. Returns whether a turn was running.
    pub fn cancel(&self) -> bool {
        self.inner.cancel_running()
    }

    /// Switches the session's mode. Mode ids are URLs for the CLI; a short name such as
    /// `plan` is matched against the modes the session offers.
    pub async fn set_mode(&self, mode: &str) -> Result<(), AcpError> {
        let mode_id = self.inner.with_state(|s| {
            if mode.contains("://") {
                return mode.to_owned();
            }
            s.modes
                .iter()
                .find(|m| {
                    m.id.rsplit(['#', '/']).next() == Some(mode)
                        || m.name.eq_ignore_ascii_case(mode)
                })
                .map_or_else(|| mode.to_owned(), |m| m.id.clone())
        });
        self.call(|session_id| {
            (
                "session/set_mode",
                serde_json::to_value(SetModeParams {
                    session_id,
                    mode_id: &mode_id,
                }),
            )
        })
        .await?;
        // The agent accepted it: the mode is current now, whenever its own notice arrives.
        let sink = self.inner.with_state(|s| Arc::clone(&s.sink));
        sink.set_mode(mode_id);
        Ok(())
    }

    /// Switches the session's model.
    pub async fn set_model(&self, model_id: &str) -> Result<(), AcpError> {
        self.call(|session_id| {
            (
                "session/set_model",
                serde_json::to_value(SetModelParams {
                    session_id,
                    model_id,
                }),
            )
        })
        .await
        .map(drop)
    }

    /// Sets one of the session's configuration options (e.g. `mode`); returns the agent's
    /// answer (the CLI sends the updated options).
    pub async fn set_config_option(
        &self,
        config_id: &str,
        value: &Value,
    ) -> Result<Value, AcpError> {
        self.call(|session_id| {
            (
                "session/set_config_option",
                serde_json::to_value(SetConfigOptionParams {
                    session_id,
                    config_id,
                    value,
                }),
            )
        })
        .await
    }

    /// Closes the session on the agent's side (when it supports that) and stops routing its
    /// updates. Later calls fail with [`AcpError::SessionClosed`].
    pub async fn close(&self) -> Result<(), AcpError> {
        self.cancel();
        let _turn = self.inner.turn.lock().await;
        if self.inner.is_closed() {
            return Ok(());
        }
        let result = self.inner.agent.close(&self.inner).await;
        self.inner.with_state(|s| s.closed = true);
        result
    }

    async fn call(
        &self,
        build: impl FnOnce(&str) -> (&'static str, serde_json::Result<Value>),
    ) -> Result<Value, AcpError> {
        let _turn = self.inner.turn.lock().await;
        if self.inner.is_closed() {
            return Err(AcpError::SessionClosed {
                session_id: self.id(),
            });
        }
        let (connection, session_id, _sink) = self.inner.agent.ensure(&self.inner).await?;
        let (method, params) = build(&session_id);
        let params = params.map_err(|err| AcpError::BadResponse {
            method: method.to_owned(),
            detail: err.to_string(),
        })?;
        connection
            .request(method, params, self.inner.agent.timeouts().request)
            .await
    }
}

/// The prompt as sent: the replacement's summary first, when one is pending (and announced to
/// the caller's live stream as a prompt the bridge generated).
fn seeded(
    seed: Option<&str>,
    prompt: &[ContentBlock],
    updates: Option<&mpsc::UnboundedSender<Update>>,
) -> Vec<ContentBlock> {
    let mut blocks = Vec::with_capacity(prompt.len() + 1);
    if let Some(seed) = seed {
        blocks.push(ContentBlock::text(seed));
        if let Some(updates) = updates {
            let _ = updates.send(Update::GeneratedPrompt(seed.to_owned()));
        }
    }
    blocks.extend_from_slice(prompt);
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replacement_summary_names_the_lost_session_and_the_last_exchanges() {
        let history = vec![
            Exchange {
                prompt: "create hello.txt".into(),
                reply: "Created it.".into(),
            },
            Exchange {
                prompt: "now add a line".into(),
                reply: String::new(),
            },
        ];
        let text = summary(&history, "abc-123");
        assert!(text.contains("abc-123"), "{text}");
        assert!(
            text.contains("create hello.txt") && text.contains("Created it."),
            "{text}"
        );
        assert!(text.contains("(none)"), "{text}");
        assert!(summary(&[], "x").contains("Nothing had been done"));
    }

    #[test]
    fn history_entries_are_clipped() {
        let long = "x".repeat(HISTORY_CHARS * 3);
        assert_eq!(clip(&long).chars().count(), HISTORY_CHARS + 1);
    }
}
