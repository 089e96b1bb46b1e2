//! One long-lived session: its event queue, its prompts waiting their turn, and the worker task
//! that runs them one after another on the shared [`Runner`], turning each turn's updates into
//! events. The worker is the only writer of turn events, so they stay in generation order.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bridge_core::redact::Redactor;
use bridge_core::sync::lock;
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::acp::{StopReason, Update};
use crate::approval::ClientAsker;
use crate::live::event::{Callback, LiveEvent};
use crate::live::mapper::EventMapper;
use crate::live::queue::EventQueue;
use crate::runner::{DirAccess, RunError, Runner, TaskRequest};

/// Events a session queues before deltas are merged.
pub const QUEUE_BOUND: usize = 10_000;

/// What a session is doing, as `copilot_session_list` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionState {
    /// Waiting for a query.
    Idle,
    /// A turn runs (or queries wait for one).
    Running,
    /// Stopped, with events not yet read.
    ClosedUndrained,
}

/// What one `live` call got.
#[derive(Debug, PartialEq, Eq)]
pub enum Poll {
    /// The next events, oldest first.
    Events(Vec<LiveEvent>),
    /// The session is stopped and every event was read.
    Closed,
    /// Nothing arrived in time.
    TimedOut,
    /// Another `live` call on this session is waiting.
    Parallel,
}

#[derive(Debug)]
struct Inner {
    queue: EventQueue,
    /// A turn is running.
    running: bool,
    /// Queries sent and not yet started.
    waiting: usize,
    /// Stopped: no more queries; the queue is still drained.
    stopping: bool,
    /// The worker has ended: nothing more will be queued.
    closed: bool,
    last_activity: Instant,
}

/// A long-lived session.
#[derive(Debug)]
pub struct LiveSession {
    id: String,
    working_dir: PathBuf,
    model: Option<String>,
    created: Instant,
    inner: Mutex<Inner>,
    changed: Notify,
    polling: AtomicBool,
    stop: CancellationToken,
    prompts: mpsc::UnboundedSender<(String, Option<ClientAsker>)>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

/// Clears the "a `live` call waits" flag when the call ends, however it ends.
struct PollGuard<'a>(&'a AtomicBool);

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl LiveSession {
    /// Starts the worker of the open runner session `id`; turns time out after `turn_timeout`.
    pub fn spawn(
        id: String,
        working_dir: PathBuf,
        model: Option<String>,
        runner: Arc<Runner>,
        turn_timeout: Duration,
    ) -> Arc<Self> {
        let (prompts, rx) = mpsc::unbounded_channel();
        let session = Arc::new(Self {
            id,
            working_dir,
            model,
            created: Instant::now(),
            inner: Mutex::new(Inner {
                queue: EventQueue::new(QUEUE_BOUND),
                running: false,
                waiting: 0,
                stopping: false,
                closed: false,
                last_activity: Instant::now(),
            }),
            changed: Notify::new(),
            polling: AtomicBool::new(false),
            stop: CancellationToken::new(),
            prompts,
            worker: Mutex::new(None),
        });
        let worker = tokio::spawn(Arc::clone(&session).work(runner, rx, turn_timeout));
        *lock(&session.worker) = Some(worker);
        session
    }

    /// The session's id (also a `sessionId` for `copilot_code_task`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its working directory.
    pub fn working_dir(&self) -> &std::path::Path {
        &self.working_dir
    }

    /// The model it was started with, if one was named.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Time since it started.
    pub fn age(&self) -> Duration {
        self.created.elapsed()
    }

    /// Time since the last query or read.
    pub fn idle_for(&self) -> Duration {
        lock(&self.inner).last_activity.elapsed()
    }

    /// Its state and how many events wait.
    pub fn state(&self) -> (SessionState, usize) {
        let inner = lock(&self.inner);
        let state = if inner.stopping || inner.closed {
            SessionState::ClosedUndrained
        } else if inner.running || inner.waiting > 0 {
            SessionState::Running
        } else {
            SessionState::Idle
        };
        (state, inner.queue.len())
    }

    /// Queues `prompt` (questions of its turn go to `asker`); returns `Some(queued)` (whether
    /// it waits behind another turn), or `None` when the session is stopped.
    pub fn query(&self, prompt: String, asker: Option<ClientAsker>) -> Option<bool> {
        let mut inner = lock(&self.inner);
        if inner.stopping || inner.closed {
            return None;
        }
        let queued = inner.running || inner.waiting > 0;
        inner.waiting += 1;
        inner.last_activity = Instant::now();
        drop(inner);
        if self.prompts.send((prompt, asker)).is_err() {
            lock(&self.inner).waiting -= 1;
            return None;
        }
        Some(queued)
    }

    /// Waits up to `wait` for events and returns up to `max` of them.
    pub async fn poll(&self, wait: Duration, max: usize, cancel: &CancellationToken) -> Poll {
        if self.polling.swap(true, Ordering::AcqRel) {
            return Poll::Parallel;
        }
        let _guard = PollGuard(&self.polling);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            {
                let mut inner = lock(&self.inner);
                inner.last_activity = Instant::now();
                if !inner.queue.is_empty() {
                    return Poll::Events(inner.queue.pop(max.max(1)));
                }
                if inner.closed {
                    return Poll::Closed;
                }
            }
            // A push between the check and here leaves a permit: no wake-up is lost.
            tokio::select! {
                () = self.changed.notified() => {}
                () = tokio::time::sleep_until(deadline) => return Poll::TimedOut,
                () = cancel.cancelled() => return Poll::TimedOut,
            }
        }
    }

    /// Stops the session: no more queries, the running turn is cancelled, the worker closes the
    /// ACP session and ends. Waits for that at most `grace`; the queue stays to be drained.
    /// Returns false when it was stopped already.
    pub async fn stop(&self, note: Option<String>, grace: Duration) -> bool {
        {
            let mut inner = lock(&self.inner);
            if inner.stopping {
                return false;
            }
            inner.stopping = true;
            if let Some(note) = note {
                inner.queue.push(LiveEvent::SessionError {
                    session_error: note,
                });
            }
        }
        self.changed.notify_one();
        self.stop.cancel();
        let worker = lock(&self.worker).take();
        if let Some(mut worker) = worker
            && tokio::time::timeout(grace, &mut worker).await.is_err()
        {
            tracing::warn!(session = %self.id, "the session's worker did not stop in time");
            worker.abort();
            self.mark_closed();
        }
        true
    }

    fn push_all(&self, events: Vec<LiveEvent>) {
        if events.is_empty() {
            return;
        }
        let mut inner = lock(&self.inner);
        for event in events {
            inner.queue.push(event);
        }
        drop(inner);
        self.changed.notify_one();
    }

    fn mark_closed(&self) {
        lock(&self.inner).closed = true;
        self.changed.notify_one();
    }

    /// Runs the queued prompts one turn at a time until stopped.
    async fn work(
        self: Arc<Self>,
        runner: Arc<Runner>,
        mut prompts: mpsc::UnboundedReceiver<(String, Option<ClientAsker>)>,
        turn_timeout: Duration,
    ) {
        let mut turns = 0_u64;
        loop {
            let (prompt, asker) = tokio::select! {
                biased;
                () = self.stop.cancelled() => break,
                prompt = prompts.recv() => match prompt {
                    Some(prompt) => prompt,
                    None => break,
                },
            };
            turns += 1;
            let turn_id = format!("turn-{turns}");
            {
                let mut inner = lock(&self.inner);
                inner.waiting = inner.waiting.saturating_sub(1);
                inner.running = true;
            }
            self.push_all(vec![
                Callback::AgentStart {
                    turn_id: turn_id.clone(),
                }
                .into(),
            ]);
            let tail = self
                .turn(&runner, prompt, asker, &turn_id, turn_timeout)
                .await;
            // The turn's last events and its end are one change, so no reader sees the
            // session idle before `onIdle` is queued.
            let mut inner = lock(&self.inner);
            for event in tail {
                inner.queue.push(event);
            }
            inner.queue.push(Callback::AgentEnd { turn_id }.into());
            inner.running = false;
            if inner.waiting == 0 {
                inner.queue.push(Callback::Idle.into());
            }
            drop(inner);
            self.changed.notify_one();
        }
        runner.close(&self.id).await;
        self.mark_closed();
    }

    /// Runs one turn, queueing its events as they come; returns the events that end it.
    async fn turn(
        &self,
        runner: &Runner,
        prompt: String,
        asker: Option<ClientAsker>,
        turn_id: &str,
        timeout: Duration,
    ) -> Vec<LiveEvent> {
        let (updates, mut rx) = mpsc::unbounded_channel::<Update>();
        let request = TaskRequest {
            prompt,
            working_dir: None,
            timeout,
            session_id: Some(self.id.clone()),
            model: None,
            access: DirAccess::Exclusive,
            updates: Some(updates),
            asker,
        };
        let mut mapper = EventMapper::new(turn_id);
        let run = runner.run(request, None, self.stop.child_token());
        tokio::pin!(run);
        let mut listening = true;
        let result = loop {
            tokio::select! {
                biased;
                update = rx.recv(), if listening => match update {
                    Some(update) => {
                        let mut events = Vec::new();
                        mapper.map(&update, &mut events);
                        self.push_all(events);
                    }
                    None => listening = false,
                },
                result = &mut run => break result,
            }
        };
        // The runner hands every update over before it returns.
        let mut tail = Vec::new();
        while let Ok(update) = rx.try_recv() {
            mapper.map(&update, &mut tail);
        }
        mapper.finish(&mut tail);
        let redact = |text: &str| Redactor::shared().redact(text).into_owned();
        match result {
            Ok(report) => {
                if let Some(error) = &report.model_error {
                    tail.push(LiveEvent::SessionError {
                        session_error: redact(&format!("the model failed: {error}")),
                    });
                }
                if report.outcome.timed_out {
                    tail.push(LiveEvent::SessionError {
                        session_error: format!(
                            "the turn ran out of time after {} ms and was cancelled",
                            timeout.as_millis()
                        ),
                    });
                } else if report.outcome.stop_reason != StopReason::EndTurn
                    && report.outcome.stop_reason != StopReason::Cancelled
                {
                    tail.push(LiveEvent::SessionError {
                        session_error: format!("the turn stopped: {}", report.outcome.stop_reason),
                    });
                }
                if let Some(warning) = &report.warning {
                    tail.push(LiveEvent::SessionError {
                        session_error: redact(warning),
                    });
                }
            }
            Err(RunError::Cancelled) => {}
            Err(err) => tail.push(LiveEvent::SessionError {
                session_error: redact(&bridge_mcp::error_chain(&err)),
            }),
        }
        tail
    }
}
