//! Every long-lived session of this bridge by id: start, query, live, stop and list, the
//! semantics of the session API (one `live` call at a time, `SessionClosed` once after the
//! queue is drained, `SessionNotFound` after that), and the reaper that stops sessions left
//! idle too long. All sessions run on the one shared Copilot CLI of the [`Runner`].

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_core::sync::lock;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::approval::ClientAsker;
use crate::live::session::{LiveSession, Poll, SessionState};
use crate::runner::{RunError, Runner};

/// How long `stop` waits for a session's worker to end.
const STOP_GRACE: Duration = Duration::from_secs(15);
/// How often the reaper looks for idle sessions (at most; shorter idle limits look sooner).
const REAP_EVERY: Duration = Duration::from_secs(30);

/// One row of `copilot_session_list`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// Its id.
    pub session_id: String,
    /// Where it works.
    pub working_directory: String,
    /// The model it was started with, if one was named.
    pub model: Option<String>,
    /// `idle`, `running` or `closed-undrained`.
    pub state: SessionState,
    /// Events waiting to be read.
    pub queued_events: usize,
    /// Milliseconds since it started.
    pub age_ms: u64,
    /// Milliseconds since the last query or read.
    pub idle_ms: u64,
}

/// What a `live` call answers.
#[derive(Debug, PartialEq, Eq)]
pub enum LiveOutcome {
    /// No such session (never started, or already reported closed).
    NotFound,
    /// The session's answer.
    Poll(Poll),
}

/// What a query got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryOutcome {
    /// No such session.
    NotFound,
    /// The session is stopped.
    Stopped,
    /// The prompt runs now, or after the running turn when `queued`.
    Accepted {
        /// It waits behind another turn.
        queued: bool,
    },
}

/// The long-lived sessions.
#[derive(Debug)]
pub struct LiveSessions {
    runner: Arc<Runner>,
    turn_timeout: Duration,
    idle_limit: Duration,
    sessions: Mutex<HashMap<String, Arc<LiveSession>>>,
    reaper: Mutex<Option<JoinHandle<()>>>,
    shutdown: CancellationToken,
}

impl LiveSessions {
    /// Sessions on `runner`; each turn may run `turn_timeout`, and a session idle longer than
    /// `idle_limit` is stopped.
    pub fn new(runner: Arc<Runner>, turn_timeout: Duration, idle_limit: Duration) -> Arc<Self> {
        Arc::new(Self {
            runner,
            turn_timeout,
            idle_limit,
            sessions: Mutex::new(HashMap::new()),
            reaper: Mutex::new(None),
            shutdown: CancellationToken::new(),
        })
    }

    /// Opens a new ACP session in `working_dir` and starts its worker; returns its id.
    pub async fn start(
        self: &Arc<Self>,
        working_dir: &Path,
        model: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<String, RunError> {
        let (id, dir) = self.runner.open(working_dir, model.clone(), cancel).await?;
        let session = LiveSession::spawn(
            id.clone(),
            dir,
            model,
            Arc::clone(&self.runner),
            self.turn_timeout,
        );
        lock(&self.sessions).insert(id.clone(), session);
        self.ensure_reaper();
        Ok(id)
    }

    fn get(&self, id: &str) -> Option<Arc<LiveSession>> {
        lock(&self.sessions).get(id).cloned()
    }

    /// Queues a prompt.
    pub fn query(&self, id: &str, prompt: String, asker: Option<ClientAsker>) -> QueryOutcome {
        match self.get(id).map(|session| session.query(prompt, asker)) {
            None => QueryOutcome::NotFound,
            Some(None) => QueryOutcome::Stopped,
            Some(Some(queued)) => QueryOutcome::Accepted { queued },
        }
    }

    /// The session's next events (see [`LiveSession::poll`]). The `Closed` answer is given
    /// once: the session is forgotten with it.
    pub async fn live(
        &self,
        id: &str,
        wait: Duration,
        max: usize,
        cancel: &CancellationToken,
    ) -> LiveOutcome {
        let Some(session) = self.get(id) else {
            return LiveOutcome::NotFound;
        };
        let poll = session.poll(wait, max, cancel).await;
        if poll == Poll::Closed {
            let mut sessions = lock(&self.sessions);
            if sessions
                .get(id)
                .is_some_and(|current| Arc::ptr_eq(current, &session))
            {
                sessions.remove(id);
            }
        }
        LiveOutcome::Poll(poll)
    }

    /// Stops a session (see [`LiveSession::stop`]); false for an unknown id.
    pub async fn stop(&self, id: &str) -> bool {
        let Some(session) = self.get(id) else {
            return false;
        };
        session.stop(None, STOP_GRACE).await;
        true
    }

    /// Every session, oldest first.
    pub fn list(&self) -> Vec<SessionSummary> {
        let sessions: Vec<Arc<LiveSession>> = lock(&self.sessions).values().cloned().collect();
        let mut rows: Vec<(Duration, SessionSummary)> = sessions
            .iter()
            .map(|session| {
                let (state, queued_events) = session.state();
                let age = session.age();
                let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
                (
                    age,
                    SessionSummary {
                        session_id: session.id().to_owned(),
                        working_directory: session.working_dir().display().to_string(),
                        model: session.model().map(str::to_owned),
                        state,
                        queued_events,
                        age_ms: millis(age),
                        idle_ms: millis(session.idle_for()),
                    },
                )
            })
            .collect();
        rows.sort_by_key(|row| std::cmp::Reverse(row.0));
        rows.into_iter().map(|(_, row)| row).collect()
    }

    /// Starts the idle reaper once.
    fn ensure_reaper(self: &Arc<Self>) {
        let mut reaper = lock(&self.reaper);
        if reaper.is_some() {
            return;
        }
        let this = Arc::downgrade(self);
        let shutdown = self.shutdown.clone();
        let every = REAP_EVERY
            .min(self.idle_limit / 2)
            .max(Duration::from_millis(50));
        *reaper = Some(tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(every) => {}
                }
                let Some(sessions) = this.upgrade() else {
                    return;
                };
                sessions.reap().await;
            }
        }));
    }

    /// Stops every session idle longer than the limit, saying so in its queue.
    async fn reap(&self) {
        let idle: Vec<Arc<LiveSession>> = lock(&self.sessions)
            .values()
            .filter(|s| s.state().0 == SessionState::Idle && s.idle_for() > self.idle_limit)
            .cloned()
            .collect();
        for session in idle {
            let minutes = self.idle_limit.as_secs_f64() / 60.0;
            tracing::info!(session = session.id(), "stopping an idle session");
            let note = format!(
                "the session was stopped after {minutes:.1} minutes without a query or read \
                 (COPILOT_BRIDGE_SESSION_IDLE_MS); start a new one, or continue this one with \
                 copilot_code_task and its sessionId"
            );
            session.stop(Some(note), STOP_GRACE).await;
        }
    }

    /// Stops every session and the reaper, each within a bound. Call before the runner stops.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        let reaper = lock(&self.reaper).take();
        if let Some(reaper) = reaper {
            let _ = tokio::time::timeout(Duration::from_secs(2), reaper).await;
        }
        let sessions: Vec<Arc<LiveSession>> = lock(&self.sessions).values().cloned().collect();
        let mut stops = tokio::task::JoinSet::new();
        for session in sessions {
            stops.spawn(async move { session.stop(None, Duration::from_secs(3)).await });
        }
        while stops.join_next().await.is_some() {}
    }
}
