//! Routes what the agent starts: each `session/update` to the session it belongs to (into the
//! running turn's log and the caller's live stream), each `session/request_permission` through
//! the [`PermissionGate`], and every other request to a `-32601` answer, since we advertise no
//! `fs/*` or `terminal/*` capability.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use bridge_core::sync::lock;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::acp::connection::{BoxFuture, Inbound, snippet};
use crate::acp::error::{INVALID_PARAMS, METHOD_NOT_FOUND, RpcError};
use crate::acp::permission::{PermissionGate, request_from_tool_call};
use crate::acp::update::{PermissionRecord, ToolCall, ToolCallStatus, Update};
use crate::acp::wire::{
    PermissionOption, PermissionOutcome, RequestPermissionParams, SessionNotification,
};

/// What one turn produced, collected as the updates arrive.
#[derive(Debug, Default)]
pub(crate) struct TurnLog {
    /// The agent's answer, concatenated.
    pub(crate) text: String,
    /// Tool calls, merged with their updates, in the order they started.
    pub(crate) tool_calls: Vec<ToolCall>,
    /// Every permission decision.
    pub(crate) permissions: Vec<PermissionRecord>,
    /// Updates that could not be read (kept raw in the live stream and the log).
    pub(crate) unknown_updates: usize,
    /// The caller's live stream, if it wants one.
    forward: Option<mpsc::UnboundedSender<Update>>,
    /// Cancelled when the turn is cancelled: pending permission questions end at once.
    cancelled: CancellationToken,
}

impl TurnLog {
    fn record(&mut self, update: &Update) {
        match update {
            Update::AgentMessage(block) => {
                if let Some(text) = block.as_text() {
                    self.text.push_str(text);
                }
            }
            Update::ToolCall(call) => self.tool_calls.push(call.clone()),
            Update::ToolCallUpdate(change) => {
                if let Some(call) = self
                    .tool_calls
                    .iter_mut()
                    .find(|c| c.tool_call_id == change.tool_call_id)
                {
                    merge(call, change);
                } else {
                    self.tool_calls.push(change.clone());
                }
            }
            Update::Permission(record) => self.permissions.push(record.clone()),
            Update::Unknown { .. } => self.unknown_updates += 1,
            _ => {}
        }
        if let Some(forward) = &self.forward {
            // A caller that stopped listening does not stop the turn.
            let _ = forward.send(update.clone());
        }
    }
}

fn merge(call: &mut ToolCall, change: &ToolCall) {
    if change.title.is_some() {
        call.title.clone_from(&change.title);
    }
    if change.kind.is_some() {
        call.kind.clone_from(&change.kind);
    }
    if change.status.is_some() {
        call.status.clone_from(&change.status);
    }
    if change.raw_input.is_some() {
        call.raw_input.clone_from(&change.raw_input);
    }
    if change.raw_output.is_some() {
        call.raw_output.clone_from(&change.raw_output);
    }
    if !change.locations.is_empty() {
        call.locations.clone_from(&change.locations);
    }
    if !change.content.is_empty() {
        call.content.clone_from(&change.content);
    }
}

#[derive(Debug, Default)]
struct SinkState {
    turn: Option<TurnLog>,
    /// Titles from `tool_call` announcements, by id (the permission request's own title is
    /// less specific: for MCP tools only the announcement has `<server>-<tool>`).
    announced: HashMap<String, ToolCall>,
    title: Option<String>,
    mode: Option<String>,
    /// Message chunks replayed by `session/load` (user and agent), for a replacement's summary.
    replayed_messages: usize,
}

/// One session's live routing state on one connection.
#[derive(Debug)]
pub(crate) struct SessionSink {
    pub(crate) cwd: PathBuf,
    state: Mutex<SinkState>,
}

impl SessionSink {
    pub(crate) fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            state: Mutex::new(SinkState::default()),
        }
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut SinkState) -> T) -> T {
        // A poisoned lock only means another thread panicked mid-update; the data is still
        // the best we have.
        let mut state = lock(&self.state);
        f(&mut state)
    }

    /// Starts collecting a turn; returns its cancellation token.
    pub(crate) fn begin_turn(
        &self,
        forward: Option<mpsc::UnboundedSender<Update>>,
    ) -> CancellationToken {
        let cancelled = CancellationToken::new();
        self.with_state(|s| {
            s.turn = Some(TurnLog {
                forward,
                cancelled: cancelled.clone(),
                ..TurnLog::default()
            });
        });
        cancelled
    }

    /// Stops collecting and returns what the turn produced.
    pub(crate) fn end_turn(&self) -> TurnLog {
        self.with_state(|s| s.turn.take()).unwrap_or_default()
    }

    /// The session title the agent reported last.
    pub(crate) fn title(&self) -> Option<String> {
        self.with_state(|s| s.title.clone())
    }

    /// The current mode the agent reported last.
    pub(crate) fn mode(&self) -> Option<String> {
        self.with_state(|s| s.mode.clone())
    }

    /// Records a mode the agent accepted (its `current_mode_update` may arrive after the
    /// answer to `session/set_mode`, and would say the same).
    pub(crate) fn set_mode(&self, mode: String) {
        self.with_state(|s| s.mode = Some(mode));
    }

    /// How many message chunks a `session/load` replayed.
    pub(crate) fn replayed_messages(&self) -> usize {
        self.with_state(|s| s.replayed_messages)
    }

    fn apply(&self, session_id: &str, update: &Update) {
        if let Update::Unknown { kind, raw } = update {
            tracing::warn!(session = session_id, kind = %kind, update = %snippet(&raw.to_string()), "an update of a kind this client does not know; kept raw");
        }
        self.with_state(|s| {
            match update {
                Update::ToolCall(call) => {
                    s.announced.insert(call.tool_call_id.clone(), call.clone());
                }
                // A finished call asks nothing more; forgetting it keeps long sessions small.
                Update::ToolCallUpdate(change)
                    if matches!(
                        change.status,
                        Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
                    ) =>
                {
                    s.announced.remove(&change.tool_call_id);
                }
                Update::SessionInfo { title: Some(title) } => s.title = Some(title.clone()),
                Update::CurrentMode(mode) => s.mode = Some(mode.clone()),
                Update::UserMessage(_) | Update::AgentMessage(_) if s.turn.is_none() => {
                    s.replayed_messages += 1;
                }
                _ => {}
            }
            if let Some(turn) = &mut s.turn {
                turn.record(update);
            } else {
                tracing::trace!(
                    session = session_id,
                    kind = update.kind(),
                    "update outside a turn"
                );
            }
        });
    }
}

/// The connection's handler for everything the agent starts.
#[derive(Debug)]
pub(crate) struct Dispatcher {
    sessions: Mutex<HashMap<String, Arc<SessionSink>>>,
    gate: PermissionGate,
}

impl Dispatcher {
    pub(crate) fn new(gate: PermissionGate) -> Self {
        Self {
            sessions: Mutex::new(HashMap::new()),
            gate,
        }
    }

    /// Routes updates and permission requests for `session_id` to `sink` from now on.
    pub(crate) fn register(&self, session_id: &str, sink: Arc<SessionSink>) {
        lock(&self.sessions).insert(session_id.to_owned(), sink);
    }

    /// Stops routing for `session_id`.
    pub(crate) fn unregister(&self, session_id: &str) {
        lock(&self.sessions).remove(session_id);
    }

    fn sink(&self, session_id: &str) -> Option<Arc<SessionSink>> {
        lock(&self.sessions).get(session_id).cloned()
    }

    /// The longest an answer to the agent can take (the ask hook's limit plus a margin).
    pub(crate) fn answer_timeout(&self) -> std::time::Duration {
        self.gate.max_decision_time() + std::time::Duration::from_secs(5)
    }

    fn permission(&self, params: Value) -> BoxFuture<Result<Value, RpcError>> {
        let params: RequestPermissionParams = match serde_json::from_value(params) {
            Ok(params) => params,
            Err(err) => {
                tracing::warn!(%err, "an unreadable permission request; denied");
                return Box::pin(async move {
                    Err(RpcError::new(
                        INVALID_PARAMS,
                        format!("unreadable permission request: {err}"),
                    ))
                });
            }
        };
        let Some(sink) = self.sink(&params.session_id) else {
            tracing::warn!(session = %params.session_id, "a permission request for a session we do not know; denied");
            let outcome = choose(&params.options, false);
            return Box::pin(async move { Ok(outcome.to_result()) });
        };
        let gate = self.gate.clone();
        Box::pin(async move {
            let announced =
                sink.with_state(|s| s.announced.get(&params.tool_call.tool_call_id).cloned());
            let request = request_from_tool_call(
                &params.session_id,
                &sink.cwd,
                &params.tool_call,
                announced.as_ref(),
            );
            let cancelled = sink.with_state(|s| s.turn.as_ref().map(|t| t.cancelled.clone()));
            let asking = |reason: &str| {
                let update = Update::Asking {
                    tool_call_id: request.tool_call_id.clone(),
                    reason: reason.to_owned(),
                };
                sink.apply(&params.session_id, &update);
            };
            let decision = match cancelled {
                Some(cancelled) => tokio::select! {
                    decision = gate.decide_telling(&request, asking) => Some(decision),
                    () = cancelled.cancelled() => None,
                },
                None => Some(gate.decide_telling(&request, asking).await),
            };
            let Some(decision) = decision else {
                // ACP: once a turn is cancelled, pending permission requests answer "cancelled".
                return Ok(PermissionOutcome::Cancelled.to_result());
            };
            tracing::info!(
                session = %params.session_id, tool = %request.tool, kind = %request.kind,
                allowed = decision.allowed, reason = %decision.reason, "permission decided"
            );
            let record = PermissionRecord {
                tool_call_id: request.tool_call_id.clone(),
                title: announced
                    .and_then(|c| c.title)
                    .unwrap_or_else(|| request.title.clone()),
                kind: request.kind.clone(),
                command: request.command.clone(),
                paths: request.paths.clone(),
                allowed: decision.allowed,
                reason: decision.reason.clone(),
            };
            sink.apply(&params.session_id, &Update::Permission(record));
            Ok(choose(&params.options, decision.allowed).to_result())
        })
    }
}

/// Picks the option that grants exactly "once" or refuses exactly "once"; when the agent does
/// not offer it, answers "cancelled", which every agent treats as a refusal. Never "always".
fn choose(options: &[PermissionOption], allowed: bool) -> PermissionOutcome {
    let wanted = if allowed { "allow_once" } else { "reject_once" };
    options
        .iter()
        .find(|o| o.kind == wanted)
        .or_else(|| options.iter().find(|o| o.option_id == wanted))
        .map_or(PermissionOutcome::Cancelled, |o| {
            PermissionOutcome::Selected(o.option_id.clone())
        })
}

impl Inbound for Dispatcher {
    fn notification(&self, method: String, params: Value) {
        if method != "session/update" {
            tracing::debug!(%method, "a notification this client does not handle");
            return;
        }
        let notification: SessionNotification = match serde_json::from_value(params.clone()) {
            Ok(n) => n,
            Err(err) => {
                tracing::warn!(%err, params = %snippet(&params.to_string()), "an unreadable session/update; skipped");
                return;
            }
        };
        let update = Update::from_wire(notification.update);
        if let Some(sink) = self.sink(&notification.session_id) {
            sink.apply(&notification.session_id, &update);
        } else {
            // The CLI announces commands for a new session before answering `session/new`.
            tracing::debug!(session = %notification.session_id, kind = update.kind(), "an update for a session not (yet) registered");
        }
    }

    fn request(&self, method: String, params: Value) -> BoxFuture<Result<Value, RpcError>> {
        if method == "session/request_permission" {
            return self.permission(params);
        }
        tracing::info!(%method, "the agent called a method this client does not offer");
        Box::pin(async move {
            Err(RpcError {
                code: METHOD_NOT_FOUND,
                message: format!("\"Method not found\": {method}"),
                data: Some(serde_json::json!({"method": method})),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acp::permission::{PermissionRequest, Verdict};
    use crate::acp::update::ToolKind;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn options() -> Vec<PermissionOption> {
        serde_json::from_value(json!([
            {"optionId": "allow_once", "kind": "allow_once", "name": "Allow once"},
            {"optionId": "allow_always", "kind": "allow_always", "name": "Always allow"},
            {"optionId": "reject_once", "kind": "reject_once", "name": "Deny"}
        ]))
        .expect("options")
    }

    #[test]
    fn never_picks_always_and_falls_back_to_cancelled() {
        assert_eq!(
            choose(&options(), true),
            PermissionOutcome::Selected("allow_once".into())
        );
        assert_eq!(
            choose(&options(), false),
            PermissionOutcome::Selected("reject_once".into())
        );
        let only_always: Vec<PermissionOption> = serde_json::from_value(json!([
            {"optionId": "x", "kind": "allow_always"}, {"optionId": "y", "kind": "reject_always"}
        ]))
        .expect("options");
        assert_eq!(choose(&only_always, true), PermissionOutcome::Cancelled);
        assert_eq!(choose(&only_always, false), PermissionOutcome::Cancelled);
    }

    /// The request from `acp-byok-writefile-allow.jsonl`, answered through the gate, with the
    /// decision recorded in the turn and streamed to the caller.
    #[tokio::test]
    async fn a_permission_request_is_decided_recorded_and_streamed() -> anyhow::Result<()> {
        let allow_edits = |r: &PermissionRequest| {
            if r.kind == ToolKind::Edit {
                Verdict::Allow
            } else {
                Verdict::Deny {
                    reason: "no".into(),
                }
            }
        };
        let dispatcher = Dispatcher::new(PermissionGate::new(Arc::new(allow_edits)));
        let sink = Arc::new(SessionSink::new(PathBuf::from("/home/user/project/work")));
        dispatcher.register("s1", Arc::clone(&sink));
        let (tx, mut rx) = mpsc::unbounded_channel();
        sink.begin_turn(Some(tx));
        dispatcher.notification(
            "session/update".into(),
            json!({"sessionId": "s1", "update": {"sessionUpdate": "tool_call",
                "toolCallId": "call_1", "title": "Creating /home/user/project/work/hello.txt",
                "kind": "edit", "status": "pending"}}),
        );
        let answer = dispatcher
            .request(
                "session/request_permission".into(),
                json!({"sessionId": "s1", "toolCall": {"toolCallId": "call_1",
                    "title": "Create file", "kind": "edit", "status": "pending",
                    "rawInput": {"fileName": "/home/user/project/work/hello.txt"},
                    "locations": [{"path": "/home/user/project/work/hello.txt"}]},
                    "options": options()
                        .iter()
                        .map(|o| json!({"optionId": o.option_id, "kind": o.kind}))
                        .collect::<Vec<_>>()}),
            )
            .await;
        assert_eq!(
            answer,
            Ok(json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}))
        );
        let turn = sink.end_turn();
        assert_eq!(turn.permissions.len(), 1);
        assert!(turn.permissions[0].allowed);
        assert_eq!(
            turn.permissions[0].title,
            "Creating /home/user/project/work/hello.txt"
        );
        assert!(matches!(rx.recv().await, Some(Update::ToolCall(_))));
        assert!(matches!(rx.recv().await, Some(Update::Permission(_))));
        Ok(())
    }

    #[tokio::test]
    async fn other_agent_requests_get_method_not_found() {
        let dispatcher = Dispatcher::new(PermissionGate::default());
        for method in [
            "fs/read_text_file",
            "fs/write_text_file",
            "terminal/create",
            "x/y",
        ] {
            let answer = dispatcher.request(method.into(), json!({})).await;
            assert_eq!(
                answer.map_err(|e| e.code),
                Err(METHOD_NOT_FOUND),
                "{method}"
            );
        }
    }

    #[tokio::test]
    async fn a_cancelled_turn_answers_a_pending_question_with_cancelled() {
        let gate = PermissionGate::new(Arc::new(|_: &PermissionRequest| Verdict::Ask {
            reason: "confirm".into(),
        }))
        .with_ask_hook(Arc::new(NeverAnswers));
        let dispatcher = Dispatcher::new(gate);
        let sink = Arc::new(SessionSink::new(PathBuf::from("/w")));
        dispatcher.register("s1", Arc::clone(&sink));
        let cancel = sink.begin_turn(None);
        let answer = dispatcher.request(
            "session/request_permission".into(),
            json!({"sessionId": "s1", "toolCall": {"toolCallId": "c", "kind": "execute",
                   "rawInput": {"command": "make"}}, "options": []}),
        );
        cancel.cancel();
        assert_eq!(
            answer.await,
            Ok(json!({"outcome": {"outcome": "cancelled"}}))
        );
    }

    #[derive(Debug)]
    struct NeverAnswers;

    impl crate::acp::permission::AskHook for NeverAnswers {
        fn ask(
            &self,
            _request: PermissionRequest,
            _reason: String,
        ) -> BoxFuture<crate::acp::Asked> {
            Box::pin(std::future::pending())
        }
    }
}
