//! A note written by OpenClaw itself: a real OpenClaw 2026.9.6 agent turn (`openclaw agent
//! --local`, a scripted model on loopback), then the session reset through the real gateway
//! (`sessions.reset`), so that OpenClaw's bundled `session-memory` hook saves the conversation to
//! `memory/YYYY-MM-DD-HHMM.md`, one line per message, the text JSON-quoted. `openclaw-memory`
//! must then find the user's message by the word that follows its escaped line break.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use bridge_test_support::{
    GATEWAY_TOKEN, MODEL_ID, McpProcess, ModelServer, OpenclawGateway, Reply, binary_path,
    free_port, openclaw_command,
};
use serde_json::{Value, json};
use tempfile::TempDir;

/// OpenClaw's start for an embedded turn (6–14 s) and the turn itself, or a gateway call.
const CLI_TIMEOUT: Duration = Duration::from_mins(3);
/// The hook saves the note in the background after the reset is answered.
const NOTE_TIMEOUT: Duration = Duration::from_mins(1);

/// What the user says: the school's name right after a line break, which the hook writes as the
/// two characters `\n`.
const MESSAGE: &str = "ok\nBrightwater Primary takes Ada from Monday";

/// Runs `openclaw` for the user whose home is `home` with `args`, bounded by [`CLI_TIMEOUT`].
async fn openclaw(home: &Path, args: &[&str]) -> anyhow::Result<Output> {
    let mut command = tokio::process::Command::from(openclaw_command(home));
    command.args(args).kill_on_drop(true);
    let output = tokio::time::timeout(CLI_TIMEOUT, command.output()).await??;
    anyhow::ensure!(
        output.status.success(),
        "openclaw {args:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(output)
}

/// Adds the scripted model's provider and the `session-memory` hook to the onboarded config.
fn configure(home: &Path, model: &ModelServer) -> anyhow::Result<()> {
    let path = home.join(".openclaw/openclaw.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    config["models"] = json!({"providers": {"scripted": {
        "api": "openai-completions",
        "baseUrl": model.base_url(),
        "apiKey": "scripted",
        "models": [{"id": MODEL_ID, "name": "scripted"}],
    }}});
    config["hooks"] = json!({"internal": {
        "enabled": true,
        "entries": {"session-memory": {"enabled": true}},
    }});
    std::fs::write(&path, serde_json::to_string_pretty(&config)?)?;
    Ok(())
}

/// The first note to appear in `memory`, waiting up to [`NOTE_TIMEOUT`].
async fn saved_note(memory: &Path) -> anyhow::Result<PathBuf> {
    let started = Instant::now();
    loop {
        if let Ok(entries) = std::fs::read_dir(memory) {
            let mut notes: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect();
            notes.sort();
            if let Some(note) = notes.into_iter().next() {
                return Ok(note);
            }
        }
        anyhow::ensure!(
            started.elapsed() < NOTE_TIMEOUT,
            "the session-memory hook wrote no note into {} within {NOTE_TIMEOUT:?}",
            memory.display()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_note_openclaws_session_memory_hook_wrote_is_found_by_its_words() -> anyhow::Result<()> {
    let _slot = OpenclawGateway::slot().await;
    let home = TempDir::new()?;
    let port = free_port()?;
    OpenclawGateway::onboard(home.path(), port)?;
    let model = ModelServer::start().await?;
    model.push(Reply::text(
        "Noted: Ada starts at Brightwater Primary on Monday.",
    ));
    configure(home.path(), &model)?;

    let scripted = format!("scripted/{MODEL_ID}");
    let turn = [
        "agent",
        "--local",
        "--agent",
        "main",
        "--model",
        &scripted,
        "--message",
        MESSAGE,
        "--json",
    ];
    openclaw(home.path(), &turn).await?;
    let note = {
        let gateway = OpenclawGateway::start(home.path(), port)?;
        let port = gateway.port().to_string();
        let reset = [
            "gateway",
            "call",
            "sessions.reset",
            "--port",
            &port,
            "--token",
            GATEWAY_TOKEN,
            "--params",
            r#"{"key":"agent:main:main"}"#,
            "--json",
        ];
        openclaw(home.path(), &reset).await?;
        saved_note(&home.path().join(".openclaw/workspace/memory")).await?
    };

    // The note is in the format the index reads as messages.
    let text = std::fs::read_to_string(&note)?;
    let lines: Vec<&str> = text.lines().collect();
    let quoted = format!("user: {}", serde_json::to_string(MESSAGE)?);
    let line = lines.iter().position(|l| *l == quoted).map(|i| i + 1);
    assert!(line.is_some(), "no line {quoted} in:\n{text}");
    assert!(lines[0].starts_with("# Session: "), "{text}");

    // The local index (no gateway token) finds the user's message by the word after `\n`.
    let mut mcp = McpProcess::spawn(&binary_path("openclaw-memory"), &[], home.path(), &[])?;
    mcp.initialize().await?;
    let response = mcp
        .call_tool("openclaw_memory_search", json!({"query": "Brightwater"}))
        .await?;
    let answer = &response["result"]["structuredContent"];
    let name = note.file_name().map(|n| n.to_string_lossy().into_owned());
    let first = &answer["hits"][0];
    assert_eq!(
        (
            first["path"].as_str().map(str::to_owned),
            first["startLine"]
                .as_u64()
                .and_then(|l| usize::try_from(l).ok()),
            first.get("weak").cloned(),
        ),
        (name.map(|n| format!("memory/{n}")), line, None),
        "{answer}\n{text}"
    );
    Ok(())
}
