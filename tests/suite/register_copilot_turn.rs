//! `copilot-bridge register copilot` puts `openclaw-memory` in the Copilot CLI's own
//! `mcp-config.json`, so a plain `copilot -p` run (no bridge involved) consults OpenClaw's
//! memory: the real Copilot CLI, BYOK against the scripted model, whose model calls the memory
//! search and repeats what it found; the fact planted in the OpenClaw workspace is in the answer.

use std::process::Stdio;
use std::time::Duration;

use bridge_test_support::{BYOK_API_KEY, MODEL_ID, ModelServer, Reply, copilot_cli};
use serde_json::json;
use tempfile::TempDir;

/// The CLI's start, the memory server's start, two model calls.
const RUN_TIMEOUT: Duration = Duration::from_mins(3);

#[tokio::test(flavor = "multi_thread")]
async fn copilot_p_consults_openclaws_memory_after_register_copilot() -> anyhow::Result<()> {
    const TASK: &str = "MEMQ-6b1e";
    const FACT: &str = "pg-staging-93d2";
    let home = TempDir::new()?;
    let home = home.path();
    let memory = home.join(".openclaw/workspace");
    std::fs::create_dir_all(memory.join("memory"))?;
    std::fs::write(
        memory.join("MEMORY.md"),
        format!("# Memory\n\n- The staging database lives on host {FACT}.\n"),
    )?;
    super::register_openclaw_turn::register(home, "copilot").await?;
    let path = std::env::var_os("PATH").unwrap_or_default();

    let model = ModelServer::start().await?;
    model.script(
        TASK,
        [
            Reply::tool_call(
                "openclaw-memory-openclaw_memory_search",
                json!({"query": "staging database host"}),
            ),
            Reply::echo_tool_result("Memory says: "),
        ],
    );
    let run = tokio::process::Command::new(copilot_cli())
        .args([
            "-p",
            &format!("{TASK}: which host is the staging database on?"),
            "--allow-all-tools",
            "--no-auto-update",
        ])
        .env_clear()
        .env("HOME", home)
        .env("PATH", &path)
        .env("COPILOT_HOME", home.join(".copilot"))
        .env("COPILOT_PROVIDER_BASE_URL", model.base_url())
        .env("COPILOT_PROVIDER_API_KEY", BYOK_API_KEY)
        .env("COPILOT_MODEL", MODEL_ID)
        .env("COPILOT_OFFLINE", "true")
        .current_dir(home)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(RUN_TIMEOUT, run).await??;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let searched: Vec<String> = model
        .chat_requests(TASK)
        .iter()
        .flat_map(bridge_test_support::RecordedRequest::tool_results)
        .collect();
    assert!(
        searched.iter().any(|t| t.contains(FACT)),
        "the memory search did not find the fact: {searched:?}\n{said}"
    );
    assert!(output.status.success(), "{said}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(FACT),
        "{said}"
    );
    Ok(())
}
