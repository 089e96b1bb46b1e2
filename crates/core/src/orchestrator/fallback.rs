//! Choosing the plan to run: the model's plan when it parses and validates, else the whole task
//! as a single sub-task, with the reason recorded so the result can say why.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::dag::{Dag, DagError};
use super::event::Event;
use super::plan::{ParsedPlan, Plan, PlanWarning, parse_plan};
use super::report::Report;
use super::schedule::{RunOptions, TaskRunner, run};
use super::types::PlanFallback;

/// A plan ready to run: validated, with the parser's repairs and, for the fallback, the reason.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The validated graph (its [`Dag::plan`] is the plan).
    pub dag: Dag,
    /// Repairs the parser made (empty for the fallback).
    pub warnings: Vec<PlanWarning>,
    /// Set when this is the single-task fallback.
    pub fallback: Option<PlanFallback>,
}

impl Planned {
    /// Reads the model's planning reply; on any parse or validation failure falls back to `task`
    /// as a single sub-task and records why.
    pub fn from_reply(task: &str, reply: &str) -> Self {
        match parse_plan(reply) {
            Ok(parsed) => Self::from_parsed(parsed).unwrap_or_else(|err| {
                Self::fallback(task, format!("the model's plan is invalid: {err}"))
            }),
            Err(err) => Self::fallback(task, format!("the model's plan could not be read: {err}")),
        }
    }

    /// Validates a parsed plan (e.g. one a caller passed in), without falling back: a caller's
    /// own plan that does not validate is the caller's to fix.
    pub fn from_parsed(parsed: ParsedPlan) -> Result<Self, DagError> {
        Ok(Self {
            dag: Dag::new(&parsed.plan)?,
            warnings: parsed.warnings,
            fallback: None,
        })
    }

    /// The single-task fallback for `task`, e.g. when the planning session itself failed.
    pub fn fallback(task: &str, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        tracing::info!(%reason, "orchestrator: falling back to a single-task plan");
        Self {
            dag: Dag::single_task(task),
            warnings: Vec::new(),
            fallback: Some(PlanFallback { reason }),
        }
    }

    /// The plan that will run.
    pub fn plan(&self) -> &Plan {
        self.dag.plan()
    }

    /// Runs the plan ([`run`]) and puts the parser's warnings and the fallback reason into the
    /// report.
    pub async fn run<R>(
        &self,
        runner: Arc<R>,
        options: &RunOptions,
        cancel: &CancellationToken,
        on_event: impl FnMut(Event) + Send,
    ) -> Report
    where
        R: TaskRunner + 'static,
    {
        let mut report = run(&self.dag, runner, options, cancel, on_event).await;
        report.warnings.clone_from(&self.warnings);
        report.fallback.clone_from(&self.fallback);
        report
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::orchestrator::{PlanWarning, TaskId};

    #[test]
    fn valid_reply_keeps_the_models_plan_and_its_warnings() {
        let planned = Planned::from_reply(
            "build it",
            r#"{"tasks":[{"id":"a","description":"x"},{"id":"b","description":"y","deps":["a","q"]}]}"#,
        );
        assert_eq!(planned.fallback, None);
        assert_eq!(planned.plan().tasks.len(), 2);
        assert_eq!(
            planned.warnings,
            vec![PlanWarning::UnknownDependency {
                task: TaskId::from("b"),
                dependency: TaskId::from("q"),
            }]
        );
    }

    #[test]
    fn cyclic_plan_falls_back_naming_the_cycle() {
        let planned = Planned::from_reply(
            "build it",
            r#"{"tasks":[{"id":"a","description":"x"},{"id":"b","description":"y"}],"dependencies":{"a":["b"],"b":["a"]}}"#,
        );
        assert_eq!(planned.plan(), &Plan::single_task("build it"));
        assert_eq!(
            planned.fallback,
            Some(PlanFallback {
                reason: "the model's plan is invalid: the plan's dependencies form a cycle: \
                         a needs b needs a; remove one of these dependencies"
                    .to_owned()
            })
        );
    }

    #[test]
    fn unreadable_reply_falls_back_with_the_parse_error() {
        let planned = Planned::from_reply("build it", "Sorry, I can't help with that.");
        assert_eq!(planned.plan(), &Plan::single_task("build it"));
        assert_eq!(
            planned.fallback.map(|fallback| fallback.reason),
            Some(
                "the model's plan could not be read: the reply contains no JSON; expected an \
                 object like {\"tasks\":[{\"id\":\"t1\",\"description\":\"…\"}],\"dependencies\":{}}"
                    .to_owned()
            )
        );
    }
}
