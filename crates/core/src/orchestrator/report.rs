//! The result of running a plan: per-task outcomes, the summary line, the makespan and the lower
//! bound it is measured against. Serializable (camelCase) so the bridge can return it as
//! structured tool content.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::plan::{Complexity, Plan, PlanWarning};
use super::types::{PlanFallback, RunStop, Strategy, TaskId, TaskStatus};

/// What happened to one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskReport {
    /// The task.
    pub id: TaskId,
    /// Its description.
    pub description: String,
    /// Its size estimate.
    pub complexity: Complexity,
    /// Its wave, counting from 1.
    pub wave: usize,
    /// The tasks it depends on.
    pub dependencies: Vec<TaskId>,
    /// How it ended.
    pub status: TaskStatus,
    /// When it started, in ms after the run started; `None` if it never started.
    pub started_at_ms: Option<u64>,
    /// How long it ran; `None` if it never started.
    pub elapsed_ms: Option<u64>,
    /// The runner's opaque session id, if it reported one.
    pub session_id: Option<String>,
    /// The runner's summary, the error, or why the task never started.
    pub summary: String,
}

/// The result of running a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `N/M tasks succeeded, S skipped, F failed` (plus `, C cancelled` when any were).
    pub summary: String,
    /// The plan that ran.
    pub plan: Plan,
    /// Why the plan is the single-task fallback rather than the model's, if it is.
    pub fallback: Option<PlanFallback>,
    /// Repairs the plan parser made to the model's plan.
    pub warnings: Vec<PlanWarning>,
    /// The plan's waves (always computed, whatever the strategy).
    pub waves: Vec<Vec<TaskId>>,
    /// How ready tasks were released.
    pub strategy: Strategy,
    /// Most tasks allowed to run at once.
    pub concurrency: usize,
    /// One entry per task, in plan order.
    pub tasks: Vec<TaskReport>,
    /// Tasks that succeeded.
    pub succeeded: usize,
    /// Tasks that failed.
    pub failed: usize,
    /// Tasks skipped because a dependency failed.
    pub skipped: usize,
    /// Tasks cancelled, running or not.
    pub cancelled: usize,
    /// Time from the start of the run to the end of the last task.
    pub makespan_ms: u64,
    /// `max(critical path, total work / concurrency)` over the measured task durations: no
    /// schedule of the same work could have finished sooner.
    pub lower_bound_ms: u64,
    /// The longest chain of dependent tasks under the measured durations.
    pub critical_path: Vec<TaskId>,
    /// Set when the run was cancelled or timed out.
    pub stopped: Option<RunStop>,
}

impl Report {
    /// The entry of one task.
    pub fn task(&self, id: &str) -> Option<&TaskReport> {
        self.tasks.iter().find(|task| task.id.as_str() == id)
    }

    /// Whether every task succeeded.
    pub fn all_succeeded(&self) -> bool {
        self.succeeded == self.tasks.len()
    }
}

/// The summary line: `N/M tasks succeeded, S skipped, F failed`, with `, C cancelled` appended
/// only when some were, so an ordinary run reads exactly as the original did.
pub(super) fn summary_line(
    succeeded: usize,
    total: usize,
    skipped: usize,
    failed: usize,
    cancelled: usize,
) -> String {
    let mut line =
        format!("{succeeded}/{total} tasks succeeded, {skipped} skipped, {failed} failed");
    if cancelled > 0 {
        let _ = write!(line, ", {cancelled} cancelled");
    }
    line
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn summary_line_mentions_cancellations_only_when_there_are_some() {
        assert_eq!(
            summary_line(2, 4, 1, 1, 0),
            "2/4 tasks succeeded, 1 skipped, 1 failed"
        );
        assert_eq!(
            summary_line(1, 4, 0, 0, 3),
            "1/4 tasks succeeded, 0 skipped, 0 failed, 3 cancelled"
        );
    }

    #[test]
    fn stop_reasons_serialize_tagged() -> anyhow::Result<()> {
        assert_eq!(
            serde_json::to_value(RunStop::TimedOut { timeout_ms: 5 })?,
            serde_json::json!({"kind": "timedOut", "timeoutMs": 5})
        );
        Ok(())
    }
}
