//! The two prompts of an orchestration, protocol-free: the one asking a model to plan a task,
//! and the one handing a sub-task (with its dependencies' results) to its own session.

use std::fmt::Write as _;

use super::plan::MAX_TASKS;
use super::schedule::TaskContext;

/// Most characters of one dependency's summary quoted in a sub-task prompt: enough for a
/// paragraph about files and decisions, and keeps a prompt with several dependencies small.
pub const MAX_DEPENDENCY_SUMMARY_CHARS: usize = 2_000;

/// Most sub-tasks the planning prompt asks for: more sessions than the pool can run at once
/// mostly add coordination overhead. Far below the parser's hard limit ([`MAX_TASKS`]).
const SUGGESTED_MAX_TASKS: usize = 8;

const _: () = assert!(SUGGESTED_MAX_TASKS <= MAX_TASKS);

/// The prompt asking a model to decompose `task` into the plan [`parse_plan`](super::parse_plan)
/// reads.
pub fn planning_prompt(task: &str) -> String {
    format!(
        "Plan the following coding task as sub-tasks for separate sessions that run in \
         parallel where they can. Do not carry out the task; only plan it.\n\
         \n\
         Task:\n\
         {task}\n\
         \n\
         Reply with a single JSON object and nothing else, shaped like this:\n\
         {{\"tasks\":[{{\"id\":\"t1\",\"description\":\"…\",\"estimatedComplexity\":\"S\"}},\
         {{\"id\":\"t2\",\"description\":\"…\",\"estimatedComplexity\":\"M\"}}],\
         \"dependencies\":{{\"t2\":[\"t1\"]}}}}\n\
         \n\
         Rules:\n\
         - Use 1 to {SUGGESTED_MAX_TASKS} sub-tasks. A small task is one sub-task.\n\
         - Each description must stand on its own: its session sees only that description and \
         the results of the sub-tasks it depends on, not this conversation.\n\
         - \"dependencies\" maps a sub-task id to the ids that must finish before it starts. \
         List only real dependencies; sub-tasks without them run at the same time.\n\
         - The dependencies must not form a cycle.\n\
         - Give sub-tasks that touch the same files a dependency, so they do not edit at once.\n\
         - estimatedComplexity is S (small), M (medium) or L (large)."
    )
}

/// The prompt for one sub-task of `goal`, quoting the summaries of the tasks it depends on
/// (each cut to [`MAX_DEPENDENCY_SUMMARY_CHARS`]).
pub fn subtask_prompt(goal: &str, context: &TaskContext) -> String {
    let task = &context.task;
    let mut prompt = format!(
        "You are carrying out one sub-task of a larger task; other sessions handle the other \
         sub-tasks.\n\
         \n\
         Overall task:\n\
         {goal}\n\
         \n\
         Your sub-task ({id}):\n\
         {description}\n",
        id = task.id,
        description = task.description,
    );
    if !context.dependencies.is_empty() {
        prompt.push_str("\nThese sub-tasks are already done; build on their results:\n");
        for dependency in &context.dependencies {
            let _ = write!(
                prompt,
                "\n### {id}: {description}\n{summary}\n",
                id = dependency.id,
                description = dependency.description,
                summary = cut(&dependency.summary, MAX_DEPENDENCY_SUMMARY_CHARS),
            );
        }
    }
    prompt.push_str(
        "\nDo only your sub-task. When you are done, reply with a short summary of what you \
         changed (files, decisions) for the sub-tasks that build on yours.",
    );
    prompt
}

/// `text` cut to at most `max_chars` characters, with a marker when something was cut.
fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}… [cut]", &text[..end]),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::orchestrator::{DependencyResult, TaskId, TaskSpec, parse_plan};

    #[test]
    fn planning_prompt_example_is_a_plan_the_parser_accepts() -> anyhow::Result<()> {
        let prompt = planning_prompt("add a --json flag");
        assert!(prompt.contains("add a --json flag"));
        let parsed = parse_plan(&prompt)?;
        assert_eq!(parsed.plan.tasks.len(), 2);
        assert_eq!(parsed.warnings, vec![]);
        Ok(())
    }

    #[test]
    fn subtask_prompt_quotes_dependency_results_and_cuts_long_ones() {
        let long = "é".repeat(MAX_DEPENDENCY_SUMMARY_CHARS + 5);
        let context = TaskContext {
            task: TaskSpec::new("t3", "write the tests"),
            wave: 2,
            dependencies: vec![
                DependencyResult {
                    id: TaskId::from("t1"),
                    description: "write the parser".to_owned(),
                    summary: "added src/parse.rs".to_owned(),
                    session_id: None,
                },
                DependencyResult {
                    id: TaskId::from("t2"),
                    description: "write docs".to_owned(),
                    summary: long,
                    session_id: Some("s-2".to_owned()),
                },
            ],
            cancel: CancellationToken::new(),
        };
        let prompt = subtask_prompt("ship the parser", &context);
        let expected = format!(
            "You are carrying out one sub-task of a larger task; other sessions handle the other \
             sub-tasks.\n\nOverall task:\nship the parser\n\nYour sub-task (t3):\nwrite the tests\n\
             \nThese sub-tasks are already done; build on their results:\n\
             \n### t1: write the parser\nadded src/parse.rs\n\
             \n### t2: write docs\n{}… [cut]\n\
             \nDo only your sub-task. When you are done, reply with a short summary of what you \
             changed (files, decisions) for the sub-tasks that build on yours.",
            "é".repeat(MAX_DEPENDENCY_SUMMARY_CHARS)
        );
        assert_eq!(prompt, expected);
    }
}
