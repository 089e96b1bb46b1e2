//! MCP tasks (the `io.modelcontextprotocol/tasks` extension) for the long-running tools, driven
//! by rmcp's own client against the real bridge, the real Copilot CLI and the scripted model: a
//! client that declares the extension gets a task, polls it to the finished result, and can
//! cancel one mid-turn; a client that does not declare it gets the synchronous answer.

use std::time::{Duration, Instant};

use bridge_test_support::{CopilotBed, Reply, binary_path};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, ProtocolVersion, TaskPayload, TaskStatus,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::process::Command;

use super::bridge_code::{TASK, bridge_env};

async fn connect(
    bed: &CopilotBed,
    config: ClientConfig,
) -> anyhow::Result<RunningService<RoleClient, ClientConfig>> {
    let mut command = Command::new(binary_path("copilot-bridge"));
    command
        .arg("--workspace")
        .arg(bed.workspace())
        .env_clear()
        .env("HOME", bed.home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env(
            "RUST_LOG",
            std::env::var("BRIDGE_TEST_LOG").unwrap_or_else(|_| "warn".to_owned()),
        )
        .envs(bridge_env(bed))
        .current_dir(bed.home());
    Ok(config.serve(TokioChildProcess::new(command)?).await?)
}

fn task_client() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("tasks-test", "0"),
    )
}

fn call(prompt: &str) -> CallToolRequestParams {
    let arguments = json!({"prompt": prompt});
    CallToolRequestParams::new("copilot_code_task")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

/// Polls `tasks/get` until the task leaves `working`.
async fn settle(
    client: &RunningService<RoleClient, ClientConfig>,
    task_id: &str,
) -> anyhow::Result<rmcp::model::GetTaskResult> {
    let deadline = Instant::now() + TASK;
    loop {
        let state = client.get_task(GetTaskParams::new(task_id)).await?;
        if state.task.status() != TaskStatus::Working || Instant::now() > deadline {
            return Ok(state);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_client_declaring_tasks_gets_a_task_it_polls_to_the_result_or_cancels()
-> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model
        .script("TASK-DONE", [Reply::text("finished as a task")]);
    bed.model.script("TASK-HANG", [Reply::hang("still going ")]);
    let client = connect(&bed, task_client()).await?;

    let CallToolResponse::Task(created) = client.call_tool_once(call("TASK-DONE")).await? else {
        anyhow::bail!("expected a task for a client that declared the extension");
    };
    assert!(
        created.task.ttl_ms.is_some_and(|ttl| ttl >= 3_600_000),
        "{created:?}"
    );
    let done = settle(&client, &created.task.task_id).await?;
    let TaskPayload::Completed { result } = &done.task.payload else {
        anyhow::bail!("the task did not complete: {done:?}");
    };
    let result = Value::Object(result.clone());
    assert_eq!(
        result["structuredContent"]["text"], "finished as a task",
        "{result}"
    );

    let CallToolResponse::Task(hanging) = client.call_tool_once(call("TASK-HANG")).await? else {
        anyhow::bail!("expected a task");
    };
    bed.model
        .wait_for_chat_requests("TASK-HANG", 1, TASK)
        .await?;
    client
        .cancel_task(CancelTaskParams::new(hanging.task.task_id.clone()))
        .await?;
    let cancelled = settle(&client, &hanging.task.task_id).await?;
    assert_eq!(
        cancelled.task.status(),
        TaskStatus::Cancelled,
        "{cancelled:?}"
    );

    // A file tool is quick and never becomes a task, even for this client.
    let quick = client
        .call_tool_once(
            CallToolRequestParams::new("copilot_list_files").with_arguments(serde_json::Map::new()),
        )
        .await?;
    assert!(matches!(quick, CallToolResponse::Complete(_)), "{quick:?}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_client_without_the_extension_gets_the_synchronous_answer() -> anyhow::Result<()> {
    let bed = CopilotBed::start().await?;
    bed.model
        .script("SYNC-DONE", [Reply::text("answered in place")]);
    let legacy = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("legacy-test", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_06_18);
    let client = connect(&bed, legacy).await?;
    let CallToolResponse::Complete(result) = client.call_tool_once(call("SYNC-DONE")).await? else {
        anyhow::bail!("a client without the extension must not get a task");
    };
    let value = result
        .structured_content
        .ok_or_else(|| anyhow::anyhow!("no structured content"))?;
    assert_eq!(value["text"], "answered in place", "{value}");
    client.cancel().await?;
    Ok(())
}
