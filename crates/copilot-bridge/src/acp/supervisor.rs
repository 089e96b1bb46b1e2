//! The agent as a long-lived service: one process serves every session; it starts on first
//! use, is restarted after a crash (within a budget), and sessions are brought back after a
//! restart with `session/list` + `session/load`, or replaced by a new session seeded with a
//! summary when that fails. Shutdown cancels running turns, closes sessions, closes the
//! agent's input, then escalates SIGTERM → SIGKILL on its process group.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use bridge_core::sync::lock;

use serde_json::{Value, json};

use crate::acp::config::AgentConfig;
use crate::acp::connection::{Connection, Inbound};
use crate::acp::dispatch::{Dispatcher, SessionSink};
use crate::acp::error::AcpError;
use crate::acp::permission::PermissionGate;
use crate::acp::process::{AgentProcess, Launch};
use crate::acp::session::{HostFuture, Session, SessionHost, SessionInner, SessionNotice};
use crate::acp::wire::{
    AgentCapabilities, AuthenticateParams, ClientCapabilities, EnvVariable, Implementation,
    InitializeParams, InitializeResponse, ListSessionsParams, ListSessionsResponse,
    LoadSessionParams, NewSessionParams, PROTOCOL_VERSION, SessionIdParams, SessionInfo,
    SessionSetup, StdioMcpServer,
};

/// Pages of `session/list` followed at most: a bound on a misbehaving cursor.
const MAX_LIST_PAGES: usize = 50;

/// The agent's identity and capabilities, from `initialize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    /// Name and version the agent reported.
    pub implementation: Option<Implementation>,
    /// What it can do.
    pub capabilities: AgentCapabilities,
    /// Its process id (also its process group id).
    pub pid: Option<i32>,
}

/// What shutdown did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShutdownReport {
    /// Turns that were running and got cancelled.
    pub cancelled_turns: usize,
    /// Sessions closed on the agent's side.
    pub closed_sessions: usize,
    /// How the process ended, if one was running.
    pub exit: Option<String>,
}

/// One running agent process and its connection.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) generation: u64,
    pub(crate) connection: Connection,
    pub(crate) process: AgentProcess,
    pub(crate) dispatcher: Arc<Dispatcher>,
    pub(crate) capabilities: AgentCapabilities,
    pub(crate) implementation: Option<Implementation>,
    auth_methods: Vec<String>,
}

impl Live {
    fn is_alive(&self) -> bool {
        self.connection.closed_reason().is_none() && self.process.exit_description().is_none()
    }
}

/// State shared by the [`Agent`] handles and their sessions.
#[derive(Debug)]
pub(crate) struct AgentShared {
    pub(crate) config: AgentConfig,
    gate: PermissionGate,
    live: tokio::sync::Mutex<Option<Arc<Live>>>,
    generation: AtomicU64,
    spawns: Mutex<VecDeque<Instant>>,
    sessions: Mutex<Vec<Weak<SessionInner>>>,
    shut_down: AtomicBool,
}

/// The ACP agent (normally the Copilot CLI): starts lazily, serves many sessions, survives
/// crashes. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Agent {
    shared: Arc<AgentShared>,
}

impl Agent {
    /// An agent that starts `config`'s program on first use and answers its permission
    /// requests through `gate`.
    pub fn new(config: AgentConfig, gate: PermissionGate) -> Self {
        Self {
            shared: Arc::new(AgentShared {
                config,
                gate,
                live: tokio::sync::Mutex::new(None),
                generation: AtomicU64::new(0),
                spawns: Mutex::new(VecDeque::new()),
                sessions: Mutex::new(Vec::new()),
                shut_down: AtomicBool::new(false),
            }),
        }
    }

    /// Starts the agent now (it otherwise starts on first use) and reports what it is.
    pub async fn start(&self) -> Result<AgentInfo, AcpError> {
        let live = self.shared.live().await?;
        Ok(AgentInfo {
            implementation: live.implementation.clone(),
            capabilities: live.capabilities.clone(),
            pid: live.process.pid(),
        })
    }

    /// The running agent's process id (also its process group id), if it is running.
    pub async fn pid(&self) -> Option<i32> {
        let live = self.shared.live.lock().await;
        live.as_ref()
            .filter(|l| l.is_alive())
            .and_then(|l| l.process.pid())
    }

    /// Starts a new session in `cwd` (an absolute directory).
    pub async fn new_session(&self, cwd: impl Into<PathBuf>) -> Result<Session, AcpError> {
        let cwd = cwd.into();
        let live = self.shared.live().await?;
        let (id, sink, setup) = self.shared.open_new(&live, &cwd).await?;
        let modes = setup.modes.map(|m| m.available_modes).unwrap_or_default();
        Ok(self.track(SessionInner::new(
            Arc::clone(&self.shared) as Arc<dyn SessionHost>,
            cwd,
            id,
            live.generation,
            sink,
            modes,
        )))
    }

    /// Opens a session the agent saved earlier (from [`Agent::list_sessions`]).
    pub async fn load_session(
        &self,
        session_id: &str,
        cwd: impl Into<PathBuf>,
    ) -> Result<Session, AcpError> {
        let cwd = cwd.into();
        let live = self.shared.live().await?;
        let (sink, setup) = self.shared.load(&live, session_id, &cwd).await?;
        let modes = setup.modes.map(|m| m.available_modes).unwrap_or_default();
        Ok(self.track(SessionInner::new(
            Arc::clone(&self.shared) as Arc<dyn SessionHost>,
            cwd,
            session_id.to_owned(),
            live.generation,
            sink,
            modes,
        )))
    }

    /// The sessions the agent has saved, optionally only those for `cwd`.
    pub async fn list_sessions(&self, cwd: Option<&Path>) -> Result<Vec<SessionInfo>, AcpError> {
        let live = self.shared.live().await?;
        self.shared.list(&live, cwd).await
    }

    /// Stops the agent: cancels running turns, closes open sessions, closes the agent's input
    /// and waits for it to exit, then SIGTERMs and finally SIGKILLs its process group. Later
    /// calls fail with [`AcpError::ShutDown`]. Bounded: the turns get one `cancel_grace`, the
    /// closes one `shutdown_grace`, the process at most three more and the connection's tasks
    /// one (about 15 s with the default timeouts, 2 s when nothing hangs).
    pub async fn shutdown(&self) -> ShutdownReport {
        self.shared.shut_down.store(true, Ordering::SeqCst);
        let mut report = ShutdownReport::default();
        let live = self.shared.live.lock().await.take();
        let sessions: Vec<Arc<SessionInner>> = lock(&self.shared.sessions)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        let timeouts = self.shared.config.timeouts;
        for session in &sessions {
            if session.cancel_running() {
                report.cancelled_turns += 1;
            }
        }
        let Some(live) = live else {
            return report;
        };
        // Let the cancelled turns finish (each holds its session's turn lock until it does),
        // all within one grace period, however many sessions there are.
        let turns_deadline = tokio::time::Instant::now() + timeouts.cancel_grace;
        for session in &sessions {
            let turn = tokio::time::timeout_at(turns_deadline, session.turn.lock()).await;
            if turn.is_err() {
                tracing::warn!("a cancelled turn did not finish in time; shutting down anyway");
                break;
            }
        }
        if live.is_alive() && live.capabilities.session_capabilities.close.is_some() {
            // Closing is a courtesy (the agent saves the session either way): one grace period
            // for all of them.
            let close_deadline = tokio::time::Instant::now() + timeouts.shutdown_grace;
            for session in &sessions {
                let (id, generation, closed) =
                    session.with_state(|s| (s.id.clone(), s.generation, s.closed));
                if closed || generation != live.generation {
                    continue;
                }
                let params = serde_json::to_value(SessionIdParams { session_id: &id })
                    .unwrap_or(Value::Null);
                let close = live
                    .connection
                    .request("session/close", params, timeouts.request);
                match tokio::time::timeout_at(close_deadline, close).await {
                    Ok(Ok(_)) => report.closed_sessions += 1,
                    Ok(Err(err)) => {
                        tracing::debug!(session = %id, %err, "session/close failed at shutdown");
                    }
                    Err(_) => {
                        tracing::debug!("no time left to close sessions at shutdown");
                        break;
                    }
                }
            }
        }
        live.connection.close_input().await;
        report.exit = Some(live.process.stop(timeouts.shutdown_grace).await);
        // The process is gone, so its output has ended: the connection's tasks end with it.
        if !live.connection.finished(timeouts.shutdown_grace).await {
            tracing::warn!("the agent connection's tasks did not end in time");
        }
        report
    }

    fn track(&self, inner: SessionInner) -> Session {
        let inner = Arc::new(inner);
        {
            let mut sessions = lock(&self.shared.sessions);
            sessions.retain(|s| s.strong_count() > 0);
            sessions.push(Arc::downgrade(&inner));
        }
        Session { inner }
    }
}

impl AgentShared {
    /// The running agent, started (or restarted) when needed.
    pub(crate) async fn live(&self) -> Result<Arc<Live>, AcpError> {
        if self.shut_down.load(Ordering::SeqCst) {
            return Err(AcpError::ShutDown);
        }
        let mut slot = self.live.lock().await;
        if let Some(live) = slot.as_ref() {
            if live.is_alive() {
                return Ok(Arc::clone(live));
            }
            let reason = live
                .process
                .exit_description()
                .or_else(|| live.connection.closed_reason())
                .unwrap_or_default();
            tracing::warn!(agent = %self.config.name, %reason, "the agent is gone; starting a new one");
        }
        slot.take();
        self.count_spawn()?;
        let live = Arc::new(self.start_live().await?);
        *slot = Some(Arc::clone(&live));
        Ok(live)
    }

    /// Counts a start against the restart budget (the first start plus `max_restarts`).
    fn count_spawn(&self) -> Result<(), AcpError> {
        let budget = self.config.restart;
        let mut spawns = lock(&self.spawns);
        let now = Instant::now();
        while spawns
            .front()
            .is_some_and(|t| now.duration_since(*t) > budget.window)
        {
            spawns.pop_front();
        }
        if spawns.len() > budget.max_restarts {
            return Err(AcpError::RestartLimit {
                restarts: spawns.len(),
                window: budget.window,
            });
        }
        spawns.push_back(now);
        Ok(())
    }

    async fn start_live(&self) -> Result<Live, AcpError> {
        let config = &self.config;
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let launch = Launch {
            program: config.program.clone(),
            args: config.args.clone(),
            env: config.env.clone(),
            cwd: config.cwd.clone(),
        };
        let (process, stdin, stdout) = AgentProcess::spawn(&launch, &config.name)?;
        let dispatcher = Arc::new(Dispatcher::new(self.gate.clone()));
        let connection = Connection::start(
            stdout,
            stdin,
            Arc::clone(&dispatcher) as Arc<dyn Inbound>,
            Some(process.exit_watch()),
            dispatcher.answer_timeout(),
        );
        let params = InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_capabilities: ClientCapabilities::default(),
            client_info: Implementation {
                name: env!("CARGO_PKG_NAME").to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                title: Some("Copilot Bridge".to_owned()),
            },
        };
        let started = Instant::now();
        let response = connection
            .request(
                "initialize",
                serde_json::to_value(params).unwrap_or(Value::Null),
                config.timeouts.initialize,
            )
            .await;
        let response = match response {
            Ok(response) => response,
            Err(err) => {
                // Dropping `process` kills its group; say why we gave up first.
                tracing::warn!(agent = %config.name, %err, "initialize failed; stopping the agent");
                process.kill();
                return Err(err);
            }
        };
        let init: InitializeResponse =
            serde_json::from_value(response).map_err(|err| AcpError::BadResponse {
                method: "initialize".to_owned(),
                detail: err.to_string(),
            })?;
        if init.protocol_version != json!(PROTOCOL_VERSION) {
            process.kill();
            return Err(AcpError::ProtocolVersion {
                version: init.protocol_version,
            });
        }
        tracing::info!(
            agent = %config.name, generation,
            version = init.agent_info.as_ref().map(|i| i.version.as_str()),
            elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "agent initialized"
        );
        Ok(Live {
            generation,
            connection,
            process,
            dispatcher,
            capabilities: init.agent_capabilities,
            implementation: init.agent_info,
            auth_methods: init.auth_methods.into_iter().map(|m| m.id).collect(),
        })
    }

    fn mcp_servers(&self) -> Vec<StdioMcpServer> {
        self.config
            .session_mcp_servers
            .iter()
            .map(|s| StdioMcpServer {
                name: s.name.clone(),
                command: s.command.clone(),
                args: s.args.clone(),
                env: s
                    .env
                    .iter()
                    .map(|(name, value)| EnvVariable {
                        name: name.clone(),
                        value: value.clone(),
                    })
                    .collect(),
            })
            .collect()
    }

    /// `session/new`, with one `authenticate` and retry when the agent asks for it.
    pub(crate) async fn open_new(
        &self,
        live: &Live,
        cwd: &Path,
    ) -> Result<(String, Arc<SessionSink>, SessionSetup), AcpError> {
        let servers = self.mcp_servers();
        let params = serde_json::to_value(NewSessionParams {
            cwd,
            mcp_servers: &servers,
        })
        .unwrap_or(Value::Null);
        let timeout = self.config.timeouts.request;
        let mut result = live
            .connection
            .request("session/new", params.clone(), timeout)
            .await;
        if let (Err(AcpError::AuthRequired { .. }), Some(method)) =
            (&result, live.auth_methods.first())
        {
            let auth = serde_json::to_value(AuthenticateParams {
                method_id: method.clone(),
            })
            .unwrap_or(Value::Null);
            match live.connection.request("authenticate", auth, timeout).await {
                Ok(_) => {
                    result = live
                        .connection
                        .request("session/new", params, timeout)
                        .await;
                }
                Err(err) => tracing::debug!(%err, "authenticate did not help"),
            }
        }
        let setup: SessionSetup =
            serde_json::from_value(result?).map_err(|err| AcpError::BadResponse {
                method: "session/new".to_owned(),
                detail: err.to_string(),
            })?;
        let Some(id) = setup.session_id.clone().filter(|id| !id.is_empty()) else {
            return Err(AcpError::BadResponse {
                method: "session/new".to_owned(),
                detail: "no sessionId in the answer".to_owned(),
            });
        };
        let sink = Arc::new(SessionSink::new(cwd.to_path_buf()));
        live.dispatcher.register(&id, Arc::clone(&sink));
        tracing::info!(session = %id, cwd = %cwd.display(), "session started");
        Ok((id, sink, setup))
    }

    /// `session/load`; the sink is registered first so the replay is routed.
    async fn load(
        &self,
        live: &Live,
        session_id: &str,
        cwd: &Path,
    ) -> Result<(Arc<SessionSink>, SessionSetup), AcpError> {
        if !live.capabilities.load_session {
            return Err(AcpError::Unsupported {
                what: "loading saved sessions (session/load)",
            });
        }
        let sink = Arc::new(SessionSink::new(cwd.to_path_buf()));
        live.dispatcher.register(session_id, Arc::clone(&sink));
        let servers = self.mcp_servers();
        let params = serde_json::to_value(LoadSessionParams {
            session_id,
            cwd,
            mcp_servers: &servers,
        })
        .unwrap_or(Value::Null);
        match live
            .connection
            .request("session/load", params, self.config.timeouts.request)
            .await
        {
            Ok(value) => Ok((sink, serde_json::from_value(value).unwrap_or_default())),
            // The CLI refuses a second load of a session it already holds: that is success.
            Err(AcpError::Rpc { error, .. })
                if error
                    .message
                    .to_ascii_lowercase()
                    .contains("already loaded") =>
            {
                Ok((sink, SessionSetup::default()))
            }
            Err(err) => {
                live.dispatcher.unregister(session_id);
                Err(err)
            }
        }
    }

    async fn list(&self, live: &Live, cwd: Option<&Path>) -> Result<Vec<SessionInfo>, AcpError> {
        if live.capabilities.session_capabilities.list.is_none() {
            return Err(AcpError::Unsupported {
                what: "listing saved sessions (session/list)",
            });
        }
        let mut sessions = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = serde_json::to_value(ListSessionsParams {
                cwd,
                cursor: cursor.as_deref(),
            })
            .unwrap_or(Value::Null);
            let page: ListSessionsResponse = serde_json::from_value(
                live.connection
                    .request("session/list", params, self.config.timeouts.request)
                    .await?,
            )
            .map_err(|err| AcpError::BadResponse {
                method: "session/list".to_owned(),
                detail: err.to_string(),
            })?;
            sessions.extend(page.sessions);
            cursor = page.next_cursor.filter(|c| !c.is_empty());
            if cursor.is_none() {
                break;
            }
        }
        Ok(sessions)
    }

    /// The agent serving `session`, with the session loaded in it: after a restart the session
    /// is reloaded, or replaced (and the caller told) when it cannot be.
    pub(crate) async fn ensure_session(
        &self,
        session: &SessionInner,
    ) -> Result<(Arc<Live>, String, Arc<SessionSink>), AcpError> {
        let live = self.live().await?;
        let (id, generation, sink) =
            session.with_state(|s| (s.id.clone(), s.generation, Arc::clone(&s.sink)));
        if generation == live.generation {
            return Ok((live, id, sink));
        }
        let cwd = session.cwd.clone();
        let reason = match self.reload_candidate(&live, &id, &cwd).await {
            Ok(reason) => reason,
            Err(err) => return Err(err),
        };
        let reason = match reason {
            None => match self.load(&live, &id, &cwd).await {
                Ok((sink, _)) => {
                    let notice = SessionNotice::Reloaded {
                        session_id: id.clone(),
                        replayed_messages: sink.replayed_messages(),
                    };
                    tracing::info!(session = %id, "session reloaded after an agent restart");
                    session.reloaded(live.generation, Arc::clone(&sink), notice);
                    return Ok((live, id, sink));
                }
                Err(err @ AcpError::AuthRequired { .. }) => return Err(err),
                Err(err) => format!("loading it failed: {err}"),
            },
            Some(reason) => reason,
        };
        tracing::warn!(session = %id, %reason, "session cannot be reloaded; starting a replacement");
        let (new_id, sink, setup) = self.open_new(&live, &cwd).await?;
        let notice = SessionNotice::Replaced {
            previous_id: id,
            session_id: new_id.clone(),
            reason,
        };
        let modes = setup.modes.map(|m| m.available_modes).unwrap_or_default();
        session.replaced(
            new_id.clone(),
            live.generation,
            Arc::clone(&sink),
            modes,
            notice,
        );
        Ok((live, new_id, sink))
    }

    /// `None` when the session looks loadable; else why it is not.
    async fn reload_candidate(
        &self,
        live: &Live,
        id: &str,
        cwd: &Path,
    ) -> Result<Option<String>, AcpError> {
        if !live.capabilities.load_session {
            return Ok(Some("the agent cannot load saved sessions".to_owned()));
        }
        if live.capabilities.session_capabilities.list.is_none() {
            return Ok(None);
        }
        match self.list(live, Some(cwd)).await {
            Ok(sessions) if sessions.iter().any(|s| s.session_id == id) => Ok(None),
            Ok(_) => Ok(Some(
                "the agent has no saved session with that id".to_owned(),
            )),
            Err(err @ AcpError::AuthRequired { .. }) => Err(err),
            // Listing is only a shortcut; try loading anyway.
            Err(err) => {
                tracing::debug!(%err, "session/list failed; trying session/load anyway");
                Ok(None)
            }
        }
    }

    pub(crate) async fn close_session(&self, session: &SessionInner) -> Result<(), AcpError> {
        let (id, generation) = session.with_state(|s| (s.id.clone(), s.generation));
        let live = self.live.lock().await.clone();
        let Some(live) = live.filter(|l| l.is_alive() && l.generation == generation) else {
            // Not loaded in the running agent: nothing to close there.
            return Ok(());
        };
        live.dispatcher.unregister(&id);
        if live.capabilities.session_capabilities.close.is_none() {
            return Ok(());
        }
        let params =
            serde_json::to_value(SessionIdParams { session_id: &id }).unwrap_or(Value::Null);
        live.connection
            .request("session/close", params, self.config.timeouts.request)
            .await
            .map(drop)
    }
}

impl SessionHost for AgentShared {
    fn ensure<'a>(
        &'a self,
        session: &'a SessionInner,
    ) -> HostFuture<'a, (Connection, String, Arc<SessionSink>)> {
        Box::pin(async move {
            let (live, id, sink) = self.ensure_session(session).await?;
            Ok((live.connection.clone(), id, sink))
        })
    }

    fn close<'a>(&'a self, session: &'a SessionInner) -> HostFuture<'a, ()> {
        Box::pin(self.close_session(session))
    }

    fn timeouts(&self) -> crate::acp::config::Timeouts {
        self.config.timeouts
    }
}
