//! The whole loop with a real OpenClaw agent turn: after `copilot-bridge register openclaw`, an
//! embedded OpenClaw 2026.9.6 agent (`openclaw agent --local`) driven by a scripted model on
//! loopback calls a bridge tool, and the tool's answer reaches the model: a file tool the bridge
//! answers itself, and a delegated task the bridge hands to the real Copilot CLI (BYOK against
//! the same scripted model server), whose model consults OpenClaw's memory through the memory
//! server the bridge attached.

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

/// `copilot-bridge register <client> --no-cli` for a user whose home is `home`.
pub(super) async fn register(home: &Path, client: &str) -> anyhow::Result<()> {
    let status = tokio::process::Command::new(binary_path("copilot-bridge"))
        .args(["register", client, "--no-cli"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .status();
    anyhow::ensure!(
        tokio::time::timeout(TURN_TIMEOUT, status).await??.success(),
        "register {client} failed"
    );
    Ok(())
}

/// Registers both servers with OpenClaw in `home`, with `bridge_env` (the user's own setting,
/// which register keeps) on the bridge's entry and a provider for the scripted `model`; then
/// runs one agent turn with `message` and returns OpenClaw's output.
pub(super) async fn register_and_run_turn(
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
    register(home, "openclaw").await?;

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

/// The bridge's environment for delegating to the real Copilot CLI (BYOK against `model`) in
/// `project`, for the user whose home is `home`.
fn copilot_env(home: &Path, model: &ModelServer, project: &Path) -> Value {
    json!({
        "COPILOT_BRIDGE_WORKSPACE": project,
        "COPILOT_CLI_PATH": copilot_cli(),
        "COPILOT_HOME": home.join(".copilot"),
        "COPILOT_PROVIDER_BASE_URL": model.base_url(),
        "COPILOT_PROVIDER_API_KEY": BYOK_API_KEY,
        "COPILOT_MODEL": MODEL_ID,
        "COPILOT_OFFLINE": "true",
    })
}

/// OpenClaw's model calls `copilot_code_task` with `prompt` and then answers; Copilot's turn
/// (whose prompt holds `task`) gets `replies`.
fn script_delegation(
    model: &ModelServer,
    task: &str,
    prompt: &str,
    replies: impl IntoIterator<Item = Reply>,
) {
    model.push(Reply::tool_call(
        "tool_call",
        json!({"id": "copilot-bridge__copilot_code_task", "args": {"prompt": prompt}}),
    ));
    model.push(Reply::text(ANSWER));
    model.script(task, replies);
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

/// The mission's headline path, every program real: an OpenClaw agent turn calls
/// `copilot_code_task`; the bridge drives the real Copilot CLI, whose model searches OpenClaw's
/// memory through the `openclaw-memory` server the bridge attached; the fact planted in the
/// OpenClaw workspace comes back inside the result OpenClaw hands its model. A second turn's
/// edit lands on disk.
#[tokio::test(flavor = "multi_thread")]
async fn an_openclaw_agent_turn_delegates_to_copilot_which_consults_openclaws_memory()
-> anyhow::Result<()> {
    const TASK: &str = "COPILOT-TASK-9e2b";
    const EDIT: &str = "COPILOT-EDIT-4c7d";
    const FACT: &str = "pg-staging-7c41";
    let home = TempDir::new()?;
    let project = home.path().join("project");
    std::fs::create_dir_all(&project)?;
    let memory = home.path().join(".openclaw/workspace");
    std::fs::create_dir_all(memory.join("memory"))?;
    std::fs::write(
        memory.join("MEMORY.md"),
        format!("# Memory\n\n- The staging database lives on host {FACT}.\n"),
    )?;
    let model = ModelServer::start().await?;
    // One server answers both: Copilot's turns by their task's marker, OpenClaw's from the
    // queue (OpenClaw appends its own context as the latest user message, so no marker finds
    // it).
    script_delegation(
        &model,
        TASK,
        &format!("{TASK}: which host is the staging database on?"),
        [
            Reply::tool_call(
                "openclaw-memory-openclaw_memory_search",
                json!({"query": "staging database host"}),
            ),
            Reply::echo_tool_result("From OpenClaw's memory: "),
        ],
    );
    let bridge_env = copilot_env(home.path(), &model, &project);
    let output = register_and_run_turn(
        home.path(),
        &model,
        bridge_env.clone(),
        "Ask Copilot where staging is.",
    )
    .await?;
    let is_copilot = |r: &RecordedRequest| {
        r.last_user_text()
            .is_some_and(|t| t.contains(TASK) || t.contains(EDIT))
    };
    let copilot_tools: Vec<String> = model
        .chat_requests(TASK)
        .iter()
        .flat_map(RecordedRequest::tool_results)
        .collect();
    assert!(
        copilot_tools.iter().any(|t| t.contains(FACT)),
        "Copilot's memory search did not find the planted fact: {copilot_tools:?}"
    );
    let openclaw_requests: Vec<RecordedRequest> = model
        .chat_requests("")
        .into_iter()
        .filter(|r| !is_copilot(r))
        .collect();
    assert_loop_closed(&output, &openclaw_requests, FACT);

    // A second turn: Copilot's edit lands in the project.
    let target = project.join("staging-host.txt");
    script_delegation(
        &model,
        EDIT,
        &format!("{EDIT}: write the staging host into staging-host.txt"),
        [
            Reply::tool_call(
                "create",
                json!({"path": target, "file_text": format!("{FACT}\n")}),
            ),
            Reply::text("Wrote staging-host.txt."),
        ],
    );
    let output = register_and_run_turn(
        home.path(),
        &model,
        bridge_env,
        "Have Copilot write it down.",
    )
    .await?;
    assert!(output.status.success(), "{output:?}");
    assert_eq!(std::fs::read_to_string(&target)?, format!("{FACT}\n"));
    Ok(())
}

/// The whole loop with a person in it: a real OpenClaw agent turn calls `copilot_code_task`;
/// the policy marks `bash` as `ask`; OpenClaw's MCP client cannot be asked, so the bridge asks
/// through a real OpenClaw gateway, where a reviewer (connected as the Control UI is) allows
/// it; the command's edit lands and the result reaches OpenClaw's model within the request
/// timeout `register openclaw` set. (The gateway runs from its own OpenClaw home: the agent
/// turn's home has its config rewritten by each registration.)
#[tokio::test(flavor = "multi_thread")]
async fn an_openclaw_agent_turn_waits_for_a_reviewer_through_openclaws_approvals()
-> anyhow::Result<()> {
    use bridge_test_support::{GATEWAY_TOKEN, OpenclawGateway, free_port};

    use super::bridge_approval_openclaw::{Mode, Reviewer};

    const TASK: &str = "COPILOT-ASK-2d9e";
    const WRITTEN: &str = "approved-by-a-reviewer";
    let _slot = OpenclawGateway::slot().await;
    let gateway_home = TempDir::new()?;
    let port = free_port()?;
    OpenclawGateway::onboard(gateway_home.path(), port)?;
    let gateway = OpenclawGateway::start(gateway_home.path(), port)?;
    let reviewer = Reviewer::connect(port, &gateway_home.path().join("reviewer")).await?;
    reviewer.set(Mode::Allow);

    let home = TempDir::new()?;
    let project = home.path().join("project");
    std::fs::create_dir_all(&project)?;
    let policy = home.path().join("ask-policy.toml");
    std::fs::write(&policy, "ask_tools = [\"bash\"]\n")?;
    let target = project.join("reviewed.txt");
    let model = ModelServer::start().await?;
    script_delegation(
        &model,
        TASK,
        &format!("{TASK}: record the approval in reviewed.txt"),
        [
            Reply::tool_call(
                "bash",
                json!({"command": format!("echo {WRITTEN} > {}", target.display()),
                       "description": "write reviewed.txt", "mode": "sync",
                       "initial_wait": 10}),
            ),
            Reply::text("Wrote reviewed.txt."),
        ],
    );
    let mut bridge_env = copilot_env(home.path(), &model, &project);
    bridge_env["COPILOT_BRIDGE_POLICY_FILE"] = json!(policy);
    bridge_env["OPENCLAW_GATEWAY_TOKEN"] = json!(GATEWAY_TOKEN);
    bridge_env["OPENCLAW_PORT"] = json!(port.to_string());
    let output = register_and_run_turn(
        home.path(),
        &model,
        bridge_env,
        "Have Copilot record the approval.",
    )
    .await?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap_or_default().trim(),
        WRITTEN,
        "the approved command did not run; OpenClaw said: {said}"
    );
    let seen = reviewer.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].to_string().contains("reviewed.txt"), "{seen:?}");
    let openclaw_requests: Vec<RecordedRequest> = model
        .chat_requests("")
        .into_iter()
        .filter(|r| r.last_user_text().is_none_or(|t| !t.contains(TASK)))
        .collect();
    assert_loop_closed(&output, &openclaw_requests, "Wrote reviewed.txt");
    // OpenClaw's call timeout, as registered, bounded the wait for the reviewer.
    let config: Value = serde_json::from_str(&std::fs::read_to_string(
        home.path().join(".openclaw/openclaw.json"),
    )?)?;
    assert!(
        config["mcp"]["servers"]["copilot-bridge"]["requestTimeoutMs"]
            .as_u64()
            .is_some_and(|ms| ms >= 60_000),
        "{config}"
    );
    reviewer.close().await;
    drop(gateway);
    Ok(())
}
