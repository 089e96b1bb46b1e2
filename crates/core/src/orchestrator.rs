//! The task orchestrator: turn a model's plan for a big task into a dependency graph and run it
//! through a caller-supplied [`TaskRunner`] with a bounded number of parallel sessions.
//!
//! Nothing here knows about Copilot: the bridge supplies the runner, asks the model for a plan
//! with [`planning_prompt`], and returns the [`Report`] as structured content. The flow:
//!
//! 1. [`Planned::from_reply`] parses the model's reply leniently ([`parse_plan`]), validates it
//!    with Kahn's algorithm ([`Dag::new`]) and falls back to a single-task plan on any failure,
//!    recording why ([`PlanFallback`]).
//! 2. [`Planned::run`] (or [`run`] on a bare [`Dag`]) schedules the tasks `eager`ly or in
//!    `waves`, streams [`Event`]s, and returns the [`Report`].
//!
//! The modules form a one-way stack; each imports only the ones below it: `types` (the shared
//! vocabulary: [`TaskId`], [`TaskStatus`], [`RunStop`], [`SkipReason`], [`Strategy`],
//! [`PlanFallback`]) ← `plan` ← `dag` ← `event` ← `report` ← `schedule` ← `prompt`, `fallback`.
//!
//! ```
//! use std::sync::Arc;
//!
//! use bridge_core::orchestrator::{Planned, RunOptions, TaskContext, TaskOutcome, subtask_prompt};
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let goal = "ship the feature";
//! let reply = r#"Plan: {"tasks":[{"id":"t1","description":"write it"},
//!     {"id":"t2","description":"test it"}],"dependencies":{"t2":["t1"]}}"#;
//! let planned = Planned::from_reply(goal, reply);
//! assert!(planned.fallback.is_none());
//! let runner = move |task: TaskContext| async move {
//!     let _prompt = subtask_prompt(goal, &task); // what the bridge sends to a session
//!     TaskOutcome::success(format!("{} done", task.task.id))
//! };
//! let cancel = CancellationToken::new();
//! let report = planned.run(Arc::new(runner), &RunOptions::default(), &cancel, |_event| {}).await;
//! assert_eq!(report.summary, "2/2 tasks succeeded, 0 skipped, 0 failed");
//! # }
//! ```

mod dag;
mod event;
mod fallback;
mod plan;
mod prompt;
mod report;
mod schedule;
mod types;

pub use self::dag::{CriticalPath, Dag, DagError};
pub use self::event::Event;
pub use self::fallback::Planned;
pub use self::plan::{
    Complexity, MAX_REPLY_BYTES, MAX_TASKS, ParsedPlan, Plan, PlanError, PlanWarning, TaskSpec,
    parse_plan, parse_plan_value,
};
pub use self::prompt::{MAX_DEPENDENCY_SUMMARY_CHARS, planning_prompt, subtask_prompt};
pub use self::report::{Report, TaskReport};
pub use self::schedule::{
    Concurrency, ConcurrencyError, DEFAULT_CANCEL_GRACE, DependencyResult, RunOptions, TaskContext,
    TaskOutcome, TaskRunner, run,
};
pub use self::types::{
    PlanFallback, RunStop, SkipReason, Strategy, StrategyError, TaskId, TaskStatus,
};
