//! The whole loop with a real OpenClaw agent turn: after `copilot-bridge register openclaw`, an
//! embedded OpenClaw 2026.9.6 agent (`openclaw agent --local`) driven by a scripted model on
//! loopback calls a bridge tool, and the tool's answer reaches the model: a file tool the bridge
//! answers itself, and a delegated task the bridge hands to the real Copilot CLI (BYOK against
//! the same scripted model server).

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use bridge_test_support::{
    BYOK_API_KEY, MODEL_ID, ModelServer, RecordedRequest, Reply, binary_path, copilot_cli, openclaw,
};
use serde_json::{Value, json};
use tempfile::TempDir;

/// An embedded agent turn: OpenClaw's start (6–14 s), the MCP servers' start, the Copilot CLI's
/// start and turn when a task is delegated, three model calls.
const TURN_TIMEOUT: Duration = Duration::from_mins(4);
/// What OpenClaw's scripted model answers after seeing the tool's result.
const ANSWER: &str = "The tool answered.";

/// Registers both servers with OpenClaw in `home`, with `bridge_env` (the user's own setting,
/// which register keeps) on the bridge's entry and a provider for the scripted `model`; then
/// runs one agent turn with `message` and returns OpenClaw's output.
async fn register_and_run_turn(
    home: &Path,
    model: &ModelServer,
    bridge_env: Value,
    message: &str,
) -> anyhow::Result<Output> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::fs::create_dir_all(home.join(".openclaw"))?;
    let settings = json!({
        "models": {"providers": {"scripted": {
            "api": "openai-completions",
            "baseUrl": model.base_url(),
            "apiKey": "scripted",
            "models": [{"id": MODEL_ID, "name": "scripted"}],
        }}},
        "mcp": {"servers": {"copilot-bridge": {"env": bridge_env}}},
    });
    std::fs::write(
        home.join(".openclaw/openclaw.json"),
        serde_json::to_string_pretty(&settings)?,
    )?;
    let status = tokio::process::Command::new(binary_path("copilot-bridge"))
        .args(["register", "openclaw", "--no-cli"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", &path)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .status();
    anyhow::ensure!(tokio::time::timeout(TURN_TIMEOUT, status).await??.success());

    let turn = tokio::process::Command::new(openclaw())
        .args([
            "agent",
            "--local",
            "--agent",
            "main",
            "--model",
            &format!("scripted/{MODEL_ID}"),
            "--message",
            message,
            "--json",
        ])
        .env_clear()
        .env("HOME", home)
        .env("PATH", &path)
        .current_dir(home)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    Ok(tokio::time::timeout(TURN_TIMEOUT, turn).await??)
}

/// Checks that some tool result OpenClaw sent its model carries `marker`, and that the turn
/// ended with the model's final answer.
fn assert_loop_closed(output: &Output, requests: &[RecordedRequest], marker: &str) {
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let tool_results: Vec<String> = requests
        .iter()
        .flat_map(RecordedRequest::tool_results)
        .collect();
    assert!(
        tool_results.iter().any(|t| t.contains(marker)),
        "no tool result carried {marker}: {tool_results:?}\nOpenClaw said: {said}"
    );
    assert!(output.status.success(), "{said}");
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap_or_default();
    assert_eq!(answer["payloads"][0]["text"], json!(ANSWER), "{said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openclaw_agent_turn_calls_a_registered_bridge_tool() -> anyhow::Result<()> {
    const MARKER: &str = "LOOP-OK-7f3a";
    let home = TempDir::new()?;
    let project = home.path().join("project");
    std::fs::create_dir_all(&project)?;
    std::fs::write(project.join("notes.txt"), format!("{MARKER}\n"))?;
    let model = ModelServer::start().await?;
    model.push(Reply::tool_call(
        "tool_call",
        json!({"id": "copilot-bridge__copilot_read_file", "args": {"path": "notes.txt"}}),
    ));
    model.push(Reply::text(ANSWER));
    let output = register_and_run_turn(
        home.path(),
        &model,
        json!({"COPILOT_BRIDGE_WORKSPACE": project}),
        "Read notes.txt with the bridge and tell me what it says.",
    )
    .await?;
    assert_loop_closed(&output, &model.chat_requests(""), MARKER);
    Ok(())
}

/// OpenClaw → `copilot_code_task` → the real Copilot CLI → its answer back into OpenClaw's turn.
#[tokio::test(flavor = "multi_thread")]
async fn an_openclaw_agent_turn_delegates_a_task_to_the_real_copilot_cli() -> anyhow::Result<()> {
    const TASK: &str = "COPILOT-TASK-9e2b";
    const MARKER: &str = "COPILOT-DONE-51f0";
    let home = TempDir::new()?;
    let project = home.path().join("project");
    std::fs::create_dir_all(&project)?;
    let model = ModelServer::start().await?;
    // One server answers both: Copilot's turn by its task's marker, OpenClaw's from the queue
    // (OpenClaw appends its own context as the latest user message, so no marker finds it).
    model.push(Reply::tool_call(
        "tool_call",
        json!({"id": "copilot-bridge__copilot_code_task",
               "args": {"prompt": format!("{TASK}: say that you are done")}}),
    ));
    model.push(Reply::text(ANSWER));
    model.script(TASK, [Reply::text(&format!("Done: {MARKER}"))]);
    let bridge_env = json!({
        "COPILOT_BRIDGE_WORKSPACE": project,
        "COPILOT_CLI_PATH": copilot_cli(),
        "COPILOT_HOME": home.path().join(".copilot"),
        "COPILOT_PROVIDER_BASE_URL": model.base_url(),
        "COPILOT_PROVIDER_API_KEY": BYOK_API_KEY,
        "COPILOT_MODEL": MODEL_ID,
        "COPILOT_OFFLINE": "true",
    });
    let output =
        register_and_run_turn(home.path(), &model, bridge_env, "Have Copilot do the task.").await?;
    let openclaw_requests: Vec<RecordedRequest> = model
        .chat_requests("")
        .into_iter()
        .filter(|r| !r.last_user_text().is_some_and(|t| t.contains(TASK)))
        .collect();
    assert_loop_closed(&output, &openclaw_requests, MARKER);
    Ok(())
}
