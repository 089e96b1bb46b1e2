//! The orchestrator as the bridge uses it, through the public API only: a model's reply becomes a
//! validated plan (or the single-task fallback), a runner carries out each sub-task with a
//! prompt that quotes its dependencies' results, events stream through a channel, and the
//! report serializes to the structured content the tool returns.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_core::orchestrator::{
    DagError, Event, Planned, RunOptions, TaskContext, TaskId, TaskOutcome, TaskRunner,
    parse_plan_value, subtask_prompt,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const GOAL: &str = "add a CSV export to the report page";

/// Stands in for the bridge's Copilot runner: "works" for a second per complexity weight on the
/// paused clock, fails the tasks whose description says so, and keeps every prompt it was given.
#[derive(Default)]
struct ScriptedRunner {
    prompts: Mutex<Vec<String>>,
}

impl TaskRunner for ScriptedRunner {
    async fn run(&self, task: TaskContext) -> TaskOutcome {
        let prompt = subtask_prompt(GOAL, &task);
        if let Ok(mut prompts) = self.prompts.lock() {
            prompts.push(prompt);
        }
        let work = Duration::from_secs(u64::from(task.task.complexity.weight()));
        tokio::select! {
            () = task.cancel.cancelled() => return TaskOutcome::failure("cancelled"),
            () = tokio::time::sleep(work) => {}
        }
        let id = &task.task.id;
        if task.task.description.contains("(breaks)") {
            TaskOutcome::failure(format!("{id}: the build failed"))
                .with_session_id(format!("s-{id}"))
        } else {
            TaskOutcome::success(format!("{id}: wrote {id}.rs")).with_session_id(format!("s-{id}"))
        }
    }
}

const REPLY: &str = "Sure! Here is how I would split it up:\n\
```json\n\
{\n\
  \"tasks\": [\n\
    {\"id\": \"t1\", \"description\": \"add the CSV writer\", \"estimatedComplexity\": \"M\"},\n\
    {\"id\": \"t2\", \"description\": \"add the export button (breaks)\", \"estimatedComplexity\": \"S\"},\n\
    {\"id\": \"t3\", \"description\": \"test the button\", \"estimatedComplexity\": \"S\"},\n\
    {\"id\": \"t4\", \"description\": \"document the export\"},\n\
  ],\n\
  \"dependencies\": {\"t2\": [\"t1\"], \"t3\": [\"t2\", \"t9\"], \"t4\": [\"t1\"]}\n\
}\n\
```\n\
Each sub-task is small.";

#[tokio::test(start_paused = true)]
async fn model_plan_runs_with_dependency_results_skips_and_a_structured_report()
-> anyhow::Result<()> {
    let planned = Planned::from_reply(GOAL, REPLY);
    let runner = Arc::new(ScriptedRunner::default());
    let (events_tx, mut events_rx) = mpsc::unbounded_channel();
    let report = planned
        .run(
            Arc::clone(&runner),
            &RunOptions::default(),
            &CancellationToken::new(),
            move |event| {
                let _ = events_tx.send(event);
            },
        )
        .await;

    assert_eq!(
        serde_json::to_value(&report)?,
        json!({
            "summary": "2/4 tasks succeeded, 1 skipped, 1 failed",
            "plan": {
                "tasks": [
                    {"id": "t1", "description": "add the CSV writer", "estimatedComplexity": "M"},
                    {"id": "t2", "description": "add the export button (breaks)", "estimatedComplexity": "S"},
                    {"id": "t3", "description": "test the button", "estimatedComplexity": "S"},
                    {"id": "t4", "description": "document the export", "estimatedComplexity": "M"},
                ],
                "dependencies": {"t2": ["t1"], "t3": ["t2"], "t4": ["t1"]},
            },
            "fallback": null,
            "warnings": [{"kind": "unknownDependency", "task": "t3", "dependency": "t9"}],
            "waves": [["t1"], ["t2", "t4"], ["t3"]],
            "strategy": "eager",
            "concurrency": 3,
            "tasks": [
                {
                    "id": "t1", "description": "add the CSV writer", "complexity": "M",
                    "wave": 1, "dependencies": [], "status": "succeeded",
                    "startedAtMs": 0, "elapsedMs": 2000, "sessionId": "s-t1",
                    "summary": "t1: wrote t1.rs",
                },
                {
                    "id": "t2", "description": "add the export button (breaks)", "complexity": "S",
                    "wave": 2, "dependencies": ["t1"], "status": "failed",
                    "startedAtMs": 2000, "elapsedMs": 1000, "sessionId": "s-t2",
                    "summary": "t2: the build failed",
                },
                {
                    "id": "t3", "description": "test the button", "complexity": "S",
                    "wave": 3, "dependencies": ["t2"], "status": "skipped",
                    "startedAtMs": null, "elapsedMs": null, "sessionId": null,
                    "summary": "skipped because task t2 failed",
                },
                {
                    "id": "t4", "description": "document the export", "complexity": "M",
                    "wave": 2, "dependencies": ["t1"], "status": "succeeded",
                    "startedAtMs": 2000, "elapsedMs": 2000, "sessionId": "s-t4",
                    "summary": "t4: wrote t4.rs",
                },
            ],
            "succeeded": 2,
            "failed": 1,
            "skipped": 1,
            "cancelled": 0,
            "makespanMs": 4000,
            "lowerBoundMs": 4000,
            "criticalPath": ["t1", "t4"],
            "stopped": null,
        })
    );

    let mut names = Vec::new();
    while let Ok(event) = events_rx.try_recv() {
        names.push(match event {
            Event::TaskStart { task, .. } => format!("start {task}"),
            Event::TaskComplete { task, status, .. } => format!("{status} {task}"),
            Event::TaskSkipped { task, .. } => format!("skip {task}"),
            Event::PlanComplete { summary, .. } => summary,
        });
    }
    assert_eq!(
        names,
        vec![
            "start t1",
            "succeeded t1",
            "start t2",
            "start t4",
            "failed t2",
            "skip t3",
            "succeeded t4",
            "2/4 tasks succeeded, 1 skipped, 1 failed",
        ]
    );

    let prompts = runner.prompts.lock().map(|p| p.clone()).unwrap_or_default();
    assert_eq!(prompts.len(), 3);
    assert!(prompts[1].contains("Your sub-task (t2):\nadd the export button (breaks)"));
    assert!(prompts[1].contains("### t1: add the CSV writer\nt1: wrote t1.rs\n"));
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn unusable_reply_runs_the_whole_task_as_one_session_and_says_why() -> anyhow::Result<()> {
    let planned = Planned::from_reply(GOAL, "I would rather just do it in one go.");
    let report = planned
        .run(
            Arc::new(ScriptedRunner::default()),
            &RunOptions::default(),
            &CancellationToken::new(),
            |_| {},
        )
        .await;
    assert_eq!(report.summary, "1/1 tasks succeeded, 0 skipped, 0 failed");
    assert_eq!(report.plan.tasks[0].description, GOAL);
    assert_eq!(
        serde_json::to_value(&report.fallback)?,
        json!({"reason": "the model's plan could not be read: the reply contains no JSON; \
                          expected an object like \
                          {\"tasks\":[{\"id\":\"t1\",\"description\":\"…\"}],\"dependencies\":{}}"})
    );
    Ok(())
}

#[test]
fn callers_cyclic_plan_is_an_error_that_names_the_cycle() -> anyhow::Result<()> {
    let parsed = parse_plan_value(&json!({
        "tasks": [
            {"id": "lint", "description": "fix lints"},
            {"id": "a", "description": "x"},
            {"id": "b", "description": "y"},
        ],
        "dependencies": {"a": ["b"], "b": ["a"], "lint": ["a"]},
    }))?;
    let err = Planned::from_parsed(parsed).err();
    assert_eq!(
        err,
        Some(DagError::Cycle {
            tasks: vec![TaskId::from("a"), TaskId::from("b")],
        })
    );
    Ok(())
}
