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
use bridge_core::retry::{self, RetryError, RetryPolicy};
use bridge_core::sync::lock;
use chrono::Utc;
use tokio::sync::{OnceCell, mpsc};
use tokio_util::sync::CancellationToken;

use crate::acp::{
    AcpError, Agent, ContentBlock, CopilotLaunch, MemoryLaunch, PermissionGate, PromptOptions,
    PromptOutcome, Session, Update, Usage,
};
use crate::approval::{Approvals, ClientAsker};
use crate::session_store::{SessionRecord, SessionStore};

/// Why a task failed, and how a failed attempt is judged.
mod error;
/// Progress messages, heartbeats and the step log of a running turn.
mod progress;

use self::error::model_failure;
pub use self::error::{Attempt, RunError};
pub(crate) use self::progress::forward;
use self::progress::relay;
pub use self::progress::{HEARTBEAT, ProgressSink, Step, progress_message};

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
    /// Receives every update of the turn as it arrives, in order (the long-lived session
    /// tools turn them into events).
    pub updates: Option<mpsc::UnboundedSender<Update>>,
    /// The MCP client to ask when the policy wants a person to confirm a step of the turn.
    pub asker: Option<ClientAsker>,
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
    /// Something the caller should know although the turn ran (the memory server is missing).
    pub warning: Option<String>,
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
    /// The memory server every session gets, looked up once; the error when it is missing.
    memory: std::sync::OnceLock<Result<MemoryLaunch, String>>,
    /// Where the gate's questions go: told which client waits on which session's turn.
    approvals: Option<Arc<Approvals>>,
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
            memory: std::sync::OnceLock::new(),
            approvals: None,
        }
    }

    /// Tells `approvals` (the gate's ask hook) which client waits on each turn.
    #[must_use]
    pub(crate) fn with_approvals(mut self, approvals: Arc<Approvals>) -> Self {
        self.approvals = Some(approvals);
        self
    }

    /// The memory server sessions get, or why there is none (said once in the log, at the
    /// first session, and in every result).
    fn memory(&self) -> Result<&MemoryLaunch, &str> {
        self.memory
            .get_or_init(|| {
                MemoryLaunch::locate(&self.config.env).map_err(|err| {
                    tracing::warn!("Copilot sessions run without OpenClaw's memory: {err}");
                    format!("Copilot ran without OpenClaw's memory: {err}")
                })
            })
            .as_ref()
            .map_err(String::as_str)
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
                let memory = self.memory().ok().cloned();
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

        let policy = self.retry_policy();
        let session = self
            .ready_session(record.as_ref(), &working_dir, &request, &cancel)
            .await?;

        // While the turn runs, the policy's questions go to the client that made the call.
        let _attending = match (&self.approvals, request.asker.clone()) {
            (Some(approvals), Some(asker)) => Some(approvals.attend(session.id(), asker)),
            _ => None,
        };
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
            warning: self.memory().err().map(str::to_owned),
        })
    }

    /// Opens a new session in `working_dir` (inside the workspace), switched to `model` when
    /// given, and records it in the session store; returns its id and its directory, resolved.
    /// The agent starts here if no task started it yet.
    pub async fn open(
        &self,
        working_dir: &Path,
        model: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<(String, PathBuf), RunError> {
        let working_dir = self.resolve_dir(&working_dir.to_string_lossy())?;
        let request = TaskRequest {
            prompt: "(long-lived session)".to_owned(),
            working_dir: None,
            timeout: Duration::from_millis(self.config.timeout_ms),
            session_id: None,
            model,
            access: DirAccess::Exclusive,
            updates: None,
            asker: None,
        };
        let session = self
            .ready_session(None, &working_dir, &request, cancel)
            .await?;
        Ok((session.id(), working_dir))
    }

    fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.config.max_retries,
            ..RetryPolicy::default()
        }
    }

    /// The session a task runs in (see [`Runner::open_session`]), opened with retries and
    /// switched to the request's model when it is not the configured one.
    async fn ready_session(
        &self,
        record: Option<&SessionRecord>,
        working_dir: &Path,
        request: &TaskRequest,
        cancel: &CancellationToken,
    ) -> Result<Session, RunError> {
        let policy = self.retry_policy();
        let session = retry::retry(&policy, cancel, || {
            self.open_session(record, working_dir, request)
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
        Ok(session)
    }

    /// Closes the open session `id` on the agent's side (cancelling its running turn) and
    /// forgets it in this process; its record stays in the store, so a later task can still
    /// reload it. Returns whether it was open here.
    pub async fn close(&self, id: &str) -> bool {
        let Some(session) = lock(&self.sessions).remove(id) else {
            return false;
        };
        let timeout = Duration::from_secs(10);
        match tokio::time::timeout(timeout, session.close()).await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => tracing::debug!(session = id, %err, "closing the session failed"),
            Err(_) => tracing::warn!(session = id, "closing the session timed out"),
        }
        true
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
        let relay = tokio::spawn(relay(rx, messages, request.updates.clone()));
        let deadline = Instant::now() + request.timeout;
        let outcome = retry::retry(policy, cancel, || {
            let options = PromptOptions {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                cancel: Some(cancel.child_token()),
                updates: Some(tx.clone()),
            };
            let session = session.clone();
            let blocks = vec![ContentBlock::text(prompt.clone())];
            let updates = tx.clone();
            async move {
                let outcome = match session.prompt(blocks, options).await {
                    Ok(outcome) => outcome,
                    Err(err) => {
                        let _ = updates.send(Update::Interrupted(err.to_string()));
                        return Err(Attempt::Agent(err));
                    }
                };
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
