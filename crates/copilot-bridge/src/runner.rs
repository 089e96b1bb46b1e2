//! One delegated task → one finished Copilot turn: the prompt hook (redaction, project
//! context), the shared agent (started on first use), session opening, continuation and
//! reloading, per-directory serialization, retries, progress relaying with heartbeats,
//! cancellation and timeouts. The tools in `tools/code.rs` only parse arguments and render.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bridge_core::config::Config;
use bridge_core::redact::Redactor;
use bridge_core::retry::{self, Classify, ErrorClass, RetryError, RetryPolicy};
use bridge_core::sync::lock;
use chrono::Utc;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use serde::Serialize;
use tokio::sync::{OnceCell, mpsc};
use tokio_util::sync::CancellationToken;

use crate::acp::{
    AcpError, Agent, ContentBlock, CopilotLaunch, MemoryLaunch, PermissionGate, PlanEntry,
    PromptOptions, PromptOutcome, Session, StopReason, ToolCall, ToolCallStatus, Update, Usage,
};
use crate::session_store::{SessionRecord, SessionStore};

/// Longest gap between progress notifications while a turn runs. Clients commonly time a
/// request out after 60 s without progress; 10 s keeps well inside that (the issue asks for
/// at most 15 s) even when a notification is delayed.
pub const HEARTBEAT: Duration = Duration::from_secs(10);
/// Minimum gap between "text so far" progress messages, so a fast stream of chunks does not
/// turn into a flood of notifications.
const TEXT_PROGRESS_GAP: Duration = Duration::from_secs(1);
/// Characters of the answer quoted in a "text so far" progress message.
const PROGRESS_TEXT_CHARS: usize = 120;
/// Characters of a tool's output quoted in the verbose log.
const OUTCOME_CHARS: usize = 200;

/// Why a task could not run (a turn that ran, even cancelled or timed out, is not an error).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// `workingDir` does not exist, is not a directory, or is outside the workspace.
    #[error(
        "workingDir {} {problem}; pass an existing directory inside the workspace root {} \
         (relative paths start there; set COPILOT_BRIDGE_WORKSPACE or --workspace to delegate \
         elsewhere)", path.display(), root.display()
    )]
    WorkingDir {
        /// The directory as resolved.
        path: PathBuf,
        /// The workspace root relative paths start from.
        root: PathBuf,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The `sessionId` is neither open nor recorded.
    #[error(
        "unknown sessionId {session_id}: the bridge has no record of it (sessions are forgotten \
         after 24 hours unused); omit sessionId to start a new session"
    )]
    UnknownSession {
        /// The id the caller gave.
        session_id: String,
    },
    /// The `sessionId` belongs to another directory than the `workingDir` given.
    #[error(
        "session {session_id} works in {}, not in {}; omit workingDir to continue it, or omit \
         sessionId to start a new session there", session_dir.display(), requested.display()
    )]
    SessionDirMismatch {
        /// The session.
        session_id: String,
        /// Its directory.
        session_dir: PathBuf,
        /// The directory the caller asked for.
        requested: PathBuf,
    },
    /// The Copilot CLI could not be launched or configured.
    #[error("cannot launch the Copilot CLI: {0}")]
    Launch(#[source] AcpError),
    /// The agent failed and retrying did not help.
    #[error("{0}")]
    Agent(#[source] RetryError<Attempt>),
    /// The call was cancelled before the turn started.
    #[error("the task was cancelled before it started")]
    Cancelled,
}

/// A failed attempt seen by the retry loop, which classifies it: worth another try or not.
#[derive(Debug, thiserror::Error)]
pub enum Attempt {
    /// The agent (or talking to it) failed.
    #[error(transparent)]
    Agent(AcpError),
    /// The turn ended normally, but its answer is the CLI's report that the model failed (the
    /// CLI retries the model itself, then answers `end_turn` with `Error: …` as the text).
    #[error("the model failed: {message}")]
    Model {
        /// The CLI's error text.
        message: String,
        /// The turn, kept for the result when no retry helps.
        outcome: Box<PromptOutcome>,
    },
}

impl Classify for Attempt {
    fn classify(&self) -> ErrorClass {
        let class = match self {
            // The supervisor restarts the agent and reloads the session on the next attempt.
            Self::Agent(AcpError::AgentExited { .. } | AcpError::Timeout { .. }) => {
                ErrorClass::Transient
            }
            Self::Agent(AcpError::Rpc { error, .. }) => retry::classify(&error.message),
            Self::Model { message, .. } => retry::classify(message),
            Self::Agent(_) => ErrorClass::Fatal,
        };
        // "Session not found" and the like are not missing files a task could skip.
        if class == ErrorClass::NotFound {
            ErrorClass::Fatal
        } else {
            class
        }
    }
}

/// The CLI's own error report when a turn's answer is one: a turn without tool calls whose
/// whole answer starts with `Error:` (as the CLI words a model failure it gave up on).
fn model_failure(outcome: &PromptOutcome) -> Option<String> {
    let text = outcome.text.trim();
    let ended_normally = outcome.stop_reason == StopReason::EndTurn && !outcome.timed_out;
    (ended_normally && outcome.tool_calls.is_empty() && text.starts_with("Error:"))
        .then(|| text.to_owned())
}

/// One task as the tools hand it over.
#[derive(Debug, Clone)]
pub struct TaskRequest {
    /// What Copilot should do.
    pub prompt: String,
    /// Where (relative to the workspace root, or absolute); `None` means the root, or the
    /// session's own directory when continuing one.
    pub working_dir: Option<String>,
    /// How long the turn may run before it is cancelled.
    pub timeout: Duration,
    /// A session to continue.
    pub session_id: Option<String>,
    /// A model to switch the session to.
    pub model: Option<String>,
    /// Whether the task takes its directory for itself, or runs beside others that a holder of
    /// [`Runner::hold_directory`] (an orchestration) has let in.
    pub access: DirAccess,
}

/// How a task shares its working directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DirAccess {
    /// One task at a time in the directory (the default for delegated tasks).
    #[default]
    Exclusive,
    /// The caller already holds the directory (see [`Runner::hold_directory`]) and runs its
    /// own tasks in it side by side.
    Held,
}

/// Where progress notifications go: the client's peer and the token it sent.
#[derive(Debug, Clone)]
pub struct ProgressSink {
    /// The client.
    pub peer: Peer<RoleServer>,
    /// Its progress token for this request.
    pub token: ProgressToken,
}

impl ProgressSink {
    /// The client of a tool call, when it sent a progress token.
    pub fn for_request(context: &rmcp::service::RequestContext<RoleServer>) -> Option<Self> {
        context.meta.get_progress_token().map(|token| Self {
            peer: context.peer.clone(),
            token,
        })
    }
}

/// One entry of the step-by-step log (`copilot_code_verbose`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Step {
    /// The agent started a tool call.
    #[serde(rename_all = "camelCase")]
    ToolStarted {
        /// The call's id.
        tool_call_id: String,
        /// What it does.
        title: String,
        /// Its kind (`edit`, `execute`, …).
        kind: String,
    },
    /// A tool call ended.
    #[serde(rename_all = "camelCase")]
    ToolFinished {
        /// The call's id.
        tool_call_id: String,
        /// What it did.
        title: String,
        /// `completed` or `failed`.
        status: String,
        /// A short quote of its output, if any.
        outcome: Option<String>,
    },
    /// The bridge answered a permission request.
    Permission {
        /// What was asked.
        title: String,
        /// Allowed or not.
        allowed: bool,
        /// Why.
        reason: String,
    },
    /// The agent's plan changed.
    Plan {
        /// The plan's steps with their status.
        entries: Vec<PlanEntry>,
    },
}

/// A finished turn plus what the bridge saw of it.
#[derive(Debug, Clone)]
pub struct TurnReport {
    /// What the turn produced.
    pub outcome: PromptOutcome,
    /// The model's failure, when the turn's answer is the CLI's error report.
    pub model_error: Option<String>,
    /// The working directory it ran in.
    pub working_dir: PathBuf,
    /// Every step, in order.
    pub steps: Vec<Step>,
    /// Wall time of the whole call (retries and waiting for the directory included).
    pub elapsed_ms: u64,
}

impl TurnReport {
    /// Token use, when reported.
    pub fn usage(&self) -> Option<&Usage> {
        self.outcome.usage.as_ref()
    }
}

/// The shared runner: one agent for every call, many sessions.
#[derive(Debug)]
pub struct Runner {
    config: Config,
    root: PathBuf,
    agent: OnceCell<Agent>,
    gate: PermissionGate,
    sessions: Mutex<HashMap<String, Session>>,
    dirs: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
    store: Arc<Mutex<Option<SessionStore>>>,
}

impl Runner {
    /// A runner for `config` whose working directories default to `root`; the agent answers
    /// permission requests through `gate`. Nothing starts until the first task.
    pub fn new(config: Config, root: PathBuf, gate: PermissionGate) -> Self {
        Self {
            config,
            root,
            agent: OnceCell::new(),
            gate,
            sessions: Mutex::new(HashMap::new()),
            dirs: Mutex::new(HashMap::new()),
            store: Arc::new(Mutex::new(None)),
        }
    }

    /// Stops the agent if it was started (cancels running turns, closes sessions).
    pub async fn shutdown(&self) {
        if let Some(agent) = self.agent.get() {
            let report = agent.shutdown().await;
            tracing::info!(?report, "Copilot CLI stopped");
        }
    }

    /// Cancels every turn running now (each still returns its partial result, with stop reason
    /// `cancelled`); returns how many there were. For a person at a terminal pressing Ctrl-C:
    /// MCP cancellation drops the answer, this keeps it.
    pub fn interrupt(&self) -> usize {
        let sessions = lock(&self.sessions);
        sessions.values().filter(|session| session.cancel()).count()
    }

    /// The agent, configured on first use (its process starts with the first session).
    async fn agent(&self) -> Result<&Agent, AcpError> {
        self.agent
            .get_or_try_init(|| async {
                let memory = MemoryLaunch::beside_current_exe()
                    .ok()
                    .filter(|m| m.program.is_file());
                let launch = CopilotLaunch::from_config(&self.config, self.root.clone(), memory);
                let state_dir = launch.state_dir.clone();
                let config = tokio::task::spawn_blocking(move || launch.build())
                    .await
                    .map_err(|e| AcpError::Io {
                        path: state_dir,
                        source: std::io::Error::other(e),
                    })??;
                Ok(Agent::new(config, self.gate.clone()))
            })
            .await
    }

    /// Runs one task to the end of its turn. `cancel` ends the turn early (the result is still
    /// returned, with stop reason `cancelled`).
    pub async fn run(
        &self,
        request: TaskRequest,
        progress: Option<ProgressSink>,
        cancel: CancellationToken,
    ) -> Result<TurnReport, RunError> {
        let started = Instant::now();
        let (record, working_dir) = self.target(&request).await?;

        // Same directory: one task at a time; other directories run in parallel.
        let _guard = match request.access {
            DirAccess::Exclusive => Some(self.hold_directory(&working_dir, &cancel).await?),
            DirAccess::Held => None,
        };

        let policy = RetryPolicy {
            max_retries: self.config.max_retries,
            ..RetryPolicy::default()
        };
        let session = retry::retry(&policy, &cancel, || {
            self.open_session(record.as_ref(), &working_dir, &request)
        })
        .await
        .map_err(|e| match e {
            RetryError::Cancelled { .. } => RunError::Cancelled,
            RetryError::Aborted {
                source: Attempt::Agent(err @ (AcpError::NotFound { .. } | AcpError::Spawn { .. })),
                ..
            } => RunError::Launch(err),
            other => RunError::Agent(other),
        })?;
        // The configured model is the session's model already.
        if let Some(model) = request
            .model
            .as_ref()
            .filter(|m| Some(*m) != self.config.model.as_ref())
        {
            session.set_model(model).await.map_err(|e| {
                RunError::Agent(RetryError::Aborted {
                    attempts: 1,
                    source: Attempt::Agent(e),
                })
            })?;
        }

        let (outcome, model_error, steps) = self
            .turn(&session, &request, progress, &cancel, &policy)
            .await?;
        self.remember(&session, &outcome, &working_dir, &request)
            .await;
        Ok(TurnReport {
            outcome,
            model_error,
            working_dir,
            steps,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// The session record to continue (if any) and the directory the task runs in.
    async fn target(
        &self,
        request: &TaskRequest,
    ) -> Result<(Option<SessionRecord>, PathBuf), RunError> {
        let requested_dir = request
            .working_dir
            .as_deref()
            .map(|dir| self.resolve_dir(dir))
            .transpose()?;
        let record = match &request.session_id {
            Some(id) => Some(self.known_session(id).await?),
            None => None,
        };
        let working_dir = match (&record, requested_dir) {
            (Some(record), Some(requested)) if record.working_dir != requested => {
                return Err(RunError::SessionDirMismatch {
                    session_id: record.session_id.clone(),
                    session_dir: record.working_dir.clone(),
                    requested,
                });
            }
            // A session recorded under another workspace root stays there.
            (Some(record), _) => self.resolve_dir(&record.working_dir.to_string_lossy())?,
            (None, Some(dir)) => dir,
            (None, None) => self.resolve_dir(".")?,
        };
        Ok((record, working_dir))
    }

    /// Prompts `session` until a turn ends (retrying agent and model failures as `policy`
    /// allows); returns the turn, the model failure retries did not cure, and the step log.
    async fn turn(
        &self,
        session: &Session,
        request: &TaskRequest,
        progress: Option<ProgressSink>,
        cancel: &CancellationToken,
        policy: &RetryPolicy,
    ) -> Result<(PromptOutcome, Option<String>, Vec<Step>), RunError> {
        let prompt = self.prompt_text(&request.prompt);
        let (tx, rx) = mpsc::unbounded_channel();
        let (messages, forwarder) = match progress {
            Some(sink) => {
                let (out, messages) = mpsc::unbounded_channel();
                (Some(out), Some(tokio::spawn(forward(messages, sink))))
            }
            None => (None, None),
        };
        let relay = tokio::spawn(relay(rx, messages));
        let deadline = Instant::now() + request.timeout;
        let outcome = retry::retry(policy, cancel, || {
            let options = PromptOptions {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                cancel: Some(cancel.child_token()),
                updates: Some(tx.clone()),
            };
            let session = session.clone();
            let blocks = vec![ContentBlock::text(prompt.clone())];
            async move {
                let outcome = session
                    .prompt(blocks, options)
                    .await
                    .map_err(Attempt::Agent)?;
                match model_failure(&outcome) {
                    Some(message) => Err(Attempt::Model {
                        message,
                        outcome: Box::new(outcome),
                    }),
                    None => Ok(outcome),
                }
            }
        })
        .await;
        drop(tx);
        let steps = relay.await.unwrap_or_default();
        // Every progress notification goes out before the result does.
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
        // A model failure that retrying did not cure is reported as the turn's result.
        let (outcome, model_error) = match outcome {
            Ok(outcome) => (outcome, None),
            Err(
                RetryError::Skipped {
                    source: Attempt::Model { message, outcome },
                    ..
                }
                | RetryError::Aborted {
                    source: Attempt::Model { message, outcome },
                    ..
                }
                | RetryError::Exhausted {
                    source: Attempt::Model { message, outcome },
                    ..
                }
                | RetryError::Cancelled {
                    last: Some(Attempt::Model { message, outcome }),
                    ..
                },
            ) => (*outcome, Some(message)),
            Err(RetryError::Cancelled { .. }) => return Err(RunError::Cancelled),
            Err(other) => return Err(RunError::Agent(other)),
        };
        Ok((outcome, model_error, steps))
    }

    /// The prompt as sent: secrets redacted, the project context first when configured.
    fn prompt_text(&self, prompt: &str) -> String {
        let redactor = Redactor::shared();
        let prompt = redactor.redact(prompt);
        match self.config.project_context.as_deref().map(str::trim) {
            Some(context) if !context.is_empty() => format!(
                "Project context:\n{}\n\nTask:\n{prompt}",
                redactor.redact(context)
            ),
            _ => prompt.into_owned(),
        }
    }

    /// An existing directory inside the workspace root, absolute and canonical (relative
    /// paths start at the root). The agent's permission requests are judged against this
    /// directory, so letting it escape the root would widen what the agent may edit.
    pub(crate) fn resolve_dir(&self, dir: &str) -> Result<PathBuf, RunError> {
        let path = self.root.join(dir);
        let problem = |problem| RunError::WorkingDir {
            path: path.clone(),
            root: self.root.clone(),
            problem,
        };
        let resolved = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                std::fs::canonicalize(&path).map_err(|_| problem("cannot be resolved"))?
            }
            Ok(_) => return Err(problem("is not a directory")),
            Err(_) => return Err(problem("does not exist")),
        };
        let root = std::fs::canonicalize(&self.root).map_err(|_| problem("has no usable root"))?;
        if resolved.starts_with(&root) {
            Ok(resolved)
        } else {
            Err(problem("is outside the workspace"))
        }
    }

    /// Waits until no other task works in `dir` and keeps others out until the guard drops.
    /// An orchestration holds its directory this way and runs its sub-tasks with
    /// [`DirAccess::Held`].
    pub async fn hold_directory(
        &self,
        dir: &Path,
        cancel: &CancellationToken,
    ) -> Result<tokio::sync::OwnedMutexGuard<()>, RunError> {
        let lock = self.dir_lock(dir);
        tokio::select! {
            guard = lock.lock_owned() => Ok(guard),
            () = cancel.cancelled() => Err(RunError::Cancelled),
        }
    }

    fn dir_lock(&self, dir: &Path) -> Arc<tokio::sync::Mutex<()>> {
        let mut dirs = lock(&self.dirs);
        // Forget locks nobody holds or waits for, so the map stays as small as the work.
        dirs.retain(|_, lock| Arc::strong_count(lock) > 1);
        Arc::clone(dirs.entry(dir.to_path_buf()).or_default())
    }

    /// The record of a session the caller wants to continue: open in this process, or in the
    /// session store from an earlier run.
    async fn known_session(&self, id: &str) -> Result<SessionRecord, RunError> {
        let open = lock(&self.sessions).get(id).map(|s| s.cwd().to_path_buf());
        let key = id.to_owned();
        let stored = self
            .with_store(false, move |store| store.get(&key).cloned())
            .await;
        match (stored, open) {
            (Some(record), _) => Ok(record),
            (None, Some(cwd)) => {
                let now = Utc::now();
                Ok(SessionRecord {
                    session_id: id.to_owned(),
                    working_dir: cwd,
                    task_summary: String::new(),
                    created: now,
                    last_activity: now,
                    model: None,
                })
            }
            (None, None) => Err(RunError::UnknownSession {
                session_id: id.to_owned(),
            }),
        }
    }

    /// The session to prompt: the open one, the recorded one reloaded (`session/load`), or a
    /// new one.
    async fn open_session(
        &self,
        record: Option<&SessionRecord>,
        working_dir: &Path,
        request: &TaskRequest,
    ) -> Result<Session, Attempt> {
        let agent = self.agent().await.map_err(Attempt::Agent)?;
        if let Some(record) = record {
            let open = lock(&self.sessions).get(&record.session_id).cloned();
            if let Some(session) = open {
                return Ok(session);
            }
            tracing::info!(session = %record.session_id, "reloading a recorded session");
            let session = agent
                .load_session(&record.session_id, record.working_dir.clone())
                .await
                .map_err(Attempt::Agent)?;
            lock(&self.sessions).insert(record.session_id.clone(), session.clone());
            return Ok(session);
        }
        let session = agent
            .new_session(working_dir.to_path_buf())
            .await
            .map_err(Attempt::Agent)?;
        let id = session.id();
        lock(&self.sessions).insert(id.clone(), session.clone());
        let now = Utc::now();
        let record = SessionRecord {
            session_id: id,
            working_dir: working_dir.to_path_buf(),
            task_summary: Redactor::shared().redact(&request.prompt).into_owned(),
            created: now,
            last_activity: now,
            model: request.model.clone().or_else(|| self.config.model.clone()),
        };
        self.with_store(true, move |store| store.insert(record))
            .await;
        Ok(session)
    }

    /// Touches the session's record after a turn; a replaced session is recorded anew.
    async fn remember(
        &self,
        session: &Session,
        outcome: &PromptOutcome,
        working_dir: &Path,
        request: &TaskRequest,
    ) {
        let id = outcome.session_id.clone();
        lock(&self.sessions).insert(id.clone(), session.clone());
        let now = Utc::now();
        let record = SessionRecord {
            session_id: id.clone(),
            working_dir: working_dir.to_path_buf(),
            task_summary: Redactor::shared().redact(&request.prompt).into_owned(),
            created: now,
            last_activity: now,
            model: request.model.clone().or_else(|| self.config.model.clone()),
        };
        self.with_store(true, move |store| {
            if !store.touch(&id, now) {
                store.insert(record);
            }
        })
        .await;
    }

    /// Runs `f` on the session store (loaded on first use), off the async threads, and saves
    /// the store when `save`. A store that cannot be saved is logged: the task itself still
    /// succeeded.
    async fn with_store<T: Send + Default + 'static>(
        &self,
        save: bool,
        f: impl FnOnce(&mut SessionStore) -> T + Send + 'static,
    ) -> T {
        let store = Arc::clone(&self.store);
        let state_dir = self.config.state_dir.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let mut slot = lock(&store);
            let store = slot.get_or_insert_with(|| SessionStore::load(&state_dir, Utc::now()));
            let value = f(store);
            if let Some(Err(err)) = save.then(|| store.save()) {
                tracing::warn!(%err, "session store not saved");
            }
            value
        })
        .await;
        joined.unwrap_or_default()
    }
}

/// Turns updates into short progress messages on `messages` (when the client asked for
/// progress), with a heartbeat whenever nothing was said for [`HEARTBEAT`], and collects the
/// step log. Ends when every update sender is gone.
async fn relay(
    mut rx: mpsc::UnboundedReceiver<Update>,
    messages: Option<mpsc::UnboundedSender<String>>,
) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut titles: HashMap<String, String> = HashMap::new();
    let started = tokio::time::Instant::now();
    let mut last_said = started;
    let mut text = String::new();
    let mut last_text: Option<tokio::time::Instant> = None;
    loop {
        let update = match tokio::time::timeout_at(last_said + HEARTBEAT, rx.recv()).await {
            Ok(Some(update)) => update,
            Ok(None) => break,
            Err(_) => {
                if let Some(out) = &messages {
                    let _ = out.send(format!("still working ({}s)", started.elapsed().as_secs()));
                }
                last_said = tokio::time::Instant::now();
                continue;
            }
        };
        let message = match &update {
            Update::AgentMessage(block) => {
                if let Some(chunk) = block.as_text() {
                    text.push_str(chunk);
                }
                if last_text.is_some_and(|t| t.elapsed() < TEXT_PROGRESS_GAP) {
                    None
                } else {
                    last_text = Some(tokio::time::Instant::now());
                    Some(format!("text so far: {}", tail(&text, PROGRESS_TEXT_CHARS)))
                }
            }
            _ => step_of(&update, &mut titles).map(|step| {
                let message = progress_message(&step);
                steps.push(step);
                message
            }),
        };
        if let (Some(out), Some(message)) = (&messages, message) {
            let _ = out.send(message);
            last_said = tokio::time::Instant::now();
        }
    }
    steps
}

/// Sends progress messages as numbered `notifications/progress`, redacted, until the relay
/// ends; the first failure stops it (the client is gone).
pub(crate) async fn forward(mut messages: mpsc::UnboundedReceiver<String>, sink: ProgressSink) {
    let mut count = 0_u32;
    while let Some(message) = messages.recv().await {
        count += 1;
        let message = Redactor::shared().redact(&message).into_owned();
        let param = ProgressNotificationParam::new(sink.token.clone(), f64::from(count))
            .with_message(message);
        if let Err(err) = sink.peer.notify_progress(param).await {
            tracing::debug!(%err, "progress notification failed; not sending more");
            return;
        }
    }
}

/// The log entry for an update, if it is one worth logging.
fn step_of(update: &Update, titles: &mut HashMap<String, String>) -> Option<Step> {
    match update {
        Update::ToolCall(call) => {
            let title = call
                .title
                .clone()
                .unwrap_or_else(|| call.tool_call_id.clone());
            titles.insert(call.tool_call_id.clone(), title.clone());
            match finished(call) {
                Some(step) => Some(step_with_title(step, title)),
                None => Some(Step::ToolStarted {
                    tool_call_id: call.tool_call_id.clone(),
                    title,
                    kind: call
                        .kind
                        .as_ref()
                        .map_or("other", |k| k.as_str())
                        .to_owned(),
                }),
            }
        }
        Update::ToolCallUpdate(call) => {
            if let Some(title) = &call.title {
                titles.insert(call.tool_call_id.clone(), title.clone());
            }
            let title = titles
                .get(&call.tool_call_id)
                .cloned()
                .unwrap_or_else(|| call.tool_call_id.clone());
            finished(call).map(|step| step_with_title(step, title))
        }
        Update::Permission(record) => Some(Step::Permission {
            title: record.title.clone(),
            allowed: record.allowed,
            reason: record.reason.clone(),
        }),
        Update::Plan(entries) => Some(Step::Plan {
            entries: entries.clone(),
        }),
        _ => None,
    }
}

fn step_with_title(step: Step, new_title: String) -> Step {
    match step {
        Step::ToolFinished {
            tool_call_id,
            status,
            outcome,
            ..
        } => Step::ToolFinished {
            tool_call_id,
            title: new_title,
            status,
            outcome,
        },
        other => other,
    }
}

/// A finished-call step when `call` reports a final status.
fn finished(call: &ToolCall) -> Option<Step> {
    let status = match call.status.as_ref()? {
        ToolCallStatus::Completed => "completed",
        ToolCallStatus::Failed => "failed",
        _ => return None,
    };
    Some(Step::ToolFinished {
        tool_call_id: call.tool_call_id.clone(),
        title: String::new(),
        status: status.to_owned(),
        outcome: tool_outcome(call),
    })
}

/// A short quote of what a tool call returned.
fn tool_outcome(call: &ToolCall) -> Option<String> {
    let from_output = call.raw_output.as_ref().map(|output| match output {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(map) => map
            .get("content")
            .or_else(|| map.get("message"))
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| output.to_string(), str::to_owned),
        other => other.to_string(),
    });
    let from_content = || {
        call.content.iter().find_map(|c| {
            c.pointer("/content/text")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        })
    };
    from_output
        .or_else(from_content)
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .map(|s| head(&s, OUTCOME_CHARS))
}

/// The short progress message for a step.
pub fn progress_message(step: &Step) -> String {
    match step {
        Step::ToolStarted { title, kind, .. } => format!("tool started: {title} ({kind})"),
        Step::ToolFinished { title, status, .. } => format!("tool {status}: {title}"),
        Step::Permission { title, allowed, .. } => format!(
            "permission {}: {title}",
            if *allowed { "allowed" } else { "denied" }
        ),
        Step::Plan { entries } => {
            let current = entries
                .iter()
                .find(|e| e.status == "in_progress")
                .or_else(|| entries.iter().find(|e| e.status != "completed"));
            match current {
                Some(entry) => format!("plan step: {}", entry.content),
                None => format!("plan: {} steps done", entries.len()),
            }
        }
    }
}

/// The first `chars` characters, with an ellipsis when cut.
pub(crate) fn head(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The last `chars` characters on one line, with an ellipsis when cut.
fn tail(text: &str, chars: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = one_line.chars().count();
    if count <= chars {
        return one_line;
    }
    let cut: String = one_line.chars().skip(count - chars).collect();
    format!("…{cut}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acp::{PermissionRecord, RpcError, ToolKind};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn call(id: &str, title: Option<&str>, status: Option<ToolCallStatus>) -> ToolCall {
        ToolCall {
            tool_call_id: id.into(),
            title: title.map(str::to_owned),
            kind: Some(ToolKind::Edit),
            status,
            ..ToolCall::default()
        }
    }

    #[tokio::test]
    async fn the_step_log_follows_tool_calls_permissions_and_plans_in_order() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut done = call("c1", None, Some(ToolCallStatus::Completed));
        done.raw_output = Some(json!({"content": "Created file /w/a.txt"}));
        for update in [
            Update::Plan(vec![PlanEntry {
                content: "write a.txt".into(),
                priority: "high".into(),
                status: "in_progress".into(),
            }]),
            Update::ToolCall(call(
                "c1",
                Some("Create a.txt"),
                Some(ToolCallStatus::Pending),
            )),
            Update::Permission(PermissionRecord {
                tool_call_id: "c1".into(),
                title: "Create a.txt".into(),
                kind: ToolKind::Edit,
                command: None,
                paths: vec![],
                allowed: true,
                reason: "inside the workspace".into(),
            }),
            Update::ToolCallUpdate(done),
        ] {
            tx.send(update).ok();
        }
        drop(tx);
        let steps = relay(rx, None).await;
        let messages: Vec<String> = steps.iter().map(progress_message).collect();
        assert_eq!(
            messages,
            vec![
                "plan step: write a.txt",
                "tool started: Create a.txt (edit)",
                "permission allowed: Create a.txt",
                "tool completed: Create a.txt",
            ]
        );
        assert!(matches!(
            &steps[3],
            Step::ToolFinished { outcome: Some(o), .. } if o == "Created file /w/a.txt"
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn heartbeats_fill_every_silence_and_other_progress_resets_them() {
        let (tx, rx) = mpsc::unbounded_channel();
        let (out, mut messages) = mpsc::unbounded_channel();
        let relay = tokio::spawn(relay(rx, Some(out)));
        tokio::time::sleep(HEARTBEAT * 2 + Duration::from_secs(1)).await;
        tx.send(Update::ToolCall(call("c1", Some("Run tests"), None)))
            .ok();
        // Updates that say nothing (usage) must not hold the heartbeat back.
        for _ in 0..12 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            tx.send(Update::Usage { used: 1, size: 2 }).ok();
        }
        drop(tx);
        relay.await.ok();
        let mut said = Vec::new();
        while let Ok(message) = messages.try_recv() {
            said.push(message);
        }
        assert_eq!(
            said,
            vec![
                "still working (10s)",
                "still working (20s)",
                "tool started: Run tests (edit)",
                "still working (31s)",
            ]
        );
    }

    #[test]
    fn agent_exits_and_rate_limits_are_retried_but_unknown_sessions_are_not() {
        let exited = Attempt::Agent(AcpError::AgentExited {
            method: "session/prompt".into(),
            detail: "signal 9".into(),
        });
        assert_eq!(exited.classify(), ErrorClass::Transient);
        let limited = Attempt::Agent(AcpError::Rpc {
            method: "session/prompt".into(),
            error: RpcError::new(-32603, "429 Too Many Requests"),
        });
        assert!(matches!(limited.classify(), ErrorClass::RateLimited { .. }));
        let unknown = Attempt::Agent(AcpError::Rpc {
            method: "session/prompt".into(),
            error: RpcError::new(-32602, "Session abc not found"),
        });
        assert_eq!(unknown.classify(), ErrorClass::Fatal);
        let auth = Attempt::Agent(AcpError::AuthRequired {
            message: "Authentication required".into(),
        });
        assert_eq!(auth.classify(), ErrorClass::Fatal);
    }

    fn outcome(text: &str, tool_calls: Vec<ToolCall>) -> PromptOutcome {
        PromptOutcome {
            session_id: "s".into(),
            stop_reason: StopReason::EndTurn,
            timed_out: false,
            text: text.into(),
            tool_calls,
            permissions: vec![],
            usage: None,
            unknown_updates: 0,
            elapsed_ms: 0,
            notice: None,
        }
    }

    #[test]
    fn only_a_bare_error_answer_counts_as_a_model_failure() {
        let failed = "Error: Failed to get response from the AI model; retried 5 times \
                      Last error: 429 rate limit exceeded";
        assert_eq!(
            model_failure(&outcome(failed, vec![])).as_deref(),
            Some(failed)
        );
        let attempt = Attempt::Model {
            message: failed.into(),
            outcome: Box::new(outcome(failed, vec![])),
        };
        assert!(matches!(attempt.classify(), ErrorClass::RateLimited { .. }));
        assert_eq!(
            model_failure(&outcome("Fixed the Error: type.", vec![])),
            None
        );
        let worked = outcome(failed, vec![call("c1", None, None)]);
        assert_eq!(model_failure(&worked), None);
    }

    fn runner(root: &Path, context: Option<&str>) -> anyhow::Result<Runner> {
        let mut vars = vec![("HOME".to_owned(), root.display().to_string())];
        if let Some(context) = context {
            vars.push(("COPILOT_PROJECT_CONTEXT".to_owned(), context.to_owned()));
        }
        let config = Config::resolve(
            bridge_core::config::Overrides::default(),
            bridge_core::config::EnvLayer::from_maps(vars, []),
        )?;
        Ok(Runner::new(
            config,
            root.to_path_buf(),
            PermissionGate::default(),
        ))
    }

    #[test]
    fn working_dirs_must_be_existing_directories_inside_the_workspace() -> anyhow::Result<()> {
        let dir = tempfile::TempDir::new()?;
        std::fs::create_dir(dir.path().join("sub"))?;
        std::fs::write(dir.path().join("file.txt"), "x")?;
        let runner = runner(dir.path(), None)?;
        assert_eq!(
            runner.resolve_dir("sub")?,
            std::fs::canonicalize(dir.path().join("sub"))?
        );
        let missing = runner.resolve_dir("nope").map(drop);
        assert!(
            matches!(&missing, Err(e) if e.to_string().contains("does not exist")),
            "{missing:?}"
        );
        let file = runner.resolve_dir("file.txt").map(drop);
        assert!(
            matches!(&file, Err(e) if e.to_string().contains("is not a directory")),
            "{file:?}"
        );
        let outside = tempfile::TempDir::new()?;
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link-out"))?;
        for escape in [
            outside.path().display().to_string(),
            "..".to_owned(),
            "link-out".to_owned(),
        ] {
            let refused = runner.resolve_dir(&escape).map(drop);
            assert!(
                matches!(&refused, Err(e) if e.to_string().contains("outside the workspace")),
                "{escape}: {refused:?}"
            );
        }
        Ok(())
    }

    #[test]
    fn prompts_are_redacted_and_get_the_project_context() -> anyhow::Result<()> {
        let dir = tempfile::TempDir::new()?;
        let runner = runner(dir.path(), Some("A Rust workspace."))?;
        let key = "Zx8vQ2mN7pL4kR9t";
        let text = runner.prompt_text(&format!("set api_key={key} to fix the build"));
        assert!(!text.contains(key), "{text}");
        assert!(
            text.starts_with("Project context:\nA Rust workspace."),
            "{text}"
        );
        assert!(text.contains("to fix the build"), "{text}");
        Ok(())
    }

    #[tokio::test]
    async fn unknown_session_ids_are_refused_clearly() -> anyhow::Result<()> {
        let dir = tempfile::TempDir::new()?;
        let runner = runner(dir.path(), None)?;
        let err = runner.known_session("no-such-session").await.map(drop);
        assert!(
            matches!(&err, Err(RunError::UnknownSession { .. })),
            "{err:?}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn one_directory_is_serialized_and_others_are_not() -> anyhow::Result<()> {
        let dir = tempfile::TempDir::new()?;
        let runner = runner(dir.path(), None)?;
        let a = runner.dir_lock(Path::new("/a"));
        let held = a.lock().await;
        assert!(runner.dir_lock(Path::new("/a")).try_lock().is_err());
        assert!(runner.dir_lock(Path::new("/b")).try_lock().is_ok());
        drop(held);
        assert!(runner.dir_lock(Path::new("/a")).try_lock().is_ok());
        Ok(())
    }

    #[test]
    fn long_text_is_quoted_by_its_tail() {
        assert_eq!(tail("a  b\nc", 10), "a b c");
        assert_eq!(tail("abcdef", 3), "…def");
        assert_eq!(head("abcdef", 3), "abc…");
    }
}
