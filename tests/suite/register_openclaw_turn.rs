//! The whole loop with a real OpenClaw agent turn: after `copilot-bridge register openclaw`, an
//! embedded OpenClaw 2026.9.6 agent (`openclaw agent --local`) driven by a scripted model on
//! loopback calls a bridge tool, and the tool's answer reaches the model.

use std::process::Stdio;
use std::time::Duration;

use bridge_test_support::{MODEL_ID, ModelServer, Reply, binary_path, openclaw};
use serde_json::json;
use tempfile::TempDir;

/// An embedded agent turn: OpenClaw's start (6–14 s), the MCP servers' start, two model calls.
const TURN_TIMEOUT: Duration = Duration::from_mins(4);
/// What the file holds, so the tool's answer can be recognised in the model's input.
const MARKER: &str = "LOOP-OK-7f3a";

#[tokio::test(flavor = "multi_thread")]
async fn an_openclaw_agent_turn_calls_a_registered_bridge_tool() -> anyhow::Result<()> {
    let home = TempDir::new()?;
    let home = home.path();
    let project = home.join("project");
    std::fs::create_dir_all(&project)?;
    std::fs::write(project.join("notes.txt"), format!("{MARKER}\n"))?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let config = home.join(".openclaw/openclaw.json");
    std::fs::create_dir_all(home.join(".openclaw"))?;
    let model = ModelServer::start().await?;
    // The user's own settings: the model provider, and the bridge's workspace in its entry
    // (which register keeps).
    let settings = json!({
        "models": {"providers": {"scripted": {
            "api": "openai-completions",
            "baseUrl": model.base_url(),
            "apiKey": "scripted",
            "models": [{"id": MODEL_ID, "name": "scripted"}],
        }}},
        "mcp": {"servers": {"copilot-bridge": {"env": {"COPILOT_BRIDGE_WORKSPACE": project}}}},
    });
    std::fs::write(&config, serde_json::to_string_pretty(&settings)?)?;
    let status = tokio::process::Command::new(binary_path("copilot-bridge"))
        .args(["register", "openclaw", "--no-cli"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", &path)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .status();
    anyhow::ensure!(tokio::time::timeout(TURN_TIMEOUT, status).await??.success());

    model.push(Reply::tool_call(
        "tool_call",
        json!({"id": "copilot-bridge__copilot_read_file", "args": {"path": "notes.txt"}}),
    ));
    model.push(Reply::text("The notes say it worked."));
    let turn = tokio::process::Command::new(openclaw())
        .args([
            "agent",
            "--local",
            "--agent",
            "main",
            "--model",
            &format!("scripted/{MODEL_ID}"),
            "--message",
            "Read notes.txt with the bridge and tell me what it says.",
            "--json",
        ])
        .env_clear()
        .env("HOME", home)
        .env("PATH", &path)
        .current_dir(&project)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(TURN_TIMEOUT, turn).await??;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = model.chat_requests("");
    let tool_results: Vec<String> = requests
        .iter()
        .flat_map(bridge_test_support::RecordedRequest::tool_results)
        .collect();
    assert!(
        tool_results.iter().any(|t| t.contains(MARKER)),
        "no tool result carried the file: {tool_results:?}\nrequests: {}\nOpenClaw said: {said}",
        requests.len()
    );
    assert!(output.status.success(), "{said}");
    // OpenClaw's answer is the model's second reply, given after it saw the tool's result.
    let answer: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|e| anyhow::anyhow!("{e}: {said}"))?;
    assert_eq!(
        answer["payloads"][0]["text"],
        json!("The notes say it worked."),
        "{said}"
    );
    Ok(())
}
