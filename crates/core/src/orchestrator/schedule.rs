//! Running a [`Dag`] through a caller-supplied [`TaskRunner`]: a session pool (semaphore) bounds
//! the tasks in flight, the [`Strategy`] decides when a task becomes ready, a failure skips the
//! failed task's transitive dependents, and cancellation or the overall timeout stops everything.
//!
//! One dispatcher loop owns all state; each task runs in its own tokio task so a slow or
//! panicking runner cannot stall the others. Time is tokio's, so tests and the benchmark run on
//! a paused clock.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::dag::Dag;
use super::event::Event;
use super::plan::TaskSpec;
use super::report::{Report, TaskReport, summary_line};
use super::types::{RunStop, SkipReason, Strategy, TaskId, TaskStatus};

/// How long running tasks get to return after cancellation before they are aborted: long enough
/// for a runner to tell its agent to cancel and collect a partial reply, short enough that a
/// cancelled tool call still answers promptly.
pub const DEFAULT_CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Carries out one task; the bridge implements it with a Copilot session.
///
/// Implement it with `async fn run(&self, task: TaskContext) -> TaskOutcome` (the future must
/// be `Send`), or pass a closure `Fn(TaskContext) -> impl Future<Output = TaskOutcome>`.
pub trait TaskRunner: Send + Sync {
    /// Runs one task to completion. Should return soon after `task.cancel` fires; a runner that
    /// does not is aborted after the grace period ([`RunOptions::cancel_grace`]).
    fn run(&self, task: TaskContext) -> impl Future<Output = TaskOutcome> + Send;
}

impl<F, Fut> TaskRunner for F
where
    F: Fn(TaskContext) -> Fut + Send + Sync,
    Fut: Future<Output = TaskOutcome> + Send,
{
    fn run(&self, task: TaskContext) -> impl Future<Output = TaskOutcome> + Send {
        self(task)
    }
}

/// Everything a runner needs to carry out one task.
#[derive(Debug, Clone)]
pub struct TaskContext {
    /// The task.
    pub task: TaskSpec,
    /// Its wave, counting from 1.
    pub wave: usize,
    /// The results of the tasks it depends on (all succeeded), in the order the plan lists them:
    /// put them in the sub-task's prompt ([`subtask_prompt`](super::subtask_prompt)).
    pub dependencies: Vec<DependencyResult>,
    /// Fires when the run is cancelled or times out; a child of the caller's token.
    pub cancel: CancellationToken,
}

/// The result of a task another task depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyResult {
    /// The task.
    pub id: TaskId,
    /// Its description.
    pub description: String,
    /// The summary its runner returned.
    pub summary: String,
    /// Its runner's session id, if any.
    pub session_id: Option<String>,
}

/// What a runner reports for one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOutcome {
    /// Whether the task did what it was asked.
    pub succeeded: bool,
    /// What was done (passed on to dependents), or what went wrong.
    pub summary: String,
    /// An opaque id of the session that ran the task, for the report.
    pub session_id: Option<String>,
}

impl TaskOutcome {
    /// A successful task with a summary of what it did.
    pub fn success(summary: impl Into<String>) -> Self {
        Self {
            succeeded: true,
            summary: summary.into(),
            session_id: None,
        }
    }

    /// A failed task with the error.
    pub fn failure(error: impl Into<String>) -> Self {
        Self {
            succeeded: false,
            summary: error.into(),
            session_id: None,
        }
    }

    /// The same outcome, naming the session that produced it.
    #[must_use]
    pub fn with_session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }
}

/// The size of the session pool: how many tasks may run at once, 1 to 10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Concurrency(usize);

impl Concurrency {
    /// Fewest parallel sessions.
    pub const MIN: usize = 1;
    /// Most parallel sessions: each is a Copilot session with its own model traffic, and more
    /// than 10 at once mostly buys rate limiting.
    pub const MAX: usize = 10;
    /// The original design's pool size.
    pub const DEFAULT: Self = Self(3);

    /// Validates a pool size.
    pub fn new(sessions: usize) -> Result<Self, ConcurrencyError> {
        if (Self::MIN..=Self::MAX).contains(&sessions) {
            Ok(Self(sessions))
        } else {
            Err(ConcurrencyError { value: sessions })
        }
    }

    /// The pool size.
    pub fn get(self) -> usize {
        self.0
    }
}

impl Default for Concurrency {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A pool size outside 1–10.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("maxConcurrency must be between 1 and 10, got {value}")]
pub struct ConcurrencyError {
    /// The rejected size.
    pub value: usize,
}

/// How to run a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// When ready tasks start.
    pub strategy: Strategy,
    /// Most tasks running at once.
    pub concurrency: Concurrency,
    /// Stop the whole run after this long; `None` waits for the tasks however long they take.
    pub timeout: Option<Duration>,
    /// How much of `timeout` was used up before the run started (planning, say): the run stops
    /// that much sooner, and still reports the whole timeout as the one that passed.
    pub timeout_spent: Duration,
    /// How long running tasks get to return after cancellation before they are aborted.
    pub cancel_grace: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            strategy: Strategy::default(),
            concurrency: Concurrency::default(),
            timeout: None,
            timeout_spent: Duration::ZERO,
            cancel_grace: DEFAULT_CANCEL_GRACE,
        }
    }
}

/// Runs every task of `dag` through `runner` and reports what happened.
///
/// Never fails: failures, skips and cancellation are recorded in the [`Report`]. Each task runs
/// in a spawned tokio task, so this must be called inside a tokio runtime; dropping the returned
/// future aborts every task still running. `on_event` is called from the dispatcher, in order,
/// and should not block (send into a channel).
pub async fn run<R>(
    dag: &Dag,
    runner: Arc<R>,
    options: &RunOptions,
    cancel: &CancellationToken,
    on_event: impl FnMut(Event) + Send,
) -> Report
where
    R: TaskRunner + 'static,
{
    let mut dispatcher = Dispatcher::new(dag, options, cancel, on_event);
    dispatcher.run_to_end(&runner).await;
    dispatcher.into_report()
}

/// Where one task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Dependencies not finished, or (waves) its wave not reached.
    Waiting,
    /// In the ready queue.
    Ready,
    /// Its runner is running.
    Running,
    /// Finished, skipped or cancelled.
    Done(TaskStatus),
}

struct Slot {
    state: State,
    /// Dependencies not yet succeeded.
    waiting_on: usize,
    started: Option<Instant>,
    elapsed: Option<Duration>,
    session_id: Option<String>,
    summary: String,
}

/// The state of one run. All of it lives in the one loop in [`Dispatcher::run_to_end`].
struct Dispatcher<'a, E> {
    dag: &'a Dag,
    options: &'a RunOptions,
    on_event: E,
    /// Cancelled by the caller's token (it is a child) or by the timeout.
    token: CancellationToken,
    /// The session pool: a task holds a permit while its runner runs.
    pool: Arc<Semaphore>,
    slots: Vec<Slot>,
    /// Ready tasks, longest remaining chain first, then plan order.
    ready: BinaryHeap<(u64, Reverse<usize>)>,
    priority: Vec<u64>,
    /// Next wave to release under [`Strategy::Waves`].
    next_wave: usize,
    running: JoinSet<TaskOutcome>,
    running_ids: HashMap<tokio::task::Id, usize>,
    start: Instant,
    end: Option<Instant>,
    stopped: Option<RunStop>,
    /// When to abort runners still running after a stop.
    abort_at: Option<Instant>,
}

impl<'a, E: FnMut(Event) + Send> Dispatcher<'a, E> {
    fn new(dag: &'a Dag, options: &'a RunOptions, cancel: &CancellationToken, on_event: E) -> Self {
        let slots = (0..dag.len())
            .map(|task| Slot {
                state: State::Waiting,
                waiting_on: dag.prerequisites_of(task).len(),
                started: None,
                elapsed: None,
                session_id: None,
                summary: String::new(),
            })
            .collect();
        Self {
            dag,
            options,
            on_event,
            token: cancel.child_token(),
            pool: Arc::new(Semaphore::new(options.concurrency.get())),
            slots,
            ready: BinaryHeap::new(),
            priority: dag.remaining_path_weights(|task| u64::from(task.complexity.weight())),
            next_wave: 0,
            running: JoinSet::new(),
            running_ids: HashMap::new(),
            start: Instant::now(),
            end: None,
            stopped: None,
            abort_at: None,
        }
    }

    async fn run_to_end<R: TaskRunner + 'static>(&mut self, runner: &Arc<R>) {
        self.start = Instant::now();
        let deadline = self
            .options
            .timeout
            .map(|timeout| self.start + timeout.saturating_sub(self.options.timeout_spent));
        if self.options.strategy == Strategy::Eager {
            for task in 0..self.slots.len() {
                if self.slots[task].waiting_on == 0 {
                    self.make_ready(task);
                }
            }
        }
        loop {
            // Checked before dispatching so a token cancelled (or a timeout used up, e.g. by
            // planning) before the run starts nothing.
            if self.stopped.is_none() && self.token.is_cancelled() {
                self.stop(RunStop::Cancelled);
            }
            if self.stopped.is_none() && deadline.is_some_and(|at| Instant::now() >= at) {
                let timeout_ms = millis(self.options.timeout.unwrap_or_default());
                self.stop(RunStop::TimedOut { timeout_ms });
            }
            if self.stopped.is_none() {
                self.start_ready_tasks(runner);
            }
            if self.running.is_empty() {
                if self.stopped.is_none() && self.release_next_wave() {
                    continue;
                }
                break;
            }
            tokio::select! {
                biased;
                () = self.token.cancelled(), if self.stopped.is_none() => {
                    self.stop(RunStop::Cancelled);
                }
                () = sleep_until(deadline.unwrap_or(self.start)),
                    if self.stopped.is_none() && deadline.is_some() =>
                {
                    let timeout_ms = millis(self.options.timeout.unwrap_or_default());
                    self.stop(RunStop::TimedOut { timeout_ms });
                }
                () = sleep_until(self.abort_at.unwrap_or(self.start)), if self.abort_at.is_some() => {
                    tracing::warn!(
                        still_running = self.running.len(),
                        "orchestrator: runners ignored cancellation; aborting them"
                    );
                    self.abort_at = None;
                    self.running.abort_all();
                }
                Some(joined) = self.running.join_next_with_id() => match joined {
                    Ok((id, outcome)) => self.finish(id, outcome),
                    Err(err) => {
                        let id = err.id();
                        let outcome = if err.is_panic() {
                            TaskOutcome::failure(format!(
                                "the task runner panicked: {}",
                                panic_message(err.into_panic())
                            ))
                        } else {
                            TaskOutcome::failure(format!(
                                "aborted: still running {} ms after cancellation",
                                millis(self.options.cancel_grace)
                            ))
                        };
                        self.finish(id, outcome);
                    }
                },
                else => break,
            }
        }
        let end = Instant::now();
        self.end = Some(end);
        let (succeeded, skipped, failed, cancelled) = self.counts();
        let summary = summary_line(succeeded, self.slots.len(), skipped, failed, cancelled);
        (self.on_event)(Event::PlanComplete {
            summary,
            makespan_ms: millis(end - self.start),
            stopped: self.stopped,
        });
    }

    fn make_ready(&mut self, task: usize) {
        self.slots[task].state = State::Ready;
        self.ready.push((self.priority[task], Reverse(task)));
    }

    /// Under [`Strategy::Waves`], queues the next wave's tasks that were not skipped. Returns
    /// whether there was a wave left.
    fn release_next_wave(&mut self) -> bool {
        if self.options.strategy != Strategy::Waves {
            return false;
        }
        let Some(wave) = self.dag.wave_indices().get(self.next_wave) else {
            return false;
        };
        self.next_wave += 1;
        for &task in wave {
            if self.slots[task].state == State::Waiting && self.slots[task].waiting_on == 0 {
                self.make_ready(task);
            }
        }
        true
    }

    /// Starts ready tasks while the pool has free sessions.
    fn start_ready_tasks<R: TaskRunner + 'static>(&mut self, runner: &Arc<R>) {
        while !self.ready.is_empty() {
            let Ok(permit) = Arc::clone(&self.pool).try_acquire_owned() else {
                break;
            };
            let Some((_, Reverse(task))) = self.ready.pop() else {
                break;
            };
            let spec = self.dag.tasks()[task].clone();
            let dependencies = self
                .dag
                .prerequisites_of(task)
                .iter()
                .map(|&before| DependencyResult {
                    id: self.dag.id(before).clone(),
                    description: self.dag.tasks()[before].description.clone(),
                    summary: self.slots[before].summary.clone(),
                    session_id: self.slots[before].session_id.clone(),
                })
                .collect();
            let wave = self.dag.wave_of(task) + 1;
            let context = TaskContext {
                task: spec,
                wave,
                dependencies,
                cancel: self.token.child_token(),
            };
            let slot = &mut self.slots[task];
            slot.state = State::Running;
            slot.started = Some(Instant::now());
            let runner = Arc::clone(runner);
            let handle = self.running.spawn(async move {
                let _session = permit;
                runner.run(context).await
            });
            self.running_ids.insert(handle.id(), task);
            tracing::debug!(task = %self.dag.id(task), wave, "orchestrator: task started");
            (self.on_event)(Event::TaskStart {
                task: self.dag.id(task).clone(),
                description: self.dag.tasks()[task].description.clone(),
                wave,
                // Sessions in use: a finished task may still wait in `running` to be joined.
                running: self.options.concurrency.get() - self.pool.available_permits(),
            });
        }
    }

    /// Records a runner's outcome and releases or skips the task's dependents.
    fn finish(&mut self, id: tokio::task::Id, outcome: TaskOutcome) {
        let Some(task) = self.running_ids.remove(&id) else {
            return;
        };
        let status = match (outcome.succeeded, self.stopped) {
            (true, _) => TaskStatus::Succeeded,
            (false, None) => TaskStatus::Failed,
            (false, Some(_)) => TaskStatus::Cancelled,
        };
        let slot = &mut self.slots[task];
        let elapsed = slot
            .started
            .map_or(Duration::ZERO, |started| started.elapsed());
        slot.state = State::Done(status);
        slot.elapsed = Some(elapsed);
        slot.session_id = outcome.session_id;
        slot.summary = outcome.summary;
        tracing::debug!(task = %self.dag.id(task), %status, "orchestrator: task finished");
        (self.on_event)(Event::TaskComplete {
            task: self.dag.id(task).clone(),
            status,
            elapsed_ms: millis(elapsed),
            session_id: self.slots[task].session_id.clone(),
            summary: self.slots[task].summary.clone(),
        });
        match status {
            TaskStatus::Succeeded => {
                for &dependent in self.dag.dependents_of(task) {
                    let slot = &mut self.slots[dependent];
                    slot.waiting_on -= 1;
                    if slot.waiting_on == 0
                        && slot.state == State::Waiting
                        && self.options.strategy == Strategy::Eager
                    {
                        self.make_ready(dependent);
                    }
                }
            }
            TaskStatus::Failed => self.skip_dependents_of(task),
            // After a stop every task that had not started is already cancelled.
            TaskStatus::Skipped | TaskStatus::Cancelled => {}
        }
    }

    /// Skips every task that depends, directly or not, on `failed`; each exactly once.
    fn skip_dependents_of(&mut self, failed: usize) {
        let mut queue = vec![failed];
        while let Some(task) = queue.pop() {
            for &dependent in self.dag.dependents_of(task) {
                // A task skipped earlier already had its own dependents skipped.
                if self.slots[dependent].state == State::Waiting {
                    self.skip(
                        dependent,
                        SkipReason::DependencyFailed {
                            failed: self.dag.id(failed).clone(),
                        },
                    );
                    queue.push(dependent);
                }
            }
        }
    }

    fn skip(&mut self, task: usize, reason: SkipReason) {
        let slot = &mut self.slots[task];
        slot.state = State::Done(reason.status());
        slot.summary = reason.to_string();
        (self.on_event)(Event::TaskSkipped {
            task: self.dag.id(task).clone(),
            reason,
        });
    }

    /// Cancels the runners, marks every task not yet started as cancelled, and arms the abort.
    fn stop(&mut self, reason: RunStop) {
        tracing::info!(%reason, running = self.running.len(), "orchestrator: stopping");
        self.stopped = Some(reason);
        self.token.cancel();
        self.ready.clear();
        for task in 0..self.slots.len() {
            if matches!(self.slots[task].state, State::Waiting | State::Ready) {
                self.skip(task, SkipReason::Stopped { stop: reason });
            }
        }
        self.abort_at = Some(Instant::now() + self.options.cancel_grace);
    }

    fn counts(&self) -> (usize, usize, usize, usize) {
        let count = |wanted: TaskStatus| {
            self.slots
                .iter()
                .filter(|slot| slot.state == State::Done(wanted))
                .count()
        };
        (
            count(TaskStatus::Succeeded),
            count(TaskStatus::Skipped),
            count(TaskStatus::Failed),
            count(TaskStatus::Cancelled),
        )
    }

    fn into_report(self) -> Report {
        let dag = self.dag;
        let durations: Vec<Duration> = self
            .slots
            .iter()
            .map(|slot| slot.elapsed.unwrap_or_default())
            .collect();
        let concurrency = self.options.concurrency.get();
        let (critical_path, _) = dag.critical_path_of(&durations);
        let lower_bound = dag.lower_bound_of(&durations, concurrency);
        let (succeeded, skipped, failed, cancelled) = self.counts();
        let start = self.start;
        let tasks = self
            .slots
            .into_iter()
            .enumerate()
            .map(|(task, slot)| {
                let spec = &dag.tasks()[task];
                TaskReport {
                    id: spec.id.clone(),
                    description: spec.description.clone(),
                    complexity: spec.complexity,
                    wave: dag.wave_of(task) + 1,
                    dependencies: dag
                        .prerequisites_of(task)
                        .iter()
                        .map(|&before| dag.id(before).clone())
                        .collect(),
                    status: match slot.state {
                        State::Done(status) => status,
                        // Unreachable once the loop has ended; report it honestly if it happens.
                        State::Waiting | State::Ready | State::Running => TaskStatus::Cancelled,
                    },
                    started_at_ms: slot.started.map(|started| millis(started - start)),
                    elapsed_ms: slot.elapsed.map(millis),
                    session_id: slot.session_id,
                    summary: slot.summary,
                }
            })
            .collect();
        Report {
            summary: summary_line(succeeded, dag.len(), skipped, failed, cancelled),
            plan: dag.plan().clone(),
            fallback: None,
            warnings: Vec::new(),
            waves: dag.waves(),
            strategy: self.options.strategy,
            concurrency,
            tasks,
            succeeded,
            failed,
            skipped,
            cancelled,
            makespan_ms: millis(self.end.unwrap_or(start) - start),
            lower_bound_ms: millis(lower_bound),
            critical_path: critical_path
                .into_iter()
                .map(|task| dag.id(task).clone())
                .collect(),
            stopped: self.stopped,
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload.downcast_ref::<&str>().map_or_else(
            || "(no message)".to_owned(),
            |message| (*message).to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::orchestrator::plan::Plan;

    /// A runner that sleeps each task's duration on tokio's (paused) clock, fails the tasks it
    /// is told to, and records what it saw.
    #[derive(Default)]
    struct FakeRunner {
        seconds: HashMap<TaskId, u64>,
        failing: HashSet<TaskId>,
        /// Ignore cancellation (sleep the full duration regardless).
        stubborn: bool,
        running: AtomicUsize,
        most_running: AtomicUsize,
        saw_cancel: AtomicUsize,
        /// (task, start, end, context) per finished run.
        log: Mutex<Vec<(TaskId, Instant, Instant, TaskContext)>>,
    }

    impl FakeRunner {
        fn new(seconds: &[(&str, u64)]) -> Self {
            Self {
                seconds: seconds
                    .iter()
                    .map(|&(id, secs)| (TaskId::from(id), secs))
                    .collect(),
                ..Self::default()
            }
        }

        fn failing(mut self, ids: &[&str]) -> Self {
            self.failing = ids.iter().copied().map(TaskId::from).collect();
            self
        }

        fn log(&self) -> Vec<(TaskId, Instant, Instant, TaskContext)> {
            crate::sync::lock(&self.log).clone()
        }
    }

    impl TaskRunner for FakeRunner {
        async fn run(&self, task: TaskContext) -> TaskOutcome {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_running.fetch_max(now, Ordering::SeqCst);
            let start = Instant::now();
            let seconds = self.seconds.get(&task.task.id).copied().unwrap_or(1);
            let sleep = tokio::time::sleep(Duration::from_secs(seconds));
            let cancelled = if self.stubborn {
                sleep.await;
                false
            } else {
                tokio::select! {
                    () = task.cancel.cancelled() => true,
                    () = sleep => false,
                }
            };
            self.running.fetch_sub(1, Ordering::SeqCst);
            if cancelled {
                self.saw_cancel.fetch_add(1, Ordering::SeqCst);
            }
            let id = task.task.id.clone();
            crate::sync::lock(&self.log).push((id.clone(), start, Instant::now(), task));
            if cancelled {
                TaskOutcome::failure(format!("{id} cancelled"))
            } else if self.failing.contains(&id) {
                TaskOutcome::failure(format!("{id} broke"))
            } else {
                TaskOutcome::success(format!("{id} done")).with_session_id(format!("s-{id}"))
            }
        }
    }

    fn dag(tasks: &[&str], dependencies: &[(&str, &[&str])]) -> anyhow::Result<Dag> {
        Ok(Dag::new(&Plan {
            tasks: tasks
                .iter()
                .map(|&id| TaskSpec::new(id, format!("do {id}")))
                .collect(),
            dependencies: dependencies
                .iter()
                .map(|(task, on)| {
                    (
                        TaskId::from(*task),
                        on.iter().copied().map(TaskId::from).collect(),
                    )
                })
                .collect(),
        })?)
    }

    /// A seeded random DAG of `count` tasks named `t0…`, each depending on up to 3 earlier ones.
    fn random_dag(seed: u64, count: usize) -> anyhow::Result<(Dag, FakeRunner)> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let names: Vec<String> = (0..count).map(|task| format!("t{task}")).collect();
        let mut dependencies = BTreeMap::new();
        for task in 1..count {
            let on: Vec<TaskId> = (0..rng.usize(0..=task.min(3)))
                .map(|_| TaskId::new(names[rng.usize(0..task)].clone()))
                .collect();
            dependencies.insert(TaskId::new(names[task].clone()), on);
        }
        let plan = Plan {
            tasks: names
                .iter()
                .map(|name| TaskSpec::new(name.as_str(), "x"))
                .collect(),
            dependencies,
        };
        let seconds: Vec<(&str, u64)> = names
            .iter()
            .map(|name| (name.as_str(), rng.u64(1..=20)))
            .collect();
        Ok((Dag::new(&plan)?, FakeRunner::new(&seconds)))
    }

    fn options(strategy: Strategy, concurrency: usize) -> anyhow::Result<RunOptions> {
        Ok(RunOptions {
            strategy,
            concurrency: Concurrency::new(concurrency)?,
            ..RunOptions::default()
        })
    }

    async fn run_collecting(
        dag: &Dag,
        runner: &Arc<FakeRunner>,
        options: &RunOptions,
        cancel: &CancellationToken,
    ) -> (Report, Vec<Event>) {
        let mut events = Vec::new();
        let report = run(dag, Arc::clone(runner), options, cancel, |event| {
            events.push(event);
        })
        .await;
        (report, events)
    }

    #[tokio::test(start_paused = true)]
    async fn concurrency_never_exceeds_the_limit() -> anyhow::Result<()> {
        for (seed, limit) in [(1, 1), (2, 2), (3, 3), (4, 5)] {
            for strategy in [Strategy::Eager, Strategy::Waves] {
                let (dag, runner) = random_dag(seed, 30)?;
                let runner = Arc::new(runner);
                let (report, events) = run_collecting(
                    &dag,
                    &runner,
                    &options(strategy, limit)?,
                    &CancellationToken::new(),
                )
                .await;
                assert_eq!(report.succeeded, 30);
                assert_eq!(runner.most_running.load(Ordering::SeqCst), limit);
                let most_reported = events
                    .iter()
                    .filter_map(|event| match event {
                        Event::TaskStart { running, .. } => Some(*running),
                        _ => None,
                    })
                    .max();
                assert_eq!(most_reported, Some(limit));
            }
        }
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn every_task_starts_after_its_dependencies_and_sees_their_results() -> anyhow::Result<()>
    {
        for strategy in [Strategy::Eager, Strategy::Waves] {
            let (dag, runner) = random_dag(7, 40)?;
            let runner = Arc::new(runner);
            let (report, _) = run_collecting(
                &dag,
                &runner,
                &options(strategy, 4)?,
                &CancellationToken::new(),
            )
            .await;
            assert_eq!(report.summary, "40/40 tasks succeeded, 0 skipped, 0 failed");
            let log = runner.log();
            let finished: HashMap<&TaskId, Instant> =
                log.iter().map(|(id, _, end, _)| (id, *end)).collect();
            for (id, start, _, context) in &log {
                let index = dag.tasks().iter().position(|task| &task.id == id);
                let expected: Vec<DependencyResult> = index
                    .map(|task| dag.prerequisites_of(task))
                    .unwrap_or_default()
                    .iter()
                    .map(|&before| {
                        let before = dag.id(before).clone();
                        assert!(finished[&before] <= *start, "{id} started before {before}");
                        DependencyResult {
                            description: "x".to_owned(),
                            summary: format!("{before} done"),
                            session_id: Some(format!("s-{before}")),
                            id: before,
                        }
                    })
                    .collect();
                assert_eq!(context.dependencies, expected);
            }
        }
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn waves_start_only_after_the_whole_previous_wave() -> anyhow::Result<()> {
        let (dag, runner) = random_dag(11, 25)?;
        let runner = Arc::new(runner);
        run_collecting(
            &dag,
            &runner,
            &options(Strategy::Waves, 3)?,
            &CancellationToken::new(),
        )
        .await;
        let log = runner.log();
        for (_, start, _, context) in &log {
            for (_, _, end, earlier) in &log {
                if earlier.wave < context.wave {
                    assert!(end <= start);
                }
            }
        }
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn failure_skips_each_transitive_dependent_once_naming_the_failed_task()
    -> anyhow::Result<()> {
        // a and g fail; c needs both; b needs a; d needs c; e → f is independent.
        let dag = dag(
            &["a", "b", "c", "d", "e", "f", "g"],
            &[
                ("b", &["a"]),
                ("c", &["a", "b", "g"]),
                ("d", &["c"]),
                ("f", &["e"]),
            ],
        )?;
        let runner = Arc::new(
            FakeRunner::new(&[("a", 2), ("g", 3), ("e", 1), ("f", 5)]).failing(&["a", "g"]),
        );
        let (report, events) = run_collecting(
            &dag,
            &runner,
            &options(Strategy::Eager, 3)?,
            &CancellationToken::new(),
        )
        .await;
        let skipped: Vec<(String, String)> = events
            .iter()
            .filter_map(|event| match event {
                Event::TaskSkipped { task, reason } => Some((task.to_string(), reason.to_string())),
                _ => None,
            })
            .collect();
        assert_eq!(
            skipped,
            vec![
                ("b".to_owned(), "skipped because task a failed".to_owned()),
                ("c".to_owned(), "skipped because task a failed".to_owned()),
                ("d".to_owned(), "skipped because task a failed".to_owned()),
            ]
        );
        let statuses: Vec<(&str, TaskStatus)> = report
            .tasks
            .iter()
            .map(|task| (task.id.as_str(), task.status))
            .collect();
        assert_eq!(
            statuses,
            vec![
                ("a", TaskStatus::Failed),
                ("b", TaskStatus::Skipped),
                ("c", TaskStatus::Skipped),
                ("d", TaskStatus::Skipped),
                ("e", TaskStatus::Succeeded),
                ("f", TaskStatus::Succeeded),
                ("g", TaskStatus::Failed),
            ]
        );
        assert_eq!(report.summary, "2/7 tasks succeeded, 3 skipped, 2 failed");
        // The independent branch ran to the end: e (1 s) then f (5 s).
        assert_eq!(report.makespan_ms, 6_000);
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn eager_finishes_a_skewed_graph_before_waves() -> anyhow::Result<()> {
        // a is long; b is short and c (long) needs only b. Waves make c wait for a.
        let dag = dag(&["a", "b", "c"], &[("c", &["b"])])?;
        let seconds = [("a", 10), ("b", 1), ("c", 10)];
        let mut makespans = Vec::new();
        for strategy in [Strategy::Eager, Strategy::Waves] {
            let runner = Arc::new(FakeRunner::new(&seconds));
            let (report, _) = run_collecting(
                &dag,
                &runner,
                &options(strategy, 3)?,
                &CancellationToken::new(),
            )
            .await;
            assert_eq!(report.lower_bound_ms, 11_000);
            makespans.push(report.makespan_ms);
        }
        assert_eq!(makespans, vec![11_000, 20_000]);
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn eager_starts_the_task_heading_the_longest_chain_first() -> anyhow::Result<()> {
        // One slot; x is alone while l1 heads the chain l1 → l2 → l3, so l1 goes first, then
        // l2; x and l3 then tie (one task left each) and plan order puts x first.
        let dag = dag(
            &["x", "l1", "l2", "l3"],
            &[("l2", &["l1"]), ("l3", &["l2"])],
        )?;
        let runner = Arc::new(FakeRunner::new(&[]));
        run_collecting(
            &dag,
            &runner,
            &options(Strategy::Eager, 1)?,
            &CancellationToken::new(),
        )
        .await;
        let order: Vec<String> = runner.log().iter().map(|(id, ..)| id.to_string()).collect();
        assert_eq!(order, vec!["l1", "l2", "x", "l3"]);
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn events_stream_every_step_in_order() -> anyhow::Result<()> {
        let dag = dag(&["a", "b"], &[("b", &["a"])])?;
        let runner = Arc::new(FakeRunner::new(&[("a", 2), ("b", 3)]));
        let (_, events) = run_collecting(
            &dag,
            &runner,
            &RunOptions::default(),
            &CancellationToken::new(),
        )
        .await;
        let start = |task: &str, wave| Event::TaskStart {
            task: TaskId::from(task),
            description: format!("do {task}"),
            wave,
            running: 1,
        };
        let complete = |task: &str, elapsed_ms| Event::TaskComplete {
            task: TaskId::from(task),
            status: TaskStatus::Succeeded,
            elapsed_ms,
            session_id: Some(format!("s-{task}")),
            summary: format!("{task} done"),
        };
        assert_eq!(
            events,
            vec![
                start("a", 1),
                complete("a", 2_000),
                start("b", 2),
                complete("b", 3_000),
                Event::PlanComplete {
                    summary: "2/2 tasks succeeded, 0 skipped, 0 failed".to_owned(),
                    makespan_ms: 5_000,
                    stopped: None,
                },
            ]
        );
        assert_eq!(
            serde_json::to_value(&events[0])?,
            serde_json::json!({
                "event": "task_start", "task": "a", "description": "do a", "wave": 1, "running": 1
            })
        );
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn cancellation_stops_every_running_task_promptly_and_cancels_the_rest()
    -> anyhow::Result<()> {
        let dag = dag(&["a", "b", "c", "d"], &[("d", &["a"])])?;
        let runner = Arc::new(FakeRunner::new(&[("a", 100), ("b", 100), ("c", 100)]));
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            trigger.cancel();
        });
        let (report, events) =
            run_collecting(&dag, &runner, &options(Strategy::Eager, 2)?, &cancel).await;
        assert_eq!(report.stopped, Some(RunStop::Cancelled));
        assert_eq!(report.makespan_ms, 5_000);
        assert_eq!(runner.saw_cancel.load(Ordering::SeqCst), 2);
        let statuses: Vec<TaskStatus> = report.tasks.iter().map(|task| task.status).collect();
        assert_eq!(statuses, vec![TaskStatus::Cancelled; 4]);
        assert_eq!(
            report.summary,
            "0/4 tasks succeeded, 0 skipped, 0 failed, 4 cancelled"
        );
        let skipped = events
            .iter()
            .filter(|event| matches!(event, Event::TaskSkipped { .. }))
            .count();
        assert_eq!(skipped, 2);
        assert_eq!(
            report.task("c").map(|task| task.summary.as_str()),
            Some("not started: the orchestration was cancelled")
        );
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn token_cancelled_before_the_run_starts_no_task() -> anyhow::Result<()> {
        let dag = dag(&["a", "b"], &[])?;
        let runner = Arc::new(FakeRunner::new(&[]));
        let cancel = CancellationToken::new();
        cancel.cancel();
        let (report, _) = run_collecting(&dag, &runner, &RunOptions::default(), &cancel).await;
        assert_eq!(runner.log().len(), 0);
        assert_eq!(report.stopped, Some(RunStop::Cancelled));
        assert_eq!(
            report.summary,
            "0/2 tasks succeeded, 0 skipped, 0 failed, 2 cancelled"
        );
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn a_timeout_used_up_before_the_run_starts_no_task_and_is_reported_whole()
    -> anyhow::Result<()> {
        let dag = dag(&["a", "b"], &[("b", &["a"])])?;
        let runner = Arc::new(FakeRunner::new(&[("a", 1)]));
        let options = RunOptions {
            timeout: Some(Duration::from_secs(5)),
            timeout_spent: Duration::from_secs(6),
            ..RunOptions::default()
        };
        let (report, events) =
            run_collecting(&dag, &runner, &options, &CancellationToken::new()).await;
        assert_eq!(runner.log().len(), 0);
        assert!(
            !events
                .iter()
                .any(|event| matches!(event, Event::TaskStart { .. })),
            "{events:?}"
        );
        assert_eq!(
            report.stopped,
            Some(RunStop::TimedOut { timeout_ms: 5_000 })
        );
        assert_eq!(
            report.summary,
            "0/2 tasks succeeded, 0 skipped, 0 failed, 2 cancelled"
        );
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn a_partly_spent_timeout_stops_the_run_sooner() -> anyhow::Result<()> {
        let dag = dag(&["a"], &[])?;
        let runner = Arc::new(FakeRunner::new(&[("a", 100)]));
        let options = RunOptions {
            timeout: Some(Duration::from_secs(5)),
            timeout_spent: Duration::from_secs(2),
            ..RunOptions::default()
        };
        let (report, _) = run_collecting(&dag, &runner, &options, &CancellationToken::new()).await;
        assert_eq!(report.makespan_ms, 3_000);
        assert_eq!(
            report.stopped,
            Some(RunStop::TimedOut { timeout_ms: 5_000 })
        );
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn timeout_cancels_the_run_and_stubborn_runners_are_aborted_after_the_grace()
    -> anyhow::Result<()> {
        let dag = dag(&["a", "b"], &[("b", &["a"])])?;
        let runner = Arc::new(FakeRunner {
            stubborn: true,
            ..FakeRunner::new(&[("a", 100)])
        });
        let options = RunOptions {
            timeout: Some(Duration::from_secs(3)),
            cancel_grace: Duration::from_secs(2),
            ..RunOptions::default()
        };
        let (report, _) = run_collecting(&dag, &runner, &options, &CancellationToken::new()).await;
        assert_eq!(
            report.stopped,
            Some(RunStop::TimedOut { timeout_ms: 3_000 })
        );
        assert_eq!(report.makespan_ms, 5_000);
        let summaries: Vec<(TaskStatus, &str)> = report
            .tasks
            .iter()
            .map(|task| (task.status, task.summary.as_str()))
            .collect();
        assert_eq!(
            summaries,
            vec![
                (
                    TaskStatus::Cancelled,
                    "aborted: still running 2000 ms after cancellation"
                ),
                (
                    TaskStatus::Cancelled,
                    "not started: the orchestration timed out after 3000 ms"
                ),
            ]
        );
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn panicking_runner_fails_its_task_and_skips_its_dependents() -> anyhow::Result<()> {
        let dag = dag(&["a", "b", "c"], &[("b", &["a"])])?;
        let runner = |task: TaskContext| async move {
            assert!(task.task.id.as_str() != "a", "boom");
            TaskOutcome::success("ok")
        };
        let report = run(
            &dag,
            Arc::new(runner),
            &RunOptions::default(),
            &CancellationToken::new(),
            |_| {},
        )
        .await;
        let summaries: Vec<(TaskStatus, &str)> = report
            .tasks
            .iter()
            .map(|task| (task.status, task.summary.as_str()))
            .collect();
        assert_eq!(
            summaries,
            vec![
                (TaskStatus::Failed, "the task runner panicked: boom"),
                (TaskStatus::Skipped, "skipped because task a failed"),
                (TaskStatus::Succeeded, "ok"),
            ]
        );
        Ok(())
    }

    #[test]
    fn concurrency_outside_one_to_ten_is_rejected() {
        assert_eq!(Concurrency::new(0), Err(ConcurrencyError { value: 0 }));
        assert_eq!(Concurrency::new(11), Err(ConcurrencyError { value: 11 }));
        assert_eq!(Concurrency::new(10).map(Concurrency::get), Ok(10));
        assert_eq!(Concurrency::default().get(), 3);
        assert_eq!(
            ConcurrencyError { value: 0 }.to_string(),
            "maxConcurrency must be between 1 and 10, got 0"
        );
    }
}
