//! What the scheduler tells its caller while a plan runs: one [`Event`] per task start, finish
//! and skip, and one when the plan is done. The bridge relays them as MCP progress.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::types::{RunStop, SkipReason, TaskId, TaskStatus};

/// One step of a running plan. Serialized as `{"event": "task_start", …}` with camelCase fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "event",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    /// A task got a session slot and its runner was called.
    TaskStart {
        /// The task.
        task: TaskId,
        /// Its description.
        description: String,
        /// Its wave, counting from 1.
        wave: usize,
        /// Tasks running now, this one included.
        running: usize,
    },
    /// A task's runner returned (or panicked, or was cancelled).
    TaskComplete {
        /// The task.
        task: TaskId,
        /// `succeeded`, `failed` or `cancelled`.
        status: TaskStatus,
        /// Time from its start to now.
        elapsed_ms: u64,
        /// The runner's session id, if it reported one.
        session_id: Option<String>,
        /// The runner's summary, or the error.
        summary: String,
    },
    /// A task will not run. Sent once per task.
    TaskSkipped {
        /// The task.
        task: TaskId,
        /// Why.
        reason: SkipReason,
    },
    /// Every task has finished or been skipped.
    PlanComplete {
        /// `N/M tasks succeeded, S skipped, F failed`.
        summary: String,
        /// Time from the first start to now.
        makespan_ms: u64,
        /// Set when the run was cancelled or timed out.
        stopped: Option<RunStop>,
    },
}
